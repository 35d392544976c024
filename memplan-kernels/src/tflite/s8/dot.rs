//! The inner loops of the int8 kernels: dot products of int8 rows (the matrix product behind
//! CONV_2D and FULLY_CONNECTED) and the four-channel multiply-accumulate of DEPTHWISE_CONV_2D,
//! in two methods that give the same int32 sums: [`Plain`], loops over elements (which a
//! compiler vectorises on a host), and [`Packed`], four bytes a word through the DSP
//! instructions of [`Dsp`] (two multiply-accumulates an instruction on a Cortex-M4).
//!
//! The sums wrap modulo 2^32 in both, as the reference kernels' do, so summing in another order
//! changes no bit: the methods are interchangeable, and the tests check they agree.

use core::marker::PhantomData;

use super::dsp::{Dsp, pair};
use super::window::{Taps, each_quad};

/// Two pixels' im2col columns `a` and `b`, widened to int16, four values of each at a time, as
/// four pairs: `[(a0, a2), (a1, a3), (b0, b2), (b1, b3)]` (the order in which `SXTB16` widens a
/// word of the filter, so each pair meets its weights in one `SMLAD`). A column's last quad is
/// padded with zeros.
pub(crate) type Quad = [u32; 4];

/// Four values of one column as the two pairs of its half of a [`Quad`].
#[inline(always)]
pub(crate) fn half_quad(v: [i32; 4]) -> [u32; 2] {
    [pair(v[0], v[2]), pair(v[1], v[3])]
}

/// A way to compute the int8 kernels' inner products.
pub(crate) trait Dot {
    /// `[a . f, a . g, b . f, b . g]`: the two columns of `quads` by filter rows `f` and `g` (of
    /// one length, at most four times the quads).
    fn quads_2x2(quads: &[Quad], f: &[i8], g: &[i8]) -> [i32; 4];
    /// `[a . f, b . f]`.
    fn quads_2x1(quads: &[Quad], f: &[i8]) -> [i32; 2];
    /// Four int8 values as the two pairs of their half of a [`Quad`] ([`half_quad`]).
    fn widen(v: [i8; 4]) -> [u32; 2];
    /// `[a . r0, a . r1, a . r2, a . r3]` for the rows `rows[k d..k d + a.len()]`, `d` apart
    /// (`d >= a.len()`, `rows` at least `3 d + a.len()` long; zeros otherwise).
    fn dot_1x4(a: &[i8], rows: &[i8], d: usize) -> [i32; 4];
    /// `[a . f, a . g]`.
    fn dot_1x2(a: &[i8], f: &[i8], g: &[i8]) -> [i32; 2];
    /// `a . f`.
    fn dot_1x1(a: &[i8], f: &[i8]) -> i32;
    /// `acc[j] += (x[j] + offset) * w[j]` for the whole quads of `j` the three slices share
    /// (`offset` in `-32_640..=32_640`, so `x + offset` is an int16): one tap of a depthwise
    /// window over a block of channels.
    fn channels(acc: &mut [i32], x: &[i8], w: &[i8], offset: i32);
    /// `acc[j] + sum over the taps of (x[input + j] + offset) * w[filter + j]` for the four
    /// channels `j`: one quad of channels of a depthwise window, its sums in registers while it
    /// walks the taps. `None` when the taps do not fit `x` and `w` ([`Taps::fit`]).
    fn window_quad(acc: [i32; 4], x: &[i8], w: &[i8], taps: &Taps, offset: i32)
    -> Option<[i32; 4]>;
    /// [`Dot::window_quad`] of every whole quad of channels of `sums` (at most `bias`'s), each
    /// from its `bias`, into `sums`; `false` (and `sums` as it was) when the taps of those
    /// channels do not fit `x` and `w` ([`Taps::fit_channels`]).
    fn window_sums(
        x: &[i8],
        w: &[i8],
        taps: &Taps,
        offset: i32,
        bias: &[i32],
        sums: &mut [i32],
    ) -> bool {
        each_quad(x, w, taps, bias, sums, |acc, x, w| {
            Self::window_quad(acc, x, w, taps, offset)
        })
    }
}

/// One product, wrapping as the reference kernels' sums do.
#[inline(always)]
fn mul(a: i8, b: i8) -> i32 {
    i32::from(a) * i32::from(b)
}

/// Element by element.
pub(crate) struct Plain;

