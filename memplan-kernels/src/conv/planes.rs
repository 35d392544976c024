//! The padded-planes method of a 2-D Conv whose rows the padded-rows method does not take
//! (stride 2, or output rows not a multiple of 16 wide: a stem Conv of 3 channels, a 3x3 Conv
//! at 55, 28 or 8 columns): no im2col panel is packed.
//!
//! The output rows are taken a band at a time. Every input channel's rows under the band are
//! copied once into scratch with their padding, split by stride into phases as the depthwise
//! method splits its plane ([`Plane`]), so that row `(ic, kh, kw)` of the im2col matrix, for the
//! band's outputs numbered across its rows as the plane numbers them (`row * row_len + column`),
//! is one run of consecutive words: the product reads `B` in place ([`gemm::B::Offsets`]) over
//! several output rows at once, however narrow they are. It writes `C` a panel of 16 output
//! channels at a time into scratch, whose real columns (not the few past each row's end that a
//! run reads and throws away) are then copied out.
//!
//! Each output element is the product's sum over `k` in the same order as the im2col method's
//! (input channel, kh, kw), the padding's zeros included: the same bits.

use super::*;

/// Columns a band aims at: enough tiles of 16 for the product to reuse each panel of weights.
const BAND_COLUMNS: usize = 256;

/// The method's layout for a Conv: how many output rows a band holds and the scratch it takes.
pub(super) struct PaddedPlanes {
    /// Output rows of a band (the last band may hold fewer).
    rows: usize,
    /// Words from one input channel's band plane to the next's (a whole band's plane and the
    /// slack its runs read).
    reach: usize,
    /// Columns of a whole band's product: `(rows - 1) * row_len + output width`.
    columns: usize,
    /// The product's inner dimension, `input channels of a group x KH x KW`.
    k: usize,
    /// Input channels of a group.
    cg: usize,
}

impl PaddedPlanes {
    /// The method's layout for `geo`, if it applies: a 2-D window of strides 1 or 2 (a patch
    /// Conv whose stride is its kernel is a plain im2col), not pointwise, output rows wide
    /// enough for the padding's columns to be few, a band of at least one row small enough for
    /// the scratch rule the padded-rows method follows and, so that a small network's arena
    /// does not grow for it, no larger than im2col's panel or a quarter of the output.
    pub(super) fn of(geo: &ConvGeometry) -> Option<PaddedPlanes> {
        let w = &geo.win;
        if w.input[0] != 1
            || w.kernel[0] != 1
            || w.output[0] != 1
            || w.strides[1] > 2
            || w.strides[2] > 2
            || geo.pointwise()
            || geo.depthwise()
            || w.output.contains(&0)
            || w.input.contains(&0)
        {
            return None;
        }
        let cg = geo.c / geo.group;
        let k = cg.checked_mul(geo.taps())?;
        let panel = gemm::scratch_words(k, true);
        let most = panel
            .saturating_mul(2)
            .max(MOST_WORDS)
            .min(panel.max(quarter_of_output(geo)));
        let row_len = band_plane(w, 0, 1)?.row_len();
        // The columns past each output row's end are computed and thrown away: at most an
        // eighth of a row (8 x 8 outputs of a 3x3 Conv would waste a fifth, where im2col's
        // panels of 16 outputs waste none).
        if (row_len - w.output[2]) * 8 > w.output[2] {
            return None;
        }
        let mut rows = BAND_COLUMNS.div_ceil(row_len).clamp(1, w.output[1]);
        loop {
            let layout = Self::with_rows(geo, rows, cg, k)?;
            if layout.words() <= most {
                // Every offset and column fits the `u32` table.
                let all = layout.reach.checked_mul(cg)?;
                return u32::try_from(all).is_ok().then_some(layout);
            }
            if rows == 1 {
                return None;
            }
            rows = rows.div_ceil(2);
        }
    }

    /// The layout with bands of `rows` output rows.
    fn with_rows(geo: &ConvGeometry, rows: usize, cg: usize, k: usize) -> Option<PaddedPlanes> {
        let plane = band_plane(&geo.win, 0, rows)?;
        Some(PaddedPlanes {
            rows,
            reach: plane.reach,
            columns: (rows - 1) * plane.row_len() + geo.win.output[2],
            k,
            cg,
        })
    }

    /// Scratch words: the band planes and a panel of `C` (`f32`), the offset of each of `k`
    /// rows of `B` (`u32`).
    pub(super) fn words(&self) -> usize {
        self.reach
            .saturating_mul(self.cg)
            .saturating_add(PANEL.saturating_mul(self.columns))
            .saturating_add(self.k)
            .div_ceil(2)
    }
}

