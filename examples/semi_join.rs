//! A Bloom semi-join between two Parquet tables: the small side's join keys go into a
//! filter whose bytes are shipped to the big side, which keeps only the rows that may join.
//!
//! The setting is the distributed join of Bernstein and Chiu (P. A. Bernstein and D.-M. W.
//! Chiu, "Using Semi-Joins to Solve Relational Queries", Journal of the ACM 28(1), 1981): to
//! join a small relation at site A with a big one at site B, A ships its join column to B, B
//! keeps the rows that match and ships only those back. Shipping a Bloom filter of the keys
//! instead of the keys is the "Bloomjoin" evaluated in R* (L. F. Mackert and G. M. Lohman,
//! "R* Optimizer Validation and Performance Evaluation for Distributed Queries", VLDB 1986;
//! J. K. Mullin, "Optimal Semijoins for Distributed Database Systems", IEEE Transactions on
//! Software Engineering 16(5), 1990): a few bits per key cross the network instead of eight
//! bytes, at the price of false positives, rows that are shipped back and dropped by the
//! exact join at A. A filter never drops a row that joins.
//!
//! Two TPC-H-like tables are written with the `parquet` crate's `ArrowWriter` into a
//! temporary directory: `customer(c_custkey, c_nationkey)` and `orders(o_orderkey,
//! o_custkey, o_totalprice)`, each order's customer drawn uniformly. The query is "the
//! orders of the customers of nation 7": site A scans `customer`, keeps nation 7's keys, and
//! builds a `BloomFilter` of them; its `to_bytes()` is what is shipped. Site B decodes it
//! with `from_bytes`, scans `orders` batch by batch, and keeps the rows whose `o_custkey`
//! passes `contains_batch`. A then re-checks the kept rows against its exact key set. The
//! example compares all of it with the join computed independently from the generated data
//! (by customer index, without keys, filters or files), and prints rows kept against the
//! exact join, the false positives (rows, and distinct keys against the filter's rate), and
//! bytes shipped against shipping the keys.
//!
//! ```text
//! cargo run --release --example semi_join -- --customers 1000000 --orders 5000000 --fpr 0.01
//! ```

use std::collections::HashSet;
use std::error::Error;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{ArrayRef, Float64Array, Int32Array, Int64Array, RecordBatch};
use blockbloom::BloomFilter;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// The nation whose customers' orders are asked for (of 25, as in TPC-H).
const NATION: i32 = 7;
const NATIONS: u64 = 25;
/// Rows per record batch written and read.
const BATCH: usize = 65_536;

#[derive(Clone, Debug)]
struct Config {
    customers: u64,
    orders: u64,
    fpr: f64,
    seed: u64,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            customers: 1_000_000,
            orders: 5_000_000,
            fpr: 0.01,
            seed: 0x6a6f_696e,
        }
    }
}

#[derive(Debug)]
struct Report {
    customer_file_bytes: u64,
    orders_file_bytes: u64,
    /// Site A: customers of the nation, and their distinct keys.
    small_rows: u64,
    small_keys: u64,
    /// What crosses the network: the filter's encoding, against the keys as 8-byte integers.
    filter_bytes: u64,
    key_bytes: u64,
    probes: u32,
    /// Site B: rows scanned, and rows kept by the filter.
    big_rows: u64,
    kept_rows: u64,
    /// The join computed independently from the generated data.
    exact_rows: u64,
    /// Every row of the exact join was kept (the filter has no false negatives).
    kept_every_joining_row: bool,
    /// The kept rows, re-checked against A's exact key set, are the exact join.
    recheck_equals_exact: bool,
    /// Distinct `o_custkey` values on the big side that do not join, and how many of them
    /// the filter let through.
    non_joining_keys: u64,
    false_positive_keys: u64,
    expected_fpr: f64,
}

impl Report {
    fn false_positive_rows(&self) -> u64 {
        self.kept_rows - self.exact_rows
    }
}

/// SplitMix64, seeded: the tables are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }
}

/// A directory under the system's temporary directory, removed with what it holds on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> std::io::Result<TempDir> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "blockbloom-semi-join-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir)?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The generated tables, in memory: what the files hold.
struct Tables {
    custkey: Vec<i64>,
    nation: Vec<i32>,
    /// Each order's customer, as an index into `custkey`.
    order_customer: Vec<u32>,
}

