//! The prefetch depth sweep: batch ns/key of contains, insert, atomic insert and counting
//! insert at depths 8 to 128 (and with prefetching off), at L2, L3 and DRAM sizes, on every
//! SIMD tier this CPU has. The filter's default depth rule is read off this table.

use std::error::Error;

use blockbloom::{AtomicBloomFilter, BloomFilter, CountingBloomFilter, Filter, Isa, Storage};
use blockbloom_measure::format;
use blockbloom_measure::keys::{self, Workload};
use blockbloom_measure::progress::Progress;
use blockbloom_measure::table::Table;
use blockbloom_measure::timing::Timing;

use super::{BATCH, Scale, count_in_batches};

/// Depths swept; 0 is "no prefetch" (chunks of 64 keys, no prefetch instructions).
pub const DEPTHS: [usize; 6] = [0, 8, 16, 32, 64, 128];

/// The operations swept.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Op {
    Contains,
    Insert,
    AtomicInsert,
    CountingInsert,
}

impl Op {
    pub const ALL: [Op; 4] = [
        Op::Contains,
        Op::Insert,
        Op::AtomicInsert,
        Op::CountingInsert,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Op::Contains => "contains",
            Op::Insert => "insert",
            Op::AtomicInsert => "atomic insert",
            Op::CountingInsert => "counting insert",
        }
    }
}

/// One size class: its label and the filter bytes aimed at.
pub struct Size {
    pub label: &'static str,
    pub bytes: u64,
}

/// The sizes: in L2 (256 KiB fits every L2 seen here, 512 KiB to 2 MiB), 1 MiB (past a
/// 512 KiB L2, within a 1 or 2 MiB one), 2 MiB (past a 1 MiB L2), 4 and 8 MiB (past every
/// L2, a quarter of the L3 at most), in L3 (16 MiB of a 32 MiB L3) and in DRAM.
pub fn sizes(scale: Scale) -> Vec<Size> {
    let mut v = vec![
        Size {
            label: "L2",
            bytes: 256 << 10,
        },
        Size {
            label: "1 MiB",
            bytes: 1 << 20,
        },
        Size {
            label: "2 MiB",
            bytes: 2 << 20,
        },
        Size {
            label: "4 MiB",
            bytes: 4 << 20,
        },
        Size {
            label: "8 MiB",
            bytes: 8 << 20,
        },
        Size {
            label: "L3",
            bytes: 16 << 20,
        },
    ];
    if !scale.quick {
        v.push(Size {
            label: "DRAM",
            bytes: 256 << 20,
        });
    }
    v
}

/// One row: a tier, size and op, with ns/key per depth (in [`DEPTHS`] order).
pub struct Row {
    pub isa: Isa,
    pub size: usize,
    pub op: Op,
    /// The filter's actual bytes.
    pub bytes: usize,
    /// The depth the filter chose by itself.
    pub default_depth: usize,
    pub ns: Vec<f64>,
}

impl Row {
    /// The fastest depth.
    pub fn best(&self) -> usize {
        let i = (0..self.ns.len())
            .min_by(|&a, &b| self.ns[a].total_cmp(&self.ns[b]))
            .unwrap_or(0);
        DEPTHS[i]
    }

    /// ns/key at `depth` (NaN if not swept).
    pub fn at(&self, depth: usize) -> f64 {
        DEPTHS
            .iter()
            .position(|&d| d == depth)
            .map_or(f64::NAN, |i| self.ns[i])
    }
}

/// Keys per timed sample (a sample is several whole passes when the filter holds fewer).
fn keys_per_sample(scale: Scale) -> usize {
    if scale.quick { 1 << 18 } else { 1 << 22 }
}

/// Runs the sweep.
pub fn run(scale: Scale, progress: &Progress) -> Result<Vec<Row>, Box<dyn Error>> {
    let reps = if scale.quick { 3 } else { 5 };
    let per_sample = keys_per_sample(scale);
    let isas: Vec<Isa> = Isa::supported()
        .into_iter()
        .filter(|i| *i != Isa::Scalar)
        .collect();
    let mut rows = Vec::new();
    for (si, size) in sizes(scale).iter().enumerate() {
        // About 10 bits per key at 1%: the plain filter's keys for this many bytes.
        let n = (size.bytes * 8 / 10) as usize;
        let w = Workload::generate(n, per_sample, keys::key(0xDE97, si as u64))?;
        for &isa in &isas {
            for op in Op::ALL {
                progress.step(format_args!(
                    "depth sweep: {} ({}), {isa}, {}",
                    size.label,
                    format::bytes(size.bytes),
                    op.name()
                ));
                rows.push(sweep_one(isa, si, size, op, &w, reps, per_sample)?);
            }
        }
    }
    Ok(rows)
}

/// Median ns/key of samples of `per_sample` keys inserted into a cleared filter (`clear` is
/// not timed).
fn time_inserts<F>(
    reps: usize,
    keys: &[u64],
    per_sample: usize,
    f: &mut F,
    clear: impl Fn(&mut F),
    insert: impl Fn(&mut F, &[u64]),
) -> f64 {
    // A pass inserts at most a sample's keys into the cleared filter; small filters take
    // several passes per sample.
    let keys = &keys[..keys.len().min(per_sample)];
    let passes = per_sample.div_ceil(keys.len()).max(1);
    let mut t = Timing::default();
    for _ in 0..reps {
        let mut ns = 0.0;
        for _ in 0..passes {
            clear(f);
            let start = std::time::Instant::now();
            for c in keys.chunks(BATCH) {
                insert(f, c);
            }
            ns += start.elapsed().as_nanos() as f64;
        }
        t.samples.push(ns / (passes * keys.len()) as f64);
    }
    t.median()
}

