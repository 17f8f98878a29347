//! The classic filter and its relatives: the classic (unblocked) filter against the blocked
//! plain filter (space and speed), the variable-increment counting filter against the
//! counting filter at equal memory, and the Floom experiment.

use std::error::Error;
use std::fmt::Write as _;

use blockbloom::variable::model_fpr;
use blockbloom::{BloomFilter, ClassicBloomFilter, CounterBits, CountingBloomFilter};
use blockbloom::{VariableIncrementBloomFilter, hash};
use blockbloom_measure::format::{bytes, group, percent};
use blockbloom_measure::keys::key;
use blockbloom_measure::progress::Progress;
use blockbloom_measure::table::Table;
use blockbloom_measure::timing::Timing;

use super::{Scale, Tables};

const MEMBER_SEED: u64 = 0xc1a5;
const QUERY_SEED: u64 = 0x51c;

fn members(n: u64) -> Vec<u64> {
    (0..n).map(|i| key(MEMBER_SEED, i) >> 1).collect()
}

fn non_members(n: u64) -> Vec<u64> {
    (0..n).map(|i| key(QUERY_SEED, i) | 1 << 63).collect()
}

fn rate(found: usize, of: usize) -> f64 {
    found as f64 / of as f64
}

/// A row's timings of the filter `full` (holding `keys`) and its empty form `empty`, medians
/// of `reps` runs in ns/key: `insert_batch` of `keys` (cleared before each run), `count_batch`
/// of `keys`, `count_batch` of `queries`.
macro_rules! timings {
    ($empty:expr, $full:expr, $keys:expr, $queries:expr, $reps:expr) => {{
        let ns = |t: Timing| format!("{:.2}", t.median());
        let (keys, queries) = ($keys, $queries);
        let mut empty = $empty.clone();
        [
            ns(Timing::repeat_prepared(
                $reps,
                keys.len(),
                &mut empty,
                |f| f.clear(),
                |f| f.insert_batch(keys),
            )),
            ns(Timing::repeat($reps, keys.len(), || {
                $full.count_batch(keys)
            })),
            ns(Timing::repeat($reps, queries.len(), || {
                $full.count_batch(queries)
            })),
        ]
    }};
}

/// Classic against blocked at the same target: bits per key, measured rate, batch speed.
pub fn section(
    scale: Scale,
    progress: &Progress,
    tables: &mut Tables,
) -> Result<String, Box<dyn Error>> {
    let n: u64 = if scale.quick { 100_000 } else { 1_000_000 };
    let reps = if scale.quick { 3 } else { 7 };
    let keys = members(n);
    let queries = non_members(if scale.quick { 500_000 } else { 4_000_000 });
    let mut t = Table::new([
        "target",
        "filter",
        "k",
        "bits/key",
        "measured FPR",
        "insert_batch ns/key",
        "contains_batch ns/key (members)",
        "contains_batch ns/key (non-members)",
    ]);
    for p in [0.01, 0.001] {
        progress.step(format_args!("classic vs blocked at {}", percent(p)));
        let classic = ClassicBloomFilter::with_capacity(n, p)?;
        let mut c = classic.clone();
        c.insert_batch(&keys);
        if c.count_batch(&keys) != keys.len() {
            return Err("classic: a false negative".into());
        }
        let mut row = vec![
            percent(p),
            "classic".into(),
            c.probes().to_string(),
            format!("{:.2}", c.num_bits() as f64 / n as f64),
            percent(rate(c.count_batch(&queries), queries.len())),
        ];
        row.extend(timings!(classic, c, &keys, &queries, reps));
        t.row(row);
        let plain = BloomFilter::with_capacity(n, p)?;
        let mut b = plain.clone();
        b.insert_batch(&keys);
        let mut row = vec![
            percent(p),
            "blocked (BloomFilter)".into(),
            b.probes().to_string(),
            format!("{:.2}", b.bits_per_key()),
            percent(rate(b.count_batch(&queries), queries.len())),
        ];
        row.extend(timings!(plain, b, &keys, &queries, reps));
        t.row(row);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "`ClassicBloomFilter::with_capacity(n, p)` (the textbook m = -n ln p / (ln 2)^2, \
         k = round((m/n) ln 2)) against `BloomFilter::with_capacity(n, p)` (512-bit blocks, \
         sized by the exact model), n = {} SplitMix64 keys, {} non-member queries; timings are \
         medians of {reps} runs on the active kernel. The classic filter needs fewer bits for \
         a target; every one of its probes is a cache line of its own, where the blocked \
         filter reads one line per key.\n",
        group(n),
        group(queries.len() as u64),
    );
    let _ = writeln!(out, "{}", tables.markdown(&t));
    Ok(out)
}

