//! Every path through the crate's `unsafe` code that the interpreter can run, at sizes small
//! enough for `cargo +nightly miri test --test unsafe_paths` (CI runs it so): the batch
//! pipeline's unchecked block accesses on the scalar and portable tiers (and whatever SIMD tier
//! the host has, outside Miri), the atomic filter's zero-copy conversions, `FilterRef`'s
//! borrowed blocks, the counting and deletable block operations, the split-block filter, the
//! classic filter's word accesses, the codec's readers and decoders on good and damaged bytes
//! (all but zstd, which is C). Under plain `cargo test` it is one more differential test of
//! the same paths.

mod common;

use blockbloom::parquet::SplitBlockFilter;
use blockbloom::{BloomFilter, CountingBloomFilter, DeletableBloomFilter, Error, FilterRef, Isa};
use common::keys;

/// The tiers this run can use: under Miri, the scalar and portable tiers (the others need
/// instructions the interpreter does not run).
fn tiers() -> Vec<Isa> {
    if cfg!(miri) {
        vec![Isa::Scalar, Isa::Portable]
    } else {
        Isa::supported()
    }
}

const N: usize = 300;

#[test]
fn batches_agree_with_single_keys_on_every_tier() {
    let ks = keys(1, N);
    let small: Vec<u32> = ks.iter().map(|&k| k as u32).collect();
    let absent = keys(2, N);
    let owned: Vec<Vec<u8>> = (ks[..100].iter())
        .map(|k| k.to_le_bytes().repeat(1 + (*k % 5) as usize))
        .collect();
    let strings: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
    // The layouts a probe count names (8x64, 4x128): 8x32 has its own test below.
    let mut reference = BloomFilter::builder()
        .capacity(N as u64)
        .least_memory()
        .isa(Isa::Scalar)
        .build()
        .unwrap();
    for k in &ks {
        reference.insert(k);
    }
    for k in &small {
        reference.insert(k);
    }
    for isa in tiers() {
        for layout_probes in [8, 12] {
            let mut f = BloomFilter::builder()
                .capacity(N as u64)
                .probes(layout_probes)
                .isa(isa)
                .build()
                .unwrap();
            f.insert_batch(&ks);
            f.insert_batch(&small);
            let mut out = vec![false; N];
            f.contains_batch(&ks, &mut out);
            assert!(out.iter().all(|&x| x), "{isa}: a false negative");
            f.contains_batch(&absent, &mut out);
            for (k, &o) in absent.iter().zip(&out) {
                assert_eq!(o, f.contains(k), "{isa}: batch and single key disagree");
            }
            let hashes: Vec<u64> = absent.iter().map(|k| f.hash(k)).collect();
            assert_eq!(
                f.count_hash_batch(&hashes),
                out.iter().filter(|&&x| x).count()
            );
            if layout_probes == reference.probes() {
                assert_eq!(f, reference, "{isa}: bits differ from scalar");
            }
            // Byte strings, more than a chunk of them (64 in cache; few enough for Miri): the
            // batch hashes them a run at a time into a buffer of which only the used part is
            // initialised.
            if layout_probes == 8 {
                f.insert_batch(&strings[..50]);
                let mut out = vec![false; strings.len()];
                f.contains_batch(&strings, &mut out);
                for (k, &o) in strings.iter().zip(&out) {
                    assert_eq!(
                        o,
                        f.contains_bytes(k),
                        "{isa}: strings, batch and single key"
                    );
                }
                assert!(out[..50].iter().all(|&x| x), "{isa}: a false negative");
            }
        }
    }
}

