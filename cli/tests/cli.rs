//! The `blockbloom` user tool end to end: it offers exactly its own commands; a bad
//! `BLOCKBLOOM_ISA` fails with the library's message instead of a panic; filter files
//! round-trip through build, query, info and merge, and bad files fail with the library's
//! typed decoding errors; no output may be one of the inputs, and write errors name the
//! output, not the temporary file; merge warns when shards were sized for less than their
//! union; `build --keyed` draws its seed. The measurement commands are tested in
//! `blockbloom-perf`.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use blockbloom::Isa;

fn blockbloom(args: &[&str], env: Option<(&str, &str)>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_blockbloom"));
    cmd.args(args).env_remove("BLOCKBLOOM_ISA");
    if let Some((k, v)) = env {
        cmd.env(k, v);
    }
    cmd.output().expect("the binary runs")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn help_lists_the_user_commands_only() {
    let out = blockbloom(&["--help"], None);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let commands: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        // A wrapped description continues on lines indented deeper than the command names.
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        commands,
        ["demo", "build", "query", "info", "merge", "parquet", "help"],
        "{stdout}"
    );
    for moved in ["bench", "report", "sweep", "sizing", "family"] {
        let out = blockbloom(&[moved], None);
        let (_, stderr) = text(&out);
        assert!(!out.status.success(), "{moved} still runs");
        assert!(stderr.contains("unrecognized subcommand"), "{stderr}");
    }
}

