//! DRAM-sized filters side by side (64M and 220M keys at 1%): ours on huge pages and on 4 KiB
//! pages, sbbf-rs and fastbloom, against the two ceilings (one prefetched random line per key
//! on 4 KiB pages and on huge pages), construction alone and plus fill; then how much of our
//! filter cloned and loaded (`from_bytes`, `read_from`) is on huge pages, and how long each
//! took (`blockbloom::memory`: a filter of at least `memory::HUGE_PAGES_FROM_BYTES` asks for
//! huge pages on Linux; `Builder::huge_pages(false)` keeps 4 KiB pages).

use std::error::Error;
use std::hint::black_box;
use std::time::Instant;

use blockbloom::BloomFilter;
use blockbloom_measure::format::{self, group};
use blockbloom_measure::keys::{self, Workload};
use blockbloom_measure::progress::Progress;
use blockbloom_measure::subject::Subject;
use blockbloom_measure::table::Table;
use blockbloom_measure::timing::Timing;

use super::{Scale, count_in_batches, insert_in_batches};
use crate::ceiling::{Ceiling, ceiling};
use blockbloom_perf::peers::{FastBloom, Sbbf};

/// Lookups per timed contains pass.
const QUERIES: usize = 4 << 20;

/// Segments a fill is timed in (the insert figure is their median).
pub const SEGMENTS: usize = 8;

/// What one subject measured at one size.
pub struct Measured {
    pub name: String,
    pub bytes: usize,
    /// Bytes on huge pages after the fill (ours only; `None` for peers or when unknown).
    pub huge: Option<u64>,
    /// Median segment of the fill, ns/key.
    pub insert: f64,
    /// Median batch (or single-key, for peers without batches) contains, ns/key.
    pub contains: f64,
    /// Construction alone, seconds (with huge pages the kernel zeroes each page at its first
    /// touch, which the fill makes).
    pub made_s: f64,
    /// Construction plus fill of all keys, seconds.
    pub build_s: f64,
}

/// Our filter (on huge pages) made again one way: cloned, or loaded from its bytes.
pub struct Copied {
    pub how: &'static str,
    pub bytes: usize,
    pub huge: Option<u64>,
    pub seconds: f64,
}

/// One size's results.
pub struct SizeResult {
    pub keys: usize,
    pub subjects: Vec<Measured>,
    pub copies: Vec<Copied>,
    /// The ceilings on 4 KiB pages and on huge pages.
    pub small: Ceiling,
    pub huge: Ceiling,
}

impl SizeResult {
    pub fn get(&self, name: &str) -> Option<&Measured> {
        self.subjects.iter().find(|m| m.name == name)
    }
}

pub const OURS_HUGE: &str = "blockbloom, huge pages";
pub const OURS_4K: &str = "blockbloom, 4 KiB pages";
pub const SBBF: &str = "sbbf-rs-safe 0.3 (xxh3)";
pub const FASTBLOOM: &str = "fastbloom 0.17 (foldhash)";

/// The sizes in keys.
pub fn sizes(scale: Scale) -> Vec<usize> {
    if scale.quick {
        vec![4 << 20]
    } else {
        vec![64_000_000, 220_000_000]
    }
}

pub fn run(scale: Scale, progress: &Progress) -> Result<Vec<SizeResult>, Box<dyn Error>> {
    let reps = if scale.quick { 3 } else { 5 };
    let mut out = Vec::new();
    for n in sizes(scale) {
        progress.step(format_args!(
            "large: {} keys: generating keys",
            group(n as u64)
        ));
        let w = Workload::generate(n, QUERIES, keys::key(0x1A26E, n as u64))?;
        let (mut subjects, mut copies) = (Vec::new(), Vec::new());
        for huge in [true, false] {
            progress.step(format_args!(
                "large: {} keys: blockbloom, huge pages {huge}",
                group(n as u64)
            ));
            let (measured, f) = ours(&w, huge, reps)?;
            subjects.push(measured);
            if huge {
                copies = copied(&f)?;
            }
        }
        progress.step(format_args!("large: {} keys: sbbf-rs", group(n as u64)));
        subjects.push(peer(SBBF, &w, reps, || Sbbf::new(n, 0.01))?);
        progress.step(format_args!("large: {} keys: fastbloom", group(n as u64)));
        subjects.push(peer(FASTBLOOM, &w, reps, || FastBloom::foldhash(n, 0.01))?);
        // The ceilings over a buffer of our filter's size.
        let bytes = subjects[0].bytes.next_multiple_of(2 << 20);
        progress.step(format_args!("large: {} keys: ceilings", group(n as u64)));
        out.push(SizeResult {
            keys: n,
            subjects,
            copies,
            small: ceiling(bytes, false, reps)?,
            huge: ceiling(bytes, true, reps)?,
        });
    }
    Ok(out)
}

