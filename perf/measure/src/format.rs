//! Numbers as the tables and reports print them.

/// Thousands separators: 64000000 -> "64,000,000".
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A byte count in binary units, e.g. "76.3 MiB".
pub fn bytes(b: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 || v.fract() == 0.0 {
        format!("{} {}", v as u64, UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A fraction as a percentage to three significant digits, trailing zeros dropped:
/// `0.01` -> "1%", `0.001` -> "0.1%", `0.0098765` -> "0.988%", `0.8` -> "80%"; NaN -> "-".
/// Targets read exactly, and measured rates keep the digits their noise allows.
pub fn percent(p: f64) -> String {
    if p.is_nan() {
        return "-".to_string();
    }
    let v = p * 100.0;
    if v == 0.0 || !v.is_finite() {
        return format!("{v}%");
    }
    let decimals = (2 - v.abs().log10().floor() as i32).clamp(0, 8) as usize;
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    format!("{s}%")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_and_bytes() {
        assert_eq!(group(64_000_000), "64,000,000");
        assert_eq!(group(999), "999");
        assert_eq!(group(0), "0");
        assert_eq!(bytes(2 << 20), "2 MiB");
        assert_eq!(bytes(1000), "1000 B");
        assert_eq!(bytes(80_816_832), "77.1 MiB");
    }

    #[test]
    fn percentages() {
        assert_eq!(percent(0.01), "1%");
        assert_eq!(percent(0.001), "0.1%");
        assert_eq!(percent(1e-5), "0.001%");
        assert_eq!(percent(0.1), "10%");
        assert_eq!(percent(0.0098765), "0.988%");
        assert_eq!(percent(0.8), "80%");
        assert_eq!(percent(1.234), "123%");
        assert_eq!(percent(0.125), "12.5%");
        assert_eq!(percent(0.0), "0%");
        assert_eq!(percent(f64::NAN), "-");
        assert_eq!(percent(-0.005), "-0.5%");
    }
}