#[test]
fn bogus_blockbloom_isa_fails_clearly() {
    for args in [&["demo"][..], &["info", "missing.bb"][..]] {
        let out = blockbloom(args, Some(("BLOCKBLOOM_ISA", "bogus")));
        let (stdout, stderr) = text(&out);
        assert!(!out.status.success(), "{args:?} succeeded:\n{stdout}");
        assert!(stderr.contains("BLOCKBLOOM_ISA"), "{stderr}");
        assert!(stderr.contains("unknown kernel `bogus`"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

// ---- Filter files: build, query, info, merge ----

/// A fresh directory for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn keys_file(dir: &std::path::Path, name: &str, keys: impl Iterator<Item = String>) -> String {
    let path = dir.join(name);
    let mut text = String::new();
    for k in keys {
        text.push_str(&k);
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

fn path(dir: &std::path::Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_string()
}

/// Runs the binary with `input` on stdin.
fn blockbloom_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_blockbloom"))
        .args(args)
        .env_remove("BLOCKBLOOM_ISA")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn ok(o: &Output) -> String {
    let (stdout, stderr) = text(o);
    assert!(o.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stdout
}

fn members(range: std::ops::Range<u64>) -> impl Iterator<Item = String> {
    range.map(|i| format!("key-{i}"))
}

#[test]
fn build_then_query_members_and_non_members() {
    let dir = scratch("build-query");
    let keys = keys_file(&dir, "keys.txt", members(0..5000));
    let f = path(&dir, "f.bb");
    let stdout = ok(&blockbloom(
        &["build", "--fpr", "0.01", &keys, "-o", &f],
        None,
    ));
    assert!(stdout.contains("5000 keys"), "{stdout}");
    for field in ["bytes", "bits/key", "layout 8x64", "k=8", "expected FPR"] {
        assert!(stdout.contains(field), "{field}: {stdout}");
    }

    // Every member: maybe.
    let member_args: Vec<String> = members(0..200).collect();
    let mut args = vec!["query", f.as_str()];
    args.extend(member_args.iter().map(String::as_str));
    let stdout = ok(&blockbloom(&args, None));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 200);
    for (line, key) in lines.iter().zip(&member_args) {
        assert_eq!(*line, format!("{key}\tmaybe"));
    }

    // Non-members: mostly no (1% target: a few maybes at most).
    let others: Vec<String> = members(1_000_000..1_001_000).collect();
    let mut args = vec!["query", f.as_str()];
    args.extend(others.iter().map(String::as_str));
    let stdout = ok(&blockbloom(&args, None));
    let maybe = stdout.lines().filter(|l| l.ends_with("\tmaybe")).count();
    let no = stdout.lines().filter(|l| l.ends_with("\tno")).count();
    assert_eq!(maybe + no, 1000, "{stdout}");
    assert!(maybe <= 40, "{maybe} false positives in 1000");
}

/// `n` lines alternating `key-{i/2}` (members of `members(..)`) and `other-{i}`, every
/// `crlf_every`-th ending in CRLF (0: none).
fn interleaved(n: u64, crlf_every: u64) -> String {
    let mut input = String::new();
    for i in 0..n {
        if i % 2 == 0 {
            input.push_str(&format!("key-{}", i / 2));
        } else {
            input.push_str(&format!("other-{i}"));
        }
        let crlf = crlf_every != 0 && i % crlf_every == 0;
        input.push_str(if crlf { "\r\n" } else { "\n" });
    }
    input
}

#[test]
fn query_streams_stdin_as_a_prefilter() {
    let dir = scratch("query-stdin");
    let keys = keys_file(&dir, "keys.txt", members(0..10_000));
    let f = path(&dir, "f.bb");
    ok(&blockbloom(
        &["build", "--fpr", "0.001", &keys, "-o", &f],
        None,
    ));
    // Members interleaved with non-members, CRLF on some lines, the last without a newline.
    let mut input = interleaved(20_000, 7);
    input.push_str("key-9999");
    let stdout = ok(&blockbloom_stdin(&["query", &f], input.as_bytes()));
    let lines: Vec<&str> = stdout.lines().collect();
    let hits = lines.iter().filter(|l| l.starts_with("key-")).count();
    assert_eq!(hits, 10_001, "every member line is printed");
    assert!(
        lines.len() - hits <= 50,
        "{} false positives",
        lines.len() - hits
    );
    // Lines come out as they went in (CRLF kept), in order.
    assert!(stdout.starts_with("key-0\r\n"), "{:?}", &stdout[..20]);
    assert!(stdout.ends_with("key-9999\n"));
}

#[test]
fn build_from_stdin_equals_build_from_file() {
    let dir = scratch("build-stdin");
    let keys = keys_file(&dir, "keys.txt", members(0..3000));
    let (a, b, c) = (path(&dir, "a.bb"), path(&dir, "b.bb"), path(&dir, "c.bb"));
    ok(&blockbloom(
        &["build", "--fpr", "0.02", "--seed", "7", &keys, "-o", &a],
        None,
    ));
    let input = std::fs::read(&keys).unwrap();
    let args = ["build", "--fpr", "0.02", "--seed", "7", "-o", &b];
    ok(&blockbloom_stdin(&args, &input));
    let args = ["build", "--fpr", "0.02", "--seed", "7", "-", "-o", &c];
    ok(&blockbloom_stdin(&args, &input));
    let a = std::fs::read(&a).unwrap();
    assert_eq!(a, std::fs::read(&b).unwrap());
    assert_eq!(a, std::fs::read(&c).unwrap());
    assert_eq!(&a[..8], b"BLKBLOOM");
}

#[test]
fn info_reports_the_header_and_the_fill() {
    let dir = scratch("info");
    let keys = keys_file(&dir, "keys.txt", members(0..20_000));
    let f = path(&dir, "f.bb");
    let args = ["build", "--fpr", "0.0001", "--seed", "42", &keys, "-o", &f];
    ok(&blockbloom(&args, None));
    let stdout = ok(&blockbloom(&["info", &f], None));
    let field = |name: &str| -> String {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(name).filter(|r| r.starts_with(' ')))
            .unwrap_or_else(|| panic!("no {name}:\n{stdout}"))
            .trim()
            .to_string()
    };
    assert_eq!(field("version"), "1");
    assert_eq!(field("layout"), "4x128");
    assert_eq!(field("k"), "12");
    assert_eq!(field("seed"), "42");
    assert_eq!(field("capacity"), "20000");
    assert_eq!(field("target FPR"), "0.0001");
    let blocks: u64 = field("blocks").parse().unwrap();
    let bytes: u64 = field("bytes").parse().unwrap();
    assert_eq!(bytes, 64 + 64 * blocks);
    assert_eq!(bytes, std::fs::metadata(&f).unwrap().len());
    let fill: f64 = field("fill ratio").parse().unwrap();
    assert!(fill > 0.3 && fill < 0.7, "{fill}");
    let est: f64 = field("est. keys").parse().unwrap();
    assert!((est - 20_000.0).abs() < 1_000.0, "{est}");
    let fpr: f64 = field("expected FPR").parse().unwrap();
    assert!(fpr > 0.0 && fpr <= 0.0001, "{fpr}");
    assert!(Isa::supported().iter().any(|i| field("kernel") == i.name()));
    // 20,000 keys at 1e-4: well inside L2, so batches do not prefetch.
    assert!(
        field("prefetch").starts_with("none (fits in L2)"),
        "{stdout}"
    );
    assert!(field("huge pages").ends_with(')'), "{stdout}");
}

#[test]
fn merge_of_two_builds_equals_the_build_of_both() {
    let dir = scratch("merge");
    let a_keys = keys_file(&dir, "a.txt", members(0..4000));
    let b_keys = keys_file(&dir, "b.txt", members(4000..9000));
    let [a, b, both, merged] = ["a.bb", "b.bb", "both.bb", "merged.bb"].map(|n| path(&dir, n));
    let build = |inputs: &[&str], out: &str| {
        let mut args = vec!["build", "--fpr", "0.01", "--capacity", "9000", "-o", out];
        args.extend(inputs);
        ok(&blockbloom(&args, None));
    };
    build(&[&a_keys], &a);
    build(&[&b_keys], &b);
    build(&[&a_keys, &b_keys], &both);
    let stdout = ok(&blockbloom(&["merge", &a, &b, "-o", &merged], None));
    assert!(stdout.contains("keys (estimated)"), "{stdout}");
    assert_eq!(
        std::fs::read(&merged).unwrap(),
        std::fs::read(&both).unwrap()
    );

    // Different sizes do not merge: the library's Incompatible error.
    let small = path(&dir, "small.bb");
    ok(&blockbloom(
        &["build", "--fpr", "0.01", &a_keys, "-o", &small],
        None,
    ));
    let out = blockbloom(&["merge", &a, &small, "-o", &merged], None);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("incompatible filters: different block counts"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The failed merge left the earlier output alone and no temporary file behind.
    assert_eq!(
        std::fs::read(&merged).unwrap(),
        std::fs::read(&both).unwrap()
    );
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn bad_filter_files_fail_with_the_typed_error() {
    let dir = scratch("bad-files");
    let keys = keys_file(&dir, "keys.txt", members(0..1000));
    let good = path(&dir, "good.bb");
    ok(&blockbloom(
        &["build", "--fpr", "0.01", &keys, "-o", &good],
        None,
    ));
    let bytes = std::fs::read(&good).unwrap();

    // Deterministic "random" bytes (xorshift), not starting with the magic.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let random: Vec<u8> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 0x10;
    let mut trailing = bytes.clone();
    trailing.extend_from_slice(b"more");
    let cases: [(&str, Vec<u8>, &str); 6] = [
        ("random.bb", random, "bad magic"),
        (
            "truncated.bb",
            bytes[..bytes.len() - 100].to_vec(),
            "truncated",
        ),
        ("short-header.bb", bytes[..40].to_vec(), "truncated"),
        ("flipped.bb", flipped, "checksum mismatch"),
        ("trailing.bb", trailing, "trailing bytes"),
        ("empty.bb", Vec::new(), "truncated"),
    ];
    for (name, content, message) in cases {
        let p = path(&dir, name);
        std::fs::write(&p, content).unwrap();
        let runs = [
            blockbloom(&["info", &p], None),
            blockbloom(&["query", &p, "key-1"], None),
            blockbloom_stdin(&["query", &p], b"key-1\n"),
            blockbloom(&["merge", &good, &p, "-o", &path(&dir, "out.bb")], None),
        ];
        for out in runs {
            let (stdout, stderr) = text(&out);
            assert!(!out.status.success(), "{name}: succeeded:\n{stdout}");
            assert!(stderr.contains(message), "{name}: {stderr}");
            assert!(stderr.contains(name), "{name}: {stderr}");
            assert!(!stderr.contains("panicked"), "{name}: {stderr}");
        }
    }
    assert!(!std::path::Path::new(&path(&dir, "out.bb")).exists());

    let out = blockbloom(&["info", &path(&dir, "missing.bb")], None);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("missing.bb") && stderr.contains("I/O error"),
        "{stderr}"
    );
}

#[test]
fn build_errors_are_typed_and_leave_no_file() {
    let dir = scratch("build-errors");
    let keys = keys_file(&dir, "keys.txt", members(0..10));
    let out_path = path(&dir, "f.bb");
    let out = blockbloom(&["build", "--fpr", "1.5", &keys, "-o", &out_path], None);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("false-positive rate must be"), "{stderr}");
    let missing = path(&dir, "nope.txt");
    let out = blockbloom(&["build", "--fpr", "0.01", &missing, "-o", &out_path], None);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("nope.txt") && stderr.contains("NotFound"),
        "{stderr}"
    );
    assert!(!std::path::Path::new(&out_path).exists());
    // Capacity smaller than the input: a warning, and the filter still holds every key.
    let out = blockbloom(
        &[
            "build",
            "--fpr",
            "0.01",
            "--capacity",
            "2",
            &keys,
            "-o",
            &out_path,
        ],
        None,
    );
    let (_, stderr) = text(&out);
    assert!(
        out.status.success() && stderr.contains("exceed the capacity"),
        "{stderr}"
    );
    let stdout = ok(&blockbloom(&["query", &out_path, "key-3"], None));
    assert_eq!(stdout, "key-3\tmaybe\n");
}

#[test]
fn build_refuses_what_cannot_be_useful() {
    let dir = scratch("useless");
    let keys = keys_file(&dir, "keys.txt", members(0..5000));
    let out_path = path(&dir, "f.bb");
    let refused = |args: &[&str], says: &str| {
        let out = blockbloom(args, None);
        let (_, stderr) = text(&out);
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(
            !std::path::Path::new(&out_path).exists(),
            "{args:?} wrote a file"
        );
    };
    // Negative numbers are numbers: the library's error, not an unknown option.
    refused(
        &["build", "--fpr", "-inf", &keys, "-o", &out_path],
        "false-positive rate must be a number in [1e-9, 1), got -inf",
    );
    refused(
        &["build", "--fpr", "-0.5", &keys, "-o", &out_path],
        "got -0.5",
    );
    // Tiny rates read as numbers, not 300 digits.
    refused(
        &["build", "--fpr", "1e-300", &keys, "-o", &out_path],
        "got 1e-300",
    );
    refused(
        &[
            "build",
            "--capacity",
            "-5",
            "--fpr",
            "0.01",
            &keys,
            "-o",
            &out_path,
        ],
        "invalid value '-5' for '--capacity",
    );
    // A capacity of 0 with keys to insert.
    refused(
        &[
            "build",
            "--capacity",
            "0",
            "--fpr",
            "0.01",
            &keys,
            "-o",
            &out_path,
        ],
        "--capacity 0 cannot hold the 5000 keys",
    );
    // A rate so close to 1 that the filter would answer "maybe" for every key.
    refused(
        &["build", "--fpr", "0.999999", &keys, "-o", &out_path],
        "it would filter nothing",
    );
    // Far too many keys for the capacity saturates the filter the same way.
    refused(
        &[
            "build",
            "--capacity",
            "10",
            "--fpr",
            "0.5",
            &keys,
            "-o",
            &out_path,
        ],
        "it would filter nothing",
    );
}

// ---- Interrupted writes leave nothing behind ----

/// The names in `dir` other than `keep`.
#[cfg(unix)]
fn leftovers(dir: &std::path::Path, keep: &[&str]) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect()
}

/// `build` of a filter large enough to take a while to write, stopped by `sig` as soon as its
/// temporary file appears: the process ends by that signal, the temporary file is gone and the
/// existing target is byte-identical.
#[cfg(unix)]
fn interrupted_build(sig: libc::c_int, name: &str) {
    use std::os::unix::process::ExitStatusExt;

    let dir = scratch(name);
    let keys = keys_file(&dir, "keys.txt", members(0..100));
    let target = dir.join("f.bb");
    std::fs::write(&target, b"the old filter").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_blockbloom"))
        .args([
            "build",
            "--capacity",
            "200000000",
            "--fpr",
            "0.01",
            &keys,
            "-o",
        ])
        .arg(&target)
        .env_remove("BLOCKBLOOM_ISA")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while leftovers(&dir, &["keys.txt", "f.bb"]).is_empty() {
        assert!(
            started.elapsed().as_secs() < 60,
            "no temporary file appeared"
        );
        assert!(child.try_wait().unwrap().is_none(), "build ended early");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // SAFETY: sending a signal to our own child process, which is still running.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(sig), "{status:?}");
    assert_eq!(leftovers(&dir, &["keys.txt", "f.bb"]), Vec::<String>::new());
    assert_eq!(std::fs::read(&target).unwrap(), b"the old filter");
}

#[cfg(unix)]
#[test]
fn sigterm_during_a_write_leaves_nothing_behind() {
    interrupted_build(libc::SIGTERM, "sigterm");
}

#[cfg(unix)]
#[test]
fn sigint_during_a_write_leaves_nothing_behind() {
    interrupted_build(libc::SIGINT, "sigint");
}

#[cfg(unix)]
#[test]
fn sighup_during_a_write_leaves_nothing_behind() {
    interrupted_build(libc::SIGHUP, "sighup");
}

/// A file-size limit (a writer that fails after N bytes, as a full disk does): a typed I/O
/// error, no temporary file, the target untouched; for `build` and for `merge`.
#[cfg(unix)]
#[test]
fn a_file_size_limit_fails_cleanly() {
    let dir = scratch("fsize");
    let keys = keys_file(&dir, "keys.txt", members(0..100));
    let small = path(&dir, "small.bb");
    ok(&blockbloom(
        &[
            "build",
            "--capacity",
            "300000",
            "--fpr",
            "0.01",
            &keys,
            "-o",
            &small,
        ],
        None,
    ));
    let target = dir.join("f.bb");
    std::fs::write(&target, b"the old filter").unwrap();
    let exe = env!("CARGO_BIN_EXE_blockbloom");
    let target_s = target.to_str().unwrap();
    for args in [
        vec![
            "build",
            "--capacity",
            "3000000",
            "--fpr",
            "0.01",
            &keys,
            "-o",
            target_s,
        ],
        vec!["merge", &small, &small, "-o", target_s],
    ] {
        // 64 blocks of 512 bytes: the 360 KiB filters cannot be written whole.
        let out = Command::new("sh")
            .arg("-c")
            .arg("ulimit -f 64 && exec \"$0\" \"$@\"")
            .arg(exe)
            .args(&args)
            .env_remove("BLOCKBLOOM_ISA")
            .output()
            .unwrap();
        let (_, stderr) = text(&out);
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr.contains("File too large"), "{args:?}: {stderr}");
        // The error names the output as given, not the temporary file that failed.
        assert!(
            stderr.starts_with(&format!("error: {target_s}: ")) && !stderr.contains(".tmp"),
            "{args:?}: {stderr}"
        );
        assert_eq!(
            leftovers(&dir, &["keys.txt", "f.bb", "small.bb"]),
            Vec::<String>::new(),
            "{args:?}"
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"the old filter");
    }
}

/// A temporary file whose process is gone (killed outright) is removed by the next write to
/// the same target; one of a live process is not.
#[cfg(unix)]
#[test]
fn stale_temporary_files_are_removed_by_the_next_write() {
    let dir = scratch("stale");
    let keys = keys_file(&dir, "keys.txt", members(0..100));
    // Above the kernel's largest pid: no such process can exist.
    let pid_max: u64 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .map(|s| s.trim().parse().unwrap())
        .unwrap_or(4_194_304);
    // Names as `tempfile` makes them (`.NAME.tmpPID.RANDOM`) and as older versions did.
    let stale = format!(".f.bb.tmp{}", pid_max + 1);
    let stale_random = format!(".f.bb.tmp{}.a1B2c3", pid_max + 1);
    let live = format!(".f.bb.tmp{}.x9Y8z7", std::process::id());
    std::fs::write(dir.join(&stale), b"half a filter").unwrap();
    std::fs::write(dir.join(&stale_random), b"half a filter").unwrap();
    std::fs::write(dir.join(&live), b"a live writer's file").unwrap();
    let target = path(&dir, "f.bb");
    ok(&blockbloom(
        &["build", "--fpr", "0.01", &keys, "-o", &target],
        None,
    ));
    assert!(!dir.join(&stale).exists());
    assert!(!dir.join(&stale_random).exists());
    assert!(dir.join(&live).exists());
}

// ---- query --absent ----

#[test]
fn query_absent_prints_the_complement() {
    let dir = scratch("absent");
    let keys = keys_file(&dir, "keys.txt", members(0..5000));
    let f = path(&dir, "f.bb");
    ok(&blockbloom(
        &["build", "--fpr", "0.01", &keys, "-o", &f],
        None,
    ));
    // Members and non-members interleaved, one without a final newline.
    let mut input = interleaved(4000, 0);
    input.push_str("last-one");
    let maybe = ok(&blockbloom_stdin(&["query", &f], input.as_bytes()));
    let absent = ok(&blockbloom_stdin(
        &["query", "--absent", &f],
        input.as_bytes(),
    ));
    // Every input line is in exactly one of the two outputs, and no member is "absent".
    let maybe: Vec<&str> = maybe.lines().collect();
    let absent: Vec<&str> = absent.lines().collect();
    assert_eq!(maybe.len() + absent.len(), 4001);
    assert!(absent.iter().all(|l| !l.starts_with("key-")), "{absent:?}");
    assert!(absent.len() >= 1900, "{} certain non-members", absent.len());
    let mut both: Vec<&str> = maybe.iter().chain(&absent).copied().collect();
    both.sort_unstable();
    let mut all: Vec<&str> = input.lines().collect();
    all.sort_unstable();
    assert_eq!(both, all);

    // Keys as arguments: only the certain non-members, one per line, no answer column.
    let args = [
        "query", "--absent", &f, "key-1", "nope-1", "key-2", "nope-2",
    ];
    let stdout = ok(&blockbloom(&args, None));
    let printed: Vec<&str> = stdout.lines().collect();
    let answers = ok(&blockbloom(
        &["query", &f, "key-1", "nope-1", "key-2", "nope-2"],
        None,
    ));
    let expected: Vec<&str> = answers
        .lines()
        .filter_map(|l| l.strip_suffix("\tno"))
        .collect();
    assert_eq!(printed, expected);
    assert!(!printed.contains(&"key-1") && !printed.contains(&"key-2"));
}

// ---- info and query for every kind ----

fn field(stdout: &str, name: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(name).filter(|r| r.starts_with(' ')))
        .unwrap_or_else(|| panic!("no {name}:\n{stdout}"))
        .trim()
        .to_string()
}

#[test]
fn info_and_query_read_every_kind() {
    use blockbloom::{
        BloomFilter, BloomierFilter, ClassicBloomFilter, CounterBits, CountingBloomFilter,
        DeletableBloomFilter, ScalableBloomFilter,
    };
    let dir = scratch("kinds");
    let keys: Vec<String> = members(0..3000).collect();
    let bytes: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();

    let mut counting = CountingBloomFilter::builder()
        .capacity(3000)
        .fpr(0.01)
        .counter_bits(CounterBits::Eight)
        .seed(3)
        .build()
        .unwrap();
    let mut deletable = DeletableBloomFilter::with_capacity(3000, 0.01).unwrap();
    let mut scalable = ScalableBloomFilter::new(500, 0.01).unwrap();
    let mut plain = BloomFilter::with_capacity(3000, 0.001).unwrap();
    let mut classic = ClassicBloomFilter::with_seed(14 * 3000, 2, 5).unwrap();
    for k in &bytes {
        classic.insert_bytes(k);
        counting.insert_bytes(k);
        deletable.insert_bytes(k);
        scalable.insert_bytes(k).unwrap();
        plain.insert_bytes(k);
    }
    let pairs: Vec<(&[u8], u64)> = bytes.iter().map(|k| (*k, k.len() as u64)).collect();
    let bloomier = BloomierFilter::builder(8, 8).build_bytes(&pairs).unwrap();
    let compressed = plain.to_compressed_bytes().unwrap();
    let compressed_classic = classic.to_compressed_bytes().unwrap();

    let files = [
        ("classic.bb", classic.to_bytes(), "classic Bloom filter"),
        (
            "compressed-classic.bb",
            compressed_classic.clone(),
            "compressed filter",
        ),
        ("counting.bb", counting.to_bytes(), "counting filter"),
        (
            "deletable.bb",
            deletable.to_bytes(),
            "deletable Bloom filter",
        ),
        ("scalable.bb", scalable.to_bytes(), "scalable filter"),
        ("compressed.bb", compressed.clone(), "compressed filter"),
        ("bloomier.bb", bloomier.to_bytes(), "Bloomier filter"),
        ("plain.bb", plain.to_bytes(), "plain Bloom filter"),
    ];
    for (name, content, kind) in &files {
        let p = path(&dir, name);
        std::fs::write(&p, content).unwrap();
        let stdout = ok(&blockbloom(&["info", &p], None));
        assert_eq!(field(&stdout, "kind"), *kind, "{stdout}");
        assert_eq!(field(&stdout, "version"), "1");
        // Every member may be present (a Bloomier map: maps to a value).
        let mut args = vec!["query", p.as_str()];
        args.extend(keys[..100].iter().map(String::as_str));
        let answers = ok(&blockbloom(&args, None));
        assert_eq!(
            answers.matches("\tmaybe\n").count(),
            100,
            "{name}: {answers}"
        );
        let others = ok(&blockbloom(
            &["query", "--absent", &p, "x-1", "x-2", "x-3", "x-4", "x-5"],
            None,
        ));
        assert!(others.lines().count() >= 3, "{name}: {others}");
    }

    let info = |name: &str| ok(&blockbloom(&["info", &path(&dir, name)], None));
    let s = info("counting.bb");
    assert_eq!(field(&s, "counter bits"), "8");
    assert_eq!(field(&s, "seed"), "3");
    assert_eq!(field(&s, "k"), counting.probes().to_string());
    assert_eq!(field(&s, "blocks"), counting.num_blocks().to_string());
    assert_eq!(field(&s, "total count"), counting.total_count().to_string());
    assert_eq!(field(&s, "min-increase"), "not used");
    let est: f64 = field(&s, "est. keys").parse().unwrap();
    assert!((est - 3000.0).abs() < 300.0, "{est}");

    let s = info("deletable.bb");
    assert_eq!(field(&s, "regions"), deletable.num_regions().to_string());
    assert_eq!(
        field(&s, "collided"),
        deletable.collided_regions().to_string()
    );
    assert_eq!(
        field(&s, "region bits"),
        deletable.region_bits().to_string()
    );

    let s = info("scalable.bb");
    assert_eq!(field(&s, "keys"), scalable.len().to_string());
    assert_eq!(field(&s, "stages"), scalable.stages().len().to_string());
    assert!(scalable.stages().len() > 1);
    for (i, stage) in scalable.stages().iter().enumerate() {
        let line = field(&s, &format!("stage {i}"));
        assert!(
            line.starts_with(&format!("{} blocks", stage.num_blocks())),
            "{line}"
        );
    }

    let s = info("compressed.bb");
    assert_eq!(field(&s, "bytes"), plain.encoded_len().to_string());
    assert_eq!(field(&s, "file bytes"), compressed.len().to_string());
    assert!(field(&s, "compressed").starts_with(&compressed.len().to_string()));
    assert_eq!(field(&s, "k"), plain.probes().to_string());

    let s = info("classic.bb");
    assert_eq!(field(&s, "m"), "42000 bits");
    assert_eq!(field(&s, "k"), "2");
    assert_eq!(field(&s, "seed"), "5");
    let s = info("compressed-classic.bb");
    assert_eq!(field(&s, "m"), "42000 bits");
    assert!(field(&s, "compressed").starts_with(&compressed_classic.len().to_string()));
    let est: f64 = field(&s, "est. keys").parse().unwrap();
    assert!((est - 3000.0).abs() < 300.0, "{est}");

    let s = info("bloomier.bb");
    assert_eq!(field(&s, "keys"), "3000");
    assert_eq!(field(&s, "value bits"), "8");
    assert_eq!(field(&s, "fingerprint"), "8 bits");
    assert_eq!(field(&s, "slots"), bloomier.slots().to_string());

    // Bad bytes of every family kind: the library's typed error, a non-zero exit.
    let counting_bytes = counting.to_bytes();
    let mut unknown = plain.to_bytes();
    unknown[10] = 99;
    let mut flipped = counting_bytes.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x04;
    let mut trailing = scalable.to_bytes();
    trailing.push(0);
    let mut cut = bloomier.to_bytes();
    cut.truncate(cut.len() - 8);
    let mut bad_zstd = compressed.clone();
    let n = bad_zstd.len();
    bad_zstd[n - 3] ^= 0xff;
    let cases: [(&str, Vec<u8>, &str); 5] = [
        ("unknown.bb", unknown, "unsupported layout id 99"),
        ("flipped.bb", flipped, "checksum mismatch"),
        ("trailing.bb", trailing, "trailing bytes"),
        ("cut.bb", cut, "truncated"),
        ("bad-zstd.bb", bad_zstd, "checksum mismatch"),
    ];
    for (name, content, says) in cases {
        let p = path(&dir, name);
        std::fs::write(&p, &content).unwrap();
        for out in [
            blockbloom(&["info", &p], None),
            blockbloom(&["query", &p, "key-1"], None),
        ] {
            let (stdout, stderr) = text(&out);
            assert!(!out.status.success(), "{name}: succeeded:\n{stdout}");
            assert!(stderr.contains(says), "{name}: {stderr}");
            assert!(stderr.contains(name), "{name}: {stderr}");
            assert!(!stderr.contains("panicked"), "{name}: {stderr}");
        }
        // Reading never changes the file.
        assert_eq!(std::fs::read(&p).unwrap(), content);
    }
    // `merge` takes plain filters only: another kind is the library's WrongKind error.
    let out = blockbloom(
        &[
            "merge",
            &path(&dir, "plain.bb"),
            &path(&dir, "counting.bb"),
            "-o",
            &path(&dir, "m.bb"),
        ],
        None,
    );
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("hold a counting filter"), "{stderr}");
}

