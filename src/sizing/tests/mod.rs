use super::exact::{InBlock, MAX_POWER};
use super::*;
use alloc::string::String;

/// The unsectorized 512-bit best-k bound (DESIGN.md, from Putze et al.).
const BOUND: [(f64, f64); 3] = [(1e-2, 9.90), (1e-3, 15.49), (1e-4, 21.9)];

#[test]
fn chosen_plans_within_three_percent_of_best_k_bound() {
    for (fpr, bound) in BOUND {
        let p = plan(1 << 26, fpr).unwrap();
        let bits = p.bits_per_key();
        assert!(
            bits <= bound * 1.03,
            "fpr {fpr}: {bits} bits/key vs bound {bound}"
        );
        assert!(
            bits >= bound * 0.995,
            "fpr {fpr}: {bits} below the bound {bound}?"
        );
    }
}

#[test]
fn layouts_against_the_bound() {
    // 4x128 stays within 2% of the bound everywhere; 8x64 only where k = 8 fits.
    for (fpr, bound) in BOUND {
        let (bits, _) = asymptotic_bits_per_key(fpr, Layout::Sectors4x128).unwrap();
        assert!(bits <= bound * 1.02, "4x128 at {fpr}: {bits}");
    }
    let (bits, k) = asymptotic_bits_per_key(1e-2, Layout::Sectors8x64).unwrap();
    assert!(bits <= 9.90 * 1.03 && k == 8, "{bits} {k}");
    let (bits, _) = asymptotic_bits_per_key(1e-4, Layout::Sectors8x64).unwrap();
    assert!(
        bits > 21.9 * 1.03,
        "8x64 at 0.01% should miss the 3% band: {bits}"
    );
}

#[test]
fn chosen_layouts() {
    let l = |fpr| {
        let p = plan(1 << 26, fpr).unwrap();
        (p.layout, p.probes)
    };
    assert_eq!(l(1e-1), (Layout::Sectors4x128, 4));
    assert_eq!(l(1e-2), (Layout::Sectors8x64, 8));
    assert_eq!(l(1e-3), (Layout::Sectors8x64, 8));
    assert_eq!(l(1e-4), (Layout::Sectors4x128, 12));
}

fn moment_brute_force(model: &InBlock, m: u32, e: usize) -> f64 {
    // E[(X/W)^e] by dynamic programming over the number of set bits.
    let w = model.w as usize;
    let mut dist = vec![0.0; w + 1];
    dist[0] = 1.0;
    for _ in 0..m {
        let mut next = vec![0.0; w + 1];
        for (x, p) in dist.iter().enumerate() {
            next[x] += p * x as f64 / w as f64;
            if x < w {
                next[x + 1] += p * (w - x) as f64 / w as f64;
            }
        }
        dist = next;
    }
    dist.iter()
        .enumerate()
        .map(|(x, p)| p * (x as f64 / w as f64).powi(e as i32))
        .sum()
}

#[test]
fn sector_moments_match_brute_force() {
    for (layout, unit) in Layout::ALL
        .into_iter()
        .flat_map(|l| [(l, 1), (l, 4), (l, 8)])
    {
        for k in [layout.sectors(), 2 * layout.sectors()] {
            let model = InBlock::new(layout, k, unit);
            let step = model.step();
            for c in [0u32, 1, 5, 20, 60] {
                let mut pw = [1.0; MAX_POWER + 1];
                for (p, s) in pw.iter_mut().zip(&step) {
                    *p = s.powi(c as i32);
                }
                let (mb, m2b) = model.sector_moments(&pw);
                for (e, got) in [(model.b, mb), (2 * model.b, m2b)] {
                    let m = model.b as u32 * c;
                    let want = moment_brute_force(&model, m, e);
                    assert!(
                        (got - want).abs() < 1e-12,
                        "{layout}/{unit} k={k} c={c} e={e}: {got} vs {want}"
                    );
                }
            }
        }
    }
}

#[test]
fn plan_is_minimal_and_meets_target_with_margin() {
    for fpr in [1e-1, 1e-2, 1e-3, 1e-4, 1e-5] {
        let p = plan(100_000, fpr).unwrap();
        let mean = false_positive_rate(100_000, p.num_blocks, p.layout, p.probes);
        let sd = fpr_std_dev(100_000, p.num_blocks, p.layout, p.probes);
        assert!(mean + MARGIN_SD * sd <= fpr, "{fpr}: {mean} + 2 x {sd}");
        let goal = Goal {
            fpr,
            margin_sd: MARGIN_SD,
            unit_bits: 1,
        };
        assert!(!reference::meets(
            100_000,
            p.num_blocks - 1,
            p.layout,
            p.probes,
            goal
        ));
    }
}

#[test]
fn margin_costs_little_for_large_filters() {
    let small = plan(10_000, 0.01).unwrap().bits_per_key();
    let large = plan(100_000_000, 0.01).unwrap().bits_per_key();
    assert!(small > large, "{small} vs {large}");
    assert!(large < 10.10 * 1.005, "{large}");
}

