//! The stripe-lock protocol of `AtomicBloomFilter` (`src/layout/stripes.rs`, compiled here
//! as it ships, against loom's atomics) under every interleaving loom explores.
//!
//! What the library relies on, checked over small cases:
//! * writers of one block under its stripe's lock never lose a bit, whatever the order;
//! * the words a lock holder reads as plain memory (`read_locked`) are never written during
//!   the read (loom's `unsync_load` fails if a store could race with it);
//! * a reader that synchronised with a writer after its unlock finds every bit it set, and
//!   a racing reader only ever sees words gain bits;
//! * writers taking one stripe lock at a time, in any order, and writers taking every
//!   stripe's lock in stripe order, never deadlock;
//! * and, as a control, the same writers without the lock do lose bits, which loom finds.

use std::sync::Arc;

use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use loom::thread;

/// What `stripes.rs` takes from its surroundings, as loom models it.
mod sync {
    pub use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
    pub use std::boxed::Box;

    /// As the library waits for another writer, with the model's yield.
    pub fn pause(_spins: &mut u32) {
        loom::thread::yield_now();
    }
    pub use std::vec::Vec;

    /// As the library waits, with the model's yield in place of the pause and the
    /// scheduler's yield.
    pub fn wait_unlocked(lock: &AtomicBool) {
        while lock.load(Ordering::Acquire) {
            loom::thread::yield_now();
        }
    }

    /// The library reads a locked block as plain memory; loom's `unsync_load` checks that
    /// no store can race with that read.
    pub fn read_locked(words: &[AtomicU64; 8]) -> [u64; 8] {
        // SAFETY: loom's `unsync_load` is checked by the model: it fails the run if a store
        // to the word is not ordered before it.
        core::array::from_fn(|w| unsafe { words[w].unsync_load() })
    }
}

#[path = "../../src/layout/stripes.rs"]
#[allow(dead_code)]
mod stripes;

use stripes::{Stripes, or_locked};

type Words = Arc<[AtomicU64; 8]>;

fn words() -> Words {
    Arc::new(core::array::from_fn(|_| AtomicU64::new(0)))
}

fn read(words: &[AtomicU64; 8]) -> [u64; 8] {
    core::array::from_fn(|w| words[w].load(Ordering::Relaxed))
}

/// A pattern with one bit in each word, as `Sectors8x64` sets (different keys set
/// different bits of the same words).
fn pattern(bit: u32) -> [u64; 8] {
    core::array::from_fn(|w| 1 << ((bit + w as u32) % 64))
}

fn has(words: &[u64; 8], p: &[u64; 8]) -> bool {
    words.iter().zip(p).all(|(w, p)| w & p == *p)
}

fn bounded() -> loom::model::Builder {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b
}

#[test]
fn locked_writers_of_one_block_lose_no_bit() {
    bounded().check(|| {
        let stripes = Arc::new(Stripes::new(1));
        let block = words();
        let writers: Vec<_> = [3u32, 17]
            .into_iter()
            .map(|bit| {
                let (stripes, block) = (stripes.clone(), block.clone());
                thread::spawn(move || {
                    let guard = stripes.lock(0);
                    or_locked(&block, &pattern(bit), &guard)
                })
            })
            .collect();
        let new: Vec<bool> = writers.into_iter().map(|t| t.join().unwrap()).collect();
        let bits = read(&block);
        assert!(has(&bits, &pattern(3)) && has(&bits, &pattern(17)));
        assert_eq!(new, [true, true]);
    });
}

#[test]
fn the_same_key_from_two_writers_is_new_exactly_once() {
    bounded().check(|| {
        let stripes = Arc::new(Stripes::new(1));
        let block = words();
        let writers: Vec<_> = (0..2)
            .map(|_| {
                let (stripes, block) = (stripes.clone(), block.clone());
                thread::spawn(move || or_locked(&block, &pattern(9), &stripes.lock(0)))
            })
            .collect();
        let new = writers.into_iter().map(|t| t.join().unwrap());
        assert_eq!(new.filter(|&n| n).count(), 1);
    });
}

#[test]
fn a_reader_after_the_unlock_finds_the_key_and_a_racing_one_sees_bits_only_grow() {
    bounded().check(|| {
        let stripes = Arc::new(Stripes::new(1));
        let block = words();
        let published = Arc::new(AtomicBool::new(false));
        let writer = {
            let (stripes, block, published) = (stripes.clone(), block.clone(), published.clone());
            thread::spawn(move || {
                or_locked(&block, &pattern(5), &stripes.lock(0));
                published.store(true, Ordering::Release);
            })
        };
        // Racing reads: each word only gains bits between two reads.
        let first = read(&block);
        let seen = published.load(Ordering::Acquire);
        let second = read(&block);
        for (a, b) in first.iter().zip(&second) {
            assert_eq!(a & b, *a, "a bit disappeared");
        }
        if seen {
            assert!(has(&second, &pattern(5)), "a published key was missed");
        }
        writer.join().unwrap();
        assert!(has(&read(&block), &pattern(5)));
    });
}

