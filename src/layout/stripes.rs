//! Stripe locks: how the writers of a shared filter set bits without a locked instruction per
//! word, and how every one of them finishes within a bound.
//!
//! The blocks of an [`AtomicBloomFilter`](crate::AtomicBloomFilter) are cut into *stripes* of
//! `2^shift` consecutive blocks, each with a lock on its own cache line. The protocol:
//!
//! * every writer (single-key insert, shared batch, writer handle) sets a block's bits only
//!   while it holds the block's stripe lock, with a relaxed load of each word, an OR, and a
//!   relaxed store ([`or_locked`]): plain `mov`s on x86 and plain `ldr`/`str` on aarch64, no
//!   read-modify-write instruction;
//! * a lock is a FIFO ticket lock: a writer takes the next ticket and waits until the lock
//!   serves it; the holder's unlock serves the next ticket (one store). A free lock is taken
//!   with one compare-exchange (the ticket being served, when none is out), a taken one with
//!   a `fetch_add` and the wait. Writers get a lock in the order they asked for it;
//! * a writer holds one lock at a time (it releases one before it takes the next), or takes
//!   every lock, in stripe order ([`Stripes::apply_all`]: a shared batch into a small filter),
//!   so no two writers wait for each other in a cycle;
//! * a writer of [`Stripes::apply_all`] that finds stripe 0 taken *posts* its run (flat
//!   combining): it pushes a record of it onto a lock-free stack, then waits for its ticket on
//!   stripe 0. The holder of every lock, after its own run, takes the whole stack and applies
//!   every run on it, again and again until it is empty, and only then releases the locks. A
//!   poster whose turn comes finds its run applied (it releases stripe 0 and returns), or not
//!   (the stack was empty when the holder last looked, or the holder unwound): then it is the
//!   holder, takes the other stripes, applies its own run and drains the stack in turn;
//! * readers take no lock: they read words with relaxed loads.
//!
//! Why no bit is lost: the lock orders every load/OR/store on a stripe's words after the last
//! holder's stores (release on unlock, acquire when a waiter sees its ticket served), so each
//! store writes a superset of every bit stored before it. Why a reader sees a flushed key: a
//! writer's stores come before its unlock, so a read that happens after the writer's call
//! returned reads them or newer values, and words only gain bits. A read racing with a writer
//! may see some words of a block updated and some not; that can only answer "no" for a key
//! still being inserted.
//!
//! **The hand-over's orderings.** A poster writes its record's fields (the run's address and
//! length, the state `PENDING`, the old head as `next`) and publishes it with a release
//! compare-exchange of the stack's head; the holder takes the stack with an acquire swap, so it
//! reads those fields and the run as the poster wrote them. The holder reads a record's `next`
//! before it marks it `APPLIED` (release), and marks it after it wrote the run's bits. The
//! poster reads the state only once its ticket on stripe 0 is served, which happens after the
//! unlock of every holder before it (a release store that its acquire load reads), so it sees
//! the last state any holder wrote, and every bit that holder stored. No check of "is the lock
//! free" races with a push (the Dekker pattern, which would need sequentially consistent
//! fences): a poster does not decide from the lock's state whether someone will apply its run;
//! it holds a ticket, so either a holder applies the run or its own turn comes.
//!
//! **Why the record outlives every use of it.** The record and the run live in the poster's
//! call. A holder touches a record only between taking it off the stack and the end of its
//! hold. A record another writer takes off the stack belongs to a poster still waiting for
//! its turn (a served poster whose record is still on the stack holds stripe 0, so nobody else
//! takes the stack until it has taken it itself), so that poster's turn, and its return, come
//! after that holder's unlock.
//!
//! **The bound.** Let W be the writers in the filter at once, of any kind. A writer waits for
//! at most W-1 holds of a lock before it gets it (one ticket each, served in order). A hold of
//! one stripe is one run of one writer (a single key, a handle's or a large filter's batch
//! keys of that stripe, a private handle's blocks of that stripe). A hold of every lock takes
//! stripes 1 to S-1 (S stripes) in order, each behind at most W-1 holds of one stripe (no
//! writer holding every lock can be ahead there: it would hold stripe 0), then applies the
//! holder's run and at most one run of each other writer (a writer posts again only after its
//! call returned, which needs its own turn on stripe 0, after this hold). And from the moment a
//! writer of [`Stripes::apply_all`] takes its ticket until it releases stripe 0, at most
//! 2(W-1) runs of other writers are applied holding every lock: each other writer's current
//! run and its next one (a third call would need a turn after this writer's). A poster whose
//! turn comes with its run applied holds stripe 0 only to release it.
//!
//! **Unwinding.** If applying a run unwinds in the holder, a guard marks every record it took
//! off the stack and had not applied (the failing one included) `RETURNED`, before the lock
//! guard releases the stripes; each of those posters, at its turn, applies its own run itself
//! (bits only gain, so setting a run that was partly set is harmless). A holder's own record
//! leaves the stack before anything that can unwind runs, so its memory may go with the
//! unwinding call.
//!
//! This file is also compiled by the `loom` crate (`loom/`), which checks the protocol under
//! every interleaving the model allows; it reaches its atomics through `super::sync` so that
//! the model can substitute its own.

