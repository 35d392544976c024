//! Quantized operators: `QuantizeLinear`, `DynamicQuantizeLinear`, and `com.microsoft`'s
//! `QLinearAdd`, `QLinearMul`, `QGemm` and `QLinearGlobalAveragePool`. (`QLinearConv`,
//! `ConvInteger`, `QLinearMatMul` and `MatMulInteger` follow the convolution and product rules.)

use super::node::{FLOAT, Info, Node, Outputs, UINT8, broadcast, one};

impl Node<'_> {
    pub(super) fn quantize_linear(&self) -> Outputs {
        let x = self.input(0)?;
        let t = match self.optional(2) {
            Some(zp) => zp.elem_type,
            None => match self.int("output_dtype", 0) {
                0 => UINT8,
                t => t as i32,
            },
        };
        one(Info::new(t, x.dims.clone()))
    }

    pub(super) fn dynamic_quantize_linear(&self) -> Outputs {
        let x = self.input(0)?;
        Ok(vec![
            Ok(Info::new(UINT8, x.dims.clone())),
            Ok(Info::new(FLOAT, vec![])),
            Ok(Info::new(UINT8, vec![])),
        ])
    }

    pub(super) fn microsoft(&self, op: &str) -> Outputs {
        match op {
            "QLinearAdd" | "QLinearMul" => {
                let (a, b) = (self.input(0)?, self.input(3)?);
                let t = self.optional(7).map_or(a.elem_type, |zp| zp.elem_type);
                one(Info::new(t, broadcast(&[&a.dims, &b.dims])?))
            }
            "QGemm" => {
                let (a, b) = (self.input(0)?, self.input(3)?);
                let t = match (self.optional(7), self.optional(8)) {
                    (None, _) => FLOAT,
                    (Some(_), Some(zp)) => zp.elem_type,
                    (Some(_), None) => a.elem_type,
                };
                self.gemm(a, b, t)
            }
            "QLinearGlobalAveragePool" => {
                let x = self.input(0)?;
                if x.rank() < 3 {
                    return Err(format!("the input has rank {}, below 3", x.rank()));
                }
                let mut dims = x.dims.clone();
                let spatial = if self.int("channels_last", 0) != 0 {
                    1..x.rank() - 1
                } else {
                    2..x.rank()
                };
                for d in &mut dims[spatial] {
                    *d = 1;
                }
                let t = self.optional(4).map_or(x.elem_type, |zp| zp.elem_type);
                one(Info::new(t, dims))
            }
            _ => Err("memplan does not infer the shapes of this com.microsoft operator".to_owned()),
        }
    }
}
