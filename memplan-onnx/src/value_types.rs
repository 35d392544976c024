//! Each value's dtype and static shape: the file's type information (`--dim` for symbolic
//! dimensions) checked against what shape inference says, or the inferred one.

use memplan_core::DType;

use crate::proto::{self, type_proto};
use crate::{ImportError, Importer, dtype_of, fail, node_label};

impl<'g> Importer<'g> {
    /// Dtype and static shape of value `name` as the model file writes it (a scalar as `[1]`);
    /// `what` says where it comes from, for messages.
    pub(crate) fn shape_of(
        &self,
        name: &str,
        what: &str,
    ) -> Result<(DType, Vec<u64>), ImportError> {
        let (dtype, mut dims) = self.onnx_shape_of(name, what)?;
        if dims.is_empty() {
            // A scalar: one element, written as shape [1] (the model file has no rank 0).
            dims.push(1);
        }
        Ok((dtype, dims))
    }

    /// Dtype and static ONNX shape of value `name` (`[]` for a scalar): the file's type
    /// information when it gives every dimension, else what inference says (`shapes/`); the
    /// two must agree where both exist.
    pub(crate) fn onnx_shape_of(
        &self,
        name: &str,
        what: &str,
    ) -> Result<(DType, Vec<u64>), ImportError> {
        let file = self.file;
        let inferred = self.shapes.get(name);
        let Some(info) = self.types.get(name) else {
            return match inferred {
                Some(Ok((elem_type, dims))) => self.checked(name, what, *elem_type, dims.clone()),
                Some(Err(why)) => fail(format!(
                    "`{file}`: {what} `{name}` has no type or shape information, and memplan \
                     cannot infer it: {why}\n  = help: run ONNX shape inference and save the model again (python: `onnx.save(onnx.shape_inference.infer_shapes(onnx.load(path)), path)`)"
                )),
                None => fail(format!(
                    "`{file}`: {what} `{name}` has no type or shape information\n  = help: run ONNX shape inference and save the model again (python: `onnx.save(onnx.shape_inference.infer_shapes(onnx.load(path)), path)`)"
                )),
            };
        };
        match self.declared_shape_of(name, what, info) {
            Ok((dtype, dims)) => {
                if let Some(Ok((elem_type, inferred_dims))) = inferred {
                    let inferred_dtype = dtype_of(*elem_type).ok();
                    if inferred_dtype != Some(dtype) || *inferred_dims != dims {
                        let shown = inferred_dtype.map_or_else(
                            || format!("ONNX data type {elem_type}"),
                            |d| d.name().to_owned(),
                        );
                        let node = self
                            .graph
                            .node
                            .iter()
                            .find(|n| n.output.iter().any(|o| o == name))
                            .map(|n| format!(" by node `{}` ({})", node_label(n), n.op_type))
                            .unwrap_or_default();
                        return fail(format!(
                            "`{file}`: {what} `{name}` is declared as {dims:?} of {} in the file, but its inputs make it {inferred_dims:?} of {shown}{node}\n  = help: the file's type information is stale or wrong; remove `value_info` (memplan infers it) or run ONNX shape inference again (python: `onnx.save(onnx.shape_inference.infer_shapes(onnx.load(path)), path)`)",
                            dtype.name()
                        ));
                    }
                }
                Ok((dtype, dims))
            }
            // The file leaves something unknown: inference fills it in, or says why it cannot.
            Err((mut error, true)) => match inferred {
                Some(Ok((elem_type, dims))) => self.checked(name, what, *elem_type, dims.clone()),
                Some(Err(why)) => {
                    if let Some(at) = error.message.find("\n  = help") {
                        error
                            .message
                            .insert_str(at, &format!(", and memplan cannot infer it: {why}"));
                    }
                    Err(error)
                }
                None => Err(error),
            },
            Err((error, false)) => Err(error),
        }
    }

