//! A band of a Conv's output rows, computed from the input rows under it, in planes that need
//! not lie one after the other: how a chain of NCHW Convs runs band by band below the
//! whole-tensor bound (`memplan-build`'s patches).
//!
//! In NCHW a band of rows is one run of words per channel, not one run in all: rows `r0..r1` of
//! channel `c` start at `c * stride + r0 * width`. A band buffer that holds a few rows of every
//! channel is such a layout (its stride is its rows times the width), and so is a whole tensor
//! read or written a band at a time (its stride is its plane). [`conv_band`] takes the input
//! rows under a band of output rows (with the padding above them that the whole input has
//! there, [`crate::tflite::band_input_rows`]) and writes the band, every element summed by
//! the same method in the same order as the whole-tensor Conv sums it: the same bits.

use super::*;

/// Where a band of a Conv's rows lies: the whole input's and output's heights (the Conv's
/// geometry is checked for those), the rows of padding above the input rows given, and the
/// words from one channel's rows to the next's in the input and in the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvBand {
    /// Rows of the whole input.
    pub input_rows: usize,
    /// Rows of the whole output.
    pub output_rows: usize,
    /// Rows of padding above the first input row given (at most the Conv's padding above).
    pub above: usize,
    /// Words from one input channel's rows to the next's.
    pub input_stride: usize,
    /// Words from one output channel's rows to the next's.
    pub output_stride: usize,
}

/// The geometry of the band: input `xs` and output `ys` are `[1, channels, band rows, width]`,
/// `ws` the weight's (unpacked) shape.
fn geometry(
    attrs: &Attrs<'_>,
    xs: &[usize],
    ws: &[usize],
    ys: &[usize],
    band: ConvBand,
) -> Result<ConvGeometry, KernelError> {
    let (&[1, c, take, width], &[1, m, rows, out_width]) = (xs, ys) else {
        bail!(
            "a band of a Conv runs on one image of rows: input {xs:?} and output {ys:?} must be [1, channels, rows, width]"
        );
    };
    let whole_x = [1, c, band.input_rows, width];
    let whole_y = [1, m, band.output_rows, out_width];
    let mut geo = ConvGeometry::new(attrs, &whole_x, ws, &whole_y)?;
    let win = &mut geo.win;
    if take > band.input_rows || rows > band.output_rows || band.above > win.pad_begin[1] {
        bail!(
            "a band of {take} input rows under {rows} output rows with {} rows of padding above does not lie in the Conv's {} input and {} output rows",
            band.above,
            band.input_rows,
            band.output_rows
        );
    }
    let reach = match rows {
        0 => 0,
        _ => (rows - 1)
            .saturating_mul(win.strides[1])
            .saturating_add((win.kernel[1] - 1).saturating_mul(win.dilations[1]))
            .saturating_add(1),
    };
    win.input[1] = take;
    win.output[1] = rows;
    win.pad_begin[1] = band.above;
    // The rows below the band read as padding: real padding, or rows no output of it reads.
    win.pad_end[1] = reach.saturating_sub(band.above + take);
    if take.saturating_mul(width) > band.input_stride
        || rows.saturating_mul(out_width) > band.output_stride
    {
        bail!(
            "channel strides {} and {} are shorter than a band's {} input and {} output words",
            band.input_stride,
            band.output_stride,
            take.saturating_mul(width),
            rows.saturating_mul(out_width)
        );
    }
    Ok(geo)
}

/// Conv over a band of rows ([`ConvBand`]): input 0 holds `[1, C, take, W]` rows
/// `band.input_stride` words apart per channel, output 0 `[1, M, rows, W']` rows
/// `band.output_stride` apart; weights and bias as [`crate::op::conv`] takes them. The
/// elements are the whole Conv's bits for those rows. `scratch` is at least
/// [`conv_band_scratch_len`] words.
///
/// # Errors
/// A band that does not lie in the Conv, operands shorter than their rows, or what the Conv
/// refuses.
pub fn conv_band(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    scratch: &mut [u64],
    band: ConvBand,
) -> Result<(), KernelError> {
    let mut run = || -> Result<(), KernelError> {
        // The weights and bias are whole; the input and output are rows of planes.
        crate::tensor::check_views(inputs.get(1..).unwrap_or(&[]), &[])?;
        let (xs, x) = typed::<f32>(inputs, 0)?;
        let (packed_shape, w) = typed::<f32>(inputs, 1)?;
        let (ys, y) = output::<f32>(outputs, 0)?;
        let ws = weight_shape(attrs, xs, packed_shape, ys)?;
        let geo = geometry(attrs, xs, &ws, ys, band)?;
        let planes = Planes {
            x: band.input_stride,
            y: band.output_stride,
        };
        compute(attrs, inputs, &geo, planes, Some(x), w, y, scratch)
    };
    run().map_err(|e| e.context("Conv"))
}

