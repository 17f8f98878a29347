//! `blockbloom`: the user tool.
//!
//! * `build`, `query`, `info`, `merge`: filter files in the persisted format (`files`; every
//!   kind of the format family for `info` and `query`, `kinds`);
//! * `parquet`: whether a Parquet file's stored column filters may contain values (`parquet`);
//! * `demo`: every supported kernel at an L2-, an L3- and a DRAM-sized filter, no arguments,
//!   with a concurrent insert (1 thread against all logical CPUs) at each size.
//!
//! The measurement tools (`bench`, `report`, `sweep`, `sizing`, `family`) are the
//! `blockbloom-perf` binary (`cargo run --release -p blockbloom-perf -- COMMAND`); `demo`
//! measures through the same core (`blockbloom-measure`), so its numbers are comparable.

#[cfg(unix)]
mod cleanup;
#[cfg(not(unix))]
#[path = "cleanup_portable.rs"]
mod cleanup;
mod files;
mod kinds;
mod parquet;
mod progress;

use std::error::Error;
use std::process::ExitCode;

use blockbloom::Isa;
use blockbloom_measure::concurrent::{self, ConcurrentPlan, Method};
use blockbloom_measure::console::{print_concurrent, print_header, print_size};
use blockbloom_measure::progress::Progress;
use blockbloom_measure::suite::{self, SEED, SIZES, SuitePlan};
use blockbloom_measure::system::{self, Context};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "blockbloom",
    version,
    about = "Build, query, inspect and merge blockbloom filter files; demo the SIMD kernels on this CPU"
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
    /// Build a filter file from newline-delimited keys (files, or stdin) and print a summary.
    Build(files::BuildArgs),
    /// Look keys up in a filter file (arguments, or stdin lines as a prefilter); --absent
    /// prints the certain non-members instead.
    Query(files::QueryArgs),
    /// Print a filter file's kind and header fields, and what its bits say (fill, estimated
    /// key count, expected FPR), for every kind the library writes.
    Info(files::InfoArgs),
    /// Write the union of compatible filter files.
    Merge(files::MergeArgs),
    /// Per row group of a Parquet file, whether a column's stored Bloom filter may contain
    /// each value (and which row groups have none).
    Parquet(parquet::ParquetArgs),
}

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
    // A bad BLOCKBLOOM_ISA is an error for every command: filters are built with it.
    let active = system::active_isa()?;
    match cli.command {
        Command::Demo => {
            system::warn_if_debug();
            demo(active)
        }
        Command::Build(args) => {
            cleanup::install();
            files::build(args)
        }
        Command::Query(args) => files::query(args),
        Command::Info(args) => files::info(args),
        Command::Merge(args) => {
            cleanup::install();
            files::merge(args)
        }
        Command::Parquet(args) => parquet::command(args),
    }
}

fn demo(active: Isa) -> Result<(), Box<dyn Error>> {
    let ctx = Context::gather(active, env!("CARGO_PKG_NAME"));
    print_header(&ctx);
    let progress = Progress::new();
    let threads = system::logical_cpus().max(2);
    // How much of a DRAM-sized filter the kernel puts on huge pages (blockbloom::memory).
    let (n, _) = SIZES[SIZES.len() - 1];
    let big = blockbloom::BloomFilter::with_capacity(n as u64, 0.01)?;
    println!(
        "huge pages: a {n}-key filter ({} MiB) has {} MiB on transparent huge pages (system \
         setting: {}); its batches prefetch {} keys ahead on {}\n",
        big.size_in_bytes() >> 20,
        big.huge_page_bytes()
            .map_or("unknown".to_string(), |b| (b >> 20).to_string()),
        blockbloom::memory::transparent_huge_pages().unwrap_or("unknown"),
        big.prefetch_depth(),
        big.isa()
    );
    println!(
        "configuration measured: the defaults (BloomFilter::with_capacity(n, 0.01)): hash {} \
         (hash id {}), layout {}, k = {} ({:.2} bits per key at {n} keys)\n",
        big.key_hash(),
        big.key_hash().id(),
        big.layout(),
        big.probes(),
        big.bits_per_key()
    );
    drop(big);
    for (n, _) in SIZES {
        let r = suite::run(&SuitePlan::standard(n, 5, &[]), &progress)?;
        print_size(&r, &ctx)?;
        let plan = ConcurrentPlan::new(n, 0.01, active, &[threads], &Method::SHORT);
        print_concurrent(&concurrent::run_on_stream(&plan, SEED, &progress)?, &ctx)?;
    }
    progress.step("done");
    Ok(())
}
