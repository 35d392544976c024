//! Resize (and the older Upsample) with `mode` nearest (any rank) or linear (n-linear over every resized dimension:
//! bilinear for NCHW images), scales or sizes given, optionally for a subset of `axes`.
//!
//! Output index `o` along a dimension maps to a fractional input coordinate `x` by the
//! `coordinate_transformation_mode` (`half_pixel`: `(o + 0.5) / scale - 0.5`, `pytorch_half_pixel`
//! (the same, 0 for a length-1 output), `align_corners`: `o (in - 1) / (out - 1)`, `asymmetric`:
//! `o / scale`, `tf_half_pixel_for_nn`: `(o + 0.5) / scale`), computed in f32. Nearest rounds `x` by
//! `nearest_mode` and clamps it into the input; linear clamps `x` into `[0, in - 1]` and mixes the
//! two neighbours `floor(x)` and `floor(x) + 1` with weights `1 - frac` and `frac`. A dimension
//! with scale 1 and unchanged size is copied as is.
//!
//! The taps (neighbours and weights of every output index along every dimension) are computed
//! once into the caller's scratch ([`scratch_len`]): four 32-bit words per output index
//! (`lo`, `hi` as `u32`, the two weights as `f32` bits), dimension after dimension.

use super::attrs::{Attr, Attrs};
use super::error::{KernelError, bail, error};
use super::tensor::{
    Data, Dims, Input, MAX_RANK, Output, axis, collect, dims_filled, opt_value, output, push,
    strides, try_collect, typed,
};

/// The source position(s) of one output index along one dimension.
#[derive(Debug, Clone, Copy)]
struct Tap {
    /// First neighbour (or the nearest element).
    lo: usize,
    /// Second neighbour (linear).
    hi: usize,
    /// Weight of `lo`.
    w_lo: f32,
    /// Weight of `hi`.
    w_hi: f32,
}

/// The most dimensions before the last one that one Resize mixes (2^3 corners per output row).
const MAX_OUTER_MIXED: usize = 3;

/// The 32-bit words of one [`Tap`] in scratch.
const TAP_WORDS: usize = 4;

impl Tap {
    /// Stores the tap at `words[..4]`; `lo` and `hi` must fit in a `u32`.
    fn store(self, words: &mut [u32]) -> Result<(), KernelError> {
        let (Ok(lo), Ok(hi)) = (u32::try_from(self.lo), u32::try_from(self.hi)) else {
            bail!("an input dimension is too long to resize");
        };
        let Some(w) = words.get_mut(..TAP_WORDS) else {
            bail!("scratch is too small for the taps");
        };
        w.copy_from_slice(&[lo, hi, self.w_lo.to_bits(), self.w_hi.to_bits()]);
        Ok(())
    }

    /// The tap stored at `words[..4]`.
    #[inline]
    fn load(words: &[u32]) -> Tap {
        Tap {
            lo: words[0] as usize,
            hi: words[1] as usize,
            w_lo: f32::from_bits(words[2]),
            w_hi: f32::from_bits(words[3]),
        }
    }
}

/// The scratch words Resize and Upsample need: one tap per output index along every dimension,
/// [`TAP_WORDS`] `u32`s each, two to a word.
pub(crate) fn scratch_len(
    _attrs: &Attrs<'_>,
    _input_shapes: &[Option<&[usize]>],
    output_shapes: &[&[usize]],
) -> Result<usize, KernelError> {
    let Some(ys) = output_shapes.first() else {
        bail!("output 0 is required");
    };
    let taps = ys
        .iter()
        .try_fold(0usize, |n, &d| n.checked_add(d))
        .ok_or_else(|| error!("output shape {ys:?} overflows"))?;
    taps.checked_mul(TAP_WORDS / 2)
        .ok_or_else(|| error!("output shape {ys:?} overflows"))
}

/// Scales (f32) or sizes (int64), as the node gives them.
type ScalesSizes<'a> = (Option<&'a [f32]>, Option<&'a [i64]>);

