//! What reading a file may hold: every list the reader copies out of the flatbuffer (names,
//! shapes, scales, zero points, operands, options) and its one copy of the file's bytes count
//! against a budget proportional to the file's length. A converter writes each of them once, so
//! a real model needs a few times its size; a hostile file can name one list or one block
//! thousands of times (every entry of a flatbuffer vector may point to the same table), and
//! copying each would need gigabytes for a file of kilobytes. Such a file is refused with a
//! message naming what exceeded the budget.

use crate::Error;

/// The budget is this many times the file's length ...
pub const BUDGET_PER_FILE_BYTE: usize = 16;

/// ... plus this many bytes (16 MiB), for the fixed costs of a small file.
pub const BUDGET_SLACK: usize = 16 << 20;

/// The bytes a reader has taken and may still take.
pub(crate) struct Budget<'f> {
    file: &'f str,
    len: usize,
    limit: usize,
    used: usize,
}

impl<'f> Budget<'f> {
    /// The budget of reading `file`, `len` bytes long.
    pub(crate) fn new(file: &'f str, len: usize) -> Self {
        Self {
            file,
            len,
            limit: len
                .saturating_mul(BUDGET_PER_FILE_BYTE)
                .saturating_add(BUDGET_SLACK),
            used: 0,
        }
    }

    /// Takes `count` items of `size` bytes each for `what` (`operator 3 (ADD)'s inputs`),
    /// before they are copied.
    pub(crate) fn take(
        &mut self,
        count: usize,
        size: usize,
        what: impl FnOnce() -> String,
    ) -> Result<(), Error> {
        let used = count
            .checked_mul(size)
            .and_then(|bytes| self.used.checked_add(bytes))
            .filter(|&used| used <= self.limit);
        match used {
            Some(used) => {
                self.used = used;
                Ok(())
            }
            None => Err(Error {
                message: format!(
                    "`{}`: reading it would hold more than {} bytes ({BUDGET_PER_FILE_BYTE} times its {} bytes, plus {} MiB) when it comes to {}\n  = help: a converter writes each tensor's data, scales and operands once; this file names the same bytes over and over (or is corrupt). Convert the model again",
                    self.file,
                    self.limit,
                    self.len,
                    BUDGET_SLACK >> 20,
                    what()
                ),
            }),
        }
    }

    /// The bytes taken so far.
    pub(crate) fn used(&self) -> usize {
        self.used
    }
}

#[cfg(test)]
mod tests {
    use planus::{Builder, Offset};

    use crate::fixture::FileBuilder;
    use crate::fixture::schema::{self, TensorType};

    /// `x -> RELU -> y`, float32 `[1, 4]`, plus `n` float32 constants of `block` bytes that all
    /// name one block after the flatbuffer (`Buffer.offset` and `size`, one buffer each).
    fn one_block_named_n_times(n: usize, block: usize) -> Vec<u8> {
        let mut file = FileBuilder::new();
        let x = file.tensor("x", TensorType::Float32, &[1, 4]);
        let y = file.tensor("y", TensorType::Float32, &[1, 4]);
        file.operator("RELU", &[x], &[y], None);
        file.inputs = vec![x];
        file.outputs = vec![y];
        let elements = i32::try_from(block / 4).unwrap();
        for k in 0..n {
            let c = file.tensor(&format!("c{k}"), TensorType::Float32, &[elements]);
            // A placeholder offset as wide as the real one (a field at its default is left out).
            file.buffers.push(schema::Buffer {
                data: None,
                offset: 1 << 40,
                size: block as u64,
            });
            file.tensors[c as usize].buffer = u32::try_from(file.buffers.len() - 1).unwrap();
        }
        let offset = file.bytes().len().div_ceil(16) * 16;
        for b in file.buffers.iter_mut().skip(1) {
            b.offset = offset as u64;
        }
        let mut bytes = file.bytes();
        assert!(bytes.len() <= offset);
        bytes.resize(offset, 0);
        bytes.extend((0..block).map(|i| i as u8));
        bytes
    }

    #[test]
    fn issue_36_tensors_naming_one_block_share_one_copy() {
        // 300 tensors on one 1 MiB block: 300 MiB if each were copied.
        let bytes = one_block_named_n_times(300, 1 << 20);
        let graph = crate::read("shared.tflite", &bytes).unwrap();
        assert_eq!(graph.file_len, bytes.len());
        assert!(
            graph.held_bytes < bytes.len() + (1 << 20),
            "held {} bytes for a file of {}",
            graph.held_bytes,
            bytes.len()
        );
        let first = graph.tensors[2].data.clone().unwrap();
        assert_eq!(first.len(), 1 << 20);
        assert_eq!(first[..3], [0, 1, 2]);
        for t in &graph.tensors[2..] {
            let data = t.data.as_ref().unwrap();
            assert_eq!(data.range(), first.range());
            assert_eq!(*data, first);
        }
    }