// ---- parquet ----

mod parquet_files {
    use std::path::Path;
    use std::sync::Arc;

    use parquet::data_type::{
        BoolType, ByteArray, ByteArrayType, DoubleType, FixedLenByteArray, FixedLenByteArrayType,
        FloatType, Int32Type, Int64Type,
    };
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    use parquet::schema::types::ColumnPath;

    /// Row group `g` holds the ids `1000 g .. 1000 g + 1000` and values derived from them;
    /// every column has a Bloom filter but `plain`.
    pub fn write(path: &Path, row_groups: i64, filters: bool) {
        let schema = Arc::new(
            parse_message_type(
                "message m { required int64 id; required int32 small; required float f; \
                 required double d; required binary name (UTF8); \
                 required fixed_len_byte_array(4) code; required boolean flag; \
                 required int64 plain; }",
            )
            .unwrap(),
        );
        let mut props = WriterProperties::builder().set_dictionary_enabled(false);
        if filters {
            // (Setting the fpp or ndv switches filters on, so only when they are wanted.)
            for c in ["id", "small", "f", "d", "name", "code", "flag"] {
                props = props
                    .set_column_bloom_filter_enabled(ColumnPath::from(c), true)
                    .set_column_bloom_filter_fpp(ColumnPath::from(c), 0.01)
                    .set_column_bloom_filter_max_ndv(ColumnPath::from(c), 1000);
            }
        }
        let props = Arc::new(props.build());
        let file = std::fs::File::create(path).unwrap();
        let mut w = SerializedFileWriter::new(file, schema, props).unwrap();
        for g in 0..row_groups {
            let ids: Vec<i64> = (1000 * g..1000 * g + 1000).collect();
            let small: Vec<i32> = ids.iter().map(|&i| -(i as i32)).collect();
            let f: Vec<f32> = ids.iter().map(|&i| i as f32 + 0.5).collect();
            let d: Vec<f64> = ids.iter().map(|&i| i as f64 / 4.0).collect();
            let names: Vec<ByteArray> = ids
                .iter()
                .map(|i| ByteArray::from(format!("name-{i}").as_str()))
                .collect();
            let codes: Vec<FixedLenByteArray> = ids
                .iter()
                .map(|&i| FixedLenByteArray::from((i as u32).to_be_bytes().to_vec()))
                .collect();
            let flags: Vec<bool> = vec![g % 2 == 0; ids.len()];
            let mut rg = w.next_row_group().unwrap();
            macro_rules! column {
                ($t:ty, $v:expr) => {{
                    let mut col = rg.next_column().unwrap().unwrap();
                    col.typed::<$t>().write_batch($v, None, None).unwrap();
                    col.close().unwrap();
                }};
            }
            column!(Int64Type, &ids);
            column!(Int32Type, &small);
            column!(FloatType, &f);
            column!(DoubleType, &d);
            column!(ByteArrayType, &names);
            column!(FixedLenByteArrayType, &codes);
            column!(BoolType, &flags);
            column!(Int64Type, &ids);
            rg.close().unwrap();
        }
        w.close().unwrap();
    }
}

