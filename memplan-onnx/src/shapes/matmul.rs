//! Matrix products: `Gemm` (and `com.microsoft`'s `QGemm`), numpy `matmul` with its 1-D rules,
//! and `Einsum`.

use std::collections::BTreeMap;

use super::node::{Info, Node, Outputs, broadcast, one};

impl Node<'_> {
    pub(super) fn gemm(&self, a: &Info, b: &Info, t: i32) -> Outputs {
        if a.rank() != 2 || b.rank() != 2 {
            return Err(format!(
                "A {:?} and B {:?} must both have rank 2",
                a.dims, b.dims
            ));
        }
        let (m, ka) = if self.int("transA", 0) != 0 {
            (a.dims[1], a.dims[0])
        } else {
            (a.dims[0], a.dims[1])
        };
        let (kb, n) = if self.int("transB", 0) != 0 {
            (b.dims[1], b.dims[0])
        } else {
            (b.dims[0], b.dims[1])
        };
        if ka != kb {
            return Err(format!(
                "A {:?} and B {:?} do not multiply (transA, transB applied)",
                a.dims, b.dims
            ));
        }
        one(Info::new(t, vec![m, n]))
    }

    pub(super) fn einsum(&self) -> Outputs {
        let equation: String = self
            .text("equation", "")
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        if !equation.is_ascii() {
            return Err(format!("equation {equation:?} is not ASCII"));
        }
        let (lhs, rhs) = match equation.split_once("->") {
            Some((l, r)) => (l, Some(r)),
            None => (equation.as_str(), None),
        };
        let terms: Vec<&str> = lhs.split(',').collect();
        let ins: Vec<&Info> = self.ins.iter().flatten().copied().collect();
        if terms.len() != ins.len() {
            return Err(format!(
                "equation {equation:?} has {} operands, the node {}",
                terms.len(),
                ins.len()
            ));
        }
        let mut letters: BTreeMap<char, u64> = BTreeMap::new();
        let mut counts: BTreeMap<char, usize> = BTreeMap::new();
        let mut ellipsis: Vec<&[u64]> = Vec::new();
        for (term, info) in terms.iter().zip(&ins) {
            let (before, after) = match term.split_once("...") {
                Some((b, a)) => (b, Some(a)),
                None => (*term, None),
            };
            let named = before.len() + after.map_or(0, str::len);
            if named > info.rank() || (after.is_none() && named != info.rank()) {
                return Err(format!(
                    "term {term:?} does not fit an operand of shape {:?}",
                    info.dims
                ));
            }
            let ell = info.rank() - named;
            let mut axes: Vec<(char, u64)> =
                before.chars().zip(info.dims.iter().copied()).collect();
            if let Some(after) = after {
                ellipsis.push(&info.dims[before.len()..before.len() + ell]);
                axes.extend(
                    after
                        .chars()
                        .zip(info.dims[before.len() + ell..].iter().copied()),
                );
            }
            for (c, d) in axes {
                *counts.entry(c).or_default() += 1;
                let entry = letters.entry(c).or_insert(d);
                if *entry == 1 {
                    *entry = d;
                } else if d != 1 && *entry != d {
                    return Err(format!("label {c:?} has sizes {entry} and {d}"));
                }
            }
        }
        let ell = broadcast(&ellipsis)?;
        let dims: Vec<u64> = match rhs {
            Some(rhs) => {
                let (before, after) = match rhs.split_once("...") {
                    Some((b, a)) => (b, Some(a)),
                    None => (rhs, None),
                };
                let label = |c: char| {
                    letters
                        .get(&c)
                        .copied()
                        .ok_or_else(|| format!("output label {c:?} is not an input's"))
                };
                let mut dims = before
                    .chars()
                    .map(label)
                    .collect::<Result<Vec<u64>, String>>()?;
                if let Some(after) = after {
                    dims.extend(&ell);
                    dims.extend(
                        after
                            .chars()
                            .map(label)
                            .collect::<Result<Vec<u64>, String>>()?,
                    );
                }
                dims
            }
            None => {
                let mut dims = ell;
                dims.extend(
                    letters
                        .iter()
                        .filter(|(c, _)| counts[c] == 1)
                        .map(|(_, &d)| d),
                );
                dims
            }
        };
        one(Info::new(ins[0].elem_type, dims))
    }
}

/// MatMul's output shape: numpy `matmul` (batch dimensions broadcast; a 1-D first operand is a
/// row `[1, K]`, a 1-D second a column `[K, 1]`, and the added axis is removed again).
pub(crate) fn matmul(a: &[u64], b: &[u64]) -> Result<Vec<u64>, String> {
    if a.is_empty() || b.is_empty() {
        return Err(format!("MatMul of {a:?} and {b:?}: an operand is a scalar"));
    }
    let a2: Vec<u64> = if a.len() == 1 {
        vec![1, a[0]]
    } else {
        a.to_vec()
    };
    let b2: Vec<u64> = if b.len() == 1 {
        vec![b[0], 1]
    } else {
        b.to_vec()
    };
    let (m, k) = (a2[a2.len() - 2], a2[a2.len() - 1]);
    let (kb, n) = (b2[b2.len() - 2], b2[b2.len() - 1]);
    if k != kb {
        return Err(format!(
            "MatMul of {a:?} and {b:?}: the inner dimensions {k} and {kb} differ"
        ));
    }
    let mut out = broadcast(&[&a2[..a2.len() - 2], &b2[..b2.len() - 2]])?;
    if a.len() > 1 {
        out.push(m);
    }
    if b.len() > 1 {
        out.push(n);
    }
    Ok(out)
}
