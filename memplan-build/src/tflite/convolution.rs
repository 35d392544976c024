//! The lowering of TFLite's windows and products: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and
//! the two pools: their geometry
//! (padding as TFLite's `ComputePaddingHeightWidth`), their quantization (per-channel
//! multipliers and shifts as LiteRT's `PopulateConvolutionQuantizationParams`), hybrid
//! (int8-weight) forms, and their checks.

use memplan_kernels::geometry;

use super::*;

impl Lower<'_> {
    /// Lowers AVERAGE_POOL_2D and MAX_POOL_2D into `attrs` and `inputs`; the kernel it runs.
    pub(super) fn lower_pool<'o>(
        &mut self,
        op: &'o Operator,
        out: usize,
        inputs: &mut Vec<OpInput>,
        attrs: &mut Attrs,
    ) -> Result<&'o str, String> {
        let input = |i: usize| input_of(op, i);
        let x = input(0)?;
        let Opts::Pool2D {
            padding,
            stride,
            filter,
            activation,
        } = op.options
        else {
            return Err("it has no Pool2DOptions".to_owned());
        };
        at_least_one("stride", stride)?;
        at_least_one("filter", filter)?;
        if let &[_, h, w, _] = self.shape(x) {
            // The kernel visits every tap of a window, inside the input or not; a
            // window more than twice its input reads no more of it.
            if filter[0] > 2 * h + 1 || filter[1] > 2 * w + 1 {
                return Err(format!(
                    "its window {} x {} is larger than its {h} x {w} input padded on both sides ({} x {}): the taps outside the input are never read, but every output would visit each of them, so the run would take time in proportion to the window\n  = help: the file is corrupt; convert the model again",
                    filter[0],
                    filter[1],
                    2 * h + 1,
                    2 * w + 1
                ));
            }
        }
        let [pad_top, pad_left] = padding_of(
            self.shape(x),
            self.shape(out),
            filter,
            stride,
            [1, 1],
            padding,
        )?;
        for (name, v) in [
            ("filter_h", filter[0]),
            ("filter_w", filter[1]),
            ("stride_h", stride[0]),
            ("stride_w", stride[1]),
            ("pad_top", pad_top),
            ("pad_left", pad_left),
        ] {
            attr_int(attrs, name, v as i64);
        }
        if self.element(x) == ElementType::I8 {
            let (qi, qo) = (self.q(x)?, self.q(out)?);
            if qi.scale != qo.scale || qi.zero_point != qo.zero_point {
                return Err(
                    "an int8 pool must have the same quantization in and out (as TFLite requires)"
                        .to_owned(),
                );
            }
            // TFLite's int8 average sums a window's inputs in int32 (and so does the
            // kernel memplan runs): about 2^24 of them reach its limit.
            if op.name == "AVERAGE_POOL_2D"
                && let &[_, h, w, _] = self.shape(x)
            {
                let taps = (filter[0] as u64)
                    .min(h as u64)
                    .saturating_mul((filter[1] as u64).min(w as u64));
                if taps > MAX_INT8_AVERAGE_TAPS {
                    return Err(format!(
                        "its int8 average window reads up to {taps} inputs ({} x {} of its {h} x {w} input), which it sums in int32 as TFLite does: past {MAX_INT8_AVERAGE_TAPS} of them the sum, rounded, overflows\n  = help: LiteRT's kernel overflows on it too; use a float32 model for this pool, or a smaller window",
                        (filter[0] as u64).min(h as u64),
                        (filter[1] as u64).min(w as u64)
                    ));
                }
            }
        }
        self.activation(activation, out, attrs)?;
        inputs.push(self.operand(x)?);
        Ok(op.name)
    }

    pub(super) fn conv(
        &mut self,
        op: &Operator,
        out: usize,
        inputs: &mut Vec<OpInput>,
        attrs: &mut Attrs,
    ) -> Result<(), String> {
        let depthwise = op.name == "DEPTHWISE_CONV_2D";
        let x = op
            .inputs
            .first()
            .copied()
            .flatten()
            .ok_or("input 0 is missing")?;
        let f = op
            .inputs
            .get(1)
            .copied()
            .flatten()
            .ok_or("the filter is missing")?;
        let bias = op.inputs.get(2).copied().flatten();
        let (padding, stride, dilation, activation) = match op.options {
            Opts::Conv2D {
                padding,
                stride,
                dilation,
                activation,
            }
            | Opts::DepthwiseConv2D {
                padding,
                stride,
                dilation,
                activation,
                ..
            } => (padding, stride, dilation, activation),
            _ => return Err("it has no convolution options".to_owned()),
        };
        let (xs, fs, os) = (self.shape(x), self.shape(f), self.shape(out));
        if xs.len() != 4 || fs.len() != 4 || os.len() != 4 {
            return Err(format!(
                "input {xs:?}, filter {fs:?} and output {os:?} must be 4-D (NHWC)"
            ));
        }
        if self.graph.tensors[f].data.is_none() {
            return Err("the filter must be a constant".to_owned());
        }
        let oc = os[3];
        at_least_one("stride", stride)?;
        at_least_one("dilation", dilation)?;
        let (filter_channels, shape) = if depthwise {
            (fs[3], "[1, height, width, output channels]")
        } else {
            (fs[0], "[output channels, height, width, input channels]")
        };
        if filter_channels != oc || (depthwise && fs[0] != 1) {
            return Err(format!(
                "the filter `{}` {fs:?} does not fit the output `{}` {os:?}: a filter is {shape}\n  = help: the file is corrupt; convert the model again",
                self.name(f),
                self.name(out)
            ));
        }
        if let Some(b) = bias {
            self.bias(b, oc, "output channels")?;
        }
        let [pad_top, pad_left] = padding_of(xs, os, [fs[1], fs[2]], stride, dilation, padding)?;
        for (name, v) in [
            ("stride_h", stride[0]),
            ("stride_w", stride[1]),
            ("dilation_h", dilation[0]),
            ("dilation_w", dilation[1]),
            ("pad_top", pad_top),
            ("pad_left", pad_left),
        ] {
            attr_int(attrs, name, v as i64);
        }
        if depthwise {
            if xs[3] == 0 || oc % xs[3] != 0 {
                return Err(format!(
                    "output channels {oc} are not a multiple of the input's {}",
                    xs[3]
                ));
            }
            attr_int(attrs, "depth_multiplier", (oc / xs[3]) as i64);
        }
        inputs.push(self.operand(x)?);
        inputs.push(self.operand(f)?);
        inputs.push(match bias {
            Some(b) => self.operand(b)?,
            None => OpInput::Absent,
        });
        match (self.element(x), self.element(f), self.element(out)) {
            (ElementType::F32, ElementType::F32, ElementType::F32) => {}
            (ElementType::F32, ElementType::I8, ElementType::F32) => {
                // Hybrid (dynamic-range) model: one filter scale, symmetric.
                let q = self.graph.tensors[f]
                    .quantization
                    .as_ref()
                    .ok_or("the int8 filter has no quantization")?;
                positive_scales(&self.name(f), &q.scale)?;
                let all_same = q.scale.iter().all(|&s| s == q.scale[0]);
                if depthwise || !all_same || q.zero_point.iter().any(|&z| z != 0) {
                    return Err("this hybrid convolution (float32 input, int8 filter) is not supported: memplan runs hybrid CONV_2D with one symmetric filter scale\n  = help: convert the model with full int8 quantization, or without weight quantization".to_owned());
                }
                if dilation != [1, 1] {
                    return Err("a hybrid CONV_2D with dilation is not supported".to_owned());
                }
                attr_float(attrs, "filter_scale", q.scale[0]);
            }
            (ElementType::I8, ElementType::I8, ElementType::I8) => {
                let (qi, qo) = (self.q(x)?, self.q(out)?);
                let fq = self.graph.tensors[f]
                    .quantization
                    .as_ref()
                    .ok_or("the int8 filter has no quantization")?;
                positive_scales(&self.name(f), &fq.scale)?;
                if !(fq.scale.len() == 1 || fq.scale.len() == oc) {
                    return Err(format!(
                        "the filter has {} scales for {oc} output channels",
                        fq.scale.len()
                    ));
                }
                if let Some(b) = bias
                    && self.element(b) != ElementType::I32
                {
                    return Err(format!(
                        "an int8 convolution's bias must be INT32, found {}",
                        self.element(b).name()
                    ));
                }
                let (mult, shift) = per_channel(qi.scale, &fq.scale, qo.scale, oc);
                inputs.push(self.i32s(&format!("{} multipliers", self.name(f)), &mult)?);
                inputs.push(self.i32s(&format!("{} shifts", self.name(f)), &shift)?);
                attr_int(attrs, "input_offset", -i64::from(qi.zero_point));
                attr_int(attrs, "output_offset", i64::from(qo.zero_point));
            }
            (a, b, o) => {
                return Err(format!(
                    "input {}, filter {} and output {} is not a supported combination (float32, int8, or float32 with int8 weights)",
                    a.name(),
                    b.name(),
                    o.name()
                ));
            }
        }
        self.activation(activation, out, attrs)
    }

    pub(super) fn fully_connected(
        &mut self,
        op: &Operator,
        out: usize,
        inputs: &mut Vec<OpInput>,
        attrs: &mut Attrs,
    ) -> Result<(), String> {
        let x = op
            .inputs
            .first()
            .copied()
            .flatten()
            .ok_or("input 0 is missing")?;
        let f = op
            .inputs
            .get(1)
            .copied()
            .flatten()
            .ok_or("the weights are missing")?;
        let bias = op.inputs.get(2).copied().flatten();
        let Opts::FullyConnected {
            activation,
            default_weights_format,
            asymmetric_quantize_inputs,
            ..
        } = op.options
        else {
            return Err("it has no FullyConnectedOptions".to_owned());
        };
        if !default_weights_format {
            return Err("shuffled weights (SHUFFLED4x16INT8) are not supported".to_owned());
        }
        let fs = self.shape(f);
        if fs.len() != 2 {
            return Err(format!(
                "the weights have shape {fs:?}, expected [units, depth]"
            ));
        }
        let units = fs[0];
        let (depth, total) = (fs[1], self.graph.tensors[x].elements());
        if depth == 0 || total % depth != 0 {
            return Err(format!(
                "its input `{}` {:?} is not a whole number of rows of the weights' depth {depth}\n  = help: the file is corrupt; convert the model again",
                self.name(x),
                self.shape(x)
            ));
        }
        if Some(self.graph.tensors[out].elements()) != (total / depth).checked_mul(units) {
            return Err(format!(
                "its output `{}` {:?} is not {} rows of {units} units\n  = help: the file is corrupt; convert the model again",
                self.name(out),
                self.shape(out),
                total / depth
            ));
        }
        if let Some(b) = bias {
            self.bias(b, units, "units")?;
        }
        inputs.push(self.operand(x)?);
        inputs.push(self.operand(f)?);
        inputs.push(match bias {
            Some(b) => self.operand(b)?,
            None => OpInput::Absent,
        });
        match (self.element(x), self.element(f), self.element(out)) {
            (ElementType::F32, ElementType::F32, ElementType::F32) => {}
            (ElementType::F32, ElementType::I8, ElementType::F32) => {
                let q = self.graph.tensors[f]
                    .quantization
                    .as_ref()
                    .ok_or("the int8 weights have no quantization")?;
                positive_scales(&self.name(f), &q.scale)?;
                if asymmetric_quantize_inputs || !q.per_tensor() || q.zero_point0() != 0 {
                    return Err("this hybrid FULLY_CONNECTED is not supported: memplan runs it with one symmetric weight scale and symmetric input quantization".to_owned());
                }
                attr_float(attrs, "filter_scale", q.scale0());
            }
            (ElementType::I8, ElementType::I8, ElementType::I8) => {
                let (qi, qo) = (self.q(x)?, self.q(out)?);
                let fq = self.graph.tensors[f]
                    .quantization
                    .as_ref()
                    .ok_or("the int8 weights have no quantization")?;
                positive_scales(&self.name(f), &fq.scale)?;
                if !(fq.scale.len() == 1 || fq.scale.len() == units) {
                    return Err(format!(
                        "the weights have {} scales for {units} units",
                        fq.scale.len()
                    ));
                }
                let (mult, shift) = per_channel(qi.scale, &fq.scale, qo.scale, fq.scale.len());
                inputs.push(self.i32s(&format!("{} multipliers", self.name(f)), &mult)?);
                inputs.push(self.i32s(&format!("{} shifts", self.name(f)), &shift)?);
                attr_int(attrs, "input_offset", -i64::from(qi.zero_point));
                attr_int(
                    attrs,
                    "filter_offset",
                    -i64::from(self.weight_zero_point(f)?),
                );
                attr_int(attrs, "output_offset", i64::from(qo.zero_point));
            }
            (a, b, o) => {
                return Err(format!(
                    "input {}, weights {} and output {} is not a supported combination",
                    a.name(),
                    b.name(),
                    o.name()
                ));
            }
        }
        self.activation(activation, out, attrs)
    }
}