/// Layout 8x32's half addressing (`32 j` bytes from block 0, a block's half from its
/// reference), in batches, single keys and the atomic filter's batches.
#[test]
fn layout_8x32_halves_on_every_tier() {
    let ks = keys(3, N);
    let absent = keys(4, N);
    let mut reference: Option<BloomFilter> = None;
    for isa in tiers() {
        let mut f = BloomFilter::builder()
            .capacity(N as u64)
            .layout(blockbloom::layout::Layout::Sectors8x32)
            .isa(isa)
            .build()
            .unwrap();
        f.insert_batch(&ks[..N / 2]);
        for k in &ks[N / 2..] {
            f.insert(k);
        }
        assert_eq!(f.count_batch(&ks), N, "{isa}: a false negative");
        let mut out = vec![false; N];
        f.contains_batch(&absent, &mut out);
        for (k, &o) in absent.iter().zip(&out) {
            assert_eq!(o, f.contains(k), "{isa}: batch and single key disagree");
        }
        let a = f.clone().into_atomic();
        a.insert_batch(&absent);
        assert_eq!(a.count_batch(&absent), N, "{isa}: atomic batch lost a key");
        match &reference {
            Some(r) => assert_eq!(&f, r, "{isa}: bits differ"),
            None => reference = Some(f),
        }
    }
}

#[test]
fn atomic_conversions_and_views_share_memory_safely() {
    let ks = keys(3, N);
    for isa in tiers() {
        let mut f = BloomFilter::builder()
            .capacity(N as u64)
            .isa(isa)
            .build()
            .unwrap();
        f.insert_batch(&ks[..N / 2]);
        let a = f.clone().into_atomic();
        a.insert_batch(&ks[N / 2..]);
        a.insert(&7u64);
        assert_eq!(a.count_batch(&ks), N);
        let snapshot = a.snapshot();
        let back = a.into_filter();
        assert_eq!(back, snapshot);
        assert!(back.contains(&7u64));

        // A zero-copy view over aligned bytes, and the misaligned error.
        let bytes = back.to_bytes();
        let mut aligned = vec![blockbloom::Block::ZERO; bytes.len().div_ceil(64) + 1];
        // SAFETY: a `Block` is 64 plain bytes; viewing the vector's storage as bytes is valid
        // for its whole length, and nothing else uses it meanwhile.
        let buf = unsafe {
            std::slice::from_raw_parts_mut(aligned.as_mut_ptr().cast::<u8>(), aligned.len() * 64)
        };
        buf[..bytes.len()].copy_from_slice(&bytes);
        let view = FilterRef::from_bytes(&buf[..bytes.len()]).unwrap();
        let mut out = vec![false; N];
        view.contains_batch(&ks, &mut out);
        assert!(out.iter().all(|&x| x));
        assert_eq!(view.to_filter(), back);
        buf.copy_within(0..bytes.len(), 1);
        assert!(matches!(
            FilterRef::from_bytes(&buf[1..=bytes.len()]),
            Err(Error::Misaligned { .. })
        ));
    }
}

/// Writers through every path (a buffering handle, a private one, a shared batch holding every
/// stripe's lock, single keys) and a reader at once on a filter of several stripes, under
/// Miri's data-race detector: a lock holder's plain read of its block (`read_locked`) never
/// races with a store.
#[test]
fn striped_writers_and_a_reader_race_nothing() {
    let ks = keys(11, N);
    for isa in tiers() {
        let f = BloomFilter::builder()
            .capacity(10_000)
            .isa(isa)
            .build_atomic()
            .unwrap();
        assert!(f.num_blocks() > 128, "two stripes or more");
        std::thread::scope(|s| {
            let (f, ks) = (&f, &ks);
            // A handle whose stripes fill; a shared batch that holds every lock; single keys.
            let (a, b) = ks.split_at(N / 3);
            let (a, c) = a.split_at(a.len() / 2);
            s.spawn(move || {
                let mut w = f.try_writer(N / 6).unwrap();
                w.insert_batch(a);
            });
            s.spawn(move || {
                let mut w = f.try_private_writer().unwrap();
                w.insert_batch(c);
            });
            s.spawn(move || {
                f.insert_batch(&b[..N / 3]);
                b[N / 3..].iter().for_each(|k| f.insert(k));
            });
            s.spawn(move || ks.iter().filter(|k| f.contains(*k)).count());
        });
        assert_eq!(f.count_batch(&ks), ks.len());
    }
}

