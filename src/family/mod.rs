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