/// Times `fill` over the members in [`SEGMENTS`] equal segments; (median ns/key, total s).
fn fill_segments(members: &[u64], mut fill: impl FnMut(&[u64])) -> (f64, f64) {
    let seg = members.len().div_ceil(SEGMENTS);
    let mut t = Timing::default();
    let start = Instant::now();
    for part in members.chunks(seg) {
        t.record(part.len(), || fill(part));
    }
    (t.median(), start.elapsed().as_secs_f64())
}

/// Our filter measured; and the filter, to copy.
fn ours(w: &Workload, huge: bool, reps: usize) -> Result<(Measured, BloomFilter), Box<dyn Error>> {
    let n = w.members.len();
    let start = Instant::now();
    let mut f = BloomFilter::builder()
        .capacity(n as u64)
        .fpr(0.01)
        .huge_pages(huge)
        .build()?;
    let made = start.elapsed().as_secs_f64();
    let (insert, fill_s) = fill_segments(&w.members, |part| insert_in_batches(&mut f, part));
    let t = Timing::repeat(reps, w.queries.len(), || count_in_batches(&f, &w.queries));
    no_false_negatives(&w.members, |k| f.contains(k))?;
    let measured = Measured {
        name: if huge { OURS_HUGE } else { OURS_4K }.to_string(),
        bytes: f.size_in_bytes(),
        huge: f.huge_page_bytes(),
        insert,
        contains: t.median(),
        made_s: made,
        build_s: made + fill_s,
    };
    Ok((measured, f))
}

/// `f` cloned, and loaded from its bytes whole (`from_bytes` reserves the array up front) and
/// streamed (`read_from` grows it as the bytes arrive), each timed once.
fn copied(f: &BloomFilter) -> Result<Vec<Copied>, Box<dyn Error>> {
    let bytes = f.to_bytes();
    let one = |how, make: &dyn Fn() -> Result<BloomFilter, blockbloom::Error>| {
        let start = Instant::now();
        let g = make()?;
        let seconds = start.elapsed().as_secs_f64();
        if g.blocks() != f.blocks() {
            return Err(format!("{how}: not the filter copied").into());
        }
        let (bytes, huge) = (g.size_in_bytes(), g.huge_page_bytes());
        Ok::<_, Box<dyn Error>>(Copied {
            how,
            bytes,
            huge,
            seconds,
        })
    };
    Ok(vec![
        one("clone", &|| Ok(f.clone()))?,
        one("from_bytes", &|| BloomFilter::from_bytes(&bytes))?,
        one("read_from", &|| BloomFilter::read_from(&bytes[..]))?,
    ])
}

fn peer<S: Subject>(
    name: &str,
    w: &Workload,
    reps: usize,
    make: impl FnOnce() -> S,
) -> Result<Measured, Box<dyn Error>> {
    let start = Instant::now();
    let mut s = make();
    let made = start.elapsed().as_secs_f64();
    let (insert, fill_s) = fill_segments(&w.members, |part| s.insert(part));
    let mut t = Timing::default();
    for _ in 0..reps {
        let found = t.record(w.queries.len(), || s.count(&w.queries));
        black_box(found);
    }
    let mut answer = vec![false; 1];
    no_false_negatives(&w.members, |k| {
        s.answer(&[*k], &mut answer);
        answer[0]
    })?;
    Ok(Measured {
        name: name.to_string(),
        bytes: s.size_in_bytes(),
        huge: None,
        insert,
        contains: t.median(),
        made_s: made,
        build_s: made + fill_s,
    })
}

/// Checks a sample of the members (every 997th) answers true.
fn no_false_negatives(
    members: &[u64],
    mut contains: impl FnMut(&u64) -> bool,
) -> Result<(), String> {
    match members.iter().step_by(997).find(|k| !contains(k)) {
        Some(k) => Err(format!("false negative for member {k}")),
        None => Ok(()),
    }
}

/// ns/key of every subject and the ceilings, per size.
pub fn table(results: &[SizeResult]) -> Table {
    let mut t = Table::new([
        "keys",
        "subject",
        "bytes",
        "on huge pages",
        "batch insert ns/key",
        "contains ns/key",
        "construction, ms",
        "construction + fill, s",
    ]);
    for r in results {
        for m in &r.subjects {
            t.row(vec![
                group(r.keys as u64),
                m.name.clone(),
                format::bytes(m.bytes as u64),
                on_huge(m.huge, m.bytes),
                format!("{:.2}", m.insert),
                format!("{:.2}", m.contains),
                format!("{:.1}", m.made_s * 1e3),
                format!("{:.2}", m.build_s),
            ]);
        }
        for (label, c, backed) in [
            ("4 KiB pages", &r.small, "-"),
            ("huge pages", &r.huge, r.huge.backed.as_str()),
        ] {
            t.row(vec![
                group(r.keys as u64),
                format!(
                    "ceiling, {label} ({} / {} ahead)",
                    c.rmw_ahead, c.read_ahead
                ),
                "-".to_string(),
                backed.to_string(),
                format!("{:.2}", c.rmw),
                format!("{:.2}", c.read),
                "-".to_string(),
                "-".to_string(),
            ]);
        }
    }
    t
}

