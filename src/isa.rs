//! The kernel tiers by name. Detection and the `BLOCKBLOOM_ISA` choice live in `cpu`, dispatch in
//! the kernel layer; this enum sits below the error type so both can name it.

use core::fmt;

/// A kernel tier: the instruction set the batch loops run on.
///
/// ```
/// use blockbloom::Isa;
///
/// let best = Isa::detect();
/// assert!(best.is_supported());
/// assert!(Isa::Scalar.is_supported() && Isa::Portable.is_supported());
/// assert_eq!("avx2".parse::<Isa>().unwrap(), Isa::Avx2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Isa {
    /// The reference: one key and one bit at a time, no SIMD, no prefetch.
    Scalar,
    /// `wide` lanes, compiled for the target's baseline (SSE2 on x86-64, NEON on aarch64).
    Portable,
    /// AVX2 intrinsics (x86-64, detected at run time).
    Avx2,
    /// AVX-512 F+DQ intrinsics (x86-64, detected at run time).
    Avx512,
    /// NEON intrinsics (aarch64, detected at run time).
    Neon,
}

impl Isa {
    /// Every tier, slowest first (the x86-64 and aarch64 tiers never meet on one CPU).
    ///
    /// ```
    /// assert_eq!(blockbloom::Isa::ALL[0], blockbloom::Isa::Scalar);
    /// ```
    pub const ALL: [Isa; 5] = [
        Isa::Scalar,
        Isa::Portable,
        Isa::Avx2,
        Isa::Avx512,
        Isa::Neon,
    ];

    /// The name `BLOCKBLOOM_ISA` and [`FromStr`](core::str::FromStr) accept.
    ///
    /// ```
    /// assert_eq!(blockbloom::Isa::Avx512.name(), "avx512");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Neon => "neon",
        }
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
