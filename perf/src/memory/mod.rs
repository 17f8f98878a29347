//! `memory`: where memory dominates. The prefetch depth sweep (L2, L3 and DRAM sizes, every
//! SIMD tier), ingest at DRAM size on huge and 4 KiB pages at 1 and 2 threads, and 64M- and
//! 220M-key filters against sbbf-rs, fastbloom and the memory ceilings; one markdown report
//! in `perf-reports/`.

mod depth;
mod ingest;
mod large;

use std::error::Error;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use blockbloom_measure::format::group;
use blockbloom_measure::progress::Progress;
use blockbloom_measure::system::Context;
use serde_json::{Value, json};

/// Keys per batch call, as a database's vector of rows.
const BATCH: usize = 4096;

/// `f.insert_batch` over `keys` in calls of [`BATCH`].
fn insert_in_batches(f: &mut blockbloom::BloomFilter, keys: &[u64]) {
    for c in keys.chunks(BATCH) {
        f.insert_batch(c);
    }
}

/// `f.count_batch` over `keys` in calls of [`BATCH`], summed.
fn count_in_batches(f: &blockbloom::BloomFilter, keys: &[u64]) -> usize {
    keys.chunks(BATCH).map(|c| f.count_batch(c)).sum()
}

/// `quick`: small sizes and few repetitions (a smoke run of the code, not figures).
#[derive(Clone, Copy)]
pub struct Scale {
    pub quick: bool,
}

/// The report's parts.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum Part {
    /// The prefetch depth sweep.
    Depth,
    /// Ingest at DRAM size, 1 and 2 threads.
    Ingest,
    /// 64M and 220M keys against the peers and the ceilings.
    Large,
}

/// What `memory` wrote.
pub struct Written {
    pub path: PathBuf,
    pub tables: Value,
}

/// Runs the chosen parts (every part when `parts` is empty) and writes
/// `<out>/<date>-<commit>-memory.md`.
pub fn command(
    ctx: &Context,
    scale: Scale,
    parts: &[Part],
    out: &Path,
) -> Result<Written, Box<dyn Error>> {
    let progress = Progress::new();
    let thp = blockbloom::memory::transparent_huge_pages().unwrap_or("unknown");
    let run = |p: Part| parts.is_empty() || parts.contains(&p);

    let depth_rows = if run(Part::Depth) {
        depth::run(scale, &progress)?
    } else {
        Vec::new()
    };
    let depth_sizes = depth::sizes(scale);
    let depth_table = depth::table(&depth_rows, &depth_sizes);
    let ingest_cells = if run(Part::Ingest) {
        ingest::run(scale, &progress)?
    } else {
        Vec::new()
    };
    let ingest_table = ingest::table(&ingest_cells);
    let large_results = if run(Part::Large) {
        large::run(scale, &progress)?
    } else {
        Vec::new()
    };
    let large_table = large::table(&large_results);
    let copies = large::copies_table(&large_results);
    let targets = large::targets(&large_results);

    let mut text = String::new();
    let _ = writeln!(text, "# blockbloom: speed where memory dominates\n");
    for (k, v) in ctx.facts() {
        let _ = writeln!(text, "- {k}: {v}");
    }
    let _ = writeln!(text, "- transparent huge pages (system setting): {thp}");
    if scale.quick {
        let _ = writeln!(
            text,
            "\nThis is a `--quick` run: small sizes, few repetitions; not figures to quote."
        );
    }
    if !parts.is_empty() {
        let names: Vec<String> = parts
            .iter()
            .map(|p| format!("{p:?}").to_lowercase())
            .collect();
        let _ = writeln!(text, "\nParts run: {} (`--part`).", names.join(", "));
    }
    let _ = writeln!(
        text,
        "\n## Prefetch depth\n\nBatch ns/key (median of 5 samples of 4M keys, u64 keys, 1%, \
         batches of {BATCH}) by prefetch depth: how many keys a batch hashes and prefetches \
         ahead of the ones it probes (`set_prefetch_depth`); \"off\" is no prefetches, in \
         chunks of 64. Inserts start each pass from a cleared filter (the clear is not \
         timed); the counting filter (4-bit counters) has a quarter of the keys, to keep the \
         size. \"default\" is the depth the filter picked for itself, and how much slower \
         than the best depth of the row it was.\n\n{}",
        depth_table.markdown()
    );
    let _ = writeln!(
        text,
        "\n## Ingest at DRAM size\n\nA whole build of {} keys at 1% from empty (allocation and \
         zeroing not timed), ns per key of wall clock, median of 3.\n\n{}",
        group(ingest::keys(scale) as u64),
        ingest_table.markdown()
    );
    let _ = writeln!(
        text,
        "\n## Large filters against the peers and the ceilings\n\nu64 keys at 1%. Insert: the \
         median of {} equal segments of the fill (batches of {BATCH} for blockbloom, the \
         peers' own calls otherwise). Contains: median of 5 passes over 4M lookups, half \
         members (blockbloom batch `count_batch`; sbbf-rs and fastbloom single-key, they have \
         no batch API). Construction: the allocation alone (on huge pages the kernel zeroes \
         each page at its first touch, which the fill makes); construction + fill: plus \
         inserting every key. The \
         ceilings prefetch a random 64-byte line some keys ahead over a 2 MiB-aligned buffer \
         of our filter's size (every page faulted in first) and read one word of it \
         (contains column) or OR into it (insert column); each is the fastest of the \
         distances {:?} (the ones that won, insert / contains, in brackets).\n\n{}\n\n\
         ### Cloned and loaded\n\nOur filter on huge pages made again, each way timed once: \
         `clone`, `from_bytes` of its `to_bytes` (the array reserved up front) and `read_from` \
         of the same bytes (the array grown as they arrive), and how much of each copy is on \
         huge pages.\n\n{}\n\n### Targets\n\n{}",
        large::SEGMENTS,
        crate::ceiling::DISTANCES,
        large_table.markdown(),
        copies.markdown(),
        targets.markdown()
    );
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let path = out.join(format!("{}-{}-memory.md", ctx.date, ctx.commit));
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    progress.step("done");
    Ok(Written {
        path,
        tables: json!({
            "transparent_huge_pages": thp,
            "prefetch_depth": depth_table.json(),
            "ingest": ingest_table.json(),
            "large": large_table.json(),
            "copies": copies.json(),
            "targets": targets.json(),
        }),
    })
}
