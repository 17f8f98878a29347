//! Stripe locks: how the writers of a shared filter set bits without a locked instruction per
//! word.
//!
//! The blocks of an [`AtomicBloomFilter`](crate::AtomicBloomFilter) are cut into *stripes* of
//! `2^shift` consecutive blocks, each with a lock on its own cache line. The protocol:
//!
//! * every writer (single-key insert, shared batch, writer handle) sets a block's bits only
//!   while it holds the block's stripe lock, with a relaxed load of each word, an OR, and a
//!   relaxed store ([`or_locked`]): plain `mov`s on x86 and plain `ldr`/`str` on aarch64, no
//!   read-modify-write instruction;
//! * a writer holds one lock at a time (it releases one before it takes the next), or takes
//!   every lock, in stripe order ([`Stripes::apply_all`]: a shared batch into a small filter),
//!   so no two writers wait for each other in a cycle; a writer that finds every lock taken
//!   may hand its batch to the one holding them, which applies it before it releases them
//!   (the batch is read only by that holder, between the waiter's release store that posts
//!   it and the holder's release store that says it is applied, which the waiter acquires
//!   before it returns);
//! * readers take no lock: they read words with relaxed loads.
//!
//! Why no bit is lost: the lock orders every load/OR/store on a stripe's words after the last
//! holder's stores (release on unlock, acquire on lock), so each store writes a superset of
//! every bit stored before it. Why a reader sees a flushed key: a writer's stores come before
//! its unlock, so a read that happens after the writer's call returned reads them or newer
//! values, and words only gain bits. A read racing with a writer may see some words of a
//! block updated and some not; that can only answer "no" for a key still being inserted.
//!
//! This file is also compiled by the `loom` crate (`loom/`), which checks the protocol under
//! every interleaving the model allows; it reaches its atomics through `super::sync` so that
//! the model can substitute its own.

use super::sync::{
    AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Box, Ordering, Vec, pause, read_locked,
    wait_unlocked,
};

/// Blocks per stripe at least `2^MIN_SHIFT` (64 blocks, 4 KiB): the locks, a cache line each,
/// cost at most 1/64 of the filter's memory.
const MIN_SHIFT: u32 = 6;

/// At most `2^MAX_STRIPES_LOG2` stripes (256 locks, 16 KiB; a writer notes a stripe in a
/// byte). Two writers collide on a lock
/// once in this many acquisitions; more stripes would spread a handle's buffer thinner (see
/// the writer's buffer size).
pub const MAX_STRIPES_LOG2: u32 = 8;

/// One stripe's lock, alone on its cache line, so that writers locking different stripes do
/// not pass a line between their cores.
#[repr(align(64))]
struct StripeLock(AtomicBool);

/// The stripe locks of a filter of `num_blocks` blocks.
pub struct Stripes {
    locks: Box<[StripeLock]>,
    /// A batch a writer waiting for every lock hands to the writer that holds them (boxed:
    /// on a line of its own, away from the fields every writer reads).
    handover: Box<Handover>,
    shift: u32,
}

impl Stripes {
    /// Locks for `num_blocks` blocks: `ceil(num_blocks / 2^shift)` stripes, with `shift` the
    /// smallest at least [`MIN_SHIFT`] that gives at most `2^MAX_STRIPES_LOG2` stripes.
    pub fn new(num_blocks: usize) -> Stripes {
        let bits = usize::BITS - num_blocks.saturating_sub(1).leading_zeros();
        let shift = bits.saturating_sub(MAX_STRIPES_LOG2).max(MIN_SHIFT);
        let count = num_blocks.div_ceil(1 << shift).max(1);
        let locks: Vec<StripeLock> = (0..count)
            .map(|_| StripeLock(AtomicBool::new(false)))
            .collect();
        Stripes {
            locks: locks.into_boxed_slice(),
            handover: Box::new(Handover {
                state: AtomicUsize::new(FREE),
                hashes: AtomicPtr::new(core::ptr::null_mut()),
                len: AtomicUsize::new(0),
            }),
            shift,
        }
    }

    /// How many stripes there are.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.locks.len()
    }

    /// The stripe of block `block`.
    #[inline(always)]
    pub fn stripe_of(&self, block: usize) -> usize {
        block >> self.shift
    }

    /// Blocks per stripe (the last stripe may have fewer): stripe `s` is blocks
    /// `s * blocks_per_stripe()..`.
    #[inline(always)]
    pub fn blocks_per_stripe(&self) -> usize {
        1 << self.shift
    }

    /// The stripe of the block a hash selects among `num_blocks`:
    /// `stripe_of(block_index(hash, num_blocks))` (`block_index` is `((hash >> 32) *
    /// num_blocks) >> 32`) in one shift.
    #[inline(always)]
    pub fn stripe_of_hash(&self, hash: u64, num_blocks: u64) -> usize {
        (((hash >> 32) * num_blocks) >> (32 + self.shift)) as usize
    }

    /// Takes the lock of `stripe`, waiting while another writer holds it; the guard releases
    /// it.
    ///
    /// # Panics
    /// If `stripe` is not below [`len`](Self::len).
    #[inline(always)]
    pub fn lock(&self, stripe: usize) -> StripeGuard<'_> {
        let lock = &self.locks[stripe].0;
        // A failed compare-exchange writes nothing (a failed swap would store `true` again),
        // so waiters do not keep writing the line the holder will release.
        while lock
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            wait_unlocked(lock);
        }
        StripeGuard { lock }
    }
}

