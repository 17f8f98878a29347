//! What the interleaved-rounds programs (`build-pairs`, `string-pairs`, `u64-pairs` and the
//! others, each a subcommand of `blockbloom-perf`) share: their key stream (the one
//! generator, [`blockbloom_measure::keys::Rng`]), their arguments of rounds and key counts, and
//! how they summarise a side's times and a ratio's rounds.

use std::sync::{Mutex, OnceLock};

pub use blockbloom_measure::keys::Rng;
use serde_json::{Map, Value, json};

/// The running program's command line: its name, then the words after it.
static ARGS: OnceLock<Vec<String>> = OnceLock::new();

/// Sets the command line the program reads through [`args`] (once, before it runs): `program`
/// then the words the user gave after the subcommand.
pub fn set_args(program: &str, words: &[String]) {
    let mut all = vec![program.to_string()];
    all.extend(words.iter().cloned());
    // A second call (tests running programs in one process) keeps the first.
    let _ = ARGS.set(all);
}

/// The program's command line as `std::env::args` gives a binary's: its name, then its words.
pub fn args() -> std::vec::IntoIter<String> {
    ARGS.get().cloned().unwrap_or_default().into_iter()
}

/// What a program measured, for `--format json`: the rows it recorded and the fields the rows
/// recorded next share (its current filter size, key kind, thread count...).
#[derive(Default)]
struct Results {
    json: bool,
    scope: Map<String, Value>,
    rows: Vec<Value>,
}

static RESULTS: OnceLock<Mutex<Results>> = OnceLock::new();

fn results() -> std::sync::MutexGuard<'static, Results> {
    RESULTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Whether the program prints one JSON document of its rows on stdout (`--format json`): then
/// its text ([`out!`](crate::out)) goes to stderr.
pub fn set_json(on: bool) {
    results().json = on;
}

/// Whether the program's text goes to stderr, its rows to stdout as JSON.
pub fn json() -> bool {
    results().json
}

/// One line of a program's text: stdout, or stderr under `--format json`. A reader that stops
/// reading stdout (`| head`) ends the program quietly, with success, as Unix tools end.
pub fn line(args: std::fmt::Arguments) {
    use std::io::Write;
    if json() {
        eprintln!("{args}");
        return;
    }
    if let Err(e) = writeln!(std::io::stdout().lock(), "{args}") {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        panic!("writing the program's text to stdout: {e}");
    }
}

