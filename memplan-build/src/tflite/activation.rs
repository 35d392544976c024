//! The lowering of TFLite's activations: SOFTMAX (its int8 exp table computed here, as LiteRT's
//! `Prepare` does), LOGISTIC and TANH (their int8 output tables), RELU, RELU6 and RELU_N1_TO_1.

use super::*;

impl Lower<'_> {
    /// Lowers SOFTMAX into `attrs` and `inputs`; the kernel it runs.
    pub(super) fn lower_softmax<'o>(
        &mut self,
        op: &'o Operator,
        out: usize,
        inputs: &mut Vec<OpInput>,
        attrs: &mut Attrs,
    ) -> Result<&'o str, String> {
        let input = |i: usize| input_of(op, i);
        let x = input(0)?;
        let Opts::Softmax { beta } = op.options else {
            return Err("it has no SoftmaxOptions".to_owned());
        };
        if !beta.is_finite() {
            return Err(format!(
                "its beta is {beta}; it must be a finite number\n  = help: the file is corrupt; convert the model again"
            ));
        }
        inputs.push(self.operand(x)?);
        match (self.element(x), self.element(out)) {
            (ElementType::F32, ElementType::F32) => attr_float(attrs, "beta", beta),
            (ElementType::I8, ElementType::I8) => {
                let (qi, qo) = (self.q(x)?, self.q(out)?);
                // LiteRT's PopulateSoftmaxLookupTable, in float.
                let scale = -qi.scale * beta;
                let mut table = [0f32; 256];
                for val in 0..=255u8 {
                    table[255 - usize::from(val)] = (scale * f32::from(val)).exp();
                }
                let bytes = table.iter().flat_map(|v| v.to_le_bytes()).collect();
                let c = self.push(
                    &format!("{} exp table", self.name(x)),
                    DType::F32,
                    &[256],
                    bytes,
                )?;
                inputs.push(OpInput::Weight(c));
                attr_int(attrs, "output_zero_point", i64::from(qo.zero_point));
                attr_float(attrs, "output_scale", qo.scale);
            }
            (a, b) => return Err(types(a, b)),
        }
        Ok(op.name)
    }

    /// Lowers LOGISTIC and TANH into `attrs` and `inputs`; the kernel it runs.
    pub(super) fn lower_lookup_table<'o>(
        &mut self,
        op: &'o Operator,
        out: usize,
        inputs: &mut Vec<OpInput>,
        _attrs: &mut Attrs,
    ) -> Result<&'o str, String> {
        let input = |i: usize| input_of(op, i);
        let x = input(0)?;
        inputs.push(self.operand(x)?);
        match (self.element(x), self.element(out)) {
            (ElementType::F32, ElementType::F32) => {}
            (ElementType::I8, ElementType::I8) => {
                let (qi, qo) = (self.q(x)?, self.q(out)?);
                let f: fn(f32) -> f32 = if op.name == "LOGISTIC" {
                    |v| 1.0 / (1.0 + (-v).exp())
                } else {
                    f32::tanh
                };
                // LiteRT's PopulateLookupTable<int8_t>, in float.
                let inverse_scale = 1.0 / qo.scale;
                let mut table = [0u8; 256];
                for val in -128i32..=127 {
                    let dequantized = qi.scale * (val - qi.zero_point) as f32;
                    let rescaled = (f(dequantized) * inverse_scale).round();
                    let q = (rescaled + qo.zero_point as f32) as i32;
                    let byte = q.clamp(-128, 127) as i8;
                    let index = (val as i8).cast_unsigned();
                    table[usize::from(index)] = byte.cast_unsigned();
                }
                let c = self.push(
                    &format!("{} table", self.name(x)),
                    DType::I8,
                    &[256],
                    table.to_vec(),
                )?;
                inputs.push(OpInput::Weight(c));
            }
            (a, b) => return Err(types(a, b)),
        }
        Ok(op.name)
    }

    /// Lowers RELU, RELU6 and RELU_N1_TO_1 into `attrs` and `inputs`; the kernel it runs.
    pub(super) fn lower_relu<'o>(
        &mut self,
        op: &'o Operator,
        out: usize,
        inputs: &mut Vec<OpInput>,
        attrs: &mut Attrs,
    ) -> Result<&'o str, String> {
        let input = |i: usize| input_of(op, i);
        let x = input(0)?;
        let (lo, hi) = match op.name {
            "RELU" => (0.0f32, f32::INFINITY),
            "RELU6" => (0.0, 6.0),
            _ => (-1.0, 1.0),
        };
        match (self.element(x), self.element(out)) {
            (ElementType::F32, ElementType::F32) => {
                attr_float(attrs, "act_min", lo);
                attr_float(attrs, "act_max", if hi.is_finite() { hi } else { f32::MAX });
            }
            (ElementType::I8, ElementType::I8) => {
                let (qi, qo) = (self.q(x)?, self.q(out)?);
                // activations.cc: ReluPrepare's multiplier (the float ratio) and
                // QuantizedReluX's range.
                let (m, sh) = quantize_multiplier(f64::from(qi.scale / qo.scale));
                let q = |f: f32| qo.zero_point.saturating_add((f / qo.scale).round() as i32);
                let act_min = (-128).max(q(lo));
                let act_max = if hi.is_finite() { 127.min(q(hi)) } else { 127 };
                attr_int(attrs, "act_min", i64::from(act_min));
                attr_int(attrs, "act_max", i64::from(act_max));
                attr_int(attrs, "input_zero_point", i64::from(qi.zero_point));
                attr_int(attrs, "output_zero_point", i64::from(qo.zero_point));
                attr_int(attrs, "multiplier", i64::from(m));
                attr_int(attrs, "shift", i64::from(sh));
            }
            (a, b) => return Err(types(a, b)),
        }
        inputs.push(self.operand(x)?);
        Ok("RELU")
    }
}
