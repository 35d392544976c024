//! Einsum: products of tensors summed over repeated subscripts (`"bhqd,bhkd->bhqk"`), with
//! implicit outputs (`"ij,jk"`: the subscripts appearing once, sorted), repeated subscripts within
//! one operand (diagonals, `"ii->i"`) and `...` (broadcast batch dimensions), float32.
//!
//! Every output element sums, in row-major order of the summed subscripts (in order of first
//! appearance), the product of the operands' elements in operand order. The sum starts as ONNX
//! Runtime's does: from -0 for one operand (its ReduceSum: a sum of -0s is -0), from +0 for
//! several (its MatMul: a sum of -0 products is +0).

use arrayvec::{ArrayString, ArrayVec};

use super::attrs::Attrs;
use super::error::{KernelError, bail};
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
