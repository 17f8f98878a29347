//! `sweep`: batch contains and batch insert ns/key of every kernel tier and the peers from
//! 32 KiB to 1 GiB, against the memory ceiling (one random 64-byte line per key), written as
//! markdown plus two SVG plots into `perf-reports/`.
//!
//! Choices, spelled out in the report too:
//! * every filter is built with `capacity(bytes * 8 / 10)` and `size_in_bytes(bytes)`: about
//!   10 bits per key, the 1% budget, at exactly the sweep size;
//! * insert times `min(capacity, 8M)` keys (re-inserted for the later repetitions, which does
//!   the same work: the same bits are set again), so a 1 GiB filter is not filled to its
//!   858M-key capacity. The kernels are branch-free, so their speed does not depend on fill;
//! * contains times a fixed 4M-key query slice (about half members), medians of 5
//!   repetitions up to 32 MiB and of 3 above.

mod plot;
mod report;
mod tables;

use std::error::Error;
use std::hint::black_box;
use std::path::{Path, PathBuf};

use blockbloom::{BloomFilter, Isa};
use blockbloom_measure::format;
use blockbloom_measure::keys::Workload;
use blockbloom_measure::progress::Progress;
use blockbloom_measure::subject::{Blocked, Subject};
use blockbloom_measure::system::Context;
use blockbloom_measure::timing::Timing;

use crate::ceiling::{anon_huge_kib, ceiling};
use blockbloom_perf::peers::{FastBloom, Sbbf, fastbloom_fold_bits};

use plot::plot;
use report::{json, markdown, slug};
use tables::{breakdown_table, fraction_table, ns_table, targets_table};

/// The sweep sizes, x4 steps from 32 KiB, and 1 GiB.
pub const SWEEP_SIZES: [usize; 9] = [
    32 << 10,
    128 << 10,
    512 << 10,
    2 << 20,
    8 << 20,
    32 << 20,
    128 << 20,
    512 << 20,
    1 << 30,
];
/// `--quick` stops here.
const QUICK_MAX: usize = 32 << 20;
/// Most keys inserted into one filter.
const MAX_INSERT_KEYS: usize = 8 << 20;
/// Lookups per timed contains pass.
const QUERIES: usize = 4 << 20;
/// At least this many key operations per timed sample (small filters repeat the insert).
const MIN_SAMPLE: usize = 1 << 20;
/// Keys per batch call.
const BATCH: usize = 1024;
/// The DRAM-sized filters the targets apply to.
const DRAM_MIN: usize = 256 << 20;
const CONTAINS_TARGET: f64 = 0.70;
const INSERT_TARGET: f64 = 0.50;
const SEED: u64 = 0x5EED;

/// What a series is, for the tables and the plot's styling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// A blockbloom kernel tier, batch API, hashing included.
    Kernel,
    /// A peer crate.
    Peer,
    /// The memory ceiling.
    Ceiling,
    /// Where the time goes (hash only, pre-hashed batches).
    Diagnostic,
}

/// One line of the plot: ns/key per size (NaN where not measured).
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub group: Group,
    pub contains: Vec<f64>,
    pub insert: Vec<f64>,
}

/// Everything one sweep measured.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// Filter sizes in bytes.
    pub sizes: Vec<usize>,
    pub series: Vec<Series>,
    /// Per size: "layout, k" of the blockbloom filters.
    pub layouts: Vec<String>,
    /// Per size: keys inserted.
    pub inserted: Vec<usize>,
    /// Per size: repetitions.
    pub reps: Vec<usize>,
    /// How much of the THP ceiling buffer the kernel backed with huge pages, per size.
    pub thp_backed: Vec<String>,
    /// How much of the highest tier's filter the kernel backed with huge pages, per size.
    pub filter_thp: Vec<String>,
    /// The highest tier (the one the diagnostics use).
    pub best: String,
    /// Wrong answers found (kernels disagreeing on a count).
    pub problems: Vec<String>,
}

impl Sweep {
    fn empty(sizes: &[usize]) -> Sweep {
        Sweep {
            sizes: sizes.to_vec(),
            series: Vec::new(),
            layouts: vec![String::new(); sizes.len()],
            inserted: vec![0; sizes.len()],
            reps: vec![0; sizes.len()],
            thp_backed: vec![String::new(); sizes.len()],
            filter_thp: vec![String::new(); sizes.len()],
            best: String::new(),
            problems: Vec::new(),
        }
    }