/// The scales of input 2 (f32) and sizes of input 3 (int64), when given and non-empty.
fn scales_sizes<'a>(inputs: &[Input<'a>]) -> Result<ScalesSizes<'a>, KernelError> {
    let scales = match opt_value(inputs, 2)? {
        Some((_, Data::F32(s))) if !s.is_empty() => Some(s),
        Some((_, Data::F32(_))) | None => None,
        Some((_, d)) => bail!("scales are {}, expected float32", d.dtype().name()),
    };
    let sizes = match opt_value(inputs, 3)? {
        Some((_, Data::I64(s))) if !s.is_empty() => Some(s),
        Some((_, Data::I64(_))) | None => None,
        Some((_, d)) => bail!("sizes are {}, expected int64", d.dtype().name()),
    };
    Ok((scales, sizes))
}

/// Resize. `scratch` holds the taps ([`scratch_len`]).
pub(crate) fn resize(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    let mode = attrs.str("mode", "nearest")?;
    let linear = match mode {
        "nearest" => false,
        "linear" => true,
        other => bail!("mode {other:?} is not supported (nearest and linear are)"),
    };
    let transform = attrs.str("coordinate_transformation_mode", "half_pixel")?;
    let nearest_mode = attrs.str("nearest_mode", "round_prefer_floor")?;
    if attrs.int("exclude_outside", 0)? != 0 || attrs.int("antialias", 0)? != 0 {
        bail!("exclude_outside and antialias are not supported");
    }
    if attrs.str("keep_aspect_ratio_policy", "stretch")? != "stretch" {
        bail!("keep_aspect_ratio_policy other than stretch is not supported");
    }
    let (xs, x) = typed::<f32>(inputs, 0)?;
    let rank = xs.len();
    let axes: Dims = match attrs.ints("axes")? {
        None => collect(0..rank)?,
        Some(a) => try_collect(a.iter().map(|&v| axis(v, rank)))?,
    };
    let (scales, sizes) = scales_sizes(inputs)?;
    let (ys, y) = output::<f32>(outputs, 0)?;
    if ys.len() != rank {
        bail!("output {ys:?} must have the rank of input {xs:?}");
    }
    // Per dimension: the scale and the output size it implies.
    let mut scale = [1.0f32; MAX_RANK];
    let mut want: Dims = collect(xs.iter().copied())?;
    match (scales, sizes) {
        (Some(s), None) => {
            if s.len() != axes.len() {
                bail!("{} scales for {} axes", s.len(), axes.len());
            }
            for (&a, &v) in axes.iter().zip(s) {
                if v.is_nan() || v <= 0.0 {
                    bail!("scale {v} must be positive");
                }
                scale[a] = v;
                #[allow(
                    clippy::cast_precision_loss,
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss
                )]
                {
                    want[a] = libm::floorf(xs[a] as f32 * v) as usize;
                }
            }
        }
        (None, Some(s)) => {
            if s.len() != axes.len() {
                bail!("{} sizes for {} axes", s.len(), axes.len());
            }
            for (&a, &v) in axes.iter().zip(s) {
                want[a] = usize::try_from(v).map_err(|_| error!("size {v} is negative"))?;
                if xs[a] == 0 {
                    bail!("cannot resize an empty dimension");
                }
                {
                    scale[a] = want[a] as f32 / xs[a] as f32;
                }
            }
        }
        _ => bail!("exactly one of scales and sizes must be given"),
    }
    super::tensor::expect_shape(0, ys, &want)?;
    if y.is_empty() {
        return Ok(());
    }
    if xs.contains(&0) {
        bail!("cannot resize an empty input into a non-empty output");
    }
    let words = bytemuck::try_cast_slice_mut::<u64, u32>(scratch)
        .map_err(|e| error!("scratch cannot hold u32 taps: {e:?}"))?;
    // The taps of dimension `d` start at `start[d]` taps into scratch.
    let mut start = Dims::new();
    let mut n_taps = 0usize;
    for &n in ys {
        push(&mut start, n_taps)?;
        n_taps = n_taps
            .checked_add(n)
            .ok_or_else(|| error!("output shape {ys:?} overflows"))?;
    }
    let needed = n_taps
        .checked_mul(TAP_WORDS)
        .ok_or_else(|| error!("output shape {ys:?} overflows"))?;
    let Some(taps) = words.get_mut(..needed) else {
        bail!(
            "scratch holds {} words, Resize needs {}",
            words.len() / 2,
            needed / 2
        );
    };
    for d in 0..rank {
        let (n_in, n_out) = (xs[d], ys[d]);
        let t = &mut taps[start[d] * TAP_WORDS..(start[d] + n_out) * TAP_WORDS];
        if n_in == n_out && scale[d] == 1.0 {
            // Not resized: the identity, whatever the transformation (ONNX Runtime's choice;
            // `tf_half_pixel_for_nn` with `ceil` would otherwise shift by one).
            for (i, w) in t.chunks_exact_mut(TAP_WORDS).enumerate() {
                Tap {
                    lo: i,
                    hi: i,
                    w_lo: 1.0,
                    w_hi: 0.0,
                }
                .store(w)?;
            }
            continue;
        }
        for (o, w) in t.chunks_exact_mut(TAP_WORDS).enumerate() {
            let (of, inf, outf) = (o as f32, n_in as f32, n_out as f32);
            let c = match transform {
                "half_pixel" => (of + 0.5) / scale[d] - 0.5,
                "pytorch_half_pixel" => {
                    if n_out > 1 {
                        (of + 0.5) / scale[d] - 0.5
                    } else {
                        0.0
                    }
                }
                "align_corners" => {
                    if n_out == 1 {
                        0.0
                    } else {
                        of * (inf - 1.0) / (outf - 1.0)
                    }
                }
                "asymmetric" => of / scale[d],
                "tf_half_pixel_for_nn" if !linear => (of + 0.5) / scale[d],
                other => bail!("coordinate_transformation_mode {other:?} is not supported"),
            };
            let last = inf - 1.0;
            // clamped to [0, in - 1]
            let tap = if linear {
                let c = c.clamp(0.0, last);
                let lo = libm::floorf(c) as usize;
                let hi = (lo + 1).min(n_in - 1);
                let frac = c - libm::floorf(c);
                Tap {
                    lo,
                    hi,
                    w_lo: 1.0 - frac,
                    w_hi: frac,
                }
            } else {
                let r = match nearest_mode {
                    "round_prefer_floor" => {
                        if c - libm::floorf(c) == 0.5 {
                            libm::floorf(c)
                        } else {
                            libm::roundf(c)
                        }
                    }
                    "round_prefer_ceil" => {
                        if c - libm::floorf(c) == 0.5 {
                            libm::ceilf(c)
                        } else {
                            libm::roundf(c)
                        }
                    }
                    "floor" => libm::floorf(c),
                    "ceil" => libm::ceilf(c),
                    other => bail!("nearest_mode {other:?} is not supported"),
                };
                let i = r.clamp(0.0, last) as usize;
                Tap {
                    lo: i,
                    hi: i,
                    w_lo: 1.0,
                    w_hi: 0.0,
                }
            };
            tap.store(w)?;
        }
    }
    let taps = &*taps;
    let tap = |d: usize, i: usize| Tap::load(&taps[(start[d] + i) * TAP_WORDS..]);
    // Dimensions where some output really mixes two neighbours.
    let mut mixed = Dims::new();
    for (d, &n) in ys.iter().enumerate() {
        if linear && (0..n).any(|i| tap(d, i).w_hi != 0.0) {
            push(&mut mixed, d)?;
        }
    }
    let xst = strides(xs)?;
    let Some(last) = rank.checked_sub(1) else {
        y.copy_from_slice(&x[..y.len()]);
        return Ok(());
    };
    let row_len = ys[last];
    // The corners of the dimensions before the last one that mix (`outer`), each an input
    // offset and a weight; the last dimension, if it mixes, is the highest bit of a corner.
    let last_mixes = mixed.last() == Some(&last);
    let outer = &mixed[..mixed.len() - usize::from(last_mixes)];
    if outer.len() > MAX_OUTER_MIXED {
        bail!(
            "Resize mixes {} dimensions before the last one, at most {MAX_OUTER_MIXED} are supported",
            outer.len()
        );
    }
    let n_corners = 1usize << outer.len();
    let mut corners = [(0usize, 1.0f32); 1 << MAX_OUTER_MIXED];
    let mut index = dims_filled(0, rank)?;
    // Nearest: the input offset of the last row gathered; a row that reads the same input row
    // (upsampling along the dimensions before the last) is a copy of the one before it.
    let mut last_base = None;
    let rows = y.len().checked_div(row_len).unwrap_or(0);
    for r in 0..rows {
        let (done, rest) = y.split_at_mut(r * row_len);
        let row = &mut rest[..row_len];
        let base: usize = (0..last).map(|d| tap(d, index[d]).lo * xst[d]).sum();
        if mixed.is_empty() && last_base == Some(base) {
            row.copy_from_slice(&done[(r - 1) * row_len..]);
            advance(&mut index, ys, last);
            continue;
        }
        last_base = Some(base);
        for (corner, slot) in corners[..n_corners].iter_mut().enumerate() {
            let mut off = base;
            let mut w = 1.0f32;
            for (k, &d) in outer.iter().enumerate() {
                let t = tap(d, index[d]);
                if corner >> k & 1 == 1 {
                    off = off - t.lo * xst[d] + t.hi * xst[d];
                    w *= t.w_hi;
                } else {
                    w *= t.w_lo;
                }
            }
            *slot = (off, w);
        }
        let corners = &corners[..n_corners];
        let row_taps = &taps[start[last] * TAP_WORDS..(start[last] + row_len) * TAP_WORDS];
        let row_taps = row_taps.chunks_exact(TAP_WORDS).map(Tap::load);
        if mixed.is_empty() {
            for (v, t) in row.iter_mut().zip(row_taps) {
                *v = x[base + t.lo];
            }
        } else if last_mixes {
            // Corners in the order of the general n-linear sum: the last dimension's low
            // neighbour under every outer corner, then its high neighbour.
            for (v, t) in row.iter_mut().zip(row_taps) {
                let mut acc = 0.0f32;
                for &(off, w) in corners {
                    acc += w * t.w_lo * x[off + t.lo];
                }
                for &(off, w) in corners {
                    acc += w * t.w_hi * x[off + t.hi];
                }
                *v = acc;
            }
        } else {
            for (v, t) in row.iter_mut().zip(row_taps) {
                let mut acc = 0.0f32;
                for &(off, w) in corners {
                    acc += w * x[off + t.lo];
                }
                *v = acc;
            }
        }
        advance(&mut index, ys, last);
    }
    Ok(())
}

