//! Mapping steps and bytes to pixels, choosing round tick values, and writing numbers for people.

use std::fmt;

/// The plot area of a picture and the data it shows: steps `[0, steps)` along x, bytes
/// `[0, max_bytes]` along y with address 0 at the bottom.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    /// Left edge of the plot area, in pixels.
    pub(crate) left: f64,
    /// Top edge of the plot area, in pixels.
    pub(crate) top: f64,
    /// Width of the plot area, in pixels.
    pub(crate) width: f64,
    /// Height of the plot area, in pixels.
    pub(crate) height: f64,
    /// Steps shown; at least 1.
    pub(crate) steps: u64,
    /// Bytes at the top of the plot area; at least 1.
    pub(crate) max_bytes: u64,
}

impl Frame {
    /// The x coordinate of the left edge of `step`.
    pub(crate) fn x(&self, step: u64) -> f64 {
        self.left + step as f64 * self.width / self.steps as f64
    }

    /// The y coordinate of address `bytes` (y grows downwards, addresses upwards).
    pub(crate) fn y(&self, bytes: u64) -> f64 {
        self.top + self.height - bytes as f64 * self.height / self.max_bytes as f64
    }

    /// Pixels per step.
    pub(crate) fn step_width(&self) -> f64 {
        self.width / self.steps as f64
    }

    /// Pixels per byte.
    pub(crate) fn byte_height(&self) -> f64 {
        self.height / self.max_bytes as f64
    }

    /// Bottom edge of the plot area.
    pub(crate) fn bottom(&self) -> f64 {
        self.top + self.height
    }

    /// Right edge of the plot area.
    pub(crate) fn right(&self) -> f64 {
        self.left + self.width
    }
}

/// A pixel coordinate written with at most one decimal, so the same picture is the same text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Px(pub(crate) f64);

impl fmt::Display for Px {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tenths = (self.0 * 10.0).round() as i64;
        let sign = if tenths < 0 { "-" } else { "" };
        let abs = tenths.unsigned_abs();
        if abs.is_multiple_of(10) {
            write!(f, "{sign}{}", abs / 10)
        } else {
            write!(f, "{sign}{}.{}", abs / 10, abs % 10)
        }
    }
}

const KIB: u64 = 1024;
const UNITS: [(u64, &str); 4] = [
    (KIB * KIB * KIB, "GiB"),
    (KIB * KIB, "MiB"),
    (KIB, "KiB"),
    (1, "B"),
];

/// The largest binary unit not above `bytes` (bytes for anything under 1 KiB).
fn unit_for(bytes: u64) -> (u64, &'static str) {
    UNITS
        .iter()
        .copied()
        .find(|&(unit, _)| bytes >= unit)
        .unwrap_or((1, "B"))
}

/// `bytes` for a person: `512 B`, `1.50 KiB`, `9.19 MiB`.
pub(crate) fn format_bytes(bytes: u64) -> String {
    let (unit, name) = unit_for(bytes);
    if unit == 1 {
        format!("{bytes} B")
    } else {
        format!("{:.2} {name}", bytes as f64 / unit as f64)
    }
}

/// Round tick values from 0 up to at most `max`, about `target` of them, each a multiple of a
/// 1-2-5 step. Bytes are stepped in the binary unit of `max` when `binary` is set (so ticks read
/// `2 MiB`, `4 MiB`, ...), steps in plain decimal otherwise.
pub(crate) fn ticks(max: u64, target: u64, binary: bool) -> Vec<u64> {
    if max == 0 {
        return vec![0];
    }
    let unit = if binary { unit_for(max).0 } else { 1 };
    let raw = max as f64 / unit as f64 / target.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let nice = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|&candidate| candidate >= raw)
        .unwrap_or(10.0 * magnitude);
    let step = ((nice * unit as f64).round() as u64).max(1);
    (0..=max / step).map(|k| k * step).collect()
}

/// A tick value in the unit of the axis maximum, without trailing zeros: `0`, `2 MiB`, `0.5 KiB`.
pub(crate) fn format_tick_bytes(value: u64, axis_max: u64) -> String {
    if value == 0 {
        return "0".into();
    }
    let (unit, name) = unit_for(axis_max);
    let text = format!("{:.2}", value as f64 / unit as f64);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} {name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixels_have_one_decimal_and_no_trailing_zero() {
        assert_eq!(Px(3.0).to_string(), "3");
        assert_eq!(Px(3.04).to_string(), "3");
        assert_eq!(Px(3.06).to_string(), "3.1");
        assert_eq!(Px(-0.25).to_string(), "-0.3");
        assert_eq!(Px(0.0).to_string(), "0");
    }

    #[test]
    fn bytes_read_in_binary_units() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(1536), "1.50 KiB");
        assert_eq!(format_bytes(9_633_792), "9.19 MiB");
    }

    #[test]
    fn ticks_are_round_and_within_range() {
        assert_eq!(ticks(100, 5, false), vec![0, 20, 40, 60, 80, 100]);
        assert_eq!(ticks(122, 10, false), vec![0, 20, 40, 60, 80, 100, 120]);
        let mib = 1024 * 1024;
        assert_eq!(
            ticks(9 * mib + 5, 5, true),
            vec![0, 2 * mib, 4 * mib, 6 * mib, 8 * mib]
        );
        assert_eq!(format_tick_bytes(2 * mib, 9 * mib), "2 MiB");
        assert_eq!(format_tick_bytes(512, 3000), "0.5 KiB");
        assert_eq!(ticks(0, 5, true), vec![0]);
        assert_eq!(ticks(3, 10, false), vec![0, 1, 2, 3]);
    }
}
