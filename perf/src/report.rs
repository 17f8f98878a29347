//! The `report` command's markdown file and its targets tables.

use std::fmt::Write as _;

use blockbloom::Isa;
use blockbloom_measure::concurrent::{ConcurrentResult, Method};
use blockbloom_measure::format::group;
use blockbloom_measure::subject::Measurement;
use blockbloom_measure::suite::{Kind, SIZES, SizeResult};
use blockbloom_measure::system::{self, Context};
use blockbloom_measure::table::Table;

use blockbloom_perf::peers::{
    FASTBLOOM_FOLD, FASTBLOOM_FOLD_SUITE, FASTBLOOM_SIP, FASTBLOOM_SIP_SUITE, SBBF_SUITE,
};

/// The sizes of the report's concurrent-insert section (the DRAM one is a filter of about
/// 120 MiB).
pub const CONCURRENT_SIZES: [(usize, &str); 2] = [(1_000_000, "L3"), (100_000_000, "DRAM")];

/// The concurrent-insert methods of the report: blockbloom's builds, then fastbloom's atomic
/// filter with both hashers.
pub fn methods() -> Vec<Method> {
    let peers = [Method::Peer(FASTBLOOM_SIP), Method::Peer(FASTBLOOM_FOLD)];
    Method::BUILDS.into_iter().chain(peers).collect()
}

fn size_named(results: &[SizeResult], n: usize) -> Option<&SizeResult> {
    results.iter().find(|r| r.plan.n == n)
}

fn label(n: usize) -> String {
    let name = SIZES
        .iter()
        .chain(&CONCURRENT_SIZES)
        .find(|s| s.0 == n)
        .map(|s| s.1)
        .unwrap_or("n");
    format!("{name} (n={})", group(n as u64))
}

/// One line of the targets table: `(target, measured, goal, reached)`.
type Line = [String; 4];

fn ratio_line(what: String, goal: f64, measured: Option<(f64, String)>, missing: &str) -> Line {
    match measured {
        Some((r, detail)) => [
            what,
            format!("{r:.2}x ({detail})"),
            format!(">= {goal}x"),
            if r >= goal { "yes" } else { "no" }.to_string(),
        ],
        None => [
            what,
            missing.to_string(),
            format!(">= {goal}x"),
            "-".to_string(),
        ],
    }
}

