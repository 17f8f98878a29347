//! Large filters on transparent huge pages (`blockbloom::memory`): the filters built with
//! and without them are the same filter, every conversion and copy of one stays correct, the
//! arrays of every kind (built, cloned, converted, folded, loaded) are 2 MiB aligned and, where
//! the system grants huge pages on request, wholly on them, and the opt-out really opts out.

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
    // Loaded filters: `from_bytes` reserves the whole array up front, `read_from` grows it as
    // bytes arrive (moving the pages written into each larger mapping).
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
    // Fresh mappings (see `fresh`); the inserts below touch (nearly) every page, so what backs
    // them is settled (the kernel zeroes pages at their first touch, nothing touches them
    // before).
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

/// A 48 MB filter. With huge pages its array is a mapping of its own; without, it is above
/// glibc's largest mmap threshold (32 MiB), so the allocator's array is a fresh mapping too. A
/// smaller one may reuse memory another test freed, with the pages it had.
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
    // grew as the bytes arrived got as much: each growth is a fresh advised mapping, and the
    // pages already written move into it.
    if r == f.size_in_bytes() as u64 {
        assert_eq!(
            s, r,
            "read_from got {s} bytes on huge pages where from_bytes got {r}"
        );
    }
}

/// Whether the system backs arrays that ask with huge pages (`always` or `madvise`).
fn granted() -> bool {
    matches!(memory::transparent_huge_pages(), Some("always" | "madvise"))
}

/// Checks that an array (`start`, `size` bytes, every page of it written) starts on a 2 MiB
/// boundary (on Linux, where large arrays are mappings of their own) and, where the system
/// grants huge pages on request, lies wholly on them (`huge` bytes).
fn on_huge_pages(what: &str, start: *const u8, size: usize, huge: Option<u64>) {
    assert!(size >= memory::HUGE_PAGES_FROM_BYTES, "{what}: too small");
    if cfg!(target_os = "linux") {
        assert!(
            (start as usize).is_multiple_of(memory::HUGE_PAGE_BYTES),
            "{what}: {start:?} is not 2 MiB aligned"
        );
    }
    let h = huge.unwrap_or(0);
    eprintln!("{what}: {h} of {size} bytes on huge pages");
    // Aligned and advised before its first touch, the whole array can take huge pages, and
    // on this project's machines it does. But the kernel grants them only while it has free
    // 2 MiB frames, which a machine whose memory is fragmented (a long CI run) may briefly
    // lack: so at least half, which an unadvised or misplaced array never reaches (the
    // opt-out checks below get none).
    if granted() && huge.is_some() {
        assert!(
            h >= size as u64 / 2,
            "{what}: {h} of {size} bytes on huge pages"
        );
    }
}

