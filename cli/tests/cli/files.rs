// ---- Filter files: build, query, info, merge ----

use blockbloom::{Isa, KeyHash};

use crate::{blockbloom, blockbloom_stdin, field, keys_file, members, ok, path, scratch, text};

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
    // The library's default at 1%: layout 8x32 (one register per key), 8 probes.
    for field in ["bytes", "bits/key", "layout 8x32", "k=8", "expected FPR"] {
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

/// `--hash NAME` writes the id of every hash the library knows (`--hash xxh3-64` hash id 1,
/// `--hash aesh-64` hash id 2, the default `mx32-64` hash id 3, `--hash moremur-64` hash id 4);
/// `query` hashes lines with the file's hash each way (the members include lines of 8 bytes,
/// which hash ids 2 and 3 hash apart from the others), a batch of stdin lines as the keys given one by one.
#[test]
fn build_writes_either_hash_and_query_reads_it() {
    let dir = scratch("hash-ids");
    let keys = keys_file(&dir, "keys.txt", members(0..2_000));
    assert!(KeyHash::ALL.len() >= 4, "{:?}", KeyHash::ALL);
    for key_hash in KeyHash::ALL {
        let (hash, id) = (key_hash.name(), key_hash.id());
        let shown = format!("{hash} (hash id {id})");
        let f = path(&dir, &format!("{hash}.bb"));
        ok(&blockbloom(
            &["build", "--fpr", "0.001", "--hash", hash, &keys, "-o", &f],
            None,
        ));
        assert_eq!(std::fs::read(&f).unwrap()[12], id);
        assert_eq!(field(&ok(&blockbloom(&["info", &f], None)), "hash"), shown);
        let out = ok(&blockbloom(&["query", &f, "key-7", "key-1999"], None));
        assert_eq!(out, "key-7\tmaybe\nkey-1999\tmaybe\n", "{hash}");
        let lines: String = members(0..2_000).map(|k| k + "\n").collect();
        let found = ok(&blockbloom_stdin(&["query", &f], lines.as_bytes()));
        assert_eq!(
            found.lines().count(),
            2_000,
            "{hash}: every member through the prefilter"
        );
    }
    let bad = blockbloom(
        &[
            "build",
            "--fpr",
            "0.01",
            "--hash",
            "md5",
            &keys,
            "-o",
            &path(&dir, "x.bb"),
        ],
        None,
    );
    assert!(!bad.status.success());
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
    assert_eq!(field("hash"), "mx32-64 (hash id 3)");
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

/// `--key-type int`: a line is a decimal integer, the key of its 64-bit value, the same key
/// the library gives Rust's integers of every width (and SQL's and Python's); queried as
/// arguments and as a stdin prefilter; a line that is not an integer is an error naming it.
#[test]
fn int_keys_are_their_64_bit_values() {
    let dir = scratch("int-keys");
    let values: Vec<i64> = vec![0, 5, -1, 127, -128, 65535, 1 << 40, i64::MIN, i64::MAX];
    let mut lines: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    lines.push(u64::MAX.to_string());
    lines.push(" 42\t".to_string());
    let keys = keys_file(&dir, "ints.txt", lines.into_iter());
    let f = path(&dir, "ints.bb");
    ok(&blockbloom(
        &[
            "build",
            "--fpr",
            "0.0001",
            "--key-type",
            "int",
            &keys,
            "-o",
            &f,
        ],
        None,
    ));
    // The library finds each as an integer of every width that can name it.
    let filter = blockbloom::BloomFilter::from_bytes(&std::fs::read(&f).unwrap()).unwrap();
    assert!(filter.contains(&5u8) && filter.contains(&5i32) && filter.contains(&5u64));
    assert!(filter.contains(&-1i8) && filter.contains(&u64::MAX) && filter.contains(&-128i16));
    assert!(filter.contains(&65535u16) && filter.contains(&42u32) && filter.contains(&i64::MIN));
    assert_eq!(filter.count_batch(&[127i8, -1, 0]), 3);

    let stdout = ok(&blockbloom(
        &[
            "query",
            "--key-type",
            "int",
            &f,
            "5",
            "-1",
            "+127",
            "1000001",
        ],
        None,
    ));
    assert_eq!(
        stdout, "5\tmaybe\n-1\tmaybe\n+127\tmaybe\n1000001\tno\n",
        "{stdout}"
    );
    let out = blockbloom_stdin(
        &["query", "--key-type", "int", &f],
        b"18446744073709551615\n7\n",
    );
    assert_eq!(ok(&out), "18446744073709551615\n");

    // Not an integer: the line and file are named; out of range too.
    for (bad, line) in [
        ("12x", 2),
        ("18446744073709551616", 2),
        ("-9223372036854775809", 2),
    ] {
        let input = keys_file(
            &dir,
            "bad.txt",
            ["1".to_string(), bad.to_string()].into_iter(),
        );
        let out = blockbloom(
            &[
                "build",
                "--fpr",
                "0.01",
                "--key-type",
                "int",
                &input,
                "-o",
                &path(&dir, "bad.bb"),
            ],
            None,
        );
        let (_, stderr) = text(&out);
        assert!(!out.status.success(), "{bad}");
        assert!(
            stderr.contains(&format!("line {line}: not an integer")) && stderr.contains("bad.txt"),
            "{stderr}"
        );
        assert!(!std::path::Path::new(&path(&dir, "bad.bb")).exists());
    }
    let out = blockbloom(&["query", "--key-type", "int", &f, "five"], None);
    let (_, stderr) = text(&out);
    assert!(
        !out.status.success() && stderr.contains("not an integer"),
        "{stderr}"
    );
}

/// A line longer than 1 MiB is an error naming its file and line, read no further than the
/// limit; a line of exactly 1 MiB (with a CRLF) is a key.
#[test]
fn lines_are_bounded() {
    let dir = scratch("long-lines");
    let max = 1 << 20;
    let mut text_ok = "short\n".to_string();
    text_ok.push_str(&"a".repeat(max));
    text_ok.push_str("\r\n");
    let fine = path(&dir, "fine.txt");
    std::fs::write(&fine, &text_ok).unwrap();
    let f = path(&dir, "fine.bb");
    ok(&blockbloom(
        &["build", "--fpr", "0.01", &fine, "-o", &f],
        None,
    ));
    let filter = blockbloom::BloomFilter::from_bytes(&std::fs::read(&f).unwrap()).unwrap();
    assert!(filter.contains_bytes("a".repeat(max).as_bytes()));

    let long = path(&dir, "long.txt");
    std::fs::write(&long, format!("short\nok\n{}\n", "b".repeat(max + 1))).unwrap();
    let out = blockbloom(
        &[
            "build",
            "--fpr",
            "0.01",
            "--capacity",
            "10",
            &long,
            "-o",
            &f,
        ],
        None,
    );
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("long.txt") && stderr.contains("line 3: longer than 1048576 bytes"),
        "{stderr}"
    );
    let mut input = b"x\n".to_vec();
    input.extend(std::iter::repeat_n(b'c', 3 * max));
    let out = blockbloom_stdin(&["query", &f], &input);
    let (_, stderr) = text(&out);
    assert!(
        !out.status.success() && stderr.contains("line 2: longer than"),
        "{stderr}"
    );
}
