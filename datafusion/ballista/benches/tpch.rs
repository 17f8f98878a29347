//! The distributed runtime filter on TPC-H: a `blockbloom-scheduler` and two
//! `blockbloom-executor` processes on 127.0.0.1, the tables as Parquet files on local disk,
//! every query with the rule and without, interleaved, medians.
//!
//! ```text
//! cargo bench -p blockbloom-ballista --bench tpch -- [SCALE [RUNS [REPORT.md]]]
//! ```
//!
//! SCALE defaults to 1 and RUNS to 3. Per query it prints the median time of each side, the
//! bytes of shuffle files on the executors' disks (their peak during the query, polled: Ballista
//! deletes a stage's files once the stages after it have read them, so this depends on timing
//! and is a rough figure), the rows written to shuffle and the rows the filters dropped (both
//! exact, from one `EXPLAIN ANALYZE` of each side), and checks that both sides give the same
//! rows. With REPORT.md it also writes the table there. `BENCH_SET` holds
//! settings to apply first, `;`-separated (`BENCH_SET="blockbloom.runtime_filter_min_ratio =
//! 1"`); `BENCH_DUMP=N` prints query N's `EXPLAIN ANALYZE` of each side; `BENCH_QUERIES=3,5`
//! runs only those queries.

#[path = "../tests/common/mod.rs"]
mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use blockbloom_ballista::datafusion::arrow::util::pretty::pretty_format_batches;
use blockbloom_ballista::datafusion::error::Result;
use common::{Cluster, QUERIES, register_tpch, rows, scratch, set_rule, write_tpch};

/// Bytes of the files under `dir`.
fn bytes_under(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => bytes_under(&e.path()),
            _ => e.metadata().map(|m| m.len()).unwrap_or(0),
        })
        .sum()
}

/// The most bytes seen under `dir` while it runs, polled every 20 ms.
struct PeakBytes {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl PeakBytes {
    fn start(dir: PathBuf) -> PeakBytes {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(bytes_under(&dir)));
        let thread = std::thread::spawn({
            let (stop, peak) = (Arc::clone(&stop), Arc::clone(&peak));
            move || {
                while !stop.load(Ordering::Relaxed) {
                    peak.fetch_max(bytes_under(&dir), Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        });
        PeakBytes {
            stop,
            peak,
            thread: Some(thread),
        }
    }

    fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.peak.load(Ordering::Relaxed)
    }
}

/// The number after `key=` in `line`, if any (`output_rows=1.23 K` is read as 1230).
fn metric(line: &str, key: &str) -> Option<u64> {
    let start = line.find(&format!("{key}="))? + key.len() + 1;
    let rest = &line[start..];
    let end = rest.find([',', ']']).unwrap_or(rest.len());
    let text = rest[..end].trim();
    let (number, unit) = text.split_once(' ').unwrap_or((text, ""));
    let n: f64 = number.parse().ok()?;
    let scale = match unit {
        "K" => 1e3,
        "M" => 1e6,
        "B" => 1e9,
        _ => 1.0,
    };
    Some((n * scale).round() as u64)
}

/// From `EXPLAIN ANALYZE` text: the rows written to shuffle, and the rows the runtime
/// filters dropped (`RuntimeFilterExec`'s `rows_dropped`).
fn shuffle_and_dropped(text: &str) -> (u64, u64) {
    // The table's second column: `| plan_type | plan |`.
    let lines: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split('|').nth(2))
        .map(str::trim_end)
        .collect();
    let mut shuffled = 0;
    let mut dropped = 0;
    for line in &lines {
        let body = line.trim_start();
        // ShuffleWriterExec and SortShuffleWriterExec.
        if body
            .split(':')
            .next()
            .is_some_and(|op| op.ends_with("ShuffleWriterExec"))
        {
            shuffled += metric(body, "output_rows").unwrap_or(0);
        }
        // The scheduler runs every runtime filter as this node, which counts its drops.
        if body.starts_with("RuntimeFilterExec") {
            dropped += metric(body, "rows_dropped").unwrap_or(0);
        }
    }
    (shuffled, dropped)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One side's figures for one query.
#[derive(Default)]
struct Side {
    seconds: Vec<f64>,
    shuffle_bytes: Vec<u64>,
    shuffle_rows: u64,
    dropped: u64,
    fired: bool,
}

async fn measure(scale: f64, runs: usize, report: Option<PathBuf>) -> Result<()> {
    let data = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("tpch-sf{scale}"));
    let start = Instant::now();
    write_tpch(&data, scale, 4)?;
    eprintln!(
        "TPC-H at scale {scale} in {data:?} ({:.1?})",
        start.elapsed()
    );
    let work = scratch("bench-cluster");
    // One task at a time per executor: two on this machine's two cores.
    let cluster = Cluster::start(2, 1, &work)?;
    let ctx = blockbloom_ballista::remote(&cluster.url()).await?;
    register_tpch(&ctx, &data).await?;
    // Settings to try (`BENCH_SET="blockbloom.runtime_filter_min_ratio = 1; ..."`).
    for set in std::env::var("BENCH_SET").unwrap_or_default().split(';') {
        if !set.trim().is_empty() {
            ctx.sql(&format!("SET {set}")).await?.collect().await?;
            eprintln!("SET {set}");
        }
    }