    fn series_mut(&mut self, name: &str, group: Group) -> &mut Series {
        let n = self.sizes.len();
        if let Some(i) = self.series.iter().position(|s| s.name == name) {
            return &mut self.series[i];
        }
        self.series.push(Series {
            name: name.to_string(),
            group,
            contains: vec![f64::NAN; n],
            insert: vec![f64::NAN; n],
        });
        self.series.last_mut().expect("just pushed")
    }

    fn get(&self, name: &str) -> Option<&Series> {
        self.series.iter().find(|s| s.name == name)
    }
}

pub const CEIL_READ: &str = "ceiling: random line read";
pub const CEIL_READ_THP: &str = "ceiling: random line read, THP";
pub const CEIL_RMW: &str = "ceiling: random line read-modify-write";
pub const CEIL_RMW_THP: &str = "ceiling: random line read-modify-write, THP";
pub const HASH_ONLY: &str = "hash only (hash_u64_batch)";

fn prehashed(best: &str) -> String {
    format!("{best} pre-hashed (count_hash_batch / insert_hash_batch)")
}

/// Runs the sweep.
pub fn run(quick: bool, progress: &Progress) -> Result<Sweep, Box<dyn Error>> {
    let sizes: Vec<usize> = SWEEP_SIZES
        .iter()
        .copied()
        .filter(|&s| !quick || s <= QUICK_MAX)
        .collect();
    let isas = Isa::supported();
    let best = *isas.last().ok_or("no kernel tier")?;
    let mut sweep = Sweep::empty(&sizes);
    sweep.best = best.to_string();
    for (i, &bytes) in sizes.iter().enumerate() {
        let reps = if bytes <= QUICK_MAX { 5 } else { 3 };
        let capacity = bytes * 8 / 10;
        let n = capacity.min(MAX_INSERT_KEYS);
        sweep.reps[i] = reps;
        sweep.inserted[i] = n;
        progress.step(format_args!("{}: keys", format::bytes(bytes as u64)));
        let w = Workload::generate(n, QUERIES, SEED)?;

        // The memory ceiling first, with and without huge pages.
        for thp in [false, true] {
            progress.step(format_args!(
                "{}: ceiling{}",
                format::bytes(bytes as u64),
                if thp { " (THP)" } else { "" }
            ));
            let c = ceiling(bytes, thp, reps)?;
            let (r, m) = if thp {
                (CEIL_READ_THP, CEIL_RMW_THP)
            } else {
                (CEIL_READ, CEIL_RMW)
            };
            sweep.series_mut(r, Group::Ceiling).contains[i] = c.read;
            sweep.series_mut(m, Group::Ceiling).insert[i] = c.rmw;
            if thp {
                sweep.thp_backed[i] = c.backed;
            }
        }

        let mut counts = Vec::new();
        for &isa in &isas {
            progress.step(format_args!(
                "{}: blockbloom {isa}",
                format::bytes(bytes as u64)
            ));
            let before = anon_huge_kib();
            let mut filter = BloomFilter::builder()
                .capacity(capacity as u64)
                .size_in_bytes(bytes as u64)
                .isa(isa)
                .build()?;
            if isa == best {
                filter.clear();
                let huge = anon_huge_kib().saturating_sub(before) * 1024;
                sweep.filter_thp[i] = format!(
                    "{} of {}",
                    format::bytes(huge.min(bytes as u64)),
                    format::bytes(bytes as u64)
                );
            }
            sweep.layouts[i] = format!("{}, k={}", filter.layout(), filter.probes());
            let mut b = Blocked {
                filter,
                batch: BATCH,
            };
            let (ins, con, count) = time_subject(&mut b, &w, reps);
            let s = sweep.series_mut(&isa.to_string(), Group::Kernel);
            s.insert[i] = ins;
            s.contains[i] = con;
            counts.push((isa, count));
            if isa == best {
                progress.step(format_args!(
                    "{}: where the time goes",
                    format::bytes(bytes as u64)
                ));
                let (hash, pre_ins, pre_con) = diagnose(&mut b.filter, &w, reps);
                let s = sweep.series_mut(HASH_ONLY, Group::Diagnostic);
                s.contains[i] = hash;
                s.insert[i] = hash;
                let s = sweep.series_mut(&prehashed(&best.to_string()), Group::Diagnostic);
                s.contains[i] = pre_con;
                s.insert[i] = pre_ins;
            }
        }
        if counts.iter().any(|c| c.1 != counts[0].1) {
            sweep.problems.push(format!(
                "{}: kernels disagree on the count: {counts:?}",
                format::bytes(bytes as u64)
            ));
        }

        progress.step(format_args!(
            "{}: fastbloom (foldhash)",
            format::bytes(bytes as u64)
        ));
        let mut fb = FastBloom(fastbloom_fold_bits(bytes * 8, None, capacity));
        let (ins, con, _) = time_subject(&mut fb, &w, reps);
        drop(fb);
        let s = sweep.series_mut("fastbloom (foldhash)", Group::Peer);
        s.insert[i] = ins;
        s.contains[i] = con;

        progress.step(format_args!(
            "{}: sbbf-rs-safe",
            format::bytes(bytes as u64)
        ));
        let mut sb = Sbbf::with_bytes(bytes);
        let (ins, con, _) = time_subject(&mut sb, &w, reps);
        drop(sb);
        let s = sweep.series_mut("sbbf-rs-safe (XXH3)", Group::Peer);
        s.insert[i] = ins;
        s.contains[i] = con;
    }
    Ok(sweep)
}