    /// `x -> RELU -> y`, plus `n` int8 tensors that all point to one quantization table of
    /// `scales` scales and zero points, and `n` RELUs that all point to one input list of
    /// `inputs` entries (when `inputs` is not 0).
    fn shared_tables(n: usize, scales: usize, inputs: usize) -> Vec<u8> {
        let mut b = Builder::new();
        let scale = vec![0.5f32; scales];
        let zero = vec![0i64; scales];
        let q = schema::QuantizationParameters::create(
            &mut b,
            (),
            (),
            scale.as_slice(),
            zero.as_slice(),
            (),
            0,
        );
        let mut tensors: Vec<Offset<schema::Tensor>> = Vec::new();
        let shape = [1i32, 4];
        for name in ["x", "y"] {
            tensors.push(schema::Tensor::create(
                &mut b,
                shape.as_slice(),
                TensorType::Float32,
                0u32,
                name,
                (),
                false,
                (),
                (),
                false,
                (),
            ));
        }
        // One scale per index of axis 0.
        let per_axis = [i32::try_from(scales).unwrap()];
        for _ in 0..n {
            tensors.push(schema::Tensor::create(
                &mut b,
                per_axis.as_slice(),
                TensorType::Int8,
                0u32,
                "q",
                q,
                false,
                (),
                (),
                false,
                (),
            ));
        }
        let list = vec![0i32; inputs.max(1)];
        let list = b.create_vector(list.as_slice());
        let out = b.create_vector([1i32].as_slice());
        let copies = if inputs == 0 { 1 } else { n };
        let ops: Vec<Offset<schema::Operator>> = (0..copies)
            .map(|_| {
                schema::Operator::create(
                    &mut b,
                    0u32,
                    list,
                    out,
                    (),
                    (),
                    schema::CustomOptionsFormat::Flexbuffers,
                    (),
                    (),
                    0u64,
                    0u64,
                    (),
                )
            })
            .collect();
        let codes = vec![schema::OperatorCode {
            deprecated_builtin_code: 19,
            custom_code: None,
            version: 1,
            builtin_code: schema::BuiltinOperator::Relu,
        }];
        let subgraph = schema::SubGraph::create(
            &mut b,
            tensors.as_slice(),
            [0i32].as_slice(),
            [1i32].as_slice(),
            ops.as_slice(),
            "main",
        );
        let model = schema::Model::create(
            &mut b,
            3u32,
            codes,
            [subgraph].as_slice(),
            (),
            vec![schema::Buffer::default()],
            (),
            (),
            (),
        );
        let plain = b.finish(model, None).to_vec();
        let root = u32::from_le_bytes([plain[0], plain[1], plain[2], plain[3]]) + 8;
        let mut bytes = root.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"TFL3");
        bytes.extend_from_slice(&plain);
        bytes
    }

    #[test]
    fn issue_36_shared_scales_and_operand_lists_are_copied_within_the_budget() {
        // A few tensors sharing small tables read (and are counted).
        let bytes = shared_tables(10, 16, 0);
        let graph = crate::read("small.tflite", &bytes).unwrap();
        assert_eq!(
            graph.tensors[2].quantization.as_ref().unwrap().scale.len(),
            16
        );
        assert!(graph.held_bytes >= 10 * 16 * 12, "{}", graph.held_bytes);

        // 3,000 tensors sharing one table of 20,000 scales and zero points: 720 MB to copy, from
        // a file of about 300 KB.
        let bytes = shared_tables(3000, 20_000, 0);
        assert!(bytes.len() < 400_000, "{}", bytes.len());
        let error = crate::read("scales.tflite", &bytes).unwrap_err().message;
        assert!(
            error.contains("`scales.tflite`: reading it would hold more than")
                && error.contains("(16 times its")
                && error.contains("when it comes to the scales of tensor `q`")
                && error.contains("= help:"),
            "{error}"
        );

        // 3,000 operators sharing one input list of 20,000 operands: 960 MB to copy.
        let bytes = shared_tables(3000, 1, 20_000);
        assert!(bytes.len() < 400_000, "{}", bytes.len());
        let error = crate::read("inputs.tflite", &bytes).unwrap_err().message;
        assert!(
            error.contains("reading it would hold more than")
                && error.contains("when it comes to the inputs of operator")
                && error.contains("(RELU)"),
            "{error}"
        );
    }
}
