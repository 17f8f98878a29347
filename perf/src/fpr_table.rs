//! Sizing tables: target false-positive rate against the rate measured on real filters, and
//! bits per key against the best-k bound of a 512-bit block. Shared by `sizing` and `report`.

use blockbloom::BloomFilter;
use blockbloom::layout::Layout;
use blockbloom::sizing;
use blockbloom_measure::format::percent;
use blockbloom_measure::interval::rate_interval95;
use blockbloom_measure::keys::key;
use blockbloom_measure::table::Table;

/// Targets the tables cover.
pub const TARGETS: [f64; 5] = [1e-1, 1e-2, 1e-3, 1e-4, 1e-5];
/// Filter sizes the measured table covers: a small filter (where one filter's rate scatters
/// most around the model) and a large one.
pub const MEASURED_SIZES: [u64; 2] = [50_000, 1_000_000];
/// Expected false positives per measurement: sets the query count (and so the noise).
const EXPECTED_FALSE_POSITIVES: f64 = 1_000.0;
/// Stream seeds: members, then non-members (disjoint streams of different seeds are disjoint
/// with overwhelming probability; they are also kept apart by the top bit).
const MEMBER_SEED: u64 = 0x5151;
const QUERY_SEED: u64 = 0xa7a7;

/// The unsectorized 512-bit best-k bound, bits per key, from DESIGN.md (after Putze, Sanders
/// and Singler 2007), for the targets it quotes.
const BOUND: [(f64, f64); 3] = [(1e-2, 9.90), (1e-3, 15.49), (1e-4, 21.9)];

/// Builds a filter per target and size with `with_capacity`, inserts `n` keys, and measures
/// the false-positive rate on enough non-members for about 1,000 expected false positives.
pub fn measured() -> Result<Table, blockbloom::Error> {
    let mut t = Table::new([
        "target",
        "n",
        "layout",
        "k",
        "bits/key",
        "model FPR",
        "this filter's exact FPR",
        "measured FPR (95% Wilson interval)",
        "measured / target",
    ]);
    for n in MEASURED_SIZES {
        let members: Vec<u64> = (0..n).map(|i| key(MEMBER_SEED, i) >> 1).collect();
        for target in TARGETS {
            let mut f = BloomFilter::with_capacity(n, target)?;
            f.insert_batch(&members);
            let q = (EXPECTED_FALSE_POSITIVES / target).round() as u64;
            let mut fp = 0usize;
            let mut chunk = Vec::with_capacity(1 << 16);
            let mut i = 0;
            while i < q {
                chunk.clear();
                chunk.extend((i..q.min(i + (1 << 16))).map(|j| key(QUERY_SEED, j) | 1 << 63));
                fp += f.count_batch(&chunk);
                i += chunk.len() as u64;
            }
            let rate = fp as f64 / q as f64;
            let (lo, hi) = rate_interval95(fp as u64, q);
            t.row(vec![
                percent(target),
                format!("{n}"),
                f.layout().to_string(),
                f.probes().to_string(),
                format!("{:.2}", f.bits_per_key()),
                percent(f.model_fpr(n)),
                percent(f.expected_fpr()),
                format!("{} ({}–{}) of {q}", percent(rate), percent(lo), percent(hi)),
                format!("{:.3}", rate / target),
            ]);
        }
    }
    Ok(t)
}

/// Bits per key each layout needs as the filter grows (the model's mean, no margin), the one
/// the planner picks, and how far above the best-k bound it is.
pub fn bits_per_key() -> Result<Table, blockbloom::Error> {
    let mut t = Table::new([
        "target",
        "unblocked filter (classic formula)",
        "512-bit best-k bound",
        "8x64 (k)",
        "4x128 (k)",
        "chosen at 1M keys (k)",
        "chosen vs bound",
    ]);
    let ln2sq = std::f64::consts::LN_2 * std::f64::consts::LN_2;
    for target in TARGETS {
        let (a, ka) = sizing::asymptotic_bits_per_key(target, Layout::Sectors8x64)?;
        let (b, kb) = sizing::asymptotic_bits_per_key(target, Layout::Sectors4x128)?;
        let p = sizing::plan(1_000_000, target)?;
        let bound = BOUND.iter().find(|(f, _)| *f == target).map(|b| b.1);
        t.row(vec![
            percent(target),
            format!("{:.2}", -target.ln() / ln2sq),
            bound.map_or("-".into(), |b| format!("{b:.2}")),
            format!("{a:.2} ({ka})"),
            format!("{b:.2} ({kb})"),
            format!("{:.2} ({} k={})", p.bits_per_key(), p.layout, p.probes),
            bound.map_or("-".into(), |b| {
                format!("{:+.1}%", (p.bits_per_key() / b - 1.0) * 100.0)
            }),
        ]);
    }
    Ok(t)
}

/// Both tables, measured once: `(measured, bits_per_key)`.
pub fn tables() -> Result<(Table, Table), blockbloom::Error> {
    Ok((measured()?, bits_per_key()?))
}

/// Both tables as a Markdown section.
pub fn markdown(measured: &Table, bits_per_key: &Table) -> String {
    format!(
        "## Sizing\n\nFalse-positive rate, target vs measured: `BloomFilter::with_capacity(n, target)`, \
         `n` u64 keys inserted, non-members queried until about {EXPECTED_FALSE_POSITIVES} false \
         positives are expected. \"Model\" is the sizing model's mean over all such filters; \
         \"exact\" is this filter's own rate computed from its bits.\n\n{}\n\
         Bits per key as filters grow (the model's mean), against the 512-bit best-k bound \
         quoted in DESIGN.md; \"chosen\" is the planner's pick at 1M keys, including its margin \
         for one filter's scatter.\n\n{}",
        measured.markdown(),
        bits_per_key.markdown()
    )
}
