//! Small TFLite files written by tests (feature `fixture`): a model of a few tensors and
//! operators, built in code with the same generated schema the reader reads, so a test can make
//! exactly the hostile file it needs (an absurd zero point, a stride of 0, many tensors on one
//! buffer) without a converter.
//!
//! ```
//! # #[cfg(feature = "fixture")] {
//! use memplan_tflite::fixture::{FileBuilder, schema::TensorType};
//! let mut file = FileBuilder::new();
//! let x = file.tensor("x", TensorType::Float32, &[1, 4]);
//! let y = file.tensor("y", TensorType::Float32, &[1, 4]);
//! file.operator("RELU", &[x], &[y], None);
//! file.inputs.push(x);
//! file.outputs.push(y);
//! let graph = memplan_tflite::read("relu.tflite", &file.bytes()).unwrap();
//! assert_eq!(graph.operators[0].name, "RELU");
//! # }
//! ```

pub use crate::schema_generated::tflite as schema;

/// A model of one subgraph, written by [`FileBuilder::bytes`]. The fields are the file's lists,
/// open to a test that wants to break them (point two tensors at one buffer, name tensor 99).
#[derive(Clone, Debug, Default)]
pub struct FileBuilder {
    /// Subgraph 0's tensors.
    pub tensors: Vec<schema::Tensor>,
    /// The model's buffers; buffer 0 is the empty one TFLite reserves.
    pub buffers: Vec<schema::Buffer>,
    /// The operator codes.
    pub codes: Vec<schema::OperatorCode>,
    /// Subgraph 0's operators, in execution order.
    pub operators: Vec<schema::Operator>,
    /// Subgraph 0's inputs.
    pub inputs: Vec<i32>,
    /// Subgraph 0's outputs.
    pub outputs: Vec<i32>,
}

fn index(len: usize) -> i32 {
    i32::try_from(len).expect("a test file has fewer than 2^31 entries")
}

impl FileBuilder {
    /// An empty model with buffer 0.
    pub fn new() -> Self {
        Self {
            buffers: vec![schema::Buffer::default()],
            ..Self::default()
        }
    }

