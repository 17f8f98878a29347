//! `blockbloom-perf`: measures the blockbloom kernels on this CPU, against peer crates.
//!
//! * `bench`: the `demo` table for chosen parameters (optionally with the peer crates, and
//!   with `--threads N` a concurrent insert with 1 and N threads);
//! * `report`: kernels and peers at the three sizes plus a targets table, a concurrent insert
//!   section (1-8 threads, blockbloom's parallel builds and fastbloom's atomic filter) and
//!   the sizing tables, written as markdown into `perf-reports/`;
//! * `sweep`: batch ns/key from 32 KiB to 1 GiB against the memory ceiling, with SVG plots;
//! * `sizing`: target vs measured false-positive rate, bits per key vs the bound;
//! * `family`: the filter kinds built on the engine, as markdown into `perf-reports/`;
//! * `readers`: decoding cost per MiB by path (`from_bytes`, `read_from`, compressed);
//! * `reliability`: hostile inputs, I/O faults and concurrent writers, with outcomes, as
//!   markdown into `perf-reports/reliability.md`.
//!
//! Reports go where `--out` says; its default is the `perf-reports/` directory of the checkout
//! this binary was built from (not the current directory). `--format json` prints one JSON
//! document of the results on stdout instead of the text tables (`blockbloom_measure::json`):
//! what performance-regression jobs parse. Progress stays on stderr either way.
//!
//! Run it with `cargo run --release -p blockbloom-perf -- COMMAND`. Timing, the per-kernel
//! suite and the concurrent runs are `blockbloom-measure`'s, the same code the user tool's
//! `demo` prints, so the numbers are comparable; this crate adds the peers (`peers`), the
//! reports and the plots.

mod ceiling;
mod family;
mod fpr_table;
mod memory;
mod programs;
mod readers;
mod reliability;
mod report;
mod sweep;

use std::error::Error;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use blockbloom::Isa;
use blockbloom_measure::concurrent::{self, ConcurrentPlan, Method};
use blockbloom_measure::console::{
    print_concurrent, print_header, print_size, wrong_answers, wrong_builds,
};
use blockbloom_measure::progress::Progress;
use blockbloom_measure::suite::{self, SEED, SIZES, SuitePlan};
use blockbloom_measure::system::{self, Context};
use blockbloom_perf::peers;
use clap::builder::RangedU64ValueParser;
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Value, json};

use crate::report::CONCURRENT_SIZES;

/// The package name, for the command line written into reports.
const PACKAGE: &str = env!("CARGO_PKG_NAME");