/// Variable-increment against counting at equal memory, and the paper's model.
pub fn variable_section(
    scale: Scale,
    progress: &Progress,
    tables: &mut Tables,
) -> Result<String, Box<dyn Error>> {
    let n: u64 = if scale.quick { 20_000 } else { 200_000 };
    let keys = members(n);
    let queries = non_members(if scale.quick { 400_000 } else { 4_000_000 });
    let mut t = Table::new([
        "target",
        "filter",
        "counters",
        "bytes",
        "k",
        "measured FPR",
        "model FPR",
    ]);
    for p in [0.05, 0.01, 0.001] {
        progress.step(format_args!("variable increment at {}", percent(p)));
        let mut vi = VariableIncrementBloomFilter::with_capacity(n, p)?;
        for k in &keys {
            vi.insert(k);
        }
        let vi_fp = rate(
            queries.iter().filter(|q| vi.contains(*q)).count(),
            queries.len(),
        );
        let m = vi.num_counters();
        t.row(vec![
            percent(p),
            "variable increment, D = {4..7}".into(),
            group(m),
            bytes(vi.size_in_bytes() as u64),
            vi.probes().to_string(),
            percent(vi_fp),
            percent(vi.model_fpr(n)),
        ]);
        // An unblocked counting filter of the same counters answers as the classic filter of
        // its non-zero counters: the classic filter with one bit per counter, best k.
        let k = ((m as f64 / n as f64) * std::f64::consts::LN_2)
            .round()
            .max(1.0) as u32;
        let mut cbf = ClassicBloomFilter::new(m, k)?;
        cbf.insert_batch(&keys);
        t.row(vec![
            percent(p),
            "counting, same counters (unblocked)".into(),
            group(m),
            bytes(vi.size_in_bytes() as u64),
            k.to_string(),
            percent(rate(cbf.count_batch(&queries), queries.len())),
            percent(model_fpr(m, k, 1, n)),
        ]);
        let mut counting = CountingBloomFilter::builder()
            .capacity(n)
            .fpr(p)
            .counter_bits(CounterBits::Four)
            .build()?;
        counting.insert_batch(&keys);
        t.row(vec![
            percent(p),
            "CountingBloomFilter (blocked) at the target".into(),
            group(counting.size_in_bytes() as u64 * 2),
            bytes(counting.size_in_bytes() as u64),
            counting.probes().to_string(),
            percent(rate(counting.count_batch(&queries), queries.len())),
            "".into(),
        ]);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "`VariableIncrementBloomFilter::with_capacity(n, p)` (Rottenstreich, Kanizo, Keslassy, \
         INFOCOM 2012; 4-bit counters, increments from D_4 = {{4, 5, 6, 7}}, the fewest counters \
         whose model rate meets p) against counting filters, n = {} keys, {} non-member \
         queries. *Same counters* is an unblocked counting filter with as many 4-bit counters \
         (equal memory) and the best k for them; its model is the classic rate \
         (1 - (1 - 1/m)^(kn))^k. The last row is the crate's blocked `CountingBloomFilter` \
         sized for the target, for its memory. The model column checks the paper's analysis \
         (`blockbloom::variable::model_fpr`) against the measured rate.\n",
        group(n),
        group(queries.len() as u64),
    );
    let _ = writeln!(out, "{}", tables.markdown(&t));
    Ok(out)
}

/// The Floom variant: a classic filter plus a side table of 2^b bits indexed by the set of
/// the b regions the key's probes fell in.
struct Floom {
    main: Vec<u64>,
    side: Vec<u64>,
    m: u64,
    k: u32,
    b: u32,
    /// `b * 2^64 / m`: region `i` is the positions `p` with `p * scale >> 64 == i`.
    scale: u128,
}

impl Floom {
    fn new(m: u64, k: u32, b: u32) -> Floom {
        Floom {
            main: vec![0; m.div_ceil(64) as usize],
            side: vec![0; (1usize << b).div_ceil(64)],
            m,
            k,
            b,
            scale: ((b as u128) << 64) / m as u128,
        }
    }

    /// The positions (the classic filter's double hashing) and the region mask.
    fn probe(&self, x: u64) -> ([u64; 32], u64) {
        let h = hash::hash_u64(x, 0);
        let m = self.m;
        let mut p = ((h as u128 * m as u128) >> 64) as u64;
        let d = ((h.rotate_left(32) as u128 * m as u128) >> 64) as u64;
        let mut out = [0u64; 32];
        let mut regions = 0u64;
        for o in out.iter_mut().take(self.k as usize) {
            *o = p;
            // floor(p * b / m) by a multiply with a precomputed scale (no division per probe).
            regions |= 1 << (((p as u128 * self.scale) >> 64) as u64).min(self.b as u64 - 1);
            p += d;
            p = std::hint::select_unpredictable(p >= m, p.wrapping_sub(m), p);
        }
        (out, regions)
    }

    fn insert(&mut self, x: u64) {
        let (p, r) = self.probe(x);
        for &p in &p[..self.k as usize] {
            self.main[(p / 64) as usize] |= 1 << (p % 64);
        }
        self.side[(r / 64) as usize] |= 1 << (r % 64);
    }