/// `(row group, value) -> answer` from the command's output.
fn parquet_answers(stdout: &str) -> Vec<(usize, String, String)> {
    stdout
        .lines()
        .map(|l| {
            let mut cols = l.split('\t');
            let g = cols.next().unwrap().parse().unwrap();
            let v = cols.next().unwrap().to_string();
            let a = cols.next().unwrap().to_string();
            assert!(cols.next().is_none(), "{l}");
            (g, v, a)
        })
        .collect()
}

#[test]
fn parquet_answers_per_row_group_for_every_physical_type() {
    let dir = scratch("parquet");
    let file = dir.join("t.parquet");
    parquet_files::write(&file, 2, true);
    let file = file.to_str().unwrap();
    let answers = |column: &str, values: &[&str]| {
        let mut args = vec!["parquet", file, "--column", column];
        args.extend(values);
        parquet_answers(&ok(&blockbloom(&args, None)))
    };
    // A value of row group g is "maybe" there; the non-members of 2,000 values (1% filters)
    // are mostly "no".
    let members: [(&str, [&str; 2]); 6] = [
        ("id", ["5", "1500"]),
        ("small", ["-5", "-1500"]),
        ("f", ["5.5", "1500.5"]),
        ("d", ["1.25", "375"]),
        ("name", ["name-5", "name-1500"]),
        ("flag", ["true", "false"]),
    ];
    for (column, [in0, in1]) in members {
        let a = answers(column, &[in0, in1]);
        assert_eq!(a.len(), 4, "{column}: {a:?}");
        assert_eq!(a[0], (0, in0.to_string(), "maybe".to_string()), "{column}");
        assert_eq!(a[3], (1, in1.to_string(), "maybe".to_string()), "{column}");
    }
    let out = blockbloom(
        &[
            "parquet", file, "--column", "code", "--hex", "00000005", "000005dc",
        ],
        None,
    );
    let a = parquet_answers(&ok(&out));
    assert_eq!(a[0].2, "maybe");
    assert_eq!(a[3].2, "maybe");

    let others: Vec<String> = (5000..7000).map(|i| i.to_string()).collect();
    let others: Vec<&str> = others.iter().map(String::as_str).collect();
    let a = answers("id", &others);
    assert_eq!(a.len(), 4000);
    let maybe = a.iter().filter(|x| x.2 == "maybe").count();
    assert!(maybe <= 120, "{maybe} false positives in 4,000 lookups");
    // Negative numbers are values, not options.
    let a = answers("small", &["-1", "-2000000"]);
    assert_eq!(a[0].2, "maybe");

    // A column without filters is reported as such, row group by row group.
    let out = blockbloom(&["parquet", file, "--column", "plain", "5"], None);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("column `plain` (INT64) has no Bloom filter in any of its 2 row groups"),
        "{stderr}"
    );
}