/// The slot through which a writer that finds every lock taken hands its batch to the writer
/// holding them (flat combining): the holder applies it with its own, so the lines stay in
/// one core's cache, and the waiter returns when it is applied.
#[repr(align(64))]
struct Handover {
    /// [`FREE`], [`POSTING`], [`POSTED`], [`TAKEN`] or [`DONE`].
    state: AtomicUsize,
    /// The posted batch: its first element and length.
    hashes: AtomicPtr<u64>,
    len: AtomicUsize,
}

/// No batch; a waiter may post one.
const FREE: usize = 0;
/// A waiter is writing its batch's address.
const POSTING: usize = 1;
/// A batch waits; the holder may take it, or its waiter take it back.
const POSTED: usize = 2;
/// The holder is applying it.
const TAKEN: usize = 3;
/// Applied; its waiter frees the slot.
const DONE: usize = 4;

impl Stripes {
    /// Applies `own` holding every stripe's lock: `apply(guard, batch)` for `own`, and for a
    /// batch another writer handed over meanwhile, then releases the locks. If another writer
    /// holds them when this one comes, this one hands `own` over to it when the slot is free
    /// and returns once that writer applied it (or takes it back when that writer released
    /// the locks without it, and applies it itself).
    ///
    /// `apply` must not unwind while it applies a handed-over batch: its waiter would wait
    /// for ever. (The filter's `apply` is the batch kernel over hashes, which does not.)
    pub fn apply_all(&self, own: &[u64], mut apply: impl FnMut(&AllStripesGuard<'_>, &[u64])) {
        let first = &self.locks[0].0;
        let slot = &self.handover;
        loop {
            if first
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                for stripe in 1..self.len() {
                    core::mem::forget(self.lock(stripe));
                }
                let all = AllStripesGuard { stripes: self };
                apply(&all, own);
                if slot
                    .state
                    .compare_exchange(POSTED, TAKEN, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    let (at, len) = (
                        slot.hashes.load(Ordering::Relaxed),
                        slot.len.load(Ordering::Relaxed),
                    );
                    // SAFETY: a waiter posted `len` hashes at `at` (its `own`) with a release
                    // store of `POSTED`, which the compare-exchange acquired; it neither writes
                    // nor frees them until it reads `DONE`, stored below.
                    let theirs = unsafe { core::slice::from_raw_parts(at.cast_const(), len) };
                    apply(&all, theirs);
                    slot.state.store(DONE, Ordering::Release);
                }
                return;
            }
            if slot
                .state
                .compare_exchange(FREE, POSTING, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                slot.hashes
                    .store(own.as_ptr().cast_mut(), Ordering::Relaxed);
                slot.len.store(own.len(), Ordering::Relaxed);
                slot.state.store(POSTED, Ordering::Release);
                let mut spins = 0;
                loop {
                    match slot.state.load(Ordering::Acquire) {
                        DONE => {
                            slot.state.store(FREE, Ordering::Release);
                            return;
                        }
                        POSTED if !first.load(Ordering::Relaxed) => {
                            // The holder left without it: take it back and try again.
                            if slot
                                .state
                                .compare_exchange(
                                    POSTED,
                                    FREE,
                                    Ordering::Acquire,
                                    Ordering::Relaxed,
                                )
                                .is_ok()
                            {
                                break;
                            }
                        }
                        _ => pause(&mut spins),
                    }
                }
                continue;
            }
            wait_unlocked(first);
        }
    }
}

/// Proof that a writer holds the lock of the stripe a block is in: that stripe's guard, or
/// every stripe's ([`AllStripesGuard`]).
pub trait Held {}

impl Held for StripeGuard<'_> {}
impl Held for AllStripesGuard<'_> {}

/// Every stripe lock of a filter, held at once ([`Stripes::apply_all`]); released when dropped.
pub struct AllStripesGuard<'a> {
    stripes: &'a Stripes,
}

impl AllStripesGuard<'_> {
    /// Whether these are `stripes`' locks.
    pub fn holds(&self, stripes: &Stripes) -> bool {
        core::ptr::eq(self.stripes, stripes)
    }
}

impl Drop for AllStripesGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        for lock in self.stripes.locks.iter() {
            lock.0.store(false, Ordering::Release);
        }
    }
}

/// A held stripe lock; released when dropped.
pub struct StripeGuard<'a> {
    lock: &'a AtomicBool,
}

impl Drop for StripeGuard<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.lock.store(false, Ordering::Release);
    }
}

/// Sets the bits of `pattern` in `words`, a block of the stripe `_guard` locks; answers
/// whether some bit was not set before. The words are read as one block (no other writer
/// can change them while the lock is held: [`read_locked`]) and written with relaxed
/// stores, each of which a concurrent reader sees whole, before or after.
///
/// When every bit is set already nothing is written, so re-inserting present keys leaves
/// the line shared in other cores' caches.
#[inline(always)]
pub fn or_locked(words: &[AtomicU64; 8], pattern: &[u64; 8], _guard: &impl Held) -> bool {
    let old = read_locked(words);
    let mut new = [0u64; 8];
    let mut missing = 0;
    for w in 0..8 {
        new[w] = old[w] | pattern[w];
        missing |= new[w] ^ old[w];
    }
    if missing != 0 {
        for (word, new) in words.iter().zip(new) {
            word.store(new, Ordering::Relaxed);
        }
    }
    missing != 0
}
