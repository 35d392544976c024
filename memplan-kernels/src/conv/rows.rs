//! The padded-rows method of a Conv of stride 1 (a 3x3 ResNet or SqueezeNet Conv): no im2col
//! panel is packed. For each output row, the input rows its taps read are copied once into
//! scratch with their padding (`KH` rows of every input channel of the group, each `wp` words:
//! the left padding's zeros, the row, the right padding's zeros), and the product reads `B` in
//! place from there: row `(ic, kh, kw)` of the im2col matrix, for consecutive output columns,
//! is one run of consecutive words at `(ic KH + kh) wp + kw dw` ([`gemm::B::Offsets`]).
//!
//! The `KH` rows of a channel are a ring: padded input row `v` lives in slot `v % KH`, so an
//! undilated window moving down one row copies only the row entering it and reads `B` through
//! the offsets of the ring's turn (each turn's table computed once, on the stack of an x86-64
//! host; rewritten per row elsewhere). A dilated window copies its `KH` rows per output row,
//! always into slots `0..KH`. Each output element is the product's sum over `k` in the same
//! order as the im2col method's (input channel, kh, kw), the padding's zeros included: the
//! same bits. The copy per output row is one row per input channel, where im2col writes
//! `KH x KW` rows of the output row's width.

use super::*;

/// Where one output row's input rows lie in scratch.
pub(super) struct PaddedRows {
    /// Words of a padded row: the output row's width plus the window's span less one.
    wp: usize,
    /// Words of all of them: `input channels of a group x KH x wp`.
    len: usize,
    /// The product's inner dimension, `input channels of a group x KH x KW`.
    k: usize,
}

/// The most words the rows may take beyond what the im2col method's panel does: the method
/// must not grow a network's arena much for its speed.
pub(super) const MOST_WORDS: usize = 1 << 14;

impl PaddedRows {
    /// The method's layout for `geo`, if it applies: a 2-D window of stride 1 (a 1x1 one is
    /// pointwise), output rows a multiple of 16 wide (the product's tiles are one output row
    /// wide at most: a row of 8 or 27 would leave narrow tiles, where im2col's panels run on
    /// across rows), its rows small enough. Measured at AVX-512 against im2col: 2.3x on a
    /// 16-channel Conv at 32 x 32 and on a 3-channel one, 1.1x on 128 channels at 16 x 16.
    pub(super) fn of(geo: &ConvGeometry) -> Option<PaddedRows> {
        let w = &geo.win;
        if w.input[0] != 1
            || w.kernel[0] != 1
            || w.output[0] != 1
            || w.strides[1] != 1
            || w.strides[2] != 1
            || geo.pointwise()
            || w.output.contains(&0)
            || !w.output[2].is_multiple_of(PANEL)
        {
            return None;
        }
        let cg = geo.c / geo.group;
        let span = (w.kernel[2] - 1).checked_mul(w.dilations[2])?;
        let wp = w.output[2].checked_add(span)?;
        let len = cg.checked_mul(w.kernel[1])?.checked_mul(wp)?;
        let k = cg.checked_mul(geo.taps())?;
        let most = gemm::scratch_words(k, true)
            .saturating_mul(2)
            .max(MOST_WORDS);
        let rows = PaddedRows { wp, len, k };
        // Every offset fits the `u32` table.
        (rows.words() <= most && u32::try_from(len).is_ok()).then_some(rows)
    }

    /// Scratch words: the rows (`f32`) and the offset of each of `k` rows of `B` (`u32`).
    pub(super) fn words(&self) -> usize {
        self.len.saturating_add(self.k).div_ceil(2)
    }
}

