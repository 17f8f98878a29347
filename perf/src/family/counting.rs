//! "Counting filter: 4-bit vs 8-bit counters": memory per key, measured false-positive rate,
//! batch timings against the plain filter, saturation after a skewed multiset, and the
//! spectral estimate's error for standard and minimum-increase inserts.

use std::error::Error;
use std::fmt::Write as _;

use blockbloom::{BloomFilter, CounterBits, CountingBloomFilter};
use blockbloom_measure::format::percent;
use blockbloom_measure::keys::{key, members};
use blockbloom_measure::progress::Progress;
use blockbloom_measure::table::Table;
use blockbloom_measure::timing::Timing;

use super::{Scale, Tables};

/// Runs the section.
///
/// # Errors
/// A library error, or a message if a member is not found, a remove fails or an estimate is
/// below the true count.
pub fn section(
    scale: Scale,
    progress: &Progress,
    tables: &mut Tables,
) -> Result<String, Box<dyn Error>> {
    let mut out = String::new();
    sizes(scale, &mut out, tables)?;
    progress.step("counting: timings");
    timings(scale, &mut out, tables)?;
    progress.step("counting: skewed multiset");
    skewed(scale, &mut out, tables)?;
    Ok(out)
}

fn counting(n: u64, fpr: f64, bits: CounterBits) -> Result<CountingBloomFilter, blockbloom::Error> {
    CountingBloomFilter::builder()
        .capacity(n)
        .fpr(fpr)
        .counter_bits(bits)
        .build()
}

/// Bits per key of the sizing model's plans at 1% and 0.1%.
fn sizes(scale: Scale, out: &mut String, tables: &mut Tables) -> Result<(), Box<dyn Error>> {
    let n: u64 = if scale.quick { 100_000 } else { 1_000_000 };
    let mut t = Table::new(["target", "filter", "layout", "k", "bits/key", "x plain"]);
    for fpr in [0.01, 0.001] {
        let plain = BloomFilter::with_capacity(n, fpr)?;
        let plain_bits = plain.size_in_bytes() as f64 * 8.0 / n as f64;
        t.row(vec![
            percent(fpr),
            "plain".into(),
            plain.layout().to_string(),
            plain.probes().to_string(),
            format!("{plain_bits:.2}"),
            "1.00".into(),
        ]);
        for bits in CounterBits::ALL {
            let f = counting(n, fpr, bits)?;
            let b = f.size_in_bytes() as f64 * 8.0 / n as f64;
            t.row(vec![
                percent(fpr),
                format!("counting {bits}"),
                f.layout().to_string(),
                f.probes().to_string(),
                format!("{b:.2}"),
                format!("{:.2}", b / plain_bits),
            ]);
        }
    }
    let _ = writeln!(
        out,
        "Memory the sizing model asks for at {n} keys (exact model of each layout with \
         `sector bits / counter bits` positions per sector, same 2-sigma margin as the plain \
         filter). A counter takes `c` bits where the plain filter has one, and a block then \
         holds `512 / c` positions, which the blocked model charges for on top.\n\n{}",
        tables.markdown(&t)
    );
    Ok(())
}

/// Batch insert, query and remove at 1% for plain, 4-bit and 8-bit.
fn timings(scale: Scale, out: &mut String, tables: &mut Tables) -> Result<(), Box<dyn Error>> {
    let (sizes, reps): (&[usize], usize) = if scale.quick {
        (&[50_000], 3)
    } else {
        (&[50_000, 1_000_000], 7)
    };
    for &n in sizes {
        timings_at(n, reps, out, tables)?;
    }
    Ok(())
}

/// [`timings`] at `n` keys.
fn timings_at(
    n: usize,
    reps: usize,
    out: &mut String,
    tables: &mut Tables,
) -> Result<(), Box<dyn Error>> {
    let fpr = 0.01;
    let seed = 0xC0_FFEE;
    let m = members(n, seed)?;
    // Non-members: indices past the members' of the same stream (disjoint by construction).
    let queries: Vec<u64> = (n as u64..2 * n as u64).map(|i| key(seed, i)).collect();
    let mut t = Table::new([
        "filter",
        "KiB",
        "measured FPR",
        "model FPR",
        "insert ns/key",
        "contains ns/key",
        "remove ns/key",
    ]);

    let mut plain = BloomFilter::with_capacity(n as u64, fpr)?;
    let ins = Timing::repeat_prepared(reps, n, &mut plain, |f| f.clear(), |f| f.insert_batch(&m))
        .median();
    if plain.count_batch(&m) != n {
        return Err("plain filter: false negative".into());
    }
    let q = Timing::repeat(reps, n, || plain.count_batch(&queries)).median();
    t.row(vec![
        "plain".into(),
        (plain.size_in_bytes() >> 10).to_string(),
        format!(
            "{:.4}%",
            100.0 * plain.count_batch(&queries) as f64 / n as f64
        ),
        format!("{:.4}%", 100.0 * plain.model_fpr(n as u64)),
        format!("{ins:.1}"),
        format!("{q:.1}"),
        "-".into(),
    ]);

    for bits in CounterBits::ALL {
        let mut f = counting(n as u64, fpr, bits)?;
        let ins = Timing::repeat_prepared(reps, n, &mut f, |f| f.clear(), |f| f.insert_batch(&m))
            .median();
        if f.count_batch(&m) != n {
            return Err(format!("counting {bits}: false negative after insert").into());
        }
        let q = Timing::repeat(reps, n, || f.count_batch(&queries)).median();
        let fp = f.count_batch(&queries);
        let filled = f.clone();
        let mut g = f.clone();
        let mut removed = 0;
        let rem = Timing::repeat_prepared(
            reps,
            n,
            &mut g,
            |g| g.clone_from(&filled),
            |g| removed = g.remove_batch(&m).unwrap_or(0),
        )
        .median();
        if removed != n || g.total_count() != 0 {
            return Err(format!(
                "counting {bits}: removed {removed} of {n} members, {} counts left",
                g.total_count()
            )
            .into());
        }
        t.row(vec![
            format!("counting {bits}"),
            (f.size_in_bytes() >> 10).to_string(),
            format!("{:.4}%", 100.0 * fp as f64 / n as f64),
            format!("{:.4}%", 100.0 * f.model_fpr(n as u64)),
            format!("{ins:.1}"),
            format!("{q:.1}"),
            format!("{rem:.1}"),
        ]);
    }
    let _ = writeln!(
        out,
        "\n{n} distinct keys at a 1% target, then {n} non-member queries (measured FPR). \
         Batch calls (`insert_batch`, `count_batch`, `remove_batch`) on `u64` keys; medians \
         of {reps} runs; a remove run starts from a copy of the filled filter and must leave \
         every counter at zero.\n\n{}",
        tables.markdown(&t)
    );
    Ok(())
}

