//! `blockbloom`: measures the blockbloom kernels on this CPU.
//!
//! * `demo`: every supported kernel at an L2-, an L3- and a DRAM-sized filter, no arguments,
//!   with a concurrent insert (1 thread against all logical CPUs) at each size;
//! * `bench`: the same table for chosen parameters (optionally with the peer crates, and with
//!   `--threads N` a concurrent insert with 1 and N threads);
//! * `report`: kernels and peers at the three sizes plus a targets table, and a concurrent
//!   insert section (1-8 threads, blockbloom's parallel builds and fastbloom's atomic filter),
//!   written as markdown into `perf-reports/`.
//!
//! * `build`, `query`, `info`, `merge`: filter files in the persisted format (`files`).
//!
//! The measuring commands time through `measure::measure` (single-thread) and `concurrent::run` (which
//! follows the same schedule), so their numbers are comparable.

mod concurrent;
mod family;
mod files;
mod fpr_table;
mod keys;
mod measure;
mod report;
mod suite;
mod sweep;
mod system;
mod table;

use std::error::Error;
use std::path::PathBuf;
use std::process::ExitCode;

use blockbloom::Isa;
use clap::builder::RangedU64ValueParser;
use clap::{Args, Parser, Subcommand};

use crate::concurrent::{ConcurrentResult, Method};
use crate::report::{CONCURRENT_SIZES, Context, SIZES};
use crate::suite::{Plan, Progress, SizeResult};

#[derive(Parser)]
#[command(
    name = "blockbloom",
    version,
    about = "Build, query and merge blockbloom filter files; measure blockbloom's SIMD kernels (and peer Bloom filters) on this CPU"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Every supported kernel at n = 50,000 / 1,000,000 / 64,000,000, target FPR 1%, and a
    /// concurrent insert at each size.
    Demo,
    /// The same table for chosen parameters.
    Bench(BenchArgs),
    /// Write a markdown performance report (kernels, peers, concurrent insert, targets) and
    /// print its path.
    Report(ReportArgs),
    /// Batch contains/insert ns/key of every kernel tier and the peers from 32 KiB to 1 GiB
    /// against the memory ceiling (one random 64-byte line per key); writes markdown and SVG
    /// plots into `perf-reports/` (a few minutes).
    Sweep(SweepArgs),
    /// Target vs measured false-positive rate on real filters, and bits per key vs the
    /// best-k bound (a few seconds).
    Sizing,
    /// Measure the filter kinds built on the engine (counting, deletable, scalable,
    /// compressed transfer, Bloomier) and write a markdown report into `perf-reports/`.
    Family(FamilyArgs),
    /// Build a filter file from newline-delimited keys (files, or stdin) and print a summary.
    Build(files::BuildArgs),
    /// Look keys up in a filter file (arguments, or stdin lines as a prefilter).
    Query(files::QueryArgs),
    /// Print a filter file's header fields, fill, estimated key count and expected FPR.
    Info(files::InfoArgs),
    /// Write the union of compatible filter files.
    Merge(files::MergeArgs),
}

#[derive(Args)]
struct BenchArgs {
    /// Keys to insert (the filter's capacity).
    #[arg(long, default_value_t = 1_000_000, value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    n: usize,
    /// Target false-positive rate.
    #[arg(long, default_value_t = 0.01, allow_negative_numbers = true)]
    fpr: f64,
    /// Kernels, comma-separated (scalar, portable, avx2, avx512); default: all this CPU supports.
    #[arg(long, value_delimiter = ',', value_parser = parse_isa)]
    isa: Vec<Isa>,
    /// Keys per insert_batch/count_batch call; 1 uses the single-key insert/contains.
    #[arg(long, default_value_t = 1024, value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    batch: usize,
    /// Lookups per timed pass (about half members, half non-members).
    #[arg(long, default_value_t = 4_000_000, value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    queries: usize,
    /// Seed of the key stream.
    #[arg(long, default_value_t = 0x5EED)]
    seed: u64,
    /// Timed repetitions; medians are reported.
    #[arg(long, default_value_t = 5, value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    reps: usize,
    /// Also measure fastbloom (SipHash, foldhash) and sbbf-rs-safe at the same n and FPR.
    #[arg(long)]
    peers: bool,
    /// Above 1, also time concurrent insert with 1 and this many threads: a shared
    /// AtomicBloomFilter and par_insert_batch (highest kernel of --isa, else the dispatcher's).
    #[arg(long, default_value_t = 1, value_parser = RangedU64ValueParser::<usize>::new().range(1..=1024))]
    threads: usize,
}

