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
        for_each(ys, &[s], |i, o| y[i] = x[o[0]])
    }
    dispatch!(
        out_dtype(outputs, 0)?,
        typed_transpose(attrs, inputs, outputs)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Attr;
    use crate::tensor::{Data, DataMut};
    use std::vec;
    use std::vec::Vec;

    /// Every permutation of a 4-D tensor (those keeping the last dimension move whole rows)
    /// puts each element where the definition says.
    #[test]
    fn every_permutation_moves_each_element_to_its_place() {
        let xs = [2usize, 3, 4, 5];
        let x: Vec<f32> = (0..120).map(|i| i as f32).collect();
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
            let mut y = vec![0.0f32; 120];
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
                let i = ((in_idx[0] * 3 + in_idx[1]) * 4 + in_idx[2]) * 5 + in_idx[3];
                assert_eq!(v, x[i], "perm {perm:?} output {o}");
            }
        }
    }
}
