// The sweep's tables: ns/key per series, fractions of the ceiling, the targets and the
// breakdown.

use blockbloom_measure::format::{self, percent};
use blockbloom_measure::table::Table;

use super::{
    CEIL_READ, CEIL_READ_THP, CONTAINS_TARGET, DRAM_MIN, Group, HASH_ONLY, INSERT_TARGET, Sweep,
    prehashed,
};

/// "32 KiB", "1 GiB".
pub(super) fn size_label(b: usize) -> String {
    format::bytes(b as u64)
}

pub(super) fn ns(v: f64) -> String {
    if v.is_nan() {
        "-".to_string()
    } else if v < 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.1}")
    }
}

/// ns/key of every series of `group`s for one metric, one row per series.
pub fn ns_table(s: &Sweep, contains: bool, groups: &[Group]) -> Table {
    let mut t = Table::new(
        std::iter::once("ns/key".to_string()).chain(s.sizes.iter().map(|&b| size_label(b))),
    );
    for se in s.series.iter().filter(|se| groups.contains(&se.group)) {
        let v = if contains { &se.contains } else { &se.insert };
        if v.iter().all(|x| x.is_nan()) {
            continue;
        }
        t.row(
            std::iter::once(se.name.clone())
                .chain(v.iter().map(|&x| ns(x)))
                .collect(),
        );
    }
    t
}

/// Throughput as a fraction of the (no-THP) read ceiling: `ceiling ns / subject ns`.
pub fn fraction_table(s: &Sweep) -> Table {
    let ceil = s.get(CEIL_READ);
    let mut t = Table::new(
        std::iter::once("fraction of the read ceiling".to_string())
            .chain(s.sizes.iter().map(|&b| size_label(b))),
    );
    for (metric, contains) in [("contains", true), ("insert", false)] {
        for se in s
            .series
            .iter()
            .filter(|se| matches!(se.group, Group::Kernel | Group::Peer))
        {
            let v = if contains { &se.contains } else { &se.insert };
            let cells = (0..s.sizes.len()).map(|i| {
                let c = ceil.map(|c| c.contains[i]).unwrap_or(f64::NAN);
                percent(c / v[i])
            });
            t.row(
                std::iter::once(format!("{} {metric}", se.name))
                    .chain(cells)
                    .collect(),
            );
        }
    }
    t
}

/// The targets at the DRAM-sized filters, for the best tier.
pub fn targets_table(s: &Sweep) -> Table {
    let mut t = Table::new(["target", "measured", "goal", "reached"]).left_aligned();
    let best = s.get(&s.best);
    for (i, &b) in s.sizes.iter().enumerate() {
        if b < DRAM_MIN {
            continue;
        }
        for (metric, contains, goal) in [
            ("batch contains", true, CONTAINS_TARGET),
            ("batch insert", false, INSERT_TARGET),
        ] {
            let read = s.get(CEIL_READ).map(|c| c.contains[i]).unwrap_or(f64::NAN);
            let thp = s
                .get(CEIL_READ_THP)
                .map(|c| c.contains[i])
                .unwrap_or(f64::NAN);
            let x = best
                .map(|se| {
                    if contains {
                        se.contains[i]
                    } else {
                        se.insert[i]
                    }
                })
                .unwrap_or(f64::NAN);
            let f = read / x;
            t.row(vec![
                format!("{}: {} {metric} / read ceiling", size_label(b), s.best),
                format!(
                    "{} ({} ns vs ceiling {} ns; vs the THP ceiling {} ns: {})",
                    percent(f),
                    ns(x),
                    ns(read),
                    ns(thp),
                    percent(thp / x)
                ),
                format!(">= {}", percent(goal)),
                if f.is_nan() {
                    "-"
                } else if f >= goal {
                    "yes"
                } else {
                    "no"
                }
                .to_string(),
            ]);
        }
    }
    if t.markdown().lines().count() <= 2 {
        t.row(vec![
            "DRAM-sized filters (>= 256 MiB)".to_string(),
            "not measured (--quick)".to_string(),
            format!(
                ">= {} contains, >= {} insert",
                percent(CONTAINS_TARGET),
                percent(INSERT_TARGET)
            ),
            "-".to_string(),
        ]);
    }
    t
}

/// Where the time goes: the best tier with and without hashing, hashing alone, the ceiling.
pub fn breakdown_table(s: &Sweep) -> Table {
    let mut t = Table::new(
        std::iter::once("contains ns/key".to_string())
            .chain(s.sizes.iter().map(|&b| size_label(b))),
    );
    let pre = prehashed(&s.best);
    let rows: [(String, &str, bool); 6] = [
        (
            format!("{} count_batch (hash + probe)", s.best),
            &s.best,
            true,
        ),
        (
            format!("{} count_hash_batch (probe only)", s.best),
            &pre,
            true,
        ),
        (HASH_ONLY.to_string(), HASH_ONLY, true),
        (
            format!("{} insert_batch (hash + probe)", s.best),
            &s.best,
            false,
        ),
        (
            format!("{} insert_hash_batch (probe only)", s.best),
            &pre,
            false,
        ),
        (CEIL_READ.to_string(), CEIL_READ, true),
    ];
    for (label, name, contains) in rows {
        if let Some(se) = s.get(name) {
            let v = if contains { &se.contains } else { &se.insert };
            t.row(
                std::iter::once(label)
                    .chain(v.iter().map(|&x| ns(x)))
                    .collect(),
            );
        }
    }
    t
}