/// Filter row `f` a quad at a time, the last one padded with zeros.
#[inline(always)]
fn filter_quads(f: &[i8]) -> impl Iterator<Item = [i8; 4]> + '_ {
    let (whole, tail) = f.as_chunks::<4>();
    let mut last = [0i8; 4];
    last[..tail.len()].copy_from_slice(tail);
    whole
        .iter()
        .copied()
        .chain((!tail.is_empty()).then_some(last))
}

/// One column's four values (`half` 0 for `a`, 2 for `b`) by four weights.
#[inline(always)]
// taking the int16 lanes is the point
fn quad_dot(q: &Quad, half: usize, f: [i8; 4]) -> i32 {
    let (even, odd) = (q[half], q[half + 1]);
    let v = [even, odd, even >> 16, odd >> 16].map(|l| i32::from(l as u16 as i16));
    v.iter()
        .zip(f)
        .fold(0i32, |s, (&v, w)| s.wrapping_add(v * i32::from(w)))
}

impl Dot for Plain {
    #[inline(always)]
    fn widen(v: [i8; 4]) -> [u32; 2] {
        half_quad(v.map(i32::from))
    }

    #[inline(always)]
    fn quads_2x2(quads: &[Quad], f: &[i8], g: &[i8]) -> [i32; 4] {
        let mut s = [0i32; 4];
        for ((q, f), g) in quads.iter().zip(filter_quads(f)).zip(filter_quads(g)) {
            s[0] = s[0].wrapping_add(quad_dot(q, 0, f));
            s[1] = s[1].wrapping_add(quad_dot(q, 0, g));
            s[2] = s[2].wrapping_add(quad_dot(q, 2, f));
            s[3] = s[3].wrapping_add(quad_dot(q, 2, g));
        }
        s
    }

    #[inline(always)]
    fn quads_2x1(quads: &[Quad], f: &[i8]) -> [i32; 2] {
        let mut s = [0i32; 2];
        for (q, f) in quads.iter().zip(filter_quads(f)) {
            s[0] = s[0].wrapping_add(quad_dot(q, 0, f));
            s[1] = s[1].wrapping_add(quad_dot(q, 2, f));
        }
        s
    }

    #[inline(always)]
    fn dot_1x4(a: &[i8], rows: &[i8], d: usize) -> [i32; 4] {
        let mut s = [0i32; 4];
        if d < a.len() || rows.len() < 3 * d + a.len() {
            return s;
        }
        for (k, s) in s.iter_mut().enumerate() {
            *s = Self::dot_1x1(a, &rows[k * d..k * d + a.len()]);
        }
        s
    }

    #[inline(always)]
    fn dot_1x2(a: &[i8], f: &[i8], g: &[i8]) -> [i32; 2] {
        let mut s = [0i32; 2];
        for ((&a, &f), &g) in a.iter().zip(f).zip(g) {
            s[0] = s[0].wrapping_add(mul(a, f));
            s[1] = s[1].wrapping_add(mul(a, g));
        }
        s
    }

    #[inline(always)]
    fn dot_1x1(a: &[i8], f: &[i8]) -> i32 {
        a.iter()
            .zip(f)
            .fold(0i32, |s, (&a, &f)| s.wrapping_add(mul(a, f)))
    }

    #[inline(always)]
    fn window_quad(
        mut acc: [i32; 4],
        x: &[i8],
        w: &[i8],
        taps: &Taps,
        offset: i32,
    ) -> Option<[i32; 4]> {
        if !taps.fit(x, w) {
            return None;
        }
        for &[i, f] in taps.list() {
            let (i, f) = (i as usize, f as usize);
            for (j, a) in acc.iter_mut().enumerate() {
                let product = (i32::from(x[i + j]) + offset).wrapping_mul(i32::from(w[f + j]));
                *a = a.wrapping_add(product);
            }
        }
        Some(acc)
    }

    #[inline(always)]
    fn channels(acc: &mut [i32], x: &[i8], w: &[i8], offset: i32) {
        let n = acc.len().min(x.len()).min(w.len()) / 4 * 4;
        for ((a, &x), &w) in acc[..n].iter_mut().zip(&x[..n]).zip(&w[..n]) {
            *a = a.wrapping_add((i32::from(x) + offset).wrapping_mul(i32::from(w)));
        }
    }
}