/// Two threads' shared batches into one small filter at once, under Miri: a batch one writer
/// hands to the other (which applies it while holding every lock) is read only while its
/// poster waits, and both threads' keys are set when they return. At least one run must have
/// been handed over (the filter's hold counts), or the test proves nothing about hand-overs:
/// each thread makes several calls, so that one arrives while the other holds the locks.
#[test]
fn shared_batches_handed_between_writers_race_nothing() {
    let ks = keys(12, 4 * N);
    let f = BloomFilter::builder()
        .capacity(10_000)
        .build_atomic()
        .unwrap();
    // Under Miri one round nearly always hands a run over (its scheduler preempts within a
    // held run); natively the two threads may not overlap in a round, so more rounds, each
    // starting both threads at a barrier.
    let rounds = if cfg!(miri) { 4 } else { 5_000 };
    let start = std::sync::Barrier::new(2);
    for _ in 0..rounds {
        std::thread::scope(|s| {
            for part in ks.chunks(ks.len() / 2) {
                let (f, start) = (&f, &start);
                s.spawn(move || {
                    start.wait();
                    for batch in part.chunks(100) {
                        f.insert_batch(batch);
                        assert_eq!(f.count_batch(batch), batch.len());
                    }
                });
            }
        });
        if f.hold_stats().1 > 0 {
            break;
        }
    }
    assert_eq!(f.count_batch(&ks), ks.len());
    let (held, handed, longest) = f.hold_stats();
    assert!(handed >= 1, "no run was handed over ({held} held)");
    assert!(
        longest <= 3,
        "two writers: at most 2 (W - 1) + 1 runs, saw {longest}"
    );
}

#[test]
fn family_block_operations() {
    let ks = keys(4, N);
    for isa in tiers() {
        let mut c = CountingBloomFilter::builder()
            .capacity(N as u64)
            .isa(isa)
            .build()
            .unwrap();
        c.insert_batch(&ks);
        c.insert_batch(&ks[..10]);
        assert_eq!(c.count_batch(&ks), N);
        assert_eq!(c.remove_batch(&ks[..10]).unwrap(), 10);
        assert_eq!(c.count_batch(&ks), N);
        let back = CountingBloomFilter::read_from(&c.to_bytes()[..]).unwrap();
        assert_eq!(back, c);

        let mut d = DeletableBloomFilter::with_capacity(N as u64, 0.01).unwrap();
        d.insert_batch(&ks);
        let mut out = vec![false; N];
        d.contains_batch(&ks, &mut out);
        assert!(out.iter().all(|&x| x));
        assert_eq!(DeletableBloomFilter::from_bytes(&d.to_bytes()).unwrap(), d);

        let mut s = SplitBlockFilter::new_with_num_bytes(1024)
            .unwrap()
            .with_isa(isa)
            .unwrap();
        s.insert_batch(&ks);
        s.contains_batch(&ks, &mut out);
        assert!(out.iter().all(|&x| x));
        assert_eq!(SplitBlockFilter::from_bitset(s.as_bitset()).unwrap(), s);

        // The classic filter's unchecked word accesses, single and batched, with an m that
        // is not a multiple of 64, and after halving (positions reduced mod the new m).
        let mut cl = blockbloom::ClassicBloomFilter::new(4001 * 2, 5)
            .unwrap()
            .with_isa(isa)
            .unwrap();
        cl.insert_batch(&ks[..N / 2]);
        for k in &ks[N / 2..] {
            cl.insert(k);
        }
        cl.contains_batch(&ks, &mut out);
        assert!(out.iter().all(|&x| x));
        cl.halve().unwrap();
        assert_eq!(cl.count_batch(&ks), N);
        assert!(ks.iter().all(|k| cl.contains(k)));
    }
}

