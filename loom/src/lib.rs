//! Nothing here: the model checks are in `tests/stripes.rs`, which compiles the library's
//! `src/layout/stripes.rs` against loom's atomics.