/// How much of an array of `bytes` is on huge pages (`-` where unknown).
fn on_huge(huge: Option<u64>, bytes: usize) -> String {
    huge.map_or("-".to_string(), |h| format::bytes(h.min(bytes as u64)))
}

/// Our filter on huge pages cloned and loaded, per size.
pub fn copies_table(results: &[SizeResult]) -> Table {
    let mut t = Table::new(["keys", "made by", "bytes", "on huge pages", "ms"]);
    for r in results {
        for c in &r.copies {
            t.row(vec![
                group(r.keys as u64),
                c.how.to_string(),
                format::bytes(c.bytes as u64),
                on_huge(c.huge, c.bytes),
                format!("{:.1}", c.seconds * 1e3),
            ]);
        }
    }
    t
}

/// The targets, each with its measured value and whether it is met.
pub fn targets(results: &[SizeResult]) -> Table {
    let mut t = Table::new(["keys", "target", "measured", "met"]);
    for r in results {
        let (Some(ours), Some(ours_4k)) = (r.get(OURS_HUGE), r.get(OURS_4K)) else {
            continue;
        };
        let best_peer = [SBBF, FASTBLOOM]
            .iter()
            .filter_map(|p| r.get(p))
            .min_by(|a, b| a.contains.total_cmp(&b.contains));
        let mut row = |target: &str, measured: String, met: bool| {
            t.row(vec![
                group(r.keys as u64),
                target.to_string(),
                measured,
                if met { "yes" } else { "no" }.to_string(),
            ])
        };
        let c = r.huge.read / ours.contains;
        row(
            "batch contains >= 85% of the huge-page read ceiling",
            format!(
                "{:.0}% ({:.2} vs {:.2} ns)",
                c * 100.0,
                ours.contains,
                r.huge.read
            ),
            c >= 0.85,
        );
        if let Some(p) = best_peer {
            let x = p.contains / ours.contains;
            row(
                "batch contains >= 1.4x the best peer",
                format!(
                    "{x:.2}x ({:.2} vs {} {:.2} ns)",
                    ours.contains, p.name, p.contains
                ),
                x >= 1.4,
            );
        }
        let i = r.huge.rmw / ours.insert;
        row(
            "batch insert >= 80% of the huge-page read-modify-write ceiling",
            format!(
                "{:.0}% ({:.2} vs {:.2} ns)",
                i * 100.0,
                ours.insert,
                r.huge.rmw
            ),
            i >= 0.80,
        );
        row(
            "construction + fill on huge pages no slower than on 4 KiB pages",
            format!("{:.2} s vs {:.2} s", ours.build_s, ours_4k.build_s),
            ours.build_s <= ours_4k.build_s * 1.02,
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subject(name: &str, insert: f64, contains: f64, build_s: f64) -> Measured {
        Measured {
            name: name.to_string(),
            bytes: 1 << 20,
            huge: None,
            insert,
            contains,
            made_s: 0.0,
            build_s,
        }
    }

    #[test]
    fn targets_from_made_up_numbers() {
        let r = SizeResult {
            keys: 1000,
            subjects: vec![
                subject(OURS_HUGE, 3.0, 2.5, 1.0),
                subject(OURS_4K, 3.5, 3.0, 1.1),
                subject(SBBF, 20.0, 4.0, 2.0),
                subject(FASTBLOOM, 50.0, 40.0, 3.0),
            ],
            copies: vec![Copied {
                how: "clone",
                bytes: 1 << 20,
                huge: Some(1 << 21),
                seconds: 0.0125,
            }],
            small: Ceiling {
                read: 3.0,
                rmw: 3.2,
                read_ahead: 64,
                rmw_ahead: 64,
                backed: "0 B of 2 MiB".to_string(),
            },
            huge: Ceiling {
                read: 2.0,
                rmw: 2.7,
                read_ahead: 128,
                rmw_ahead: 128,
                backed: "2 MiB of 2 MiB".to_string(),
            },
        };
        let t = targets(std::slice::from_ref(&r)).text();
        // 2.0 / 2.5 = 80% < 85%; 4.0 / 2.5 = 1.6x >= 1.4x; 2.7 / 3.0 = 90% >= 80%.
        assert!(t.contains("80% (2.50 vs 2.00 ns)"), "{t}");
        assert!(t.contains("1.60x"), "{t}");
        assert!(t.contains("90% (3.00 vs 2.70 ns)"), "{t}");
        let met: Vec<&str> = t
            .lines()
            .filter_map(|l| l.split_whitespace().last())
            .filter(|w| *w == "yes" || *w == "no")
            .collect();
        assert_eq!(met, ["no", "yes", "yes", "yes"], "{t}");
        let copies = copies_table(std::slice::from_ref(&r)).text();
        assert!(
            copies.contains("clone") && copies.contains("12.5"),
            "{copies}"
        );
        assert!(
            table(&[r])
                .text()
                .contains("ceiling, huge pages (128 / 128 ahead)")
        );
    }
}
