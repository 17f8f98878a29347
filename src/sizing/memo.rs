//! The planner's recent answers, remembered per thread for the constructors (with `std`).
//!
//! Writers build one filter per row group, SST file or time window, thousands a second, and
//! mostly with the same capacity and rate (a configured distinct-value count). A plan is a
//! pure function of its inputs, so a constructor asks here first: a hit costs a few
//! comparisons instead of a plan (microseconds: docs/PERFORMANCE.md, "Planning time"). The
//! public `sizing::plan*` functions always plan; they are what the construction benches time
//! cold.

use core::cell::Cell;

/// Remembered answers per thread and kind: a few distinct shapes in turn (several columns,
/// a counting and a plain filter) all stay.
const SLOTS: usize = 8;

/// The last [`SLOTS`] answers of a pure function, replaced oldest first.
pub(super) struct Recent<K, V> {
    slots: [Cell<Option<(K, V)>>; SLOTS],
    next: Cell<usize>,
}

impl<K: Copy + PartialEq, V: Copy> Recent<K, V> {
    pub(super) const fn new() -> Self {
        Recent {
            slots: [const { Cell::new(None) }; SLOTS],
            next: Cell::new(0),
        }
    }

    /// The answer remembered for `key`, else `compute`'s, remembered when it is `Ok`.
    pub(super) fn get_or<E>(&self, key: K, compute: impl FnOnce() -> Result<V, E>) -> Result<V, E> {
        for slot in &self.slots {
            if let Some((k, v)) = slot.get()
                && k == key
            {
                return Ok(v);
            }
        }
        let v = compute()?;
        let i = self.next.get();
        self.slots[i].set(Some((key, v)));
        self.next.set((i + 1) % SLOTS);
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::{Recent, SLOTS};

    /// A hit returns the remembered answer without computing; the oldest answer goes first;
    /// an error is never remembered.
    #[test]
    fn remembers_the_last_answers() {
        let recent: Recent<u32, u64> = Recent::new();
        let calls = core::cell::Cell::new(0);
        let square = |x: u32| {
            calls.set(calls.get() + 1);
            Ok::<u64, ()>(u64::from(x) * u64::from(x))
        };
        for x in 0..SLOTS as u32 {
            assert_eq!(recent.get_or(x, || square(x)), Ok(u64::from(x * x)));
        }
        assert_eq!(calls.get(), SLOTS);
        for x in 0..SLOTS as u32 {
            assert_eq!(recent.get_or(x, || Err(())), Ok(u64::from(x * x)));
        }
        assert_eq!(calls.get(), SLOTS, "every answer was remembered");
        // One more key pushes out the oldest (0); the others stay.
        assert_eq!(recent.get_or(100, || square(100)), Ok(10_000));
        assert_eq!(recent.get_or(0, || Err(())), Err(()));
        assert_eq!(recent.get_or(1, || Err(())), Ok(1));
        // The failed computation left nothing behind.
        assert_eq!(recent.get_or(0, || Err(())), Err(()));
        assert_eq!(recent.get_or(0, || square(0)), Ok(0));
    }
}
