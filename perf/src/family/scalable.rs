//! The scalable filter: stages, memory and measured false-positive rate against the target as
//! the keys grow to 100x (and 1000x) the initial capacity, and lookup cost against one plain
//! filter sized for the final key count.

use std::error::Error;
use std::fmt::Write as _;

use blockbloom::{BloomFilter, ScalableBloomFilter};
use blockbloom_measure::format::{bytes, group, percent};
use blockbloom_measure::keys::key;
use blockbloom_measure::progress::Progress;
use blockbloom_measure::table::Table;
use blockbloom_measure::timing::Timing;

use super::{Scale, Tables};

const MEMBER_SEED: u64 = 0x5ca1;
const QUERY_SEED: u64 = 0xab1e;
const TARGET: f64 = 0.01;

fn members(from: u64, to: u64) -> Vec<u64> {
    (from..to).map(|i| key(MEMBER_SEED, i) >> 1).collect()
}

fn non_members(n: u64) -> Vec<u64> {
    (0..n).map(|i| key(QUERY_SEED, i) | 1 << 63).collect()
}

pub fn section(
    scale: Scale,
    progress: &Progress,
    tables: &mut Tables,
) -> Result<String, Box<dyn Error>> {
    let n0: u64 = if scale.quick { 1_000 } else { 10_000 };
    let growths: &[u64] = if scale.quick {
        &[1, 10, 100]
    } else {
        &[1, 10, 100, 1000]
    };
    let reps = if scale.quick { 3 } else { 5 };
    let queries = non_members(if scale.quick { 200_000 } else { 2_000_000 });
    let configs = [(2.0, 0.85), (4.0, 0.9)];
    let mut out = String::new();

    let mut t = Table::new([
        "s, r",
        "keys",
        "x n0",
        "stages",
        "bytes",
        "bits/key",
        "measured FPR",
        "expected FPR (sum of stages)",
        "target",
        "plain filter for these keys: bits/key",
        "plain: measured FPR",
    ]);
    let mut timing = Table::new([
        "s, r",
        "keys",
        "stages",
        "scalable ns/key (members)",
        "plain ns/key (members)",
        "scalable ns/key (non-members)",
        "plain ns/key (non-members)",
    ]);
    for (s, r) in configs {
        let mut f = ScalableBloomFilter::builder()
            .initial_capacity(n0)
            .fpr(TARGET)
            .growth(s)
            .ratio(r)
            .build()?;
        let mut inserted = 0;
        for &g in growths {
            let n = n0 * g;
            progress.step(format_args!(
                "scalable s={s} r={r}: growing to {}",
                group(n)
            ));
            f.insert_batch(&members(inserted, n))?;
            inserted = n;
            let all = members(0, n);
            let found = f.count_batch(&all);
            if found != all.len() {
                return Err(format!(
                    "scalable: {} false negatives at {n} keys",
                    all.len() - found
                )
                .into());
            }
            let measured = f.count_batch(&queries) as f64 / queries.len() as f64;
            let mut plain = BloomFilter::with_capacity(n, TARGET)?;
            plain.insert_batch(&all);
            let plain_fpr = plain.count_batch(&queries) as f64 / queries.len() as f64;
            t.row(vec![
                format!("{s}, {r}"),
                group(n),
                g.to_string(),
                f.stages().len().to_string(),
                bytes(f.size_in_bytes() as u64),
                format!("{:.2}", f.size_in_bytes() as f64 * 8.0 / n as f64),
                percent(measured),
                percent(f.expected_fpr()),
                percent(TARGET),
                format!("{:.2}", plain.bits_per_key()),
                percent(plain_fpr),
            ]);
            if g == *growths.last().expect("non-empty") {
                let sample = &all[..all.len().min(queries.len())];
                timing.row(vec![
                    format!("{s}, {r}"),
                    group(n),
                    f.stages().len().to_string(),
                    format!(
                        "{:.1}",
                        Timing::repeat(reps, sample.len(), || f.count_batch(sample)).median()
                    ),
                    format!(
                        "{:.1}",
                        Timing::repeat(reps, sample.len(), || plain.count_batch(sample)).median()
                    ),
                    format!(
                        "{:.1}",
                        Timing::repeat(reps, queries.len(), || f.count_batch(&queries)).median()
                    ),
                    format!(
                        "{:.1}",
                        Timing::repeat(reps, queries.len(), || plain.count_batch(&queries))
                            .median()
                    ),
                ]);
            }
        }
    }
    let _ = writeln!(
        out,
        "`ScalableBloomFilter` with initial capacity n0 = {}, compound target {}, growth `s` \
         and ratio `r` as given (Almeida et al. 2007: `r` in 0.8-0.9, `s` = 2 or 4), fed \
         distinct SplitMix64 keys with `insert_batch` up to the given multiple of n0. The \
         measured FPR is over {} non-members; *expected* is the sum of the stages' exact \
         expected rates (`expected_fpr`), an upper bound on the compound rate. The plain \
         columns are one `BloomFilter::with_capacity(keys, {TARGET})`, sized knowing the final \
         count in advance. Every member was found at every step (the section fails \
         otherwise).\n",
        group(n0),
        percent(TARGET),
        group(queries.len() as u64),
    );
    let _ = writeln!(out, "{}", tables.markdown(&t));
    let _ = writeln!(
        out,
        "Lookup cost at the largest size, `count_batch`, median of {reps} runs: members (most \
         are resolved by the newest, largest stage, which is asked first) and non-members \
         (every stage is asked). The plain filter is the one above, sized for the final \
         count.\n"
    );
    let _ = writeln!(out, "{}", tables.markdown(&timing));
    Ok(out)
}