#[test]
fn parquet_bad_input_fails_clearly() {
    let dir = scratch("parquet-bad");
    let file = dir.join("t.parquet");
    parquet_files::write(&file, 1, true);
    let file = file.to_str().unwrap();
    let no_filters = dir.join("none.parquet");
    parquet_files::write(&no_filters, 3, false);
    let not_parquet = path(&dir, "keys.txt");
    std::fs::write(
        &not_parquet,
        "just some text, long enough to have a footer\n",
    )
    .unwrap();
    let none = no_filters.to_str().unwrap();
    let cases: [(&[&str], &str); 9] = [
        (
            &["parquet", file, "--column", "nope", "1"],
            "the Parquet file has no column `nope`",
        ),
        (&["parquet", &not_parquet, "--column", "id", "1"], "Parquet"),
        (
            &[
                "parquet",
                &path(&dir, "missing.parquet"),
                "--column",
                "id",
                "1",
            ],
            "missing.parquet",
        ),
        (
            &["parquet", file, "--column", "id", "12x"],
            "is not a whole number",
        ),
        (
            &["parquet", file, "--column", "small", "99999999999"],
            "is not a whole number in -2147483648..=4294967295",
        ),
        (&["parquet", file, "--column", "d", "pi"], "is not a number"),
        (
            &["parquet", file, "--column", "code", "abc"],
            "has 3 bytes; column type FIXED_LEN_BYTE_ARRAY(4) holds exactly 4",
        ),
        (
            &["parquet", file, "--column", "flag", "maybe"],
            "is not true or false",
        ),
        (
            &["parquet", none, "--column", "id", "1"],
            "has no Bloom filter in any of its 3 row groups",
        ),
    ];
    for (args, says) in cases {
        let out = blockbloom(args, None);
        let (stdout, stderr) = text(&out);
        assert!(!out.status.success(), "{args:?} succeeded:\n{stdout}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
    }
    // No value: a usage error.
    let out = blockbloom(&["parquet", file, "--column", "id"], None);
    assert!(!out.status.success());
}

// ---- build: progress, stdin spill, file mode ----

/// A build with stderr on a pseudo-terminal: what it drew there.
#[cfg(unix)]
fn build_on_a_terminal(extra: &[&str]) -> String {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};

    let dir = scratch(&format!("pty{}", extra.len()));
    let keys = keys_file(&dir, "keys.txt", members(0..1_500_000));
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two descriptors into the two integers; the null pointers ask
    // for no name, default terminal settings and no window size.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened by openpty and are owned by nothing else.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut args = vec!["build", "--fpr", "0.01", keys.as_str(), "-o"];
    let out = path(&dir, "f.bb");
    args.push(&out);
    args.extend(extra);
    let mut child = Command::new(env!("CARGO_BIN_EXE_blockbloom"))
        .args(&args)
        .env_remove("BLOCKBLOOM_ISA")
        .env("TERM", "xterm")
        .stdout(Stdio::null())
        .stderr(Stdio::from(slave))
        .spawn()
        .unwrap();
    let reader = std::thread::spawn(move || {
        let mut master = std::fs::File::from(master);
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        // Ends with EIO once the child has exited and no one holds the terminal.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&seen).into_owned()
    });
    assert!(child.wait().unwrap().success());
    reader.join().unwrap()
}

