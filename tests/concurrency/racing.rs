//! Writers racing on the same keys and on every lock: who wins `insert_new`, and how long a
//! writer waits.

use super::*;

/// Proves: threads racing `insert_new` on the same fresh keys get at most one `true` per key
/// (the stripe lock orders them), nearly always exactly one, single key and batch, on every
/// tier.
#[test]
fn racing_insert_new_answers_true_at_most_once_per_key() {
    const THREADS: usize = 4;
    const KEYS: usize = 20_000;
    for isa in tiers() {
        let f = BloomFilter::builder()
            .capacity(KEYS as u64)
            .fpr(0.001)
            .isa(isa)
            .build_atomic()
            .unwrap();
        let keys = common::keys(0xf00d, KEYS);
        let wins: Vec<AtomicUsize> = (0..KEYS).map(|_| AtomicUsize::new(0)).collect();
        let start = Barrier::new(THREADS);
        std::thread::scope(|s| {
            for t in 0..THREADS {
                let (f, keys, wins, start) = (&f, &keys, &wins, &start);
                s.spawn(move || {
                    start.wait();
                    if t % 2 == 0 {
                        for (i, k) in keys.iter().enumerate() {
                            if f.insert_new(k) {
                                wins[i].fetch_add(1, Relaxed);
                            }
                        }
                    } else {
                        let mut new = [false; 64];
                        for (c, chunk) in keys.chunks(64).enumerate() {
                            let new = &mut new[..chunk.len()];
                            f.insert_batch_new(chunk, new);
                            for (j, _) in new.iter().enumerate().filter(|(_, n)| **n) {
                                wins[c * 64 + j].fetch_add(1, Relaxed);
                            }
                        }
                    }
                });
            }
        });
        // A key whose bits other keys had all set already is new to nobody (a false
        // positive of the filter as it filled): at most one winner, and nearly every key one.
        let counts: Vec<usize> = wins.iter().map(|w| w.load(Relaxed)).collect();
        assert!(
            counts.iter().all(|&c| c <= 1),
            "{isa}: a key was new to two threads"
        );
        let winners = counts.iter().filter(|&&c| c == 1).count();
        assert!(
            winners > KEYS * 99 / 100,
            "{isa}: {winners} of {KEYS} keys were new once"
        );
    }
}

/// Proves: `insert_new` racing `insert_batch` of the same keys (shared batches, held and
/// handed over) tells at most one thread per key that it was new, and none where the batch
/// set the key first; every key is in the filter after. `insert_new` promises no more.
#[test]
fn insert_new_racing_insert_batch_has_at_most_one_winner() {
    const KEYS: usize = 40_000;
    let f = AtomicBloomFilter::with_capacity(KEYS as u64, 0.001).unwrap();
    let keys = common::keys(0xbeef, KEYS);
    let wins: Vec<AtomicUsize> = (0..KEYS).map(|_| AtomicUsize::new(0)).collect();
    let start = Barrier::new(4);
    std::thread::scope(|s| {
        for t in 0..4 {
            let (f, keys, wins, start) = (&f, &keys, &wins, &start);
            s.spawn(move || {
                start.wait();
                if t < 2 {
                    for (i, k) in keys.iter().enumerate() {
                        if f.insert_new(k) {
                            wins[i].fetch_add(1, Relaxed);
                        }
                    }
                } else {
                    for chunk in keys.chunks(500) {
                        f.insert_batch(chunk);
                    }
                }
            });
        }
    });
    let counts: Vec<usize> = wins.iter().map(|w| w.load(Relaxed)).collect();
    assert!(
        counts.iter().all(|&c| c <= 1),
        "a key was new to two threads"
    );
    let none = counts.iter().filter(|&&c| c == 0).count();
    eprintln!(
        "{none} of {KEYS} keys were new to no insert_new (the batch came first, or a false positive)"
    );
    assert_eq!(f.count_batch(&keys), KEYS);
}

/// Proves the stated bound on waits (`layout::stripes`, `AtomicBloomFilter`'s docs): 16
/// writers on one small filter (the hand-over path), 12 of them shared batches of up to 3,000
/// keys, two private handles and two single-key writers, record in the filter's hold counts
/// the most runs applied holding every lock while one run's call waited or held; it stays at
/// or below 2 W - 1 (W = the 12 writers of shared batches, own run included). Every key is
/// found and the words equal the sequential build. Bounded: 16 x 12,000 keys.
#[test]
fn sixteen_writers_wait_within_the_stated_bound() {
    const WRITERS: usize = 16;
    const BATCH_WRITERS: u64 = 12;
    // The stated bound: 2 (W - 1) runs of other writers, and the writer's own.
    const BOUND: u64 = 2 * (BATCH_WRITERS - 1) + 1;
    const PER_WRITER: usize = 12_000;
    let build = || {
        BloomFilter::builder()
            .capacity((WRITERS * PER_WRITER) as u64)
            .fpr(0.01)
    };
    let f = build().build_atomic().unwrap();
    assert!(f.size_in_bytes() <= blockbloom::AtomicWriter::PRIVATE_MAX_BYTES);
    let keys: Vec<Vec<u64>> = (0..WRITERS)
        .map(|w| common::keys(0xb0b0 + w as u64, PER_WRITER))
        .collect();
    let start = Barrier::new(WRITERS);
    std::thread::scope(|s| {
        for (w, keys) in keys.iter().enumerate() {
            let (f, start) = (&f, &start);
            s.spawn(move || {
                let mut rng = SplitMix64::new(w as u64);
                start.wait();
                match w {
                    12 | 13 => {
                        let mut h = f.writer();
                        for chunk in keys.chunks(1_000) {
                            h.insert_batch(chunk);
                            h.flush();
                        }
                    }
                    14 | 15 => keys.iter().for_each(|k| f.insert(k)),
                    _ => {
                        let mut end = 0;
                        while end < keys.len() {
                            let n = (64 + rng.next_u64() as usize % 3_000).min(keys.len() - end);
                            f.insert_batch(&keys[end..end + n]);
                            end += n;
                        }
                    }
                }
            });
        }
    });
    let (held, handed, longest) = f.hold_stats();
    eprintln!("{held} runs held, {handed} handed over, longest wait {longest} runs");
    assert!(held > 0);
    assert!(
        longest <= BOUND,
        "a run saw {longest} runs applied holding every lock, above 2 W - 1"
    );
    let all: Vec<u64> = keys.concat();
    assert_eq!(f.count_batch(&all), all.len());
    let mut want = build().isa(Isa::Scalar).build().unwrap();
    want.insert_batch(&all);
    assert!(
        f.into_filter().blocks() == want.blocks(),
        "bits differ from the sequential build"
    );
}