/// Four bytes a word through the DSP instructions `D`: each word of a row is widened into two
/// pairs (bytes 0 and 2, bytes 1 and 3), and each pair of a row meets the same pair of a filter
/// row in one `SMLAD`; the rows' last `len % 4` elements are summed one by one.
#[cfg_attr(not(any(memplan_dsp, test)), allow(dead_code))] // used on DSP targets and in tests
pub(crate) struct Packed<D>(PhantomData<D>);

/// The little-endian word of four int8 values (one unaligned `LDR` on a Cortex-M4).
#[cfg_attr(not(any(memplan_dsp, test)), allow(dead_code))]
#[inline(always)]
fn word(bytes: [i8; 4]) -> u32 {
    u32::from_le_bytes(bytes.map(i8::cast_unsigned))
}

#[cfg_attr(not(any(memplan_dsp, test)), allow(dead_code))]
impl<D: Dsp> Packed<D> {
    /// `s += [a . f, a . g, b . f, b . g]` over one quad.
    #[inline(always)]
    fn quad_2x2(s: &mut [i32; 4], q: &Quad, f: [i8; 4], g: [i8; 4]) {
        let [ae, ao, be, bo] = *q;
        let f = word(f);
        let (fe, fo) = (D::sxtb16(f), D::sxtb16_ror8(f));
        s[0] = D::smlad(ao, fo, D::smlad(ae, fe, s[0]));
        s[2] = D::smlad(bo, fo, D::smlad(be, fe, s[2]));
        let g = word(g);
        let (ge, go) = (D::sxtb16(g), D::sxtb16_ror8(g));
        s[1] = D::smlad(ao, go, D::smlad(ae, ge, s[1]));
        s[3] = D::smlad(bo, go, D::smlad(be, ge, s[3]));
    }

    /// `s += [a . f, b . f]` over one quad.
    #[inline(always)]
    fn quad_2x1(s: &mut [i32; 2], q: &Quad, f: [i8; 4]) {
        let [ae, ao, be, bo] = *q;
        let f = word(f);
        let (fe, fo) = (D::sxtb16(f), D::sxtb16_ror8(f));
        s[0] = D::smlad(ao, fo, D::smlad(ae, fe, s[0]));
        s[1] = D::smlad(bo, fo, D::smlad(be, fe, s[1]));
    }
}

/// A row's last `len % 4` values as a quad, padded with zeros.
#[cfg_attr(not(any(memplan_dsp, test)), allow(dead_code))]
#[inline(always)]
fn padded(tail: &[i8]) -> [i8; 4] {
    let mut last = [0i8; 4];
    for (l, &t) in last.iter_mut().zip(tail) {
        *l = t;
    }
    last
}

impl<D: Dsp> Dot for Packed<D> {
    #[inline(always)]
    fn widen(v: [i8; 4]) -> [u32; 2] {
        let w = word(v);
        [D::sxtb16(w), D::sxtb16_ror8(w)]
    }

    #[inline(always)]
    fn quads_2x2(quads: &[Quad], f: &[i8], g: &[i8]) -> [i32; 4] {
        let (fw, ft) = f.as_chunks::<4>();
        let (gw, gt) = g.as_chunks::<4>();
        let mut s = D::quads_2x2([0; 4], quads, fw, gw);
        if !ft.is_empty()
            && let Some(q) = quads.get(fw.len())
        {
            Self::quad_2x2(&mut s, q, padded(ft), padded(gt));
        }
        s
    }

    #[inline(always)]
    fn quads_2x1(quads: &[Quad], f: &[i8]) -> [i32; 2] {
        let (fw, ft) = f.as_chunks::<4>();
        let mut s = [0i32; 2];
        for (q, &f) in quads.iter().zip(fw) {
            Self::quad_2x1(&mut s, q, f);
        }
        if !ft.is_empty()
            && let Some(q) = quads.get(fw.len())
        {
            Self::quad_2x1(&mut s, q, padded(ft));
        }
        s
    }

    #[inline(always)]
    fn dot_1x4(a: &[i8], rows: &[i8], d: usize) -> [i32; 4] {
        let n = a.len();
        if d < n || rows.len() < 3 * d + n {
            return [0; 4];
        }
        let whole = n / 4 * 4;
        let mut s = D::rows_1x4([0; 4], &a[..whole], rows, d);
        if whole == n {
            return s;
        }
        for (k, s) in s.iter_mut().enumerate() {
            let tail = &rows[k * d + whole..k * d + n];
            *s = s.wrapping_add(Plain::dot_1x1(&a[whole..], tail));
        }
        s
    }