/// The true multiplicity of rank `r` (1-based): Zipf-like, `ceil(top / r)`.
fn multiplicity(top: u64, r: u64) -> u32 {
    top.div_ceil(r) as u32
}

/// A skewed multiset into standard and minimum-increase filters: saturation, estimate error,
/// and what sticky counters leave behind after every key is removed.
fn skewed(scale: Scale, out: &mut String, tables: &mut Tables) -> Result<(), Box<dyn Error>> {
    let (distinct, top) = if scale.quick {
        (20_000u64, 1_000u64)
    } else {
        (1_000_000, 100_000)
    };
    let seed = 0x5EED;
    let keys: Vec<u64> = (0..distinct).map(|i| key(seed, i)).collect();
    let occurrences: u64 = (1..=distinct).map(|r| multiplicity(top, r) as u64).sum();
    let mut t = Table::new([
        "counters",
        "insert",
        "saturated counters",
        "keys at max",
        "exact estimates",
        "mean overestimate",
        "after removing all: counts left",
        "keys still found",
    ]);
    for bits in CounterBits::ALL {
        for conservative in [false, true] {
            let mut f = counting(distinct, 0.01, bits)?;
            // Round `t` inserts every key whose multiplicity exceeds `t`: interleaved, so
            // minimum-increase inserts see the other keys' counts as they grow. Keys are in
            // rank order, so those keys are a prefix that shrinks from round to round.
            let mut live = keys.len();
            for round in 0.. {
                while live > 0 && multiplicity(top, live as u64) <= round {
                    live -= 1;
                }
                if live == 0 {
                    break;
                }
                if conservative {
                    keys[..live].iter().for_each(|k| f.insert_min_increase(k));
                } else {
                    f.insert_batch(&keys[..live]);
                }
            }
            let max = bits.max();
            let (mut exact, mut over, mut at_max) = (0u64, 0u64, 0u64);
            for (i, k) in keys.iter().enumerate() {
                let truth = multiplicity(top, i as u64 + 1).min(max);
                let est = f.estimate_count(k);
                if est < truth {
                    return Err(format!(
                        "counting {bits}: estimate {est} below the true count {truth}"
                    )
                    .into());
                }
                exact += (est == truth) as u64;
                over += (est - truth) as u64;
                at_max += (est == max) as u64;
            }
            let total_counters = f.num_blocks() * 512 / bits.bits() as u64;
            let saturated = f.saturated_counters();
            let (left, found) = if conservative {
                ("- (no remove)".to_string(), "-".to_string())
            } else {
                for (i, k) in keys.iter().enumerate() {
                    for _ in 0..multiplicity(top, i as u64 + 1) {
                        f.remove(k)
                            .map_err(|e| format!("counting {bits}: remove of a member: {e}"))?;
                    }
                }
                (
                    f.total_count().to_string(),
                    keys.iter().filter(|k| f.contains(*k)).count().to_string(),
                )
            };
            t.row(vec![
                bits.to_string(),
                if conservative {
                    "min-increase"
                } else {
                    "standard"
                }
                .into(),
                format!(
                    "{saturated} ({:.3}%)",
                    100.0 * saturated as f64 / total_counters as f64
                ),
                at_max.to_string(),
                format!("{:.2}%", 100.0 * exact as f64 / distinct as f64),
                format!("{:.4}", over as f64 / distinct as f64),
                left,
                found,
            ]);
        }
    }
    let _ = writeln!(
        out,
        "\nA skewed multiset: {distinct} distinct keys, key of rank `r` inserted \
         `ceil({top} / r)` times ({occurrences} inserts in all), into a filter sized for \
         {distinct} keys at 1%. The estimate is `estimate_count` (the key's smallest counter); \
         its error is measured against the true count capped at the counter maximum (an \
         estimate at the maximum means \"at least that many\"), and it is never below it. \
         Standard inserts are then all removed: saturated counters are sticky, so what they \
         keep is what remains (and the keys it keeps reporting).\n\n{}",
        tables.markdown(&t)
    );
    Ok(())
}