/// The window of a Conv along its rows, `[kernel, stride, dilation, padding above]`, if it can
/// run band by band ([`conv_band`]): one image of 2-D planes (`[1, channels, rows, width]`
/// input and output), the weight's shape as stored (`ws`, packed or not) fitting the Conv.
#[must_use]
pub fn conv_band_window(
    attrs: &Attrs<'_>,
    xs: &[usize],
    ws: &[usize],
    ys: &[usize],
) -> Option<[usize; 4]> {
    let (&[1, _, _, _], &[1, _, _, _]) = (xs, ys) else {
        return None;
    };
    let logical = weight_shape(attrs, xs, ws, ys).ok()?;
    let geo = ConvGeometry::new(attrs, xs, &logical, ys).ok()?;
    Activation::from_attrs(attrs).ok()?;
    let w = &geo.win;
    Some([w.kernel[1], w.strides[1], w.dilations[1], w.pad_begin[1]])
}

/// Scratch words [`conv_band`] needs for a band of these shapes (input, weight as stored, output:
/// `[1, channels, band rows, width]`): a depthwise Conv's padded plane is the band's, not the
/// whole input's.
///
/// # Errors
/// Shapes or a band that do not fit the Conv.
pub fn conv_band_scratch_len(
    attrs: &Attrs<'_>,
    xs: &[usize],
    ws: &[usize],
    ys: &[usize],
    band: ConvBand,
) -> Result<usize, KernelError> {
    let logical = weight_shape(attrs, xs, ws, ys)?;
    let geo = geometry(attrs, xs, &logical, ys, band)?;
    if geo.depthwise() {
        return Ok(depthwise_scratch(&geo));
    }
    // A product's panel does not depend on the rows.
    let whole_x = [1, geo.c, band.input_rows, geo.win.input[2]];
    let whole_y = [1, geo.m, band.output_rows, geo.win.output[2]];
    scratch_len(attrs, &[Some(&whole_x), Some(ws)], &[&whole_y])
}

#[cfg(test)]
mod tests {
    use super::ConvBand;
    use crate::simd::{Level, detected, limit};
    use crate::test_values::values;
    use crate::tflite::band_input_rows;
    use crate::{Attr, Attrs, Data, DataMut, Input, Output};
    use std::vec;
    use std::vec::Vec;

