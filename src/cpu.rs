//! What this CPU can run: the kernel tiers it supports (detected once per process with `std`,
//! from the build's target features without it), the tier `BLOCKBLOOM_ISA` asks for, and the
//! size of a core's L2 cache, which decides where batches start to prefetch.

use alloc::string::ToString;
use alloc::vec::Vec;

use core::str::FromStr;
#[cfg(feature = "std")]
use std::sync::OnceLock;

use crate::error::Error;
use crate::isa::Isa;

impl Isa {
    /// Whether this CPU can run the tier (checked once per process, then cached).
    ///
    /// ```
    /// assert!(blockbloom::Isa::Portable.is_supported());
    /// ```
    pub fn is_supported(self) -> bool {
        match self {
            Isa::Scalar | Isa::Portable => true,
            Isa::Avx2 => cpu().avx2,
            Isa::Avx512 => cpu().avx512,
            Isa::Neon => cpu().neon,
        }
    }

    /// The fastest tier this CPU supports.
    ///
    /// ```
    /// let best = blockbloom::Isa::detect();
    /// assert!(blockbloom::Isa::ALL.iter().all(|&i| i <= best || !i.is_supported()));
    /// ```
    pub fn detect() -> Isa {
        best(Isa::is_supported)
    }

    /// Every tier this CPU supports, slowest first.
    ///
    /// ```
    /// let tiers = blockbloom::Isa::supported();
    /// assert_eq!(&tiers[..2], &[blockbloom::Isa::Scalar, blockbloom::Isa::Portable]);
    /// ```
    pub fn supported() -> Vec<Isa> {
        Isa::ALL.into_iter().filter(|i| i.is_supported()).collect()
    }

    /// The tier new filters use: `BLOCKBLOOM_ISA` if set, else [`Isa::detect`]. Read once per
    /// process.
    ///
    /// # Errors
    /// [`Error::UnknownIsa`] if the variable names no tier, [`Error::UnsupportedIsa`] if it
    /// names one this CPU lacks. There is no silent fallback.
    ///
    /// ```
    /// use blockbloom::Isa;
    ///
    /// for isa in Isa::supported() {          // slowest first; always starts Scalar, Portable
    ///     assert!(isa.is_supported() && isa.require() == Ok(isa));
    ///     assert_eq!(isa.name().parse::<Isa>(), Ok(isa));
    /// }
    /// assert_eq!(Isa::ALL.len(), 5);
    /// assert!(Isa::supported().contains(&Isa::detect()));
    /// // `BLOCKBLOOM_ISA` unset or valid: the tier new filters use.
    /// if let Ok(active) = Isa::active() {
    ///     assert!(active.is_supported());
    /// }
    /// ```
    pub fn active() -> Result<Isa, Error> {
        #[cfg(feature = "std")]
        {
            static ACTIVE: OnceLock<Result<Isa, Error>> = OnceLock::new();
            ACTIVE
                .get_or_init(|| {
                    choose(
                        std::env::var("BLOCKBLOOM_ISA").ok().as_deref(),
                        Isa::is_supported,
                    )
                })
                .clone()
        }
        // No environment to read: the best tier the build targets.
        #[cfg(not(feature = "std"))]
        {
            choose(None, Isa::is_supported)
        }
    }

    /// `Ok(self)` if the CPU supports it, else [`Error::UnsupportedIsa`].
    ///
    /// ```
    /// use blockbloom::Isa;
    /// for isa in Isa::ALL {
    ///     assert_eq!(isa.require().is_ok(), isa.is_supported());
    /// }
    /// ```
    pub fn require(self) -> Result<Isa, Error> {
        if self.is_supported() {
            Ok(self)
        } else {
            Err(Error::UnsupportedIsa {
                requested: self,
                best: Isa::detect(),
            })
        }
    }
}

/// The fastest tier `supports` allows (scalar always is).
fn best(supports: impl Fn(Isa) -> bool) -> Isa {
    Isa::ALL
        .into_iter()
        .rev()
        .find(|&i| supports(i))
        .unwrap_or(Isa::Scalar)
}

