//! aarch64 tiers: NEON, a token type whose existence proves CPU support.

pub(super) mod neon;