/// The plane of the band of output rows `y0..y0 + rows` ([`band_rows`]).
fn band_plane(win: &Window, y0: usize, rows: usize) -> Option<Plane> {
    Plane::of(&band_rows(win, y0, rows).2)
}

/// The first input row the band of output rows `y0..y0 + rows` reads, how many it reads, and
/// its window: those input rows, the padding above them, as many rows below as its last
/// output reads past them.
fn band_rows(win: &Window, y0: usize, rows: usize) -> (usize, usize, Window) {
    let (sh, dh, kh, top) = (
        win.strides[1],
        win.dilations[1],
        win.kernel[1],
        win.pad_begin[1],
    );
    // Padded rows `y0 sh .. (y0 + rows - 1) sh + (kh - 1) dh + 1`; input row `r` is padded
    // row `r + top`.
    let first = y0 * sh;
    let end = (y0 + rows - 1) * sh + (kh - 1) * dh + 1;
    let lo = first.saturating_sub(top).min(win.input[1]);
    let hi = end.saturating_sub(top).min(win.input[1]).max(lo);
    let mut band = win.clone();
    band.input[1] = hi - lo;
    band.output[1] = rows;
    band.pad_begin[1] = top.saturating_sub(first);
    band.pad_end[1] = (end - first).saturating_sub(band.pad_begin[1] + (hi - lo));
    (lo, hi - lo, band)
}