use super::sync::{AtomicPtr, AtomicU32, AtomicU64, Backoff, Box, Ordering, Vec, read_locked};

/// Blocks per stripe at least `2^MIN_SHIFT` (64 blocks, 4 KiB): the locks, a cache line each,
/// cost at most 1/64 of the filter's memory.
const MIN_SHIFT: u32 = 6;

/// At most `2^MAX_STRIPES_LOG2` stripes (64 locks, 4 KiB; a writer notes a stripe in a
/// byte). Two writers collide on a lock once in this many acquisitions. Fewer stripes make a
/// shared batch take fewer locks (a call of 1,000 keys into a large filter took about 7 keys
/// a lock with 256 stripes) and give a handle's buffer more slots per stripe; but with more
/// writer threads than cores, single-key writers queue behind descheduled ones: at 16
/// stripes they ran several times slower than at 256, at 64 (with waiters that yield when
/// they are behind another, `Backoff::snooze_behind`) 1.4-1.5x slower, where shared batches
/// ran 1.35-1.5x faster (16 threads on 2 cores: perf-reports/2026-12-06-stripe-count.md).
pub const MAX_STRIPES_LOG2: u32 = 6;

/// One stripe's lock, a FIFO ticket lock alone on its cache line, so that writers locking
/// different stripes do not pass a line between their cores.
#[repr(align(64))]
struct StripeLock {
    /// The next ticket to hand out.
    next: AtomicU32,
    /// The ticket whose writer holds the lock (the lock is free when it equals `next`).
    /// Only the holder writes it, when it releases.
    serving: AtomicU32,
}

impl StripeLock {
    fn new() -> StripeLock {
        StripeLock {
            next: AtomicU32::new(0),
            serving: AtomicU32::new(0),
        }
    }