/// Builds the targets table from whatever sizes were measured.
pub fn targets(results: &[SizeResult], missing: &str) -> Table {
    let mut lines: Vec<Line> = Vec::new();
    let contains = |m: &Measurement| m.contains.median();
    let insert = |m: &Measurement| m.insert.median();

    // best / baseline speed-up of `metric`, with both figures spelled out
    let vs = |r: &SizeResult, base: Kind, metric: &dyn Fn(&Measurement) -> f64| {
        let best = r.best_kernel(metric)?;
        let b = r.get(base)?;
        let (x, y) = (metric(&best.m), metric(&b.m));
        Some((y / x, format!("{} {x:.2} ns vs {y:.2} ns", best.name)))
    };

    let l2 = size_named(results, 50_000);
    lines.push(ratio_line(
        format!(
            "{}: best batch contains vs scalar batch contains",
            label(50_000)
        ),
        4.0,
        l2.and_then(|r| vs(r, Kind::Kernel(Isa::Scalar), &contains)),
        missing,
    ));
    let l3 = size_named(results, 1_000_000);
    let sbbf = Kind::Peer(SBBF_SUITE.label);
    let fastbloom = [
        (Kind::Peer(FASTBLOOM_SIP_SUITE.label), "SipHash"),
        (Kind::Peer(FASTBLOOM_FOLD_SUITE.label), "foldhash"),
    ];
    lines.push(ratio_line(
        format!(
            "{}: best batch contains vs sbbf-rs-safe contains",
            label(1_000_000)
        ),
        2.0,
        l3.and_then(|r| vs(r, sbbf, &contains)),
        missing,
    ));
    lines.push(ratio_line(
        format!(
            "{}: best batch insert vs sbbf-rs-safe insert",
            label(1_000_000)
        ),
        2.0,
        l3.and_then(|r| vs(r, sbbf, &insert)),
        missing,
    ));
    for &(n, _) in &SIZES {
        let r = size_named(results, n);
        for (kind, peer) in fastbloom {
            lines.push(ratio_line(
                format!(
                    "{}: best batch contains vs fastbloom ({peer}) contains",
                    label(n)
                ),
                5.0,
                r.and_then(|r| vs(r, kind, &contains)),
                missing,
            ));
        }
        for (kind, peer) in fastbloom {
            let measured = r.and_then(|r| {
                let (s, p) = (r.get(Kind::SingleKey)?, r.get(kind)?);
                let (x, y) = (s.m.contains.median(), p.m.contains.median());
                Some(format!("{:.2}x ({x:.2} ns vs {y:.2} ns)", y / x))
            });
            lines.push([
                format!(
                    "{}: single-key contains vs fastbloom ({peer}) contains",
                    label(n)
                ),
                measured.unwrap_or_else(|| missing.to_string()),
                "(no target)".to_string(),
                "-".to_string(),
            ]);
        }
    }
    lines.push(ratio_line(
        format!(
            "{}: best batch contains vs scalar batch contains",
            label(64_000_000)
        ),
        3.0,
        size_named(results, 64_000_000).and_then(|r| vs(r, Kind::Kernel(Isa::Scalar), &contains)),
        missing,
    ));
    for &(n, _) in &SIZES {
        let line = match size_named(results, n).and_then(|r| r.worst_kernel_fpr().map(|w| (r, w))) {
            Some((r, w)) => {
                let (fpr, (lo, hi), target) = (w.m.fpr(), w.m.fpr_interval95(), r.plan.fpr);
                let exact = r.instance_fpr;
                let reached = if fpr <= target {
                    "yes".to_string()
                } else if lo <= target {
                    "no (within the 95% interval)".to_string()
                } else {
                    "no".to_string()
                };
                [
                    format!("{}: measured FPR / target, worst blockbloom row", label(n)),
                    format!(
                        "{:.3} ({}: {:.4}% (95% interval {:.4}%–{:.4}%) of {} non-members; model {:.4}%, this filter's exact FPR {:.4}%)",
                        fpr / target,
                        w.name,
                        fpr * 100.0,
                        lo * 100.0,
                        hi * 100.0,
                        group(w.m.non_members as u64),
                        r.model_fpr * 100.0,
                        exact * 100.0,
                    ),
                    "<= 1.0".to_string(),
                    reached,
                ]
            }
            None => [
                format!("{}: measured FPR / target", label(n)),
                missing.to_string(),
                "<= 1.0".to_string(),
                "-".to_string(),
            ],
        };
        lines.push(line);
    }
    let mut t = Table::new(["target", "measured", "goal", "reached"]).left_aligned();
    for l in lines {
        t.row(l.to_vec());
    }
    t
}

