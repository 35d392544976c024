//! Einsum: products of tensors summed over repeated subscripts (`"bhqd,bhkd->bhqk"`), with
//! implicit outputs (`"ij,jk"`: the subscripts appearing once, sorted), repeated subscripts within
//! one operand (diagonals, `"ii->i"`) and `...` (broadcast batch dimensions), float32.
//!
//! Every output element sums, in row-major order of the summed subscripts (in order of first
//! appearance), the product of the operands' elements in operand order. The sum starts as ONNX
//! Runtime's does: from -0 for one operand (its ReduceSum: a sum of -0s is -0), from +0 for
//! several (its MatMul: a sum of -0 products is +0).
//!
//! Two operands that form a batched matrix product (one summed subscript, the last of the first
//! operand's rows and of the output; one subscript of the second operand's columns, the last
//! of the output; the first operand's other output subscripts contiguous in both; no
//! broadcasting: `"bhqd,bhkd->bhqk"`, `"bhqk,bhkd->bhqd"`, `"bnd,dh->bnh"`) run as the matrix
//! product's ([`crate::gemm`]) one batch at a time, given the scratch for a panel of the
//! second operand ([`scratch_len`]): each sum then a chain of fused multiply-adds in the same
//! order (other bits than the product-then-add loop, within rounding).

use arrayvec::{ArrayString, ArrayVec};

use super::activation::Activation;
use super::attrs::Attrs;
use super::error::{KernelError, bail};
use super::gemm::{self, A, B, Bias, Product, RowMajor, Transposed};
use super::tensor::{
    Dims, Input, MAX_RANK, Output, collect, expect_shape, numel, output, push, strides,
    try_collect, typed,
};

/// The most operands of one Einsum.
const MAX_TERMS: usize = 8;

/// The most distinct subscripts (letters and `...` dimensions) of one Einsum.
const MAX_LABELS: usize = 2 * MAX_RANK;

/// The longest equation, whitespace left out.
const MAX_EQUATION: usize = 128;

/// The subscripts of one tensor, one per dimension.
type Labels = ArrayVec<char, MAX_RANK>;

/// The subscripts of one operand, `...` expanded into `'0'`, `'1'`, ... (right-aligned, so the
/// ellipsis dimensions of all operands line up as in broadcasting).
fn expand_term(term: &str, rank: usize, ellipsis_rank: &mut usize) -> Result<Labels, KernelError> {
    let letters: usize = term.chars().filter(char::is_ascii_alphabetic).count();
    let has_ellipsis = term.contains("...");
    if term.chars().any(|c| !c.is_ascii_alphabetic() && c != '.')
        || (term.contains('.') && !has_ellipsis)
        || term.matches("...").count() > 1
    {
        bail!("subscripts {term:?} are not letters with at most one `...`");
    }
    let ell = if has_ellipsis {
        match rank.checked_sub(letters) {
            Some(e) => e,
            None => bail!("subscripts {term:?} name more dimensions than rank {rank}"),
        }
    } else {
        if letters != rank {
            bail!("subscripts {term:?} do not match rank {rank}");
        }
        0
    };
    *ellipsis_rank = (*ellipsis_rank).max(ell);
    let mut out = Labels::new();
    let mut rest = term;
    while let Some(c) = rest.chars().next() {
        if let Some(r) = rest.strip_prefix("...") {
            for k in 0..ell {
                push(&mut out, ellipsis_label(ell - k))?;
            }
            rest = r;
        } else {
            push(&mut out, c)?;
            rest = &rest[c.len_utf8()..];
        }
    }
    Ok(out)
}

/// The label of the ellipsis dimension `k` places from the right (1-based).
fn ellipsis_label(k: usize) -> char {
    char::from_digit(u32::try_from(k % 10).unwrap_or(0), 10).unwrap_or('0')
}

