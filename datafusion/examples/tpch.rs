//! TPC-H in DataFusion with and without the blockbloom join runtime filter, side by side in
//! one run: the measurement behind the README's DataFusion table.
//!
//! ```text
//! cargo run --release --example tpch -- [SCALE [RUNS [PARTITIONS [QUERIES]]]]
//! ```
//!
//! SCALE: TPC-H scale factor (default 1), generated in process into memory tables; RUNS:
//! timed runs per query and setting, interleaved (default 3; the median is reported);
//! PARTITIONS: DataFusion's target partitions (default: the CPUs); QUERIES: a comma list
//! such as `3,5,10` (default all 22).
//!
//! The settings: DataFusion as shipped (its dynamic filters on), the same with
//! `BloomJoinFilter::default()`, DataFusion with its dynamic filters off, and that with the
//! filter. Each query's rows are checked equal across the settings. It prints Markdown: the
//! CPU, the command, per query the median wall time of each setting, the ratio to as-shipped,
//! and what the filters did (probe rows tested and dropped, filter bytes).

#[path = "../tests/tpch/mod.rs"]
mod tpch;

use std::sync::Arc;
use std::time::Instant;

use blockbloom_datafusion::datafusion::arrow::util::pretty::pretty_format_batches;
use blockbloom_datafusion::datafusion::error::Result;
use blockbloom_datafusion::datafusion::physical_plan::collect;
use blockbloom_datafusion::datafusion::prelude::{SessionConfig, SessionContext};
use blockbloom_datafusion::{BloomJoinFilter, JoinFilterMetrics};

struct Setting {
    name: &'static str,
    ctx: SessionContext,
}

fn settings(partitions: usize) -> Vec<Setting> {
    let config = |dynamic: bool| {
        let mut c = SessionConfig::new().with_target_partitions(partitions);
        c.options_mut().optimizer.enable_dynamic_filter_pushdown = dynamic;
        c
    };
    let plain = |dynamic| {
        let ctx = SessionContext::new_with_config(config(dynamic));
        blockbloom_datafusion::register(&ctx);
        ctx
    };
    let bloom = |dynamic| {
        blockbloom_datafusion::session_context_with(config(dynamic), BloomJoinFilter::default())
    };
    vec![
        Setting {
            name: "as shipped",
            ctx: plain(true),
        },
        Setting {
            name: "+ BloomJoinFilter",
            ctx: bloom(true),
        },
        Setting {
            name: "dynamic filters off",
            ctx: plain(false),
        },
        Setting {
            name: "dynamic off + BloomJoinFilter",
            ctx: bloom(false),
        },
    ]
}

