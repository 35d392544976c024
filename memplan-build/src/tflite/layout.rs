//! The lowering of TFLite's operators that move values without arithmetic: RESHAPE (SQUEEZE,
//! EXPAND_DIMS), CONCATENATION, PAD (PADV2), TRANSPOSE and STRIDED_SLICE.

use super::*;

impl Lower<'_> {
    /// Lowers RESHAPE, SQUEEZE and EXPAND_DIMS into `attrs` and `inputs`; the kernel it runs.
    pub(super) fn lower_reshape<'o>(
        &mut self,
        op: &'o Operator,
        out: usize,
        inputs: &mut Vec<OpInput>,
        _attrs: &mut Attrs,
    ) -> Result<&'o str, String> {
        let input = |i: usize| input_of(op, i);
        let x = input(0)?;
        if self.element(x) != self.element(out) {
            return Err("the output's type differs from the input's".to_owned());
        }
        if self.graph.tensors[x].elements() != self.graph.tensors[out].elements() {
            return Err(format!(
                "it reshapes `{}` {:?} to `{}` {:?}, another number of elements\n  = help: the file is corrupt; convert the model again",
                self.name(x),
                self.shape(x),
                self.name(out),
                self.shape(out)
            ));
        }
        if op.name == "RESHAPE" {
            self.requested_shape(op, x)?;
        }
        inputs.push(self.operand(x)?);
        Ok("RESHAPE")
    }

    /// Lowers CONCATENATION into `attrs` and `inputs`; the kernel it runs.
    pub(super) fn lower_concatenation<'o>(
        &mut self,
        op: &'o Operator,
        out: usize,
        inputs: &mut Vec<OpInput>,
        attrs: &mut Attrs,
    ) -> Result<&'o str, String> {
        let Opts::Concatenation { axis, activation } = op.options else {
            return Err("it has no ConcatenationOptions".to_owned());
        };
        if activation != Activation::None {
            return Err(format!(
                "a fused {} activation on CONCATENATION is not supported",
                activation.name()
            ));
        }
        let rank = self.shape(out).len() as i64;
        let axis_of_out = if axis < 0 {
            i64::from(axis) + rank
        } else {
            i64::from(axis)
        };
        if !(0..rank).contains(&axis_of_out) {
            return Err(format!(
                "axis {axis} is out of range for its output `{}` of {rank} dimensions\n  = help: the file is corrupt; convert the model again",
                self.name(out)
            ));
        }
        if op.inputs.iter().flatten().next().is_none() {
            return Err(
                "it has no inputs\n  = help: the file is corrupt; convert the model again"
                    .to_owned(),
            );
        }
        let out_q = (self.element(out) == ElementType::I8)
            .then(|| self.q(out))
            .transpose()?;
        for &t in op.inputs.iter().flatten() {
            if self.element(t) != self.element(out) {
                return Err(types(self.element(t), self.element(out)));
            }
            if let Some(qo) = out_q {
                let qi = self.q(t)?;
                if qi.scale != qo.scale || qi.zero_point != qo.zero_point {
                    return Err(format!(
                        "input `{}` is quantized unlike the output; TFLite requires the same quantization for int8 CONCATENATION",
                        self.name(t)
                    ));
                }
            }
            inputs.push(self.operand(t)?);
        }
        attr_int(attrs, "axis", i64::from(axis));
        Ok(op.name)
    }

    /// Lowers PAD and PADV2 into `attrs` and `inputs`; the kernel it runs.
    pub(super) fn lower_pad<'o>(
        &mut self,
        op: &'o Operator,
        out: usize,
        inputs: &mut Vec<OpInput>,
        attrs: &mut Attrs,
    ) -> Result<&'o str, String> {
        let input = |i: usize| input_of(op, i);
        let (x, p) = (input(0)?, input(1)?);
        let pads = self.ints(p)?;
        // Checked here, not only by the kernel: it adds the pads to the input's size,
        // which a pad near `i64::MAX` would overflow.
        let (xs, os) = (self.shape(x), self.shape(out));
        let fits = pads.len() == 2 * xs.len()
            && os.len() == xs.len()
            && xs.iter().zip(os).enumerate().all(|(d, (&n, &o))| {
                let (b, a) = (pads[2 * d], pads[2 * d + 1]);
                b >= 0
                    && a >= 0
                    && i64::try_from(n)
                        .ok()
                        .and_then(|n| n.checked_add(b)?.checked_add(a))
                        == i64::try_from(o).ok()
            });
        if !fits {
            return Err(format!(
                "its paddings `{}` {pads:?} (before and after, per axis, none negative) do not take `{}` {xs:?} to `{}` {os:?}\n  = help: the file is corrupt; convert the model again",
                self.name(p),
                self.name(x),
                self.name(out)
            ));
        }
        attrs.push(("pads".to_owned(), AttrValue::Ints(pads)));
        let constant = op.inputs.get(2).copied().flatten();
        match self.element(x) {
            ElementType::F32 => {
                let v = match constant {
                    Some(c) => {
                        let data = self.graph.tensors[c].data.as_deref().unwrap_or(&[]);
                        let b: [u8; 4] = data
                            .get(..4)
                            .and_then(|b| b.try_into().ok())
                            .ok_or("PADV2's value must be a float32 constant")?;
                        f32::from_le_bytes(b)
                    }
                    None => 0.0,
                };
                attr_float(attrs, "value", v);
            }
            ElementType::I8 => {
                let (qi, qo) = (self.q(x)?, self.q(out)?);
                if qi.scale != qo.scale || qi.zero_point != qo.zero_point {
                    return Err("an int8 PAD must have the same quantization in and out".to_owned());
                }
                let v = match constant {
                    Some(c) => {
                        let data = self.graph.tensors[c].data.as_deref().unwrap_or(&[]);
                        i64::from(
                            data.first()
                                .map(|&b| b.cast_signed())
                                .ok_or("PADV2's value must be an int8 constant")?,
                        )
                    }
                    None => i64::from(qo.zero_point),
                };
                attr_int(attrs, "value", v);
            }
            other => return Err(types(other, self.element(out))),
        }
        inputs.push(self.operand(x)?);
        Ok("PAD")
    }

    /// Lowers TRANSPOSE into `attrs` and `inputs`; the kernel it runs.
    pub(super) fn lower_transpose<'o>(
        &mut self,
        op: &'o Operator,
        out: usize,
        inputs: &mut Vec<OpInput>,
        attrs: &mut Attrs,
    ) -> Result<&'o str, String> {
        let input = |i: usize| input_of(op, i);
        let (x, p) = (input(0)?, input(1)?);
        if self.element(x) != self.element(out) {
            return Err("the output's type differs from the input's".to_owned());
        }
        if self.element(x) == ElementType::I8 {
            let (qi, qo) = (self.q(x)?, self.q(out)?);
            if qi.scale != qo.scale || qi.zero_point != qo.zero_point {
                return Err(
                    "an int8 TRANSPOSE must have the same quantization in and out".to_owned(),
                );
            }
        }
        let perm = self.ints(p)?;
        let (xs, os) = (self.shape(x), self.shape(out));
        let mut seen = vec![false; xs.len()];
        let permutes = perm.len() == xs.len()
            && os.len() == xs.len()
            && perm.iter().zip(os).all(|(&p, &o)| {
                usize::try_from(p)
                    .ok()
                    .filter(|&p| p < xs.len() && !std::mem::replace(&mut seen[p], true))
                    .is_some_and(|p| xs[p] == o)
            });
        if !permutes {
            return Err(format!(
                "its permutation `{}` {perm:?} is not a permutation of the axes of `{}` {xs:?} giving `{}` {os:?}\n  = help: the file is corrupt; convert the model again",
                self.name(p),
                self.name(x),
                self.name(out)
            ));
        }
        attrs.push(("perm".to_owned(), AttrValue::Ints(perm)));
        inputs.push(self.operand(x)?);
        // ONNX's Transpose moves elements of any type the same way.
        Ok("Transpose")
    }

    /// Lowers STRIDED_SLICE into `attrs` and `inputs`; the kernel it runs.
    pub(super) fn lower_strided_slice<'o>(
        &mut self,
        op: &'o Operator,
        out: usize,
        inputs: &mut Vec<OpInput>,
        attrs: &mut Attrs,
    ) -> Result<&'o str, String> {
        let input = |i: usize| input_of(op, i);
        let x = input(0)?;
        let (b, e) = (input(1)?, input(2)?);
        let Opts::StridedSlice {
            begin_mask,
            end_mask,
            ellipsis_mask,
            new_axis_mask,
            shrink_axis_mask,
            offset,
        } = op.options
        else {
            return Err("it has no StridedSliceOptions".to_owned());
        };
        if ellipsis_mask != 0 || new_axis_mask != 0 {
            return Err("STRIDED_SLICE with an ellipsis or a new axis is not supported".to_owned());
        }
        if self.element(x) != self.element(out) {
            return Err("the output's type differs from the input's".to_owned());
        }
        if self.element(x) == ElementType::I8 {
            let (qi, qo) = (self.q(x)?, self.q(out)?);
            if qi.scale != qo.scale || qi.zero_point != qo.zero_point {
                return Err(
                    "an int8 STRIDED_SLICE must have the same quantization in and out".to_owned(),
                );
            }
        }
        let xs = self.shape(x).to_vec();
        let (begin, end) = (self.ints(b)?, self.ints(e)?);
        let strides = match op.inputs.get(3).copied().flatten() {
            Some(s) => self.ints(s)?,
            None => vec![1; begin.len()],
        };
        if begin.len() > xs.len() || end.len() != begin.len() || strides.len() != begin.len() {
            return Err(format!(
                "begin {begin:?}, end {end:?} and strides {strides:?} do not fit the input {xs:?}"
            ));
        }
        let (starts, steps, sizes) = strided_slice(
            &xs,
            &begin,
            &end,
            &strides,
            [begin_mask, end_mask, shrink_axis_mask],
            offset,
        )?;
        let kept: Vec<usize> = sizes
            .iter()
            .enumerate()
            .filter(|&(d, _)| d >= 32 || shrink_axis_mask & (1 << d) == 0)
            .map(|(_, &n)| n as usize)
            .collect();
        if kept.iter().product::<usize>() != self.shape(out).iter().product::<usize>() {
            return Err(format!(
                "the output {:?} does not have the {kept:?} elements the slice takes",
                self.shape(out)
            ));
        }
        attrs.push(("begin".to_owned(), AttrValue::Ints(starts)));
        attrs.push(("strides".to_owned(), AttrValue::Ints(steps)));
        attrs.push(("out_shape".to_owned(), AttrValue::Ints(sizes)));
        inputs.push(self.operand(x)?);
        Ok(op.name)
    }
}