/// The tier named by `requested` (the value of `BLOCKBLOOM_ISA`), or the best one `supports`
/// allows when unset or empty.
fn choose(requested: Option<&str>, supports: impl Fn(Isa) -> bool) -> Result<Isa, Error> {
    let best = best(&supports);
    match requested.map(str::trim) {
        None | Some("") => Ok(best),
        Some(name) => {
            let isa = name.parse::<Isa>()?;
            if supports(isa) {
                Ok(isa)
            } else {
                Err(Error::UnsupportedIsa {
                    requested: isa,
                    best,
                })
            }
        }
    }
}

impl FromStr for Isa {
    type Err = Error;
    fn from_str(s: &str) -> Result<Isa, Error> {
        let t = s.trim().to_ascii_lowercase();
        Isa::ALL
            .into_iter()
            .find(|i| i.name() == t || (t == "avx512f" && *i == Isa::Avx512))
            .ok_or_else(|| Error::UnknownIsa(s.to_string()))
    }
}

#[derive(Clone, Copy)]
struct Cpu {
    avx2: bool,
    avx512: bool,
    neon: bool,
    /// Bytes of a core's L2 cache.
    l2_bytes: u64,
}

/// A core's L2 cache, in bytes, where it cannot be read: 2 MiB, the L2 of the Intel Xeon
/// this crate is measured on (Zen 3 has 512 KiB and Zen 4 1 MiB; both report theirs).
const FALLBACK_L2_BYTES: u64 = 2 << 20;

/// L2 sizes taken as read correctly; anything else is a misreport and gets the fallback.
#[cfg(any(test, all(feature = "std", target_arch = "x86_64")))]
pub(crate) const PLAUSIBLE_L2_BYTES: core::ops::RangeInclusive<u64> = 128 << 10..=16 << 20;

/// Bytes of a core's L2 cache (detected once with `std` on x86-64, else
/// [`FALLBACK_L2_BYTES`]): batches over filters that fit it do not prefetch
/// (`kernel::pipeline::prefetch_depth`).
pub(crate) fn l2_bytes() -> u64 {
    cpu().l2_bytes
}

/// The L2 size CPUID reports, if plausible ([`PLAUSIBLE_L2_BYTES`]): from the cache
/// descriptors Linux reads too (leaf 4 on Intel, `0x8000_001D` on AMD), else from AMD's older
/// L2 leaf `0x8000_0006` (ECX bits 31-16, in KiB). `None` under Miri, which runs no CPUID.
#[cfg(all(feature = "std", target_arch = "x86_64"))]
fn cpuid_l2_bytes() -> Option<u64> {
    if cfg!(miri) {
        return None;
    }
    use core::arch::x86_64::{__cpuid_count, CpuidResult};
    // `__cpuid_count` is a safe function on newer toolchains, an `unsafe` one on the MSRV.
    #[allow(unused_unsafe)]
    // SAFETY: every x86-64 CPU has CPUID, and leaves 0 and 0x8000_0000 (the highest basic
    // and extended leaves) are defined on all of them; any other leaf is asked only when
    // they say it exists (a leaf past them returns data, not a fault, in any case).
    let leaf = |eax: u32, ecx: u32| -> CpuidResult { unsafe { __cpuid_count(eax, ecx) } };
    let max_basic = leaf(0, 0).eax;
    let max_ext = leaf(0x8000_0000, 0).eax;
    // A descriptor leaf's sub-leaves, one per cache, until a null type: the level-2 data or
    // unified cache's ways x partitions x line x sets.
    let described = |eax: u32| {
        (0..16)
            .map_while(|i| {
                let r = leaf(eax, i);
                let kind = r.eax & 0x1f;
                (kind != 0).then_some((kind, (r.eax >> 5) & 7, r))
            })
            .find(|&(kind, level, _)| level == 2 && (kind == 1 || kind == 3))
            .map(|(_, _, r)| {
                let field =
                    |x: u32, shift: u32, bits: u32| u64::from((x >> shift) & ((1 << bits) - 1)) + 1;
                field(r.ebx, 22, 10)
                    * field(r.ebx, 12, 10)
                    * field(r.ebx, 0, 12)
                    * (u64::from(r.ecx) + 1)
            })
    };
    let amd_topology = max_ext >= 0x8000_001d && leaf(0x8000_0001, 0).ecx & (1 << 22) != 0;
    let bytes = (max_basic >= 4)
        .then(|| described(4))
        .flatten()
        .or_else(|| amd_topology.then(|| described(0x8000_001d)).flatten())
        .or_else(|| {
            (max_ext >= 0x8000_0006).then(|| u64::from(leaf(0x8000_0006, 0).ecx >> 16) << 10)
        })?;
    PLAUSIBLE_L2_BYTES.contains(&bytes).then_some(bytes)
}