/// `println!` for the measuring programs: their text on stdout, or on stderr when stdout
/// carries their JSON document.
#[macro_export]
macro_rules! out {
    () => {
        $crate::workload::line(::std::format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::workload::line(::std::format_args!($($arg)*))
    };
}

/// Sets the fields every row recorded next carries (an object, such as
/// `{"keys": "u64", "n": 1000000}`), replacing the previous ones.
pub fn scope(fields: Value) {
    results().scope = match fields {
        Value::Object(m) => m,
        _ => Map::new(),
    };
}

fn push(mut row: Map<String, Value>) {
    let mut r = results();
    for (k, v) in &r.scope {
        row.entry(k.clone()).or_insert_with(|| v.clone());
    }
    r.rows.push(Value::Object(row));
}

/// Records a row of other figures (an object, such as `{"key_set": "sequential", "fpr":
/// {"ours": 0.0093}}`) in the current scope.
pub fn record_row(fields: Value) {
    if let Value::Object(row) = fields {
        push(row);
    }
}

/// Records a side's median ns per key in the current scope.
pub fn record(side: &str, ns_per_key: f64) {
    record_value(side, "ns_per_key", ns_per_key);
}

/// Records a side's figure `value` under the name `unit` (such as `us_per_build`) in the
/// current scope.
pub fn record_value(side: &str, unit: &str, value: impl Into<Value>) {
    let mut row = Map::new();
    row.insert("side".into(), json!(side));
    row.insert(unit.into(), value.into());
    push(row);
}

/// Runs every side `rounds` times, the sides in a rotating order (round `r` starts at side
/// `r`), so that the sides of every ratio see the same state of a shared machine; returns
/// each side's times, ns per item of a run of `items` items.
pub fn interleaved<R>(
    rounds: usize,
    sides: usize,
    items: usize,
    mut run: impl FnMut(usize) -> R,
) -> Vec<Vec<f64>> {
    let mut times = vec![Vec::with_capacity(rounds); sides];
    for round in 0..rounds {
        for j in 0..sides {
            let s = (round + j) % sides;
            let t = std::time::Instant::now();
            std::hint::black_box(run(s));
            times[s].push(t.elapsed().as_secs_f64() * 1e9 / items as f64);
        }
    }
    times
}

/// Each side's median ns per key, recorded in the current scope and printed one line a side
/// (`  NAME: median M ns/key`, the names right-aligned in `width`).
pub fn medians(names: &[&str], times: &[Vec<f64>], width: usize) -> Vec<f64> {
    let medians: Vec<f64> = times.iter().map(|t| median(&mut t.clone())).collect();
    for (name, &m) in names.iter().zip(&medians) {
        record(name, m);
        crate::out!("  {name:>width$}: median {m:.2} ns/key");
    }
    medians
}

/// Each side's median ns per key, recorded in the current scope, as one line: `NAME M, ...`.
pub fn median_line(names: &[&str], times: &[Vec<f64>]) -> String {
    let medians = names.iter().zip(times).map(|(name, t)| {
        let m = median(&mut t.clone());
        record(name, m);
        format!("{name} {m:.2}")
    });
    medians.collect::<Vec<_>>().join(", ")
}

/// Query `i` of a mixed set over `members`: even ones a member the stream `r` picks, odd ones
/// the stream's next key (a member with probability `members.len() / 2^64`).
pub fn mixed_query(r: &mut Rng, members: &[u64], i: usize) -> u64 {
    if i.is_multiple_of(2) {
        members[(r.next() % members.len() as u64) as usize]
    } else {
        r.next()
    }
}

/// `count` queries of [`mixed_query`]: half members, half not, interleaved.
pub fn mixed_queries(r: &mut Rng, members: &[u64], count: usize) -> Vec<u64> {
    (0..count).map(|i| mixed_query(r, members, i)).collect()
}

/// Byte-string key `i` of `len` bytes from the stream `r`: random letters (URL-like from 32
/// bytes), distinct by the index folded into its last bytes (`string-pairs`' keys).
pub fn string_key(r: &mut Rng, i: usize, len: usize) -> Vec<u8> {
    let mut s = if len >= 32 {
        format!("https://example.com/p/{i:x}/").into_bytes()
    } else {
        Vec::new()
    };
    while s.len() < len {
        s.push(b'a' + (r.next() % 26) as u8);
    }
    s.truncate(len);
    let at = len.saturating_sub(8);
    for (d, t) in s[at..].iter_mut().zip((i as u64).to_le_bytes()) {
        *d ^= t & 0x0f;
    }
    s
}

/// The program's `i`-th word parsed (its first is 1), or `default` when it has fewer.
///
/// # Panics
/// If the word does not parse: the message names it.
pub fn arg<T: std::str::FromStr>(i: usize, default: T) -> T {
    args().nth(i).map_or(default, |s| {
        s.parse()
            .unwrap_or_else(|_| panic!("argument {i} ({s:?}) is not a valid number"))
    })
}

/// [`ratio_summary`] of `num / den`, recorded as the ratio `label` (its median and quartiles
/// over the rounds) in the current scope.
pub fn ratio(label: &str, num: &[f64], den: &[f64]) -> String {
    let (m, q1, q3) = ratio_quartiles(num, den);
    let mut row = Map::new();
    row.insert("ratio".into(), json!(label));
    row.insert("median".into(), json!(m));
    row.insert("q1".into(), json!(q1));
    row.insert("q3".into(), json!(q3));
    push(row);
    ratio_summary(num, den)
}

/// Every row recorded so far.
pub fn rows() -> Vec<Value> {
    results().rows.clone()
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
    let (m, q1, q3) = ratio_quartiles(num, den);
    format!("median {m:.2}x, quartiles {q1:.2}x and {q3:.2}x (per round)")
}

/// The per-round ratios `num[i] / den[i]`: their median, lower and upper quartile.
fn ratio_quartiles(num: &[f64], den: &[f64]) -> (f64, f64, f64) {
    let mut r: Vec<f64> = num.iter().zip(den).map(|(n, d)| n / d).collect();
    let m = median(&mut r);
    // `median` sorted the ratios: the quartiles are read off directly.
    let quartile = |q: usize| r[(r.len() - 1) * q / 4];
    (m, quartile(1), quartile(3))
}

/// The CPU's model name, for the programs' first line.
pub use blockbloom_measure::system::cpu_model as cpu_name;

/// The arguments `[ROUNDS [N...]]` of a measurement over key counts: the rounds (at least one;
/// `rounds` if not given) and the key counts (`sizes` if none is given).
pub fn rounds_and_sizes(rounds: usize, sizes: &[usize]) -> (usize, Vec<usize>) {
    let mut args = args().skip(1);
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

/// Hashes of 8-byte keys that are not in the format, for measurements of what a cheaper hash
/// would buy (`single_key_pairs`' floor lines, `hash_lanes`), and MX32-64's constants
/// (`src/hashing/mx32.rs`), which the library keeps private, for the examples' own copies of
/// its rounds.
pub mod candidate {
    /// MX32-64's multipliers of rounds 1 to 3 (its `A[1..]` and `B[1..]`).
    pub const MX32_A: [u64; 3] = [0x9e37_79b1, 0xc2b2_ae3d, 0x1656_67b1];
    pub const MX32_B: [u64; 3] = [0x85eb_ca77, 0x27d4_eb2f, 0xcc9e_2d51];
    /// What MX32-64 xors the seed with, and its tweak of 8-byte keys.
    pub const MX32_SEED_MASK: u64 = 0x243f_6a88_85a3_08d3;
    pub const MX32_T8: u64 = 0xa409_3822_299f_31d0;

    /// The folds' odd multipliers: the first 64 bits of pi's fraction and of the golden
    /// ratio's.
    pub const FOLD_MUL: [u64; 2] = [0x243f_6a88_85a3_08d3, 0x9e37_79b9_7f4a_7c15];

    /// The 64-by-64-bit product of `x` and `m`, its 128 bits' halves xored.
    #[inline(always)]
    pub fn fold(x: u64, m: u64) -> u64 {
        let p = u128::from(x) * u128::from(m);
        p as u64 ^ (p >> 64) as u64
    }

    /// One folded multiply of the key xor the seed.
    #[inline(always)]
    pub fn fold1(key: u64, seed: u64) -> u64 {
        fold(key ^ seed, FOLD_MUL[0])
    }

    /// Two folded multiplies, the second of the first's result.
    #[inline(always)]
    pub fn fold2(key: u64, seed: u64) -> u64 {
        fold(fold1(key, seed), FOLD_MUL[1])
    }

    /// MX32-64's first two rounds of an 8-byte key (hash id 3 takes three).
    #[inline(always)]
    pub fn mx2(key: u64, seed: u64) -> u64 {
        let round = |x: u64, r: usize| {
            ((x & 0xffff_ffff) * MX32_A[r]) ^ ((x >> 32) * MX32_B[r]).rotate_left(32)
        };
        round(round(key ^ seed ^ MX32_SEED_MASK, 0) ^ MX32_T8, 1)
    }

    /// The multiply-xorshift family of issue 84 (the murmur3 finaliser's shape):
    /// `x ^= x >> a; x *= m1; x ^= x >> b; x *= m2; x ^= x >> c` of the key xor the seed xor
    /// [`MX32_SEED_MASK`] (so that key 0 with seed 0 does not hash to 0). Invertible: distinct
    /// keys under one seed never share a hash.
    #[derive(Clone, Copy, Debug)]
    pub struct Xorshift {
        pub shifts: [u32; 3],
        pub mul: [u64; 2],
        /// Whether the hash's high 32 bits (the filter's block index) are taken before the
        /// final xorshift, its low 32 (the bits in the block) after it. With a final shift of
        /// 32 or more the high half is the same either way.
        pub early_index: bool,
    }

    impl Xorshift {
        /// murmur3's `fmix64`: shifts 33, 33, 33.
        pub const MURMUR3: Xorshift = Xorshift {
            shifts: [33, 33, 33],
            mul: [0xff51_afd7_ed55_8ccd, 0xc4ce_b9fe_1a85_ec53],
            early_index: false,
        };
        /// Pelle Evensen's moremur constants: shifts 27, 33, 27.
        pub const MOREMUR: Xorshift = Xorshift {
            shifts: [27, 33, 27],
            mul: [0x3c79_ac49_2ba7_b653, 0x1c69_b3f7_4ac4_ae35],
            early_index: false,
        };
        /// DuckDB's integer hash (`murmurhash64` in `src/include/duckdb/common/types/hash.hpp`):
        /// shifts of 32, one multiplier twice.
        pub const SHIFT32: Xorshift = Xorshift {
            shifts: [32, 32, 32],
            mul: [0xd6e8_feb8_6659_fd93, 0xd6e8_feb8_6659_fd93],
            early_index: false,
        };
        /// moremur with its second multiplier cut to its low 31 bits (`0x4ac4_ae35`, odd): an
        /// `imul r64, r64, imm32` in scalar code and one `vpmuludq` fewer in AVX2 lanes.
        pub const MOREMUR_SMALL: Xorshift = Xorshift {
            mul: [0x3c79_ac49_2ba7_b653, 0x4ac4_ae35],
            ..Xorshift::MOREMUR
        };
        /// moremur with the block index taken before the final xorshift (a shorter scalar path
        /// to the block's address).
        pub const MOREMUR_EARLY: Xorshift = Xorshift {
            early_index: true,
            ..Xorshift::MOREMUR
        };

        #[inline(always)]
        pub fn hash(self, key: u64, seed: u64) -> u64 {
            let [a, b, c] = self.shifts;
            let mut x = key ^ seed ^ MX32_SEED_MASK;
            x = (x ^ (x >> a)).wrapping_mul(self.mul[0]);
            x = (x ^ (x >> b)).wrapping_mul(self.mul[1]);
            let last = x ^ (x >> c);
            if self.early_index {
                (x & !0xffff_ffff) | (last & 0xffff_ffff)
            } else {
                last
            }
        }
    }
}
