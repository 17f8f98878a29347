//! Records the compiler, the profile and the checkout (commit and modified files) that built
//! this crate (and so the tools that link it), so a performance report names the code it
//! measured, wherever it is run from: not whatever `rustc` is on PATH, or whatever checkout
//! the current directory is, later. Without git (a source archive) the commit is "unknown".

use std::path::{Path, PathBuf};
use std::process::Command;

fn run(program: &str, args: &[&str], dir: &Path) -> Option<String> {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    Some(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
}

/// Paths of `git status --porcelain` lines, "XY path": two status columns (often a leading
/// space), a space, the path.
fn porcelain_paths(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.get(3..))
        .map(str::to_string)
        .collect()
}

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=BLOCKBLOOM_MEASURE_RUSTC={version}");
    let profile = std::env::var("PROFILE").unwrap_or_default();
    let opt = std::env::var("OPT_LEVEL").unwrap_or_default();
    println!("cargo:rustc-env=BLOCKBLOOM_MEASURE_PROFILE={profile} (opt-level {opt})");

    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    // This crate is perf/measure/: the checkout is two levels up.
    let root = manifest
        .ancestors()
        .nth(2)
        .unwrap_or(&manifest)
        .to_path_buf();
    let git = |args: &[&str]| run("git", args, &root);
    let commit = git(&["rev-parse", "--short", "HEAD"])
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=BLOCKBLOOM_MEASURE_COMMIT={commit}");
    // Tab-separated: porcelain output quotes a path that holds a tab.
    let modified = git(&["status", "--porcelain", "--untracked-files=no"])
        .map(|s| porcelain_paths(&s).join("\t"))
        .unwrap_or_default();
    println!("cargo:rustc-env=BLOCKBLOOM_MEASURE_MODIFIED={modified}");

    // Run again when the commit moves (HEAD, the branch's ref, packed refs, the index) or
    // when a source the tools are built from changes (so the modified list stays true).
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC");
    let mut watched: Vec<PathBuf> = ["src", "cli", "perf", "Cargo.toml", "Cargo.lock"]
        .iter()
        .map(|p| root.join(p))
        .collect();
    let mut git_paths = vec!["HEAD".to_string(), "packed-refs".into(), "index".into()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        git_paths.push(branch);
    }
    for p in git_paths {
        if let Some(path) = git(&["rev-parse", "--path-format=absolute", "--git-path", &p]) {
            watched.push(PathBuf::from(path));
        }
    }
    for p in watched.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}