/// The concurrent-insert targets, from whatever sizes were measured.
pub fn concurrent_targets(results: &[ConcurrentResult], missing: &str) -> Table {
    let dram_n = CONCURRENT_SIZES[1].0;
    let dram = results.iter().find(|r| r.plan.n == dram_n);
    let l = label(dram_n);
    let atomic = Method::AtomicShared;
    let mut lines: Vec<Line> = Vec::new();
    lines.push(ratio_line(
        format!("{l}: atomic insert throughput, 2 threads vs 1 thread"),
        1.7,
        dram.and_then(|r| {
            let (one, two) = (r.ns(atomic, 1)?, r.ns(atomic, 2)?);
            Some((one / two, format!("{two:.2} ns vs {one:.2} ns per key")))
        }),
        missing,
    ));
    lines.push(ratio_line(
        format!("{l}: atomic insert vs plain insert_batch, 1 thread"),
        0.6,
        dram.and_then(|r| {
            let (a, p) = (r.ns(atomic, 1)?, r.ns(Method::Plain, 1)?);
            Some((p / a, format!("{a:.2} ns vs {p:.2} ns per key")))
        }),
        missing,
    ));
    for t in [1, 2] {
        for (peer, hasher) in [
            (Method::Peer(FASTBLOOM_SIP), "SipHash-1-3, its default"),
            (Method::Peer(FASTBLOOM_FOLD), "foldhash"),
        ] {
            lines.push(ratio_line(
                format!(
                    "{l}: atomic insert vs fastbloom AtomicBloomFilter ({hasher}), {t} thread{}",
                    if t == 1 { "" } else { "s" }
                ),
                2.0,
                dram.and_then(|r| {
                    let (a, f) = (r.ns(atomic, t)?, r.ns(peer, t)?);
                    Some((f / a, format!("{a:.2} ns vs {f:.2} ns per key")))
                }),
                missing,
            ));
        }
    }
    for &(n, _) in &CONCURRENT_SIZES {
        let r = results.iter().find(|r| r.plan.n == n);
        let measured = r.and_then(|r| {
            let mut faster = (Vec::new(), Vec::new());
            let mut detail = Vec::new();
            for &t in &r.plan.threads {
                let (p, s) = (
                    r.ns(Method::Partitioned, t)?,
                    r.ns(Method::SharedAtomic, t)?,
                );
                if p <= s {
                    faster.0.push(t.to_string());
                } else {
                    faster.1.push(t.to_string());
                }
                detail.push(format!("{t}t {:.2}x ({p:.2} vs {s:.2} ns)", s / p));
            }
            let who = match (faster.0.is_empty(), faster.1.is_empty()) {
                (false, true) => "Partitioned faster at every thread count".to_string(),
                (true, false) => "SharedAtomic faster at every thread count".to_string(),
                _ => format!(
                    "Partitioned faster at {} threads, SharedAtomic at {}",
                    faster.0.join(", "),
                    faster.1.join(", ")
                ),
            };
            Some(format!(
                "{who}; SharedAtomic / Partitioned time: {}",
                detail.join(", ")
            ))
        });
        lines.push([
            format!(
                "{}: par_insert_batch_with Partitioned vs SharedAtomic",
                label(n)
            ),
            measured.unwrap_or_else(|| missing.to_string()),
            "(no target)".to_string(),
            "-".to_string(),
        ]);
    }
    let mut t = Table::new(["target", "measured", "goal", "reached"]).left_aligned();
    for l in lines {
        t.row(l.to_vec());
    }
    t
}

