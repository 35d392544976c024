//! The lowering of TFLite's QUANTIZE and DEQUANTIZE.

use super::*;

impl Lower<'_> {
    /// Lowers QUANTIZE into `attrs` and `inputs`; the kernel it runs.
    pub(super) fn lower_quantize<'o>(
        &mut self,
        op: &'o Operator,
        out: usize,
        inputs: &mut Vec<OpInput>,
        attrs: &mut Attrs,
    ) -> Result<&'o str, String> {
        let input = |i: usize| input_of(op, i);
        let x = input(0)?;
        if self.element(out) != ElementType::I8 {
            return Err(format!(
                "QUANTIZE to {} is not supported (int8 is)",
                self.element(out).name()
            ));
        }
        let qo = self.q(out)?;
        attr_int(attrs, "zero_point", i64::from(qo.zero_point));
        match self.element(x) {
            ElementType::F32 => attr_float(attrs, "scale", qo.scale),
            ElementType::I8 => {
                let qi = self.q(x)?;
                let real = f64::from(qi.scale) / f64::from(qo.scale);
                let (m, s) = quantize_multiplier(real);
                attr_int(attrs, "input_zero_point", i64::from(qi.zero_point));
                attr_int(attrs, "multiplier", i64::from(m));
                attr_int(attrs, "shift", i64::from(s));
            }
            other => {
                return Err(format!(
                    "QUANTIZE from {} is not supported (float32 and int8 are)",
                    other.name()
                ));
            }
        }
        inputs.push(self.operand(x)?);
        Ok(op.name)
    }

    /// Lowers DEQUANTIZE into `attrs` and `inputs`; the kernel it runs.
    pub(super) fn lower_dequantize<'o>(
        &mut self,
        op: &'o Operator,
        out: usize,
        inputs: &mut Vec<OpInput>,
        attrs: &mut Attrs,
    ) -> Result<&'o str, String> {
        let input = |i: usize| input_of(op, i);
        let x = input(0)?;
        if (self.element(x), self.element(out)) != (ElementType::I8, ElementType::F32) {
            return Err(format!(
                "DEQUANTIZE from {} to {} is not supported (int8 to float32 is)",
                self.element(x).name(),
                self.element(out).name()
            ));
        }
        let qi = self.q(x)?;
        attr_float(attrs, "scale", qi.scale);
        attr_int(attrs, "zero_point", i64::from(qi.zero_point));
        inputs.push(self.operand(x)?);
        Ok(op.name)
    }
}
