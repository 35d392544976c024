//! Transpose: output dimension `i` is input dimension `perm[i]` (default: reversed).

use super::attrs::Attrs;
use super::broadcast::for_each;
use super::error::{KernelError, bail};
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
            return for_each(&outer, &[yst, s], |_, o| {
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
    use crate::tensor::{Data, DataMut};
    use std::vec;
    use std::vec::Vec;

    /// Every permutation of a 4-D tensor (those keeping the last dimension move whole rows,
    /// those moving it transpose matrices in blocks of 8 x 8 and edges) puts each element where
    /// the definition says.
    #[test]
    fn every_permutation_moves_each_element_to_its_place() {
        for xs in [[2usize, 3, 4, 5], [2, 9, 17, 10]] {
            let len: usize = xs.iter().product();
            let x: Vec<f32> = (0..len).map(|i| i as f32).collect();
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
                let ys: Vec<usize> = perm.iter().map(|&p| xs[p as usize]).collect();
                let mut y = vec![0.0f32; len];
                let list = [("perm", Attr::Ints(&perm))];
                let inputs = [Input::Value {
                    shape: &xs,
                    data: Data::F32(&x),
                }];
                let mut outputs = [Output {
                    shape: &ys,
                    data: DataMut::F32(&mut y),
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
                    let i =
                        ((in_idx[0] * xs[1] + in_idx[1]) * xs[2] + in_idx[2]) * xs[3] + in_idx[3];
                    assert_eq!(v, x[i], "{xs:?} perm {perm:?} output {o}");
                }
            }
        }
    }
}