/// Median insert and contains ns/key, and the count of the last contains pass.
fn time_subject<S: Subject>(s: &mut S, w: &Workload, reps: usize) -> (f64, f64, usize) {
    // Faults every page in outside the timing.
    s.clear();
    let inner = MIN_SAMPLE.div_ceil(w.members.len().max(1));
    let insert = Timing::repeat(reps, w.members.len() * inner, || {
        (0..inner).for_each(|_| s.insert(black_box(&w.members)))
    });
    let mut contains = Timing::default();
    let mut count = 0;
    for _ in 0..reps {
        count = contains.record(w.queries.len(), || s.count(black_box(&w.queries)));
    }
    (insert.median(), contains.median(), count)
}

/// Hashing alone, pre-hashed insert and pre-hashed count on a filter holding the members.
fn diagnose(f: &mut BloomFilter, w: &Workload, reps: usize) -> (f64, f64, f64) {
    let seed = f.seed();
    let mut qh = vec![0u64; w.queries.len()];
    let hash = Timing::repeat(reps, w.queries.len(), || {
        for (k, o) in w.queries.chunks(BATCH).zip(qh.chunks_mut(BATCH)) {
            blockbloom::hash::hash_u64_batch(black_box(k), seed, o);
        }
        black_box(&qh);
    });
    let mut mh = vec![0u64; w.members.len()];
    blockbloom::hash::hash_u64_batch(&w.members, seed, &mut mh);
    let inner = MIN_SAMPLE.div_ceil(mh.len().max(1));
    let ins = Timing::repeat(reps, mh.len() * inner, || {
        for _ in 0..inner {
            mh.chunks(BATCH)
                .for_each(|c| f.insert_hash_batch(black_box(c)));
        }
    });
    let con = Timing::repeat(reps, qh.len(), || {
        qh.chunks(BATCH)
            .map(|c| f.count_hash_batch(c))
            .sum::<usize>()
    });
    (hash.median(), ins.median(), con.median())
}

