//! Reading a `.tflite` flatbuffer into a [`Graph`]: every check on what the file holds.

use super::*;

/// The builtin operators' names by code, from the schema itself (`enum BuiltinOperator`).
pub fn builtin_name(code: i32) -> Option<&'static str> {
    builtin_names()
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, name)| *name)
}

pub(crate) fn builtin_names() -> &'static [(i32, &'static str)] {
    builtin_names::BUILTIN_NAMES
}

pub(crate) fn options_name(options: &fb::BuiltinOptionsRef<'_>) -> String {
    // The variant's name is the options table's (`Conv2DOptions(..)` in the Debug form). The
    // Debug form is cut at its `(`: the whole table printed, its vectors included, for every
    // operator sharing it would take time quadratic in the file.
    struct Name(String);
    impl fmt::Write for Name {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            match s.find('(') {
                Some(end) => {
                    self.0.push_str(&s[..end]);
                    Err(fmt::Error)
                }
                None if self.0.len() + s.len() > 64 => Err(fmt::Error),
                None => {
                    self.0.push_str(s);
                    Ok(())
                }
            }
        }
    }
    let mut name = Name(String::new());
    let _ = fmt::write(&mut name, format_args!("{options:?}"));
    if name.0.is_empty() {
        "options".to_owned()
    } else {
        name.0
    }
}