    /// An inferred type as [`Self::onnx_shape_of`] returns it: a dtype memplan supports, at
    /// least one element, not too large.
    pub(crate) fn checked(
        &self,
        name: &str,
        what: &str,
        elem_type: i32,
        dims: Vec<u64>,
    ) -> Result<(DType, Vec<u64>), ImportError> {
        let file = self.file;
        let dtype = dtype_of(elem_type).or_else(|kind| {
            fail(format!(
                "`{file}`: {what} `{name}` has element type {kind} (ONNX data type {elem_type}, inferred), which memplan does not support\n  = help: supported: float, double, float16, bfloat16, int8/16/32/64, uint8/16/32/64, bool"
            ))
        })?;
        if let Some(axis) = dims.iter().position(|&d| d == 0) {
            return fail(format!(
                "`{file}`: {what} `{name}` has size 0 on axis {axis} (inferred shape {dims:?})\n  = help: memplan plans tensors of at least one element; remove this value from the graph"
            ));
        }
        let bytes = dims
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
            .and_then(|n| n.checked_mul(dtype.size()))
            .filter(|&bytes| bytes <= memplan_core::model_file::MAX_TENSOR_BYTES);
        if bytes.is_none() {
            return fail(format!(
                "`{file}`: {what} `{name}` is too large ({dims:?} of {dtype}, inferred)\n  = help: check the shape; memplan plans tensors below 2^48 bytes"
            ));
        }
        Ok((dtype, dims))
    }

    /// The dtype and shape the file declares for `name`; an error says whether inference may
    /// fill in what is missing (`true`: no type, an unknown rank or dimension, a symbolic
    /// dimension without `--dim`) or not (not a tensor, an unsupported type, a size of 0).
    pub(crate) fn declared_shape_of(
        &self,
        name: &str,
        what: &str,
        info: &proto::ValueInfoProto,
    ) -> Result<(DType, Vec<u64>), (ImportError, bool)> {
        let file = self.file;
        fn error<T>(message: String, fillable: bool) -> Result<T, (ImportError, bool)> {
            Err((ImportError { message }, fillable))
        }
        let tensor = match info.r#type.as_ref().and_then(|t| t.value.as_ref()) {
            Some(type_proto::Value::TensorType(tensor)) => tensor,
            Some(_) => {
                return error(
                    format!(
                        "`{file}`: {what} `{name}` is not a tensor (a sequence, map, sparse or optional value)\n  = help: memplan plans dense tensors only; rewrite this part of the graph with tensors"
                    ),
                    false,
                );
            }
            None => {
                return error(
                    format!(
                        "`{file}`: {what} `{name}` has no type\n  = help: run ONNX shape inference and save the model again"
                    ),
                    true,
                );
            }
        };
        let dtype = dtype_of(tensor.elem_type).or_else(|kind| {
            error(
                format!(
                    "`{file}`: {what} `{name}` has element type {kind} (ONNX data type {}), which memplan does not support\n  = help: supported: float, double, float16, bfloat16, int8/16/32/64, uint8/16/32/64, bool",
                    tensor.elem_type
                ),
                // UNDEFINED: inference may say.
                tensor.elem_type == 0,
            )
        })?;
        let Some(shape) = &tensor.shape else {
            return error(
                format!(
                    "`{file}`: {what} `{name}` has an unknown rank\n  = help: run ONNX shape inference, or export the model with static input shapes"
                ),
                true,
            );
        };
        let mut dims = Vec::with_capacity(shape.dim.len());
        for (axis, dim) in shape.dim.iter().enumerate() {
            let value = match &dim.value {
                Some(proto::DimensionValue::DimValue(v)) if *v > 0 => *v as u64,
                Some(proto::DimensionValue::DimValue(v)) => {
                    return error(
                        format!(
                            "`{file}`: {what} `{name}` has size {v} on axis {axis}\n  = help: memplan plans tensors of at least one element; remove this value from the graph"
                        ),
                        false,
                    );
                }
                Some(proto::DimensionValue::DimParam(param)) if !param.is_empty() => {
                    match self.options.dims.get(param) {
                        Some(&v) if v > 0 => {
                            self.used_dims.borrow_mut().insert(param.clone());
                            v
                        }
                        _ => {
                            return error(
                                format!(
                                    "`{file}`: {what} `{name}` has dynamic dimension `{param}` (axis {axis})\n  = help: give it a value with `--dim {param}=N`, for example `--dim {param}=1`"
                                ),
                                true,
                            );
                        }
                    }
                }
                _ => {
                    return error(
                        format!(
                            "`{file}`: {what} `{name}` has an unknown size on axis {axis} (no value and no name)\n  = help: run ONNX shape inference after fixing the input shapes, or export with static shapes"
                        ),
                        true,
                    );
                }
            };
            dims.push(value);
        }
        let elements = dims
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
            .and_then(|n| n.checked_mul(dtype.size()))
            .filter(|&bytes| bytes <= memplan_core::model_file::MAX_TENSOR_BYTES);
        if elements.is_none() {
            return error(
                format!(
                    "`{file}`: {what} `{name}` is too large ({dims:?} of {dtype})\n  = help: check the shape; memplan plans tensors below 2^48 bytes"
                ),
                false,
            );
        }
        Ok((dtype, dims))
    }
}
