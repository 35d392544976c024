//! Numpy-style multidirectional broadcasting.
//!
//! Shapes are aligned on their last dimension; along each dimension the sizes must be equal or
//! one of them 1, and the result takes the larger. An input is then read through *broadcast
//! strides*: its row-major stride along a dimension it really has, 0 along a dimension where it
//! is 1 (or missing), so one element is reused along the whole output dimension.

use super::error::{KernelError, bail};
use super::tensor::strides;

/// The broadcast of `shapes`, or an error naming the first incompatible dimension.
pub(crate) fn broadcast_shapes(shapes: &[&[usize]]) -> Result<Vec<usize>, KernelError> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; rank];
    for shape in shapes {
        let offset = rank - shape.len();
        for (d, &n) in shape.iter().enumerate() {
            let o = &mut out[offset + d];
            if *o == 1 {
                *o = n;
            } else if n != 1 && n != *o {
                bail!("shapes {shapes:?} do not broadcast");
            }
        }
    }
    Ok(out)
}

/// The strides to read a tensor of `shape` broadcast to `out_shape` (one per output dimension),
/// or an error if it does not broadcast.
pub(crate) fn broadcast_strides(
    shape: &[usize],
    out_shape: &[usize],
) -> Result<Vec<usize>, KernelError> {
    if shape.len() > out_shape.len() {
        bail!("shape {shape:?} does not broadcast to {out_shape:?}");
    }
    let offset = out_shape.len() - shape.len();
    let own = strides(shape);
    let mut s = vec![0; out_shape.len()];
    for (d, &n) in shape.iter().enumerate() {
        if n == out_shape[offset + d] {
            s[offset + d] = if n == 1 { 0 } else { own[d] };
        } else if n != 1 {
            bail!("shape {shape:?} does not broadcast to {out_shape:?}");
        }
    }
    Ok(s)
}

/// Calls `f(i, offsets)` for every output element `i` in row-major order, `offsets[k]` being the
/// element of input `k` (read through `strides[k]`) that output element `i` uses.
pub(crate) fn for_each<F: FnMut(usize, &[usize])>(
    out_shape: &[usize],
    strides: &[Vec<usize>],
    mut f: F,
) {
    let n_in = strides.len();
    let total: usize = out_shape.iter().product();
    if total == 0 {
        return;
    }
    let rank = out_shape.len();
    let mut offsets = vec![0usize; n_in];
    if rank == 0 {
        f(0, &offsets);
        return;
    }
    let inner = out_shape[rank - 1];
    let inner_strides: Vec<usize> = strides.iter().map(|s| s[rank - 1]).collect();
    let mut index = vec![0usize; rank - 1];
    let mut current = vec![0usize; n_in];
    let mut i = 0;
    loop {
        current.copy_from_slice(&offsets);
        for _ in 0..inner {
            f(i, &current);
            i += 1;
            for (c, s) in current.iter_mut().zip(&inner_strides) {
                *c += s;
            }
        }
        // Advance the odometer over the outer dimensions.
        let mut d = rank - 1;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            for (o, s) in offsets.iter_mut().zip(strides) {
                *o += s[d];
            }
            if index[d] < out_shape[d] {
                break;
            }
            for (o, s) in offsets.iter_mut().zip(strides) {
                *o -= s[d] * out_shape[d];
            }
            index[d] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_broadcast_from_the_right() {
        assert_eq!(
            broadcast_shapes(&[&[2, 3, 4], &[4]]).unwrap(),
            vec![2, 3, 4]
        );
        assert_eq!(
            broadcast_shapes(&[&[2, 1, 4], &[3, 1]]).unwrap(),
            vec![2, 3, 4]
        );
        assert_eq!(broadcast_shapes(&[&[], &[5]]).unwrap(), vec![5]);
        assert_eq!(broadcast_shapes(&[&[0, 1], &[1, 3]]).unwrap(), vec![0, 3]);
        assert!(broadcast_shapes(&[&[2, 3], &[4]]).is_err());
    }

    #[test]
    fn strides_are_zero_along_broadcast_dimensions() {
        assert_eq!(
            broadcast_strides(&[3, 1], &[2, 3, 4]).unwrap(),
            vec![0, 1, 0]
        );
        assert_eq!(
            broadcast_strides(&[2, 3, 4], &[2, 3, 4]).unwrap(),
            vec![12, 4, 1]
        );
        assert!(broadcast_strides(&[3], &[2, 4]).is_err());
        assert!(broadcast_strides(&[1, 2, 3], &[2, 3]).is_err());
    }

    #[test]
    fn for_each_visits_every_element_with_its_offsets() {
        let out = [2, 3];
        let s = vec![
            broadcast_strides(&[2, 1], &out).unwrap(),
            broadcast_strides(&[3], &out).unwrap(),
        ];
        let mut seen = vec![];
        for_each(&out, &s, |i, o| seen.push((i, o[0], o[1])));
        assert_eq!(
            seen,
            vec![
                (0, 0, 0),
                (1, 0, 1),
                (2, 0, 2),
                (3, 1, 0),
                (4, 1, 1),
                (5, 1, 2)
            ]
        );
        let mut count = 0;
        for_each(&[], &s[..0], |i, _| {
            assert_eq!(i, 0);
            count += 1;
        });
        assert_eq!(count, 1);
        for_each(&[2, 0, 3], &[vec![0, 0, 0]], |_, _| panic!("empty"));
    }
}
