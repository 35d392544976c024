//! The lowering of TFLite's arithmetic: ADD, SUB and MUL (their int8 multipliers and shifts as
//! LiteRT's `Prepare` computes them), MEAN and BATCH_MATMUL.

use super::*;

impl Lower<'_> {
    /// Lowers ADD, SUB and MUL into `attrs` and `inputs`; the kernel it runs.
    pub(super) fn lower_binary<'o>(
        &mut self,
        op: &'o Operator,
        out: usize,
        inputs: &mut Vec<OpInput>,
        attrs: &mut Attrs,
    ) -> Result<&'o str, String> {
        let input = |i: usize| input_of(op, i);
        let (a, b) = (input(0)?, input(1)?);
        let Opts::Arithmetic { activation } = op.options else {
            return Err("it has no options".to_owned());
        };
        inputs.push(self.operand(a)?);
        inputs.push(self.operand(b)?);
        match (self.element(a), self.element(b), self.element(out)) {
            (ElementType::F32, ElementType::F32, ElementType::F32) => {}
            (ElementType::I8, ElementType::I8, ElementType::I8)
                if op.name == "ADD" || op.name == "SUB" =>
            {
                let (q1, q2, qo) = (self.q(a)?, self.q(b)?, self.q(out)?);
                // LiteRT's PrepareGeneralSubOp / add.cc for int8 (left shift 20); SUB
                // subtracts the rescaled inputs instead of adding them.
                let left_shift = 20;
                let twice_max = 2.0 * f64::from(q1.scale.max(q2.scale));
                let real1 = f64::from(q1.scale) / twice_max;
                let real2 = f64::from(q2.scale) / twice_max;
                let real_out = twice_max / f64::from((1i32 << left_shift) as f32 * qo.scale);
                // LiteRT's QuantizeMultiplierSmallerThanOneExp checks the output's
                // multiplier is below 1 (and aborts on this file).
                if real_out.is_nan() || real_out >= 1.0 {
                    return Err(format!(
                        "its output scale {:?} is too small for its input scales {:?} and {:?}: LiteRT requires 2 x the larger input scale / (2^20 x the output scale) below 1 ({real_out:.3e} here) and refuses the operator\n  = help: the file's quantization is corrupt; convert the model again",
                        qo.scale, q1.scale, q2.scale
                    ));
                }
                let (m1, s1) = quantize_multiplier(real1);
                let (m2, s2) = quantize_multiplier(real2);
                let (mo, so) = quantize_multiplier(real_out);
                for (name, v) in [
                    ("input1_offset", -q1.zero_point),
                    ("input2_offset", -q2.zero_point),
                    ("output_offset", qo.zero_point),
                    ("left_shift", left_shift),
                    ("input1_multiplier", m1),
                    ("input1_shift", s1),
                    ("input2_multiplier", m2),
                    ("input2_shift", s2),
                    ("output_multiplier", mo),
                    ("output_shift", so),
                ] {
                    attr_int(attrs, name, i64::from(v));
                }
            }
            (ElementType::I8, ElementType::I8, ElementType::I8) if op.name == "MUL" => {
                let (q1, q2, qo) = (self.q(a)?, self.q(b)?, self.q(out)?);
                // mul.cc: the product of the float scales, in float.
                let real = f64::from(q1.scale * q2.scale / qo.scale);
                if !real.is_finite() {
                    return Err(format!(
                        "the product of its input scales {:?} and {:?} over its output scale {:?} is not a finite float32 ({real}): no multiplier applies it\n  = help: the file's quantization is corrupt; convert the model again",
                        q1.scale, q2.scale, qo.scale
                    ));
                }
                let (m, s) = quantize_multiplier(real);
                for (name, v) in [
                    ("input1_offset", -q1.zero_point),
                    ("input2_offset", -q2.zero_point),
                    ("output_offset", qo.zero_point),
                    ("output_multiplier", m),
                    ("output_shift", s),
                ] {
                    attr_int(attrs, name, i64::from(v));
                }
            }
            (ElementType::I8, _, _) => {
                return Err(format!(
                    "{} of {}, {} into {} is not supported (all int8 or all float32 are)",
                    op.name,
                    self.element(a).name(),
                    self.element(b).name(),
                    self.element(out).name()
                ));
            }
            (a, _, o) => return Err(types(a, o)),
        }
        self.activation(activation, out, attrs)?;
        Ok(op.name)
    }

    /// Lowers MEAN into `attrs` and `inputs`; the kernel it runs.
    pub(super) fn lower_mean<'o>(
        &mut self,
        op: &'o Operator,
        out: usize,
        inputs: &mut Vec<OpInput>,
        attrs: &mut Attrs,
    ) -> Result<&'o str, String> {
        let input = |i: usize| input_of(op, i);
        let (x, a) = (input(0)?, input(1)?);
        let axes = self.ints(a)?;
        let rank = self.shape(x).len() as i64;
        if let Some(bad) = axes.iter().find(|&&ax| !(-rank..rank).contains(&ax)) {
            return Err(format!(
                "its axis {bad} (in `{}`) is out of range for `{}` of {rank} dimensions\n  = help: the file is corrupt; convert the model again",
                self.name(a),
                self.name(x)
            ));
        }
        match (self.element(x), self.element(out)) {
            (ElementType::F32, ElementType::F32) => {}
            (ElementType::I8, ElementType::I8) => {
                let (qi, qo) = (self.q(x)?, self.q(out)?);
                // reduce.cc's PrepareMeanOrSum: the multiplier of the scales, in f64.
                let (m, sh) = quantize_multiplier(f64::from(qi.scale) / f64::from(qo.scale));
                let xs = self.shape(x);
                // QuantizedMeanOrSum (LiteRT's one int8 path): the count folded into
                // the multiplier.
                let mut count: i64 = 1;
                let mut seen = [false; 8];
                for &ax in &axes {
                    let d = if ax < 0 { ax + xs.len() as i64 } else { ax };
                    let d = usize::try_from(d)
                        .ok()
                        .filter(|&d| d < xs.len() && d < 8)
                        .ok_or_else(|| format!("axis {ax} is out of range"))?;
                    if !seen[d] {
                        seen[d] = true;
                        count = i64::try_from(xs[d])
                            .ok()
                            .and_then(|n| count.checked_mul(n))
                            .ok_or("MEAN counts more elements than int64 holds")?;
                    }
                }
                if count <= 0 {
                    return Err("MEAN over an empty axis is not supported".to_owned());
                }
                let shift = (63 - (count as u64).leading_zeros() as i32)
                    .min(32)
                    .min(31 + sh);
                let (m, sh) = (((i64::from(m) << shift) / count) as i32, sh - shift);
                attr_int(attrs, "input_zero_point", i64::from(qi.zero_point));
                attr_int(attrs, "output_zero_point", i64::from(qo.zero_point));
                attr_int(attrs, "multiplier", i64::from(m));
                attr_int(attrs, "shift", i64::from(sh));
            }
            (a, b) => return Err(types(a, b)),
        }
        attrs.push(("axes".to_owned(), AttrValue::Ints(axes)));
        inputs.push(self.operand(x)?);
        Ok(op.name)
    }

    /// Lowers BATCH_MATMUL into `attrs` and `inputs`; the kernel it runs.
    pub(super) fn lower_batch_matmul<'o>(
        &mut self,
        op: &'o Operator,
        out: usize,
        inputs: &mut Vec<OpInput>,
        attrs: &mut Attrs,
    ) -> Result<&'o str, String> {
        let input = |i: usize| input_of(op, i);
        let (x, y) = (input(0)?, input(1)?);
        let Opts::BatchMatMul { adj_x, adj_y } = op.options else {
            return Err("it has no BatchMatMulOptions".to_owned());
        };
        let (xs, ys) = (self.shape(x), self.shape(y));
        if xs.len() < 2 || ys.len() < 2 {
            return Err(format!(
                "its operands {xs:?} and {ys:?} must have at least 2 dimensions"
            ));
        }
        let kx = xs[xs.len() - if adj_x { 2 } else { 1 }];
        let ky = ys[ys.len() - if adj_y { 1 } else { 2 }];
        if kx != ky {
            return Err(format!(
                "`{}` {xs:?} and `{}` {ys:?} do not multiply: {kx} columns against {ky} rows\n  = help: the file is corrupt; convert the model again",
                self.name(x),
                self.name(y)
            ));
        }
        attr_int(attrs, "adj_x", i64::from(adj_x));
        attr_int(attrs, "adj_y", i64::from(adj_y));
        match (self.element(x), self.element(y), self.element(out)) {
            (ElementType::F32, ElementType::F32, ElementType::F32) => {}
            (ElementType::I8, ElementType::I8, ElementType::I8) => {
                let (qx, qy, qo) = (self.q(x)?, self.q(y)?, self.q(out)?);
                // batch_matmul.cc: GetQuantizedConvolutionMultipler (the float product
                // of the input scales, in f64, over the output's).
                let real = f64::from(qx.scale * qy.scale) / f64::from(qo.scale);
                let (m, sh) = quantize_multiplier(real);
                attr_int(attrs, "input_offset", -i64::from(qx.zero_point));
                attr_int(attrs, "filter_offset", -i64::from(qy.zero_point));
                attr_int(attrs, "output_offset", i64::from(qo.zero_point));
                attr_int(attrs, "multiplier", i64::from(m));
                attr_int(attrs, "shift", i64::from(sh));
            }
            (a, _, o) => return Err(types(a, o)),
        }
        inputs.push(self.operand(x)?);
        inputs.push(self.operand(y)?);
        Ok(op.name)
    }
}