#[test]
fn rejects_bad_fpr_and_probes() {
    for fpr in [0.0, -0.1, 1.0, 1.5, f64::NAN, f64::INFINITY, 1e-12] {
        assert!(matches!(plan(10, fpr), Err(Error::InvalidFpr(_))), "{fpr}");
    }
    assert_eq!(
        plan_with(10, 0.01, Some(Layout::Sectors8x64), Some(12)),
        Err(Error::InvalidProbes(12))
    );
    assert_eq!(
        plan_with(10, 0.01, None, Some(6)),
        Err(Error::InvalidProbes(6))
    );
}

/// The constructors' remembered plans and shapes are the planner's, hit or miss, with
/// more distinct inputs in turn than the memo holds; errors are the planner's too.
#[test]
fn constructors_plan_as_the_planner() {
    let inputs: Vec<(u64, f64, Option<Layout>, u32)> = (0..20u64)
        .map(|i| {
            let layout = [None, Some(Layout::Sectors4x128)][(i % 2) as usize];
            let unit = [1, 1, 4][(i % 3) as usize];
            (1 + i * 997, 10f64.powi(-1 - (i % 7) as i32), layout, unit)
        })
        .collect();
    let probes = None;
    for _ in 0..3 {
        for &(n, p, layout, unit) in &inputs {
            let want = plan_for(
                n,
                Goal {
                    fpr: p,
                    margin_sd: MARGIN_SD,
                    unit_bits: unit,
                },
                layout,
                probes,
            );
            assert_eq!(plan_for_constructor(n, p, layout, probes, unit), want);
            for _ in 0..2 {
                assert_eq!(
                    best_shape_for_constructor(n, n / 50 + 1, layout, probes),
                    best_shape(n, n / 50 + 1, layout, probes)
                );
            }
        }
    }
    for _ in 0..2 {
        assert_eq!(
            plan_for_constructor(10, 1.5, None, None, 1),
            Err(Error::InvalidFpr(1.5))
        );
        assert_eq!(
            plan_for_constructor(10, 0.01, None, Some(6), 1),
            plan_with(10, 0.01, None, Some(6))
        );
    }
}

#[test]
fn too_many_blocks_is_an_error() {
    assert!(matches!(
        plan(u64::MAX / 2, 0.01),
        Err(Error::TooManyBlocks { .. })
    ));
    assert!(matches!(
        plan(1 << 40, 0.01),
        Err(Error::TooManyBlocks { .. })
    ));
}

#[test]
fn ln_gamma_matches_factorials() {
    let mut fact = 1.0f64;
    for n in 1..30u32 {
        fact *= n as f64;
        let got = ln_gamma(n as f64 + 1.0);
        assert!((got - fact.ln()).abs() < 1e-10 * fact.ln().max(1.0), "{n}");
    }
}

/// SplitMix64, for sampling test inputs.
pub(crate) struct Mix(pub u64);

impl Mix {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Log-uniform in `[lo, hi]`.
    pub(crate) fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        (lo.ln() + u * (hi.ln() - lo.ln())).exp()
    }
}

#[test]
fn block_moments_match_reference_bit_for_bit() {
    let mut rng = Mix(7);
    for _ in 0..3000 {
        let layout = Layout::ALL[(rng.next() % 2) as usize];
        let counts: Vec<u32> = layout.probe_counts().collect();
        let probes = counts[(rng.next() % counts.len() as u64) as usize];
        let unit = [1, 1, 4, 8][(rng.next() % 4) as usize];
        let keys = rng.log_uniform(1.0, 1e10) as u64;
        let bits_per_key = rng.log_uniform(0.5, 200.0);
        let blocks = ((keys as f64 * bits_per_key / 512.0) as u64).clamp(1, 1 << 33);
        same_as_reference(keys, blocks, layout, probes, unit);
    }
}

/// `block_moments` against the reference's, bit for bit.
fn same_as_reference(keys: u64, blocks: u64, layout: Layout, probes: u32, unit: u32) {
    let got = block_moments(keys, blocks, layout, probes, unit);
    let want = reference::block_moments(keys, blocks, layout, probes, unit);
    assert_eq!(
        (got.0.to_bits(), got.1.to_bits()),
        (want.0.to_bits(), want.1.to_bits()),
        "{keys} keys, {blocks} blocks, {layout}/{probes}/{unit}"
    );
}

/// The walks that take eight key counts at a time (20 probes and more in 4x128), from
/// one key (fewer counts than lanes) to loads of thousands, bit for bit as the reference.
#[test]
fn lane_walks_match_reference_bit_for_bit() {
    let mut rng = Mix(8);
    for _ in 0..2000 {
        let probes = [20, 24, 28, 32][(rng.next() % 4) as usize];
        let unit = [1, 1, 4, 8][(rng.next() % 4) as usize];
        let keys = rng.log_uniform(1.0, 1e10) as u64;
        let blocks = (keys as f64 / rng.log_uniform(0.01, 3000.0)).clamp(1.0, 2e10) as u64;
        let layout = Layout::Sectors4x128;
        same_as_reference(keys, blocks, layout, probes, unit);
    }
}

mod planner;