    /// A ticket (the order among the `fetch_add`s is the order of service; the acquire that
    /// orders this writer after the last holder is the load of `serving` in [`wait`]).
    ///
    /// [`wait`]: Self::wait
    #[inline(always)]
    fn ticket(&self) -> u32 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Whether `ticket` is served now (acquire: the last holder's release is then seen).
    #[inline(always)]
    fn served(&self, ticket: u32) -> bool {
        self.serving.load(Ordering::Acquire) == ticket
    }

    /// Takes the lock. When it is free (no ticket out: `next == serving`), one
    /// compare-exchange takes the ticket being served; otherwise a ticket and the wait for it.
    /// The compare-exchange can only succeed when nobody waits, so the order of service stays
    /// the order of the tickets.
    #[inline(always)]
    fn lock(&self) {
        let free = self.serving.load(Ordering::Acquire);
        if self
            .next
            .compare_exchange(
                free,
                free.wrapping_add(1),
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_err()
        {
            self.lock_slow();
        }
    }

    /// A ticket, and the wait for it.
    #[cold]
    #[inline(never)]
    fn lock_slow(&self) {
        let ticket = self.ticket();
        self.wait(ticket);
    }

    /// Waits until `ticket` is served: pausing while only the holder is ahead, yielding at
    /// once while another waiter is too (its turn is at least a whole hold away, and with
    /// more writers than cores the writer ahead may need this core to finish).
    #[cold]
    #[inline(never)]
    fn wait(&self, ticket: u32) {
        let mut backoff = Backoff::new();
        loop {
            let serving = self.serving.load(Ordering::Acquire);
            if serving == ticket {
                return;
            }
            backoff.snooze_behind(ticket.wrapping_sub(serving));
        }
    }

    /// Serves the next ticket. Only the holder writes `serving`, so its relaxed load reads the
    /// value it was served at (or a value it stored itself). (Keeping the ticket in the guard
    /// instead of loading it cost more instructions per single-key insert, not fewer.)
    #[inline(always)]
    fn unlock(&self) {
        let held = self.serving.load(Ordering::Relaxed);
        self.serving.store(held.wrapping_add(1), Ordering::Release);
    }
}

/// The stripe locks of a filter of `num_blocks` blocks.
pub struct Stripes {
    locks: Box<[StripeLock]>,
    /// The runs posted to the holder of every lock, and what holders count (boxed: on a line
    /// of its own, away from the fields every writer reads).
    posted: Box<Posted>,
    shift: u32,
}

/// A run a writer of [`Stripes::apply_all`] hands to the holder of every lock, in the
/// poster's call; every field an atomic (the model checker sees each access).
struct Record {
    /// The run: its first hash and length.
    hashes: AtomicPtr<u64>,
    len: AtomicU64,
    /// [`PENDING`], [`APPLIED`] or [`RETURNED`].
    state: AtomicU32,
    /// The record pushed before this one.
    next: AtomicPtr<Record>,
}

/// On the stack, or taken by a holder that has not applied it yet.
const PENDING: u32 = 0;
/// Its bits are set; its poster may return.
const APPLIED: u32 = 1;
/// A holder took it and unwound before it applied it: its poster applies it.
const RETURNED: u32 = 2;

/// The stack of posted runs, and counts the holders of every lock keep (written only by the
/// writer holding stripe 0, with a load and a store: no locked instruction).
#[repr(align(64))]
struct Posted {
    /// The last record pushed (null: none).
    head: AtomicPtr<Record>,
    /// Runs applied holding every lock.
    held_runs: AtomicU64,
    /// Of those, runs applied by another writer than the one that posted them.
    handed: AtomicU64,
    /// The most runs applied holding every lock between one call of
    /// [`apply_all`](Stripes::apply_all) taking its ticket and releasing stripe 0, its own
    /// run included.
    longest: AtomicU64,
}

/// What the holders of every lock have counted ([`Stripes::stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HoldStats {
    /// Runs applied holding every lock.
    pub held_runs: u64,
    /// Of those, runs applied by another writer than the one that posted them (hand-overs).
    pub handed: u64,
    /// The most runs applied holding every lock while one call of `apply_all` waited or
    /// held (from its ticket to its release of stripe 0), its own run included. At most
    /// `2 W - 1` with W writers of `apply_all` at once (see the module's docs).
    pub longest: u64,
}

impl Stripes {
    /// Locks for `num_blocks` blocks: `ceil(num_blocks / 2^shift)` stripes, with `shift` the
    /// smallest at least [`MIN_SHIFT`] that gives at most `2^MAX_STRIPES_LOG2` stripes.
    pub fn new(num_blocks: usize) -> Stripes {
        let bits = usize::BITS - num_blocks.saturating_sub(1).leading_zeros();
        let shift = bits.saturating_sub(MAX_STRIPES_LOG2).max(MIN_SHIFT);
        let count = num_blocks.div_ceil(1 << shift).max(1);
        let locks: Vec<StripeLock> = (0..count).map(|_| StripeLock::new()).collect();
        Stripes {
            locks: locks.into_boxed_slice(),
            posted: Box::new(Posted {
                head: AtomicPtr::new(core::ptr::null_mut()),
                held_runs: AtomicU64::new(0),
                handed: AtomicU64::new(0),
                longest: AtomicU64::new(0),
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

    /// Writes `hashes` into `out` (same length) grouped by stripe, each stripe's in their
    /// order, so that a writer applying `out` takes each stripe's lock once: a counting sort,
    /// one pass to count and one to place. The groups start from the stripe of the first hash
    /// and go round, so that writers partitioning at the same time do not walk the stripes
    /// in step, each waiting at the lock the one ahead of it holds (the first hash is as good
    /// as a random stripe, and costs no shared counter).
    ///
    /// The two halves of `hashes` are counted and placed with counters of their own, one hash
    /// of each in turn (the first half's hashes of a stripe go before the second half's, so
    /// the order is the same): placing a hash reads its stripe's counter and stores it bumped,
    /// and one stream of those steps kept the core waiting on the step before it. Two
    /// interleaved streams made shared batches into a 16M-key filter faster on one thread
    /// (perf-reports/2026-12-06-partition.md).
    ///
    /// # Panics
    /// If the lengths differ, or a hash selects a block outside `num_blocks` (only when
    /// `num_blocks` is not the filter's these locks cover).
    pub fn partition(&self, hashes: &[u64], num_blocks: u64, out: &mut [u64]) {
        assert_eq!(hashes.len(), out.len(), "one slot for each hash");
        let Some(&head) = hashes.first() else {
            return;
        };
        let stripes = self.len();
        let stripe = |h: u64| self.stripe_of_hash(h, num_blocks);
        let (front, back) = hashes.split_at(hashes.len() / 2);
        let mut at_front = [0u32; 1 << MAX_STRIPES_LOG2];
        let mut at_back = [0u32; 1 << MAX_STRIPES_LOG2];
        let (at_front, at_back) = (&mut at_front[..stripes], &mut at_back[..stripes]);
        for &h in front {
            at_front[stripe(h)] += 1;
        }
        for &h in back {
            at_back[stripe(h)] += 1;
        }
        let first = stripe(head);
        let mut start = 0;
        for s in (first..stripes).chain(0..first) {
            let (in_front, in_back) = (at_front[s], at_back[s]);
            at_front[s] = start;
            at_back[s] = start + in_front;
            start += in_front + in_back;
        }
        // The back half has the odd hash out, if any: placed after the pairs.
        for (&f, &b) in front.iter().zip(back) {
            let (sf, sb) = (stripe(f), stripe(b));
            let (to_f, to_b) = (at_front[sf], at_back[sb]);
            at_front[sf] = to_f + 1;
            at_back[sb] = to_b + 1;
            out[to_f as usize] = f;
            out[to_b as usize] = b;
        }
        if let Some(&b) = back.get(front.len()) {
            out[at_back[stripe(b)] as usize] = b;
        }
    }

    /// Takes the lock of `stripe`, after at most W - 1 holds of it by other writers (W the
    /// writers at once: the lock serves tickets in order); the guard releases it.
    ///
    /// # Panics
    /// If `stripe` is not below [`len`](Self::len).
    #[inline(always)]
    pub fn lock(&self, stripe: usize) -> StripeGuard<'_> {
        let lock = &self.locks[stripe];
        lock.lock();
        StripeGuard { lock }
    }

    /// What the holders of every lock have counted (relaxed loads: exact once the writers are
    /// done).
    pub fn stats(&self) -> HoldStats {
        let p = &self.posted;
        HoldStats {
            held_runs: p.held_runs.load(Ordering::Relaxed),
            handed: p.handed.load(Ordering::Relaxed),
            longest: p.longest.load(Ordering::Relaxed),
        }
    }

    /// Whether a posted run waits on the stack (for tests that arrange a hand-over).
    #[cfg(all(test, feature = "std"))]
    pub fn has_posted(&self) -> bool {
        !self.posted.head.load(Ordering::Acquire).is_null()
    }

    /// Applies `own` holding every stripe's lock: `apply(guard, run)` for `own` and for each
    /// run other writers posted meanwhile, then releases the locks. If stripe 0 is taken when
    /// this writer comes, it posts `own` and waits for its turn on stripe 0: it returns then if
    /// a holder applied `own`, and is the holder otherwise. The bound on the wait is in the
    /// module's docs.
    ///
    /// If `apply` unwinds, the runs of other writers this one took and had not applied go back
    /// to their writers, who apply them, and the locks are released; the panic goes on.
    pub fn apply_all(&self, own: &[u64], mut apply: impl FnMut(&AllStripesGuard<'_>, &[u64])) {
        let first = &self.locks[0];
        let ticket = first.ticket();
        let start = self.posted.held_runs.load(Ordering::Relaxed);
        if first.served(ticket) {
            let all = AllStripesGuard::take(self);
            self.hold(&all, own, None, &mut apply);
            self.note_wait(start);
            return;
        }
        let record = Record {
            hashes: AtomicPtr::new(own.as_ptr().cast_mut()),
            len: AtomicU64::new(own.len() as u64),
            state: AtomicU32::new(PENDING),
            next: AtomicPtr::new(core::ptr::null_mut()),
        };
        self.push(&record);
        first.wait(ticket);
        // Served: every holder before this writer has released stripe 0 (and the acquire in
        // `wait` read the last one's release), so the state is the last any holder wrote.
        if record.state.load(Ordering::Acquire) == APPLIED {
            self.note_wait(start);
            first.unlock();
            return;
        }
        let all = AllStripesGuard::take(self);
        self.hold(&all, own, Some(&record), &mut apply);
        self.note_wait(start);
    }

    /// Pushes `record` onto the stack of posted runs (release: the holder that takes it reads
    /// its fields).
    fn push(&self, record: &Record) {
        let head = &self.posted.head;
        let me = core::ptr::from_ref(record).cast_mut();
        let mut old = head.load(Ordering::Relaxed);
        loop {
            record.next.store(old, Ordering::Relaxed);
            match head.compare_exchange_weak(old, me, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return,
                Err(now) => old = now,
            }
        }
    }

    /// The holder's work, every lock held: take the stack (so that `mine`, this writer's own
    /// record when it posted, is off it before anything here can unwind), apply `own`, then
    /// every run taken, and take the stack again until it is empty.
    fn hold(
        &self,
        all: &AllStripesGuard<'_>,
        own: &[u64],
        mine: Option<&Record>,
        apply: &mut impl FnMut(&AllStripesGuard<'_>, &[u64]),
    ) {
        let posted = &self.posted;
        let mine = mine.map_or(core::ptr::null(), core::ptr::from_ref);
        let mut taken = Taken {
            list: posted.head.swap(core::ptr::null_mut(), Ordering::Acquire),
        };
        apply(all, own);
        let mut handed = 0u64;
        loop {
            while let Some(record) = taken.first() {
                // SAFETY: `record` is on the list this writer took off the stack; its poster
                // waits for a turn on stripe 0 that comes after this hold (module docs), so
                // the record is alive; its fields were written before the push that the swap
                // acquired.
                let r = unsafe { &*record };
                let next = r.next.load(Ordering::Relaxed);
                if record.cast_const() != mine {
                    let (at, len) = (
                        r.hashes.load(Ordering::Relaxed),
                        r.len.load(Ordering::Relaxed),
                    );
                    // SAFETY: the poster's run, `len` hashes at `at`, borrowed by its call of
                    // `apply_all` for as long as the record is alive (above), and only read.
                    let theirs =
                        unsafe { core::slice::from_raw_parts(at.cast_const(), len as usize) };
                    apply(all, theirs);
                    handed += 1;
                }
                // Off the list before it is marked: from the mark on, only its poster reads it.
                taken.list = next;
                r.state.store(APPLIED, Ordering::Release);
            }
            taken.list = posted.head.swap(core::ptr::null_mut(), Ordering::Acquire);
            if taken.list.is_null() {
                break;
            }
        }
        // Only the holder of stripe 0 writes the counts: a load and a store each.
        let add = |count: &AtomicU64, n: u64| {
            count.store(count.load(Ordering::Relaxed) + n, Ordering::Relaxed);
        };
        add(&posted.held_runs, handed + 1);
        add(&posted.handed, handed);
    }

    /// Notes the runs applied holding every lock since `start` (read after this writer took
    /// its ticket) in [`HoldStats::longest`]; called holding stripe 0.
    fn note_wait(&self, start: u64) {
        let p = &self.posted;
        let seen = p.held_runs.load(Ordering::Relaxed).wrapping_sub(start);
        if seen > p.longest.load(Ordering::Relaxed) {
            p.longest.store(seen, Ordering::Relaxed);
        }
    }
}

/// The records a holder took off the stack and has not applied, from `list` on through their
/// `next`. Dropped while unwinding, it hands each back to its poster.
struct Taken {
    list: *mut Record,
}

impl Taken {
    fn first(&self) -> Option<*mut Record> {
        (!self.list.is_null()).then_some(self.list)
    }
}

impl Drop for Taken {
    /// Marks every record left `RETURNED` (it runs before the lock guard's release, so each
    /// poster reads the mark at its turn).
    fn drop(&mut self) {
        while let Some(record) = self.first() {
            // SAFETY: as in `Stripes::hold`: a record on the taken list is alive until its
            // poster's turn, after this hold; `next` is read before the mark, after which only
            // the poster reads it.
            let r = unsafe { &*record };
            self.list = r.next.load(Ordering::Relaxed);
            r.state.store(RETURNED, Ordering::Release);
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

impl<'a> AllStripesGuard<'a> {
    /// Takes stripes 1 and up in order, stripe 0 being held by the caller.
    fn take(stripes: &'a Stripes) -> AllStripesGuard<'a> {
        for lock in &stripes.locks[1..] {
            lock.lock();
        }
        AllStripesGuard { stripes }
    }

    /// Whether these are `stripes`' locks.
    pub fn holds(&self, stripes: &Stripes) -> bool {
        core::ptr::eq(self.stripes, stripes)
    }
}

impl Drop for AllStripesGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        for lock in self.stripes.locks.iter() {
            lock.unlock();
        }
    }
}

/// A held stripe lock; released when dropped.
pub struct StripeGuard<'a> {
    lock: &'a StripeLock,
}

impl Drop for StripeGuard<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.lock.unlock();
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

// Not compiled by `loom/` (no `std` feature there): these run real threads.
#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::Mutex;
    use std::sync::atomic::AtomicBool;
    use std::vec;

    /// Runs `holder_apply` as the holder of every lock once a poster's run waits (the hook
    /// that injects a panic), and a poster's call racing it; answers the holder's outcome and
    /// the runs the poster applied itself.
    fn holder_and_poster(
        stripes: &Stripes,
        mut holder_apply: impl FnMut(&[u64]) + Send,
    ) -> (bool, Vec<Vec<u64>>) {
        let holding = AtomicBool::new(false);
        let by_poster = Mutex::new(Vec::new());
        let panicked = std::thread::scope(|s| {
            let holder = s.spawn(|| {
                catch_unwind(AssertUnwindSafe(|| {
                    stripes.apply_all(&[1], |_, run| {
                        if run == [1] {
                            holding.store(true, Ordering::Release);
                            // Hold until the poster's run is on the stack: a hand-over.
                            while !stripes.has_posted() {
                                std::thread::yield_now();
                            }
                        }
                        holder_apply(run);
                    })
                }))
                .is_err()
            });
            while !holding.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            let poster = s.spawn(|| {
                stripes.apply_all(&[2, 3], |_, run| {
                    by_poster.lock().unwrap().push(run.to_vec())
                })
            });
            poster.join().unwrap();
            holder.join().unwrap()
        });
        // The locks are free again, and the hand-over works.
        drop(stripes.lock(0));
        let mut after = 0;
        stripes.apply_all(&[4], |_, _| after += 1);
        assert_eq!(after, 1);
        (panicked, by_poster.into_inner().unwrap())
    }

    /// The injected panic: the holder unwinds while it applies the poster's run. The poster
    /// returns, having applied its whole run itself; the locks are released.
    #[test]
    fn a_holder_that_panics_applying_a_posted_run_hands_it_back() {
        for stripes in [1, 300] {
            let stripes = Stripes::new(stripes * 64);
            let (panicked, by_poster) = holder_and_poster(&stripes, |run| {
                if run != [1] {
                    panic!("injected: the holder fails applying a posted run");
                }
            });
            assert!(panicked);
            assert_eq!(by_poster, [vec![2, 3]]);
        }
    }

    /// Without the panic the holder applies the posted run and the poster applies nothing.
    #[test]
    fn a_holder_applies_a_posted_run_and_its_poster_returns() {
        let stripes = Stripes::new(64);
        let seen = Mutex::new(Vec::new());
        let (panicked, by_poster) =
            holder_and_poster(&stripes, |run| seen.lock().unwrap().push(run.to_vec()));
        assert!(!panicked);
        assert!(by_poster.is_empty());
        assert_eq!(seen.into_inner().unwrap(), [vec![1], vec![2, 3]]);
        let stats = stripes.stats();
        assert_eq!((stats.held_runs, stats.handed), (3, 1));
    }

    /// A holder that unwinds in its own run (a posted run taken, not applied) hands the
    /// posted run back too.
    #[test]
    fn a_holder_that_panics_in_its_own_run_hands_posted_runs_back() {
        let stripes = Stripes::new(64);
        let (panicked, by_poster) = holder_and_poster(&stripes, |run| {
            if run == [1] {
                panic!("injected: the holder fails in its own run");
            }
        });
        assert!(panicked);
        assert_eq!(by_poster, [vec![2, 3]]);
    }

    /// Tickets are served in order: a lock taken while three threads wait goes to them in
    /// the order they took their tickets.
    #[test]
    fn a_stripe_lock_serves_writers_in_the_order_they_came() {
        let stripes = Stripes::new(64);
        let order = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            let guard = stripes.lock(0);
            for t in 0..3u32 {
                let (stripes, order) = (&stripes, &order);
                s.spawn(move || {
                    let _held = stripes.lock(0);
                    order.lock().unwrap().push(t);
                });
                // Until thread t has its ticket.
                while stripes.locks[0].next.load(Ordering::Relaxed) != t + 2 {
                    std::thread::yield_now();
                }
            }
            drop(guard);
        });
        assert_eq!(order.into_inner().unwrap(), [0, 1, 2]);
    }

    /// A partition keeps every hash once, groups each stripe's hashes together in their
    /// order, and starts from the first hash's stripe, going round: for filters of one and
    /// of many stripes, and empty input.
    #[test]
    fn a_partition_groups_each_stripes_hashes_in_order_from_the_first_hashs_stripe() {
        let mut s = 0x0123_4567_89ab_cdefu64;
        let hashes: Vec<u64> = (0..3000)
            .map(|_| {
                s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                s ^ s >> 29
            })
            .collect();
        for num_blocks in [1u64, 64, 65, 1000, 1 << 16, 3 << 20] {
            let stripes = Stripes::new(num_blocks as usize);
            for len in [0, 1, 2, 7, 8, 3000, 2999] {
                let input = &hashes[..len];
                let mut out = vec![0u64; len];
                stripes.partition(input, num_blocks, &mut out);
                let stripe = |h: u64| stripes.stripe_of_hash(h, num_blocks);
                // Each stripe's run, as the stripes come round from the first hash's.
                let first = input.first().map_or(0, |&h| stripe(h));
                let mut want = Vec::new();
                for st in (first..stripes.len()).chain(0..first) {
                    want.extend(input.iter().filter(|&&h| stripe(h) == st));
                }
                assert_eq!(out, want, "{num_blocks} blocks, {len} hashes");
            }
        }
    }
}