#[cfg(unix)]
#[test]
fn build_progress_shows_on_a_terminal_only() {
    let drawn = build_on_a_terminal(&[]);
    for needed in ["build", "keys", "ETA", "/s", "%"] {
        assert!(drawn.contains(needed), "{needed:?} missing in {drawn:?}");
    }
    assert!(build_on_a_terminal(&["--quiet"]).is_empty());
    // Not a terminal: nothing on stderr at all.
    let dir = scratch("no-tty");
    let keys = keys_file(&dir, "keys.txt", members(0..1_500_000));
    let out = blockbloom(
        &["build", "--fpr", "0.01", &keys, "-o", &path(&dir, "f.bb")],
        None,
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr, "");
    assert!(stdout.contains("1500000 keys"), "{stdout}");
}

/// Without --capacity, stdin is spilled to a temporary file in $TMPDIR (not held in memory):
/// with an unusable $TMPDIR that build fails clearly, and with --capacity it needs none.
#[cfg(unix)]
#[test]
fn stdin_is_spilled_to_tmpdir_without_capacity() {
    let dir = scratch("spill");
    let out_path = path(&dir, "f.bb");
    let input = b"a\nb\nc\n";
    let run = |args: &[&str]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_blockbloom"))
            .args(args)
            .env_remove("BLOCKBLOOM_ISA")
            .env("TMPDIR", dir.join("no-such-dir"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The failing build may exit before it reads stdin: a broken pipe is expected then.
        match child.stdin.take().unwrap().write_all(input) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            other => other.unwrap(),
        }
        child.wait_with_output().unwrap()
    };
    let out = run(&["build", "--fpr", "0.01", "-o", &out_path]);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("temporary file for stdin") && stderr.contains("NotFound"),
        "{stderr}"
    );
    assert!(!std::path::Path::new(&out_path).exists());
    let out = run(&["build", "--fpr", "0.01", "--capacity", "3", "-o", &out_path]);
    assert!(out.status.success(), "{}", text(&out).1);
    let stdout = ok(&blockbloom(&["query", &out_path, "a", "b", "c"], None));
    assert_eq!(stdout, "a\tmaybe\nb\tmaybe\nc\tmaybe\n");
}

/// The atomic replacement gives the file the mode any new file gets (umask applied), not a
/// private temporary file's 0600.
#[cfg(unix)]
#[test]
fn written_filters_get_the_usual_file_mode() {
    use std::os::unix::fs::PermissionsExt;

    let dir = scratch("mode");
    let keys = keys_file(&dir, "keys.txt", members(0..100));
    let target = dir.join("f.bb");
    let out = Command::new("sh")
        .arg("-c")
        .arg("umask 022 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_blockbloom"))
        .args(["build", "--fpr", "0.01", &keys, "-o"])
        .arg(&target)
        .env_remove("BLOCKBLOOM_ISA")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out).1);
    let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644, "{mode:o}");
}

// ---- clap: wrapping and suggestions ----