/// A Conv (checked geometry `geo`, planes as `planes` says) by the padded-rows method: the
/// packed weights `panels` (each group's `ceil(mg / 16) x k` rows), the input `x`, the output `y`.
/// `scratch` holds at least [`PaddedRows::words`].
#[allow(clippy::too_many_arguments)]
pub(super) fn padded_rows(
    geo: &ConvGeometry,
    rows: &PaddedRows,
    planes: Planes,
    panels: &[Row],
    x: &[f32],
    bias: Option<&[f32]>,
    act: Activation,
    y: &mut [f32],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    let win = &geo.win;
    let (c, m, group) = (geo.c, geo.m, geo.group);
    let (cg, mg) = (c / group, m / group);
    let [kh, kw] = [win.kernel[1], win.kernel[2]];
    let [ih, iw] = [win.input[1], win.input[2]];
    let [oh, ow] = [win.output[1], win.output[2]];
    let in_plane = ih * iw;
    let (wp, k) = (rows.wp, rows.k);
    let floats: &mut [f32] = bytemuck::cast_slice_mut(scratch);
    if floats.len() < rows.len + k {
        bail!("internal error: the scratch cannot hold the padded rows");
    }
    let (buf, rest) = floats.split_at_mut(rows.len);
    let offsets: &mut [u32] = bytemuck::cast_slice_mut(&mut rest[..k]);
    // Padded column `col` holds input column `col - left` (zero outside the input).
    let left = win.pad_begin[2];
    let dh = win.dilations[1];
    let panels_per_group = mg.div_ceil(PANEL);
    let out_span = Planes::span(mg, planes.y, ow);
    // Undilated, the offsets of each of the ring's `kh` turns, computed once (on x86-64 hosts,
    // up to 8 KiB of stack; elsewhere they are rewritten per output row in the scratch).
    let mut tables = [0u32; if cfg!(target_arch = "x86_64") {
        RING_TABLES
    } else {
        0
    }];
    let rotations = dh == 1 && kh.saturating_mul(k) <= tables.len();
    if rotations {
        for (first, table) in tables.chunks_exact_mut(k).take(kh).enumerate() {
            ring_offsets(table, first, cg, kh, kw, wp, win.dilations[2]);
        }
    } else {
        // Dilated, the slots never turn: one table for every row.
        ring_offsets(offsets, 0, cg, kh, kw, wp, win.dilations[2]);
    }
    for b in 0..geo.n {
        for g in 0..group {
            let xg = &x[(b * c + g * cg) * planes.x..][..Planes::span(cg, planes.x, in_plane)];
            let a = A::Packed(&panels[g * panels_per_group * k..][..panels_per_group * k]);
            for yo in 0..oh {
                // Undilated, tap `th` reads padded input row `v = yo + th`, which lives in slot
                // `v % kh` of each channel's `kh` rows; consecutive output rows share `kh - 1`
                // of them: only the row entering the window is copied.
                let fresh = if dh == 1 && yo > 0 { kh - 1..kh } else { 0..kh };
                for th in fresh {
                    let slot = if dh == 1 { (yo + th) % kh } else { th };
                    let src = win.source(1, yo, th);
                    for ic in 0..cg {
                        let row = &mut buf[(ic * kh + slot) * wp..][..wp];
                        pad_row(
                            row,
                            src.map(|yi| &xg[ic * planes.x + yi * iw..][..iw]),
                            left,
                        );
                    }
                }
                let first = if dh == 1 { yo % kh } else { 0 };
                let offsets: &[u32] = if rotations {
                    &tables[first * k..][..k]
                } else {
                    if dh == 1 {
                        ring_offsets(offsets, first, cg, kh, kw, wp, win.dilations[2]);
                    }
                    offsets
                };
                let at = (b * m + g * mg) * planes.y + yo * ow;
                let mut p = Product {
                    m: mg,
                    n: ow,
                    k,
                    c: &mut y[at..][..out_span],
                    ldc: planes.y,
                    bias: bias.map_or(Bias::None, |bias| Bias::Row(&bias[g * mg..][..mg])),
                    act,
                };
                let b_rows: B<'_, RowMajor<'_>> = B::Offsets { b: &*buf, offsets };
                gemm::product(&mut p, a, b_rows, &mut [])?;
            }
        }
    }
    Ok(())
}

/// The most offsets (`u32`) of the ring's turns kept on the stack.
const RING_TABLES: usize = 2048;

