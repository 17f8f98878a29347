//! The `blockbloom-perf` binary end to end: a tiny bench succeeds and names every kernel;
//! bad parameters and a bad `BLOCKBLOOM_ISA` fail with the library's message instead of a
//! panic; `sizing` meets its targets; a quick `family` report has every section; `--format
//! json` documents parse and carry the numbers; reports go where `--out` says, and name the
//! commit the binary was built from whatever the current directory. No timing checks.

use std::path::PathBuf;
use std::process::{Command, Output};

use blockbloom::Isa;

fn perf(args: &[&str], env: Option<(&str, &str)>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_blockbloom-perf"));
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

const TINY: [&str; 7] = [
    "bench",
    "--n",
    "10000",
    "--reps",
    "1",
    "--queries",
    "100000",
];

#[test]
fn tiny_bench_reports_every_supported_kernel() {
    let out = perf(&TINY, None);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    for isa in Isa::supported() {
        assert!(
            stdout.lines().any(|l| l.starts_with(isa.name())),
            "no row for {isa}:\n{stdout}"
        );
    }
    assert!(stdout.contains("single-key"), "{stdout}");
    assert!(!stdout.contains("WRONG"), "{stdout}");
}

#[test]
fn bench_with_threads_adds_the_concurrent_rows() {
    let args = [
        "bench",
        "--n",
        "20000",
        "--threads",
        "2",
        "--reps",
        "1",
        "--queries",
        "10000",
    ];
    let out = perf(&args, None);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("Concurrent insert, 1 / 2 threads"),
        "{stdout}"
    );
    for row in [
        "plain BloomFilter::insert_batch",
        "AtomicBloomFilter::insert_batch, shared",
        "BloomFilter::par_insert_batch",
    ] {
        assert!(
            stdout.lines().any(|l| l.starts_with(row)),
            "no row {row:?}:\n{stdout}"
        );
    }
    assert!(stdout.contains("2t vs 1t") && stdout.contains("2t vs plain"));
    assert!(!stdout.contains("WRONG"), "{stdout}");
}

#[test]
fn bench_without_threads_has_no_concurrent_rows() {
    let out = perf(&TINY, None);
    let (stdout, _) = text(&out);
    assert!(out.status.success());
    assert!(!stdout.contains("Concurrent insert"), "{stdout}");
}

#[test]
fn bench_with_one_kernel_and_single_key_batches() {
    let mut args = TINY.to_vec();
    args.extend(["--isa", "scalar", "--batch", "1", "--fpr", "0.001"]);
    let out = perf(&args, None);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.lines().any(|l| l.starts_with("scalar")), "{stdout}");
    assert!(
        !stdout.lines().any(|l| l.starts_with("portable")),
        "{stdout}"
    );
}