#[derive(Args)]
struct ReportArgs {
    /// Directory the report is written into.
    #[arg(long, default_value = "perf-reports")]
    out: PathBuf,
    /// Skip the 64,000,000-key size (and the 100,000,000-key concurrent size) and use 3
    /// repetitions instead of 5.
    #[arg(long)]
    quick: bool,
}

#[derive(Args)]
struct FamilyArgs {
    /// Directory the report is written into.
    #[arg(long, default_value = "perf-reports")]
    out: PathBuf,
    /// Smaller sizes and fewer repetitions (seconds; for CI and smoke runs).
    #[arg(long)]
    quick: bool,
}

#[derive(Args)]
struct SweepArgs {
    /// Directory the report and plots are written into.
    #[arg(long, default_value = "perf-reports")]
    out: PathBuf,
    /// Stop at 32 MiB.
    #[arg(long)]
    quick: bool,
}

/// Parses a kernel name and insists the CPU has it, with the library's error messages.
fn parse_isa(s: &str) -> Result<Isa, String> {
    s.parse::<Isa>()
        .and_then(Isa::require)
        .map_err(|e| e.to_string())
}

/// Lookups per timed pass in `demo` and `report`: about 2 million non-members, enough for
/// the FPR to about ±1.4% of itself (95%).
const QUERIES: usize = 4_000_000;
const SEED: u64 = 0x5EED;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<(), Box<dyn Error>> {
    // The dispatcher's choice is part of every report, and a bad BLOCKBLOOM_ISA is an error
    // the user should see before anything is measured.
    let active = Isa::active().map_err(|e| match std::env::var("BLOCKBLOOM_ISA") {
        Ok(v) => format!("BLOCKBLOOM_ISA={v:?}: {e}"),
        Err(_) => e.to_string(),
    })?;
    if !system::optimised()
        && matches!(
            cli.command,
            Command::Demo
                | Command::Bench(_)
                | Command::Report(_)
                | Command::Sweep(_)
                | Command::Sizing
                | Command::Family(_)
        )
    {
        eprintln!("warning: this is a debug build; run with --release for meaningful timings");
    }
    match cli.command {
        Command::Demo => demo(active),
        Command::Bench(args) => bench(active, args),
        Command::Report(args) => write_report(active, args),
        Command::Sweep(args) => sweep::command(active, args.quick, &args.out),
        Command::Sizing => {
            println!(
                "False-positive rate: target vs measured (with_capacity(n, target), u64 keys)\n"
            );
            print!("{}", fpr_table::measured()?.text());
            println!("\nBits per key: layouts vs the 512-bit best-k bound\n");
            print!("{}", fpr_table::bits_per_key()?.text());
            Ok(())
        }
        Command::Family(args) => {
            let ctx = Context::gather(active);
            let scale = family::Scale { quick: args.quick };
            let path = family::command(&ctx, scale, &args.out)?;
            println!("{}", path.display());
            Ok(())
        }
        Command::Build(args) => files::build(args),
        Command::Query(args) => files::query(args),
        Command::Info(args) => files::info(args),
        Command::Merge(args) => files::merge(args),
    }
}

fn print_header(ctx: &Context) {
    for (k, v) in ctx.facts() {
        if k != "command" && k != "commit" {
            println!("{k:<8} {v}");
        }
    }
}

/// Prints one size; an error if any filter gave a wrong answer (after printing the table).
fn print_size(r: &SizeResult, ctx: &Context) -> Result<(), Box<dyn Error>> {
    println!();
    print!("{}", r.describe(&ctx.caches));
    print!("{}", r.table().text());
    wrong_answers(std::slice::from_ref(r))
}

/// A false negative or a count that disagrees with the per-key answers is a bug, not noise.
fn wrong_answers(results: &[SizeResult]) -> Result<(), Box<dyn Error>> {
    let problems: Vec<String> = results.iter().flat_map(|r| r.problems()).collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("wrong answers: {}", problems.join("; ")).into())
    }
}

/// Prints a concurrent-insert result; an error if a build was wrong (after printing it).
fn print_concurrent(r: &ConcurrentResult, ctx: &Context) -> Result<(), Box<dyn Error>> {
    let ts: Vec<String> = r.plan.threads.iter().map(ToString::to_string).collect();
    println!("\nConcurrent insert, {} threads", ts.join(" / "));
    print!("{}", r.describe(&ctx.caches));
    print!("{}", r.table().text());
    concurrent_problems(std::slice::from_ref(r))
}

fn concurrent_problems(results: &[ConcurrentResult]) -> Result<(), Box<dyn Error>> {
    let problems: Vec<String> = results
        .iter()
        .flat_map(|r| r.problems.iter().cloned())
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("wrong concurrent builds: {}", problems.join("; ")).into())
    }
}

