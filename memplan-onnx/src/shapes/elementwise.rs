//! Elementwise operators: unary operators, activations and normalisations keep their input's
//! shape; binary and variadic ones (`Add`, `Where`, `Max`, comparisons, ...) broadcast as numpy
//! does, with their values when every operand is a known constant.

use super::eval::fold_values;
use super::node::{
    BOOL, FLOAT, Info, Node, Outputs, Values, axis_index, broadcast, broadcast_indices, dims_small,
    one,
};

impl Node<'_> {
    pub(super) fn unary(&self) -> Outputs {
        let x = self.input(0)?;
        let op = self.node.op_type.as_str();
        let value = match (&x.value, op) {
            (Some(Values::Int(v)), "Neg") => v
                .iter()
                .map(|x| x.checked_neg())
                .collect::<Option<_>>()
                .map(Values::Int),
            (Some(Values::Int(v)), "Abs") => v
                .iter()
                .map(|x| x.checked_abs())
                .collect::<Option<_>>()
                .map(Values::Int),
            (Some(Values::Int(v)), "Not") => {
                Some(Values::Int(v.iter().map(|&x| (x == 0) as i64).collect()))
            }
            (Some(Values::Int(v)), "Relu") => {
                Some(Values::Int(v.iter().map(|&x| x.max(0)).collect()))
            }
            (Some(Values::Float(v)), "Neg") => Some(Values::Float(v.iter().map(|x| -x).collect())),
            (Some(Values::Float(v)), "Abs") => {
                Some(Values::Float(v.iter().map(|x| x.abs()).collect()))
            }
            (Some(Values::Float(v)), "Floor") => {
                Some(Values::Float(v.iter().map(|x| x.floor()).collect()))
            }
            (Some(Values::Float(v)), "Ceil") => {
                Some(Values::Float(v.iter().map(|x| x.ceil()).collect()))
            }
            (Some(Values::Float(v)), "Relu") => {
                Some(Values::Float(v.iter().map(|x| x.max(0.0)).collect()))
            }
            _ => None,
        };
        one(Info::new(x.elem_type, x.dims.clone()).with_value(value))
    }

    /// Binary and variadic broadcasting operators, with their values when all are known.
    pub(super) fn elementwise(&self, op: &str) -> Outputs {
        let ins: Vec<&Info> = self.ins.iter().flatten().copied().collect();
        let Some(first) = ins.first() else {
            return Err("it has no inputs".to_owned());
        };
        if matches!(
            op,
            "Add"
                | "Sub"
                | "Mul"
                | "Div"
                | "Pow"
                | "Mod"
                | "And"
                | "Or"
                | "Xor"
                | "Equal"
                | "Less"
                | "Greater"
                | "LessOrEqual"
                | "GreaterOrEqual"
                | "PRelu"
                | "BitShift"
                | "BitwiseAnd"
                | "BitwiseOr"
                | "BitwiseXor"
        ) && ins.len() != 2
        {
            return Err(format!("it has {} inputs, not 2", ins.len()));
        }
        let shapes: Vec<&[u64]> = ins.iter().map(|i| i.dims.as_slice()).collect();
        let dims = broadcast(&shapes)?;
        let t = match op {
            "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" => BOOL,
            _ => first.elem_type,
        };
        let value = if dims_small(&dims) && ins.iter().all(|i| i.value.is_some()) {
            let picked: Vec<Values> = ins
                .iter()
                .map(|i| {
                    i.value
                        .as_ref()
                        .expect("checked")
                        .pick(&broadcast_indices(&i.dims, &dims))
                })
                .collect();
            fold_values(op, &picked, self.int("fmod", 0) != 0)
        } else {
            None
        };
        one(Info::new(t, dims).with_value(value))
    }

    pub(super) fn dropout(&self) -> Outputs {
        let x = self.input(0)?;
        Ok(vec![
            Ok(Info::new(x.elem_type, x.dims.clone()).with_value(x.value.clone())),
            Ok(Info::new(BOOL, x.dims.clone())),
        ])
    }

    pub(super) fn batch_normalization(&self) -> Outputs {
        let x = self.input(0)?;
        let c = x.dims.get(1).copied().unwrap_or(1);
        let stat = |k: usize| {
            let t = self.optional(k).map_or(x.elem_type, |i| i.elem_type);
            Ok(Info::new(t, vec![c]))
        };
        Ok(vec![
            Ok(Info::new(x.elem_type, x.dims.clone())),
            stat(3),
            stat(4),
        ])
    }

    pub(super) fn layer_normalization(&self) -> Outputs {
        let x = self.input(0)?;
        let axis = axis_index(self.int("axis", -1), x.rank())?;
        let mut stat = x.dims.clone();
        for d in &mut stat[axis..] {
            *d = 1;
        }
        let stash = match self.int("stash_type", 1) {
            1 => FLOAT,
            t => t as i32,
        };
        Ok(vec![
            Ok(Info::new(x.elem_type, x.dims.clone())),
            Ok(Info::new(stash, stat.clone())),
            Ok(Info::new(stash, stat)),
        ])
    }

    pub(super) fn where_(&self) -> Outputs {
        let (c, x, y) = (self.input(0)?, self.input(1)?, self.input(2)?);
        let dims = broadcast(&[&c.dims, &x.dims, &y.dims])?;
        let value = match (&c.value, &x.value, &y.value) {
            (Some(Values::Int(cv)), Some(xv), Some(yv)) if dims_small(&dims) => {
                let (ci, xi, yi) = (
                    broadcast_indices(&c.dims, &dims),
                    broadcast_indices(&x.dims, &dims),
                    broadcast_indices(&y.dims, &dims),
                );
                let pick = |i: usize| {
                    if cv[ci[i]] != 0 {
                        (xv, xi[i])
                    } else {
                        (yv, yi[i])
                    }
                };
                match xv {
                    Values::Int(_) => Some(Values::Int(
                        (0..ci.len())
                            .map(|i| {
                                let (v, k) = pick(i);
                                v.f64_at(k) as i64
                            })
                            .collect(),
                    )),
                    Values::Float(_) => Some(Values::Float(
                        (0..ci.len())
                            .map(|i| {
                                let (v, k) = pick(i);
                                v.f64_at(k)
                            })
                            .collect(),
                    )),
                }
            }
            _ => None,
        };
        one(Info::new(x.elem_type, dims).with_value(value))
    }
}
