//! Set algebra on filters: union (OR), intersection (AND) and folding.
//!
//! Filters combine when they share layout, probe count, seed and block count: then a key's
//! block and bits are the same in both, so OR-ing the bits is exactly the filter of the union
//! of the key sets, and AND-ing them contains at least the intersection. Multiply-shift
//! indexing makes halving exact too: with `n` blocks a hash picks `b = (hi * n) >> 32`, with
//! `n / 2` blocks `b / 2`, so folding blocks `2i` and `2i + 1` into `i` gives the filter the
//! same keys would have built at half the size.

use crate::error::Error;
use crate::filter::BloomFilter;
use crate::layout::Block;

impl BloomFilter {
    /// Why `other` cannot combine with `self`, if it cannot.
    fn check_compatible(&self, other: &BloomFilter) -> Result<(), Error> {
        let (a, b) = (&self.meta.shape, &other.meta.shape);
        if a.layout != b.layout {
            Err(Error::Incompatible("different layouts"))
        } else if a.probes() != b.probes() {
            Err(Error::Incompatible("different probe counts"))
        } else if self.meta.seed != other.meta.seed {
            Err(Error::Incompatible("different hash seeds"))
        } else if a.hash != b.hash {
            Err(Error::Incompatible(
                "different key hashes (hash ids; see Builder::key_hash)",
            ))
        } else if a.num_blocks != b.num_blocks {
            Err(Error::Incompatible("different block counts"))
        } else {
            Ok(())
        }
    }

    /// Adds every key of `other`: afterwards `self` is exactly the filter both key sets would
    /// have built together.
    ///
    /// ```
    /// use blockbloom::BloomFilter;
    /// let mut a = BloomFilter::builder().capacity(1000).seed(5).build()?;
    /// let mut b = a.clone();
    /// a.insert(&"left");
    /// b.insert(&"right");
    /// a.union(&b)?;
    /// assert!(a.contains(&"left") && a.contains(&"right"));
    /// let other_seed = BloomFilter::builder().capacity(1000).seed(6).build()?;
    /// assert!(a.union(&other_seed).is_err());
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Incompatible`] unless both filters have the same layout, probe count, seed, key
    /// hash and
    /// block count.
    pub fn union(&mut self, other: &BloomFilter) -> Result<(), Error> {
        self.check_compatible(other)?;
        zip_words(&mut self.store, &other.store, |a, b| a | b);
        Ok(())
    }

    /// Keeps only bits set in both: the result contains every key inserted into both (and, as
    /// any Bloom filter, some others; an intersection's false-positive rate can exceed what
    /// its fill suggests, because a key of one set may find its bits set by the other's).
    ///
    /// ```
    /// use blockbloom::BloomFilter;
    /// let mut a = BloomFilter::with_capacity(1000, 0.01)?;
    /// let mut b = a.clone();
    /// a.insert_batch(&[1u64, 2, 3]);
    /// b.insert_batch(&[2u64, 3, 4]);
    /// a.intersect(&b)?;
    /// assert!(a.contains(&2u64) && a.contains(&3u64));
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`union`](Self::union).
    pub fn intersect(&mut self, other: &BloomFilter) -> Result<(), Error> {
        self.check_compatible(other)?;
        zip_words(&mut self.store, &other.store, |a, b| a & b);
        Ok(())
    }

    /// A filter of half the blocks holding every key of this one (blocks `2i` and `2i + 1`
    /// OR-ed into `i`): the way to shrink a filter that turned out sparser than planned. Its
    /// [`expected_fpr`](Self::expected_fpr) gives the resulting rate.
    ///
    /// ```
    /// use blockbloom::BloomFilter;
    /// let mut f = BloomFilter::builder().capacity(10_000).size_in_bytes(16 << 10).build()?;
    /// f.insert_batch(&(0..1000u64).collect::<Vec<_>>()); // a tenth of the capacity
    /// let small = f.fold()?;
    /// assert_eq!(small.num_blocks() * 2, f.num_blocks());
    /// assert!((0..1000u64).all(|k| small.contains(&k)));
    /// assert!(small.expected_fpr() < 0.01);
    /// # Ok::<(), blockbloom::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Incompatible`] if the block count is odd (multiply-shift maps `2i, 2i + 1`
    /// to `i` only for an even count) or 1.
    pub fn fold(&self) -> Result<BloomFilter, Error> {
        let n = self.meta.shape.num_blocks;
        if n < 2 || !n.is_multiple_of(2) {
            return Err(Error::Incompatible(
                "folding needs an even block count of 2 or more",
            ));
        }
        let mut blocks = crate::filter::allocate(n / 2)?;
        for (out, pair) in blocks.iter_mut().zip(self.store.chunks_exact(2)) {
            *out = Block(core::array::from_fn(|w| pair[0].0[w] | pair[1].0[w]));
        }
        let m = &self.meta;
        let meta = crate::filter::Meta::new(
            n / 2,
            m.shape.layout,
            m.probes(),
            m.seed,
            m.capacity,
            None,
            m.kernel,
        )
        .with_hash(m.shape.hash);
        Ok(BloomFilter::from_parts(blocks, meta))
    }
}

/// `a[i] = op(a[i], b[i])` over every word; a plain loop over whole blocks, which the
/// compiler turns into vector instructions.
fn zip_words(a: &mut [Block], b: &[Block], op: impl Fn(u64, u64) -> u64) {
    for (x, y) in a.iter_mut().zip(b) {
        for (u, v) in x.0.iter_mut().zip(y.0) {
            *u = op(*u, v);
        }
    }
}