    fn contains(&self, x: u64) -> bool {
        let (p, r) = self.probe(x);
        // Branch-free, as the classic filter's query.
        let mut all = self.side[(r / 64) as usize] >> (r % 64);
        for &p in &p[..self.k as usize] {
            all &= self.main[(p / 64) as usize] >> (p % 64);
        }
        all & 1 == 1
    }
}

/// The Floom experiment: the variant against classic filters of its main size and of its
/// total size, false-positive rate against n, and speed.
pub fn floom_section(
    scale: Scale,
    progress: &Progress,
    tables: &mut Tables,
) -> Result<String, Box<dyn Error>> {
    let n0: u64 = if scale.quick { 20_000 } else { 100_000 };
    let queries = non_members(if scale.quick { 200_000 } else { 2_000_000 });
    let reps = if scale.quick { 3 } else { 5 };
    let mut t = Table::new([
        "target",
        "b",
        "keys (x n0)",
        "Floom: main + side bits",
        "Floom FPR",
        "classic, main size: FPR",
        "classic, total size: FPR",
    ]);
    let mut speed = Table::new([
        "target",
        "b",
        "Floom insert ns/key",
        "classic insert ns/key",
        "Floom query ns/key",
        "classic query ns/key",
    ]);
    for p in [0.05, 0.01] {
        let design = ClassicBloomFilter::with_capacity(n0, p)?;
        let (m, k) = (design.num_bits(), design.probes());
        for b in [8u32, 16] {
            progress.step(format_args!("Floom b={b} at {}", percent(p)));
            let side = 1u64 << b;
            for mult in [0.5, 1.0, 1.5, 2.0] {
                let n = (n0 as f64 * mult) as u64;
                let keys = members(n);
                let mut f = Floom::new(m, k, b);
                keys.iter().for_each(|&x| f.insert(x));
                if !keys.iter().all(|&x| f.contains(x)) {
                    return Err("Floom: a false negative".into());
                }
                let mut main = ClassicBloomFilter::new(m, k)?;
                main.insert_batch(&keys);
                // The same memory as the variant; k re-optimised for it.
                let total_k = (((m + side) as f64 / n0 as f64) * std::f64::consts::LN_2)
                    .round()
                    .max(1.0) as u32;
                let mut total = ClassicBloomFilter::new(m + side, total_k)?;
                total.insert_batch(&keys);
                t.row(vec![
                    percent(p),
                    b.to_string(),
                    format!("{} ({mult})", group(n)),
                    format!("{} + {}", group(m), group(side)),
                    percent(rate(
                        queries.iter().filter(|&&q| f.contains(q)).count(),
                        queries.len(),
                    )),
                    percent(rate(main.count_batch(&queries), queries.len())),
                    percent(rate(total.count_batch(&queries), queries.len())),
                ]);
            }
            let keys = members(n0);
            let mut f = Floom::new(m, k, b);
            keys.iter().for_each(|&x| f.insert(x));
            let mut c = ClassicBloomFilter::new(m, k)?;
            keys.iter()
                .for_each(|x| c.insert_hash(hash::hash_u64(*x, 0)));
            speed.row(vec![
                percent(p),
                b.to_string(),
                format!(
                    "{:.1}",
                    Timing::repeat(reps, keys.len(), || keys.iter().for_each(|&x| f.insert(x)))
                        .median()
                ),
                format!(
                    "{:.1}",
                    Timing::repeat(reps, keys.len(), || keys
                        .iter()
                        .for_each(|&x| c.insert_hash(hash::hash_u64(x, 0))))
                    .median()
                ),
                format!(
                    "{:.1}",
                    Timing::repeat(reps, queries.len(), || queries
                        .iter()
                        .filter(|&&q| f.contains(q))
                        .count())
                    .median()
                ),
                format!(
                    "{:.1}",
                    Timing::repeat(reps, queries.len(), || queries
                        .iter()
                        .filter(|&&q| c.contains_hash(hash::hash_u64(q, 0)))
                        .count())
                    .median()
                ),
            ]);
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "The Floom variant (a seminar paper's proposal, reported there not to pay): the m bits \
         of a classic filter (textbook design for n0 = {} at the target) are split into b \
         equal regions; an insert also sets, in a side table of 2^b bits, the bit whose index \
         has bit i set when some probe fell in region i; a query also requires that bit. It \
         is compared with the classic filter of the same main size (the side table's gain) \
         and with a classic filter of the same total size, k re-optimised (what the side \
         table's bits would buy spent on the main array), at loads from half to twice the \
         design. {} non-member queries; every member was found (the section fails otherwise).\n",
        group(n0),
        group(queries.len() as u64),
    );
    let _ = writeln!(out, "{}", tables.markdown(&t));
    let _ = writeln!(
        out,
        "Single-key speed at n0 keys, median of {reps} runs (both scalar, one key at a time, \
         the same hash):\n"
    );
    let _ = writeln!(out, "{}", tables.markdown(&speed));
    Ok(out)
}
