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
//! * a holder that unwinds while it applies another writer's run hands it back: that writer
//!   returns with its run applied once, and the locks and the hand-over work afterwards;
//! * and, as a control, the same writers without the lock do lose bits, which loom finds.

use std::sync::Arc;

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use loom::thread;

/// What `stripes.rs` takes from its surroundings, as loom models it.
mod sync {
    pub use loom::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};
    pub use std::boxed::Box;
    pub use std::vec::Vec;

    /// As the library waits for its turn, with the model's yield (a spin loop that never
    /// yields would not terminate under the model).
    #[derive(Default)]
    pub struct Backoff;

    impl Backoff {
        pub fn new() -> Backoff {
            Backoff
        }

        pub fn snooze(&mut self) {
            loom::thread::yield_now();
        }

        pub fn snooze_behind(&mut self, _ahead: u32) {
            self.snooze();
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

/// A writer's run as the models hand it over: the run holds the writer's number, and the
/// bit it sets lives in that writer's loom cell, which the writer writes before its call and
/// again after it returns (as the library's callers reuse their hash buffer). The holder reads
/// the cell when it applies the run, so loom fails the model if that read can race with the
/// poster's writes: a run read after its poster returned, or before it was posted.
struct Runs {
    bits: [UnsafeCell<u32>; 3],
    /// Applies of each writer's run (std atomics: counted, not modelled).
    applied: [std::sync::atomic::AtomicUsize; 3],
}

// SAFETY: the cells are read and written only through loom's checked accesses.
unsafe impl Sync for Runs {}

impl Runs {
    fn new() -> Arc<Runs> {
        Arc::new(Runs {
            bits: core::array::from_fn(|_| UnsafeCell::new(0)),
            applied: core::array::from_fn(|_| std::sync::atomic::AtomicUsize::new(0)),
        })
    }

    /// Writer `t`'s call of `apply_all` with the run `[t]` setting `bit` in `words[bit % n]`:
    /// one word per block, read as plain memory (`unsync_load`: loom fails the model if a
    /// store can race with it) and stored back, as `or_locked` does with a block's eight
    /// (eight words would multiply the model's steps for nothing the hand-over depends on).
    fn apply_all(&self, stripes: &Stripes, words: &[AtomicU64], t: usize, bit: u32) {
        self.apply_all_or_fail(stripes, words, t, bit, false)
    }

    /// As [`apply_all`](Self::apply_all); with `fail`, this writer panics (the injected
    /// failure) when, holding the locks, it comes to another writer's run, before it reads it.
    fn apply_all_or_fail(
        &self,
        stripes: &Stripes,
        words: &[AtomicU64],
        t: usize,
        bit: u32,
        fail: bool,
    ) {
        // SAFETY: checked by loom (a write racing with the holder's read fails the model).
        self.bits[t].with_mut(|b| unsafe { *b = bit });
        stripes.apply_all(&[t as u64], |_all, run| {
            for &w in run {
                let w = w as usize;
                if fail && w != t {
                    panic!("injected: the holder fails applying a posted run");
                }
                // SAFETY: checked by loom, as above.
                let bit = self.bits[w].with(|b| unsafe { *b });
                let word = &words[bit as usize % words.len()];
                // SAFETY: checked by loom: every store to the word is made holding its lock.
                let old = unsafe { word.unsync_load() };
                word.store(old | 1 << bit, Ordering::Relaxed);
                self.applied[w].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        });
        // Its run is set when it returns, whoever applied it.
        let word = &words[bit as usize % words.len()];
        assert!(word.load(Ordering::Relaxed) & 1 << bit != 0);
        // The buffer is the writer's again.
        // SAFETY: checked by loom, as above.
        self.bits[t].with_mut(|b| unsafe { *b = u32::MAX });
    }

    fn applied(&self, t: usize) -> usize {
        self.applied[t].load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Three threads whose waits spin (with the model's yield) take more branches than loom's
/// default allows in some interleavings.
fn bounded_by(bound: usize) -> loom::model::Builder {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(bound);
    b.max_branches = 20_000;
    b
}

// Three threads: preemption bound 1 (every interleaving with at most one preemption; each
// thread's waits yield as often as they spin), so that the models stay within seconds. At
// bound 2 they take minutes.

/// A holder, a poster and a third writer taking stripe 0 alone (a single key) at once, on two
/// stripes: every run is applied exactly once and before its writer returns, the handed-over
/// run is read only while its poster waits, the single key is set, and nobody deadlocks.
#[test]
fn a_holder_a_poster_and_a_single_key_writer_on_stripe_0() {
    bounded_by(1).check(|| {
        let stripes = Arc::new(Stripes::new(128));
        assert_eq!(stripes.len(), 2);
        let blocks: Arc<[AtomicU64]> = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
        let runs = Runs::new();
        let writers: Vec<_> = [(0usize, 3u32), (1, 8)]
            .into_iter()
            .map(|(t, bit)| {
                let (stripes, blocks, runs) = (stripes.clone(), blocks.clone(), runs.clone());
                thread::spawn(move || runs.apply_all(&stripes, &blocks, t, bit))
            })
            .collect();
        {
            let _held = stripes.lock(0);
            // SAFETY: checked by loom: every store to the word is made holding its lock.
            let old = unsafe { blocks[0].unsync_load() };
            blocks[0].store(old | 1 << 20, Ordering::Relaxed);
        }
        for t in writers {
            t.join().unwrap();
        }
        assert_eq!((runs.applied(0), runs.applied(1)), (1, 1));
        assert_eq!(blocks[0].load(Ordering::Relaxed), 1 << 8 | 1 << 20);
        assert_eq!(blocks[1].load(Ordering::Relaxed), 1 << 3);
        let stats = stripes.stats();
        assert_eq!(stats.held_runs, 2);
        assert!(stats.longest <= 3, "{stats:?}");
    });
}

/// Three writers of `apply_all` on one stripe: a holder and two posters (or a poster that
/// becomes the holder while another posts): every run applied exactly once, before its writer
/// returns, each read only while its poster waits.
#[test]
fn a_holder_and_two_posters() {
    bounded_by(1).check(|| {
        let stripes = Arc::new(Stripes::new(1));
        let blocks: Arc<[AtomicU64]> = Arc::new([AtomicU64::new(0)]);
        let runs = Runs::new();
        let writers: Vec<_> = [(1usize, 8u32), (2, 13)]
            .into_iter()
            .map(|(t, bit)| {
                let (stripes, blocks, runs) = (stripes.clone(), blocks.clone(), runs.clone());
                thread::spawn(move || runs.apply_all(&stripes, &blocks, t, bit))
            })
            .collect();
        runs.apply_all(&stripes, &blocks, 0, 3);
        for t in writers {
            t.join().unwrap();
        }
        assert_eq!(
            [runs.applied(0), runs.applied(1), runs.applied(2)],
            [1, 1, 1]
        );
        let stats = stripes.stats();
        assert_eq!(stats.held_runs, 3);
        // At most 2 (W - 1) runs of others while one call waits or holds, its own aside.
        assert!(stats.longest <= 5, "{stats:?}");
    });
}

/// A writer that calls `apply_all` twice (posting its second run while a holder may still
/// hold every lock) racing a holder that takes the locks again: the second run is not lost
/// and no record is read after its call returned.
#[test]
fn a_writer_posting_again_races_a_new_holder() {
    bounded_by(3).check(|| {
        let stripes = Arc::new(Stripes::new(1));
        let blocks: Arc<[AtomicU64]> = Arc::new([AtomicU64::new(0)]);
        let runs = Runs::new();
        let other = {
            let (stripes, blocks, runs) = (stripes.clone(), blocks.clone(), runs.clone());
            thread::spawn(move || runs.apply_all(&stripes, &blocks, 1, 8))
        };
        runs.apply_all(&stripes, &blocks, 0, 3);
        runs.apply_all(&stripes, &blocks, 0, 21);
        other.join().unwrap();
        assert_eq!([runs.applied(0), runs.applied(1)], [2, 1]);
        assert_eq!(blocks[0].load(Ordering::Relaxed), 1 << 3 | 1 << 8 | 1 << 21);
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

/// The injected failure: a holder that unwinds while it applies another writer's run (the
/// panic caught by its caller). Under every interleaving the other writer returns (it does not
/// wait for ever for a run nobody will apply) with its run applied exactly once, by itself
/// once handed back or by a holder that did not fail; the failing writer's own run is applied
/// before its panic; and the locks and the hand-over work afterwards.
#[test]
fn a_holder_that_unwinds_applying_a_posted_run_hangs_no_one_and_loses_nothing() {
    // The injected panics would each print a message; the model runs many interleavings.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    bounded_by(2).check(|| {
        let stripes = Arc::new(Stripes::new(1));
        let blocks: Arc<[AtomicU64]> = Arc::new([AtomicU64::new(0)]);
        let runs = Runs::new();
        let poster = {
            let (stripes, blocks, runs) = (stripes.clone(), blocks.clone(), runs.clone());
            thread::spawn(move || runs.apply_all(&stripes, &blocks, 1, 8))
        };
        let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            runs.apply_all_or_fail(&stripes, &blocks, 0, 3, true)
        }))
        .is_err();
        poster.join().unwrap();
        assert_eq!(
            [runs.applied(0), runs.applied(1)],
            [1, 1],
            "failed: {failed}"
        );
        assert_eq!(blocks[0].load(Ordering::Relaxed), 1 << 3 | 1 << 8);
        // The locks are free, and a run posted or applied now is applied once.
        runs.apply_all(&stripes, &blocks, 2, 13);
        assert_eq!(runs.applied(2), 1);
    });
    std::panic::set_hook(hook);
}