fn generate(cfg: &Config) -> Tables {
    let mut rng = Rng(cfg.seed);
    // Keys spread over i64: one SplitMix64 step is a bijection of its state, so distinct
    // customers get distinct keys.
    let custkey = (0..cfg.customers)
        .map(|i| Rng(cfg.seed.wrapping_add(i)).next() as i64)
        .collect();
    let nation = (0..cfg.customers)
        .map(|_| rng.below(NATIONS) as i32)
        .collect();
    let order_customer = (0..cfg.orders)
        .map(|_| rng.below(cfg.customers) as u32)
        .collect();
    Tables {
        custkey,
        nation,
        order_customer,
    }
}

/// Writes `batches()` to a Parquet file with `ArrowWriter` (no compression codec: the crate's
/// `parquet` dependency has none enabled).
fn write_parquet(
    path: &Path,
    mut batches: impl Iterator<Item = RecordBatch>,
) -> Result<u64, Box<dyn Error>> {
    let first = batches.next().ok_or("no rows")?;
    let mut w = ArrowWriter::try_new(File::create(path)?, first.schema(), None)?;
    w.write(&first)?;
    for b in batches {
        w.write(&b)?;
    }
    w.close()?;
    Ok(std::fs::metadata(path)?.len())
}

fn write_tables(dir: &Path, t: &Tables) -> Result<(u64, u64), Box<dyn Error>> {
    let customers = (0..t.custkey.len()).step_by(BATCH).map(|lo| {
        let hi = t.custkey.len().min(lo + BATCH);
        RecordBatch::try_from_iter([
            (
                "c_custkey",
                Arc::new(Int64Array::from(t.custkey[lo..hi].to_vec())) as ArrayRef,
            ),
            (
                "c_nationkey",
                Arc::new(Int32Array::from(t.nation[lo..hi].to_vec())) as ArrayRef,
            ),
        ])
        .expect("columns of one length")
    });
    let c = write_parquet(&dir.join("customer.parquet"), customers)?;
    let orders = (0..t.order_customer.len()).step_by(BATCH).map(|lo| {
        let hi = t.order_customer.len().min(lo + BATCH);
        let rows = &t.order_customer[lo..hi];
        RecordBatch::try_from_iter([
            (
                "o_orderkey",
                Arc::new(Int64Array::from_iter_values(lo as i64..hi as i64)) as ArrayRef,
            ),
            (
                "o_custkey",
                Arc::new(Int64Array::from_iter_values(
                    rows.iter().map(|&c| t.custkey[c as usize]),
                )) as ArrayRef,
            ),
            (
                "o_totalprice",
                Arc::new(Float64Array::from_iter_values(
                    (lo..hi).map(|i| 1.0 + (i * 7919 % 100_000) as f64 / 100.0),
                )) as ArrayRef,
            ),
        ])
        .expect("columns of one length")
    });
    let o = write_parquet(&dir.join("orders.parquet"), orders)?;
    Ok((c, o))
}

/// Reads a Parquet file batch by batch.
fn scan(path: &Path) -> Result<impl Iterator<Item = Result<RecordBatch, String>>, Box<dyn Error>> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path)?)?
        .with_batch_size(BATCH)
        .build()?;
    Ok(reader.map(|b| b.map_err(|e| e.to_string())))
}