#[test]
fn every_copy_and_conversion_is_aligned_and_wholly_on_huge_pages() {
    if !alone("every_copy_and_conversion_is_aligned_and_wholly_on_huge_pages") {
        return;
    }
    // 200,000 keys write every 2 MiB page of these arrays (thousands of keys per page).
    let ks = keys(200_000, 7);
    let mut f = fresh(true);
    f.insert_batch(&ks);
    let check = |what: &str, g: &BloomFilter| {
        assert_eq!(g.count_batch(&ks), ks.len(), "{what}");
        on_huge_pages(
            what,
            g.blocks().as_ptr().cast(),
            g.size_in_bytes(),
            g.huge_page_bytes(),
        );
    };
    check("built", &f);
    let c = f.clone();
    assert_eq!(c, f);
    check("clone", &c);
    drop(c);
    let start = f.blocks().as_ptr();
    let a = f.into_atomic();
    a.insert_batch(&keys(1000, 8));
    assert_eq!(a.huge_page_bytes(), {
        let s = a.snapshot();
        check("snapshot", &s);
        s.huge_page_bytes().map(|_| a.huge_page_bytes().unwrap())
    });
    let back = a.into_filter();
    assert_eq!(
        back.blocks().as_ptr(),
        start,
        "the atomic round trip copied"
    );
    check("atomic round trip", &back);
    // A fold halves the block count, which must be even: a 64 MiB filter's is.
    let mut even = BloomFilter::builder()
        .capacity(BIG)
        .size_in_bytes(64 << 20)
        .huge_pages(true)
        .build()
        .unwrap();
    even.insert_batch(&ks);
    check("fold", &even.fold().unwrap());
    drop(even);
    let bytes = back.to_bytes();
    let loaded = BloomFilter::from_bytes(&bytes).unwrap();
    assert_eq!(loaded, back);
    check("from_bytes", &loaded);
    let streamed = BloomFilter::read_from(&bytes[..]).unwrap();
    assert_eq!(streamed, back);
    check("read_from", &streamed);
    // A view over block-aligned bytes (the header is 64 bytes), and its owned copy.
    let mut aligned = vec![blockbloom::Block::default(); bytes.len() / 64];
    // SAFETY: the blocks are `bytes.len()` initialised bytes of plain `u64`s, which any byte
    // may overwrite; the slice is the only use of `aligned` while it lives.
    let buf =
        unsafe { std::slice::from_raw_parts_mut(aligned.as_mut_ptr().cast::<u8>(), bytes.len()) };
    buf.copy_from_slice(&bytes);
    let view = blockbloom::FilterRef::from_bytes(buf).unwrap();
    assert_eq!(view.count_batch(&ks), ks.len());
    check("FilterRef::to_filter", &view.to_filter());

    // The counting filter: built, projected, loaded both ways.
    let mut c = CountingBloomFilter::builder()
        .capacity(N / 4)
        .huge_pages(true)
        .build()
        .unwrap();
    c.insert_batch(&ks);
    let counted = |what: &str, g: &CountingBloomFilter| {
        assert_eq!(g.count_batch(&ks), ks.len(), "{what}");
        on_huge_pages(
            what,
            g.blocks().as_ptr().cast(),
            g.size_in_bytes(),
            g.huge_page_bytes(),
        );
    };
    counted("counting", &c);
    counted("counting clone", &c.clone());
    let bytes = c.to_bytes();
    counted(
        "counting from_bytes",
        &CountingBloomFilter::from_bytes(&bytes).unwrap(),
    );
    counted(
        "counting read_from",
        &CountingBloomFilter::read_from(&bytes[..]).unwrap(),
    );

    // The opt-out: the global allocator's array, no huge pages where they are only granted on
    // request.
    let mut off = fresh(false);
    off.insert_batch(&ks);
    let h_off = huge(off.huge_page_bytes());
    eprintln!("opt-out: {h_off} bytes on huge pages");
    if memory::transparent_huge_pages() == Some("madvise") {
        assert_eq!(h_off, 0);
        assert_eq!(
            huge(off.clone().huge_page_bytes()),
            0,
            "the opt-out's clone"
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

    // Every array here is above 32 MiB, a fresh mapping (see `fresh`); the keys write every
    // 2 MiB page of each (the kernel zeroes a page at its first touch, nothing before).
    let ks = keys(200_000, 6);
    let mut plain = fresh(true);
    plain.insert_batch(&ks);
    let plain_huge = huge(plain.huge_page_bytes());

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
    // Where the plain filter got huge pages, so did every kind built the same way: whole
    // arrays, 2 MiB aligned (the keys wrote every 2 MiB page of each).
    if plain_huge > 0 {
        assert!(huge(d.filter().huge_page_bytes()) > 0);
        assert!(huge(s.stages()[0].huge_page_bytes()) > 0);
        assert!(huge(sb.huge_page_bytes()) > 0);
        assert!(huge(loaded.huge_page_bytes()) > 0);
    }
    let (df, st) = (d.filter(), &s.stages()[0]);
    let arrays = [
        (
            "deletable",
            df.blocks().as_ptr().cast(),
            df.size_in_bytes(),
            df.huge_page_bytes(),
        ),
        (
            "scalable stage",
            st.blocks().as_ptr().cast(),
            st.size_in_bytes(),
            st.huge_page_bytes(),
        ),
        (
            "split-block",
            sb.as_bitset().as_ptr(),
            sb.num_bytes(),
            sb.huge_page_bytes(),
        ),
        (
            "split-block from_bitset",
            loaded.as_bitset().as_ptr(),
            loaded.num_bytes(),
            loaded.huge_page_bytes(),
        ),
    ];
    for (what, start, size, h) in arrays {
        on_huge_pages(what, start, size, h);
    }

    // The classic filter: built, and loaded both ways (each read into its final pages).
    let mut classic = blockbloom::ClassicBloomFilter::new(8 * (64 << 20), 7).unwrap();
    classic.insert_batch(&ks);
    let bytes = classic.to_bytes();
    let reserved = blockbloom::ClassicBloomFilter::from_bytes(&bytes).unwrap();
    let streamed = blockbloom::ClassicBloomFilter::read_from(&bytes[..]).unwrap();
    drop(bytes);
    for (what, c) in [
        ("classic", &classic),
        ("classic from_bytes", &reserved),
        ("classic read_from", &streamed),
    ] {
        assert_eq!(c.as_words(), classic.as_words(), "{what}");
        assert_eq!(c.count_batch(&ks), ks.len(), "{what}");
        let words = c.as_words();
        let h = memory::huge_page_bytes(words);
        on_huge_pages(what, words.as_ptr().cast(), c.size_in_bytes(), h);
        if plain_huge > 0 {
            assert!(huge(h) > 0, "{what}");
        }
    }
}
