//! The symmetric per-batch quantization of a hybrid operator's float input.

/// The symmetric per-batch quantization of a hybrid operator's float input, as TFLite's
/// `SymmetricQuantizeFloats`: scale `max|x| / 127`, values `round(x * 127 / max|x|)` clamped to
/// +-127 (all zeros and scale 1 for an all-zero batch).
pub(crate) struct Symmetric {
    pub(crate) inverse: f32,
    pub(crate) scale: f32,
}

impl Symmetric {
    pub(crate) fn of(x: &[f32]) -> Self {
        let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
        for &v in x {
            if v < lo {
                lo = v;
            }
            if v > hi {
                hi = v;
            }
        }
        let range = libm::fabsf(lo).max(libm::fabsf(hi));
        if x.is_empty() || range == 0.0 {
            return Symmetric {
                inverse: 0.0,
                scale: 1.0,
            };
        }
        Symmetric {
            inverse: 127.0 / range,
            scale: range / 127.0,
        }
    }

    #[inline]
    // rounded and clamped to +-127
    pub(crate) fn q(&self, v: f32) -> i32 {
        (libm::roundf(v * self.inverse) as i32).clamp(-127, 127)
    }
}
