//! Facts about the machine, the build and the checkout that a measurement depends on, and
//! the [`Context`] header every demo and report starts with.

use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use blockbloom::Isa;

use crate::format::bytes;

/// The CPU's model name from `/proc/cpuinfo`, or "unknown".
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".to_string())
}

/// Logical CPUs this process may use.
pub fn logical_cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// A data or unified cache level of CPU 0, as the kernel reports it.
#[derive(Debug, Clone)]
pub struct Cache {
    /// 1, 2, 3.
    pub level: u32,
    /// Bytes.
    pub bytes: u64,
}

/// Data/unified caches of CPU 0 from sysfs, smallest level first (empty if unavailable).
pub fn caches() -> Vec<Cache> {
    let mut out = Vec::new();
    for i in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        if kind.trim() == "Instruction" {
            continue;
        }
        let (Ok(level), Some(bytes)) = (level.trim().parse(), parse_size(size.trim())) else {
            continue;
        };
        out.push(Cache { level, bytes });
    }
    out.sort_by_key(|c| c.level);
    out
}

fn parse_size(s: &str) -> Option<u64> {
    let (num, mult) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 1u64 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

/// "L1d 48 KiB, L2 2 MiB, L3 480 MiB", or "unknown".
pub fn caches_summary(caches: &[Cache]) -> String {
    if caches.is_empty() {
        return "unknown".to_string();
    }
    caches
        .iter()
        .map(|c| {
            let name = if c.level == 1 {
                "L1d".to_string()
            } else {
                format!("L{}", c.level)
            };
            format!("{name} {}", bytes(c.bytes))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where a structure of `size` bytes lives on this CPU, judged by the reported cache sizes.
pub fn placement(size: u64, caches: &[Cache]) -> String {
    match caches.iter().find(|c| size <= c.bytes) {
        Some(c) if c.level == 1 => "fits in the reported L1d".to_string(),
        Some(c) => format!("fits in the reported L{}", c.level),
        None if caches.is_empty() => "cache sizes unknown".to_string(),
        None => "larger than every reported cache".to_string(),
    }
}

fn command_stdout(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// `git rev-parse --short HEAD` of the current directory, or "unknown".
pub fn commit() -> String {
    command_stdout("git", &["rev-parse", "--short", "HEAD"])
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

/// Tracked files that differ from HEAD (so the commit alone does not describe the code), or
/// `None` without git.
pub fn modified_files() -> Option<Vec<String>> {
    let out = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    Some(porcelain_paths(&String::from_utf8_lossy(&out.stdout)))
}

/// Paths of `git status --porcelain` lines, "XY path": two status columns (often a leading
/// space), a space, the path; so the output must not be trimmed first.
fn porcelain_paths(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.get(3..))
        .map(str::to_string)
        .collect()
}

/// The compiler that built this binary (recorded at build time), else `rustc --version`.
pub fn rustc_version() -> String {
    let built = env!("BLOCKBLOOM_MEASURE_RUSTC");
    if !built.is_empty() {
        return built.to_string();
    }
    command_stdout("rustc", &["--version"]).unwrap_or_else(|| "unknown".to_string())
}

/// The cargo profile this binary was built with.
pub fn build_profile() -> &'static str {
    env!("BLOCKBLOOM_MEASURE_PROFILE")
}

/// Whether this is an optimised build (numbers from a debug build mean nothing).
pub fn optimised() -> bool {
    !cfg!(debug_assertions)
}

/// Current UTC time as `(YYYY-MM-DD, HH:MM)`.
pub fn utc_now() -> (String, String) {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let t = secs % 86_400;
    (
        format!("{y:04}-{m:02}-{d:02}"),
        format!("{:02}:{:02}", t / 3600, t % 3600 / 60),
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The command that reproduces this run: `cargo run --release -p PACKAGE --` and the
/// arguments as typed, quoted where a shell would need it. (The binary's own path says
/// nothing; the package, subcommand and options do.)
pub fn command_line(package: &str) -> String {
    let args = std::env::args().skip(1).map(|a| {
        if !a.is_empty()
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@".contains(c))
        {
            a
        } else {
            format!("'{}'", a.replace('\'', r"'\''"))
        }
    });
    ["cargo", "run", "--release", "-p", package, "--"]
        .map(String::from)
        .into_iter()
        .chain(args)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The kernel the dispatcher picks; a bad `BLOCKBLOOM_ISA` is an error naming the variable,
/// so the user sees it before anything is measured.
pub fn active_isa() -> Result<Isa, String> {
    Isa::active().map_err(|e| match std::env::var("BLOCKBLOOM_ISA") {
        Ok(v) => format!("BLOCKBLOOM_ISA={v:?}: {e}"),
        Err(_) => e.to_string(),
    })
}

/// Warns on stderr that a debug build's timings mean nothing.
pub fn warn_if_debug() {
    if !optimised() {
        eprintln!("warning: this is a debug build; run with --release for meaningful timings");
    }
}

/// Facts printed at the top of the demo and of every report.
pub struct Context {
    /// The command that reproduces the run ([`command_line`]).
    pub command: String,
    /// `YYYY-MM-DD`.
    pub date: String,
    /// `HH:MM` UTC.
    pub time: String,
    /// CPU model name.
    pub cpu: String,
    /// Cache sizes of CPU 0.
    pub caches: Vec<Cache>,
    /// Short commit or "unknown".
    pub commit: String,
    /// Tracked files that differ from the commit.
    pub modified: Vec<String>,
    /// Compiler version.
    pub rustc: String,
    /// The dispatcher's pick and where it came from.
    pub dispatch: String,
}

impl Context {
    /// Gathers the facts (runs `git`); `package` names the tool in the command line.
    pub fn gather(active: Isa, package: &str) -> Context {
        let (date, time) = utc_now();
        let dispatch = match std::env::var("BLOCKBLOOM_ISA") {
            Ok(v) if !v.trim().is_empty() => format!("{active} (from BLOCKBLOOM_ISA={v})"),
            _ => format!("{active} (detected)"),
        };
        Context {
            command: command_line(package),
            date,
            time,
            cpu: cpu_model(),
            caches: caches(),
            commit: commit(),
            modified: modified_files().unwrap_or_default(),
            rustc: rustc_version(),
            dispatch,
        }
    }

    /// `(name, value)` pairs for the header.
    pub fn facts(&self) -> Vec<(&'static str, String)> {
        let supported: Vec<String> = Isa::supported().iter().map(|i| i.to_string()).collect();
        let commit = if self.modified.is_empty() {
            self.commit.clone()
        } else {
            format!(
                "{} + uncommitted changes in {}",
                self.commit,
                self.modified.join(", ")
            )
        };
        let mut build = build_profile().to_string();
        if !optimised() {
            build.push_str(" — DEBUG BUILD, timings are meaningless");
        }
        vec![
            ("command", self.command.clone()),
            ("date", format!("{} {} UTC", self.date, self.time)),
            (
                "CPU",
                format!(
                    "{}, {} logical CPUs; caches of CPU 0 as the OS reports them: {}",
                    self.cpu,
                    logical_cpus(),
                    caches_summary(&self.caches)
                ),
            ),
            (
                "kernels",
                format!(
                    "supported: {}; dispatcher picks {}",
                    supported.join(", "),
                    self.dispatch
                ),
            ),
            ("commit", commit),
            ("rustc", self.rustc.clone()),
            ("build", build),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        assert_eq!(civil_from_days(20_413), (2025, 11, 21));
    }

    #[test]
    fn parsing() {
        assert_eq!(parse_size("2048K"), Some(2 << 20));
        assert_eq!(
            caches_summary(&[Cache {
                level: 1,
                bytes: 48 << 10
            }]),
            "L1d 48 KiB"
        );
        let paths = porcelain_paths(" M Cargo.lock\nM  src/a.rs\n");
        assert_eq!(paths, ["Cargo.lock", "src/a.rs"]);
    }
}