/// One run: wall seconds (planning included), the rows as sorted text, the filters' work.
async fn run(ctx: &SessionContext, sql: &str) -> Result<(f64, Vec<String>, JoinFilterMetrics)> {
    let start = Instant::now();
    let plan = ctx.sql(sql).await?.create_physical_plan().await?;
    let batches = collect(Arc::clone(&plan), ctx.task_ctx()).await?;
    let secs = start.elapsed().as_secs_f64();
    let mut rows: Vec<String> = pretty_format_batches(&batches)?
        .to_string()
        .lines()
        .map(str::to_string)
        .collect();
    rows.sort();
    Ok((secs, rows, JoinFilterMetrics::of(&plan)?))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn cpu() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split(':').nth(1))
            .map(|v| v.trim().to_string())
            .unwrap_or_default()
    };
    let flags = field("flags");
    let has = |f: &str| flags.split(' ').any(|x| x == f);
    format!(
        "{} (family {} model {}), {}, {} logical CPUs",
        field("model name"),
        field("cpu family"),
        field("model\t"),
        if has("avx512f") {
            "AVX-512"
        } else if has("avx2") {
            "AVX2, no AVX-512"
        } else {
            "no AVX2"
        },
        std::thread::available_parallelism().map_or(1, |n| n.get())
    )
}

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    let scale: f64 = arg(0).map_or(1.0, |s| s.parse().expect("SCALE: a number"));
    let runs: usize = arg(1).map_or(3, |s| s.parse().expect("RUNS: an integer"));
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let partitions: usize = arg(2).map_or(cpus, |s| s.parse().expect("PARTITIONS: an integer"));
    let queries: Vec<usize> = match arg(3) {
        Some(list) => list
            .split(',')
            .map(|q| q.parse().expect("QUERIES: like 3,5,10"))
            .collect(),
        None => (1..=22).collect(),
    };
    assert!(runs > 0 && queries.iter().all(|q| (1..=22).contains(q)));

    let settings = settings(partitions);
    let start = Instant::now();
    let tables = tpch::tables(scale, partitions)?;
    for s in &settings {
        tpch::register(&s.ctx, &tables)?;
    }
    println!("# TPC-H in DataFusion with the blockbloom join runtime filter\n");
    println!("- CPU: {}", cpu());
    println!(
        "- command: `cargo run --release --example tpch -- {scale} {runs} {partitions} {}` (in `datafusion/`)",
        queries
            .iter()
            .map(|q| q.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    println!(
        "- TPC-H scale factor {scale} generated in process into memory tables ({:.1} s), shared by the {} settings; {partitions} target partitions; {runs} runs per query and setting, interleaved (each round starting with the next setting), after one untimed run each; the median wall time (planning included).",
        start.elapsed().as_secs_f64(),
        settings.len()
    );
    println!("- Filter columns: from the `+ BloomJoinFilter` run (dynamic filters on).\n");
    print!("| query |");
    for s in &settings {
        print!(" {} ms |", s.name);
    }
    println!(" bloom / shipped | filters | probe rows tested | dropped | filter bytes |");
    print!("| ---: |");
    for _ in &settings {
        print!(" ---: |");
    }
    println!(" ---: | ---: | ---: | ---: | ---: |");
    let mut totals = vec![0.0; settings.len()];
    for &q in &queries {
        let sql = tpch::QUERIES[q - 1];
        let mut times = vec![vec![]; settings.len()];
        let mut expected: Option<Vec<String>> = None;
        let mut filtered = JoinFilterMetrics::default();
        // One untimed run per setting (warm caches), then the timed ones, interleaved.
        for round in 0..=runs {
            // Each round starts with the next setting, so none always runs after another.
            for k in 0..settings.len() {
                let i = (round + k) % settings.len();
                let s = &settings[i];
                let (secs, rows, m) = run(&s.ctx, sql).await?;
                match &expected {
                    None => expected = Some(rows),
                    Some(e) => assert_eq!(&rows, e, "q{q}: {} answers differently", s.name),
                }
                if round > 0 {
                    times[i].push(secs);
                }
                if i == 1 {
                    filtered = m;
                }
            }
        }
        // BLOCKBLOOM_TPCH_EXPLAIN=1: each setting's EXPLAIN ANALYZE on stderr.
        if std::env::var_os("BLOCKBLOOM_TPCH_EXPLAIN").is_some() {
            for s in &settings {
                let batches = s
                    .ctx
                    .sql(&format!("EXPLAIN ANALYZE {sql}"))
                    .await?
                    .collect()
                    .await?;
                eprintln!("## q{q}, {}\n{}", s.name, pretty_format_batches(&batches)?);
            }
        }
        let med: Vec<f64> = times.into_iter().map(median).collect();
        print!("| q{q} |");
        for (i, m) in med.iter().enumerate() {
            totals[i] += m;
            print!(" {:.1} |", m * 1e3);
        }
        println!(
            " {:.2}x | {} | {} | {} | {} |",
            med[1] / med[0],
            filtered.filters,
            filtered.probe_rows,
            filtered.dropped_rows,
            filtered.filter_bytes
        );
    }
    print!("| total |");
    for t in &totals {
        print!(" {:.1} |", t * 1e3);
    }
    println!(" {:.2}x | | | | |", totals[1] / totals[0]);
    Ok(())
}
