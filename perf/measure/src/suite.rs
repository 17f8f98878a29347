//! One size, measured: every requested kernel, optionally the single-key API and peer
//! filters, all through [`subject::measure`] on the same keys. Also renders the result.

use std::error::Error;
use std::fmt::Write as _;

use blockbloom::{BloomFilter, Isa};

use crate::format::{bytes, group, percent};
use crate::keys::Workload;
use crate::progress::Progress;
use crate::subject::{self, Blocked, Measurement, Subject};
use crate::system;
use crate::table::Table;

/// The L2-, L3- and DRAM-sized key counts of `demo` and `report`, with their names.
pub const SIZES: [(usize, &str); 3] = [(50_000, "L2"), (1_000_000, "L3"), (64_000_000, "DRAM")];

/// Lookups per timed pass in `demo` and `report`: about 2 million non-members, enough for
/// the FPR to about ±1.4% of itself (95%).
pub const QUERIES: usize = 4_000_000;

/// The key stream of `demo` and `report`.
pub const SEED: u64 = 0x5EED;

/// A filter from another crate, measured next to the kernels on the same keys.
#[derive(Debug, Clone, Copy)]
pub struct Peer {
    /// What its progress line calls it.
    pub label: &'static str,
    /// Builds it for `n` keys at target `fpr`; returns its name in tables and the filter.
    pub build: fn(n: usize, fpr: f64) -> (String, Box<dyn Subject>),
}

/// What to measure at one size.
#[derive(Debug, Clone)]
pub struct SuitePlan {
    /// Keys inserted (the filter's capacity).
    pub n: usize,
    /// Target false-positive rate.
    pub fpr: f64,
    /// Kernels, slowest first.
    pub isas: Vec<Isa>,
    /// Keys per batch call (1: single-key API).
    pub batch: usize,
    /// Lookups per timed repetition.
    pub queries: usize,
    /// Key stream seed.
    pub seed: u64,
    /// Timed repetitions (medians are reported).
    pub reps: usize,
    /// Also time the single-key `insert`/`contains` (when `batch > 1`).
    pub single_key: bool,
    /// Filters of other crates to time after blockbloom's (their rows are `Kind::Peer`).
    pub peers: Vec<Peer>,
}

impl SuitePlan {
    /// How `demo` and `report` measure each size: 1% target, every supported kernel, batches
    /// of 1024, the single-key API too.
    pub fn standard(n: usize, reps: usize, peers: &[Peer]) -> SuitePlan {
        SuitePlan {
            n,
            fpr: 0.01,
            isas: Isa::supported(),
            batch: 1024,
            queries: QUERIES,
            seed: SEED,
            reps,
            single_key: true,
            peers: peers.to_vec(),
        }
    }
}

/// What a row of the result measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A blockbloom kernel through the batch API (or single-key if `batch == 1`).
    Kernel(Isa),
    /// blockbloom's single-key API (inline scalar code, any kernel).
    SingleKey,
    /// A peer filter, by its [`Peer::label`].
    Peer(&'static str),
}

/// One measured filter.
#[derive(Debug, Clone)]
pub struct SuiteRow {
    /// What it is.
    pub kind: Kind,
    /// Its name in tables.
    pub name: String,
    /// How it was called.
    pub api: String,
    /// The numbers.
    pub m: Measurement,
}

/// Everything measured at one size.
#[derive(Debug, Clone)]
pub struct SizeResult {
    /// The plan it ran.
    pub plan: SuitePlan,
    /// blockbloom's filter size in bytes.
    pub bytes: usize,
    /// blockbloom's probes per key.
    pub probes: u32,
    /// blockbloom's layout and key hash: the defaults (`BloomFilter::with_capacity`'s) for the
    /// plan's size and rate.
    pub config: String,
    /// blockbloom's model FPR at `n` keys.
    pub model_fpr: f64,
    /// The exact FPR of the filter that was built, from its bits (`expected_fpr`): the model
    /// averages over all possible filters, this is the one measured.
    pub instance_fpr: f64,
    /// Non-member lookups per pass.
    pub non_members: usize,
    /// Rows in measuring order: kernels, single-key, peers.
    pub rows: Vec<SuiteRow>,
}