/// The multipliers and shifts of `input_scale * filter_scale[c] / output_scale`, in f64 as
/// LiteRT's `PopulateConvolutionQuantizationParams` (and, for one scale,
/// `GetQuantizedConvolutionMultipler`) computes them.
pub(super) fn per_channel(
    input: f32,
    filter: &[f32],
    output: f32,
    channels: usize,
) -> (Vec<i32>, Vec<i32>) {
    (0..channels)
        .map(|c| {
            let scale = if filter.len() == 1 {
                filter[0]
            } else {
                filter[c]
            };
            quantize_multiplier(f64::from(input) * f64::from(scale) / f64::from(output))
        })
        .unzip()
}

/// The padding before (top, left) of a window over `xs` (NHWC) giving `os`, as TFLite's
/// `ComputePaddingHeightWidth`; the output size must be the one TFLite computes.
pub(super) fn padding_of(
    xs: &[usize],
    os: &[usize],
    filter: [usize; 2],
    stride: [usize; 2],
    dilation: [usize; 2],
    padding: Padding,
) -> Result<[usize; 2], String> {
    if xs.len() != 4 || os.len() != 4 {
        return Err(format!("input {xs:?} and output {os:?} must be 4-D (NHWC)"));
    }
    let mut pads = [0; 2];
    for a in 0..2 {
        let (input, output) = (xs[1 + a], os[1 + a]);
        let rule = match padding {
            Padding::Same => geometry::Padding::SameUpper,
            Padding::Valid => geometry::Padding::Explicit { begin: 0, end: 0 },
        };
        // A zero stride or dilation reads as 1, as TFLite's kernels read it.
        let window = geometry::axis(
            input as u64,
            filter[a].max(1) as u64,
            stride[a].max(1) as u64,
            dilation[a].max(1) as u64,
            rule,
            false,
        )
        .map_err(|e| {
            format!(
                "{e} on axis {}\n  = help: the file is corrupt or its output is empty; convert the model again",
                1 + a
            )
        })?;
        if window.output != output as u64 {
            return Err(format!(
                "the output's size {output} on axis {} is not the {} that {padding:?} padding gives",
                1 + a,
                window.output
            ));
        }
        pads[a] = usize::try_from(window.begin).map_err(|_| {
            format!(
                "padding of {} on axis {} is more than memory holds\n  = help: the file is corrupt; convert the model again",
                window.begin,
                1 + a
            )
        })?;
    }
    Ok(pads)
}