    #[inline(always)]
    fn dot_1x2(a: &[i8], f: &[i8], g: &[i8]) -> [i32; 2] {
        let (aw, at) = a.as_chunks::<4>();
        let (fw, ft) = f.as_chunks::<4>();
        let (gw, gt) = g.as_chunks::<4>();
        let mut s = [0i32; 2];
        for ((&a, &f), &g) in aw.iter().zip(fw).zip(gw) {
            let a = word(a);
            let (ae, ao) = (D::sxtb16(a), D::sxtb16_ror8(a));
            let (f, g) = (word(f), word(g));
            s[0] = D::smlad(ao, D::sxtb16_ror8(f), D::smlad(ae, D::sxtb16(f), s[0]));
            s[1] = D::smlad(ao, D::sxtb16_ror8(g), D::smlad(ae, D::sxtb16(g), s[1]));
        }
        let tail = Plain::dot_1x2(at, ft, gt);
        [s[0].wrapping_add(tail[0]), s[1].wrapping_add(tail[1])]
    }

    #[inline(always)]
    fn dot_1x1(a: &[i8], f: &[i8]) -> i32 {
        let (aw, at) = a.as_chunks::<4>();
        let (fw, ft) = f.as_chunks::<4>();
        let mut s = 0i32;
        for (&a, &f) in aw.iter().zip(fw) {
            let (a, f) = (word(a), word(f));
            s = D::smlad(
                D::sxtb16_ror8(a),
                D::sxtb16_ror8(f),
                D::smlad(D::sxtb16(a), D::sxtb16(f), s),
            );
        }
        s.wrapping_add(Plain::dot_1x1(at, ft))
    }

    #[inline(always)]
    fn channels(acc: &mut [i32], x: &[i8], w: &[i8], offset: i32) {
        D::channels(acc, x, w, offset);
    }

    #[inline(always)]
    fn window_quad(
        acc: [i32; 4],
        x: &[i8],
        w: &[i8],
        taps: &Taps,
        offset: i32,
    ) -> Option<[i32; 4]> {
        D::window_quad(acc, x, w, taps, pair(offset, offset))
    }

    #[inline(always)]
    fn window_sums(
        x: &[i8],
        w: &[i8],
        taps: &Taps,
        offset: i32,
        bias: &[i32],
        sums: &mut [i32],
    ) -> bool {
        D::window_sums(x, w, taps, pair(offset, offset), bias, sums)
    }
}

/// The method the kernels use: the DSP instructions where the core has them, plain loops
/// elsewhere.
#[cfg(memplan_dsp)]
pub(crate) type Best = Packed<super::dsp::Native>;
/// The method the kernels use: the DSP instructions where the core has them, plain loops
/// elsewhere.
#[cfg(not(memplan_dsp))]
pub(crate) type Best = Plain;

#[cfg(test)]
mod tests {
    use super::super::dsp::Emulated;
    use super::*;
    use proptest::prelude::*;
    use std::vec::Vec;

    type Emu = Packed<Emulated>;

    /// The naive sum of products.
    trait Naive {
        fn dot(&self, f: &[i8]) -> i32;
    }

    impl Naive for Vec<i8> {
        fn dot(&self, f: &[i8]) -> i32 {
            self.iter()
                .zip(f)
                .map(|(&a, &f)| i32::from(a) * i32::from(f))
                .sum()
        }
    }

    /// Two rows as quads, as im2col writes them.
    fn widen(a: &[i8], b: &[i8]) -> Vec<Quad> {
        let four = |row: &[i8], q: usize| {
            [0, 1, 2, 3].map(|j| row.get(4 * q + j).map_or(0, |&v| i32::from(v)))
        };
        (0..a.len().div_ceil(4))
            .map(|q| {
                let ([a0, a1], [b0, b1]) = (half_quad(four(a, q)), half_quad(four(b, q)));
                [a0, a1, b0, b1]
            })
            .collect()
    }

    fn row(len: usize) -> impl Strategy<Value = Vec<i8>> {
        proptest::collection::vec(any::<i8>(), len)
    }

