//! "Bloomier filter": space against the binary fuse asymptote, build and lookup time, and the
//! measured absent-detection rate against `1 - 2^-fingerprint_bits`.

use std::error::Error;
use std::fmt::Write as _;

use blockbloom::{BloomFilter, BloomierFilter};
use blockbloom_measure::keys::key;
use blockbloom_measure::progress::Progress;
use blockbloom_measure::table::Table;
use blockbloom_measure::timing::Timing;

use super::{Scale, Tables};

/// Key stream of the members (indices `0..n`) and non-members (indices `n..`).
const STREAM: u64 = 0xb100_3134;

/// A member's value: some of its key's bits, cut to `bits`.
fn value_of(k: u64, bits: u32) -> u64 {
    if bits == 64 {
        k.rotate_left(17)
    } else {
        k.rotate_left(17) & ((1 << bits) - 1)
    }
}

/// One size at one width: the filter, its build time, and checks that every member's value
/// comes back (single and batch); returns the table cells.
struct MapRun {
    map: BloomierFilter,
    build_ns: f64,
    get_batch_ns: f64,
    get_ns: f64,
    plain_count_ns: f64,
}

fn run_map(
    members: &[u64],
    vb: u32,
    fb: u32,
    reps: usize,
    timed: bool,
) -> Result<MapRun, Box<dyn Error>> {
    let values: Vec<u64> = members.iter().map(|&k| value_of(k, vb)).collect();
    let n = members.len();
    let build = || BloomierFilter::builder(vb, fb).build_batch(members, &values);
    let map = build()?;
    let build_ns = if timed {
        Timing::repeat(reps, n, || build().map(|m| m.len())).median()
    } else {
        f64::NAN
    };
    let mut out = vec![None; n];
    map.get_batch(members, &mut out);
    for ((k, v), o) in members.iter().zip(&values).zip(&out) {
        if *o != Some(*v) {
            return Err(format!("Bloomier get_batch: key {k} gave {o:?}, stored {v}").into());
        }
        if map.get(k) != Some(*v) {
            return Err(format!("Bloomier get: key {k} gave {:?}, stored {v}", map.get(k)).into());
        }
    }
    let (mut get_batch_ns, mut get_ns, mut plain_count_ns) = (f64::NAN, f64::NAN, f64::NAN);
    if timed {
        get_batch_ns = Timing::repeat(reps, n, || map.get_batch(members, &mut out)).median();
        get_ns = Timing::repeat(reps, n, || {
            members.iter().filter_map(|k| map.get(k)).sum::<u64>()
        })
        .median();
        let mut plain = BloomFilter::with_capacity(n as u64, 0.01)?;
        plain.insert_batch(members);
        plain_count_ns = Timing::repeat(reps, n, || plain.count_batch(members)).median();
    }
    Ok(MapRun {
        map,
        build_ns,
        get_batch_ns,
        get_ns,
        plain_count_ns,
    })
}

/// Fraction of `others` (none of them members) that `map` reports absent.
fn absent_rate(map: &BloomierFilter, others: &[u64]) -> f64 {
    let mut out = vec![None; others.len()];
    map.get_batch(others, &mut out);
    out.iter().filter(|o| o.is_none()).count() as f64 / others.len() as f64
}

/// The binary fuse sizing's slots per key for large maps.
const ASYMPTOTE: f64 = 1.125;

pub fn section(
    scale: Scale,
    progress: &Progress,
    tables: &mut Tables,
) -> Result<String, Box<dyn Error>> {
    let sizes: &[usize] = if scale.quick {
        &[1_000, 100_000]
    } else {
        &[1_000, 100_000, 1_000_000, 10_000_000]
    };
    let reps = if scale.quick { 3 } else { 5 };
    let queries = if scale.quick { 100_000 } else { 1_000_000 };
    let (vb, fb) = (8u32, 8u32);
    let largest = *sizes.last().expect("sizes");
    let all: Vec<u64> = (0..largest as u64).map(|i| key(STREAM, i)).collect();
    let others: Vec<u64> = (0..queries as u64)
        .map(|i| key(STREAM, largest as u64 + i))
        .collect();

    let mut text = String::new();
    let _ = writeln!(
        text,
        "A static map from `u64` keys to {vb}-bit values with {fb}-bit fingerprints ({} bits \
         per slot): a 3-wise xor table in the binary fuse layout (`BloomierFilter`). Keys are \
         a SplitMix64 stream; every member's value is checked through `get` and `get_batch` \
         (a wrong value fails the run). Times are medians of {reps} runs, per key: `build` is \
         `BloomierBuilder::build_batch` (hash, sort, peel, assign), `get_batch` looks up \
         every member into a reused buffer, `get` is the single-key call, `plain count` is \
         a plain `BloomFilter` at 1% answering membership only (`count_batch`) for the same \
         keys. `absent` is the fraction of {queries} non-members answered `None`.\n",
        vb + fb
    );
    let mut t = Table::new([
        "keys",
        "slots/key",
        "bits/entry",
        "÷ (value+fp bits)",
        "÷ 1.125 (asymptote)",
        "build ns/key",
        "get_batch ns/key",
        "get ns/key",
        "plain count ns/key",
        "absent (expected)",
    ]);
    for &n in sizes {
        progress.step(format_args!("bloomier: {n} keys"));
        let m = run_map(&all[..n], vb, fb, reps, true)?;
        let per_slot = m.map.bits_per_entry() / (vb + fb) as f64;
        t.row(vec![
            n.to_string(),
            format!("{:.4}", m.map.slots() as f64 / n as f64),
            format!("{:.3}", m.map.bits_per_entry()),
            format!("{per_slot:.4}"),
            format!("{:.4}", per_slot / ASYMPTOTE),
            format!("{:.1}", m.build_ns),
            format!("{:.1}", m.get_batch_ns),
            format!("{:.1}", m.get_ns),
            format!("{:.1}", m.plain_count_ns),
            format!(
                "{:.5} ({:.5})",
                absent_rate(&m.map, &others),
                1.0 - m.map.false_positive_rate()
            ),
        ]);
    }
    text.push_str(&tables.markdown(&t));

    let n = if scale.quick { 100_000 } else { 1_000_000 };
    let _ = writeln!(
        text,
        "\nWidths at {n} keys (space and absent detection only; `fp` 0 is a pure static \
         function, which gives every non-member some value):\n"
    );
    let mut w = Table::new([
        "value bits",
        "fp bits",
        "bits/entry",
        "÷ (value+fp bits)",
        "absent",
        "expected 1 - 2^-fp",
    ]);
    for (vb, fb) in [(1u32, 0u32), (1, 8), (4, 4), (8, 16), (16, 0), (32, 32)] {
        progress.step(format_args!("bloomier: widths {vb}+{fb}"));
        let m = run_map(&all[..n], vb, fb, reps, false)?;
        w.row(vec![
            vb.to_string(),
            fb.to_string(),
            format!("{:.3}", m.map.bits_per_entry()),
            format!("{:.4}", m.map.bits_per_entry() / (vb + fb) as f64),
            format!("{:.6}", absent_rate(&m.map, &others)),
            format!("{:.6}", 1.0 - m.map.false_positive_rate()),
        ]);
    }
    text.push_str(&tables.markdown(&w));
    Ok(text)
}
