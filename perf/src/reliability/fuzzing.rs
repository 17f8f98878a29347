//! The cargo-fuzz targets (`fuzz/`) run for a fixed time each, with the executions libFuzzer
//! reports: the figure `.ci/run`'s smoke run prints, kept in the report.

use std::path::{Path, PathBuf};
use std::process::Command;

use blockbloom_measure::format::group;
use blockbloom_measure::table::Table;

/// The fuzz workspace, beside this crate.
fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// Why the fuzz targets cannot run here, if they cannot.
fn unavailable(dir: &Path) -> Option<String> {
    let ok = |args: &[&str]| {
        Command::new("cargo")
            .args(args)
            .current_dir(dir)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !ok(&["+nightly", "--version"]) {
        return Some("no nightly toolchain (`rustup toolchain install nightly`)".into());
    }
    if !ok(&["fuzz", "--version"]) {
        return Some("no cargo-fuzz (`cargo install cargo-fuzz --locked`)".into());
    }
    None
}

/// The number after `prefix` in libFuzzer's output (its last occurrence).
fn number_after(log: &str, prefix: &str) -> Option<u64> {
    let at = log.rfind(prefix)? + prefix.len();
    let digits: String = log[at..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Runs every target for `seconds` from the committed corpus and seeds (new inputs go to a
/// scratch directory, so the run leaves the repository unchanged). `Err` says why it could not
/// run at all; a crash is a row, not an error, so the report shows it.
pub fn run(seconds: u64, progress: impl Fn(&str)) -> Result<Table, String> {
    let dir = fuzz_dir();
    if let Some(why) = unavailable(&dir) {
        return Err(why);
    }
    let build = Command::new("cargo")
        .args(["+nightly", "fuzz", "build"])
        .current_dir(&dir)
        .output()
        .map_err(|e| format!("cargo fuzz build: {e}"))?;
    if !build.status.success() {
        return Err(format!(
            "cargo fuzz build failed: {}",
            String::from_utf8_lossy(&build.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ));
    }
    let list = Command::new("cargo")
        .args(["+nightly", "fuzz", "list"])
        .current_dir(&dir)
        .output()
        .map_err(|e| format!("cargo fuzz list: {e}"))?;
    let targets = String::from_utf8_lossy(&list.stdout).into_owned();
    let scratch = std::env::temp_dir().join(format!("blockbloom-fuzz-{}", std::process::id()));
    let mut t = Table::new([
        "target",
        "seconds",
        "executions",
        "executions/s",
        "corpus entries at the end",
        "crashes",
    ]);
    for target in targets.split_whitespace() {
        progress(target);
        let new = scratch.join(target);
        std::fs::create_dir_all(&new).map_err(|e| format!("{}: {e}", new.display()))?;
        let mut args = vec![
            "+nightly".to_string(),
            "fuzz".into(),
            "run".into(),
            target.into(),
            new.display().to_string(),
            format!("corpus/{target}"),
        ];
        if dir.join("seeds").join(target).is_dir() {
            args.push(format!("seeds/{target}"));
        }
        args.extend(["--".into(), format!("-max_total_time={seconds}")]);
        let out = Command::new("cargo")
            .args(&args)
            .current_dir(&dir)
            .output()
            .map_err(|e| format!("cargo fuzz run {target}: {e}"))?;
        let log = String::from_utf8_lossy(&out.stderr);
        // libFuzzer saves every failing input; anything else that fails is the run itself.
        let crashed = log.contains("Test unit written to");
        if !out.status.success() && !crashed {
            let last = log
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            return Err(format!("cargo fuzz run {target} failed: {last}"));
        }
        let runs = number_after(&log, "Done ").unwrap_or(0);
        let took = number_after(&log, " runs in ").unwrap_or(seconds).max(1);
        let corpus = number_after(&log, "corp: ").map_or("?".into(), group);
        t.row(vec![
            target.to_string(),
            took.to_string(),
            group(runs),
            group(runs / took),
            corpus,
            if out.status.success() {
                "0"
            } else {
                "1 (see fuzz/artifacts)"
            }
            .into(),
        ]);
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(t)
}
