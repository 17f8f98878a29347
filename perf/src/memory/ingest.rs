//! Ingest at DRAM size: a whole build from empty by one thread, by `par_insert_batch`
//! (partitioned) and by threads sharing an `AtomicBloomFilter`, at 1 and 2 threads, on huge
//! pages and on 4 KiB pages.

use std::error::Error;

use blockbloom::{BloomFilter, ParallelBuild};
use blockbloom_measure::concurrent::insert_shared;
use blockbloom_measure::format::group;
use blockbloom_measure::keys;
use blockbloom_measure::progress::Progress;
use blockbloom_measure::table::Table;
use blockbloom_measure::timing::Timing;

use super::{BATCH, Scale, insert_in_batches};

/// How the keys go in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Method {
    /// `insert_batch` on one thread.
    Batch,
    /// `par_insert_batch_with(Partitioned)` on a pool of T threads.
    Partitioned,
    /// T scoped threads, each `insert_batch`ing its share into one `AtomicBloomFilter`.
    SharedAtomic,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Batch => "insert_batch",
            Method::Partitioned => "par_insert_batch (partitioned)",
            Method::SharedAtomic => "AtomicBloomFilter::insert_batch, shared",
        }
    }
}

/// One measured build.
pub struct Cell {
    pub method: Method,
    pub threads: usize,
    pub huge: bool,
    /// Median ns per key of a whole build (wall clock).
    pub ns: f64,
    pub huge_bytes: Option<u64>,
}

pub fn keys(scale: Scale) -> usize {
    if scale.quick { 1 << 22 } else { 64_000_000 }
}

pub fn run(scale: Scale, progress: &Progress) -> Result<Vec<Cell>, Box<dyn Error>> {
    let n = keys(scale);
    let reps = 3;
    let members = keys::members(n, 0x1A6E57)?;
    let mut cells = Vec::new();
    for huge in [true, false] {
        for (method, threads) in [
            (Method::Batch, 1),
            (Method::Partitioned, 1),
            (Method::Partitioned, 2),
            (Method::SharedAtomic, 1),
            (Method::SharedAtomic, 2),
        ] {
            progress.step(format_args!(
                "ingest: {} keys, {}, {threads} thread(s), huge pages {huge}",
                group(n as u64),
                method.name()
            ));
            cells.push(build(&members, method, threads, huge, reps)?);
        }
    }
    Ok(cells)
}

fn build(
    members: &[u64],
    method: Method,
    threads: usize,
    huge: bool,
    reps: usize,
) -> Result<Cell, Box<dyn Error>> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    let builder = || {
        BloomFilter::builder()
            .capacity(members.len() as u64)
            .fpr(0.01)
            .huge_pages(huge)
    };
    let mut t = Timing::default();
    let mut huge_bytes = None;
    for _ in 0..reps {
        // Allocation and zeroing are not timed; the first touch of each page already
        // happened in the zeroing.
        let f = match method {
            Method::Batch => {
                let mut f = builder().build()?;
                t.record(members.len(), || insert_in_batches(&mut f, members));
                f
            }
            Method::Partitioned => {
                let mut f = builder().build()?;
                t.record(members.len(), || {
                    pool.install(|| f.par_insert_batch_with(members, ParallelBuild::Partitioned))
                });
                f
            }
            Method::SharedAtomic => {
                let a = builder().build_atomic()?;
                t.record(members.len(), || insert_shared(&a, members, threads, BATCH));
                a.into_filter()
            }
        };
        if let Some(k) = members.iter().step_by(997).find(|k| !f.contains(*k)) {
            return Err(format!("{}: false negative for {k}", method.name()).into());
        }
        huge_bytes = f.huge_page_bytes();
    }
    Ok(Cell {
        method,
        threads,
        huge,
        ns: t.median(),
        huge_bytes,
    })
}

pub fn table(cells: &[Cell]) -> Table {
    let mut t = Table::new([
        "method",
        "threads",
        "ns/key, huge pages",
        "ns/key, 4 KiB pages",
        "4 KiB / huge",
        "keys/s, huge pages",
        "on huge pages",
    ]);
    for c in cells.iter().filter(|c| c.huge) {
        let Some(small) = cells
            .iter()
            .find(|d| !d.huge && d.method == c.method && d.threads == c.threads)
        else {
            continue;
        };
        t.row(vec![
            c.method.name().to_string(),
            c.threads.to_string(),
            format!("{:.2}", c.ns),
            format!("{:.2}", small.ns),
            format!("{:.2}x", small.ns / c.ns),
            format!("{}M", group((1e3 / c.ns) as u64)),
            c.huge_bytes
                .map_or("-".to_string(), blockbloom_measure::format::bytes),
        ]);
    }
    t
}
