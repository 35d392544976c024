//! Convolution and pooling geometry: `pads`, `strides`, `dilations`, `auto_pad`,
//! `output_padding`, `output_shape` and `ceil_mode` over the spatial dimensions.

use memplan_kernels::geometry::{self, Padding};

use super::node::{INT64, Info, Node, Outputs, one};

impl Node<'_> {
    /// Conv-like: input `x` and weight `w`, output type `t` (the input's when `None`).
    pub(super) fn conv(&self, x: usize, w: usize, t: Option<i32>) -> Outputs {
        let (x, w) = (self.input(x)?, self.input(w)?);
        if x.rank() < 3 || w.rank() != x.rank() {
            return Err(format!(
                "input {:?} and weight {:?} do not make a convolution (rank 3 or more, the same \
                 for both)",
                x.dims, w.dims
            ));
        }
        let kernel = match self.ints("kernel_shape") {
            Some(k) => k.iter().map(|&k| k.max(0) as u64).collect(),
            None => w.dims[2..].to_vec(),
        };
        let spatial = self.window(&x.dims[2..], &kernel, false)?;
        let mut dims = vec![x.dims[0], w.dims[0]];
        dims.extend(spatial);
        one(Info::new(t.unwrap_or(x.elem_type), dims))
    }

    pub(super) fn pool(&self) -> Outputs {
        let x = self.input(0)?;
        if x.rank() < 3 {
            return Err(format!("the input {:?} has rank below 3", x.dims));
        }
        let kernel: Vec<u64> = self
            .ints("kernel_shape")
            .ok_or("it has no kernel_shape")?
            .iter()
            .map(|&k| k.max(0) as u64)
            .collect();
        let ceil = self.int("ceil_mode", 0) != 0;
        let mut dims = x.dims[..2].to_vec();
        dims.extend(self.window(&x.dims[2..], &kernel, ceil)?);
        Ok(vec![
            Ok(Info::new(x.elem_type, dims.clone())),
            Ok(Info::new(INT64, dims)),
        ])
    }

    /// The output's spatial sizes of a window (`strides`, `dilations`, `pads`, `auto_pad`,
    /// `ceil_mode`) over `input` with `kernel`.
    fn window(&self, input: &[u64], kernel: &[u64], ceil: bool) -> Result<Vec<u64>, String> {
        let r = input.len();
        if kernel.len() != r {
            return Err(format!(
                "the kernel {kernel:?} does not have the input's {r} spatial dimensions"
            ));
        }
        let list = |name: &str, len: usize, default: i64| -> Result<Vec<i64>, String> {
            match self.ints(name) {
                Some(v) if v.len() == len => Ok(v),
                Some(v) if v.is_empty() => Ok(vec![default; len]),
                Some(v) => Err(format!("{name} {v:?} does not have {len} values")),
                None => Ok(vec![default; len]),
            }
        };
        let strides = list("strides", r, 1)?;
        let dilations = list("dilations", r, 1)?;
        let pads = list("pads", 2 * r, 0)?;
        if strides.iter().chain(&dilations).any(|&v| v <= 0) || kernel.contains(&0) {
            return Err("strides, dilations and kernel sizes must be positive".to_owned());
        }
        if pads.iter().any(|&p| p < 0) {
            return Err(format!("pads {pads:?} must not be negative"));
        }
        let auto_pad = self.text("auto_pad", "NOTSET");
        let mut out = Vec::with_capacity(r);
        for i in 0..r {
            // Each number is positive (above), so `as u64` keeps it.
            let padding = match auto_pad.as_str() {
                "NOTSET" => Padding::Explicit {
                    begin: pads[i] as u64,
                    end: pads[i + r] as u64,
                },
                "VALID" => Padding::Explicit { begin: 0, end: 0 },
                "SAME_UPPER" => Padding::SameUpper,
                "SAME_LOWER" => Padding::SameLower,
                other => return Err(format!("auto_pad {other:?} is not an ONNX value")),
            };
            let a = geometry::axis(
                input[i],
                kernel[i],
                strides[i] as u64,
                dilations[i] as u64,
                padding,
                ceil && matches!(padding, Padding::Explicit { .. }),
            )
            .map_err(|e| format!("{e} along spatial dimension {i}"))?;
            out.push(a.output);
        }
        Ok(out)
    }

    pub(super) fn conv_transpose(&self) -> Outputs {
        let (x, w) = (self.input(0)?, self.input(1)?);
        let r = x.rank().saturating_sub(2);
        if x.rank() < 3 || w.rank() != x.rank() {
            return Err(format!(
                "input {:?} and weight {:?} do not make a transposed convolution",
                x.dims, w.dims
            ));
        }
        let group = self.int("group", 1).max(1) as u64;
        let kernel: Vec<i64> = match self.ints("kernel_shape") {
            Some(k) => k,
            None => w.dims[2..].iter().map(|&d| d as i64).collect(),
        };
        if kernel.len() != r {
            return Err(format!(
                "the kernel {kernel:?} does not have the input's {r} spatial dimensions"
            ));
        }
        let channels = w.dims[1]
            .checked_mul(group)
            .ok_or_else(|| format!("group {group} is too large"))?;
        let list = |name: &str, len: usize, default: i64| -> Vec<i64> {
            self.ints(name)
                .filter(|v| v.len() == len)
                .unwrap_or_else(|| vec![default; len])
        };
        let strides = list("strides", r, 1);
        let dilations = list("dilations", r, 1);
        let pads = list("pads", 2 * r, 0);
        let out_pad = list("output_padding", r, 0);
        let mut dims = vec![x.dims[0], channels];
        match self.ints("output_shape") {
            Some(shape) => {
                // The spatial sizes (a full shape's last `r` values).
                if shape.len() < r {
                    return Err(format!("output_shape {shape:?} does not give {r} sizes"));
                }
                dims.extend(shape[shape.len() - r..].iter().map(|&d| d.max(0) as u64));
            }
            None => {
                let auto_pad = self.text("auto_pad", "NOTSET");
                for i in 0..r {
                    let n = x.dims[2 + i] as i128;
                    let o = if auto_pad.starts_with("SAME") {
                        n * strides[i] as i128
                    } else {
                        let (b, e) = if auto_pad == "VALID" {
                            (0, 0)
                        } else {
                            (pads[i] as i128, pads[i + r] as i128)
                        };
                        strides[i] as i128 * (n - 1)
                            + out_pad[i] as i128
                            + (kernel[i] as i128 - 1) * dilations[i] as i128
                            + 1
                            - b
                            - e
                    };
                    if o < 0 {
                        return Err(format!("the output's spatial size {i} would be {o}"));
                    }
                    dims.push(o as u64);
                }
            }
        }
        one(Info::new(x.elem_type, dims))
    }

    pub(super) fn global_pool(&self) -> Outputs {
        let x = self.input(0)?;
        if x.rank() < 2 {
            return Err(format!("the input has rank {}, below 2", x.rank()));
        }
        let mut dims = x.dims.clone();
        for d in &mut dims[2..] {
            *d = 1;
        }
        one(Info::new(x.elem_type, dims))
    }
}