    proptest! {
        #[test]
        fn packed_and_plain_sum_the_same(
            (a, b, f, g) in (0usize..40).prop_flat_map(|k| (row(k), row(k), row(k), row(k))),
            (x, w, acc) in (0usize..=6, 0usize..=3).prop_flat_map(|(quads, extra)| {
                let len = 4 * quads + extra;
                (row(len), row(len), proptest::collection::vec(any::<i32>(), len))
            }),
            offset in -255i32..=255,
        ) {
            let quads = widen(&a, &b);
            let want = [a.dot(&f), a.dot(&g), b.dot(&f), b.dot(&g)];
            prop_assert_eq!(Plain::quads_2x2(&quads, &f, &g), want);
            prop_assert_eq!(Emu::quads_2x2(&quads, &f, &g), want);
            prop_assert_eq!(Plain::quads_2x1(&quads, &g), [want[1], want[3]]);
            prop_assert_eq!(Emu::quads_2x1(&quads, &g), [want[1], want[3]]);
            for v in a.as_chunks::<4>().0 {
                prop_assert_eq!(Emu::widen(*v), Plain::widen(*v));
            }
            prop_assert_eq!(Emu::dot_1x2(&a, &f, &g), Plain::dot_1x2(&a, &f, &g));
            // Four rows `d` apart (the filter of four units), the input row shorter than `d`.
            let d = a.len() + 3;
            let rows: Vec<i8> = (0..3 * d + a.len()).map(|i| (i as i8).wrapping_mul(37)).collect();
            let four: [i32; 4] = core::array::from_fn(|k| a.dot(&rows[k * d..k * d + a.len()]));
            prop_assert_eq!(Plain::dot_1x4(&a, &rows, d), four);
            prop_assert_eq!(Emu::dot_1x4(&a, &rows, d), four);
            prop_assert_eq!(Emu::dot_1x1(&b, &g), Plain::dot_1x1(&b, &g));
            let naive: i32 = a.iter().zip(&f).map(|(&a, &f)| i32::from(a) * i32::from(f)).sum();
            prop_assert_eq!(Plain::dot_1x1(&a, &f), naive);
            // One depthwise window: x of 3 rows of 3 pixels of `quads + 1` quads of channels.
            let c = 4 * (quads.len() + 1);
            let window_x: Vec<i8> = (0..9 * c).map(|i| a.get(i % a.len().max(1)).copied().unwrap_or(1).wrapping_add(i as i8)).collect();
            let window_w: Vec<i8> = (0..9 * c).map(|i| (i as i8).wrapping_mul(7)).collect();
            let layout = super::super::window::Layout { input_width: 3, channels: c, kernel_width: 3, dilation: [1, 1] };
            for (rows, cols) in [(0..3, 0..3), (1..3, 0..2), (0..1, 2..3)] {
                let taps = Taps::clipped(rows.clone(), cols.clone(), layout).unwrap();
                for ch in (0..c).step_by(4) {
                    let start = [1, -2, 3, i32::MAX];
                    let mut want = start;
                    for (k, ky) in rows.clone().enumerate() {
                        for (l, kx) in cols.clone().enumerate() {
                            for j in 0..4 {
                                let xv = i32::from(window_x[(k * 3 + l) * c + ch + j]) + offset;
                                let wv = i32::from(window_w[(ky * 3 + kx) * c + ch + j]);
                                want[j] = want[j].wrapping_add(xv * wv);
                            }
                        }
                    }
                    prop_assert_eq!(Plain::window_quad(start, &window_x[ch..], &window_w[ch..], &taps, offset), Some(want));
                    prop_assert_eq!(Emu::window_quad(start, &window_x[ch..], &window_w[ch..], &taps, offset), Some(want));
                    // Slices too short for the taps (the last quad, a byte short): refused.
                    if ch + 4 == c && rows == (0..3) && cols == (0..3) {
                        let short = &window_w[ch..window_w.len() - 1];
                        prop_assert_eq!(Emu::window_quad(start, &window_x[ch..], short, &taps, offset), None);
                        prop_assert_eq!(Plain::window_quad(start, &window_x[ch..], short, &taps, offset), None);
                    }
                }
            }
            let (mut plain, mut packed) = (acc.clone(), acc.clone());
            Plain::channels(&mut plain, &x, &w, offset);
            Emu::channels(&mut packed, &x, &w, offset);
            prop_assert_eq!(&plain, &packed);
            // Whole quads only; the rest untouched.
            let whole = x.len() / 4 * 4;
            prop_assert_eq!(&plain[whole..], &acc[whole..]);
            for j in 0..whole {
                let want = acc[j].wrapping_add((i32::from(x[j]) + offset) * i32::from(w[j]));
                prop_assert_eq!(plain[j], want);
            }
        }
    }
}
