//! Facts about the machine, the build and the checkout that a measurement depends on, and
//! the [`Context`] header every demo and report starts with.
//!
//! The commit, the modified files and the compiler are recorded when this crate is built
//! (`build.rs`), so a report names the code that was measured wherever the tool runs from.

use blockbloom::Isa;
use jiff::Timestamp;

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

/// The short commit of the checkout this binary was built from (recorded at build time), or
/// "unknown" if it was not built from a git checkout.
///
/// ```
/// let c = blockbloom_measure::system::commit();
/// assert!(c == "unknown" || c.chars().all(|c| c.is_ascii_hexdigit()));
/// ```
pub fn commit() -> &'static str {
    env!("BLOCKBLOOM_MEASURE_COMMIT")
}

/// Tracked files that differed from that commit when this binary was built (so the commit
/// alone does not describe the code).
pub fn modified_files() -> Vec<String> {
    env!("BLOCKBLOOM_MEASURE_MODIFIED")
        .split('\t')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// The compiler that built this binary (recorded at build time), or "unknown".
pub fn rustc_version() -> &'static str {
    env!("BLOCKBLOOM_MEASURE_RUSTC")
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
    date_time(Timestamp::now())
}

/// A UTC instant as `(YYYY-MM-DD, HH:MM)`.
fn date_time(t: Timestamp) -> (String, String) {
    (
        t.strftime("%Y-%m-%d").to_string(),
        t.strftime("%H:%M").to_string(),
    )
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
    /// Gathers the facts; `package` names the tool in the command line.
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
            commit: commit().to_string(),
            modified: modified_files(),
            rustc: rustc_version().to_string(),
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
        let day = |d: i64| date_time(Timestamp::from_second(d * 86_400).unwrap());
        assert_eq!(day(0), ("1970-01-01".into(), "00:00".into()));
        assert_eq!(day(19_782).0, "2024-02-29");
        assert_eq!(day(20_413).0, "2025-11-21");
        let t = Timestamp::from_second(20_413 * 86_400 + 13 * 3600 + 7 * 60 + 59).unwrap();
        assert_eq!(date_time(t).1, "13:07");
    }

    /// The recorded commit is the checkout's HEAD when built from one (tests run right
    /// after their build, so HEAD has not moved).
    #[test]
    fn the_commit_is_the_checkouts() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let head = std::process::Command::new("git")
            .args(["rev-parse", "--short", "HEAD"])
            .current_dir(dir)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        match head {
            Some(head) => assert_eq!(commit(), head),
            None => assert_eq!(commit(), "unknown"),
        }
        assert!(!rustc_version().is_empty());
        assert!(
            modified_files()
                .iter()
                .all(|p| !p.is_empty() && !p.contains('\t'))
        );
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
    }
}
