//! The same elements in another shape or order: `Reshape`, `Flatten`, `Transpose`, `Squeeze`,
//! `Unsqueeze`, `DepthToSpace` and `SpaceToDepth`.

use super::node::{Info, Node, Outputs, axis_index, one, product};

impl Node<'_> {
    pub(super) fn reshape(&self) -> Outputs {
        let x = self.input(0)?;
        let shape = self.const_ints(1, "shape")?;
        let allowzero = self.int("allowzero", 0) != 0;
        let total = product(&x.dims)?;
        let mut dims = Vec::with_capacity(shape.len());
        let mut infer = None;
        for (i, &s) in shape.iter().enumerate() {
            dims.push(match s {
                -1 if infer.is_none() => {
                    infer = Some(i);
                    1
                }
                -1 => return Err(format!("shape {shape:?} has more than one -1")),
                0 if !allowzero => *x.dims.get(i).ok_or_else(|| {
                    format!(
                        "shape {shape:?} copies dimension {i} (0), which the input {:?} does not have",
                        x.dims
                    )
                })?,
                s if s >= 0 => s as u64,
                s => return Err(format!("shape {shape:?} has a negative size {s}")),
            });
        }
        let known = product(&dims)?;
        if let Some(i) = infer {
            if known == 0 || total % known != 0 {
                return Err(format!(
                    "the input {:?} ({total} elements) cannot be reshaped to {shape:?}",
                    x.dims
                ));
            }
            dims[i] = total / known;
        } else if known != total {
            return Err(format!(
                "the input {:?} ({total} elements) cannot be reshaped to {shape:?} ({known})",
                x.dims
            ));
        }
        one(Info::new(x.elem_type, dims).with_value(x.value.clone()))
    }

    pub(super) fn flatten(&self) -> Outputs {
        let x = self.input(0)?;
        let r = x.rank() as i64;
        let axis = self.int("axis", 1);
        let axis = if axis < 0 { axis + r } else { axis };
        if !(0..=r).contains(&axis) {
            return Err(format!(
                "axis {} is out of range for rank {r}",
                self.int("axis", 1)
            ));
        }
        let (outer, inner) = x.dims.split_at(axis as usize);
        one(
            Info::new(x.elem_type, vec![product(outer)?, product(inner)?])
                .with_value(x.value.clone()),
        )
    }

    pub(super) fn transpose(&self) -> Outputs {
        let x = self.input(0)?;
        let r = x.rank();
        let perm: Vec<i64> = self
            .ints("perm")
            .unwrap_or_else(|| (0..r as i64).rev().collect());
        let mut seen = vec![false; r];
        let mut dims = Vec::with_capacity(r);
        for &p in &perm {
            let a = axis_index(p, r)?;
            if std::mem::replace(&mut seen[a], true) {
                return Err(format!("perm {perm:?} repeats axis {p}"));
            }
            dims.push(x.dims[a]);
        }
        if perm.len() != r {
            return Err(format!("perm {perm:?} does not have rank {r}"));
        }
        one(Info::new(x.elem_type, dims))
    }

    pub(super) fn squeeze(&self) -> Outputs {
        let x = self.input(0)?;
        let axes = self.ints_input_or_attr(1, "axes")?;
        let dims: Vec<u64> = match axes {
            None => x.dims.iter().copied().filter(|&d| d != 1).collect(),
            Some(axes) => {
                let mut drop = vec![false; x.rank()];
                for a in axes {
                    let i = axis_index(a, x.rank())?;
                    if x.dims[i] != 1 {
                        return Err(format!(
                            "axis {a} has size {}, not 1, so it cannot be squeezed",
                            x.dims[i]
                        ));
                    }
                    drop[i] = true;
                }
                x.dims
                    .iter()
                    .zip(drop)
                    .filter(|(_, d)| !d)
                    .map(|(&d, _)| d)
                    .collect()
            }
        };
        one(Info::new(x.elem_type, dims).with_value(x.value.clone()))
    }

    pub(super) fn unsqueeze(&self) -> Outputs {
        let x = self.input(0)?;
        let axes = self
            .ints_input_or_attr(1, "axes")?
            .ok_or("it has no axes (neither an input nor an attribute)")?;
        let r = x.rank() + axes.len();
        let mut inserted = vec![false; r];
        for &a in &axes {
            let i = axis_index(a, r)?;
            if std::mem::replace(&mut inserted[i], true) {
                return Err(format!("axes {axes:?} repeat axis {a}"));
            }
        }
        let mut rest = x.dims.iter();
        let dims = inserted
            .iter()
            .map(|&new| if new { 1 } else { *rest.next().unwrap_or(&1) })
            .collect();
        one(Info::new(x.elem_type, dims).with_value(x.value.clone()))
    }

    pub(super) fn depth_to_space(&self, op: &str) -> Outputs {
        let x = self.input(0)?;
        let b = self.int("blocksize", 0);
        if b <= 0 || x.rank() != 4 {
            return Err(format!(
                "blocksize {b} on an input of shape {:?} (rank 4 needed)",
                x.dims
            ));
        }
        let b = b as u64;
        let [n, c, h, w] = [x.dims[0], x.dims[1], x.dims[2], x.dims[3]];
        let bb = b
            .checked_mul(b)
            .ok_or_else(|| format!("blocksize {b} is too large"))?;
        let dims = if op == "DepthToSpace" {
            if c % bb != 0 {
                return Err(format!("{c} channels are not a multiple of {bb}"));
            }
            let (Some(hb), Some(wb)) = (h.checked_mul(b), w.checked_mul(b)) else {
                return Err(format!("blocksize {b} is too large"));
            };
            vec![n, c / bb, hb, wb]
        } else {
            if h % b != 0 || w % b != 0 {
                return Err(format!("{h} x {w} is not a multiple of blocksize {b}"));
            }
            let cb = c
                .checked_mul(bb)
                .ok_or_else(|| format!("blocksize {b} is too large"))?;
            vec![n, cb, h / b, w / b]
        };
        one(Info::new(x.elem_type, dims))
    }
}
