//! Reductions (`keepdims`, axes as attribute or input, `noop_with_empty_axes`) and
//! `ArgMax`/`ArgMin`.

use super::node::{INT64, Info, Node, Outputs, Values, axis_index, one};

impl Node<'_> {
    pub(super) fn reduce(&self, op: &str) -> Outputs {
        let x = self.input(0)?;
        let r = x.rank();
        let axes = self.ints_input_or_attr(1, "axes")?.unwrap_or_default();
        let keep = self.int("keepdims", 1) != 0;
        if axes.is_empty() && self.int("noop_with_empty_axes", 0) != 0 {
            return one(Info::new(x.elem_type, x.dims.clone()).with_value(x.value.clone()));
        }
        let mut reduced = vec![axes.is_empty(); r];
        for &a in &axes {
            reduced[axis_index(a, r)?] = true;
        }
        let dims: Vec<u64> = x
            .dims
            .iter()
            .zip(&reduced)
            .filter_map(|(&d, &red)| match (red, keep) {
                (true, true) => Some(1),
                (true, false) => None,
                (false, _) => Some(d),
            })
            .collect();
        // Values: integer reductions over every axis (shape arithmetic: the product of dims).
        let value = match (&x.value, reduced.iter().all(|&r| r)) {
            (Some(Values::Int(v)), true) => match op {
                "ReduceProd" => v.iter().try_fold(1i64, |a, &b| a.checked_mul(b)),
                "ReduceSum" => v.iter().try_fold(0i64, |a, &b| a.checked_add(b)),
                "ReduceMax" => v.iter().copied().max(),
                "ReduceMin" => v.iter().copied().min(),
                _ => None,
            }
            .map(|n| Values::Int(vec![n])),
            _ => None,
        };
        one(Info::new(x.elem_type, dims).with_value(value))
    }

    pub(super) fn arg_reduce(&self) -> Outputs {
        let x = self.input(0)?;
        let axis = axis_index(self.int("axis", 0), x.rank())?;
        let mut dims = x.dims.clone();
        if self.int("keepdims", 1) != 0 {
            dims[axis] = 1;
        } else {
            dims.remove(axis);
        }
        one(Info::new(INT64, dims))
    }
}