#[test]
fn decoders_on_damaged_bytes() {
    let mut f = BloomFilter::with_capacity(200, 0.01).unwrap();
    f.insert_batch(&keys(5, 200));
    let good = f.to_bytes();
    assert_eq!(BloomFilter::read_from(&good[..]).unwrap(), f);
    for cut in [0, 7, 63, 64, good.len() - 1] {
        assert!(BloomFilter::from_bytes(&good[..cut]).is_err());
        assert!(BloomFilter::read_from(&good[..cut]).is_err());
    }
    // One flipped bit anywhere is a typed error, never a panic.
    for i in (0..good.len()).step_by(good.len() / 40 + 1) {
        let mut bad = good.clone();
        bad[i] ^= 0x10;
        assert!(BloomFilter::from_bytes(&bad).is_err(), "byte {i}");
    }
    let c = CountingBloomFilter::with_capacity(100, 0.01)
        .unwrap()
        .to_bytes();
    for cut in [10, 64, c.len() - 1] {
        assert!(CountingBloomFilter::read_from(&c[..cut]).is_err());
    }
    // zstd is C: the interpreter cannot call it.
    #[cfg(feature = "compress")]
    if !cfg!(miri) {
        compressed_round_trip(&f);
    }
}

#[cfg(feature = "compress")]
fn compressed_round_trip(f: &BloomFilter) {
    let wire = f.to_compressed_bytes().unwrap();
    assert_eq!(&BloomFilter::from_compressed_bytes(&wire).unwrap(), f);
    assert!(BloomFilter::from_compressed_bytes(&wire[..wire.len() - 1]).is_err());
}

/// The allocation paths of `blockbloom::memory::PageBuf`: a filter large enough to ask for
/// huge pages, its copies and conversions (the atomic round trip reinterprets the same
/// memory), the split-block filter's reserved-then-filled array, and a `read_from` whose
/// array grows past its first reservation. (Under Miri, which has no `mmap`, every array is the
/// global allocator's: allocation, zeroing, growth by `realloc`, the element casts and the
/// frees are what it checks; on Linux the same calls take the mapping path.)
#[test]
fn huge_page_allocations_are_sound() {
    let mut f = BloomFilter::builder()
        .capacity(100_000)
        .size_in_bytes(blockbloom::memory::HUGE_PAGES_FROM_BYTES as u64)
        .huge_pages(true)
        .build()
        .unwrap();
    assert_eq!(f.size_in_bytes(), blockbloom::memory::HUGE_PAGES_FROM_BYTES);
    assert!(f.blocks().first().is_some_and(|b| b.0 == [0; 8]));
    assert!(f.blocks().last().is_some_and(|b| b.0 == [0; 8]));
    f.insert_batch(&[1u64, 2, 3]);
    let copy = f.clone();
    let a = f.into_atomic();
    a.insert(&4u64);
    let back = a.into_filter();
    assert_eq!(back.count_batch(&[1u64, 2, 3, 4]), 4);
    assert_eq!(copy.count_batch(&[1u64, 2, 3]), 3);
    drop(copy);

    let mut sb = blockbloom::parquet::SplitBlockFilter::new_with_num_bytes(1024).unwrap();
    sb.insert(&7u64);
    let loaded = blockbloom::parquet::SplitBlockFilter::from_bitset(sb.as_bitset()).unwrap();
    assert_eq!(loaded, sb);

    // A body one block longer than the reader's 1 MiB chunk: the array is reserved for the
    // first chunk, then grows for the last block. (Checksumming and decoding 1 MiB three times
    // takes Miri half an hour: there the growth is checked by `memory`'s unit test
    // `small_arrays_grow_by_reallocation`, `cargo +nightly miri test -p blockbloom --lib
    // memory::`.)
    if cfg!(miri) {
        return;
    }
    let mut g = BloomFilter::builder()
        .capacity(1000)
        .size_in_bytes((1 << 20) + 64)
        .build()
        .unwrap();
    assert_eq!(g.size_in_bytes(), (1 << 20) + 64);
    g.insert_batch(&[5u64, 6]);
    let bytes = g.to_bytes();
    let streamed = BloomFilter::read_from(&bytes[..]).unwrap();
    assert_eq!(streamed, g);
    assert_eq!(BloomFilter::from_bytes(&bytes).unwrap(), g);
    let snapshot = g.clone().into_atomic().snapshot();
    assert_eq!(snapshot, g);
}
