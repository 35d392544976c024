//! Numpy-style multidirectional broadcasting.
//!
//! Shapes are aligned on their last dimension; along each dimension the sizes must be equal or
//! one of them 1, and the result takes the larger. An input is then read through *broadcast
//! strides*: its row-major stride along a dimension it really has, 0 along a dimension where it
//! is 1 (or missing), so one element is reused along the whole output dimension.

use arrayvec::ArrayVec;

use super::error::{KernelError, bail};
use super::tensor::{Dims, MAX_RANK, collect, dims_filled, numel, strides};

/// The most operands [`for_each`] walks at once (the inputs of a variadic Sum, Max, ...).
pub(crate) const MAX_OPERANDS: usize = 16;

/// The broadcast of `shapes`, or an error naming the first incompatible dimension.
pub(crate) fn broadcast_shapes(shapes: &[&[usize]]) -> Result<Dims, KernelError> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    if rank > MAX_RANK {
        bail!("shapes {shapes:?} have rank {rank}, more than the kernels' limit of {MAX_RANK}");
    }
    let mut out = dims_filled(1, rank)?;
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
pub(crate) fn broadcast_strides(shape: &[usize], out_shape: &[usize]) -> Result<Dims, KernelError> {
    if shape.len() > out_shape.len() {
        bail!("shape {shape:?} does not broadcast to {out_shape:?}");
    }
    let offset = out_shape.len() - shape.len();
    let own = strides(shape)?;
    let mut s = dims_filled(0, out_shape.len())?;
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
/// element of input `k` (read through `strides[k]`, one stride per output dimension) that output
/// element `i` uses.
///
/// # Errors
/// More than [`MAX_OPERANDS`] operands, strides whose rank is not the output's, or an output
/// shape of more than [`MAX_RANK`] dimensions or elements.
pub(crate) fn for_each<F: FnMut(usize, &[usize])>(
    out_shape: &[usize],
    strides: &[Dims],
    mut f: F,
) -> Result<(), KernelError> {
    let n_in = strides.len();
    if n_in > MAX_OPERANDS {
        bail!("{n_in} operands, more than the kernels' limit of {MAX_OPERANDS}");
    }
    let rank = out_shape.len();
    if rank > MAX_RANK {
        bail!("shape {out_shape:?} has rank {rank}, more than the kernels' limit of {MAX_RANK}");
    }
    if strides.iter().any(|s| s.len() != rank) {
        bail!("broadcast strides do not have the rank of the output {out_shape:?}");
    }
    let total = numel(out_shape)?;
    if total == 0 {
        return Ok(());
    }
    let mut offsets: ArrayVec<usize, MAX_OPERANDS> = collect((0..n_in).map(|_| 0))?;
    if rank == 0 {
        f(0, &offsets);
        return Ok(());
    }
    let inner = out_shape[rank - 1];
    let mut inner_strides = offsets.clone();
    for (c, s) in inner_strides.iter_mut().zip(strides) {
        *c = s[rank - 1];
    }
    let mut index = dims_filled(0, rank - 1)?;
    let mut current = offsets.clone();
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
                return Ok(());
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
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn shapes_broadcast_from_the_right() {
        assert_eq!(
            &broadcast_shapes(&[&[2, 3, 4], &[4]]).unwrap()[..],
            &[2, 3, 4]
        );
        assert_eq!(
            &broadcast_shapes(&[&[2, 1, 4], &[3, 1]]).unwrap()[..],
            &[2, 3, 4]
        );
        assert_eq!(&broadcast_shapes(&[&[], &[5]]).unwrap()[..], &[5]);
        assert_eq!(&broadcast_shapes(&[&[0, 1], &[1, 3]]).unwrap()[..], &[0, 3]);
        assert!(broadcast_shapes(&[&[2, 3], &[4]]).is_err());
        assert!(broadcast_shapes(&[&[1; 9]]).is_err(), "rank above MAX_RANK");
    }

    #[test]
    fn strides_are_zero_along_broadcast_dimensions() {
        assert_eq!(
            &broadcast_strides(&[3, 1], &[2, 3, 4]).unwrap()[..],
            &[0, 1, 0]
        );
        assert_eq!(
            &broadcast_strides(&[2, 3, 4], &[2, 3, 4]).unwrap()[..],
            &[12, 4, 1]
        );
        assert!(broadcast_strides(&[3], &[2, 4]).is_err());
        assert!(broadcast_strides(&[1, 2, 3], &[2, 3]).is_err());
    }

    #[test]
    fn for_each_visits_every_element_with_its_offsets() {
        let out = [2, 3];
        let s = [
            broadcast_strides(&[2, 1], &out).unwrap(),
            broadcast_strides(&[3], &out).unwrap(),
        ];
        let mut seen = vec![];
        for_each(&out, &s, |i, o| seen.push((i, o[0], o[1]))).unwrap();
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
        })
        .unwrap();
        assert_eq!(count, 1);
        let zeros = dims_filled(0, 3).unwrap();
        for_each(&[2, 0, 3], &[zeros], |_, _| panic!("empty")).unwrap();
    }

    #[test]
    fn for_each_refuses_what_it_cannot_walk() {
        let s = broadcast_strides(&[3], &[2, 3]).unwrap();
        // Strides of another rank than the output.
        assert!(for_each(&[3], core::slice::from_ref(&s), |_, _| {}).is_err());
        // More operands than MAX_OPERANDS.
        let many: Vec<Dims> = (0..=MAX_OPERANDS).map(|_| s.clone()).collect();
        assert!(for_each(&[2, 3], &many, |_, _| {}).is_err());
    }
}
