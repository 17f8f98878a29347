//! What the interleaved-rounds measurements (`build_pairs`, `string_pairs`, `u64_pairs` and the
//! others) share: their key generator, their arguments of rounds and key counts, and how they
//! summarise a side's times and a ratio's rounds.

// Each example uses part of this module.
#![allow(dead_code)]

/// splitmix64: keys that are the same on every run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The median of `v` (sorted in place).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The per-round ratios `num[i] / den[i]` summarised: "median Mx, quartiles Ax and Bx (per
/// round)".
pub fn ratio_summary(num: &[f64], den: &[f64]) -> String {
    let mut r: Vec<f64> = num.iter().zip(den).map(|(n, d)| n / d).collect();
    let m = median(&mut r);
    // `median` sorted the ratios: the quartiles are read off directly.
    let quartile = |q: usize| r[(r.len() - 1) * q / 4];
    format!(
        "median {m:.2}x, quartiles {:.2}x and {:.2}x (per round)",
        quartile(1),
        quartile(3)
    )
}

/// The CPU's model name, from `/proc/cpuinfo` (Linux), for the programs' first line.
pub fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// The arguments `[ROUNDS [N...]]` of a measurement over key counts: the rounds (at least one;
/// `rounds` if not given) and the key counts (`sizes` if none is given).
pub fn rounds_and_sizes(rounds: usize, sizes: &[usize]) -> (usize, Vec<usize>) {
    let mut args = std::env::args().skip(1);
    let rounds = args.next().map_or(rounds, |s| {
        s.parse()
            .ok()
            .filter(|&v| v > 0)
            .expect("a positive number of rounds")
    });
    let given: Vec<usize> = args
        .map(|s| s.parse().expect("key counts are numbers"))
        .collect();
    let sizes = if given.is_empty() {
        sizes.to_vec()
    } else {
        given
    };
    (rounds, sizes)
}