#[derive(Parser)]
#[command(
    name = "blockbloom-perf",
    version,
    about = "Measure blockbloom's SIMD kernels (and peer Bloom filters) on this CPU; write reports into perf-reports/"
)]
struct Cli {
    /// How results are printed on stdout: text tables, or one JSON document (numbers in base
    /// units: ns per key, bytes, rates as fractions) for performance-regression jobs. Reports
    /// are written to --out either way; progress goes to stderr.
    #[arg(long, global = true, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

/// The default of `--out`: `perf-reports/` of the checkout this binary was built from, so a
/// report lands in the repository whatever the current directory is.
fn default_out() -> PathBuf {
    let perf = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    perf.parent().unwrap_or(perf).join("perf-reports")
}

/// Prints one JSON document of a command's results on stdout.
pub fn emit_json(command: &str, ctx: &Context, results: Value) -> Result<(), Box<dyn Error>> {
    let doc = blockbloom_measure::json::document(PACKAGE, command, ctx, results);
    let mut out = std::io::stdout().lock();
    let r = serde_json::to_writer_pretty(&mut out, &doc)
        .map_err(std::io::Error::from)
        .and_then(|()| writeln!(out))
        .and_then(|()| out.flush());
    match r {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.map_err(|e| format!("<stdout>: {e}").into()),
    }
}

#[derive(Subcommand)]
enum Command {
    /// The demo's table for chosen parameters.
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
    /// Decoding cost per MiB: from_bytes, read_from and the compressed transfer form at
    /// 32, 128 and 512 MiB (about a minute; needs about 2.5 GiB of memory at 512 MiB).
    Readers(ReadersArgs),
    /// Mutated inputs, crafted headers, injected I/O faults and concurrent writers against
    /// every decoder and tier, with the outcome of each; writes
    /// `perf-reports/reliability.md` (a few seconds).
    Reliability(ReliabilityArgs),
    /// Where memory dominates: the prefetch depth sweep (L2, L3, DRAM; every SIMD tier),
    /// ingest at DRAM size at 1 and 2 threads, and 64M- and 220M-key filters on huge and
    /// 4 KiB pages against sbbf-rs, fastbloom and the memory ceilings; writes
    /// `perf-reports/<date>-<commit>-memory.md` (about 5 minutes; needs about 6 GiB).
    Memory(MemoryArgs),
    /// The measuring programs that were examples of the library (each with its own arguments).
    #[command(flatten)]
    Program(programs::Program),
}

#[derive(Args)]
struct MemoryArgs {
    /// Directory the report is written into (created if missing). Default: perf-reports/ of
    /// the checkout this binary was built from, whatever the current directory.
    #[arg(long, default_value_os_t = default_out())]
    out: PathBuf,
    /// Small sizes and few repetitions (a smoke run; not figures to quote).
    #[arg(long)]
    quick: bool,
    /// Run only these parts (repeatable or comma-separated; default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    part: Vec<memory::Part>,
}

#[derive(Args)]
struct ReliabilityArgs {
    /// Fewer trials (for a smoke run).
    #[arg(long)]
    quick: bool,
    /// Also run every cargo-fuzz target for this many seconds (needs the nightly toolchain
    /// and cargo-fuzz; 0 skips it).
    #[arg(long, default_value_t = 0)]
    fuzz_seconds: u64,
    /// Directory to write reliability.md into (created if missing). Default: perf-reports/ of
    /// the checkout this binary was built from, whatever the current directory.
    #[arg(long, default_value_os_t = default_out())]
    out: PathBuf,
}

#[derive(Args)]
struct ReadersArgs {
    /// Filter sizes in MiB.
    #[arg(long, value_delimiter = ',', default_values_t = [32u64, 128, 512])]
    sizes: Vec<u64>,
    /// Timed decodes per path and size (the median is reported).
    #[arg(long, default_value_t = 3, value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    reps: usize,
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
    #[arg(long, default_value_t = SEED)]
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
    /// Directory the report is written into (created if missing). Default: perf-reports/ of
    /// the checkout this binary was built from, whatever the current directory.
    #[arg(long, default_value_os_t = default_out())]
    out: PathBuf,
    /// Skip the 64,000,000-key size (and the 100,000,000-key concurrent size) and use 3
    /// repetitions instead of 5.
    #[arg(long)]
    quick: bool,
}

#[derive(Args)]
struct FamilyArgs {
    /// Directory the report is written into (created if missing). Default: perf-reports/ of
    /// the checkout this binary was built from, whatever the current directory.
    #[arg(long, default_value_os_t = default_out())]
    out: PathBuf,
    /// Smaller sizes and fewer repetitions (seconds; for CI and smoke runs).
    #[arg(long)]
    quick: bool,
}

#[derive(Args)]
struct SweepArgs {
    /// Directory the report and plots are written into (created if missing). Default:
    /// perf-reports/ of the checkout this binary was built from, whatever the current
    /// directory.
    #[arg(long, default_value_os_t = default_out())]
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Program(program) = cli.command {
        return program.run(cli.format == Format::Json);
    }
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
    let active = system::active_isa()?;
    system::warn_if_debug();
    let json = cli.format == Format::Json;
    match cli.command {
        Command::Bench(args) => bench(active, args, json),
        Command::Report(args) => write_report(active, args, json),
        Command::Sweep(args) => sweep::command(
            &Context::gather(active, PACKAGE),
            args.quick,
            &args.out,
            json,
        ),
        Command::Sizing => {
            let (measured, bits) = fpr_table::tables()?;
            if json {
                let results = json!({"measured": measured.json(), "bits_per_key": bits.json()});
                return emit_json("sizing", &Context::gather(active, PACKAGE), results);
            }
            println!(
                "False-positive rate: target vs measured (with_capacity(n, target), u64 keys)\n"
            );
            print!("{}", measured.text());
            println!("\nBits per key: layouts vs the 512-bit best-k bound\n");
            print!("{}", bits.text());
            Ok(())
        }
        Command::Readers(args) => {
            let t = readers::command(&args.sizes, args.reps)?;
            if json {
                let results = json!({"reps": args.reps, "decoding": t.json()});
                return emit_json("readers", &Context::gather(active, PACKAGE), results);
            }
            println!(
                "Decoding a plain filter, by path (median of {} runs)\n",
                args.reps
            );
            print!("{}", t.text());
            Ok(())
        }
        Command::Reliability(args) => {
            let ctx = Context::gather(active, PACKAGE);
            let (path, tables) =
                reliability::command(&ctx, args.quick, args.fuzz_seconds, &args.out)?;
            if json {
                let results = json!({"report": path, "quick": args.quick, "tables": tables});
                return emit_json("reliability", &ctx, results);
            }
            println!("{}", path.display());
            Ok(())
        }
        Command::Memory(args) => {
            let ctx = Context::gather(active, PACKAGE);
            let written = memory::command(
                &ctx,
                memory::Scale { quick: args.quick },
                &args.part,
                &args.out,
            )?;
            let results = json!({"tables": written.tables});
            report_written("memory", &ctx, &written.path, args.quick, results, json)
        }
        Command::Family(args) => {
            let ctx = Context::gather(active, PACKAGE);
            let scale = family::Scale { quick: args.quick };
            let written = family::command(&ctx, scale, &args.out)?;
            let results = json!({"sections": written.sections});
            report_written("family", &ctx, &written.path, args.quick, results, json)
        }
        Command::Program(_) => unreachable!("main runs the programs"),
    }
}

/// What a command that wrote a report prints: its path, or with `--format json` the JSON
/// document of `results` plus the path and the scale.
fn report_written(
    command: &str,
    ctx: &Context,
    path: &std::path::Path,
    quick: bool,
    mut results: Value,
    json: bool,
) -> Result<(), Box<dyn Error>> {
    if json {
        results["report"] = json!(path);
        results["quick"] = json!(quick);
        return emit_json(command, ctx, results);
    }
    println!("{}", path.display());
    Ok(())
}

fn bench(active: Isa, args: BenchArgs, json: bool) -> Result<(), Box<dyn Error>> {
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
    let ctx = Context::gather(active, PACKAGE);
    if !json {
        print_header(&ctx);
    }
    if args.batch == 1 && !json {
        println!(
            "batch 1: every kernel row runs the single-key insert/contains (inline scalar code)"
        );
    }
    let plan = SuitePlan {
        n: args.n,
        fpr: args.fpr,
        isas,
        batch: args.batch,
        queries: args.queries,
        seed: args.seed,
        reps: args.reps,
        single_key: true,
        peers: if args.peers {
            peers::SUITE.to_vec()
        } else {
            Vec::new()
        },
    };
    let progress = Progress::new();
    let r = suite::run(&plan, &progress)?;
    if !json {
        print_size(&r, &ctx)?;
    }
    let mut concurrent_results = Vec::new();
    if args.threads > 1 {
        let mut plan = ConcurrentPlan::new(
            args.n,
            args.fpr,
            concurrent_isa,
            &[args.threads],
            &Method::SHORT,
        );
        plan.batch = args.batch;
        plan.reps = args.reps;
        let c = concurrent::run_on_stream(&plan, args.seed, &progress)?;
        if !json {
            print_concurrent(&c, &ctx)?;
        }
        concurrent_results.push(c);
    }
    if json {
        let results = json!({
            "sizes": [blockbloom_measure::json::size_result(&r)],
            "concurrent": concurrent_results
                .iter()
                .map(blockbloom_measure::json::concurrent_result)
                .collect::<Vec<_>>(),
        });
        emit_json("bench", &ctx, results)?;
    }
    // Wrong answers fail the command in both formats (the JSON lists them as "problems").
    wrong_answers(std::slice::from_ref(&r))?;
    wrong_builds(&concurrent_results)
}

fn write_report(active: Isa, args: ReportArgs, json: bool) -> Result<(), Box<dyn Error>> {
    let ctx = Context::gather(active, PACKAGE);
    let progress = Progress::new();
    let reps = if args.quick { 3 } else { 5 };
    let mut results = Vec::new();
    for (n, _) in SIZES {
        if args.quick && n > 1_000_000 {
            continue;
        }
        let plan = SuitePlan::standard(n, reps, &peers::SUITE);
        results.push(suite::run(&plan, &progress)?);
    }
    let mut concurrent_results = Vec::new();
    for (n, _) in CONCURRENT_SIZES {
        if args.quick && n > 1_000_000 {
            continue;
        }
        let mut plan = ConcurrentPlan::new(n, 0.01, active, &[2, 4, 8], &report::methods());
        plan.reps = reps;
        concurrent_results.push(concurrent::run_on_stream(&plan, SEED, &progress)?);
    }
    progress.step("sizing tables");
    let (measured, bits) = fpr_table::tables()?;
    let mut text = report::markdown(&ctx, &results, args.quick);
    text.push('\n');
    text.push_str(&report::concurrent_markdown(
        &ctx,
        &concurrent_results,
        args.quick,
    ));
    text.push('\n');
    text.push_str(&fpr_table::markdown(&measured, &bits));
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
    let targets = report::targets(&results, missing);
    let concurrent_targets = report::concurrent_targets(&concurrent_results, missing);
    if json {
        use blockbloom_measure::json::{concurrent_result, size_result};
        let results = json!({
            "report": path,
            "quick": args.quick,
            "targets": targets.json(),
            "concurrent_targets": concurrent_targets.json(),
            "sizes": results.iter().map(size_result).collect::<Vec<_>>(),
            "concurrent": concurrent_results.iter().map(concurrent_result).collect::<Vec<_>>(),
            "sizing": {"measured": measured.json(), "bits_per_key": bits.json()},
        });
        emit_json("report", &ctx, results)?;
    } else {
        print!("{}", targets.text());
        println!();
        print!("{}", concurrent_targets.text());
        println!("{}", path.display());
    }
    wrong_answers(&results)?;
    wrong_builds(&concurrent_results)
}