#[test]
fn help_wraps_to_the_terminal_width() {
    let out = Command::new(env!("CARGO_BIN_EXE_blockbloom"))
        .args(["build", "--help"])
        .env("COLUMNS", "60")
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    // The --capacity help is several sentences: wrapped, it spans several lines.
    assert!(stdout.contains("--capacity"), "{stdout}");
    // (clap does not wrap the usage line.)
    for line in stdout.lines().filter(|l| !l.starts_with("Usage:")) {
        assert!(line.chars().count() <= 60, "{} chars: {line:?}", line.len());
    }
    assert!(stdout.lines().count() > 20, "{stdout}");
}

#[test]
fn mistyped_commands_and_options_get_a_suggestion() {
    let out = blockbloom(&["biuld"], None);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("unrecognized subcommand 'biuld'")
            && stderr.contains("similar subcommand exists: 'build'"),
        "{stderr}"
    );
    let out = blockbloom(&["query", "--absnet", "f.bb"], None);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("similar argument exists: '--absent'"),
        "{stderr}"
    );
}

// ---- An output is never one of the inputs ----

/// Runs the binary in `dir` (relative paths resolve there) with `stdin` as its input.
fn blockbloom_in(dir: &std::path::Path, args: &[&str], stdin: Stdio) -> Output {
    Command::new(env!("CARGO_BIN_EXE_blockbloom"))
        .args(args)
        .current_dir(dir)
        .env_remove("BLOCKBLOOM_ISA")
        .stdin(stdin)
        .output()
        .expect("the binary runs")
}

/// Every entry of `dir` (not descending): its name, whether it is a symlink, and the bytes
/// of a file (through a symlink).
fn snapshot(dir: &std::path::Path) -> Vec<(String, bool, Option<Vec<u8>>)> {
    let mut all: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let link = e.file_type().unwrap().is_symlink();
            let bytes = std::fs::metadata(e.path())
                .unwrap()
                .is_file()
                .then(|| std::fs::read(e.path()).unwrap());
            (e.file_name().to_string_lossy().into_owned(), link, bytes)
        })
        .collect();
    all.sort();
    all
}

/// `args`, run in `dir`, is refused: a failure naming `output` (as given) as one of the
/// inputs, and nothing in `dir` changed: no entry added, removed or rewritten.
fn refused_as_an_input(dir: &std::path::Path, args: &[&str], output: &str, stdin: Stdio) {
    let before = snapshot(dir);
    let out = blockbloom_in(dir, args, stdin);
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{args:?} succeeded:\n{stdout}");
    assert!(
        stderr.starts_with(&format!(
            "error: {output}: the output is the same file as the input"
        )),
        "{args:?}: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert_eq!(snapshot(dir), before, "{args:?} changed {}", dir.display());
}

#[test]
fn build_and_merge_refuse_to_write_over_an_input() {
    let dir = scratch("output-is-input");
    keys_file(&dir, "keys.txt", members(0..1000));
    keys_file(&dir, "more.txt", members(1000..2000));
    std::fs::create_dir(dir.join("sub")).unwrap();
    for (a, b) in [("a.bb", "keys.txt"), ("b.bb", "more.txt")] {
        let args = ["build", "--fpr", "0.01", "--capacity", "2000", b, "-o", a];
        ok(&blockbloom_in(&dir, &args, Stdio::null()));
    }
    let absolute = path(&dir, "keys.txt");
    // The same file, however the path is spelled.
    for output in [
        "keys.txt",
        "./keys.txt",
        "sub/../keys.txt",
        ".//sub/./../keys.txt",
        &absolute,
    ] {
        for args in [
            vec!["build", "--fpr", "0.01", "keys.txt", "-o", output],
            vec![
                "build", "--fpr", "0.01", "more.txt", "keys.txt", "-o", output,
            ],
            vec![
                "build",
                "--fpr",
                "0.01",
                "--capacity",
                "10",
                "keys.txt",
                "-o",
                output,
            ],
        ] {
            refused_as_an_input(&dir, &args, output, Stdio::null());
        }
    }
    // The input spelled another way than the output.
    let args = [
        "build",
        "--fpr",
        "0.01",
        "sub/../keys.txt",
        "-o",
        "keys.txt",
    ];
    refused_as_an_input(&dir, &args, "keys.txt", Stdio::null());
    for output in ["a.bb", "./b.bb", "sub/../a.bb"] {
        let args = ["merge", "a.bb", "b.bb", "-o", output];
        refused_as_an_input(&dir, &args, output, Stdio::null());
    }
    // A different file of the same name elsewhere is no input: written as usual.
    keys_file(&dir.join("sub"), "keys.txt", members(0..10));
    let args = ["build", "--fpr", "0.01", "keys.txt", "-o", "sub/keys.txt"];
    ok(&blockbloom_in(&dir, &args, Stdio::null()));
    assert_eq!(
        &std::fs::read(dir.join("sub/keys.txt")).unwrap()[..8],
        b"BLKBLOOM"
    );
    let args = ["merge", "a.bb", "b.bb", "-o", "sub/a.bb"];
    ok(&blockbloom_in(&dir, &args, Stdio::null()));
}

/// Through a symlink (either way round), a hard link, or stdin redirected from the output.
#[cfg(unix)]
#[test]
fn links_and_redirected_stdin_to_an_input_are_refused() {
    use std::os::unix::fs::symlink;

    let dir = scratch("output-is-input-linked");
    keys_file(&dir, "keys.txt", members(0..1000));
    let args = ["build", "--fpr", "0.01", "keys.txt", "-o", "a.bb"];
    ok(&blockbloom_in(&dir, &args, Stdio::null()));
    let args = ["build", "--fpr", "0.01", "keys.txt", "-o", "b.bb"];
    ok(&blockbloom_in(&dir, &args, Stdio::null()));
    symlink("keys.txt", dir.join("keys-link")).unwrap();
    std::fs::hard_link(dir.join("keys.txt"), dir.join("keys-hard")).unwrap();
    symlink("a.bb", dir.join("a-link")).unwrap();
    std::fs::hard_link(dir.join("b.bb"), dir.join("b-hard")).unwrap();
    let cases: [(&[&str], &str); 8] = [
        (
            &["build", "--fpr", "0.01", "keys.txt", "-o", "keys-link"],
            "keys-link",
        ),
        (
            &["build", "--fpr", "0.01", "keys-link", "-o", "keys.txt"],
            "keys.txt",
        ),
        (
            &["build", "--fpr", "0.01", "keys.txt", "-o", "keys-hard"],
            "keys-hard",
        ),
        (
            &["build", "--fpr", "0.01", "keys-hard", "-o", "keys-link"],
            "keys-link",
        ),
        (&["merge", "a.bb", "b.bb", "-o", "a-link"], "a-link"),
        (&["merge", "a-link", "b.bb", "-o", "a.bb"], "a.bb"),
        (&["merge", "a.bb", "b.bb", "-o", "b-hard"], "b-hard"),
        (&["merge", "a-link", "b-hard", "-o", "b.bb"], "b.bb"),
    ];
    for (args, output) in cases {
        refused_as_an_input(&dir, args, output, Stdio::null());
    }
    // `build -o keys.txt < keys.txt` (stdin read implicitly or as `-`), with or without the
    // count that spills stdin first.
    for args in [
        &["build", "--fpr", "0.01", "-o", "keys.txt"][..],
        &["build", "--fpr", "0.01", "-", "-o", "keys-hard"],
        &[
            "build",
            "--fpr",
            "0.01",
            "--capacity",
            "1000",
            "-o",
            "keys-link",
        ],
    ] {
        let stdin = std::fs::File::open(dir.join("keys.txt")).unwrap();
        refused_as_an_input(&dir, args, args[args.len() - 1], stdin.into());
    }
    // Stdin from the output file is no input when key files are given instead.
    let stdin = std::fs::File::open(dir.join("a.bb")).unwrap();
    let args = ["build", "--fpr", "0.01", "keys.txt", "-o", "a.bb"];
    ok(&blockbloom_in(&dir, &args, stdin.into()));
}

// ---- Write errors name the output ----

/// A failure to write the output names the path as the user gave it, never the temporary
/// file beside it.
#[test]
fn write_errors_name_the_output_not_the_temporary_file() {
    let dir = scratch("write-errors");
    keys_file(&dir, "keys.txt", members(0..1000));
    let args = ["build", "--fpr", "0.01", "keys.txt", "-o", "a.bb"];
    ok(&blockbloom_in(&dir, &args, Stdio::null()));
    std::fs::create_dir(dir.join("adir")).unwrap();
    let cases: [(&[&str], &str, &str); 4] = [
        (
            &["build", "--fpr", "0.01", "keys.txt", "-o", "nodir/x.bloom"],
            "nodir/x.bloom",
            "NotFound",
        ),
        (
            &["merge", "a.bb", "a.bb", "-o", "nodir/x.bloom"],
            "nodir/x.bloom",
            "NotFound",
        ),
        (
            &["build", "--fpr", "0.01", "keys.txt", "-o", "adir"],
            "adir",
            "I/O error",
        ),
        (
            &["merge", "a.bb", "a.bb", "-o", "adir"],
            "adir",
            "I/O error",
        ),
    ];
    for (args, output, says) in cases {
        let before = snapshot(&dir);
        let out = blockbloom_in(&dir, args, Stdio::null());
        let (_, stderr) = text(&out);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            stderr.starts_with(&format!("error: {output}: ")) && stderr.contains(says),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains(".tmp"), "{args:?}: {stderr}");
        assert_eq!(snapshot(&dir), before, "{args:?}");
    }
}