/// Reads subgraph 0 of the TFLite flatbuffer in `bytes`; `file` names it in messages.
///
/// What it copies out of the file is bounded by the file's length (see [`Graph::held_bytes`]):
/// constants share one copy of the file's bytes ([`Data`]), and every list copied counts
/// against the budget.
///
/// # Errors
/// A file that is not TFLite or is truncated, a model without subgraphs, a variable or sparse
/// tensor, a dynamic shape, an operand out of range, a file that names the same lists or bytes
/// so often that copying them would exceed the budget: each named, with what to do.
pub fn read(file: &str, bytes: &[u8]) -> Result<Graph, Error> {
    let not_tflite = |why: &str, help: &str| {
        fail(format!(
            "`{file}` is not a TensorFlow Lite model: {why}\n  = help: {help}"
        ))
    };
    if bytes.len() < 8 {
        return not_tflite(
            "it is shorter than a flatbuffer header",
            "convert the model again (for Keras: `tf.lite.TFLiteConverter`)",
        );
    }
    if &bytes[4..8] != b"TFL3" {
        return not_tflite(
            "it does not have the `TFL3` file identifier",
            "convert the model to TensorFlow Lite first (`tf.lite.TFLiteConverter`), or pass an ONNX file by its `.onnx` name",
        );
    }
    let bad = |e: planus::Error| Error {
        message: format!(
            "`{file}` is not a valid TensorFlow Lite flatbuffer: {e}\n  = help: the file may be truncated or corrupt; convert or download it again"
        ),
    };
    let model = fb::ModelRef::read_as_root(bytes).map_err(bad)?;
    let mut budget = Budget::new(file, bytes.len());
    let version = model.version().map_err(bad)?;
    let description = model.description().map_err(bad)?;
    if let Some(d) = description {
        budget.take(d.len(), 1, || "the model's description".to_owned())?;
    }
    let description = description.map(str::to_owned);
    // The file's bytes, copied once when the first constant needs them.
    let mut shared: Option<Arc<[u8]>> = None;
    let codes = model.operator_codes().map_err(bad)?;
    let buffers = model.buffers().map_err(bad)?;
    let Some(subgraphs) = model.subgraphs().map_err(bad)? else {
        return not_tflite("it has no subgraphs", "convert the model again");
    };
    let Some(graph) = subgraphs.iter().next() else {
        return not_tflite("it has no subgraphs", "convert the model again");
    };
    let graph = graph.map_err(bad)?;
    let tensors_fb = graph.tensors().map_err(bad)?;
    let count = tensors_fb.map_or(0, |t| t.len());
    let index_of = |i: i32, what: &str| -> Result<usize, Error> {
        usize::try_from(i)
            .ok()
            .filter(|&i| i < count)
            .ok_or_else(|| Error {
                message: format!(
                    "`{file}`: {what} names tensor {i}, but subgraph 0 has {count} tensors\n  = help: the file is corrupt; convert the model again"
                ),
            })
    };

    // Tensors.
    budget.take(count, size_of::<TensorInfo>(), || {
        format!("subgraph 0's {count} tensors")
    })?;
    let mut tensors = Vec::with_capacity(count);
    if let Some(list) = tensors_fb {
        for (index, tensor) in list.iter().enumerate() {
            let tensor = tensor.map_err(bad)?;
            let name = tensor.name().map_err(bad)?.unwrap_or("");
            budget.take(name.len(), 1, || format!("the name of tensor {index}"))?;
            let name = name.to_owned();
            let label = if name.is_empty() {
                format!("tensor {index}")
            } else {
                format!("tensor `{name}`")
            };
            if tensor.is_variable().map_err(bad)? {
                return fail(format!(
                    "`{file}`: {label} is a variable (`is_variable`: state kept from one run to the next), which memplan does not plan\n  = help: convert the model without variables (for an RNN or LSTM, unroll it or convert with `experimental_enable_resource_variables=False`)"
                ));
            }
            if tensor.sparsity().map_err(bad)?.is_some() {
                return fail(format!(
                    "`{file}`: {label} is sparse, which memplan does not read\n  = help: convert the model without sparsity (`tf.lite.Optimize.EXPERIMENTAL_SPARSITY` off)"
                ));
            }
            let element = ElementType::of(tensor.type_().map_err(bad)?);
            let mut shape = Vec::new();
            if let Some(dims) = tensor.shape().map_err(bad)? {
                budget.take(dims.len(), size_of::<usize>(), || {
                    format!("the shape of {label}")
                })?;
                for (axis, d) in dims.iter().enumerate() {
                    match usize::try_from(d) {
                        Ok(d) => shape.push(d),
                        Err(_) => {
                            return fail(format!(
                                "`{file}`: {label} has a dynamic shape (size {d} on axis {axis})\n  = help: memplan plans static shapes; convert the model with a fixed input shape (for Keras: `tf.keras.Input(shape=..., batch_size=1)`)"
                            ));
                        }
                    }
                }
            }
            // Every size computed from the shape later (elements, bytes) fits in int64.
            let width = element.dtype().map_or(1, DType::size);
            let size = shape
                .iter()
                .try_fold(width, |n, &d| n.checked_mul(d as u64))
                .filter(|&n| i64::try_from(n).is_ok() && usize::try_from(n).is_ok());
            if size.is_none() {
                return fail(format!(
                    "`{file}`: {label} has shape {shape:?}, whose size in bytes overflows\n  = help: the file is corrupt; convert the model again"
                ));
            }
            let quantization = match tensor.quantization().map_err(bad)? {
                None => None,
                Some(q) => {
                    let scale = q.scale().map_err(bad)?;
                    let zero_point = q.zero_point().map_err(bad)?;
                    budget.take(scale.map_or(0, |v| v.len()), size_of::<f32>(), || {
                        format!("the scales of {label}")
                    })?;
                    budget.take(zero_point.map_or(0, |v| v.len()), size_of::<i64>(), || {
                        format!("the zero points of {label}")
                    })?;
                    let scale: Vec<f32> = scale.map(|v| v.iter().collect()).unwrap_or_default();
                    let zero_point: Vec<i64> =
                        zero_point.map(|v| v.iter().collect()).unwrap_or_default();
                    if q.details().map_err(bad)?.is_some() {
                        return fail(format!(
                            "`{file}`: {label} uses custom quantization (`QuantizationDetails`), which memplan does not implement\n  = help: convert with the default (affine) quantization"
                        ));
                    }
                    // As LiteRT checks an affine quantization: the quantized dimension is an
                    // axis of the tensor, with one scale per index along it, and as many zero
                    // points as scales (or a single one).
                    let dimension = q.quantized_dimension().map_err(bad)?;
                    let corrupt = |why: String| {
                        fail(format!(
                            "`{file}`: {label} {why}\n  = help: the file is corrupt; convert the model again"
                        ))
                    };
                    let Ok(axis) = usize::try_from(dimension) else {
                        return corrupt(format!(
                            "has quantized dimension {dimension}, which is negative"
                        ));
                    };
                    if !shape.is_empty() && axis >= shape.len() {
                        return corrupt(format!(
                            "has quantized dimension {axis}, outside its shape {shape:?}"
                        ));
                    }
                    if scale.len() > 1 && shape.get(axis) != Some(&scale.len()) {
                        return corrupt(format!(
                            "has {} scales along quantized dimension {axis}, but its shape is {shape:?}",
                            scale.len()
                        ));
                    }
                    if zero_point.len() > 1 && zero_point.len() != scale.len() {
                        return corrupt(format!(
                            "has {} zero points for {} scales",
                            zero_point.len(),
                            scale.len()
                        ));
                    }
                    (!scale.is_empty()).then_some(Quantization {
                        scale,
                        zero_point,
                        axis,
                    })
                }
            };
            let buffer = tensor.buffer().map_err(bad)? as usize;
            let mut data = None;
            if buffer != 0 {
                let Some(list) = &buffers else {
                    return fail(format!(
                        "`{file}`: {label} names buffer {buffer}, but the file has no buffers\n  = help: the file is corrupt; convert the model again"
                    ));
                };
                let Some(b) = list.iter().nth(buffer) else {
                    return fail(format!(
                        "`{file}`: {label} names buffer {buffer}, but the file has {} buffers\n  = help: the file is corrupt; convert the model again",
                        list.len()
                    ));
                };
                let b = b.map_err(bad)?;
                let (offset, size) = (b.offset().map_err(bad)?, b.size().map_err(bad)?);
                let bytes_of = if offset > 1 {
                    // A model over 2 GB keeps its buffers after the flatbuffer.
                    let start = usize::try_from(offset).unwrap_or(usize::MAX);
                    let end = start.saturating_add(usize::try_from(size).unwrap_or(usize::MAX));
                    match bytes.get(start..end) {
                        Some(slice) => Some(slice),
                        None => {
                            return fail(format!(
                                "`{file}`: the data of {label} (bytes {start}..{end}) is past the end of the file ({} bytes)\n  = help: the file is truncated; download or convert it again",
                                bytes.len()
                            ));
                        }
                    }
                } else {
                    b.data().map_err(bad)?
                };
                if let Some(slice) = bytes_of.filter(|s| !s.is_empty()) {
                    // Where the slice is in the file (the flatbuffer's data vectors are in it).
                    let start = (slice.as_ptr() as usize).wrapping_sub(bytes.as_ptr() as usize);
                    let range = start..start.saturating_add(slice.len());
                    if bytes.get(range.clone()) != Some(slice) {
                        return fail(format!(
                            "internal error: the data of {label} is not in the file's bytes; please report this"
                        ));
                    }
                    let file_bytes = match &shared {
                        Some(file_bytes) => Arc::clone(file_bytes),
                        None => {
                            budget.take(bytes.len(), 1, || {
                                "a copy of the file's bytes for its constants".to_owned()
                            })?;
                            Arc::clone(shared.insert(Arc::from(bytes)))
                        }
                    };
                    data = Some(Data::new(file_bytes, range));
                }
            }
            tensors.push(TensorInfo {
                index,
                name,
                element,
                shape,
                quantization,
                data,
            });
        }
    }

    // Operators.
    let mut operators = Vec::new();
    if let Some(list) = graph.operators().map_err(bad)? {
        budget.take(list.len(), size_of::<Operator>(), || {
            format!("subgraph 0's {} operators", list.len())
        })?;
        for (index, op) in list.iter().enumerate() {
            let op = op.map_err(bad)?;
            let opcode = op.opcode_index().map_err(bad)? as usize;
            let Some(code_ref) = codes.and_then(|c| c.iter().nth(opcode)) else {
                return fail(format!(
                    "`{file}`: operator {index} names operator code {opcode}, which the file does not list\n  = help: the file is corrupt; convert the model again"
                ));
            };
            let code_ref = code_ref.map_err(bad)?;
            let deprecated = i32::from(code_ref.deprecated_builtin_code().map_err(bad)?);
            let code = match code_ref.builtin_code() {
                Ok(c) => (c as i32).max(deprecated),
                Err(_) => {
                    return fail(format!(
                        "`{file}`: operator {index} has a builtin operator code that TFLite's schema (as of this memplan) does not define\n  = help: the model uses an operator newer than memplan's copy of the schema; it is not supported"
                    ));
                }
            };
            let name = builtin_name(code).unwrap_or("UNKNOWN");
            let custom = if code == 32 {
                let custom = code_ref.custom_code().map_err(bad)?.unwrap_or("");
                budget.take(custom.len(), 1, || {
                    format!("the custom name of operator {index}")
                })?;
                Some(custom.to_owned())
            } else {
                None
            };
            let version = code_ref.version().map_err(bad)?;
            let mut inputs = Vec::new();
            if let Some(list) = op.inputs().map_err(bad)? {
                budget.take(list.len(), size_of::<Option<usize>>(), || {
                    format!("the inputs of operator {index} ({name})")
                })?;
                for i in list.iter() {
                    inputs.push(if i < 0 {
                        None
                    } else {
                        Some(index_of(i, &format!("operator {index} ({name})"))?)
                    });
                }
            }
            let mut outputs = Vec::new();
            if let Some(list) = op.outputs().map_err(bad)? {
                budget.take(list.len(), size_of::<usize>(), || {
                    format!("the outputs of operator {index} ({name})")
                })?;
                for i in list.iter() {
                    outputs.push(index_of(i, &format!("operator {index} ({name})"))?);
                }
            }
            let options = match op.builtin_options().map_err(bad)? {
                None => Options::None,
                Some(o) => decode_options(&o).map_err(bad)?,
            };
            let listed = match &options {
                Options::Reshape {
                    new_shape: Some(list),
                }
                | Options::Squeeze { dims: list } => list.len(),
                Options::Other(name) => name.len(),
                _ => 0,
            };
            budget.take(listed, size_of::<i32>(), || {
                format!("the options of operator {index} ({name})")
            })?;
            operators.push(Operator {
                index,
                code,
                name,
                custom,
                version,
                inputs,
                outputs,
                options,
            });
        }
    }
    let mut list = |v: Option<planus::Vector<'_, i32>>, what: &str| -> Result<Vec<usize>, Error> {
        budget.take(v.map_or(0, |v| v.len()), size_of::<usize>(), || {
            what.to_owned()
        })?;
        v.map(|v| v.iter().map(|i| index_of(i, what)).collect())
            .unwrap_or(Ok(Vec::new()))
    };
    let inputs = list(graph.inputs().map_err(bad)?, "the graph's input list")?;
    let outputs = list(graph.outputs().map_err(bad)?, "the graph's output list")?;
    Ok(Graph {
        version,
        description,
        subgraphs: subgraphs.len(),
        tensors,
        operators,
        inputs,
        outputs,
        file_len: bytes.len(),
        held_bytes: budget.used(),
    })
}