/// Runs `plan`.
///
/// # Errors
/// The library's error if the filter cannot be sized or built, or a message if the keys do
/// not fit in memory.
pub fn run(plan: &SuitePlan, progress: &Progress) -> Result<SizeResult, Box<dyn Error>> {
    // Checks the parameters before spending time on keys.
    blockbloom::sizing::plan(plan.n as u64, plan.fpr)?;
    let n = group(plan.n as u64);
    progress.step(format_args!(
        "n={n}: generating {n} keys and {} lookups",
        group(plan.queries as u64)
    ));
    let w = Workload::generate(plan.n, plan.queries, plan.seed)?;
    let api = if plan.batch == 1 {
        "single-key".to_string()
    } else {
        format!("batch {}", plan.batch)
    };
    let mut rows = Vec::new();
    let mut last: Option<BloomFilter> = None;
    let (mut bytes, mut probes, mut model_fpr, mut instance_fpr) = (0, 0, 0.0, 0.0);
    let mut config = String::new();
    for &isa in &plan.isas {
        drop(last.take()); // one big filter at a time
        progress.step(format_args!("n={n}: building and measuring {isa} ({api})"));
        let filter = BloomFilter::builder()
            .capacity(plan.n as u64)
            .fpr(plan.fpr)
            .isa(isa)
            .build()?;
        (bytes, probes, model_fpr) = (
            filter.size_in_bytes(),
            filter.probes(),
            filter.model_fpr(plan.n as u64),
        );
        config = format!(
            "layout {}, hash {} (id {})",
            filter.layout(),
            filter.key_hash(),
            filter.key_hash().id()
        );
        let mut subject = Blocked {
            filter,
            batch: plan.batch,
        };
        let m = subject::measure(&mut subject, &w, plan.reps);
        // Every kernel builds the same bits, so this is the same for all of them.
        instance_fpr = subject.filter.expected_fpr();
        rows.push(SuiteRow {
            kind: Kind::Kernel(isa),
            name: isa.to_string(),
            api: api.clone(),
            m,
        });
        last = Some(subject.filter);
    }
    if plan.single_key
        && plan.batch > 1
        && let Some(filter) = last.take()
    {
        progress.step(format_args!("n={n}: measuring the single-key API"));
        let mut subject = Blocked { filter, batch: 1 };
        let m = subject::measure(&mut subject, &w, plan.reps);
        rows.push(SuiteRow {
            kind: Kind::SingleKey,
            name: "blockbloom insert/contains".into(),
            api: "single-key".into(),
            m,
        });
    }
    drop(last);
    for peer in &plan.peers {
        progress.step(format_args!("n={n}: measuring {}", peer.label));
        let (name, mut filter) = (peer.build)(plan.n, plan.fpr);
        let m = subject::measure(filter.as_mut(), &w, plan.reps);
        rows.push(SuiteRow {
            kind: Kind::Peer(peer.label),
            name,
            api: "single-key".into(),
            m,
        });
    }
    Ok(SizeResult {
        plan: plan.clone(),
        bytes,
        probes,
        config,
        model_fpr,
        instance_fpr,
        non_members: w.non_members,
        rows,
    })
}

impl SizeResult {
    /// The row of `kind`, if measured.
    pub fn get(&self, kind: Kind) -> Option<&SuiteRow> {
        self.rows.iter().find(|r| r.kind == kind)
    }

    /// The kernel row with the lowest median of `metric`.
    pub fn best_kernel(&self, metric: impl Fn(&Measurement) -> f64) -> Option<&SuiteRow> {
        self.rows
            .iter()
            .filter(|r| matches!(r.kind, Kind::Kernel(_)))
            .min_by(|a, b| metric(&a.m).total_cmp(&metric(&b.m)))
    }

    /// The kernel row with the highest measured FPR.
    pub fn worst_kernel_fpr(&self) -> Option<&SuiteRow> {
        self.rows
            .iter()
            .filter(|r| matches!(r.kind, Kind::Kernel(_)))
            // The first of equals: every kernel builds the same bits.
            .reduce(|worst, r| if r.m.fpr() > worst.m.fpr() { r } else { worst })
    }

