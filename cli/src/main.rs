//! `blockbloom`: measures the blockbloom kernels on this CPU.
//!
//! * `demo`: every supported kernel at an L2-, an L3- and a DRAM-sized filter, no arguments;
//! * `bench`: the same table for chosen parameters (optionally with the peer crates);
//! * `report`: kernels and peers at the three sizes plus a targets table, written as markdown
//!   into `perf-reports/`.
//!
//! All three time through `measure::measure`, so their numbers are comparable.

mod fpr_table;
mod keys;
mod measure;
mod report;
mod suite;
mod system;
mod table;

use std::error::Error;
use std::path::PathBuf;
use std::process::ExitCode;

use blockbloom::Isa;
use clap::builder::RangedU64ValueParser;
use clap::{Args, Parser, Subcommand};

use crate::report::{Context, SIZES};
use crate::suite::{Plan, Progress, SizeResult};

#[derive(Parser)]
#[command(
    name = "blockbloom",
    version,
    about = "Measure blockbloom's SIMD kernels (and peer Bloom filters) on this CPU"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Every supported kernel at n = 50,000 / 1,000,000 / 64,000,000, target FPR 1%.
    Demo,
    /// The same table for chosen parameters.
    Bench(BenchArgs),
    /// Write a markdown performance report (kernels, peers, targets) and print its path.
    Report(ReportArgs),
    /// Target vs measured false-positive rate on real filters, and bits per key vs the
    /// best-k bound (a few seconds).
    Sizing,
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
}

#[derive(Args)]
struct ReportArgs {
    /// Directory the report is written into.
    #[arg(long, default_value = "perf-reports")]
    out: PathBuf,
    /// Skip the 64,000,000-key size and use 3 repetitions instead of 5.
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
    if !system::optimised() {
        eprintln!("warning: this is a debug build; run with --release for meaningful timings");
    }
    match cli.command {
        Command::Demo => demo(active),
        Command::Bench(args) => bench(active, args),
        Command::Report(args) => write_report(active, args),
        Command::Sizing => {
            println!(
                "False-positive rate: target vs measured (with_capacity(n, target), u64 keys)\n"
            );
            print!("{}", fpr_table::measured()?.text());
            println!("\nBits per key: layouts vs the 512-bit best-k bound\n");
            print!("{}", fpr_table::bits_per_key()?.text());
            Ok(())
        }
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
    for (n, _) in SIZES {
        let r = suite::run(&standard_plan(n, 5, false), &progress)?;
        print_size(&r, &ctx)?;
    }
    progress.step("done");
    Ok(())
}

fn bench(active: Isa, args: BenchArgs) -> Result<(), Box<dyn Error>> {
    let mut isas = if args.isa.is_empty() {
        Isa::supported()
    } else {
        args.isa
    };
    isas.sort();
    isas.dedup();
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
    print_size(&r, &ctx)
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
    progress.step("sizing tables");
    let mut text = report::markdown(&ctx, &results, args.quick);
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
    println!("{}", path.display());
    wrong_answers(&results)
}