    /// One case: attributes, input, weight and output shapes (NCHW, one image).
    type Case<'a> = (
        &'a [(&'a str, Attr<'a>)],
        [usize; 4],
        [usize; 4],
        [usize; 4],
    );

    /// The whole Conv, then the same Conv band by band (`band` output rows at a time) from
    /// input rows stored `gap` words apart per channel into an output whose channels are
    /// `gap` words apart too: every element the same bits, the words between the rows untouched.
    fn check(case: &Case<'_>, band: usize, gap: usize) {
        let (list, xs, ws, ys) = *case;
        let x = values(xs.iter().product(), 1);
        let w = values(ws.iter().product(), 2);
        let b = values(ws[0], 3);
        let bs = [ws[0]];
        // Weights packed (`packed` in the case's attributes) as the build packs them.
        let kernel = [ws[2] as i64, ws[3] as i64];
        let mut with: Vec<(&str, Attr<'_>)> = list.to_vec();
        let packed = list.iter().any(|(n, _)| *n == "packed");
        let (w, wshape) = if packed {
            with.push(("kernel_shape", Attr::Ints(&kernel)));
            super::super::packed_for_test(list, &ws, &w)
        } else {
            (w, ws.to_vec())
        };
        let attrs = Attrs::new(&with);
        let ws = &wshape[..];
        let weight = Input::Value {
            shape: ws,
            data: Data::F32(&w),
        };
        let bias = Input::Value {
            shape: &bs,
            data: Data::F32(&b),
        };
        let mut whole = vec![f32::NAN; ys.iter().product()];
        let inputs = [
            Input::Value {
                shape: &xs,
                data: Data::F32(&x),
            },
            weight,
            bias,
        ];
        let words =
            crate::scratch_len("Conv", &attrs, &[Some(&xs), Some(ws), Some(&bs)], &[&ys]).unwrap();
        let mut scratch = vec![0x7fc0_0000_7fc0_0000u64; words];
        let mut outputs = [Output {
            shape: &ys,
            data: DataMut::F32(&mut whole),
        }];
        crate::op::conv(&attrs, &inputs, &mut outputs, &mut scratch).unwrap();

        let window = crate::conv_band_window(&attrs, &xs, ws, &ys).unwrap();
        let (ih, iw, oh, ow) = (xs[2], xs[3], ys[2], ys[3]);
        let (in_stride, out_stride) = (ih * iw + gap, oh * ow + gap);
        // The input's channels `gap` words apart; the output's too, the gaps marked.
        let mut spread = vec![0.0f32; xs[1] * in_stride];
        for ch in 0..xs[1] {
            spread[ch * in_stride..][..ih * iw].copy_from_slice(&x[ch * ih * iw..][..ih * iw]);
        }
        let mut banded = vec![-7.5f32; ys[1] * out_stride];
        let mut r0 = 0;
        while r0 < oh {
            let r1 = (r0 + band).min(oh);
            let (under, above) = band_input_rows(r0..r1, window, ih).unwrap();
            let bx = [1, xs[1], under.len(), iw];
            let by = [1, ys[1], r1 - r0, ow];
            let geometry = ConvBand {
                input_rows: ih,
                output_rows: oh,
                above,
                input_stride: in_stride,
                output_stride: out_stride,
            };
            let words = crate::conv_band_scratch_len(&attrs, &bx, ws, &by, geometry).unwrap();
            assert!(
                words
                    <= crate::scratch_len("Conv", &attrs, &[Some(&xs), Some(ws)], &[&ys])
                        .unwrap()
                        .max(words)
            );
            let mut scratch = vec![0x7fc0_0000_7fc0_0000u64; words];
            let src = &spread[under.start * iw..];
            let inputs = [
                Input::Value {
                    shape: &bx,
                    data: Data::F32(src),
                },
                weight,
                bias,
            ];
            let dst = &mut banded[r0 * ow..];
            let mut outputs = [Output {
                shape: &by,
                data: DataMut::F32(dst),
            }];
            crate::conv_band(&attrs, &inputs, &mut outputs, &mut scratch, geometry).unwrap();
            r0 = r1;
        }
        for ch in 0..ys[1] {
            let got = &banded[ch * out_stride..][..oh * ow];
            let want = &whole[ch * oh * ow..][..oh * ow];
            for (i, (g, w)) in got.iter().zip(want).enumerate() {
                assert_eq!(
                    g.to_bits(),
                    w.to_bits(),
                    "{xs:?} {ws:?} band {band}: channel {ch} element {i}"
                );
            }
            if ch + 1 < ys[1] {
                assert!(
                    banded[ch * out_stride + oh * ow..(ch + 1) * out_stride]
                        .iter()
                        .all(|&v| v == -7.5),
                    "a band wrote between the channels"
                );
            }
        }
    }

    /// Depthwise (padded plane and direct), pointwise (packed or not), im2col with strides,
    /// dilations and groups: each band by band equal to the whole Conv, at every level.
    #[test]
    fn a_conv_band_by_band_is_the_whole_conv() {
        let cases: [Case<'_>; 8] = [
            (
                &[("group", Attr::Int(4)), ("pads", Attr::Ints(&[1, 1, 1, 1]))],
                [1, 4, 12, 9],
                [4, 1, 3, 3],
                [1, 4, 12, 9],
            ),
            (
                &[
                    ("group", Attr::Int(3)),
                    ("pads", Attr::Ints(&[1, 0, 1, 1])),
                    ("strides", Attr::Ints(&[2, 2])),
                    ("activation", Attr::Str("Clip")),
                    ("activation_params", Attr::Floats(&[0.0, 6.0])),
                ],
                [1, 3, 15, 14],
                [3, 1, 3, 3],
                [1, 3, 8, 7],
            ),
            (&[], [1, 8, 7, 5], [6, 8, 1, 1], [1, 6, 7, 5]),
            (
                &[
                    ("pads", Attr::Ints(&[1, 1, 1, 1])),
                    ("strides", Attr::Ints(&[2, 2])),
                ],
                [1, 3, 16, 16],
                [5, 3, 3, 3],
                [1, 5, 8, 8],
            ),
            (
                &[
                    ("pads", Attr::Ints(&[2, 1, 2, 1])),
                    ("dilations", Attr::Ints(&[2, 1])),
                    ("group", Attr::Int(2)),
                ],
                [1, 4, 11, 6],
                [6, 2, 3, 3],
                [1, 6, 11, 6],
            ),
            // Packed weights, stride 1, rows of 16: the padded-rows method.
            (
                &[
                    ("pads", Attr::Ints(&[1, 1, 1, 1])),
                    ("packed", Attr::Int(16)),
                ],
                [1, 4, 12, 16],
                [6, 4, 3, 3],
                [1, 6, 12, 16],
            ),
            // Packed weights, stride 2, rows of 17: the padded-planes method.
            (
                &[
                    ("pads", Attr::Ints(&[1, 1, 1, 1])),
                    ("strides", Attr::Ints(&[2, 2])),
                    ("packed", Attr::Int(16)),
                ],
                [1, 3, 13, 34],
                [64, 3, 3, 3],
                [1, 64, 7, 17],
            ),
            // A depthwise kernel too large for the padded plane: the direct method.
            (
                &[
                    ("group", Attr::Int(2)),
                    ("pads", Attr::Ints(&[17, 0, 17, 0])),
                ],
                [1, 2, 6, 3],
                [2, 1, 35, 1],
                [1, 2, 6, 3],
            ),
        ];
        for case in &cases {
            for level in [Level::Portable, Level::Avx2, Level::Avx512] {
                if level > detected() {
                    continue;
                }
                limit(level);
                for band in [1, 2, 3, 5, 100] {
                    for gap in [0, 13] {
                        check(case, band, gap);
                    }
                }
            }
            limit(Level::Avx512);
        }
    }

    /// A band that does not lie in the Conv, or strides shorter than its rows, is refused.
    #[test]
    fn a_band_outside_the_conv_is_refused() {
        let list = [("group", Attr::Int(2)), ("pads", Attr::Ints(&[1, 1, 1, 1]))];
        let attrs = Attrs::new(&list);
        let band = ConvBand {
            input_rows: 8,
            output_rows: 8,
            above: 1,
            input_stride: 3 * 4,
            output_stride: 2 * 4,
        };
        let shapes = ([1, 2, 3, 4], [2, 1, 3, 3], [1, 2, 2, 4]);
        assert!(
            crate::conv_band_scratch_len(&attrs, &shapes.0, &shapes.1, &shapes.2, band).is_ok()
        );
        for bad in [
            ConvBand { above: 2, ..band },
            ConvBand {
                input_rows: 2,
                ..band
            },
            ConvBand {
                input_stride: 11,
                ..band
            },
            ConvBand {
                output_stride: 7,
                ..band
            },
        ] {
            assert!(
                crate::conv_band_scratch_len(&attrs, &shapes.0, &shapes.1, &shapes.2, bad).is_err(),
                "{bad:?}"
            );
        }
        // Input data shorter than its channels' rows.
        let x = values(2 * 12 - 1, 1);
        let w = values(18, 2);
        let inputs = [
            Input::Value {
                shape: &shapes.0,
                data: Data::F32(&x),
            },
            Input::Value {
                shape: &shapes.1,
                data: Data::F32(&w),
            },
        ];
        let mut y = vec![0.0; 16];
        let mut outputs = [Output {
            shape: &shapes.2,
            data: DataMut::F32(&mut y),
        }];
        let mut scratch = vec![0u64; 256];
        assert!(crate::conv_band(&attrs, &inputs, &mut outputs, &mut scratch, band).is_err());
        // Strides past any slice: an error, not an overflow.
        let huge = ConvBand {
            input_stride: usize::MAX / 2,
            output_stride: usize::MAX,
            ..band
        };
        let x = values(2 * 12, 1);
        let inputs = [
            Input::Value {
                shape: &shapes.0,
                data: Data::F32(&x),
            },
            Input::Value {
                shape: &shapes.1,
                data: Data::F32(&w),
            },
        ];
        let mut outputs = [Output {
            shape: &shapes.2,
            data: DataMut::F32(&mut y),
        }];
        assert!(crate::conv_band(&attrs, &inputs, &mut outputs, &mut scratch, huge).is_err());
    }
}
