//! Large filters on transparent huge pages (`blockbloom::memory`): the filters built with
//! and without them are the same filter, every conversion and copy of one stays correct, and
//! the opt-out really opts out where the system only grants huge pages on request.

use blockbloom::{AtomicBloomFilter, BloomFilter, CountingBloomFilter, memory};

/// A 24 MB filter: well above `HUGE_PAGES_FROM_BYTES`.
const N: u64 = 20_000_000;

fn keys(n: u64, stream: u64) -> Vec<u64> {
    (0..n)
        .map(|i| (i ^ (stream << 40)).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect()
}

fn built(huge: bool) -> BloomFilter {
    BloomFilter::builder()
        .capacity(N)
        .fpr(0.01)
        .huge_pages(huge)
        .build()
        .unwrap()
}

#[test]
fn the_pages_do_not_change_the_filter() {
    assert!(built(true).size_in_bytes() >= memory::HUGE_PAGES_FROM_BYTES);
    let ks = keys(N / 4, 1);
    let mut a = built(true);
    let mut b = built(false);
    assert!(a.blocks().iter().all(|blk| blk.0 == [0; 8]), "not zeroed");
    a.insert_batch(&ks);
    b.insert_batch(&ks);
    assert_eq!(a, b);
    assert_eq!(a.count_batch(&ks), ks.len());
    // Copies, conversions and folds of a huge-page filter.
    let c = a.clone();
    assert_eq!(c, a);
    let atomic: AtomicBloomFilter = a.into_atomic();
    atomic.insert_batch(&keys(1000, 2));
    let back = atomic.into_filter();
    assert_eq!(back.count_batch(&ks), ks.len());
    let folded = back.fold().unwrap();
    assert_eq!(folded.count_batch(&ks), ks.len());
    // Loaded filters: `from_bytes` reserves the whole (advised) array up front, `read_from`
    // grows it as bytes arrive and advises it afterwards.
    let bytes = back.to_bytes();
    let loaded = BloomFilter::from_bytes(&bytes).unwrap();
    assert_eq!(loaded, back);
    assert_eq!(BloomFilter::read_from(&bytes[..]).unwrap(), back);
    if memory::transparent_huge_pages() == Some("never") {
        assert_eq!(loaded.huge_page_bytes().unwrap_or(0), 0);
    }
}

#[test]
fn counting_filters_take_the_same_pages() {
    let ks = keys(100_000, 3);
    let mut c = CountingBloomFilter::builder()
        .capacity(N / 4)
        .huge_pages(true)
        .build()
        .unwrap();
    c.insert_batch(&ks);
    assert_eq!(c.count_batch(&ks), ks.len());
    assert_eq!(c.remove_batch(&ks).unwrap(), ks.len());
    assert_eq!(c.total_count(), 0);
}

/// Runs the test `name` of this binary alone in a child process, and says whether it ran
/// there (`true`: the caller is the child and does the work).
fn alone(name: &str) -> bool {
    const CHILD: &str = "BLOCKBLOOM_HUGE_PAGES_CHILD";
    if std::env::var_os(CHILD).is_some() {
        return true;
    }
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--test-threads=1", "--nocapture"])
        .env(CHILD, "1")
        .output();
    let out = match child {
        Ok(out) => out,
        Err(e) => {
            eprintln!("{name}: SKIPPED: cannot run this test binary again here: {e}");
            return false;
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprint!("{stderr}");
    // Under a user-mode emulator (the aarch64 run under qemu) the binary may not start again
    // by itself (no loader path): that is a skip, said as one. A child that started runs
    // libtest, which prints its plan first.
    if !stdout.contains("running 1 test") {
        eprintln!(
            "{name}: SKIPPED: this test binary did not start again as a child ({}); stdout: {stdout}",
            out.status
        );
        return false;
    }
    assert!(out.status.success(), "{name} failed alone:\n{stdout}");
    false
}

#[test]
fn what_the_system_grants_is_reported() {
    // Alone in a process: other tests' allocations, freed and mapped again beside these
    // arrays, would share the mappings whose huge pages `/proc/self/smaps` reports.
    if !alone("what_the_system_grants_is_reported") {
        return;
    }
    let setting = memory::transparent_huge_pages();
    // Fresh mappings (see `fresh`); zeroing has touched every page, so what backs them is
    // settled.
    let mut on = fresh(true);
    let mut off = fresh(false);
    assert!(off.size_in_bytes() > 32 << 20);
    on.insert_batch(&keys(100_000, 4));
    off.insert_batch(&keys(100_000, 4));
    let (Some(h_on), Some(h_off)) = (on.huge_page_bytes(), off.huge_page_bytes()) else {
        assert!(setting.is_none() || cfg!(not(target_os = "linux")));
        return;
    };
    assert!(h_on <= on.size_in_bytes() as u64 && h_off <= off.size_in_bytes() as u64);
    eprintln!("THP {setting:?}: {h_on} bytes on huge pages asked, {h_off} not asked");
    match setting {
        // Only on request: the opt-out gets none.
        Some("madvise") => assert_eq!(h_off, 0),
        Some("never") => assert_eq!(h_on, 0),
        // `always` may back either; a refusal (no free huge pages) is not an error.
        _ => {}
    }
}

/// A 48 MB filter: above glibc's largest mmap threshold (32 MiB), so its array is a fresh
/// mapping. A smaller one may reuse memory another test freed, with the pages it had.
fn fresh(huge: bool) -> BloomFilter {
    BloomFilter::builder()
        .capacity(BIG)
        .fpr(0.01)
        .huge_pages(huge)
        .build()
        .unwrap()
}

/// Keys of a [`fresh`] filter.
const BIG: u64 = 2 * N;

/// Bytes on huge pages, 0 where the system cannot say.
fn huge(bytes: Option<u64>) -> u64 {
    bytes.unwrap_or(0)
}

#[test]
fn loaded_filters_take_huge_pages_as_the_built_ones_do() {
    if !alone("loaded_filters_take_huge_pages_as_the_built_ones_do") {
        return;
    }
    let mut f = fresh(true);
    f.insert_batch(&keys(N / 2, 5));
    let bytes = f.to_bytes();
    let reserved = BloomFilter::from_bytes(&bytes).unwrap();
    let streamed = BloomFilter::read_from(&bytes[..]).unwrap();
    assert_eq!(reserved, f);
    assert_eq!(streamed, f);
    let (r, s) = (
        huge(reserved.huge_page_bytes()),
        huge(streamed.huge_page_bytes()),
    );
    eprintln!(
        "from_bytes: {r} of {} bytes on huge pages; read_from: {s}",
        f.size_in_bytes()
    );
    // Where the kernel granted the array that `from_bytes` reserved whole, the one `read_from`
    // grew as the bytes arrived got some too: each growth advised the room it added.
    if r > 0 {
        assert!(
            s > 0,
            "read_from got no huge pages where from_bytes got {r}"
        );
    }
}

#[test]
fn family_kinds_hold_their_arrays_on_the_same_pages() {
    if !alone("family_kinds_hold_their_arrays_on_the_same_pages") {
        return;
    }
    use blockbloom::parquet::SplitBlockFilter;
    use blockbloom::{DeletableBloomFilter, ScalableBloomFilter};

    // Every array here is above 32 MiB, a fresh mapping (see `fresh`).
    let plain = fresh(true);
    let plain_huge = huge(plain.huge_page_bytes());
    let ks = keys(200_000, 6);

    // The deletable filter and the scalable filter's stages are plain filters inside.
    let mut d = DeletableBloomFilter::with_capacity(BIG, 0.01).unwrap();
    d.insert_batch(&ks);
    assert_eq!(d.count_batch(&ks), ks.len());
    let mut s = ScalableBloomFilter::builder()
        .initial_capacity(BIG)
        .build()
        .unwrap();
    s.insert_batch(&ks).unwrap();
    assert_eq!(s.count_batch(&ks), ks.len());

    // The split-block filter: built, loaded from its bitset, and copied.
    let mut sb = SplitBlockFilter::new_with_num_bytes(64 << 20).unwrap();
    sb.insert_batch(&ks);
    let loaded = SplitBlockFilter::from_bitset(sb.as_bitset()).unwrap();
    assert_eq!(loaded, sb);
    assert_eq!(sb.clone(), sb);
    assert!(ks.iter().all(|k| loaded.contains(k)));
    assert!(huge(sb.huge_page_bytes()) <= sb.num_bytes() as u64);

    eprintln!(
        "plain {plain_huge}, deletable {}, scalable stage {}, split-block {} / loaded {} bytes on huge pages",
        huge(d.filter().huge_page_bytes()),
        huge(s.stages()[0].huge_page_bytes()),
        huge(sb.huge_page_bytes()),
        huge(loaded.huge_page_bytes()),
    );
    // Where the plain filter got huge pages, so did every kind built the same way.
    if plain_huge > 0 {
        assert!(huge(d.filter().huge_page_bytes()) > 0);
        assert!(huge(s.stages()[0].huge_page_bytes()) > 0);
        assert!(huge(sb.huge_page_bytes()) > 0);
        assert!(huge(loaded.huge_page_bytes()) > 0);
    }
}