    /// A few lines describing the filter and the method.
    pub fn describe(&self, caches: &[system::Cache]) -> String {
        let p = &self.plan;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "n = {} keys, target FPR {}: blockbloom filter {} bytes ({}, {}), the defaults: {}, k = {}, {:.2} bits/key, model FPR {:.4}%, this filter's exact FPR (from its bits) {:.4}%",
            group(p.n as u64),
            percent(p.fpr),
            group(self.bytes as u64),
            bytes(self.bytes as u64),
            system::placement(self.bytes as u64, caches),
            self.config,
            self.probes,
            self.bytes as f64 * 8.0 / p.n as f64,
            self.model_fpr * 100.0,
            self.instance_fpr * 100.0,
        );
        let _ = writeln!(
            s,
            "contains: {} lookups per pass, {} members and {} non-members interleaved at random; median of {} passes",
            group(p.queries as u64),
            group((p.queries - self.non_members) as u64),
            group(self.non_members as u64),
            p.reps.max(1),
        );
        let _ = writeln!(s, "insert: {}", subject::describe_insert(p.n, p.reps));
        if p.batch > 1 && self.get(Kind::SingleKey).is_some() {
            let _ = writeln!(
                s,
                "single-key row: insert/contains one key per call (inline scalar code, the same for every kernel)"
            );
        }
        s
    }

    /// The result as a table (kernels, single-key, peers).
    pub fn table(&self) -> Table {
        let mut t = Table::new([
            "filter",
            "API",
            "insert ns/key",
            "contains ns/key",
            "insert vs scalar",
            "contains vs scalar",
            "spread ins/cont",
            "FPR",
            "FPR/target",
            "bits/key",
            "k",
        ]);
        let scalar = self.get(Kind::Kernel(Isa::Scalar)).map(|r| &r.m);
        let speedup = |base: Option<f64>, v: f64| match base {
            Some(b) => format!("{:.2}x", b / v),
            None => "-".to_string(),
        };
        for r in &self.rows {
            let m = &r.m;
            let (ins, con) = (m.insert.median(), m.contains.median());
            let mut fpr = format!("{:.3}%", m.fpr() * 100.0);
            if m.false_negatives > 0 || m.count_mismatch {
                fpr.push_str(" (WRONG ANSWERS)");
            }
            t.row(vec![
                r.name.clone(),
                r.api.clone(),
                format!("{ins:.2}"),
                format!("{con:.2}"),
                speedup(scalar.map(|s| s.insert.median()), ins),
                speedup(scalar.map(|s| s.contains.median()), con),
                format!(
                    "{:.0}%/{:.0}%",
                    m.insert.spread() * 100.0,
                    m.contains.spread() * 100.0
                ),
                fpr,
                format!("{:.3}", m.fpr() / self.plan.fpr),
                format!("{:.2}", m.size_in_bytes as f64 * 8.0 / self.plan.n as f64),
                m.probes.to_string(),
            ]);
        }
        t
    }

    /// Warnings about wrong answers (false negatives, count disagreeing with answers).
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in &self.rows {
            if r.m.false_negatives > 0 {
                out.push(format!(
                    "{}: {} false negatives",
                    r.name, r.m.false_negatives
                ));
            }
            if r.m.count_mismatch {
                out.push(format!(
                    "{}: the timed count disagrees with the per-key answers",
                    r.name
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_then_the_single_key_api_then_peers() {
        let peer = Peer {
            label: "blockbloom again",
            build: |n, fpr| {
                let filter = BloomFilter::with_capacity(n as u64, fpr).expect("valid");
                let subject = Blocked { filter, batch: 1 };
                ("blockbloom as a peer".into(), Box::new(subject))
            },
        };
        let mut plan = SuitePlan::standard(5000, 1, &[peer]);
        plan.queries = 10_000;
        let r = run(&plan, &Progress::quiet()).unwrap();
        let mut expected: Vec<Kind> = Isa::supported().into_iter().map(Kind::Kernel).collect();
        expected.extend([Kind::SingleKey, Kind::Peer("blockbloom again")]);
        let kinds: Vec<Kind> = r.rows.iter().map(|row| row.kind).collect();
        assert_eq!(kinds, expected);
        assert!(r.problems().is_empty(), "{:?}", r.problems());
        let text = r.table().text();
        assert!(text.contains("blockbloom as a peer"), "{text}");
        assert!(text.lines().nth(2).unwrap().starts_with("scalar"), "{text}");
        let described = r.describe(&[]);
        assert!(
            described.starts_with("n = 5,000 keys, target FPR 1%: blockbloom filter "),
            "{described}"
        );
    }
}
