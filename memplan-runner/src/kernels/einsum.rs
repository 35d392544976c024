//! Einsum: products of tensors summed over repeated subscripts (`"bhqd,bhkd->bhqk"`), with
//! implicit outputs (`"ij,jk"`: the subscripts appearing once, sorted), repeated subscripts within
//! one operand (diagonals, `"ii->i"`) and `...` (broadcast batch dimensions), float32.
//!
//! Every output element sums, in row-major order of the summed subscripts (in order of first
//! appearance), the product of the operands' elements in operand order.

use super::attrs::Attrs;
use super::error::{KernelError, bail};
use super::tensor::{Input, Output, expect_shape, output, typed};

/// The subscripts of one operand, `...` expanded into `'0'`, `'1'`, ... (right-aligned, so the
/// ellipsis dimensions of all operands line up as in broadcasting).
fn expand_term(
    term: &str,
    rank: usize,
    ellipsis_rank: &mut usize,
) -> Result<Vec<char>, KernelError> {
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
    let mut out = Vec::with_capacity(rank);
    let mut rest = term;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("...") {
            out.extend((0..ell).map(|k| ellipsis_label(ell - k)));
            rest = r;
        } else {
            let c = rest.chars().next().expect("non-empty");
            out.push(c);
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
    attrs: &Attrs,
    inputs: &[Input<'_>],
    outputs: &mut [Output<'_>],
) -> Result<(), KernelError> {
    let equation: String = attrs
        .str("equation", "")?
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let (lhs, rhs) = match equation.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (equation.as_str(), None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != inputs.len() || inputs.is_empty() {
        bail!(
            "equation {equation:?} has {} operands, the node {}",
            terms.len(),
            inputs.len()
        );
    }
    let operands = (0..inputs.len())
        .map(|i| typed::<f32>(inputs, i))
        .collect::<Result<Vec<_>, _>>()?;
    let mut ellipsis_rank = 0;
    let labels = terms
        .iter()
        .zip(&operands)
        .map(|(t, (s, _))| expand_term(t, s.len(), &mut ellipsis_rank))
        .collect::<Result<Vec<_>, _>>()?;
    if ellipsis_rank > 9 {
        bail!("`...` spans more than 9 dimensions");
    }
    // Size of every label (ellipsis labels broadcast: 1 against n).
    let mut sizes: Vec<(char, usize)> = Vec::new();
    for (ls, (shape, _)) in labels.iter().zip(&operands) {
        for (&l, &n) in ls.iter().zip(shape.iter()) {
            match sizes.iter_mut().find(|(x, _)| *x == l) {
                None => sizes.push((l, n)),
                Some((_, m)) if *m == n => {}
                Some((_, m)) if l.is_ascii_digit() && (*m == 1 || n == 1) => *m = (*m).max(n),
                Some((_, m)) => bail!("subscript {l:?} has sizes {m} and {n}"),
            }
        }
    }
    let out_labels: Vec<char> = match rhs {
        Some(r) => {
            let mut e = 0;
            let rank = r.chars().filter(char::is_ascii_alphabetic).count()
                + if r.contains("...") { ellipsis_rank } else { 0 };
            expand_term(r, rank, &mut e)?
        }
        None => {
            let mut out: Vec<char> = (0..ellipsis_rank)
                .map(|k| ellipsis_label(ellipsis_rank - k))
                .collect();
            let mut once: Vec<char> = sizes
                .iter()
                .map(|&(l, _)| l)
                .filter(|l| {
                    l.is_ascii_alphabetic()
                        && labels.iter().flatten().filter(|x| *x == l).count() == 1
                })
                .collect();
            once.sort_unstable();
            out.extend(once);
            out
        }
    };
    let size_of = |l: char| sizes.iter().find(|(x, _)| *x == l).map(|&(_, n)| n);
    let mut want = Vec::with_capacity(out_labels.len());
    for (k, &l) in out_labels.iter().enumerate() {
        if out_labels[..k].contains(&l) {
            bail!("output subscript {l:?} repeats");
        }
        match size_of(l) {
            Some(n) => want.push(n),
            None => bail!("output subscript {l:?} is not in any operand"),
        }
    }
    let summed: Vec<char> = sizes
        .iter()
        .map(|&(l, _)| l)
        .filter(|l| !out_labels.contains(l))
        .collect();
    let all: Vec<char> = out_labels.iter().chain(&summed).copied().collect();
    let all_sizes: Vec<usize> = all
        .iter()
        .map(|&l| size_of(l).expect("every label has a size"))
        .collect();
    // Per operand, its stride along each label of `all` (summed for repeated subscripts, 0 where
    // absent or broadcast).
    let op_strides: Vec<Vec<usize>> = labels
        .iter()
        .zip(&operands)
        .map(|(ls, (shape, _))| {
            let own = super::tensor::strides(shape);
            all.iter()
                .map(|&l| {
                    ls.iter()
                        .enumerate()
                        .filter(|&(d, &x)| x == l && shape[d] != 1)
                        .map(|(d, _)| own[d])
                        .sum()
                })
                .collect()
        })
        .collect();
    let (ys, y) = output::<f32>(outputs, 0)?;
    expect_shape(0, ys, &want)?;
    let n_out = out_labels.len();
    let inner: usize = all_sizes[n_out..].iter().product();
    if inner.saturating_mul(y.len()) > 1 << 34 {
        bail!(
            "einsum of {} products is too large",
            inner.saturating_mul(y.len())
        );
    }
    let mut index = vec![0usize; all.len()];
    for v in y.iter_mut() {
        let mut acc = 0.0f32;
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
