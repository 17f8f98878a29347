//! Streaming readers take linear time: while a filter is read, the bytes the allocator is
//! asked to move (every large `realloc`'s new size, an upper bound on what it copies) stay a small
//! multiple of the filter, at every size. Counted by this binary's global allocator, so no
//! timing is involved. A reader that grew its buffer by one chunk at a time asked for about
//! `size^2 / (2 * chunk)` bytes: 16x the filter at 32 MiB, 64x at 128 MiB.
//!
//! The same allocator tracks the bytes live at once: a reader holds the filter plus one chunk,
//! never a copy of the body beside the value built from it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};

use blockbloom::{
    BloomFilter, BloomierFilter, ClassicBloomFilter, CountingBloomFilter, DeletableBloomFilter,
    ScalableBloomFilter,
};

struct Counting;

thread_local! {
    /// Whether this thread is being measured: the test harness runs other tests on other
    /// threads at the same time, whose allocations say nothing about this reader.
    static ON: Cell<bool> = const { Cell::new(false) };
}

fn on() -> bool {
    ON.with(Cell::get)
}
static REALLOCS: AtomicU64 = AtomicU64::new(0);
static REALLOC_BYTES: AtomicU64 = AtomicU64::new(0);
/// Bytes allocated and not yet freed since counting began (may dip below 0: frees of memory
/// allocated before), and the most seen at once.
static LIVE: AtomicI64 = AtomicI64::new(0);
static PEAK: AtomicI64 = AtomicI64::new(0);

fn live(delta: i64) {
    if on() {
        let now = LIVE.fetch_add(delta, Relaxed) + delta;
        PEAK.fetch_max(now, Relaxed);
    }
}

// SAFETY: every method forwards to the system allocator with the caller's arguments, so it
// upholds exactly the contract the caller relies on; the counters are plain atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        live(layout.size() as i64);
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        live(-(layout.size() as i64));
        // SAFETY: forwarded unchanged; `ptr` came from this allocator, i.e. from `System`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        live(layout.size() as i64);
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Only buffers of a filter's scale: small vectors elsewhere (a decoder's own state)
        // say nothing about how the filter's storage grows.
        if on() && new_size >= BIG {
            REALLOCS.fetch_add(1, Relaxed);
            REALLOC_BYTES.fetch_add(new_size as u64, Relaxed);
        }
        live(new_size as i64 - layout.size() as i64);
        // SAFETY: forwarded unchanged; `ptr` came from `System` with `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One measurement at a time: the counters are global.
static SERIAL: Mutex<()> = Mutex::new(());

/// `(reallocs, bytes asked for by reallocs)` while `read` runs (the compressed decode).
#[cfg(feature = "compress")]
fn count_reallocs<T>(read: impl FnOnce() -> T) -> (T, u64, u64) {
    let (out, reallocs, moved, _) = count(read);
    (out, reallocs, moved)
}

/// `(reallocs, bytes asked for by reallocs, most bytes live at once)` while `read` runs.
fn count<T>(read: impl FnOnce() -> T) -> (T, u64, u64, u64) {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    REALLOCS.store(0, Relaxed);
    REALLOC_BYTES.store(0, Relaxed);
    LIVE.store(0, Relaxed);
    PEAK.store(0, Relaxed);
    ON.with(|on| on.set(true));
    let out = read();
    ON.with(|on| on.set(false));
    let peak = PEAK.load(Relaxed).max(0) as u64;
    (
        out,
        REALLOCS.load(Relaxed),
        REALLOC_BYTES.load(Relaxed),
        peak,
    )
}

const MIB: u64 = 1 << 20;

/// Reallocations to at least this many bytes are counted.
const BIG: usize = 256 << 10;

/// A plain filter of about `mib` MiB (empty: the reader does not care what the bits are).
fn plain(mib: u64) -> BloomFilter {
    BloomFilter::builder()
        .capacity(mib * MIB / 2)
        .size_in_bytes(mib * MIB)
        .build()
        .unwrap()
}