/// A Conv (checked geometry `geo`, planes as `planes` says) by the padded-planes method: the
/// packed weights `panels` (each group's `ceil(mg / 16) x k` rows), the input `x`, the output
/// `y`. `scratch` holds at least [`PaddedPlanes::words`].
#[allow(clippy::too_many_arguments)]
pub(super) fn padded_planes(
    geo: &ConvGeometry,
    layout: &PaddedPlanes,
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
    let (cg, mg, k) = (c / group, m / group, layout.k);
    let [ih, iw] = [win.input[1], win.input[2]];
    let [oh, ow] = [win.output[1], win.output[2]];
    let in_plane = ih * iw;
    let reach = layout.reach;
    let floats: &mut [f32] = bytemuck::cast_slice_mut(scratch);
    let (buf_len, c_len) = (cg * reach, PANEL * layout.columns);
    if floats.len() < buf_len + c_len + k {
        bail!("internal error: the scratch cannot hold the padded planes");
    }
    let (buf, rest) = floats.split_at_mut(buf_len);
    let (c_buf, rest) = rest.split_at_mut(c_len);
    let offsets: &mut [u32] = bytemuck::cast_slice_mut(&mut rest[..k]);
    let panels_per_group = mg.div_ceil(PANEL);
    for b in 0..geo.n {
        for g in 0..group {
            let xg = &x[(b * c + g * cg) * planes.x..][..Planes::span(cg, planes.x, in_plane)];
            // The layout of the last band filled (its padding above, its input rows and its
            // output rows): a band of another layout clears the planes and the offsets anew.
            let mut filled = None;
            let mut y0 = 0;
            while y0 < oh {
                let rows = layout.rows.min(oh - y0);
                let (lo, take, band) = band_rows(win, y0, rows);
                let Some(plane) = Plane::of(&band).filter(|p| p.reach <= reach) else {
                    bail!("internal error: a band's plane is larger than its scratch");
                };
                let shape = (band.pad_begin[1], take, rows);
                if filled != Some(shape) {
                    buf.fill(0.0);
                    let mut at = offsets.iter_mut();
                    for ic in 0..cg {
                        for &row in &plane.taps.rows {
                            for &col in &plane.taps.cols {
                                if let Some(o) = at.next() {
                                    // `PaddedPlanes::of` checked that `cg * reach` fits a `u32`.
                                    *o = u32::try_from(ic * reach + row + col).unwrap_or(0);
                                }
                            }
                        }
                    }
                    filled = Some(shape);
                }
                for ic in 0..cg {
                    let src = &xg[ic * planes.x + lo * iw..][..take * iw];
                    plane.fill(ScalarFma, src, take, iw, &mut buf[ic * reach..][..reach]);
                }
                let (row_len, n) = (plane.row_len(), (rows - 1) * plane.row_len() + ow);
                let (buf, offsets): (&[f32], &[u32]) = (buf, offsets);
                for panel in 0..panels_per_group {
                    let m0 = panel * PANEL;
                    let height = PANEL.min(mg - m0);
                    let a = &panels[(g * panels_per_group + panel) * k..][..k];
                    let mut p = Product {
                        m: height,
                        n,
                        k,
                        c: &mut c_buf[..height * n],
                        ldc: n,
                        bias: bias
                            .map_or(Bias::None, |bias| Bias::Row(&bias[g * mg + m0..][..height])),
                        act,
                    };
                    let b_rows: B<'_, RowMajor<'_>> = B::Offsets { b: buf, offsets };
                    gemm::product(&mut p, A::Packed(a), b_rows, &mut [])?;
                    for (i, sums) in c_buf.chunks_exact(n).take(height).enumerate() {
                        let out = &mut y[(b * m + g * mg + m0 + i) * planes.y + y0 * ow..];
                        for (r, dst) in out.chunks_exact_mut(ow).take(rows).enumerate() {
                            copy_words(dst, &sums[r * row_len..][..ow]);
                        }
                    }
                }
                y0 += rows;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::PaddedPlanes;
    use crate::conv::rows::tests::packed_gives_the_im2col_bits;
    use crate::spatial::ConvGeometry;
    use crate::{Attr, Attrs};

    /// The padded-planes method (packed weights) gives the im2col method's bits (the same
    /// weights unpacked), at every level: a stem of 3 channels at stride 2, rows narrower than a
    /// tile and wider than a band, a last band shorter than the others, strides and dilations
    /// that differ by axis, pads on any side, groups, a batch, more than a panel of output
    /// channels, an activation, bands halved to fit the scratch.
    #[test]
    #[allow(clippy::type_complexity)]
    fn padded_planes_give_the_im2col_bits() {
        let cases: [(&[(&str, Attr<'_>)], [usize; 4], [usize; 4], [usize; 4]); 8] = [
            (
                &[
                    ("pads", Attr::Ints(&[1, 1, 1, 1])),
                    ("strides", Attr::Ints(&[2, 2])),
                ],
                [1, 3, 33, 35],
                [64, 3, 3, 3],
                [1, 64, 17, 18],
            ),
            (
                &[("pads", Attr::Ints(&[1, 1, 1, 1]))],
                [1, 5, 8, 24],
                [48, 5, 3, 3],
                [1, 48, 8, 24],
            ),
            (
                &[("pads", Attr::Ints(&[1, 1, 1, 1]))],
                [1, 4, 11, 55],
                [16, 4, 3, 3],
                [1, 16, 11, 55],
            ),
            (
                &[
                    ("pads", Attr::Ints(&[2, 0, 1, 3])),
                    ("strides", Attr::Ints(&[2, 1])),
                    ("dilations", Attr::Ints(&[1, 2])),
                ],
                [1, 3, 13, 25],
                [32, 3, 3, 2],
                [1, 32, 7, 26],
            ),
            (
                &[
                    ("group", Attr::Int(2)),
                    ("pads", Attr::Ints(&[1, 1, 1, 1])),
                    ("activation", Attr::Str("Relu")),
                ],
                [2, 6, 7, 18],
                [32, 3, 3, 3],
                [2, 32, 7, 18],
            ),
            // Rows of 19 padded words: bands of 14 output rows halved to 7 to fit a quarter of
            // the output, the last of 5.
            (
                &[("pads", Attr::Ints(&[1, 1, 1, 1]))],
                [1, 2, 40, 17],
                [24, 2, 3, 3],
                [1, 24, 40, 17],
            ),
            (
                &[
                    ("strides", Attr::Ints(&[1, 2])),
                    ("pads", Attr::Ints(&[0, 3, 3, 0])),
                ],
                [1, 3, 12, 80],
                [40, 3, 5, 7],
                [1, 40, 11, 39],
            ),
            // 96 channels: the planes of a band of 6 rows outgrow the scratch rule.
            (
                &[("pads", Attr::Ints(&[1, 1, 1, 1]))],
                [1, 96, 9, 40],
                [256, 96, 3, 3],
                [1, 256, 9, 40],
            ),
        ];
        for (list, xs, ws, ys) in cases {
            let attrs = Attrs::new(list);
            let geo = ConvGeometry::new(&attrs, &xs, &ws, &ys).unwrap();
            let Some(layout) = PaddedPlanes::of(&geo) else {
                panic!("{xs:?} {ws:?} does not take the padded-planes method");
            };
            if xs[1] == 96 {
                assert!(layout.rows < ys[2], "bands of {} rows", layout.rows);
            }
            packed_gives_the_im2col_bits(list, xs, ws, ys);
        }
    }
}