    /// The model in `bytes` (a `.tflite` file: its subgraph 0, codes and buffers), to change
    /// and write again; `None` when it is not a TFLite flatbuffer planus can read whole. A
    /// buffer's data kept after the flatbuffer (`offset`, `size`) is not carried over.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        use planus::ReadAsRoot;
        let model = schema::ModelRef::read_as_root(bytes).ok()?;
        let model = schema::Model::try_from(model).ok()?;
        let graph = model.subgraphs?.into_iter().next()?;
        Some(Self {
            tensors: graph.tensors.unwrap_or_default(),
            buffers: model.buffers.unwrap_or_default(),
            codes: model.operator_codes.unwrap_or_default(),
            operators: graph.operators.unwrap_or_default(),
            inputs: graph.inputs.unwrap_or_default(),
            outputs: graph.outputs.unwrap_or_default(),
        })
    }

    /// A tensor without data (an activation); its index.
    pub fn tensor(&mut self, name: &str, element: schema::TensorType, shape: &[i32]) -> i32 {
        self.tensors.push(schema::Tensor {
            shape: Some(shape.to_vec()),
            type_: element,
            buffer: 0,
            name: Some(name.to_owned()),
            ..schema::Tensor::default()
        });
        index(self.tensors.len() - 1)
    }

    /// A constant: a tensor with `data` (little-endian) in a buffer of its own; its index.
    pub fn constant(
        &mut self,
        name: &str,
        element: schema::TensorType,
        shape: &[i32],
        data: &[u8],
    ) -> i32 {
        let t = self.tensor(name, element, shape);
        self.buffers.push(schema::Buffer {
            data: Some(data.to_vec()),
            ..schema::Buffer::default()
        });
        self.tensors[t as usize].buffer = u32::try_from(self.buffers.len() - 1).unwrap_or(0);
        t
    }

    /// An int32 constant of shape `[values.len()]`.
    pub fn ints(&mut self, name: &str, values: &[i32]) -> i32 {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.constant(
            name,
            schema::TensorType::Int32,
            &[index(values.len())],
            &bytes,
        )
    }

    /// Quantizes tensor `t`: its scales, zero points and `quantized_dimension`.
    pub fn quantize(&mut self, t: i32, scale: &[f32], zero_point: &[i64], axis: i32) {
        self.tensors[t as usize].quantization = Some(Box::new(schema::QuantizationParameters {
            scale: Some(scale.to_vec()),
            zero_point: Some(zero_point.to_vec()),
            quantized_dimension: axis,
            ..schema::QuantizationParameters::default()
        }));
    }

    /// Appends an operator: the builtin named `builtin` (`"ADD"`) reading `inputs` (`-1` for an
    /// omitted optional one) and writing `outputs`; its index.
    ///
    /// # Panics
    /// When `builtin` is not a builtin operator's name.
    pub fn operator(
        &mut self,
        builtin: &str,
        inputs: &[i32],
        outputs: &[i32],
        options: Option<schema::BuiltinOptions>,
    ) -> usize {
        let code = crate::builtin_names()
            .iter()
            .find(|(_, name)| *name == builtin)
            .map(|&(code, _)| code)
            .unwrap_or_else(|| panic!("`{builtin}` is not a builtin operator"));
        let builtin_code = schema::BuiltinOperator::try_from(code).expect("the schema's own code");
        let opcode = match self
            .codes
            .iter()
            .position(|c| c.builtin_code == builtin_code)
        {
            Some(k) => k,
            None => {
                self.codes.push(schema::OperatorCode {
                    deprecated_builtin_code: i8::try_from(code).unwrap_or(127),
                    custom_code: None,
                    version: 1,
                    builtin_code,
                });
                self.codes.len() - 1
            }
        };
        self.operators.push(schema::Operator {
            opcode_index: u32::try_from(opcode).unwrap_or(0),
            inputs: Some(inputs.to_vec()),
            outputs: Some(outputs.to_vec()),
            builtin_options: options,
            ..schema::Operator::default()
        });
        self.operators.len() - 1
    }

    /// The flatbuffer, with the `TFL3` identifier.
    pub fn bytes(&self) -> Vec<u8> {
        let model = schema::Model {
            version: 3,
            operator_codes: Some(self.codes.clone()),
            subgraphs: Some(vec![schema::SubGraph {
                tensors: Some(self.tensors.clone()),
                inputs: Some(self.inputs.clone()),
                outputs: Some(self.outputs.clone()),
                operators: Some(self.operators.clone()),
                name: Some("main".to_owned()),
            }]),
            description: Some("written by memplan-tflite's fixture".to_owned()),
            buffers: Some(self.buffers.clone()),
            ..schema::Model::default()
        };
        // planus 1.3 writes a file identifier before the root offset rather than after it, so
        // the identifier is put in by hand: the root offset (8 bytes further on), `TFL3`, then
        // the buffer as planus wrote it (its own root offset left unread), which keeps every
        // field's 8-byte alignment.
        let plain = planus::Builder::new().finish(&model, None).to_vec();
        let root = u32::from_le_bytes([plain[0], plain[1], plain[2], plain[3]]) + 8;
        let mut bytes = Vec::with_capacity(plain.len() + 8);
        bytes.extend_from_slice(&root.to_le_bytes());
        bytes.extend_from_slice(b"TFL3");
        bytes.extend_from_slice(&plain);
        bytes
    }
}

/// One layer of [`separable_cnn_int8`]: a convolution to `channels` (depthwise or not) with a
/// `kernel x kernel` window and its stride.
struct Layer {
    depthwise: bool,
    channels: i32,
    kernel: i32,
    stride: i32,
}

/// A small depthwise-separable int8 CNN shaped like MLPerf Tiny's keyword spotter (DS-CNN):
/// an int8 `[1, height, width, channels[0]]` input, a 3 x 3 CONV_2D to `channels[1]`, then
/// DEPTHWISE_CONV_2D 3 x 3 and pointwise CONV_2D pairs (the second depthwise with stride 2, the
/// last pointwise to `channels[2]`), RELU fused, per-channel weights from `seed`. The graph's
/// output is the last convolution's. For tests of the int8 convolutions end to end.
pub fn separable_cnn_int8(height: i32, width: i32, channels: [i32; 3], seed: u64) -> FileBuilder {
    separable_cnn(height, width, channels, seed, false)
}

/// [`separable_cnn_int8`]'s network in float32: the same layers, float weights and biases from
/// `seed`. For tests of the float convolutions end to end.
pub fn separable_cnn_f32(height: i32, width: i32, channels: [i32; 3], seed: u64) -> FileBuilder {
    separable_cnn(height, width, channels, seed, true)
}