    let only: Option<Vec<usize>> = std::env::var("BENCH_QUERIES").ok().map(|list| {
        list.split(',')
            .map(|q| q.trim().parse().expect("BENCH_QUERIES holds query numbers"))
            .collect()
    });
    let chosen = |q: usize| only.as_ref().is_none_or(|o| o.contains(&(q + 1)));
    let mut sides: Vec<[Side; 2]> = (0..22).map(|_| Default::default()).collect();
    for (q, sql) in QUERIES.iter().enumerate() {
        if !chosen(q) {
            continue;
        }
        let mut answers: [Option<Vec<String>>; 2] = [None, None];
        for run in 0..runs {
            // Interleaved: off then on, then on then off.
            let order = if run % 2 == 0 {
                [false, true]
            } else {
                [true, false]
            };
            for on in order {
                set_rule(&ctx, on).await?;
                let peak = PeakBytes::start(work.clone());
                let before = bytes_under(&work);
                let t = Instant::now();
                let got = rows(&ctx, sql).await?;
                let seconds = t.elapsed().as_secs_f64();
                let bytes = peak.finish().saturating_sub(before);
                let side = &mut sides[q][usize::from(on)];
                side.seconds.push(seconds);
                side.shuffle_bytes.push(bytes);
                let answer = &mut answers[usize::from(on)];
                match answer {
                    None => *answer = Some(got),
                    Some(a) => assert_eq!(*a, got, "q{} gave two answers", q + 1),
                }
            }
        }
        assert_eq!(
            answers[0],
            answers[1],
            "q{}: the rule changed the answer",
            q + 1
        );
        for on in [false, true] {
            set_rule(&ctx, on).await?;
            let batches = ctx
                .sql(&format!("EXPLAIN ANALYZE {sql}"))
                .await?
                .collect()
                .await?;
            let text = pretty_format_batches(&batches)?.to_string();
            if std::env::var("BENCH_DUMP").is_ok_and(|d| d == (q + 1).to_string()) {
                eprintln!("{text}");
            }
            let (shuffled, dropped) = shuffle_and_dropped(&text);
            let side = &mut sides[q][usize::from(on)];
            side.shuffle_rows = shuffled;
            side.dropped = dropped;
            side.fired = text.contains("might_contain");
        }
        let [off, on] = &mut sides[q];
        eprintln!(
            "q{:<2} off {:.3} s  on {:.3} s  fired {}",
            q + 1,
            median(&mut off.seconds.clone()),
            median(&mut on.seconds.clone()),
            on.fired
        );
    }

    let mut out = String::new();
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    writeln!(
        out,
        "TPC-H scale {scale}, Parquet on local disk (4 files a table), 1 blockbloom-scheduler + 2 \
         blockbloom-executor processes (1 task each) on 127.0.0.1, {runs} interleaved runs a side, \
         medians; CPU: {cpu}, {} logical CPUs.\n",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    )
    .unwrap();
    writeln!(
        out,
        "| query | rule fired | time without (s) | time with (s) | without / with | shuffle bytes without | with | with / without | shuffle rows without | with | rows the filters dropped |"
    )
    .unwrap();
    writeln!(out, "|---|---|---|---|---|---|---|---|---|---|---|").unwrap();
    let (mut fired_off, mut fired_on, mut fired_bytes_off, mut fired_bytes_on) =
        (0.0, 0.0, 0u64, 0u64);
    let mut worst_other = 0.0f64;
    for (q, [off, on]) in sides.iter_mut().enumerate() {
        if !chosen(q) {
            continue;
        }
        let (t_off, t_on) = (median(&mut off.seconds), median(&mut on.seconds));
        let mut b_off: Vec<f64> = off.shuffle_bytes.iter().map(|&b| b as f64).collect();
        let mut b_on: Vec<f64> = on.shuffle_bytes.iter().map(|&b| b as f64).collect();
        let (b_off, b_on) = (median(&mut b_off), median(&mut b_on));
        if on.fired {
            fired_off += t_off;
            fired_on += t_on;
            fired_bytes_off += b_off as u64;
            fired_bytes_on += b_on as u64;
        } else {
            worst_other = worst_other.max(t_on / t_off);
        }
        writeln!(
            out,
            "| q{} | {} | {:.3} | {:.3} | {:.2}x | {:.0} | {:.0} | {:.2} | {} | {} | {} |",
            q + 1,
            if on.fired { "yes" } else { "no" },
            t_off,
            t_on,
            t_off / t_on,
            b_off,
            b_on,
            if b_off > 0.0 { b_on / b_off } else { 1.0 },
            off.shuffle_rows,
            on.shuffle_rows,
            on.dropped
        )
        .unwrap();
    }
    writeln!(
        out,
        "\nQueries where the rule fired, together: {:.3} s without, {:.3} s with ({:.2}x); \
         shuffle bytes {} without, {} with ({:.2} of without). Slowest other query with the \
         rule: {:.2}x its time without.",
        fired_off,
        fired_on,
        if fired_on > 0.0 {
            fired_off / fired_on
        } else {
            1.0
        },
        fired_bytes_off,
        fired_bytes_on,
        if fired_bytes_off > 0 {
            fired_bytes_on as f64 / fired_bytes_off as f64
        } else {
            1.0
        },
        worst_other
    )
    .unwrap();
    print!("{out}");
    if let Some(path) = report {
        std::fs::write(&path, &out)?;
        eprintln!("wrote {path:?}");
    }
    Ok(())
}

fn main() -> Result<()> {
    // `cargo bench` passes `--bench`; the positional arguments are ours.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let scale: f64 = args
        .first()
        .map_or(Ok(1.0), |s| s.parse())
        .expect("SCALE is a number");
    let runs: usize = args
        .get(1)
        .map_or(Ok(3), |s| s.parse())
        .expect("RUNS is a number");
    let report = args.get(2).map(PathBuf::from);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(32 << 20)
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(measure(scale, runs.max(1), report))
}
