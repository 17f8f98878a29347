//! The measuring programs that were `examples/` of the library (each a subcommand now, with the
//! arguments it took as an example: `blockbloom-perf string-pairs --once 20 16` is what
//! `cargo run --release --example string_pairs -- --once 20 16` was; the old underscored name is
//! an alias). Each module's documentation says what it measures and how to run it; their peers
//! are `blockbloom_perf::peers`, their keys `blockbloom_measure::keys::Rng`, their rounds and
//! summaries `blockbloom_perf::workload`.

use std::process::ExitCode;

use blockbloom_measure::system::{self, Context};
use clap::{Args, Subcommand};

use crate::{PACKAGE, emit_json};

mod batch_instructions;
mod build_pairs;
mod burst_instructions;
mod burst_pairs;
mod classic_batch;
mod classic_pairs;
mod default_pairs;
mod hash_lanes;
mod huge_pages;
mod ingest_floor;
mod ingest_pairs;
mod key_types;
mod plan_cost;
mod single_key_pairs;
mod string_lanes;
mod string_pairs;
mod u64_pairs;

/// The words after the program's name, passed to it as its own command line (each program
/// parses its arguments as it did as an example; see its module's documentation).
#[derive(Args)]
#[command(disable_help_flag = true)]
pub struct Words {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    words: Vec<String>,
}

/// The measuring programs, one subcommand each.
#[derive(Subcommand)]
pub enum Program {
    /// Instructions of `contains_batch` per key under callgrind: `KIND [LEN [REPEAT]]`
    /// (KIND: strings, hashes, u64, u64-mx32).
    #[command(alias = "batch_instructions")]
    BatchInstructions(Words),
    /// Construction plus fill of a 1,000-key filter against parquet's `Sbbf`, interleaved:
    /// `[ROUNDS [BUILDS]]`.
    #[command(alias = "build_pairs")]
    BuildPairs(Words),
    /// Instructions of one small `contains_batch` call under callgrind: `[KEYS_PER_CALL]`.
    #[command(alias = "burst_instructions")]
    BurstInstructions(Words),
    /// Calls of 8, 32 and 64 `u64` keys against sbbf-rs's per-key loop, interleaved:
    /// `[ROUNDS [N...]]`.
    #[command(alias = "burst_pairs")]
    BurstPairs(Words),
    /// The classic filter's batches on one tier: `[REPS [KEYS]]`.
    #[command(alias = "classic_batch")]
    ClassicBatch(Words),
    /// The classic filter against fastbloom and the memory ceiling, interleaved: `[ROUNDS]`.
    #[command(alias = "classic_pairs")]
    ClassicPairs(Words),
    /// The defaults' candidates on every tier this CPU runs, interleaved: `[ROUNDS [N...]]`.
    #[command(alias = "default_pairs")]
    DefaultPairs(Words),
    /// What hashing `u64` keys costs a batch, per hash (x86-64 with AVX2): `[ROUNDS]`.
    #[command(alias = "hash_lanes")]
    HashLanes(Words),
    /// A DRAM-sized filter with and without transparent huge pages: `[--keys N]`.
    #[command(alias = "huge_pages")]
    HugePages(Words),
    /// Many threads filling one shared filter against fastbloom's atomic filter, the plain
    /// filter and the floors, interleaved: `[ROUNDS [SIZES [THREADS]]]`.
    #[command(alias = "ingest_pairs")]
    IngestPairs(Words),
    /// `contains_batch` ns/key by key type on an in-cache filter.
    #[command(alias = "key_types")]
    KeyTypes(Words),
    /// What sizing costs a constructor: `[REPS [N P [K]]]`.
    #[command(alias = "plan_cost")]
    PlanCost(Words),
    /// Single-key `contains` and `insert` against the peers, interleaved: `[ROUNDS [SIZES]]`.
    #[command(alias = "single_key_pairs")]
    SingleKeyPairs(Words),
    /// XXH3-64 of short byte strings three ways, interleaved: `[ROUNDS]`.
    #[command(alias = "string_lanes")]
    StringLanes(Words),
    /// Batch `contains` of byte strings against every peer's string path, interleaved:
    /// `[--keys N] [--once] [ROUNDS [KINDS...]]`.
    #[command(alias = "string_pairs")]
    StringPairs(Words),
    /// Batch `contains` of `u64` keys against the peers, interleaved: `[ROUNDS [N...]]`.
    #[command(alias = "u64_pairs")]
    U64Pairs(Words),
}

/// What a program's `main` returned, as the process's exit code.
trait Outcome {
    fn code(self) -> ExitCode;
}

impl Outcome for ExitCode {
    fn code(self) -> ExitCode {
        self
    }
}

impl Outcome for Result<(), blockbloom::Error> {
    fn code(self) -> ExitCode {
        match self {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        }
    }
}

impl Program {
    /// Runs the program with its words as its command line; with `json`, its text goes to
    /// stderr and stdout gets one JSON document of the rows it recorded
    /// (`blockbloom_perf::workload::record`): `results.args` (its words) and `results.rows`
    /// (each a side's median ns per key, or a ratio's median and quartiles, with the fields of
    /// what it measured: key kind, key count, threads...).
    pub fn run(self, json: bool) -> ExitCode {
        use Program as P;
        let (name, words, main): (&str, Words, fn() -> ExitCode) = match self {
            P::BatchInstructions(w) => ("batch_instructions", w, || {
                batch_instructions::main().code()
            }),
            P::BuildPairs(w) => ("build_pairs", w, || build_pairs::main().code()),
            P::BurstInstructions(w) => ("burst_instructions", w, || {
                burst_instructions::main().code()
            }),
            P::BurstPairs(w) => ("burst_pairs", w, || burst_pairs::main().code()),
            P::ClassicBatch(w) => ("classic_batch", w, || classic_batch::main().code()),
            P::ClassicPairs(w) => ("classic_pairs", w, || classic_pairs::main().code()),
            P::DefaultPairs(w) => ("default_pairs", w, || default_pairs::main().code()),
            P::HashLanes(w) => ("hash_lanes", w, || {
                hash_lanes::main();
                ExitCode::SUCCESS
            }),
            P::HugePages(w) => ("huge_pages", w, || huge_pages::main().code()),
            P::IngestPairs(w) => ("ingest_pairs", w, || ingest_pairs::main().code()),
            P::KeyTypes(w) => ("key_types", w, || key_types::main().code()),
            P::PlanCost(w) => ("plan_cost", w, || plan_cost::main().code()),
            P::SingleKeyPairs(w) => ("single_key_pairs", w, || single_key_pairs::main().code()),
            P::StringLanes(w) => ("string_lanes", w, || {
                string_lanes::main();
                ExitCode::SUCCESS
            }),
            P::StringPairs(w) => ("string_pairs", w, || string_pairs::main().code()),
            P::U64Pairs(w) => ("u64_pairs", w, || u64_pairs::main().code()),
        };
        blockbloom_perf::workload::set_args(name, &words.words);
        blockbloom_perf::workload::set_json(json);
        let code = main();
        if !json || code != ExitCode::SUCCESS {
            return code;
        }
        let document = system::active_isa()
            .map_err(|e| e.to_string())
            .and_then(|isa| {
                let ctx = Context::gather(isa, PACKAGE);
                let results = serde_json::json!({
                    "args": words.words,
                    "rows": blockbloom_perf::workload::rows(),
                });
                emit_json(&name.replace('_', "-"), &ctx, results).map_err(|e| e.to_string())
            });
        match document {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        }
    }
}