pub(crate) fn usize_of(v: i32) -> usize {
    usize::try_from(v).unwrap_or(0)
}

pub(crate) fn decode_options(o: &fb::BuiltinOptionsRef<'_>) -> Result<Options, planus::Error> {
    use fb::BuiltinOptionsRef as O;
    Ok(match o {
        O::Conv2DOptions(c) => Options::Conv2D {
            padding: Padding::of(c.padding()?),
            stride: [usize_of(c.stride_h()?), usize_of(c.stride_w()?)],
            dilation: [
                usize_of(c.dilation_h_factor()?),
                usize_of(c.dilation_w_factor()?),
            ],
            activation: Activation::of(c.fused_activation_function()?),
        },
        O::DepthwiseConv2DOptions(c) => Options::DepthwiseConv2D {
            padding: Padding::of(c.padding()?),
            stride: [usize_of(c.stride_h()?), usize_of(c.stride_w()?)],
            dilation: [
                usize_of(c.dilation_h_factor()?),
                usize_of(c.dilation_w_factor()?),
            ],
            depth_multiplier: c.depth_multiplier()?,
            activation: Activation::of(c.fused_activation_function()?),
        },
        O::Pool2DOptions(p) => Options::Pool2D {
            padding: Padding::of(p.padding()?),
            stride: [usize_of(p.stride_h()?), usize_of(p.stride_w()?)],
            filter: [usize_of(p.filter_height()?), usize_of(p.filter_width()?)],
            activation: Activation::of(p.fused_activation_function()?),
        },
        O::FullyConnectedOptions(f) => Options::FullyConnected {
            activation: Activation::of(f.fused_activation_function()?),
            keep_num_dims: f.keep_num_dims()?,
            default_weights_format: matches!(
                f.weights_format()?,
                fb::FullyConnectedOptionsWeightsFormat::Default
            ),
            asymmetric_quantize_inputs: f.asymmetric_quantize_inputs()?,
        },
        O::SoftmaxOptions(s) => Options::Softmax { beta: s.beta()? },
        O::ConcatenationOptions(c) => Options::Concatenation {
            axis: c.axis()?,
            activation: Activation::of(c.fused_activation_function()?),
        },
        O::AddOptions(a) => Options::Arithmetic {
            activation: Activation::of(a.fused_activation_function()?),
        },
        O::SubOptions(a) => Options::Arithmetic {
            activation: Activation::of(a.fused_activation_function()?),
        },
        O::MulOptions(a) => Options::Arithmetic {
            activation: Activation::of(a.fused_activation_function()?),
        },
        O::DivOptions(a) => Options::Arithmetic {
            activation: Activation::of(a.fused_activation_function()?),
        },
        O::ReshapeOptions(r) => Options::Reshape {
            new_shape: r.new_shape()?.map(|v| v.iter().collect()),
        },
        O::ReducerOptions(r) => Options::Reducer {
            keep_dims: r.keep_dims()?,
        },
        O::SqueezeOptions(s) => Options::Squeeze {
            dims: s
                .squeeze_dims()?
                .map(|v| v.iter().collect())
                .unwrap_or_default(),
        },
        O::LeakyReluOptions(l) => Options::LeakyRelu { alpha: l.alpha()? },
        O::StridedSliceOptions(o) => Options::StridedSlice {
            begin_mask: o.begin_mask()?,
            end_mask: o.end_mask()?,
            ellipsis_mask: o.ellipsis_mask()?,
            new_axis_mask: o.new_axis_mask()?,
            shrink_axis_mask: o.shrink_axis_mask()?,
            offset: o.offset()?,
        },
        O::BatchMatMulOptions(o) => Options::BatchMatMul {
            adj_x: o.adj_x()?,
            adj_y: o.adj_y()?,
        },
        other => Options::Other(options_name(other)),
    })
}
