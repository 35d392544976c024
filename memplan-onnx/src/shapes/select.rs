//! Operators that cut, join, pick or repeat elements: `Concat`, `Split`, `Slice`, `Gather`,
//! `Pad`, `Resize`/`Upsample`, `Expand`, `Tile`, `TopK` and `OneHot`.

use super::node::{
    INT64, Info, Node, Outputs, Values, axis_index, broadcast, broadcast_indices, dims_small, one,
};

impl Node<'_> {
    pub(super) fn concat(&self) -> Outputs {
        let ins: Vec<&Info> = self.ins.iter().flatten().copied().collect();
        let Some(first) = ins.first() else {
            return Err("it has no inputs".to_owned());
        };
        let axis = axis_index(self.int("axis", 0), first.rank())?;
        let mut dims = first.dims.clone();
        dims[axis] = 0;
        for info in &ins {
            if info.rank() != dims.len()
                || info
                    .dims
                    .iter()
                    .zip(&first.dims)
                    .enumerate()
                    .any(|(i, (a, b))| i != axis && a != b)
            {
                return Err(format!(
                    "inputs of shapes {:?} and {:?} do not concatenate along axis {axis}",
                    first.dims, info.dims
                ));
            }
            dims[axis] = dims[axis]
                .checked_add(info.dims[axis])
                .ok_or("the concatenation is too large")?;
        }
        // Values: only of 1-D operands (shape vectors), and only small ones (16,384 uses of one
        // initializer would otherwise be gigabytes).
        let value = if dims.len() == 1 && dims_small(&dims) && ins.iter().all(|i| i.value.is_some())
        {
            if ins.iter().all(|i| matches!(i.value, Some(Values::Int(_)))) {
                Some(Values::Int(
                    ins.iter().flat_map(|i| i.ints().expect("ints")).collect(),
                ))
            } else {
                Some(Values::Float(
                    ins.iter()
                        .flat_map(|i| {
                            let v = i.value.as_ref().expect("checked");
                            (0..v.len()).map(|k| v.f64_at(k)).collect::<Vec<_>>()
                        })
                        .collect(),
                ))
            }
        } else {
            None
        };
        one(Info::new(first.elem_type, dims).with_value(value))
    }

    pub(super) fn split(&self) -> Outputs {
        let x = self.input(0)?;
        let axis = axis_index(self.int("axis", 0), x.rank())?;
        let outputs = self.node.output.len() as u64;
        let d = x.dims[axis];
        let parts: Vec<u64> = match self.ints_input_or_attr(1, "split")? {
            Some(split) if !split.is_empty() => {
                if split.iter().any(|&s| s < 0)
                    || split.iter().try_fold(0i64, |a, &b| a.checked_add(b)) != Some(d as i64)
                {
                    return Err(format!(
                        "split {split:?} does not add up to the axis's size {d}"
                    ));
                }
                split.iter().map(|&s| s as u64).collect()
            }
            _ => {
                let n = match self.attr("num_outputs") {
                    Some(a) if a.i > 0 && a.i as u64 == outputs => a.i as u64,
                    Some(a) => {
                        return Err(format!("num_outputs {} is not its {outputs} outputs", a.i));
                    }
                    _ => outputs,
                };
                if n == 0 {
                    return Err("it has no outputs".to_owned());
                }
                if self.attr("num_outputs").is_some() {
                    let chunk = d.div_ceil(n);
                    (0..n)
                        .map(|k| chunk.min(d.saturating_sub(k * chunk)))
                        .collect()
                } else {
                    if d % n != 0 {
                        return Err(format!(
                            "the axis's size {d} does not split into {n} equal parts"
                        ));
                    }
                    vec![d / n; n as usize]
                }
            }
        };
        Ok(parts
            .into_iter()
            .map(|p| {
                let mut dims = x.dims.clone();
                dims[axis] = p;
                Ok(Info::new(x.elem_type, dims))
            })
            .collect())
    }

    pub(super) fn slice(&self) -> Outputs {
        let x = self.input(0)?;
        let r = x.rank();
        let (starts, ends, axes, steps) = if self.ins.len() > 1 {
            let starts = self.const_ints(1, "starts")?;
            let ends = self.const_ints(2, "ends")?;
            let axes = match self.optional(3) {
                Some(_) => Some(self.const_ints(3, "axes")?),
                None => None,
            };
            let steps = match self.optional(4) {
                Some(_) => Some(self.const_ints(4, "steps")?),
                None => None,
            };
            (starts, ends, axes, steps)
        } else {
            (
                self.ints("starts").ok_or("it has no starts")?,
                self.ints("ends").ok_or("it has no ends")?,
                self.ints("axes"),
                None,
            )
        };
        let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
        let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
        if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
            return Err(format!(
                "starts {starts:?}, ends {ends:?}, axes {axes:?} and steps {steps:?} differ in length"
            ));
        }
        let mut dims = x.dims.clone();
        // Per axis: first index and step of the elements kept.
        let mut picks: Vec<(i128, i128)> = (0..r).map(|_| (0, 1)).collect();
        for k in 0..starts.len() {
            let a = axis_index(axes[k], r)?;
            let d = x.dims[a] as i128;
            let step = steps[k] as i128;
            if step == 0 {
                return Err("a step is 0".to_owned());
            }
            let (mut s, mut e) = (starts[k] as i128, ends[k] as i128);
            if s < 0 {
                s += d;
            }
            if e < 0 {
                e += d;
            }
            let n = if step > 0 {
                s = s.clamp(0, d);
                e = e.clamp(0, d);
                ((e - s + step - 1) / step).max(0)
            } else {
                s = s.clamp(0, (d - 1).max(0));
                e = e.clamp(-1, d - 1);
                ((s - e + (-step) - 1) / (-step)).max(0)
            };
            dims[a] = n as u64;
            picks[a] = (s, step);
        }
        let value = x.value.as_ref().filter(|_| dims_small(&dims)).map(|v| {
            let mut strides = vec![1i128; r];
            for i in (0..r.saturating_sub(1)).rev() {
                strides[i] = strides[i + 1] * x.dims[i + 1] as i128;
            }
            let indices: Vec<usize> = broadcast_indices(&dims, &dims)
                .into_iter()
                .map(|flat| {
                    let mut rest = flat;
                    let mut index = 0i128;
                    for i in (0..r).rev() {
                        let c = (rest % dims[i] as usize) as i128;
                        rest /= dims[i] as usize;
                        index += (picks[i].0 + c * picks[i].1) * strides[i];
                    }
                    index as usize
                })
                .collect();
            v.pick(&indices)
        });
        one(Info::new(x.elem_type, dims).with_value(value))
    }

    pub(super) fn gather(&self) -> Outputs {
        let (x, indices) = (self.input(0)?, self.input(1)?);
        if x.rank() == 0 {
            return Err("the data is a scalar".to_owned());
        }
        let axis = axis_index(self.int("axis", 0), x.rank())?;
        let mut dims = x.dims[..axis].to_vec();
        dims.extend(&indices.dims);
        dims.extend(&x.dims[axis + 1..]);
        let value = match (&x.value, indices.ints()) {
            (Some(v), Some(idx)) if dims_small(&dims) => {
                let n = x.dims[axis] as i64;
                let outer: u64 = x.dims[..axis].iter().product();
                let inner: u64 = x.dims[axis + 1..].iter().product();
                let resolved: Option<Vec<u64>> = idx
                    .iter()
                    .map(|&i| {
                        let i = if i < 0 { i + n } else { i };
                        (0..n).contains(&i).then_some(i as u64)
                    })
                    .collect();
                resolved.map(|resolved| {
                    let mut picks = Vec::new();
                    for o in 0..outer {
                        for &i in &resolved {
                            for k in 0..inner {
                                picks.push(((o * n as u64 + i) * inner + k) as usize);
                            }
                        }
                    }
                    v.pick(&picks)
                })
            }
            _ => None,
        };
        one(Info::new(x.elem_type, dims).with_value(value))
    }

    pub(super) fn pad(&self) -> Outputs {
        let x = self.input(0)?;
        let r = x.rank();
        let pads = match self.optional(1) {
            Some(_) => self.const_ints(1, "pads")?,
            None => self
                .ints("pads")
                .or_else(|| self.ints("paddings"))
                .ok_or("it has no pads")?,
        };
        let axes: Vec<usize> = match self.optional(3) {
            Some(_) => self
                .const_ints(3, "axes")?
                .iter()
                .map(|&a| axis_index(a, r))
                .collect::<Result<_, _>>()?,
            None => (0..r).collect(),
        };
        if pads.len() != 2 * axes.len() {
            return Err(format!(
                "pads {pads:?} do not give a start and an end for each of {} axes",
                axes.len()
            ));
        }
        let mut dims = x.dims.clone();
        let n = axes.len();
        for (k, &a) in axes.iter().enumerate() {
            let size = dims[a] as i128 + pads[k] as i128 + pads[k + n] as i128;
            if size < 0 {
                return Err(format!("pads {pads:?} remove more than axis {a} holds"));
            }
            dims[a] = size as u64;
        }
        one(Info::new(x.elem_type, dims))
    }

    pub(super) fn resize(&self, op: &str) -> Outputs {
        let x = self.input(0)?;
        let r = x.rank();
        // Upsample (scales as input 1 or the opset-7 attribute), Resize of opset 10 (scales as
        // input 1), Resize of opset 11+ (roi, scales, sizes).
        let (scales_at, sizes_at) = if op == "Upsample" || self.opset < 11 {
            (1, None)
        } else {
            (2, Some(3))
        };
        let given = |k: usize| self.optional(k).filter(|i| i.elements() != Some(0));
        let axes: Vec<usize> = match self.ints("axes") {
            Some(a) => a
                .iter()
                .map(|&a| axis_index(a, r))
                .collect::<Result<_, _>>()?,
            None => (0..r).collect(),
        };
        let mut dims = x.dims.clone();
        if let Some(k) = sizes_at.filter(|&k| given(k).is_some()) {
            let sizes = self.const_ints(k, "sizes")?;
            if sizes.len() != axes.len() || sizes.iter().any(|&s| s < 0) {
                return Err(format!("sizes {sizes:?} do not fit {} axes", axes.len()));
            }
            let policy = self.text("keep_aspect_ratio_policy", "stretch");
            if policy == "stretch" {
                for (&a, &s) in axes.iter().zip(&sizes) {
                    dims[a] = s as u64;
                }
            } else {
                let ratios = axes
                    .iter()
                    .zip(&sizes)
                    .map(|(&a, &s)| s as f32 / x.dims[a] as f32);
                let scale = if policy == "not_larger" {
                    ratios.fold(f32::INFINITY, f32::min)
                } else {
                    ratios.fold(0.0, f32::max)
                };
                for &a in &axes {
                    dims[a] = (scale * x.dims[a] as f32).round() as u64;
                }
            }
            return one(Info::new(x.elem_type, dims));
        }
        let scales: Vec<f64> = match given(scales_at) {
            Some(info) => match &info.value {
                Some(v) => (0..v.len()).map(|k| v.f64_at(k)).collect(),
                None => {
                    return Err(format!(
                        "its scales (input {scales_at}, `{}`) are not a constant known before \
                         inference",
                        self.node.input[scales_at]
                    ));
                }
            },
            None => match self.attr("scales") {
                Some(a) if op == "Upsample" => a.floats.iter().map(|&f| f as f64).collect(),
                _ => return Err("it has neither scales nor sizes".to_owned()),
            },
        };
        if scales.len() != axes.len() {
            return Err(format!("{} scales for {} axes", scales.len(), axes.len()));
        }
        for (&a, &s) in axes.iter().zip(&scales) {
            // In f32, as ONNX Runtime and memplan's kernels compute it.
            let o = (x.dims[a] as f32 * s as f32).floor();
            if !(o >= 0.0 && o < (1u64 << 40) as f32) {
                return Err(format!("scale {s} makes an output size of {o}"));
            }
            dims[a] = o as u64;
        }
        one(Info::new(x.elem_type, dims))
    }

    pub(super) fn expand(&self) -> Outputs {
        let x = self.input(0)?;
        let shape = self.const_ints(1, "shape")?;
        let shape: Vec<u64> = shape.iter().map(|&d| d.max(0) as u64).collect();
        let dims = broadcast(&[&x.dims, &shape])?;
        let value = x
            .value
            .as_ref()
            .filter(|_| dims_small(&dims))
            .map(|v| v.pick(&broadcast_indices(&x.dims, &dims)));
        one(Info::new(x.elem_type, dims).with_value(value))
    }

    pub(super) fn tile(&self) -> Outputs {
        let x = self.input(0)?;
        let repeats = self.const_ints(1, "repeats")?;
        if repeats.len() != x.rank() || repeats.iter().any(|&r| r < 0) {
            return Err(format!(
                "repeats {repeats:?} do not fit the input's shape {:?}",
                x.dims
            ));
        }
        let dims = x
            .dims
            .iter()
            .zip(&repeats)
            .map(|(&d, &r)| d.checked_mul(r as u64).ok_or("too large"))
            .collect::<Result<Vec<u64>, _>>()?;
        one(Info::new(x.elem_type, dims))
    }

    pub(super) fn top_k(&self) -> Outputs {
        let x = self.input(0)?;
        let k = self.const_ints(1, "K")?;
        let axis = axis_index(self.int("axis", -1), x.rank())?;
        let mut dims = x.dims.clone();
        match k.as_slice() {
            [k] if *k >= 0 && (*k as u64) <= dims[axis] => dims[axis] = *k as u64,
            _ => {
                return Err(format!(
                    "K {k:?} does not fit the axis of size {}",
                    dims[axis]
                ));
            }
        }
        Ok(vec![
            Ok(Info::new(x.elem_type, dims.clone())),
            Ok(Info::new(INT64, dims)),
        ])
    }

    pub(super) fn one_hot(&self) -> Outputs {
        let (indices, values) = (self.input(0)?, self.input(2)?);
        let depth = match &self.input(1)?.value {
            Some(v) if v.len() == 1 => v.f64_at(0),
            _ => {
                return Err(format!(
                    "its depth (input 1, `{}`) is not a constant known before inference",
                    self.node.input[1]
                ));
            }
        };
        if !(depth >= 1.0 && depth < (1u64 << 40) as f64) {
            return Err(format!("its depth {depth} is not a positive size"));
        }
        let r = indices.rank() + 1;
        let axis = axis_index(self.int("axis", -1), r)?;
        let mut dims = indices.dims.clone();
        dims.insert(axis, depth as u64);
        one(Info::new(values.elem_type, dims))
    }
}
