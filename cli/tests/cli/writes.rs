// Writes: nothing left behind when interrupted, progress, stdin spill and file mode, no
// output that is one of the inputs, and write errors that name the output.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::{blockbloom, keys_file, members, ok, path, scratch, text};

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