fn separable_cnn(
    height: i32,
    width: i32,
    channels: [i32; 3],
    seed: u64,
    float: bool,
) -> FileBuilder {
    use schema::{ActivationFunctionType, BuiltinOptions, Padding, TensorType};
    let element = if float {
        TensorType::Float32
    } else {
        TensorType::Int8
    };
    let mut state = seed | 1;
    let mut random = move || {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32
    };
    let mut file = FileBuilder::new();
    let [input_channels, width_1, output_channels] = channels;
    let layers = [
        Layer {
            depthwise: false,
            channels: width_1,
            kernel: 3,
            stride: 1,
        },
        Layer {
            depthwise: true,
            channels: width_1,
            kernel: 3,
            stride: 1,
        },
        Layer {
            depthwise: false,
            channels: width_1,
            kernel: 1,
            stride: 1,
        },
        Layer {
            depthwise: true,
            channels: width_1,
            kernel: 3,
            stride: 2,
        },
        Layer {
            depthwise: false,
            channels: output_channels,
            kernel: 1,
            stride: 1,
        },
    ];
    let mut shape = [1, height, width, input_channels];
    let x = file.tensor("input", element, &shape);
    if !float {
        file.quantize(x, &[0.05], &[-3], 0);
    }
    file.inputs.push(x);
    let mut current = x;
    for (l, layer) in layers.iter().enumerate() {
        let depth = shape[3];
        let up = |d: i32| (d + layer.stride - 1) / layer.stride;
        let (out_h, out_w) = (up(shape[1]), up(shape[2]));
        let out_c = layer.channels;
        let filter_shape = if layer.depthwise {
            [1, layer.kernel, layer.kernel, out_c]
        } else {
            [out_c, layer.kernel, layer.kernel, depth]
        };
        let count: i32 = filter_shape.iter().product();
        let y = if float {
            // Weights in [-0.5, 0.5), biases in [-0.1, 0.1].
            let unit = |r: u64| (r % 1024) as f32 / 1024.0 - 0.5;
            let filter_bytes: Vec<u8> = (0..count)
                .flat_map(|_| unit(random()).to_le_bytes())
                .collect();
            let filter = file.constant(
                &format!("filter_{l}"),
                element,
                &filter_shape,
                &filter_bytes,
            );
            let bias_bytes: Vec<u8> = (0..out_c)
                .flat_map(|_| (unit(random()) * 0.2).to_le_bytes())
                .collect();
            let bias = file.constant(&format!("bias_{l}"), element, &[out_c], &bias_bytes);
            shape = [1, out_h, out_w, out_c];
            let y = file.tensor(&format!("layer_{l}"), element, &shape);
            (y, filter, bias)
        } else {
            let filter_bytes: Vec<u8> = (0..count).map(|_| random() as u8).collect();
            let filter = file.constant(
                &format!("filter_{l}"),
                element,
                &filter_shape,
                &filter_bytes,
            );
            let scales: Vec<f32> = (0..out_c)
                .map(|_| 0.002 + (random() % 64) as f32 * 1e-4)
                .collect();
            let axis = if layer.depthwise { 3 } else { 0 };
            file.quantize(filter, &scales, &vec![0; scales.len()], axis);
            let bias: Vec<i32> = (0..out_c)
                .map(|_| (random() % 2001) as i32 - 1000)
                .collect();
            let bias = file.ints(&format!("bias_{l}"), &bias);
            let bias_scales: Vec<f32> = scales.iter().map(|s| s * 0.05).collect();
            file.quantize(bias, &bias_scales, &vec![0; bias_scales.len()], 0);
            shape = [1, out_h, out_w, out_c];
            let y = file.tensor(&format!("layer_{l}"), element, &shape);
            file.quantize(y, &[0.05], &[-3], 0);
            (y, filter, bias)
        };
        let (y, filter, bias) = y;
        let options = if layer.depthwise {
            BuiltinOptions::DepthwiseConv2DOptions(Box::new(schema::DepthwiseConv2DOptions {
                padding: Padding::Same,
                stride_w: layer.stride,
                stride_h: layer.stride,
                depth_multiplier: 1,
                fused_activation_function: ActivationFunctionType::Relu,
                dilation_w_factor: 1,
                dilation_h_factor: 1,
            }))
        } else {
            BuiltinOptions::Conv2DOptions(Box::new(schema::Conv2DOptions {
                padding: Padding::Same,
                stride_w: layer.stride,
                stride_h: layer.stride,
                fused_activation_function: ActivationFunctionType::Relu,
                ..schema::Conv2DOptions::default()
            }))
        };
        let builtin = if layer.depthwise {
            "DEPTHWISE_CONV_2D"
        } else {
            "CONV_2D"
        };
        file.operator(builtin, &[current, filter, bias], &[y], Some(options));
        current = y;
    }
    file.outputs.push(current);
    file
}
