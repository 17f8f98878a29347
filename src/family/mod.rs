//! The Bloom family on the engine: each kind brings its block operations (or its storage, for
//! the counting filter, whose front-end is `crate::filter::counting`) and its encoding.
//! Nothing below this layer knows them.

pub mod bloomier;
pub mod classic;
#[cfg(feature = "compress")]
pub mod compressed;
mod counting;
pub mod deletable;
pub mod scalable;
pub mod variable;

/// A zero-filled vector of `n` elements; a refused allocation is an error.
pub(crate) fn try_vec<T: Clone>(
    n: usize,
    zero: T,
) -> Result<alloc::vec::Vec<T>, crate::error::Error> {
    let mut v = alloc::vec::Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| crate::error::Error::AllocationFailed {
            bytes: n as u128 * core::mem::size_of::<T>() as u128,
        })?;
    v.resize(n, zero);
    Ok(v)
}