fn run(cfg: &Config) -> Result<Report, Box<dyn Error>> {
    let tables = generate(cfg);
    let dir = TempDir::new()?;
    let (customer_file_bytes, orders_file_bytes) = write_tables(&dir.0, &tables)?;

    // Site A: the small side's join keys, into a filter; its bytes are what is shipped.
    let mut small_keys: Vec<i64> = Vec::new();
    for batch in scan(&dir.0.join("customer.parquet"))? {
        let batch = batch?;
        let keys = batch.column(0).as_primitive::<Int64Type>().values();
        let nations = batch.column(1).as_primitive::<Int32Type>().values();
        small_keys.extend(
            keys.iter()
                .zip(nations.iter())
                .filter(|&(_, &n)| n == NATION)
                .map(|(&k, _)| k),
        );
    }
    let small_rows = small_keys.len() as u64;
    let exact_keys: HashSet<i64> = small_keys.iter().copied().collect();
    let mut filter = BloomFilter::with_capacity(exact_keys.len() as u64, cfg.fpr)?;
    filter.insert_batch(&small_keys);
    let shipped: Vec<u8> = filter.to_bytes();

    // Site B: decode the filter and keep the rows that may join.
    let received = BloomFilter::from_bytes(&shipped)?;
    let (mut big_rows, mut kept) = (0u64, Vec::<(i64, i64)>::new());
    let mut big_keys: HashSet<i64> = HashSet::new();
    let mut hits = vec![false; BATCH];
    for batch in scan(&dir.0.join("orders.parquet"))? {
        let batch = batch?;
        let orderkeys = batch.column(0).as_primitive::<Int64Type>().values();
        let custkeys = batch.column(1).as_primitive::<Int64Type>().values();
        let hits = &mut hits[..custkeys.len()];
        received.contains_batch(custkeys, hits);
        for (i, _) in hits.iter().enumerate().filter(|&(_, &h)| h) {
            kept.push((orderkeys[i], custkeys[i]));
        }
        big_keys.extend(custkeys.iter().copied());
        big_rows += custkeys.len() as u64;
    }

    // Back at A: the exact join of the kept rows.
    let mut rechecked: Vec<i64> = kept
        .iter()
        .filter(|(_, c)| exact_keys.contains(c))
        .map(|&(o, _)| o)
        .collect();
    rechecked.sort_unstable();

    // The same join from the generated data alone: by customer index and nation.
    let exact: Vec<i64> = (0..tables.order_customer.len())
        .filter(|&o| tables.nation[tables.order_customer[o] as usize] == NATION)
        .map(|o| o as i64)
        .collect();
    let kept_orders: HashSet<i64> = kept.iter().map(|&(o, _)| o).collect();

    let non_joining: Vec<i64> = big_keys
        .iter()
        .copied()
        .filter(|k| !exact_keys.contains(k))
        .collect();
    let false_positive_keys = received.count_batch(&non_joining) as u64;

    Ok(Report {
        customer_file_bytes,
        orders_file_bytes,
        small_rows,
        small_keys: exact_keys.len() as u64,
        filter_bytes: shipped.len() as u64,
        key_bytes: 8 * exact_keys.len() as u64,
        probes: received.probes(),
        big_rows,
        kept_rows: kept.len() as u64,
        exact_rows: exact.len() as u64,
        kept_every_joining_row: exact.iter().all(|o| kept_orders.contains(o)),
        recheck_equals_exact: rechecked == exact,
        non_joining_keys: non_joining.len() as u64,
        false_positive_keys,
        expected_fpr: received.expected_fpr(),
    })
}

fn parse_args() -> Result<Config, String> {
    let mut cfg = Config::default();
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Err(String::new());
        }
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let value = value.replace('_', "");
        let int = || {
            value
                .parse::<u64>()
                .map_err(|e| format!("{flag} {value}: {e}"))
        };
        match flag.as_str() {
            "--customers" => cfg.customers = int()?,
            "--orders" => cfg.orders = int()?,
            "--seed" => cfg.seed = int()?,
            "--fpr" => cfg.fpr = value.parse().map_err(|e| format!("--fpr {value}: {e}"))?,
            _ => return Err(format!("unknown argument {flag}")),
        }
    }
    if cfg.customers == 0 || cfg.orders == 0 || cfg.customers > u32::MAX as u64 {
        return Err("--customers (at most 2^32 - 1) and --orders must be at least 1".into());
    }
    Ok(cfg)
}