#[test]
fn invalid_fpr_prints_the_library_error() {
    for fpr in ["2", "0", "-0.5"] {
        let out = perf(&["bench", "--n", "1000", "--fpr", fpr], None);
        let (_, stderr) = text(&out);
        assert!(!out.status.success());
        assert!(stderr.contains("false-positive rate must be"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn unknown_and_unsupported_kernels_are_rejected() {
    let out = perf(&["bench", "--n", "1000", "--isa", "sse9"], None);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("unknown kernel `sse9`"), "{stderr}");

    if let Some(missing) = Isa::ALL.into_iter().find(|i| !i.is_supported()) {
        let out = perf(&["bench", "--n", "1000", "--isa", missing.name()], None);
        let (_, stderr) = text(&out);
        assert!(!out.status.success());
        assert!(stderr.contains("is not supported by this CPU"), "{stderr}");
    }
}

#[test]
fn bogus_blockbloom_isa_fails_clearly() {
    for args in [&["bench", "--n", "1000"][..], &["sizing"][..]] {
        let out = perf(args, Some(("BLOCKBLOOM_ISA", "bogus")));
        let (stdout, stderr) = text(&out);
        assert!(!out.status.success(), "{args:?} succeeded:\n{stdout}");
        assert!(stderr.contains("BLOCKBLOOM_ISA"), "{stderr}");
        assert!(stderr.contains("unknown kernel `bogus`"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn sizing_measures_every_target_at_or_below_it() {
    let out = perf(&["sizing"], None);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            let mut cols = l.split_whitespace();
            cols.next().is_some_and(|t| t.ends_with('%'))
                && matches!(cols.next(), Some("50000" | "1000000"))
        })
        .collect();
    assert_eq!(rows.len(), 10, "5 targets x 2 sizes:\n{stdout}");
    for row in rows {
        // The last column is measured / target; about 1,000 expected false positives put 5
        // standard deviations near 16%, so anything above 1.16 is a sizing failure.
        let ratio: f64 = row.split_whitespace().last().unwrap().parse().unwrap();
        assert!(ratio <= 1.16, "{row}");
    }
    assert!(stdout.contains("512-bit best-k bound"));
}

/// A fresh directory for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("perf-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn ok(o: &Output) -> String {
    let (stdout, stderr) = text(o);
    assert!(o.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stdout
}

#[test]
fn sweep_help_names_its_options() {
    let o = perf(&["sweep", "--help"], None);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("--quick") && out.contains("--out"), "{out}");
}

/// `git rev-parse --short HEAD` of the checkout the tool was built from, if git works here.
fn checkout_commit() -> Option<String> {
    let out = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Runs the tool in `cwd` (a directory outside any checkout).
fn perf_in(cwd: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_blockbloom-perf"))
        .args(args)
        .env_remove("BLOCKBLOOM_ISA")
        .current_dir(cwd)
        .output()
        .expect("the binary runs")
}

#[test]
fn family_quick_reports_every_kind() {
    let dir = scratch("family_quick");
    let out_dir = dir.join("reports");
    // Run from a directory that is no git checkout: the commit still is the build's.
    let cwd = std::env::temp_dir().join(format!("perf-family-cwd-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cwd);
    std::fs::create_dir_all(&cwd).unwrap();
    let out = ok(&perf_in(
        &cwd,
        &["family", "--quick", "--out", out_dir.to_str().unwrap()],
    ));
    let report = std::fs::read_to_string(out.trim()).expect("the printed path is the report");
    assert!(
        std::path::Path::new(out.trim()).starts_with(&out_dir),
        "{out}"
    );
    // The report names the command that reproduces it.
    assert!(
        report
            .contains("- command: cargo run --release -p blockbloom-perf -- family --quick --out "),
        "{report}"
    );
    if let Some(head) = checkout_commit() {
        assert!(report.contains(&format!("- commit: {head}")), "{report}");
    }
    for title in [
        "## Counting filter",
        "## Deletable Bloom filter",
        "## Scalable filter",
        "## Compressed transfer form",
        "## Bloomier filter",
        "## Classic Bloom filter against the blocked filter",
        "## Variable-increment counting filter against the counting filter",
        "## The Floom filter experiment",
    ] {
        assert!(report.contains(title), "no {title:?} section in\n{report}");
    }
    // The same as JSON: every section with its tables; nothing written into the cwd.
    let out = ok(&perf_in(
        &cwd,
        &[
            "--format",
            "json",
            "family",
            "--quick",
            "--out",
            out_dir.to_str().unwrap(),
        ],
    ));
    let doc: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
    assert_eq!(doc["command"], "family");
    if let Some(head) = checkout_commit() {
        assert_eq!(doc["context"]["commit"], head.as_str());
    }
    let sections = doc["results"]["sections"].as_array().unwrap();
    assert_eq!(sections.len(), 8);
    for s in sections {
        let tables = s["tables"].as_array().unwrap();
        assert!(!tables.is_empty(), "{s}");
        for t in tables {
            assert!(!t["rows"].as_array().unwrap().is_empty(), "{t}");
        }
    }
    let report = doc["results"]["report"].as_str().unwrap();
    assert!(std::path::Path::new(report).starts_with(&out_dir));
    assert_eq!(
        std::fs::read_dir(&cwd).unwrap().count(),
        0,
        "wrote into the cwd"
    );
    std::fs::remove_dir_all(&cwd).unwrap();
}

#[test]
fn bench_json_carries_every_row_with_numbers() {
    let mut args = vec!["--format", "json"];
    args.extend(TINY);
    args.extend(["--threads", "2"]);
    let out = perf(&args, None);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("only JSON on stdout");
    assert_eq!(doc["tool"], "blockbloom-perf");
    assert_eq!(doc["command"], "bench");
    assert!(doc["context"]["cpu"].is_string());
    let size = &doc["results"]["sizes"][0];
    assert_eq!(size["n"], 10_000);
    let rows = size["rows"].as_array().unwrap();
    for isa in Isa::supported() {
        let row = rows
            .iter()
            .find(|r| r["isa"] == isa.name())
            .unwrap_or_else(|| panic!("no row for {isa}"));
        let m = &row["measurement"];
        for timing in ["insert_ns_per_key", "contains_ns_per_key"] {
            let median = m[timing]["median"].as_f64().unwrap();
            assert!(median > 0.0, "{isa} {timing}: {median}");
            assert_eq!(m[timing]["samples"].as_array().unwrap().len(), 1);
        }
        let fpr = m["fpr"].as_f64().unwrap();
        let lo = m["fpr_interval95"][0].as_f64().unwrap();
        let hi = m["fpr_interval95"][1].as_f64().unwrap();
        assert!(
            lo <= fpr && fpr <= hi && hi < 0.05,
            "{isa}: {lo} {fpr} {hi}"
        );
        assert_eq!(m["false_negatives"], 0);
    }
    assert!(rows.iter().any(|r| r["kind"] == "single-key"));
    let concurrent = &doc["results"]["concurrent"][0];
    assert_eq!(concurrent["threads"], serde_json::json!([1, 2]));
    assert!(!concurrent["rows"].as_array().unwrap().is_empty());
}

#[test]
fn sizing_json_has_both_tables() {
    let out = perf(&["--format", "json", "sizing"], None);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let measured = doc["results"]["measured"]["rows"].as_array().unwrap();
    assert_eq!(measured.len(), 10);
    for row in measured {
        // Plain numbers are JSON numbers; the same 1.16 bound as the text test.
        let ratio = row["measured / target"].as_f64().unwrap();
        assert!(ratio <= 1.16, "{row}");
        assert!(row["n"].is_u64(), "{row}");
    }
    assert_eq!(
        doc["results"]["bits_per_key"]["rows"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
}

#[test]
fn reports_default_to_the_checkouts_perf_reports() {
    let want = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("perf-reports");
    for command in ["report", "sweep", "family", "reliability"] {
        let o = perf(&[command, "--help"], None);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        // clap wraps the help: compare with the whitespace collapsed.
        let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
        let default = format!("[default: {}]", want.display());
        assert!(
            flat.contains(&default),
            "{command}: {default} not in\n{out}"
        );
    }
}

#[test]
fn mistyped_commands_get_a_suggestion() {
    let out = perf(&["sizng"], None);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    // Among others: the programs' names (`string-pairs`) are near `sizng` too.
    assert!(
        stderr.contains("similar subcommand") && stderr.contains("'sizing'"),
        "{stderr}"
    );
    let out = perf(&["--format", "yaml", "sizing"], None);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("possible values: text, json"), "{stderr}");
}

#[test]
fn readers_reports_every_path_per_size() {
    let out = perf(&["readers", "--sizes", "1,2", "--reps", "1"], None);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    for size in ["1.0 MiB", "2.0 MiB"] {
        let row = stdout
            .lines()
            .find(|l| l.starts_with(size))
            .unwrap_or_else(|| panic!("no row for {size}:\n{stdout}"));
        // size, three timings, the ratio, two per-MiB costs, the wire size (two words), and
        // the compressed timings.
        assert!(row.split_whitespace().count() >= 10, "{row}");
    }
    let out = perf(
        &["readers", "--sizes", "1", "--reps", "1", "--format", "json"],
        None,
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let row = &doc["results"]["decoding"]["rows"][0];
    assert_eq!(row["size"], "1.0 MiB");
    assert!(row["from_bytes ms"].as_f64().unwrap() > 0.0, "{row}");
}

#[test]
fn quick_reliability_report_has_no_panic_and_no_lost_key() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("perf-reliability");
    let _ = std::fs::remove_dir_all(&dir);
    let out = perf(
        &[
            "reliability",
            "--quick",
            "--out",
            dir.to_str().unwrap(),
            "--format",
            "json",
        ],
        None,
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        doc["results"]["report"],
        dir.join("reliability.md").to_str().unwrap()
    );
    for table in ["mutated_inputs", "faults", "concurrency"] {
        let rows = doc["results"]["tables"][table]["rows"].as_array().unwrap();
        assert!(!rows.is_empty(), "{table}");
    }
    assert!(doc["results"]["tables"]["fuzzing"]["not_run"].is_string());
    let report = std::fs::read_to_string(dir.join("reliability.md")).unwrap();
    for section in ["## Mutated inputs", "## Faults", "## Concurrency"] {
        assert!(report.contains(section), "{section} missing:\n{report}");
    }
    // Every table's last columns are the panics (or keys lost): all zero.
    for row in report.lines().filter(|l| {
        l.starts_with("| ")
            && !l.starts_with("| kind")
            && !l.starts_with("| tier")
            && !l.starts_with("| :")
    }) {
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(cells.last(), Some(&"0"), "{row}");
    }
}

/// The programs that were the library's examples run as subcommands, with the arguments they
/// took as examples, under their new names and their old ones.
#[test]
fn the_programs_run_as_subcommands() {
    for name in ["plan-cost", "plan_cost"] {
        let out = perf(&[name, "1", "1000", "0.01"], None);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{name}: {stderr}");
        assert!(
            stdout.contains("keys") && stdout.contains("1000"),
            "{stdout}"
        );
    }
    let out = perf(&["build-pairs", "1", "1"], None);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("parquet-sbbf: median"), "{stdout}");
    assert!(stdout.contains("sbbf-xxh3 / warm: median"), "{stdout}");
}

/// A program whose reader has gone (`| head`, the pipe closed before its first line) ends
/// quietly with success, not with a panic on the broken pipe.
#[test]
fn a_program_whose_reader_has_gone_ends_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_blockbloom-perf"))
        .args(["plan-cost", "1", "1000", "0.01"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the perf tool starts");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("the perf tool ends");
    let (_, stderr) = text(&out);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// `NAME --help` (or `-h`) answers a program's words and where its documentation is, without
/// running it, under its new name and its old one.
#[test]
fn programs_answer_help() {
    for (name, words) in [
        ("ingest-pairs", "[ROUNDS [SIZES [THREADS [CALLS]]]]"),
        ("u64_pairs", "[ROUNDS [N...]]"),
    ] {
        for flag in ["--help", "-h"] {
            let out = perf(&[name, flag], None);
            let (stdout, stderr) = text(&out);
            assert!(out.status.success(), "{name} {flag}: {stderr}");
            assert!(stdout.contains(words), "{name} {flag}: {stdout}");
            assert!(stdout.contains("perf/src/programs/"), "{stdout}");
        }
    }
}

/// A program under `--format json` prints its text on stderr and one JSON document on stdout,
/// whose rows carry its medians with what they measured.
#[test]
fn programs_print_their_rows_as_json() {
    let out = perf(&["--format", "json", "burst-pairs", "1", "1000"], None);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("contains-8: median"), "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    assert_eq!(doc["command"], "burst-pairs");
    let rows = doc["results"]["rows"].as_array().expect("rows");
    let side = |name: &str| {
        rows.iter()
            .find(|r| r["side"] == name)
            .unwrap_or_else(|| panic!("{name}: {rows:?}"))
    };
    assert_eq!(side("sbbf-contains")["n"], 1000);
    assert!(side("contains-8")["ns_per_key"].as_f64().unwrap() > 0.0);
    assert!(
        rows.iter()
            .any(|r| r["ratio"] == "sbbf-contains / contains-8")
    );
}

/// Every measuring program records rows of its figures under `--format json` (here the ones
/// that run in a moment with tiny arguments; the callgrind workloads' rows are the workload).
#[test]
fn every_program_records_rows() {
    let mut programs: Vec<&[&str]> = vec![
        &["batch-instructions", "u64", "8"],
        &["batch-instructions", "shared", "500"],
        &["build-pairs", "1", "1"],
        &["burst-instructions", "8"],
        &["classic-batch", "1", "1000"],
        &["hash-quality", "2000", "20000"],
        &["plan-cost", "1", "1000", "0.01"],
        &["plan-cost", "1", "constructors"],
        &["dedup-pairs", "1", "1000"],
        &["scalar-exit", "1", "1000"],
        &["string-pairs", "--keys", "1000", "1", "ipv6-u128"],
    ];
    #[cfg(target_arch = "x86_64")]
    if is_x86_feature_detected!("avx2") {
        programs.push(&["hash-lanes", "1"]);
    }
    for args in programs {
        let out = perf(&[&["--format", "json"], args].concat(), None);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{args:?}: {stderr}");
        let doc: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
        let rows = doc["results"]["rows"].as_array().expect("rows");
        assert!(!rows.is_empty(), "{args:?}: no rows");
    }
}
