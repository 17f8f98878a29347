//! The floating-point functions the sizing models need, without the standard library.
//!
//! With `std` the crate calls `f64`'s own methods and this module is not compiled. Without
//! it, `core` lacks them, and [`F64Math`] supplies the same names from the `libm` crate (a
//! port of musl's), so the models' code reads the same in both builds. The results can differ
//! from the platform's in the last bit, so a `no_std` build may, at an exact tie, size a
//! filter one block differently; reading, writing and answering queries never touch these.

/// `f64` methods that `core` does not have, from `libm`.
#[cfg_attr(test, allow(dead_code))]
pub(crate) trait F64Math {
    fn ln(self) -> f64;
    fn ln_1p(self) -> f64;
    fn exp(self) -> f64;
    fn exp2(self) -> f64;
    fn powf(self, e: f64) -> f64;
    fn powi(self, e: i32) -> f64;
    fn sqrt(self) -> f64;
    fn floor(self) -> f64;
    fn ceil(self) -> f64;
    fn round(self) -> f64;
}

impl F64Math for f64 {
    fn ln(self) -> f64 {
        libm::log(self)
    }
    fn ln_1p(self) -> f64 {
        libm::log1p(self)
    }
    fn exp(self) -> f64 {
        libm::exp(self)
    }
    fn exp2(self) -> f64 {
        libm::exp2(self)
    }
    fn powf(self, e: f64) -> f64 {
        libm::pow(self, e)
    }
    /// By squaring, as the compiler's own `powi` computes it.
    fn powi(self, e: i32) -> f64 {
        let (mut base, mut n, mut r) = (self, e.unsigned_abs(), 1.0);
        loop {
            if n & 1 == 1 {
                r *= base;
            }
            n >>= 1;
            if n == 0 {
                break;
            }
            base *= base;
        }
        if e < 0 { 1.0 / r } else { r }
    }
    fn sqrt(self) -> f64 {
        libm::sqrt(self)
    }
    fn floor(self) -> f64 {
        libm::floor(self)
    }
    fn ceil(self) -> f64 {
        libm::ceil(self)
    }
    fn round(self) -> f64 {
        libm::round(self)
    }
}

#[cfg(test)]
mod tests {
    use super::F64Math;

    /// libm agrees with the platform's functions to a few units in the last place, and
    /// `powi` by squaring is the platform's bit for bit.
    #[test]
    fn agrees_with_std() {
        let close = |a: f64, b: f64| a == b || ((a - b) / b).abs() < 1e-15;
        for &x in &[
            1e-300,
            1e-9,
            0.001,
            0.3,
            0.5,
            1.0,
            2.5,
            7.0,
            127.0 / 128.0,
            1e6,
            1e18,
        ] {
            assert!(close(F64Math::ln(x), f64::ln(x)), "ln {x}");
            assert!(
                close(F64Math::ln_1p(-x.min(0.9)), f64::ln_1p(-x.min(0.9))),
                "ln_1p {x}"
            );
            assert!(
                close(F64Math::exp(-x.min(700.0)), f64::exp(-x.min(700.0))),
                "exp {x}"
            );
            assert!(
                close(F64Math::exp2(x.min(60.0)), f64::exp2(x.min(60.0))),
                "exp2 {x}"
            );
            assert!(
                close(F64Math::powf(x, 0.125), f64::powf(x, 0.125)),
                "powf {x}"
            );
            assert!(close(F64Math::sqrt(x), f64::sqrt(x)), "sqrt {x}");
            for n in [-3, 0, 1, 2, 7, 16, 32] {
                let (a, b) = (F64Math::powi(x.min(4.0), n), f64::powi(x.min(4.0), n));
                assert!(a == b || close(a, b), "powi {x} {n}: {a} vs {b}");
            }
            for y in [x, -x, x + 0.5, -x - 0.5] {
                assert_eq!(F64Math::floor(y), f64::floor(y));
                assert_eq!(F64Math::ceil(y), f64::ceil(y));
                assert_eq!(F64Math::round(y), f64::round(y));
            }
        }
    }
}