fn main() -> ExitCode {
    let cfg = match parse_args() {
        Ok(c) => c,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("error: {e}");
            }
            eprintln!("usage: semi_join [--customers N] [--orders N] [--fpr P] [--seed S]");
            return ExitCode::from(2);
        }
    };
    let r = match run(&cfg) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    println!(
        "semi_join: customer.parquet ({} rows, {:.1} MiB), orders.parquet ({} rows, {:.1} MiB); \
         the orders of nation {NATION}'s customers",
        cfg.customers,
        mib(r.customer_file_bytes),
        r.big_rows,
        mib(r.orders_file_bytes)
    );
    println!(
        "site A: {} customers of nation {NATION} -> filter of {} keys at {} (k = {})",
        r.small_rows, r.small_keys, cfg.fpr, r.probes
    );
    println!(
        "  shipped: {} bytes ({:.2} bits per key) against {} bytes of 8-byte keys ({:.1}x \
         smaller)",
        r.filter_bytes,
        8.0 * r.filter_bytes as f64 / r.small_keys.max(1) as f64,
        r.key_bytes,
        r.key_bytes as f64 / r.filter_bytes as f64
    );
    println!(
        "site B: {} rows scanned, {} kept ({:.2}%); exact join {} rows: every one kept: {}",
        r.big_rows,
        r.kept_rows,
        100.0 * r.kept_rows as f64 / r.big_rows as f64,
        r.exact_rows,
        if r.kept_every_joining_row {
            "yes"
        } else {
            "NO"
        }
    );
    println!(
        "  false positives: {} rows ({:.2}% of the kept rows), from {} of {} non-joining \
         customer keys ({:.3}%; the filter's expected rate {:.3}%)",
        r.false_positive_rows(),
        100.0 * r.false_positive_rows() as f64 / r.kept_rows.max(1) as f64,
        r.false_positive_keys,
        r.non_joining_keys,
        100.0 * r.false_positive_keys as f64 / r.non_joining_keys.max(1) as f64,
        100.0 * r.expected_fpr
    );
    println!(
        "  shipped back: {} rows instead of {} ({:.1}x fewer)",
        r.kept_rows,
        r.big_rows,
        r.big_rows as f64 / r.kept_rows.max(1) as f64
    );
    println!(
        "site A: kept rows re-checked against the exact keys = the exact join: {}",
        if r.recheck_equals_exact { "yes" } else { "NO" }
    );
    if r.kept_every_joining_row && r.recheck_equals_exact {
        ExitCode::SUCCESS
    } else {
        eprintln!("FAILED: the semi-join lost rows");
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `count` is within six standard deviations (and a little slack for the smallest
    /// counts) of `n` independent trials at rate `p`.
    fn within_binomial(count: u64, n: u64, p: f64) -> bool {
        let mean = n as f64 * p;
        (count as f64 - mean).abs() <= 6.0 * (mean * (1.0 - p)).sqrt() + 3.0
    }

    fn small(fpr: f64, seed: u64) -> Config {
        Config {
            customers: 20_000,
            orders: 100_000,
            fpr,
            seed,
        }
    }

    fn check(r: &Report) {
        assert!(r.kept_every_joining_row, "a joining row was dropped: {r:?}");
        assert!(r.recheck_equals_exact, "{r:?}");
        assert!(r.kept_rows >= r.exact_rows);
        assert_eq!(r.big_rows, 100_000);
        // About 1 customer in 25; each about 5 orders.
        assert!(r.small_keys.abs_diff(800) < 170, "{}", r.small_keys);
        assert!(r.exact_rows.abs_diff(4_000) < 800, "{}", r.exact_rows);
        assert!(
            within_binomial(r.false_positive_keys, r.non_joining_keys, r.expected_fpr),
            "{} false-positive keys of {} at {}",
            r.false_positive_keys,
            r.non_joining_keys,
            r.expected_fpr
        );
        assert!(r.filter_bytes < r.key_bytes, "{r:?}");
    }

    #[test]
    fn one_percent_keeps_every_joining_row_and_few_others() {
        let r = run(&small(0.01, 1)).unwrap();
        check(&r);
        // About 19,000 non-joining keys at about 1%: false positives, but few.
        assert!(r.false_positive_keys > 50 && r.false_positive_rows() < r.exact_rows / 5);
        assert!(r.filter_bytes * 5 < r.key_bytes);
    }

    #[test]
    fn a_tight_filter_ships_more_bytes_and_keeps_fewer_rows() {
        let loose = run(&small(0.05, 2)).unwrap();
        let tight = run(&small(0.0001, 2)).unwrap();
        check(&loose);
        check(&tight);
        assert_eq!(loose.exact_rows, tight.exact_rows);
        assert!(tight.filter_bytes > loose.filter_bytes);
        assert!(tight.kept_rows < loose.kept_rows);
    }
}