// ---- merge: shards sized for the total ----

/// Four shards of 2,500 keys each: built for their own line counts they merge into a filter
/// holding four times its capacity (a warning); built with --capacity for the total, into
/// one at the target (no warning). Either way the union holds every key.
#[test]
fn merge_warns_when_the_union_misses_the_target() {
    let dir = scratch("merge-warning");
    let shards: Vec<String> = (0..4)
        .map(|i| {
            keys_file(
                &dir,
                &format!("s{i}.txt"),
                members(i * 2500..(i + 1) * 2500),
            )
        })
        .collect();
    for (sizing, warns) in [(&[][..], true), (&["--capacity", "10000"][..], false)] {
        let mut inputs = Vec::new();
        for (i, keys) in shards.iter().enumerate() {
            let out = path(&dir, &format!("s{i}.bb"));
            let mut args = vec!["build", "--fpr", "0.01", keys.as_str(), "-o", &out];
            args.extend(sizing);
            ok(&blockbloom(&args, None));
            inputs.push(out);
        }
        let merged = path(&dir, "merged.bb");
        let mut args = vec!["merge"];
        args.extend(inputs.iter().map(String::as_str));
        args.extend(["-o", &merged]);
        let out = blockbloom(&args, None);
        let (_, stderr) = text(&out);
        ok(&out);
        if warns {
            assert!(stderr.starts_with("warning: "), "{stderr}");
            for says in [
                "expected false-positive rate",
                "target 0.01",
                "build every shard with --capacity set to the total key count",
            ] {
                assert!(stderr.contains(says), "{says:?}: {stderr}");
            }
            assert_eq!(stderr.lines().count(), 1, "{stderr}");
        } else {
            assert_eq!(stderr, "", "{sizing:?}");
        }
        let info = ok(&blockbloom(&["info", &merged], None));
        let fpr: f64 = field(&info, "expected FPR").parse().unwrap();
        assert_eq!(fpr > 0.02, warns, "{info}");
        let mut args = vec!["query", "--absent", merged.as_str()];
        let keys: Vec<String> = members(0..10_000).step_by(97).collect();
        args.extend(keys.iter().map(String::as_str));
        assert_eq!(ok(&blockbloom(&args, None)), "", "a member is missing");
    }
}

#[test]
fn help_says_to_size_shards_for_the_total() {
    for command in ["build", "merge"] {
        for flag in ["--help", "-h"] {
            let out = blockbloom(&[command, flag], None);
            // Wrapped to any width: compare the words.
            let words = ok(&out).split_whitespace().collect::<Vec<_>>().join(" ");
            let words = words.to_lowercase();
            assert!(
                words.contains("build every shard with --capacity set to the total key count"),
                "{command} {flag}: {words}"
            );
        }
    }
}

// ---- build --keyed ----

#[test]
fn keyed_builds_draw_a_secret_seed() {
    let dir = scratch("keyed");
    let keys = keys_file(&dir, "keys.txt", members(0..5000));
    let mut seeds = Vec::new();
    for name in ["a.bb", "b.bb"] {
        let f = path(&dir, name);
        ok(&blockbloom(
            &["build", "--fpr", "0.01", "--keyed", &keys, "-o", &f],
            None,
        ));
        seeds.push(field(&ok(&blockbloom(&["info", &f], None)), "seed"));
        // Every member answers "maybe" under the drawn seed.
        let mut args = vec!["query", "--absent", f.as_str()];
        let some: Vec<String> = members(0..5000).step_by(7).collect();
        args.extend(some.iter().map(String::as_str));
        assert_eq!(ok(&blockbloom(&args, None)), "", "a member is missing");
        let stdout = ok(&blockbloom_stdin(
            &["query", &f],
            &std::fs::read(&keys).unwrap(),
        ));
        assert_eq!(stdout.lines().count(), 5000);
        // And non-members mostly "no": the seed the file stores is the one keys were hashed with.
        let others: Vec<String> = members(1_000_000..1_001_000).collect();
        let mut args = vec!["query", "--absent", f.as_str()];
        args.extend(others.iter().map(String::as_str));
        assert!(ok(&blockbloom(&args, None)).lines().count() >= 960);
    }
    assert_ne!(seeds[0], seeds[1]);
    assert!(seeds.iter().all(|s| s != "0"), "{seeds:?}");
    // A seed given and a seed drawn: refused by the parser, nothing written.
    let f = path(&dir, "c.bb");
    let out = blockbloom(
        &[
            "build", "--fpr", "0.01", "--keyed", "--seed", "1", &keys, "-o", &f,
        ],
        None,
    );
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("'--keyed' cannot be used with '--seed <SEED>'"),
        "{stderr}"
    );
    assert!(!std::path::Path::new(&f).exists());
}
