//! Byte sizes as people write them in model files: `4096`, `"4096"`, `"512 KiB"`, `"2 MiB"`.

/// Parses a byte count: an integer, optionally followed by a unit `B`, `KiB`, `MiB` or `GiB`
/// (powers of 1024), with or without a space before it. `None` when the text is not such a size
/// or the result overflows 64 bits.
///
/// ```
/// use memplan_core::parse_byte_size;
/// assert_eq!(parse_byte_size("512 KiB"), Some(512 * 1024));
/// assert_eq!(parse_byte_size("3MiB"), Some(3 << 20));
/// assert_eq!(parse_byte_size("100"), Some(100));
/// assert_eq!(parse_byte_size("1.5 MiB"), None);
/// ```
pub fn parse_byte_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit() && c != '_')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits_end);
    let number = number.replace('_', "");
    if number.is_empty() {
        return None;
    }
    let number: u64 = number.parse().ok()?;
    let scale: u64 = match unit.trim_start() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => return None,
    };
    number.checked_mul(scale)
}

/// `bytes` in the largest binary unit that keeps three significant digits: `"1.50 MiB"`,
/// `"640 B"`.
pub fn format_byte_size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, scale) in UNITS {
        if bytes >= scale {
            // Lossy on purpose: this is for people, exact figures are printed beside it.
            let value = bytes as f64 / scale as f64;
            return format!("{value:.2} {unit}");
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_units_and_rejects_the_rest() {
        assert_eq!(parse_byte_size("512 KiB"), Some(524_288));
        assert_eq!(parse_byte_size(" 1 GiB "), Some(1 << 30));
        assert_eq!(parse_byte_size("64 B"), Some(64));
        assert_eq!(parse_byte_size("1_000"), Some(1000));
        for bad in [
            "",
            "KiB",
            "12 kb",
            "-1",
            "1.5 MiB",
            "99999999999999999999 GiB",
            "1 TiB",
        ] {
            assert_eq!(parse_byte_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn formats_for_people() {
        assert_eq!(format_byte_size(640), "640 B");
        assert_eq!(format_byte_size(1536), "1.50 KiB");
        assert_eq!(format_byte_size(5 << 20), "5.00 MiB");
    }
}