/// Reads `bytes` with `read` and checks the reallocation bytes stay within 3x the input, with
/// at most one reallocation per doubling, and that the memory live at once is the input's size
/// plus at most two chunks (the reader's buffer, and slack for the value's own small parts).
fn check_linear<T: PartialEq + std::fmt::Debug>(
    what: &str,
    bytes: &[u8],
    read: impl FnOnce(&[u8]) -> T,
    expected: &T,
) {
    let (got, reallocs, moved, peak) = count(|| read(bytes));
    assert!(&got == expected, "{what}: read back a different filter");
    let size = bytes.len() as u64;
    let doublings = 64 - (size / MIB).max(1).leading_zeros() as u64;
    println!(
        "{what}: {:.1} MiB read, {reallocs} reallocations asking for {:.1} MiB ({:.2}x the \
         input), at most {:.2} MiB live",
        size as f64 / MIB as f64,
        moved as f64 / MIB as f64,
        moved as f64 / size as f64,
        peak as f64 / MIB as f64,
    );
    assert!(
        peak <= size + 2 * MIB,
        "{what}: {peak} bytes live at once to read {size}: more than the filter plus one chunk"
    );
    assert!(
        moved <= 3 * size,
        "{what}: reallocations asked for {moved} bytes to read {size}: not linear"
    );
    assert!(
        reallocs <= doublings + 2,
        "{what}: {reallocs} reallocations to read {size} bytes (about {doublings} doublings)"
    );
}

#[test]
fn plain_read_from_is_linear_at_every_size() {
    for mib in [8, 32, 96] {
        let f = plain(mib);
        let bytes = f.to_bytes();
        check_linear(
            &format!("plain {mib} MiB"),
            &bytes,
            |b| BloomFilter::read_from(b).unwrap(),
            &f,
        );
    }
}

#[test]
fn family_read_from_is_linear() {
    let c = CountingBloomFilter::with_capacity(8_000_000, 0.01).unwrap();
    let bytes = c.to_bytes();
    assert!(bytes.len() as u64 > 16 * MIB);
    check_linear(
        "counting",
        &bytes,
        |b| CountingBloomFilter::read_from(b).unwrap(),
        &c,
    );

    let d = DeletableBloomFilter::with_capacity(16_000_000, 0.01).unwrap();
    let bytes = d.to_bytes();
    assert!(bytes.len() as u64 > 16 * MIB);
    check_linear(
        "deletable",
        &bytes,
        |b| DeletableBloomFilter::read_from(b).unwrap(),
        &d,
    );

    let mut s = ScalableBloomFilter::new(2_000_000, 0.01).unwrap();
    s.insert_batch(&(0..2_500_000u64).collect::<Vec<_>>())
        .unwrap();
    assert!(s.stages().len() >= 2);
    let bytes = s.to_bytes();
    assert!(bytes.len() as u64 > 8 * MIB);
    check_linear(
        "scalable",
        &bytes,
        |b| ScalableBloomFilter::read_from(b).unwrap(),
        &s,
    );

    let pairs: Vec<(u64, u64)> = (0..1_000_000u64).map(|k| (k, k & 0xffff_ffff)).collect();
    let m = BloomierFilter::build(&pairs, 32, 8).unwrap();
    let bytes = m.to_bytes();
    assert!(bytes.len() as u64 > 4 * MIB);
    check_linear(
        "bloomier",
        &bytes,
        |b| BloomierFilter::read_from(b).unwrap(),
        &m,
    );

    let c = ClassicBloomFilter::new(8 * 32 * MIB, 7).unwrap();
    let bytes = c.to_bytes();
    check_linear(
        "classic",
        &bytes,
        |b| ClassicBloomFilter::read_from(b).unwrap(),
        &c,
    );
    if cfg!(target_os = "linux") {
        // Large, it is read straight into its own mapping: what the global allocator holds on
        // the way is the reader's chunk and the array's first steps, below the size at which
        // it moves into a mapping; never a copy of the whole array (32 MiB here).
        let most = MIB + blockbloom::memory::HUGE_PAGES_FROM_BYTES as u64;
        let (_, _, _, peak) = count(|| ClassicBloomFilter::from_bytes(&bytes).unwrap());
        assert!(
            peak <= most,
            "classic from_bytes: {peak} bytes live at once"
        );
        let (_, _, _, peak) = count(|| ClassicBloomFilter::read_from(&bytes[..]).unwrap());
        assert!(peak <= most, "classic read_from: {peak} bytes live at once");
    }
}

#[cfg(feature = "compress")]
#[test]
fn compressed_decode_is_linear() {
    // A large, empty filter compresses to almost nothing: the decoder's cost must follow the
    // output it makes, not grow with its square.
    let f = plain(64);
    let wire = f.to_compressed_bytes().unwrap();
    assert!((wire.len() as u64) < MIB);
    let (g, reallocs, moved) =
        count_reallocs(|| BloomFilter::from_compressed_bytes(&wire).unwrap());
    assert!(g == f);
    let size = f.encoded_len() as u64;
    println!(
        "compressed: {} bytes decoded to {:.0} MiB with {reallocs} reallocations asking for \
         {:.1} MiB",
        wire.len(),
        size as f64 / MIB as f64,
        moved as f64 / MIB as f64
    );
    assert!(
        moved <= 3 * size,
        "{moved} bytes of reallocation for {size}"
    );
}