/// Concurrent insert of the `n` keys of stream `seed` (generated here, once).
fn run_concurrent(
    plan: &concurrent::Plan,
    seed: u64,
    progress: &Progress,
) -> Result<ConcurrentResult, Box<dyn Error>> {
    progress.step(format_args!(
        "n={}: generating keys for the concurrent insert",
        system::group(plan.n as u64)
    ));
    let keys = keys::members(plan.n, seed)?;
    concurrent::run(plan, &keys, progress)
}

/// The plan `demo` and `report` measure each size with: 1% target, every supported kernel,
/// batches of 1024, the single-key API too.
fn standard_plan(n: usize, reps: usize, peers: bool) -> Plan {
    Plan {
        n,
        fpr: 0.01,
        isas: Isa::supported(),
        batch: 1024,
        queries: QUERIES,
        seed: SEED,
        reps,
        single_key: true,
        peers,
    }
}

fn demo(active: Isa) -> Result<(), Box<dyn Error>> {
    let ctx = Context::gather(active);
    print_header(&ctx);
    let progress = Progress::new();
    let threads = system::logical_cpus().max(2);
    for (n, _) in SIZES {
        let r = suite::run(&standard_plan(n, 5, false), &progress)?;
        print_size(&r, &ctx)?;
        let plan = concurrent::Plan::new(n, 0.01, active, &[threads], &Method::SHORT);
        print_concurrent(&run_concurrent(&plan, SEED, &progress)?, &ctx)?;
    }
    progress.step("done");
    Ok(())
}

fn bench(active: Isa, args: BenchArgs) -> Result<(), Box<dyn Error>> {
    let mut isas = if args.isa.is_empty() {
        Isa::supported()
    } else {
        args.isa.clone()
    };
    isas.sort();
    isas.dedup();
    // The concurrent rows use one kernel: the dispatcher's, or the highest one asked for.
    let concurrent_isa = if args.isa.is_empty() {
        active
    } else {
        *isas.last().expect("clap requires a value")
    };
    // Bad sizes fail before the header is printed, with the library's message.
    blockbloom::sizing::plan(args.n as u64, args.fpr)?;
    let ctx = Context::gather(active);
    print_header(&ctx);
    if args.batch == 1 {
        println!(
            "batch 1: every kernel row runs the single-key insert/contains (inline scalar code)"
        );
    }
    let plan = Plan {
        n: args.n,
        fpr: args.fpr,
        isas,
        batch: args.batch,
        queries: args.queries,
        seed: args.seed,
        reps: args.reps,
        single_key: true,
        peers: args.peers,
    };
    let progress = Progress::new();
    let r = suite::run(&plan, &progress)?;
    print_size(&r, &ctx)?;
    if args.threads > 1 {
        let mut plan = concurrent::Plan::new(
            args.n,
            args.fpr,
            concurrent_isa,
            &[args.threads],
            &Method::SHORT,
        );
        plan.batch = args.batch;
        plan.reps = args.reps;
        print_concurrent(&run_concurrent(&plan, args.seed, &progress)?, &ctx)?;
    }
    Ok(())
}

fn write_report(active: Isa, args: ReportArgs) -> Result<(), Box<dyn Error>> {
    let ctx = Context::gather(active);
    let progress = Progress::new();
    let mut results = Vec::new();
    for (n, _) in SIZES {
        if args.quick && n > 1_000_000 {
            continue;
        }
        let reps = if args.quick { 3 } else { 5 };
        results.push(suite::run(&standard_plan(n, reps, true), &progress)?);
    }
    let mut concurrent_results = Vec::new();
    for (n, _) in CONCURRENT_SIZES {
        if args.quick && n > 1_000_000 {
            continue;
        }
        let mut plan = concurrent::Plan::new(n, 0.01, active, &[2, 4, 8], &Method::ALL);
        plan.reps = if args.quick { 3 } else { 5 };
        concurrent_results.push(run_concurrent(&plan, SEED, &progress)?);
    }
    progress.step("sizing tables");
    let mut text = report::markdown(&ctx, &results, args.quick);
    text.push('\n');
    text.push_str(&report::concurrent_markdown(
        &ctx,
        &concurrent_results,
        args.quick,
    ));
    text.push('\n');
    text.push_str(&fpr_table::markdown()?);
    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    let path = args.out.join(format!("{}-{}.md", ctx.date, ctx.commit));
    if path.exists() {
        eprintln!("note: replacing {}", path.display());
    }
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    progress.step("done");
    let missing = if args.quick {
        "not measured (--quick)"
    } else {
        "not measured"
    };
    print!("{}", report::targets(&results, missing).text());
    println!();
    print!(
        "{}",
        report::concurrent_targets(&concurrent_results, missing).text()
    );
    println!("{}", path.display());
    wrong_answers(&results)?;
    concurrent_problems(&concurrent_results)
}
