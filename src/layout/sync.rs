//! What [`stripes`](super::stripes) takes from its surroundings: atomics, allocation, the plain
//! read of a locked block and the way a writer waits. The `loom` crate (`loom/`) compiles
//! `stripes.rs` against a module of the same shape with the model's atomics.

pub use alloc::boxed::Box;
pub use alloc::vec::Vec;
pub use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};

/// The words of a block whose stripe lock the caller holds, read as plain memory (vector
/// loads where the tier has them). Every writer of these words holds that lock, so nothing
/// writes them during the read; readers only read, and reads do not race.
#[inline(always)]
pub fn read_locked(words: &[AtomicU64; 8]) -> [u64; 8] {
    // SAFETY: `AtomicU64` has the size, alignment and bit validity of `u64`, and the words
    // sit in an `UnsafeCell`, so reading them through a pointer is allowed; no write to them
    // can happen during the read (above), so it is not a data race.
    unsafe { words.as_ptr().cast::<[u64; 8]>().read() }
}

/// How a writer waits for its turn at a lock. With `std`: pauses doubling from 1 to 64 (127
/// in all, a few microseconds), then a yield to the scheduler at each step, so that a holder
/// (or the writer whose turn comes before this one) that lost its core gets it back; with 16
/// writers on 2 cores, a waiter that only spins keeps the core the writer it waits for needs.
/// Without `std` there is no scheduler to yield to: the pauses double at each step (up to
/// 1,024 at once), so that many waiters read the lock's line less and less often while the
/// holder works.
///
/// Why no longer spins with `std`: a ticket lock serves its waiters in order, so a waiter
/// that notices its turn late delays every writer behind it, the one whose run it waited for
/// included. Spinning up to 512 pauses at once (10 steps) could notice a turn that long
/// late, on every hand-over of a lock that small calls take often; the change came with the
/// partitioned shared batches and perf-reports/2026-12-05-small-calls.md measures the two
/// together.
#[derive(Default)]
pub struct Backoff {
    step: u32,
}

impl Backoff {
    /// Steps spent pausing before the first yield (with `std`), or before the pauses stop
    /// doubling (without).
    const SPIN_STEPS: u32 = if cfg!(feature = "std") { 7 } else { 10 };

    #[inline(always)]
    pub fn new() -> Backoff {
        Backoff { step: 0 }
    }

    /// One step of the wait.
    #[inline]
    pub fn snooze(&mut self) {
        #[cfg(feature = "std")]
        if self.step >= Self::SPIN_STEPS {
            std::thread::yield_now();
            return;
        }
        for _ in 0..1u32 << self.step.min(Self::SPIN_STEPS) {
            core::hint::spin_loop();
        }
        self.step += 1;
    }
}