/// The report's concurrent-insert section.
pub fn concurrent_markdown(ctx: &Context, results: &[ConcurrentResult], quick: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## Concurrent insert\n");
    let batch = results.first().map(|r| r.plan.batch).unwrap_or(1024);
    let _ = writeln!(
        s,
        "Several threads build one filter from the `n` member keys of the same SplitMix64 stream \
         (1% target, the dispatcher's kernel). Methods: (a) one `AtomicBloomFilter`, \
         `insert_batch` from T `std::thread::scope` threads, each inserting a contiguous 1/T of \
         the keys in batches of {batch}; (b) `BloomFilter::par_insert_batch_with(keys, \
         ParallelBuild::Partitioned)` and (c) `par_insert_batch_with(keys, \
         ParallelBuild::SharedAtomic)`, inside `pool.install` of a rayon pool of T threads; \
         (d) T plain `BloomFilter`s, one per scoped thread, each inserting 1/T of the keys with \
         `insert_batch`, then OR-merged by T threads into one block vector (the library has no \
         union API, so the merged blocks stay a `Vec<Block>`; the merge is timed and charged to \
         the build); (e) plain `insert_batch` on one thread, the baseline; (f) \
         `fastbloom::AtomicBloomFilter` (0.17, `with_false_pos(0.01).expected_items(n)`) shared \
         by T scoped threads calling `insert(&self, &u64)` one key at a time, with its default \
         SipHash-1-3 hasher and with foldhash. Every build starts from an empty filter, cleared \
         outside the timing (blockbloom's atomic insert skips words that already hold a key's \
         bits, so timing re-inserts would flatter it). ns/key is wall-clock time for all the \
         threads, spawning included, divided by the keys; medians. \"Tt vs 1t\" is the \
         speed-up over the same method on one thread, \"Tt vs plain\" over (e); \"spread\" is \
         the largest (max - min) / median over the thread counts. This machine has {} logical \
         CPUs: thread counts above that measure oversubscription, not parallelism.\n",
        system::logical_cpus()
    );
    let missing = if quick {
        let _ = writeln!(
            s,
            "This is a `--quick` report: the DRAM size (n = {}) was skipped.\n",
            group(CONCURRENT_SIZES[1].0 as u64)
        );
        "not measured (--quick)"
    } else {
        "not measured"
    };
    let _ = writeln!(s, "### Targets (concurrent insert)\n");
    s.push_str(&concurrent_targets(results, missing).markdown());
    s.push('\n');
    for r in results {
        let _ = writeln!(s, "### {}\n", label(r.plan.n));
        for line in r.describe(&ctx.caches).lines() {
            let _ = writeln!(s, "- {line}");
        }
        s.push('\n');
        s.push_str(&r.table().markdown());
        for p in &r.problems {
            let _ = writeln!(s, "\n**Wrong build:** {p}");
        }
        s.push('\n');
    }
    s
}

