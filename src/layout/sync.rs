//! What [`stripes`](crate::layout::stripes) takes from its surroundings: atomics, allocation, the plain
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

/// The function a waiting writer calls instead of yielding to the scheduler, once it has
/// paused for a few microseconds or while it is not next in line: null while none is set. A
/// `fn()` stored as a pointer (the only function pointers stored are `fn()`s, by
/// [`set_yield_hook`]).
static YIELD_HOOK: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());

/// Sets what a writer of an [`AtomicBloomFilter`](crate::AtomicBloomFilter) calls when it
/// has waited for a stripe lock for a few microseconds, at each step of the wait from then on
/// (and at every step while another waiter is ahead of it, not only the lock's holder),
/// instead of [`std::thread::yield_now`] (with `std`) or pauses that keep doubling (without):
/// `None` restores that default. It is global, for every filter in the process, and takes
/// effect at the next step of any wait.
///
/// Without `std` the crate has no scheduler to yield to, and a wait only spins. Where the
/// writers are threads of an operating system or tasks of a scheduler and there can be more
/// of them than cores, a writer whose turn comes while it is descheduled holds up every
/// writer behind it until it runs again (the locks serve writers in the order they came):
/// give the crate the scheduler's yield here. docs/guide/many-writers.md measures the
/// difference. With `std` there is rarely a reason to set one.
///
/// The hook is called from inside the wait, where the writer may already hold other stripe
/// locks of the same filter (a writer of every stripe takes them in order), so it must not
/// write to that filter. A hook that panics aborts the process: the waiting writer has taken
/// a ticket that only it can pass on, and may have posted a run that the lock's holder will
/// read, so unwinding out of the wait would hang every later writer or leave them a run that
/// no longer exists.
///
/// ```
/// // A no_std build on an operating system would pass its own yield, for example the
/// // `sched_yield` of its libc.
/// fn yield_to_scheduler() {
///     std::thread::yield_now();
/// }
/// blockbloom::set_yield_hook(Some(yield_to_scheduler));
/// let filter = blockbloom::AtomicBloomFilter::with_capacity(10_000, 0.01).unwrap();
/// std::thread::scope(|s| {
///     for t in 0..4u64 {
///         let filter = &filter;
///         s.spawn(move || filter.insert_batch(&(t * 1000..(t + 1) * 1000).collect::<Vec<_>>()));
///     }
/// });
/// assert!((0..4000u64).all(|k| filter.contains(&k)));
/// blockbloom::set_yield_hook(None);
/// ```
pub fn set_yield_hook(hook: Option<fn()>) {
    let ptr = hook.map_or(core::ptr::null_mut(), |f| f as *mut ());
    YIELD_HOOK.store(ptr, Ordering::Release);
}

/// The hook [`set_yield_hook`] set, if any.
#[inline]
fn yield_hook() -> Option<fn()> {
    let ptr = YIELD_HOOK.load(Ordering::Acquire);
    if ptr.is_null() {
        return None;
    }
    // SAFETY: the only non-null values ever stored are `fn()` pointers cast to `*mut ()` by
    // `set_yield_hook`, and a function pointer and a data pointer have the same size on
    // every target the crate builds for (it stores the one and loads it back unchanged).
    Some(unsafe { core::mem::transmute::<*mut (), fn()>(ptr) })
}

/// Calls a user's hook from inside a lock wait, which must not be left by unwinding
/// ([`set_yield_hook`] says why): a panic that would unwind out of an `extern "C"` function
/// aborts the process instead (Rust 1.81 and later).
#[allow(improper_ctypes_definitions)] // Called from Rust only: the ABI is for its unwinding.
extern "C" fn call_without_unwinding(hook: fn()) {
    hook()
}

/// Yields to the hook, else (with `std`) to the scheduler; false where there is neither.
#[inline]
fn yield_now() -> bool {
    match yield_hook() {
        Some(hook) => call_without_unwinding(hook),
        #[cfg(feature = "std")]
        None => std::thread::yield_now(),
        #[cfg(not(feature = "std"))]
        None => return false,
    }
    true
}

/// How a writer waits for its turn at a lock: while another waiter is ahead of it too, a
/// yield at each step ([`snooze_behind`](Self::snooze_behind)); next in line, pauses
/// doubling from 1 to 64 (127 in all, a few microseconds), then at each step the hook of
/// [`set_yield_hook`] if one is set, or else a yield to the scheduler (with `std`), so that a
/// holder (or the writer whose turn comes before this one) that lost its core gets it back;
/// with 16 writers on 2 cores, a waiter that only spins keeps the core the writer it waits
/// for needs. Without `std` and without a
/// hook there is no scheduler to yield to: the pauses go on doubling (up to 1,024 at once), so
/// that many waiters read the lock's line less and less often while the holder works.
///
/// Why no longer spins before yielding: a ticket lock serves its waiters in order, so a waiter
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
    /// Steps spent pausing before the first yield (to the hook, or with `std`).
    const YIELD_AFTER: u32 = 7;
    /// The step from which the pauses stop doubling (without `std` and without a hook).
    const MAX_DOUBLING: u32 = 10;

    #[inline(always)]
    pub fn new() -> Backoff {
        Backoff { step: 0 }
    }

    /// One step of the wait.
    #[inline]
    pub fn snooze(&mut self) {
        if self.step >= Self::YIELD_AFTER && yield_now() {
            return;
        }
        for _ in 0..1u32 << self.step.min(Self::MAX_DOUBLING) {
            core::hint::spin_loop();
        }
        self.step = self.step.saturating_add(1);
    }

    /// One step of a wait with `ahead` tickets to be served before this one's (the holder's
    /// included): behind more than the holder, it yields at once (where it can: without `std`
    /// and without a hook it pauses as [`snooze`](Self::snooze) does). A turn at least a whole
    /// hold away is not worth spinning for, and with more writers than cores the writer ahead
    /// may be waiting for this core: at 16 writer threads on 2 cores, with 256 stripes, this
    /// made single-key inserts and shared batches faster
    /// (perf-reports/2026-12-06-stripe-count.md).
    #[inline]
    pub fn snooze_behind(&mut self, ahead: u32) {
        if ahead > 1 && yield_now() {
            return;
        }
        self.snooze();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::Cell;

    std::thread_local! {
        /// This thread's calls of the hook (other tests' writers may call it meanwhile).
        static CALLS: Cell<u32> = const { Cell::new(0) };
    }

    fn count() {
        CALLS.with(|c| c.set(c.get() + 1));
    }

    /// A waiting writer pauses for 7 steps, then calls the hook at each step, or at once when
    /// more than the holder is ahead of it; `None` puts the default back.
    #[test]
    fn a_wait_calls_the_yield_hook_after_its_pauses() {
        set_yield_hook(Some(count));
        let mut backoff = Backoff::new();
        for _ in 0..Backoff::YIELD_AFTER {
            backoff.snooze();
        }
        assert_eq!(CALLS.with(Cell::get), 0);
        for _ in 0..3 {
            backoff.snooze();
        }
        assert_eq!(CALLS.with(Cell::get), 3);
        // Behind the holder alone, a wait pauses first; behind another waiter too, it yields
        // at once.
        let mut behind = Backoff::new();
        behind.snooze_behind(1);
        assert_eq!(CALLS.with(Cell::get), 3);
        behind.snooze_behind(2);
        behind.snooze_behind(5);
        assert_eq!(CALLS.with(Cell::get), 5);
        set_yield_hook(None);
        assert!(yield_hook().is_none());
        backoff.snooze();
        behind.snooze_behind(2);
        assert_eq!(CALLS.with(Cell::get), 5);
    }
}
