//! `readers`: what decoding costs per MB, by path: `from_bytes` (the bytes in memory),
//! `read_from` (a reader, here a slice read in the reader's own chunks) and the compressed
//! transfer form, at growing sizes. A streaming reader must stay within a small factor of
//! `from_bytes` with a flat per-MB cost; a compressed payload must decode at memory speed.

use std::error::Error;

use blockbloom::BloomFilter;
use blockbloom_measure::format::bytes;
use blockbloom_measure::table::Table;
use blockbloom_measure::timing::Timing;

const MIB: u64 = 1 << 20;

/// A plain filter of `mib` MiB of blocks (its bits do not change what decoding costs).
fn filter(mib: u64) -> Result<BloomFilter, blockbloom::Error> {
    BloomFilter::builder()
        .capacity(mib * MIB / 2)
        .size_in_bytes(mib * MIB)
        .build()
}

/// The table: one row per size, ms and ns/MB per path, and read_from / from_bytes.
pub fn command(sizes_mib: &[u64], reps: usize) -> Result<Table, Box<dyn Error>> {
    let mut t = Table::new([
        "size",
        "from_bytes ms",
        "read_from ms",
        "read_from / from_bytes",
        "from_bytes ms/MiB",
        "read_from ms/MiB",
        "compressed bytes",
        "from_compressed_bytes ms",
        "compressed ms/MiB",
    ]);
    for &mib in sizes_mib {
        let f = filter(mib)?;
        let encoded = f.to_bytes();
        let wire = f.to_compressed_bytes()?;
        let n = encoded.len();
        let time = |run: &dyn Fn() -> Result<BloomFilter, blockbloom::Error>| {
            let mut timing = Timing::default();
            for _ in 0..reps {
                let g = timing.record(n, run).expect("decodes");
                assert!(g == f, "decoded a different filter");
            }
            // ns per byte -> ms for the whole encoding
            timing.median() * n as f64 / 1e6
        };
        let from_bytes = time(&|| BloomFilter::from_bytes(&encoded));
        let read_from = time(&|| BloomFilter::read_from(&encoded[..]));
        let compressed = time(&|| BloomFilter::from_compressed_bytes(&wire));
        let per_mib = |ms: f64| format!("{:.2}", ms / mib as f64);
        t.row(vec![
            bytes(n as u64),
            format!("{from_bytes:.1}"),
            format!("{read_from:.1}"),
            format!("{:.2}x", read_from / from_bytes),
            per_mib(from_bytes),
            per_mib(read_from),
            bytes(wire.len() as u64),
            format!("{compressed:.1}"),
            per_mib(compressed),
        ]);
    }
    Ok(t)
}
