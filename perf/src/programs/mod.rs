//! The measuring programs that were `examples/` of the library (each a subcommand now, with the
//! arguments it took as an example: `blockbloom-perf string-pairs --once 20 16` is what
//! `cargo run --release --example string_pairs -- --once 20 16` was; the old underscored name is
//! an alias). Each module's documentation says what it measures and how to run it; their peers
//! are `blockbloom_perf::peers`, their keys `blockbloom_measure::keys::Rng`, their rounds and
//! summaries `blockbloom_perf::workload`.

use std::process::ExitCode;

use blockbloom_measure::system::{self, Context};
use clap::{Args, Command, Subcommand};

use crate::{PACKAGE, emit_json};

/// The programs: each a variant of [`Program`] (its doc the subcommand's help, its module's
/// name an alias) whose module's `main` runs it.
macro_rules! programs {
    ($($(#[doc = $doc:literal])* $variant:ident $module:ident,)*) => {
        $(mod $module;)*

        /// The measuring programs, one subcommand each.
        #[derive(Subcommand)]
        pub enum Program {
            $($(#[doc = $doc])* #[command(alias = stringify!($module))] $variant(Words),)*
        }

        impl Program {
            /// Its module's name, its words and its `main`.
            fn parts(self) -> (&'static str, Words, fn() -> ExitCode) {
                match self {
                    $(Program::$variant(w) => (stringify!($module), w, || $module::main().code()),)*
                }
            }
        }
    };
}

programs! {
    /// Instructions of `contains_batch` per key under callgrind: `KIND [LEN [REPEAT]]`
    /// (KIND: strings, hashes, u64, u64-mx32).
    BatchInstructions batch_instructions,
    /// Construction plus fill of a 1,000-key filter against parquet's `Sbbf`, interleaved:
    /// `[ROUNDS [BUILDS]]`.
    BuildPairs build_pairs,
    /// Instructions of one small `contains_batch` call under callgrind: `[KEYS_PER_CALL]`.
    BurstInstructions burst_instructions,
    /// Calls of 8, 32 and 64 `u64` keys against sbbf-rs's per-key loop, interleaved:
    /// `[ROUNDS [N...]]`.
    BurstPairs burst_pairs,
    /// The classic filter's batches on one tier: `[REPS [KEYS]]`.
    ClassicBatch classic_batch,
    /// The classic filter against fastbloom and the memory ceiling, interleaved: `[ROUNDS]`.
    ClassicPairs classic_pairs,
    /// Deduplicating a stream (3/4 repeats) against fastbloom, interleaved: `[ROUNDS [N...]]`.
    DedupPairs dedup_pairs,
    /// The defaults' candidates on every tier this CPU runs, interleaved: `[ROUNDS [N...]]`.
    DefaultPairs default_pairs,
    /// What hashing `u64` keys costs a batch, per hash (x86-64 with AVX2): `[ROUNDS]`.
    HashLanes hash_lanes,
    /// The false-positive rate of candidate hashes of `u64` keys over key families that break
    /// weak hashes: `[SIZES [STRANGERS]]`.
    HashQuality hash_quality,
    /// Many threads filling one shared filter against fastbloom's atomic filter, the plain
    /// filter and the floors, interleaved: `[ROUNDS [SIZES [THREADS [CALLS]]]]` (lists
    /// comma-separated).
    IngestPairs ingest_pairs,
    /// `contains_batch` ns/key by key type on an in-cache filter.
    KeyTypes key_types,
    /// What sizing costs a constructor: `[REPS [N P [K] | constructors]]`.
    PlanCost plan_cost,
    /// The scalar reference's branch-free test against an early exit, interleaved:
    /// `[ROUNDS [N...]]`.
    ScalarExit scalar_exit,
    /// Single-key `contains` and `insert` against the peers, interleaved: `[ROUNDS [SIZES]]`.
    SingleKeyPairs single_key_pairs,
    /// XXH3-64 of short byte strings three ways, interleaved: `[ROUNDS]`.
    StringLanes string_lanes,
    /// Batch `contains` of byte strings against every peer's string path, interleaved:
    /// `[--keys N] [--once] [ROUNDS [KINDS...]]`.
    StringPairs string_pairs,
    /// Batch `contains` of `u64` keys against the peers, interleaved: `[ROUNDS [N...]]`.
    U64Pairs u64_pairs,
}

mod ingest_floor;

/// The words after the program's name, passed to it as its own command line (each program
/// parses its arguments as it did as an example; see its module's documentation).
#[derive(Args)]
#[command(disable_help_flag = true)]
pub struct Words {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    words: Vec<String>,
}

/// What a program's `main` returned, as the process's exit code.
trait Outcome {
    fn code(self) -> ExitCode;
}

impl Outcome for () {
    fn code(self) -> ExitCode {
        ExitCode::SUCCESS
    }
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
        let (name, words, main) = self.parts();
        if matches!(
            words.words.first().map(String::as_str),
            Some("-h" | "--help")
        ) {
            return help(name);
        }
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

/// A program's help (`blockbloom-perf NAME --help`): its line of the subcommands' help, which
/// gives its words, and where its documentation is. The words reach the program as they are
/// (`Words`), so clap does not answer `--help` itself.
fn help(name: &str) -> ExitCode {
    let mut all = Program::augment_subcommands(Command::new(PACKAGE));
    let Some(program) = all.find_subcommand_mut(name.replace('_', "-")) else {
        return ExitCode::FAILURE;
    };
    let usage = program
        .get_about()
        .map(|a| a.to_string())
        .unwrap_or_default();
    println!("blockbloom-perf {}: {usage}", program.get_name());
    println!(
        "The words are positional, read as the program's documentation says: \
         perf/src/programs/{name}.rs."
    );
    ExitCode::SUCCESS
}