/// Einsum.
pub(crate) fn einsum(
    attrs: &Attrs<'_>,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
    scratch: &mut [u64],
) -> Result<(), KernelError> {
    let mut equation = ArrayString::<MAX_EQUATION>::new();
    for c in attrs
        .str("equation", "")?
        .chars()
        .filter(|c| !c.is_whitespace())
    {
        if equation.try_push(c).is_err() {
            bail!("the equation is longer than {MAX_EQUATION} characters");
        }
    }
    let (lhs, rhs) = match equation.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (equation.as_str(), None),
    };
    let n_terms = lhs.split(',').count();
    if n_terms != inputs.len() || inputs.is_empty() {
        bail!(
            "equation {equation:?} has {n_terms} operands, the node {}",
            inputs.len()
        );
    }
    if n_terms > MAX_TERMS {
        bail!("{n_terms} operands, more than the kernels' limit of {MAX_TERMS}");
    }
    let terms: ArrayVec<&str, MAX_TERMS> = collect(lhs.split(','))?;
    let operands: ArrayVec<(&[usize], &[f32]), MAX_TERMS> =
        try_collect((0..inputs.len()).map(|i| typed::<f32>(inputs, i)))?;
    let mut ellipsis_rank = 0;
    let labels: ArrayVec<Labels, MAX_TERMS> = try_collect(
        terms
            .iter()
            .zip(&operands)
            .map(|(t, (s, _))| expand_term(t, s.len(), &mut ellipsis_rank)),
    )?;
    if ellipsis_rank > 9 {
        bail!("`...` spans more than 9 dimensions");
    }
    // Size of every label (ellipsis labels broadcast: 1 against n).
    let mut sizes: ArrayVec<(char, usize), MAX_LABELS> = ArrayVec::new();
    for (ls, (shape, _)) in labels.iter().zip(&operands) {
        for (&l, &n) in ls.iter().zip(shape.iter()) {
            match sizes.iter_mut().find(|(x, _)| *x == l) {
                None => push(&mut sizes, (l, n))?,
                Some((_, m)) if *m == n => {}
                Some((_, m)) if l.is_ascii_digit() && (*m == 1 || n == 1) => *m = (*m).max(n),
                Some((_, m)) => bail!("subscript {l:?} has sizes {m} and {n}"),
            }
        }
    }
    let out_labels: Labels = match rhs {
        Some(r) => {
            let mut e = 0;
            let rank = r.chars().filter(char::is_ascii_alphabetic).count()
                + if r.contains("...") { ellipsis_rank } else { 0 };
            expand_term(r, rank, &mut e)?
        }
        None => {
            let mut out: Labels =
                collect((0..ellipsis_rank).map(|k| ellipsis_label(ellipsis_rank - k)))?;
            let mut once: ArrayVec<char, MAX_LABELS> =
                collect(sizes.iter().map(|&(l, _)| l).filter(|l| {
                    l.is_ascii_alphabetic()
                        && labels.iter().flatten().filter(|x| *x == l).count() == 1
                }))?;
            // Distinct labels: no tie to break.
            once.sort_unstable();
            for l in once {
                push(&mut out, l)?;
            }
            out
        }
    };
    let size_of = |l: char| sizes.iter().find(|(x, _)| *x == l).map(|&(_, n)| n);
    let mut want = Dims::new();
    for (k, &l) in out_labels.iter().enumerate() {
        if out_labels[..k].contains(&l) {
            bail!("output subscript {l:?} repeats");
        }
        match size_of(l) {
            Some(n) => push(&mut want, n)?,
            None => bail!("output subscript {l:?} is not in any operand"),
        }
    }
    let summed = sizes
        .iter()
        .map(|&(l, _)| l)
        .filter(|l| !out_labels.contains(l));
    let all: ArrayVec<char, MAX_LABELS> = collect(out_labels.iter().copied().chain(summed))?;
    let mut all_sizes: ArrayVec<usize, MAX_LABELS> = ArrayVec::new();
    for &l in &all {
        match size_of(l) {
            Some(n) => push(&mut all_sizes, n)?,
            None => bail!("subscript {l:?} has no size"),
        }
    }
    // Per operand, its stride along each label of `all` (summed for repeated subscripts, 0 where
    // absent or broadcast).
    let mut op_strides: ArrayVec<ArrayVec<usize, MAX_LABELS>, MAX_TERMS> = ArrayVec::new();
    for (ls, (shape, _)) in labels.iter().zip(&operands) {
        let own = strides(shape)?;
        let st = collect(all.iter().map(|&l| {
            ls.iter()
                .enumerate()
                .filter(|&(d, &x)| x == l && shape[d] != 1)
                .map(|(d, _)| own[d])
                .sum()
        }))?;
        push(&mut op_strides, st)?;
    }
    let (ys, y) = output::<f32>(outputs, 0)?;
    expect_shape(0, ys, &want)?;
    if let Some(plan) = Products::of(&labels, &operands, &out_labels, &want, &size_of)? {
        let buf = gemm::panel_buffer(scratch);
        if !buf.is_empty() {
            return plan.run(&operands, y, buf);
        }
    }
    let n_out = out_labels.len();
    let inner = numel(&all_sizes[n_out..])?;
    let products = u64::try_from(inner)
        .unwrap_or(u64::MAX)
        .saturating_mul(u64::try_from(y.len()).unwrap_or(u64::MAX));
    if products > 1 << 34 {
        bail!("einsum of {products} products is too large");
    }
    let mut index: ArrayVec<usize, MAX_LABELS> = collect(all.iter().map(|_| 0))?;
    let zero = if operands.len() == 1 { -0.0f32 } else { 0.0 };
    for v in y.iter_mut() {
        let mut acc = zero;
        for s in index[n_out..].iter_mut() {
            *s = 0;
        }
        for _ in 0..inner {
            let mut p = 1.0f32;
            for ((_, data), st) in operands.iter().zip(&op_strides) {
                let off: usize = index.iter().zip(st).map(|(i, s)| i * s).sum();
                p *= data[off];
            }
            acc += p;
            for d in (n_out..all.len()).rev() {
                index[d] += 1;
                if index[d] < all_sizes[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        *v = acc;
        for d in (0..n_out).rev() {
            index[d] += 1;
            if index[d] < all_sizes[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Ok(())
}

/// Scratch words an Einsum of two operands may use: a panel of the second operand for the
/// matrix product, as deep as the longest dimension (at most 256 rows, 16 KiB).
pub(crate) fn scratch_len(input_shapes: &[Option<&[usize]>]) -> usize {
    match input_shapes {
        [Some(a), Some(b)] => {
            let deepest = a.iter().chain(b.iter()).copied().max().unwrap_or(1);
            gemm::scratch_words(deepest, true)
        }
        _ => 0,
    }
}

/// A two-operand Einsum as batched matrix products: `C[batch][i][j] = sum_k A[batch][i][k]
/// B[batch][k][j]`, the rows `i` of `A` and `C` one or more contiguous subscripts.
struct Products {
    /// Sizes and strides (in `A`, `B`, `C`) of the batch subscripts.
    batch: ArrayVec<(usize, [usize; 3]), MAX_LABELS>,
    m: usize,
    n: usize,
    k: usize,
    lda: usize,
    ldc: usize,
    /// `B`'s stride along `k` (row-major `B`) or along `j` (`B` stored transposed).
    ldb: usize,
    b_transposed: bool,
}

impl Products {
    /// The products for the operands' `labels`, if the equation is one.
    fn of(
        labels: &[Labels],
        operands: &[(&[usize], &[f32])],
        out_labels: &Labels,
        out_shape: &[usize],
        size_of: &dyn Fn(char) -> Option<usize>,
    ) -> Result<Option<Products>, KernelError> {
        let ([la, lb], [(sa, _), (sb, _)]) = (labels, operands) else {
            return Ok(None);
        };
        // No repeated subscript in an operand, no broadcast dimension.
        for (ls, shape) in [(la, sa), (lb, sb)] {
            for (d, &l) in ls.iter().enumerate() {
                if ls[..d].contains(&l) || size_of(l) != Some(shape[d]) {
                    return Ok(None);
                }
            }
        }
        let (st_a, st_b, st_c) = (strides(sa)?, strides(sb)?, strides(out_shape)?);
        let stride =
            |ls: &Labels, st: &Dims, l: char| ls.iter().position(|&x| x == l).map(|d| st[d]);
        let (mut rows, mut summed, mut cols) = (Labels::new(), Labels::new(), Labels::new());
        let mut batch: ArrayVec<(char, [usize; 3]), MAX_LABELS> = ArrayVec::new();
        for &l in la.iter().chain(lb.iter()) {
            let (in_a, in_b, in_c) = (la.contains(&l), lb.contains(&l), out_labels.contains(&l));
            let list = match (in_a, in_b, in_c) {
                (true, true, true) => {
                    if batch.iter().any(|&(x, _)| x == l) {
                        continue;
                    }
                    let (Some(a), Some(b), Some(c)) = (
                        stride(la, &st_a, l),
                        stride(lb, &st_b, l),
                        stride(out_labels, &st_c, l),
                    ) else {
                        return Ok(None);
                    };
                    push(&mut batch, (l, [a, b, c]))?;
                    continue;
                }
                (true, false, true) => &mut rows,
                (false, true, true) => &mut cols,
                (true, true, false) => &mut summed,
                _ => return Ok(None),
            };
            if !list.contains(&l) {
                push(list, l)?;
            }
        }
        let ([k], [j]) = (&summed[..], &cols[..]) else {
            return Ok(None);
        };
        let (k, j) = (*k, *j);
        // The rows in the output's order, each the next's size times its stride in `A` and `C`.
        let rows: Labels = collect(out_labels.iter().copied().filter(|l| rows.contains(l)))?;
        let Some(&last) = rows.last() else {
            return Ok(None);
        };
        for pair in rows.windows(2) {
            let size = size_of(pair[1]).unwrap_or(0);
            for (ls, st) in [(la, &st_a), (out_labels, &st_c)] {
                let (Some(outer), Some(inner)) = (stride(ls, st, pair[0]), stride(ls, st, pair[1]))
                else {
                    return Ok(None);
                };
                if outer != inner * size {
                    return Ok(None);
                }
            }
        }
        let (Some(lda), Some(ldc), Some(1), Some(1)) = (
            stride(la, &st_a, last),
            stride(out_labels, &st_c, last),
            stride(la, &st_a, k),
            stride(out_labels, &st_c, j),
        ) else {
            return Ok(None);
        };
        let (Some(bk), Some(bj)) = (stride(lb, &st_b, k), stride(lb, &st_b, j)) else {
            return Ok(None);
        };
        let (ldb, b_transposed) = match (bk, bj) {
            (_, 1) => (bk, false),
            (1, _) => (bj, true),
            _ => return Ok(None),
        };
        let m = rows.iter().map(|&l| size_of(l).unwrap_or(0)).product();
        Ok(Some(Products {
            batch: collect(batch.iter().map(|&(l, st)| (size_of(l).unwrap_or(0), st)))?,
            m,
            n: size_of(j).unwrap_or(0),
            k: size_of(k).unwrap_or(0),
            lda,
            ldc,
            ldb,
            b_transposed,
        }))
    }

    /// The products into `y`, a panel of `B` at a time in `buf`.
    fn run(
        &self,
        operands: &[(&[usize], &[f32])],
        y: &mut [f32],
        buf: &mut [gemm::Row],
    ) -> Result<(), KernelError> {
        let ([(_, a), (_, b)], false) = (operands, y.is_empty()) else {
            return Ok(());
        };
        let count: usize = self.batch.iter().map(|&(n, _)| n).product();
        let mut index: ArrayVec<usize, MAX_LABELS> = collect(self.batch.iter().map(|_| 0))?;
        for _ in 0..count {
            let at = |o: usize| {
                index
                    .iter()
                    .zip(&self.batch)
                    .map(|(&i, &(_, st))| i * st[o])
                    .sum::<usize>()
            };
            let (oa, ob, oc) = (at(0), at(1), at(2));
            let mut p = Product {
                m: self.m,
                n: self.n,
                k: self.k,
                c: &mut y[oc..],
                ldc: self.ldc,
                bias: Bias::None,
                act: Activation::None,
            };
            let a = A::Rows {
                a: &a[oa..],
                lda: self.lda,
            };
            if self.b_transposed {
                let packer = Transposed {
                    b: &b[ob..],
                    ld: self.ldb,
                };
                gemm::product(&mut p, a, B::Pack(&packer), buf)?;
            } else {
                let packer = RowMajor {
                    b: &b[ob..],
                    ld: self.ldb,
                };
                gemm::product(&mut p, a, B::Pack(&packer), buf)?;
            }
            for d in (0..index.len()).rev() {
                index[d] += 1;
                if index[d] < self.batch[d].0 {
                    break;
                }
                index[d] = 0;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attrs::Attr;
    use crate::tensor::{Data, DataMut};
    use crate::test_values::values;
    use std::vec;
    use std::vec::Vec;

    /// The Einsum of `equation` on two operands, with `scratch` words (none: the generic loop).
    fn run(equation: &str, sa: &[usize], sb: &[usize], sy: &[usize], scratch: usize) -> Vec<f32> {
        let (a, b) = (
            values(sa.iter().product(), 1),
            values(sb.iter().product(), 2),
        );
        let list = [("equation", Attr::Str(equation))];
        let attrs = Attrs::new(&list);
        let inputs = [
            Input::Value {
                shape: sa,
                data: Data::F32(&a),
            },
            Input::Value {
                shape: sb,
                data: Data::F32(&b),
            },
        ];
        let mut y = vec![f32::NAN; sy.iter().product()];
        let mut outputs = [Output {
            shape: sy,
            data: DataMut::F32(&mut y),
        }];
        let mut scratch = vec![0u64; scratch];
        einsum(&attrs, &inputs, &mut outputs, &mut scratch).expect("runs");
        y
    }

    /// An equation, its operands' and output's shapes, whether it is a matrix product.
    type Case<'a> = (&'a str, &'a [usize], &'a [usize], &'a [usize], bool);

    /// Equations that are batched matrix products run as the product (with the scratch
    /// [`scratch_len`] gives) and equal the generic loop within rounding; the others (and
    /// every equation without scratch) take the loop.
    #[test]
    fn matrix_products_equal_the_loop() {
        let cases: &[Case<'_>] = &[
            (
                "bhqd,bhkd->bhqk",
                &[2, 3, 17, 64],
                &[2, 3, 20, 64],
                &[2, 3, 17, 20],
                true,
            ),
            (
                "bhqk,bhkd->bhqd",
                &[2, 3, 17, 20],
                &[2, 3, 20, 40],
                &[2, 3, 17, 40],
                true,
            ),
            ("bnd,dh->bnh", &[2, 9, 300], &[300, 33], &[2, 9, 33], true),
            (
                "...ij,jk->...ik",
                &[2, 3, 4, 5],
                &[5, 6],
                &[2, 3, 4, 6],
                true,
            ),
            ("ij,jk", &[7, 0], &[0, 5], &[7, 5], true),
            (
                "hbqd,bhkd->bhqk",
                &[3, 2, 5, 8],
                &[2, 3, 6, 8],
                &[2, 3, 5, 6],
                true,
            ),
            ("bqd,bkd->qbk", &[2, 5, 8], &[2, 6, 8], &[5, 2, 6], true),
            // Rows of two subscripts in another order, a summed subscript not last, a
            // broadcast batch: the loop.
            ("bnd,dh->nbh", &[2, 9, 30], &[30, 33], &[9, 2, 33], false),
            ("bdq,bkd->bqk", &[2, 8, 5], &[2, 6, 8], &[2, 5, 6], false),
            (
                "...ij,...jk->...ik",
                &[2, 1, 4, 5],
                &[2, 3, 5, 6],
                &[2, 3, 4, 6],
                false,
            ),
        ];
        for &(equation, sa, sb, sy, product) in cases {
            let words = scratch_len(&[Some(sa), Some(sb)]);
            assert!(words > 0);
            let generic = run(equation, sa, sb, sy, 0);
            let fast = run(equation, sa, sb, sy, words);
            let mut same_bits = true;
            for (i, (g, f)) in generic.iter().zip(&fast).enumerate() {
                assert!(
                    (g - f).abs() <= 1e-5 * (1.0 + g.abs()),
                    "{equation}: element {i}: loop {g}, product {f}"
                );
                same_bits &= g.to_bits() == f.to_bits();
            }
            // The product's fused multiply-adds round differently: other bits somewhere, unless
            // the loop ran both times.
            let summed = sa.iter().product::<usize>() > 0 && sy.iter().product::<usize>() > 0;
            assert_eq!(!same_bits, product && summed, "{equation}");
        }
    }
}