#[test]
fn writers_taking_one_stripe_at_a_time_in_any_order_never_deadlock() {
    bounded().check(|| {
        // 128 blocks: two stripes of 64.
        let stripes = Arc::new(Stripes::new(128));
        assert_eq!(stripes.len(), 2);
        let blocks = Arc::new([words(), words()]);
        let writers: Vec<_> = [[0usize, 1], [1, 0]]
            .into_iter()
            .enumerate()
            .map(|(t, order)| {
                let (stripes, blocks) = (stripes.clone(), blocks.clone());
                thread::spawn(move || {
                    for s in order {
                        // As `LockedInsert` switches stripes: release, then take the next.
                        let guard = stripes.lock(s);
                        or_locked(&blocks[s], &pattern(t as u32 * 7), &guard);
                    }
                })
            })
            .collect();
        for t in writers {
            t.join().unwrap();
        }
        for block in blocks.iter() {
            let bits = read(block);
            assert!(has(&bits, &pattern(0)) && has(&bits, &pattern(7)));
        }
    });
}

#[test]
fn a_writer_holding_every_stripe_and_one_taking_them_one_at_a_time_never_deadlock() {
    bounded().check(|| {
        // 128 blocks: two stripes of 64.
        let stripes = Arc::new(Stripes::new(128));
        let blocks = Arc::new([words(), words()]);
        // Writer 0 takes both locks at once, in stripe order (a shared batch into a small
        // filter), and sets a bit in each stripe's block; writer 1 takes one stripe at a
        // time, from the last.
        let writers: Vec<_> = (0..2u32)
            .map(|t| {
                let (stripes, blocks) = (stripes.clone(), blocks.clone());
                thread::spawn(move || {
                    if t == 0 {
                        stripes.apply_all(&[], |all, _| {
                            for block in blocks.iter() {
                                or_locked(block, &pattern(0), all);
                            }
                        });
                    } else {
                        for s in [1usize, 0] {
                            or_locked(&blocks[s], &pattern(7), &stripes.lock(s));
                        }
                    }
                })
            })
            .collect();
        for t in writers {
            t.join().unwrap();
        }
        for block in blocks.iter() {
            let bits = read(block);
            assert!(has(&bits, &pattern(0)) && has(&bits, &pattern(7)));
        }
    });
}

#[test]
fn batches_handed_to_the_holder_of_every_lock_are_applied_once_and_before_their_writer_returns() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.check(|| {
        // 128 blocks: two stripes of 64.
        let stripes = Arc::new(Stripes::new(128));
        let blocks = Arc::new([words(), words()]);
        // Two writers apply a batch of one "hash" each (its bit, and its block: the hash's
        // parity): each applies its own, or hands it to the other while that one holds the
        // locks, which applies it with its own.
        let writers: Vec<_> = [3u64, 8]
            .into_iter()
            .map(|h| {
                let (stripes, blocks) = (stripes.clone(), blocks.clone());
                thread::spawn(move || {
                    let mut applied = 0;
                    stripes.apply_all(&[h], |all, hashes| {
                        for &h in hashes {
                            or_locked(&blocks[h as usize % 2], &pattern(h as u32), all);
                        }
                        applied += 1;
                    });
                    // Its own batch is set when it returns, whoever applied it.
                    assert!(has(&read(&blocks[h as usize % 2]), &pattern(h as u32)));
                    applied
                })
            })
            .collect();
        let applies: usize = writers.into_iter().map(|t| t.join().unwrap()).sum();
        // Every batch applied exactly once: two calls of `apply` in all.
        assert_eq!(applies, 2);
    });
}

/// The control: the same load, OR and store without the lock loses a bit in some
/// interleaving, and loom finds it. (If this test failed, the checks above would prove
/// nothing.)
#[test]
fn without_the_lock_loom_finds_a_lost_bit() {
    let lost = std::panic::catch_unwind(|| {
        bounded().check(|| {
            let block = words();
            let writers: Vec<_> = [3u32, 17]
                .into_iter()
                .map(|bit| {
                    let block = block.clone();
                    thread::spawn(move || {
                        let p = pattern(bit);
                        for (w, p) in block.iter().zip(p) {
                            w.store(w.load(Ordering::Relaxed) | p, Ordering::Relaxed);
                        }
                    })
                })
                .collect();
            for t in writers {
                t.join().unwrap();
            }
            let bits = read(&block);
            assert!(has(&bits, &pattern(3)) && has(&bits, &pattern(17)), "lost");
        })
    });
    assert!(lost.is_err(), "loom did not find the lost update");
}