/// Row `(ic, th, tw)` of `B` when the ring's first slot is `first`: the slot of padded row
/// `(ic, th)`, from the column tap `tw` reads (`PaddedRows::of` checked that the rows' words fit
/// a `u32`).
fn ring_offsets(
    offsets: &mut [u32],
    first: usize,
    cg: usize,
    kh: usize,
    kw: usize,
    wp: usize,
    dw: usize,
) {
    let mut at = offsets.iter_mut();
    for ic in 0..cg {
        for th in 0..kh {
            let slot = if first + th < kh {
                first + th
            } else {
                first + th - kh
            };
            let row = u32::try_from((ic * kh + slot) * wp).unwrap_or(0);
            for tw in 0..kw {
                if let Some(o) = at.next() {
                    *o = row + (tw * dw) as u32;
                }
            }
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use crate::simd::{Level, detected, limit};
    use crate::test_values::values;
    use crate::{Attr, Attrs, Data, DataMut, Input, Output, run, scratch_len};
    use std::vec;
    use std::vec::Vec;

    /// Runs a Conv with weights `w` as given (`packed`: packed into panels first), the scratch
    /// `scratch_len` says, filled with NaNs.
    fn conv(
        list: &[(&str, Attr<'_>)],
        xs: [usize; 4],
        ws: [usize; 4],
        ys: [usize; 4],
        packed: bool,
    ) -> Vec<f32> {
        let x = values(xs.iter().product(), 1);
        let w = values(ws.iter().product(), 2);
        let b = values(ws[0], 3);
        let bs = [ws[0]];
        let kernel = [ws[2] as i64, ws[3] as i64];
        let mut attrs: Vec<(&str, Attr<'_>)> = list.to_vec();
        let (weights, wshape) = if packed {
            attrs.push(("packed", Attr::Int(16)));
            attrs.push(("kernel_shape", Attr::Ints(&kernel)));
            super::super::packed_for_test(list, &ws, &w)
        } else {
            (w, ws.to_vec())
        };
        let attrs = Attrs::new(&attrs);
        let inputs = [
            Input::Value {
                shape: &xs,
                data: Data::F32(&x),
            },
            Input::Value {
                shape: &wshape,
                data: Data::F32(&weights),
            },
            Input::Value {
                shape: &bs,
                data: Data::F32(&b),
            },
        ];
        let words = scratch_len(
            "Conv",
            &attrs,
            &[Some(&xs), Some(&wshape), Some(&bs)],
            &[&ys],
        )
        .unwrap();
        let mut scratch = vec![0x7fc0_0000_7fc0_0000u64; words];
        let mut y = vec![f32::NAN; ys.iter().product()];
        let mut outputs = [Output {
            shape: &ys,
            data: DataMut::F32(&mut y),
        }];
        run("Conv", &attrs, &inputs, &mut outputs, &mut scratch).unwrap();
        y
    }

    /// The padded-rows method (packed weights, stride 1) gives the im2col method's bits (the
    /// same weights unpacked), at every level: pads on any side, dilations, groups, more than a
    /// panel of output channels, output rows of one and two tiles, an activation, the ring's
    /// offsets from the stack's tables and rewritten per row.
    #[test]
    #[allow(clippy::type_complexity)]
    fn padded_rows_give_the_im2col_bits() {
        let cases: [(&[(&str, Attr<'_>)], [usize; 4], [usize; 4], [usize; 4]); 7] = [
            (
                &[("pads", Attr::Ints(&[1, 1, 1, 1]))],
                [1, 16, 32, 32],
                [16, 16, 3, 3],
                [1, 16, 32, 32],
            ),
            (
                &[("pads", Attr::Ints(&[1, 1, 1, 1]))],
                [1, 5, 7, 16],
                [20, 5, 3, 3],
                [1, 20, 7, 16],
            ),
            (
                &[
                    ("pads", Attr::Ints(&[2, 0, 1, 3])),
                    ("dilations", Attr::Ints(&[2, 1])),
                ],
                [1, 3, 9, 14],
                [4, 3, 3, 2],
                [1, 4, 8, 16],
            ),
            (
                &[
                    ("group", Attr::Int(2)),
                    ("pads", Attr::Ints(&[1, 1, 1, 1])),
                    ("activation", Attr::Str("Relu")),
                ],
                [2, 6, 5, 16],
                [8, 3, 3, 3],
                [2, 8, 5, 16],
            ),
            (&[], [1, 4, 6, 36], [33, 4, 3, 5], [1, 33, 4, 32]),
            // Too many offsets for the ring's tables on the stack: rewritten per row.
            (
                &[("pads", Attr::Ints(&[1, 1, 1, 1]))],
                [1, 80, 4, 16],
                [8, 80, 3, 3],
                [1, 8, 4, 16],
            ),
            (
                &[("pads", Attr::Ints(&[0, 2, 0, 2]))],
                [1, 2, 3, 16],
                [3, 2, 1, 5],
                [1, 3, 3, 16],
            ),
        ];
        for (list, xs, ws, ys) in cases {
            packed_gives_the_im2col_bits(list, xs, ws, ys);
        }
    }

    /// The Conv with packed weights (the method its shape takes) gives the bits of the same
    /// weights unpacked (im2col), at every level the CPU has.
    pub(in crate::conv) fn packed_gives_the_im2col_bits(
        list: &[(&str, Attr<'_>)],
        xs: [usize; 4],
        ws: [usize; 4],
        ys: [usize; 4],
    ) {
        let im2col = conv(list, xs, ws, ys, false);
        for level in [Level::Portable, Level::Avx2, Level::Avx512] {
            if level > detected() {
                continue;
            }
            limit(level);
            let packed = conv(list, xs, ws, ys, true);
            for (i, (a, b)) in packed.iter().zip(&im2col).enumerate() {
                assert_eq!(
                    a.to_bits(),
                    b.to_bits(),
                    "{xs:?} {ws:?} at {level:?}: element {i}"
                );
            }
        }
        limit(Level::Avx512);
    }
}
