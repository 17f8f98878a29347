//! The `blockbloom` user tool end to end: it offers exactly its own commands; a bad
//! `BLOCKBLOOM_ISA` fails with the library's message instead of a panic; filter files
//! round-trip through build, query, info and merge, and bad files fail with the library's
//! typed decoding errors; no output may be one of the inputs, and write errors name the
//! output, not the temporary file; merge warns when shards were sized for less than their
//! union; `build --keyed` draws its seed. The measurement commands are tested in
//! `blockbloom-perf`.

mod files;
mod kinds;
mod parquet_command;
mod writes;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

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

// ---- Helpers of the modules' tests: scratch directories, key files, runs, fields ----

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

fn field(stdout: &str, name: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(name).filter(|r| r.starts_with(' ')))
        .unwrap_or_else(|| panic!("no {name}:\n{stdout}"))
        .trim()
        .to_string()
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
