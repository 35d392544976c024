//! Transpose: output dimension `i` is input dimension `perm[i]` (default: reversed).

use super::attrs::Attrs;
use super::broadcast::for_each;
use super::error::{KernelError, bail};
use super::simd::{self, ScalarFma, Transpose};
#[cfg(target_arch = "x86_64")]
use super::simd::{Avx2Fma, Avx512Fma};
use super::tensor::{
    Dims, Elem, Input, MAX_RANK, Output, collect, dispatch, expect_shape, out_dtype, output, push,
    strides, typed,
};

/// Transpose.
pub(crate) fn transpose(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    fn typed_transpose<T: Elem>(
        attrs: &Attrs<'_>,
        inputs: &[Input<'_>],
        outputs: &mut [Output<'_>],
    ) -> Result<(), KernelError> {
        let (xs, x) = typed::<T>(inputs, 0)?;
        let rank = xs.len();
        let perm: Dims = match attrs.ints("perm")? {
            None => collect((0..rank).rev())?,
            Some(p) => {
                let mut seen = [false; MAX_RANK];
                let mut perm = Dims::new();
                for &a in p {
                    match usize::try_from(a)
                        .ok()
                        .filter(|&a| a < rank && a < MAX_RANK)
                    {
                        Some(a) if !seen[a] => {
                            seen[a] = true;
                            push(&mut perm, a)?;
                        }
                        _ => bail!("perm {p:?} is not a permutation of 0..{rank}"),
                    }
                }
                if perm.len() != rank {
                    bail!("perm {p:?} is not a permutation of 0..{rank}");
                }
                perm
            }
        };
        let (ys, y) = output::<T>(outputs, 0)?;
        let want: Dims = collect(perm.iter().map(|&p| xs[p]))?;
        expect_shape(0, ys, &want)?;
        let xst = strides(xs)?;
        let s: Dims = collect(perm.iter().map(|&p| xst[p]))?;
        let (ys, s) = merged(ys, &s)?;
        let (ys, rank) = (&ys[..], ys.len());
        // The last dimension kept in place (attention's [0, 2, 1, 3] splitting or merging
        // heads): whole rows move, a copy each.
        if let (Some(&run), Some(&1)) = (ys.last(), s.last())
            && run > 1
        {
            let rank = ys.len();
            let outer: Dims = collect(s[..rank - 1].iter().copied())?;
            return for_each(&ys[..rank - 1], &[outer], |i, o| {
                y[i * run..][..run].copy_from_slice(&x[o[0]..][..run]);
            });
        }
        // The input's last dimension moved (NHWC <-> NCHW, a key matrix transposed): output
        // dimension `j` reads it. Per index of the other dimensions, a matrix is transposed in
        // blocks of 8 x 8, each read along the input's rows and written along the output's.
        if let Some(j) = s.iter().position(|&v| v == 1)
            && j + 1 < rank
        {
            let yst = strides(ys)?;
            let mut outer: Dims = collect(ys.iter().copied())?;
            outer[j] = 1;
            outer[rank - 1] = 1;
            let matrix = Matrix {
                rows: ys[j],
                cols: ys[rank - 1],
                ld_out: yst[j],
                ld_in: s[rank - 1],
            };
            let offsets = [yst, s];
            // Words move as `f32` bit patterns through a vector level's 16 x 16 blocks (on x86-64:
            // a block is 1 KiB of stack, which a microcontroller keeps for the 8 x 8 ones).
            if cfg!(target_arch = "x86_64")
                && size_of::<T>() == 4
                && let (Ok(y), Ok(x)) = (
                    bytemuck::try_cast_slice_mut::<T, f32>(y),
                    bytemuck::try_cast_slice::<T, f32>(x),
                )
            {
                return for_each(&outer, &offsets, |_, o| {
                    let (y, x) = (&mut y[o[0]..], &x[o[1]..]);
                    simd::dispatch!(words_portable, words_avx2, words_avx512, (&matrix, y, x));
                });
            }
            return for_each(&outer, &offsets, |_, o| {
                matrix.transpose(&mut y[o[0]..], &x[o[1]..]);
            });
        }
        for_each(ys, &[s], |i, o| y[i] = x[o[0]])
    }
    dispatch!(
        out_dtype(outputs, 0)?,
        typed_transpose(attrs, inputs, outputs)
    )
}

/// The output's shape and each output dimension's stride in the input, with dimensions of one
/// element dropped and each run of output dimensions that are consecutive in the input too
/// (`s[i] == s[i + 1] * ys[i + 1]`) merged into one: NCHW to NHWC becomes one `(H W) x C`
/// matrix per image rather than `H` matrices of `W x C`.
fn merged(ys: &[usize], s: &[usize]) -> Result<(Dims, Dims), KernelError> {
    let (mut shape, mut from) = (Dims::new(), Dims::new());
    for (&n, &st) in ys.iter().zip(s) {
        if n == 1 {
            continue;
        }
        if let (Some(last_n), Some(last_s)) = (shape.last_mut(), from.last_mut())
            && *last_s == st * n
        {
            *last_n *= n;
            *last_s = st;
            continue;
        }
        push(&mut shape, n)?;
        push(&mut from, st)?;
    }
    if shape.is_empty() {
        push(&mut shape, 1)?;
        push(&mut from, 1)?;
    }
    Ok((shape, from))
}

/// [`Matrix::transpose`] for 4-byte elements moved as `f32` bit patterns (loads, shuffles and
/// stores only: any bits, NaN payloads included, arrive unchanged), a block of 16 x 16 at a
/// time through the level's [`Transpose`], the edges one element at a time. Each matrix is a
/// call of its own: a closure over the matrices inside a function built for a vector level is
/// built without its features (the transposes' intrinsics became calls: 7x slower).
/// Measured alone against the 8 x 8 blocks of any type (AVX-512, dimensions merged in both):
/// NCHW to NHWC of 16 x 28 x 28 words 3.3x, back 2.6x, three 197 x 64 key matrices 3.2x.
#[inline(always)]
fn words<L: Transpose>(level: L, m: &Matrix, y: &mut [f32], x: &[f32]) {
    let (full_rows, full_cols) = (m.rows - m.rows % 16, m.cols - m.cols % 16);
    for a0 in (0..full_rows).step_by(16) {
        for b0 in (0..full_cols).step_by(16) {
            // `block[b][a]` is output element `(a0 + a, b0 + b)`, then turned around.
            let mut block = [[0.0f32; 16]; 16];
            for (b, column) in block.iter_mut().enumerate() {
                let from = x.get(a0 + (b0 + b) * m.ld_in..);
                if let Some(src) = from.and_then(<[f32]>::first_chunk) {
                    *column = *src;
                }
            }
            level.transpose16(&mut block);
            for (a, row) in block.iter().enumerate() {
                let to = y.get_mut((a0 + a) * m.ld_out + b0..);
                if let Some(dst) = to.and_then(<[f32]>::first_chunk_mut) {
                    *dst = *row;
                }
            }
        }
    }
    // The edges: the last rows, and the last columns of the others.
    for a in 0..m.rows {
        let from = if a < full_rows { full_cols } else { 0 };
        for b in from..m.cols {
            y[a * m.ld_out + b] = x[a + b * m.ld_in];
        }
    }
}

fn words_portable(m: &Matrix, y: &mut [f32], x: &[f32]) {
    words(ScalarFma, m, y, x);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn words_avx2(m: &Matrix, y: &mut [f32], x: &[f32]) {
    words(Avx2Fma::new(), m, y, x);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn words_avx512(m: &Matrix, y: &mut [f32], x: &[f32]) {
    words(Avx512Fma::new(), m, y, x);
}

/// A matrix moved by a transpose: output element `(a, b)` at `a * ld_out + b` is input element
/// `a + b * ld_in`.
struct Matrix {
    rows: usize,
    cols: usize,
    ld_out: usize,
    ld_in: usize,
}

/// The side of a block of [`Matrix::transpose`].
const BLOCK: usize = 8;

impl Matrix {
    /// Moves the matrix from `x` to `y` (each from the matrix's first element) in blocks of
    /// 8 x 8: a whole block through an array the compiler keeps in registers, the edges one
    /// element at a time.
    #[inline(always)]
    fn transpose<T: Copy + Default>(&self, y: &mut [T], x: &[T]) {
        let (ld_out, ld_in) = (self.ld_out, self.ld_in);
        for a0 in (0..self.rows).step_by(BLOCK) {
            let height = BLOCK.min(self.rows - a0);
            for b0 in (0..self.cols).step_by(BLOCK) {
                let width = BLOCK.min(self.cols - b0);
                if height == BLOCK && width == BLOCK {
                    let mut block = [[T::default(); BLOCK]; BLOCK];
                    for (b, column) in block.iter_mut().enumerate() {
                        if let Some(src) = x.get(a0 + (b0 + b) * ld_in..)
                            && let Some(src) = src.first_chunk::<BLOCK>()
                        {
                            *column = *src;
                        }
                    }
                    for a in 0..BLOCK {
                        if let Some(dst) = y.get_mut((a0 + a) * ld_out + b0..)
                            && let Some(dst) = dst.first_chunk_mut::<BLOCK>()
                        {
                            for (d, column) in dst.iter_mut().zip(&block) {
                                *d = column[a];
                            }
                        }
                    }
                    continue;
                }
                for a in a0..a0 + height {
                    for b in b0..b0 + width {
                        y[a * ld_out + b] = x[a + b * ld_in];
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Attr;
    use crate::simd::{Level, detected, limit};
    use crate::tensor::{Data, DataMut};
    use std::vec;
    use std::vec::Vec;

    /// Transposes `x` of shape `xs` by `perm` (`$variant` the data's type) and checks every
    /// output element.
    macro_rules! check {
        ($xs:expr, $perm:expr, $x:expr, $variant:ident) => {{
            let (xs, perm, x) = ($xs, $perm, $x);
            let ys: Vec<usize> = perm.iter().map(|&p| xs[p as usize]).collect();
            let mut y = vec![Default::default(); x.len()];
            let list = [("perm", Attr::Ints(perm))];
            let inputs = [Input::Value {
                shape: xs,
                data: Data::$variant(x),
            }];
            let mut outputs = [Output {
                shape: &ys,
                data: DataMut::$variant(&mut y),
            }];
            transpose(&Attrs::new(&list), &inputs, &mut outputs).unwrap();
            for (o, &v) in y.iter().enumerate() {
                let out_idx = [
                    o / (ys[1] * ys[2] * ys[3]),
                    o / (ys[2] * ys[3]) % ys[1],
                    o / ys[3] % ys[2],
                    o % ys[3],
                ];
                let mut in_idx = [0usize; 4];
                for (k, &p) in perm.iter().enumerate() {
                    in_idx[p as usize] = out_idx[k];
                }
                let i = ((in_idx[0] * xs[1] + in_idx[1]) * xs[2] + in_idx[2]) * xs[3] + in_idx[3];
                assert_eq!(
                    v.to_bits_for_test(),
                    x[i].to_bits_for_test(),
                    "{xs:?} perm {perm:?} output {o}"
                );
            }
        }};
    }

    /// Bits to compare, so that NaN patterns compare equal to themselves.
    trait Bits {
        fn to_bits_for_test(self) -> u64;
    }
    impl Bits for f32 {
        fn to_bits_for_test(self) -> u64 {
            self.to_bits().into()
        }
    }
    impl Bits for i32 {
        fn to_bits_for_test(self) -> u64 {
            self as u32 as u64
        }
    }
    impl Bits for i64 {
        fn to_bits_for_test(self) -> u64 {
            self as u64
        }
    }
    impl Bits for i8 {
        fn to_bits_for_test(self) -> u64 {
            self as u8 as u64
        }
    }

    /// Every permutation of a 4-D tensor (those keeping the last dimension move whole rows,
    /// those moving it transpose matrices: words in blocks of 16 x 16 and edges, other types in
    /// blocks of 8 x 8) puts each element where the definition says, for `f32`, for `i32` bit
    /// patterns that are NaNs with payloads as `f32` (moved unchanged; both at every level this
    /// CPU has), and for `i64` and `i8`.
    #[test]
    fn every_permutation_moves_each_element_to_its_place() {
        for xs in [
            [2usize, 3, 4, 5],
            [2, 9, 17, 10],
            [1, 20, 33, 18],
            [2, 16, 1, 17],
        ] {
            let len: usize = xs.iter().product();
            let f: Vec<f32> = (0..len).map(|i| i as f32).collect();
            let nan_bits: Vec<i32> = (0..len).map(|i| 0x7fc0_0001 + i as i32).collect();
            let wide: Vec<i64> = (0..len).map(|i| (i as i64) << 33).collect();
            let bytes: Vec<i8> = (0..len).map(|i| (i % 251) as i8).collect();
            let mut perms = Vec::new();
            for a in 0..4 {
                for b in 0..4 {
                    for c in 0..4 {
                        for d in 0..4 {
                            let p = [a, b, c, d];
                            if (0..4).all(|v| p.contains(&v)) {
                                perms.push(p.map(|v| v as i64));
                            }
                        }
                    }
                }
            }
            for perm in perms {
                for level in [Level::Portable, Level::Avx2, Level::Avx512] {
                    if level > detected() {
                        continue;
                    }
                    limit(level);
                    check!(&xs, &perm, &f, F32);
                    check!(&xs, &perm, &nan_bits, I32);
                }
                limit(Level::Avx512);
                check!(&xs, &perm, &f, F32);
                check!(&xs, &perm, &nan_bits, I32);
                check!(&xs, &perm, &wide, I64);
                check!(&xs, &perm, &bytes, I8);
            }
        }
    }
}
