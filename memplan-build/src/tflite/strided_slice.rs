//! STRIDED_SLICE's begin, stride and size per axis, resolved at build time as TFLite does.

/// Per axis: the first index, the step and the count.
pub(super) type Slice = (Vec<i64>, Vec<i64>, Vec<i64>);

/// STRIDED_SLICE's begin, stride and size per axis, as TFLite's `StartForAxis`, `StopForAxis`
/// and `strided_slice.cc` resolve them (`masks`: begin, end, shrink; an axis past `begin`'s
/// length is taken whole).
pub(super) fn strided_slice(
    xs: &[usize],
    begin: &[i64],
    end: &[i64],
    strides: &[i64],
    masks: [i32; 3],
    offset: bool,
) -> Result<Slice, String> {
    let [begin_mask, end_mask, shrink_mask] = masks;
    let bit = |mask: i32, d: usize| d < 32 && mask & (1 << d) != 0;
    let (mut starts, mut steps, mut sizes) = (Vec::new(), Vec::new(), Vec::new());
    for (d, &n) in xs.iter().enumerate() {
        let n = n as i64;
        if d >= begin.len() {
            starts.push(0);
            steps.push(1);
            sizes.push(n);
            continue;
        }
        if strides[d] == 0 {
            return Err(format!("stride 0 on axis {d}"));
        }
        // A stride longer than the axis takes one element, as one of `n + 1` does: clamped, so
        // the arithmetic below stays far from the limits of int64 (the file's stride may be
        // `i64::MIN`).
        let s = strides[d].clamp(-(n + 1), n + 1);
        // `begin + end` (with `offset`) is checked: both come from the file and may be near the
        // limits of int64.
        let overflow = || {
            format!(
                "begin {} plus end {} on axis {d} overflows int64\n  = help: the slice's values are absurd; the file is corrupt, convert the model again",
                begin[d], end[d]
            )
        };
        let mut start = if bit(begin_mask, d) && !bit(shrink_mask, d) {
            if s > 0 { 0 } else { n - 1 }
        } else {
            let b = begin[d];
            if b < 0 { b + n } else { b }
        };
        start = if s > 0 {
            start.clamp(0, n)
        } else {
            start.clamp(-1, n - 1)
        };
        if bit(shrink_mask, d) {
            if !(0..n).contains(&start) {
                return Err(format!(
                    "the shrunk axis {d} starts at {start}, outside its {n} elements"
                ));
            }
            starts.push(start);
            steps.push(1);
            sizes.push(1);
            continue;
        }
        let mut stop = if bit(end_mask, d) {
            if s > 0 { n } else { -1 }
        } else {
            let e = if offset {
                begin[d].checked_add(end[d]).ok_or_else(overflow)?
            } else {
                end[d]
            };
            if e < 0 { e + n } else { e }
        };
        stop = if s > 0 {
            stop.clamp(0, n)
        } else {
            stop.clamp(-1, n - 1)
        };
        let size = if s > 0 {
            (stop - start + s - 1).div_euclid(s).max(0)
        } else {
            (start - stop - s - 1).div_euclid(-s).max(0)
        };
        starts.push(if size == 0 { 0 } else { start });
        steps.push(s);
        sizes.push(size);
    }
    Ok((starts, steps, sizes))
}