fn sweep_one(
    isa: Isa,
    si: usize,
    size: &Size,
    op: Op,
    w: &Workload,
    reps: usize,
    per_sample: usize,
) -> Result<Row, Box<dyn Error>> {
    let n = w.members.len() as u64;
    let plain = || BloomFilter::builder().capacity(n).fpr(0.01).isa(isa);
    let (bytes, default_depth, ns) = match op {
        Op::Contains => {
            let mut f = plain().build()?;
            f.insert_batch(&w.members);
            let expected = count_in_batches(&f, &w.queries);
            over_depths(&mut f, |f, d| {
                let mut t = Timing::default();
                for _ in 0..reps {
                    if t.record(w.queries.len(), || count_in_batches(f, &w.queries)) != expected {
                        let at = size.label;
                        return Err(format!("depth {d} changed the answers ({isa}, {at})").into());
                    }
                }
                Ok(t.median())
            })?
        }
        Op::Insert => over_depths(&mut plain().build()?, |f, _| {
            let insert = |f: &mut BloomFilter, c: &[u64]| f.insert_batch(c);
            Ok(time_inserts(
                reps,
                &w.members,
                per_sample,
                f,
                BloomFilter::clear,
                insert,
            ))
        })?,
        Op::AtomicInsert => over_depths(&mut plain().build_atomic()?, |a, _| {
            let insert = |a: &mut AtomicBloomFilter, c: &[u64]| a.insert_batch(c);
            Ok(time_inserts(
                reps,
                &w.members,
                per_sample,
                a,
                clear_atomic,
                insert,
            ))
        })?,
        Op::CountingInsert => {
            // 4-bit counters take four times the plain filter's bytes: a quarter of the keys
            // keeps the size class.
            let mut f = CountingBloomFilter::builder()
                .capacity((n / 4).max(1))
                .fpr(0.01)
                .isa(isa)
                .build()?;
            let keys = &w.members[..(w.members.len() / 4).max(1)];
            over_depths(&mut f, |f, _| {
                let insert = |f: &mut CountingBloomFilter, c: &[u64]| f.insert_batch(c);
                let clear = CountingBloomFilter::clear;
                Ok(time_inserts(reps, keys, per_sample, f, clear, insert))
            })?
        }
    };
    Ok(Row {
        isa,
        size: si,
        op,
        bytes,
        default_depth,
        ns,
    })
}

/// `(bytes, default depth, ns/key at each of [`DEPTHS`])` of `f`, timed by `time` after
/// setting each depth.
fn over_depths<S: Storage>(
    f: &mut Filter<S>,
    mut time: impl FnMut(&mut Filter<S>, usize) -> Result<f64, Box<dyn Error>>,
) -> Result<(usize, usize, Vec<f64>), Box<dyn Error>> {
    let (bytes, default_depth) = (f.size_in_bytes(), f.prefetch_depth());
    let mut ns = Vec::with_capacity(DEPTHS.len());
    for d in DEPTHS {
        f.set_prefetch_depth(d)?;
        ns.push(time(f, d)?);
    }
    Ok((bytes, default_depth, ns))
}

/// Clears an atomic filter through its owned form (a move of the same blocks).
fn clear_atomic(a: &mut AtomicBloomFilter) {
    let placeholder = AtomicBloomFilter::with_capacity(1, 0.5).expect("a valid tiny filter");
    let mut f = std::mem::replace(a, placeholder).into_filter();
    f.clear();
    *a = f.into_atomic();
}

/// The sweep as a table: one row per (size, tier, op), ns/key per depth, the best depth and
/// how far the filter's own choice is from it.
pub fn table(rows: &[Row], sizes: &[Size]) -> Table {
    let mut header = vec!["size".to_string(), "tier".to_string(), "op".to_string()];
    header.extend(DEPTHS.iter().map(|&d| {
        if d == 0 {
            "off".to_string()
        } else {
            d.to_string()
        }
    }));
    header.extend(["best".to_string(), "default: depth, vs best".to_string()]);
    let mut t = Table::new(header);
    for r in rows {
        let mut cells = vec![
            format!(
                "{} ({})",
                sizes[r.size].label,
                format::bytes(r.bytes as u64)
            ),
            r.isa.to_string(),
            r.op.name().to_string(),
        ];
        cells.extend(r.ns.iter().map(|v| format!("{v:.2}")));
        cells.push(depth_label(r.best()));
        cells.push(format!(
            "{}, {:+.0}%",
            depth_label(r.default_depth),
            (r.at(r.default_depth) / r.at(r.best()) - 1.0) * 100.0
        ));
        t.row(cells);
    }
    t
}

fn depth_label(d: usize) -> String {
    if d == 0 {
        "off".to_string()
    } else {
        d.to_string()
    }
}