/// The whole markdown report.
pub fn markdown(ctx: &Context, results: &[SizeResult], quick: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# blockbloom performance report, {} ({})\n",
        ctx.date, ctx.commit
    );
    let mut facts = Table::new(["", ""]).left_aligned();
    for (k, v) in ctx.facts() {
        let v = if k == "command" { format!("`{v}`") } else { v };
        facts.row(vec![k.to_string(), v]);
    }
    s.push_str(&facts.markdown());
    s.push('\n');

    let _ = writeln!(s, "## Method\n");
    let _ = writeln!(
        s,
        "All numbers were measured in this one run. Keys are `u64` from a SplitMix64 stream; \
         non-members come from a disjoint range of the same stream, so every false positive is \
         real. Each filter inserts all `n` keys, then answers the same lookups: members and \
         non-members interleaved at random, about half each. Times are wall-clock \
         (`std::time::Instant`) per key, hashing included, medians of the repetitions; \
         \"spread\" is (max - min) / median of those repetitions. blockbloom's batch rows call \
         `insert_batch`/`count_batch` on slices of {} keys; its single-key row and every peer \
         call one key at a time (the peers have no batch API). FPR is the share of non-member \
         lookups answered \"present\"; the target is 1%. fastbloom is sized by \
         `with_false_pos(0.01).expected_items(n)`; sbbf-rs-safe by `Filter::new(bits_per_key, n)` \
         with the smallest integer budget whose split-block model meets 1%, hashing each key \
         with XXH3-64 inside the timed loop.\n",
        results.first().map(|r| r.plan.batch).unwrap_or(1024)
    );
    if quick {
        let _ = writeln!(
            s,
            "This is a `--quick` report: the DRAM size was skipped and repetitions reduced.\n"
        );
    }
    let _ = writeln!(
        s,
        "The machine may be shared and noisy; compare ratios within a table rather than \
         absolute numbers across reports. Sizes are named by the brief (L2, L3, DRAM); the \
         line under each heading says where the filter actually fits on this CPU by the cache \
         sizes the kernel reports (a virtual machine may report caches that differ from the \
         hardware's).\n"
    );

    let _ = writeln!(s, "## Targets\n");
    s.push_str(
        &targets(
            results,
            if quick {
                "not measured (--quick)"
            } else {
                "not measured"
            },
        )
        .markdown(),
    );
    s.push('\n');

    for r in results {
        let _ = writeln!(s, "## {}\n", label(r.plan.n));
        for line in r.describe(&ctx.caches).lines() {
            let _ = writeln!(s, "- {line}");
        }
        s.push('\n');
        s.push_str(&r.table().markdown());
        for p in r.problems() {
            let _ = writeln!(s, "\n**Wrong answers:** {p}");
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use blockbloom_measure::concurrent::{Cell, ConcurrentPlan, MethodRow};
    use blockbloom_measure::suite::{SuitePlan, SuiteRow};
    use blockbloom_measure::timing::Timing;

    use super::*;
    use blockbloom_perf::peers::SUITE;

    /// Markdown table rows with the cells' padding removed (`| a | b |`), other lines as is.
    fn squeeze(md: &str) -> String {
        md.lines()
            .map(|l| {
                if l.starts_with('|') {
                    let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
                    format!("| {} |\n", cells.join(" | "))
                } else {
                    format!("{l}\n")
                }
            })
            .collect()
    }

    fn m(insert: f64, contains: f64, fp: usize) -> Measurement {
        Measurement {
            insert: Timing {
                samples: vec![insert],
            },
            contains: Timing {
                samples: vec![contains, contains * 1.1, contains * 0.9],
            },
            false_positives: fp,
            non_members: 100_000,
            false_negatives: 0,
            count_mismatch: false,
            size_in_bytes: 62_912,
            probes: 8,
        }
    }

    fn row(kind: Kind, name: &str, m: Measurement) -> SuiteRow {
        SuiteRow {
            kind,
            name: name.into(),
            api: "batch 1024".into(),
            m,
        }
    }

    #[test]
    fn targets_and_markdown_from_made_up_numbers() {
        let plan = SuitePlan {
            n: 50_000,
            fpr: 0.01,
            isas: vec![Isa::Scalar, Isa::Avx512],
            batch: 1024,
            queries: 200_000,
            seed: 1,
            reps: 3,
            single_key: true,
            peers: SUITE.to_vec(),
        };
        let r = SizeResult {
            plan,
            bytes: 62_912,
            probes: 8,
            config: "layout 8x32, hash mx32-64 (id 3)".to_string(),
            model_fpr: 0.0099,
            instance_fpr: 0.0101,
            non_members: 100_000,
            rows: vec![
                row(Kind::Kernel(Isa::Scalar), "scalar", m(10.0, 20.0, 990)),
                row(Kind::Kernel(Isa::Avx512), "avx512", m(2.0, 4.0, 1005)),
                row(Kind::SingleKey, "single", m(12.0, 15.0, 990)),
                row(
                    Kind::Peer(FASTBLOOM_SIP_SUITE.label),
                    "fb sip",
                    m(30.0, 30.0, 1000),
                ),
                row(
                    Kind::Peer(FASTBLOOM_FOLD_SUITE.label),
                    "fb fold",
                    m(10.0, 10.0, 1000),
                ),
                row(Kind::Peer(SBBF_SUITE.label), "sbbf", m(5.0, 5.0, 800)),
            ],
        };
        let t = targets(std::slice::from_ref(&r), "not measured").markdown();
        let t = squeeze(&t);
        let line = |needle: &str| t.lines().find(|l| l.contains(needle)).unwrap().to_string();
        // 20 / 4 = 5x against scalar: reached.
        assert!(
            line("L2 (n=50,000): best batch contains vs scalar").contains("5.00x"),
            "{t}"
        );
        assert!(line("L2 (n=50,000): best batch contains vs scalar").ends_with("| yes |"));
        // 30 / 4 = 7.5x against SipHash, 10 / 4 = 2.5x against foldhash.
        assert!(
            line("L2 (n=50,000): best batch contains vs fastbloom (SipHash)").ends_with("| yes |")
        );
        assert!(
            line("L2 (n=50,000): best batch contains vs fastbloom (foldhash)").ends_with("| no |")
        );
        assert!(line("DRAM (n=64,000,000): best batch").contains("not measured"));
        // 1.005% with a 95% interval of about 0.06%: above target, within noise.
        assert!(
            line("L2 (n=50,000): measured FPR").contains("within the 95% interval"),
            "{t}"
        );

        let ctx = Context::gather(Isa::Scalar, "blockbloom-perf");
        let md = squeeze(&markdown(&ctx, &[r], true));
        for needle in [
            "## Targets",
            "## L2 (n=50,000)",
            "| avx512 | batch 1024 |",
            "--quick",
            "| command | `cargo run --release -p blockbloom-perf --",
        ] {
            assert!(md.contains(needle), "{needle} missing:\n{md}");
        }
    }

    #[test]
    fn concurrent_targets_from_made_up_numbers() {
        let cell = |threads: usize, ns: f64| Cell {
            threads,
            timing: Timing { samples: vec![ns] },
            merge: None,
        };
        let row = |method: Method, ns: &[f64]| MethodRow {
            method,
            cells: ns
                .iter()
                .zip([1, 2, 4, 8])
                .map(|(&v, t)| cell(t, v))
                .collect(),
        };
        let r = ConcurrentResult {
            plan: ConcurrentPlan::new(100_000_000, 0.01, Isa::Scalar, &[2, 4, 8], &methods()),
            bytes: 126_000_000,
            peer_bytes: Some(120_000_000),
            rows: vec![
                row(Method::Plain, &[10.0]),
                row(Method::AtomicShared, &[20.0, 11.0, 11.0, 12.0]),
                row(Method::Partitioned, &[11.0, 6.0, 6.5, 7.0]),
                row(Method::SharedAtomic, &[20.0, 5.0, 11.0, 12.0]),
                row(Method::Peer(FASTBLOOM_SIP), &[80.0, 30.0, 30.0, 30.0]),
                row(Method::Peer(FASTBLOOM_FOLD), &[30.0, 20.0, 20.0, 20.0]),
            ],
            problems: Vec::new(),
        };
        let t = concurrent_targets(std::slice::from_ref(&r), "not measured").markdown();
        let t = squeeze(&t);
        let line = |needle: &str| t.lines().find(|l| l.contains(needle)).unwrap().to_string();
        // 20 / 11 = 1.82x
        assert!(line("2 threads vs 1 thread").contains("1.82x"), "{t}");
        assert!(line("2 threads vs 1 thread").ends_with("| yes |"), "{t}");
        // 10 / 20 = 0.5x < 0.6x
        assert!(line("vs plain insert_batch").contains("0.50x"), "{t}");
        assert!(line("vs plain insert_batch").ends_with("| no |"), "{t}");
        assert!(line("(SipHash-1-3, its default), 1 thread").ends_with("| yes |"));
        assert!(line("(foldhash), 1 thread").contains("1.50x"), "{t}");
        assert!(line("(foldhash), 2 threads").contains("1.82x"), "{t}");
        assert!(
            line("DRAM (n=100,000,000): par_insert_batch_with")
                .contains("Partitioned faster at 1, 4, 8 threads, SharedAtomic at 2"),
            "{t}"
        );
        assert!(line("L3 (n=1,000,000): par_insert_batch_with").contains("not measured"));
        let ctx = Context::gather(Isa::Scalar, "blockbloom-perf");
        let md = squeeze(&concurrent_markdown(&ctx, &[r], false));
        for needle in [
            "## Concurrent insert",
            "### Targets (concurrent insert)",
            "### DRAM (n=100,000,000)",
            "| fastbloom 0.17 AtomicBloomFilter, foldhash | scoped threads, single-key |",
        ] {
            assert!(md.contains(needle), "{needle} missing:\n{md}");
        }
    }
}