/// The tiers this CPU has: detected once at run time with `std`; without it, the features
/// the build enables (`-C target-feature` or `target-cpu`), since detection needs the OS.
#[cfg(feature = "std")]
fn cpu() -> Cpu {
    static CPU: OnceLock<Cpu> = OnceLock::new();
    *CPU.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            Cpu {
                avx2: std::arch::is_x86_feature_detected!("avx2"),
                // The AVX-512 tier uses AVX2 for split blocks; every AVX-512 CPU has it.
                avx512: std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512dq")
                    && std::arch::is_x86_feature_detected!("avx2"),
                neon: false,
                l2_bytes: cpuid_l2_bytes().unwrap_or(FALLBACK_L2_BYTES),
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            Cpu {
                avx2: false,
                avx512: false,
                neon: std::arch::is_aarch64_feature_detected!("neon"),
                l2_bytes: FALLBACK_L2_BYTES,
            }
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            Cpu {
                avx2: false,
                avx512: false,
                neon: false,
                l2_bytes: FALLBACK_L2_BYTES,
            }
        }
    })
}

#[cfg(not(feature = "std"))]
fn cpu() -> Cpu {
    Cpu {
        avx2: cfg!(all(target_arch = "x86_64", target_feature = "avx2")),
        avx512: cfg!(all(
            target_arch = "x86_64",
            target_feature = "avx512f",
            target_feature = "avx512dq",
            target_feature = "avx2"
        )),
        neon: cfg!(all(target_arch = "aarch64", target_feature = "neon")),
        l2_bytes: FALLBACK_L2_BYTES,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choose_follows_the_variable() {
        let all = |i: Isa| i != Isa::Neon;
        let only_scalar = |i: Isa| i == Isa::Scalar;
        assert_eq!(choose(None, all), Ok(Isa::Avx512));
        assert_eq!(choose(Some(" "), only_scalar), Ok(Isa::Scalar));
        assert_eq!(choose(Some("AVX2"), all), Ok(Isa::Avx2));
        assert!(matches!(
            choose(Some("avx512"), only_scalar),
            Err(Error::UnsupportedIsa { .. })
        ));
        assert!(matches!(
            choose(Some("sse9"), all),
            Err(Error::UnknownIsa(_))
        ));
    }

    /// CPUID's L2 size is the one Linux reports for CPU 0 (where it names a unified level-2
    /// cache), so the threshold is this machine's cache, not the fallback.
    #[cfg(all(
        feature = "std",
        target_os = "linux",
        target_arch = "x86_64",
        not(miri)
    ))]
    #[test]
    fn the_l2_size_is_the_one_linux_reports() {
        let dir = "/sys/devices/system/cpu/cpu0/cache/index2";
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            return; // no cache information (some containers): nothing to compare
        };
        assert_eq!((level.trim(), kind.trim()), ("2", "Unified"), "{dir}");
        let kib: u64 = size.trim().trim_end_matches('K').parse().expect(&size);
        assert_eq!(cpuid_l2_bytes(), Some(kib << 10));
        assert_eq!(l2_bytes(), kib << 10);
    }
}