/// The next row's index over the dimensions before `last` (row-major).
fn advance(index: &mut [usize], ys: &[usize], last: usize) {
    for d in (0..last).rev() {
        index[d] += 1;
        if index[d] < ys[d] {
            break;
        }
        index[d] = 0;
    }
}

/// Upsample (opsets 7 to 9): Resize with `asymmetric` coordinates and `floor` rounding, scales
/// from input 1 (opset 9) or the `scales` attribute (opset 7), all at least 1.
pub(crate) fn upsample(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    let scales: &[f32] = match opt_value(inputs, 1)? {
        Some((_, Data::F32(s))) => s,
        Some((_, d)) => bail!("scales are {}, expected float32", d.dtype().name()),
        None => match attrs.floats("scales")? {
            Some(s) => s,
            None => bail!("scales are required"),
        },
    };
    if scales.iter().any(|&s| s.is_nan() || s < 1.0) {
        bail!("Upsample scales {scales:?} must be at least 1");
    }
    let mode = attrs.str("mode", "nearest")?;
    if mode != "nearest" && mode != "linear" {
        bail!("mode {mode:?} is not supported (nearest and linear are)");
    }
    let list = [
        ("mode", Attr::Str(mode)),
        ("coordinate_transformation_mode", Attr::Str("asymmetric")),
        ("nearest_mode", Attr::Str("floor")),
    ];
    let resize_attrs = Attrs::new(&list);
    let shape = [scales.len()];
    let local = [
        inputs.first().copied().unwrap_or(Input::Absent),
        Input::Absent,
        Input::Value {
            shape: &shape,
            data: Data::F32(scales),
        },
    ];
    resize(&resize_attrs, &local, outputs, scratch)
}
