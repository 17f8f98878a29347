//! Built-in keys: a SplitMix64 stream, and the mixed member/non-member lookups every filter
//! is timed on.
//!
//! Key `i` of a stream is the SplitMix64 finaliser applied to `seed + (i + 1) * GAMMA`. `GAMMA`
//! is odd and the finaliser is a bijection of `u64`, so distinct indices give distinct keys:
//! members use indices `0..n` and non-members `n..`, which makes them disjoint by
//! construction (no set lookups, and a false positive is always a real one).

/// The SplitMix64 increment (odd, so `i * GAMMA` is a bijection).
pub const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 output function (a bijection of `u64`).
pub fn mix(x: u64) -> u64 {
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Counter `i` scrambled by the increment alone, `i * GAMMA` (a bijection, spread over the
/// `u64`s but not mixed): the keys of the programs that count instructions or time a build on
/// a fixed set, where a stream's seed has no use. [`scrambled`]`(i) ^ x` stays distinct.
pub fn scrambled(i: u64) -> u64 {
    i.wrapping_mul(GAMMA)
}

/// Key `i` of the stream `seed`.
pub fn key(seed: u64, i: u64) -> u64 {
    mix(seed.wrapping_add(i.wrapping_add(1).wrapping_mul(GAMMA)))
}

/// The stream `seed` read in order: the `i`-th call of [`Rng::next`] returns [`key`]`(seed,
/// i)`. This is the one key generator of every measuring program and bench (`blockbloom-perf`):
/// keys that are the same on every run.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next key of the stream.
    #[inline]
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GAMMA);
        mix(self.0)
    }
}

/// The keys one size is measured on.
pub struct Workload {
    /// Keys inserted: indices `0..n` of the stream.
    pub members: Vec<u64>,
    /// Lookups: members and non-members interleaved at random, about half each, so branchy
    /// code (early exit on a clear bit) pays its real misprediction cost.
    pub queries: Vec<u64>,
    /// `is_member[j]`: whether `queries[j]` was inserted.
    pub is_member: Vec<bool>,
    /// How many of `queries` are non-members (the denominator of the measured FPR).
    pub non_members: usize,
}

impl Workload {
    /// `n` members and `queries` lookups from stream `seed`.
    ///
    /// # Errors
    /// If the key vectors cannot be allocated (a message, not an abort).
    pub fn generate(n: usize, queries: usize, seed: u64) -> Result<Workload, String> {
        let members = members(n, seed)?;

        let mut q = alloc_vec::<u64>(queries, "query keys")?;
        let mut is_member = alloc_vec::<bool>(queries, "query flags")?;
        // A third stream (a different seed) decides member-or-not and which member.
        let choice_seed = mix(seed ^ 0xC401_CE5E_ED00_0001);
        let mut next_non_member = n as u64;
        for j in 0..queries as u64 {
            let r = key(choice_seed, j);
            if r & 1 == 1 && n > 0 {
                // Multiply-shift maps r uniformly onto 0..n without a division.
                let idx = ((r as u128 * n as u128) >> 64) as usize;
                q.push(members[idx]);
                is_member.push(true);
            } else {
                q.push(key(seed, next_non_member));
                next_non_member += 1;
                is_member.push(false);
            }
        }
        let non_members = is_member.iter().filter(|&&m| !m).count();
        Ok(Workload {
            members,
            queries: q,
            is_member,
            non_members,
        })
    }
}

/// The `n` member keys of stream `seed` (indices `0..n`), as [`Workload::generate`] makes them.
///
/// # Errors
/// If the vector cannot be allocated.
pub fn members(n: usize, seed: u64) -> Result<Vec<u64>, String> {
    let mut members = alloc_vec::<u64>(n, "member keys")?;
    members.extend((0..n as u64).map(|i| key(seed, i)));
    Ok(members)
}

fn alloc_vec<T>(len: usize, what: &str) -> Result<Vec<T>, String> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        format!(
            "could not allocate {} bytes for {len} {what}",
            len.saturating_mul(std::mem::size_of::<T>())
        )
    })?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_and_non_members_are_disjoint_and_labelled() {
        let w = Workload::generate(1000, 5000, 7).unwrap();
        let set: std::collections::HashSet<u64> = w.members.iter().copied().collect();
        assert_eq!(set.len(), 1000);
        for (k, m) in w.queries.iter().zip(&w.is_member) {
            assert_eq!(set.contains(k), *m);
        }
        assert!(
            w.non_members > 2000 && w.non_members < 3000,
            "{}",
            w.non_members
        );
    }

    #[test]
    fn the_stream_reads_the_keys_in_order() {
        let mut r = Rng(7);
        for i in 0..100 {
            assert_eq!(r.next(), key(7, i));
        }
    }

    #[test]
    fn mix_matches_reference_splitmix64() {
        // First output of the reference SplitMix64 seeded with 0.
        assert_eq!(key(0, 0), 0xE220_A839_7B1D_CDAF);
    }
}