/// `sweep`: runs, writes the markdown and the SVGs, prints the fractions and the paths (or,
/// with `json`, one JSON document with the series and the paths).
pub fn command(ctx: &Context, quick: bool, out: &Path, json: bool) -> Result<(), Box<dyn Error>> {
    let loadavg = || {
        std::fs::read_to_string("/proc/loadavg")
            .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    let load_before = loadavg();
    let progress = Progress::new();
    let sweep = run(quick, &progress)?;
    let load = format!("{load_before} at the start, {} at the end", loadavg());
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let stem = format!("{}-{}-sweep", ctx.date, slug(&ctx.cpu));
    let svg_contains: PathBuf = out.join(format!("{stem}.svg"));
    let svg_insert: PathBuf = out.join(format!("{stem}-insert.svg"));
    plot(
        &sweep,
        true,
        &svg_contains,
        "batch contains, u64 keys, 1% budget: ns/key vs filter size",
    )?;
    plot(
        &sweep,
        false,
        &svg_insert,
        "batch insert, u64 keys, 1% budget: ns/key vs filter size",
    )?;
    let names: Vec<String> = [&svg_contains, &svg_insert]
        .iter()
        .map(|p| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    let md = out.join(format!("{stem}.md"));
    std::fs::write(&md, markdown(ctx, &sweep, &names, quick, &load))
        .map_err(|e| format!("cannot write {}: {e}", md.display()))?;
    progress.step("done");
    if json {
        let mut results = self::json(&sweep);
        results["report"] = serde_json::json!(md);
        results["plots"] = serde_json::json!([svg_contains, svg_insert]);
        crate::emit_json("sweep", ctx, results)?;
    } else {
        print_text(&sweep, &[&md, &svg_contains, &svg_insert]);
    }
    if sweep.problems.is_empty() {
        Ok(())
    } else {
        Err(format!("wrong answers: {}", sweep.problems.join("; ")).into())
    }
}

fn print_text(sweep: &Sweep, paths: &[&PathBuf]) {
    print!("{}", ns_table(sweep, true, &[Group::Ceiling]).text());
    println!();
    print!("{}", fraction_table(sweep).text());
    println!();
    print!("{}", targets_table(sweep).text());
    println!();
    print!("{}", breakdown_table(sweep).text());
    for p in paths {
        println!("{}", p.display());
    }
}

#[cfg(test)]
mod tests {
    use super::report::notes;
    use super::*;

    fn made_up() -> Sweep {
        let sizes = vec![32 << 10, 2 << 20, 512 << 20];
        let mut s = Sweep::empty(&sizes);
        s.best = "avx2".to_string();
        let mut add = |name: &str, g: Group, c: [f64; 3], i: [f64; 3]| {
            let se = s.series_mut(name, g);
            se.contains = c.to_vec();
            se.insert = i.to_vec();
        };
        add("scalar", Group::Kernel, [4.0, 5.0, 20.0], [5.0, 6.0, 30.0]);
        add("avx2", Group::Kernel, [1.0, 1.5, 10.0], [2.0, 2.5, 16.0]);
        add(
            "sbbf-rs-safe (XXH3)",
            Group::Peer,
            [3.0, 4.0, 25.0],
            [3.0, 4.0, 25.0],
        );
        add(CEIL_READ, Group::Ceiling, [0.5, 1.0, 8.0], [f64::NAN; 3]);
        add(
            CEIL_READ_THP,
            Group::Ceiling,
            [0.5, 0.9, 6.0],
            [f64::NAN; 3],
        );
        add(CEIL_RMW, Group::Ceiling, [f64::NAN; 3], [0.8, 1.5, 12.0]);
        add(HASH_ONLY, Group::Diagnostic, [0.3; 3], [0.3; 3]);
        s
    }

    #[test]
    fn tables_from_made_up_numbers() {
        let s = made_up();
        let f = fraction_table(&s).text();
        // 8 / 10 = 80% for avx2 contains at 512 MiB; 8 / 16 = 50% for its insert.
        assert!(
            f.lines()
                .any(|l| l.starts_with("avx2 contains") && l.ends_with("80%")),
            "{f}"
        );
        assert!(
            f.lines()
                .any(|l| l.starts_with("avx2 insert") && l.ends_with("50%")),
            "{f}"
        );
        let t = targets_table(&s).text();
        assert!(
            t.contains("512 MiB: avx2 batch contains / read ceiling  80%"),
            "{t}"
        );
        assert_eq!(t.matches("yes").count(), 2, "{t}");
        let n = ns_table(&s, true, &[Group::Kernel]).text();
        assert!(n.contains("scalar    4.00   5.00     20.0"), "{n}");
        assert!(!n.contains("ceiling"), "{n}");
        let b = breakdown_table(&s).text();
        assert!(b.contains(HASH_ONLY), "{b}");
        assert!(notes(&s).contains("At 512 MiB: avx2 batch contains costs 10.0 ns/key"));
    }

    #[test]
    fn quick_targets_say_not_measured() {
        let mut s = made_up();
        s.sizes = vec![32 << 10, 2 << 20, 8 << 20];
        assert!(targets_table(&s).text().contains("not measured"));
    }

    #[test]
    fn plot_writes_an_svg() {
        let s = made_up();
        let path = std::env::temp_dir().join(format!("sweep-test-{}.svg", std::process::id()));
        plot(&s, true, &path, "test").unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).ok();
        assert!(svg.starts_with("<svg"), "{}", &svg[..100.min(svg.len())]);
        assert!(
            svg.contains("avx2") && svg.contains(CEIL_READ),
            "legend missing"
        );
    }

    #[test]
    fn slug_of_cpu_names() {
        assert_eq!(
            slug("Intel(R) Xeon(R) Processor"),
            "intel-r-xeon-r-processor"
        );
        assert_eq!(
            slug("AMD EPYC 9R14 96-Core Processor"),
            "amd-epyc-9r14-96-core-processor"
        );
        assert_eq!(slug(""), "unknown-cpu");
    }
}
