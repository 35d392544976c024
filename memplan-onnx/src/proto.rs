//! The part of ONNX's `onnx.proto` the importer reads, as hand-written prost messages.
//!
//! Why hand-written rather than generated: `prost-build` needs `protoc` at build time, and the
//! maintained ONNX crates pull in a full runtime or a large generated API. The importer needs
//! ten messages and a handful of fields; the field numbers below are those of the official
//! `onnx/onnx.proto` (IR version 10), and protobuf skips every field not declared here. Weight
//! bytes (`raw_data` and the typed `*_data` fields) are declared: the runner needs them.

// The messages mirror onnx.proto's names (`TensorType`, `SequenceType`, ...), and some fields
// are declared only so the layout is documented.
#![allow(missing_docs, unreachable_pub, dead_code, clippy::enum_variant_names)]

use prost::{Message, Oneof};

/// `ModelProto`: the file's top-level message.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct ModelProto {
    #[prost(int64, tag = "1")]
    pub(crate) ir_version: i64,
    #[prost(message, repeated, tag = "8")]
    pub(crate) opset_import: Vec<OperatorSetIdProto>,
    #[prost(string, tag = "2")]
    pub(crate) producer_name: String,
    #[prost(message, optional, tag = "7")]
    pub(crate) graph: Option<GraphProto>,
}

/// `OperatorSetIdProto`: an operator set the model uses.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct OperatorSetIdProto {
    #[prost(string, tag = "1")]
    pub(crate) domain: String,
    #[prost(int64, tag = "2")]
    pub(crate) version: i64,
}

/// `GraphProto`: nodes in topological order, weights, inputs, outputs and shape information.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct GraphProto {
    #[prost(message, repeated, tag = "1")]
    pub(crate) node: Vec<NodeProto>,
    #[prost(string, tag = "2")]
    pub(crate) name: String,
    #[prost(message, repeated, tag = "5")]
    pub(crate) initializer: Vec<TensorProto>,
    #[prost(message, repeated, tag = "15")]
    pub(crate) sparse_initializer: Vec<SparseTensorProto>,
    #[prost(message, repeated, tag = "11")]
    pub(crate) input: Vec<ValueInfoProto>,
    #[prost(message, repeated, tag = "12")]
    pub(crate) output: Vec<ValueInfoProto>,
    #[prost(message, repeated, tag = "13")]
    pub(crate) value_info: Vec<ValueInfoProto>,
}

/// `NodeProto`: one operator application.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct NodeProto {
    #[prost(string, repeated, tag = "1")]
    pub(crate) input: Vec<String>,
    #[prost(string, repeated, tag = "2")]
    pub(crate) output: Vec<String>,
    #[prost(string, tag = "3")]
    pub(crate) name: String,
    #[prost(string, tag = "4")]
    pub(crate) op_type: String,
    #[prost(string, tag = "7")]
    pub(crate) domain: String,
    #[prost(message, repeated, tag = "5")]
    pub(crate) attribute: Vec<AttributeProto>,
}

/// `AttributeProto`: a named constant of a node (`strides`, `axis`, a `Constant`'s tensor).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct AttributeProto {
    #[prost(string, tag = "1")]
    pub(crate) name: String,
    /// `AttributeType`: 1 FLOAT, 2 INT, 3 STRING, 4 TENSOR, 5 GRAPH, 6 FLOATS, 7 INTS, 8 STRINGS,
    /// 9 TENSORS, 10 GRAPHS, 11 SPARSE_TENSOR, 12 SPARSE_TENSORS, 13 TYPE_PROTO, 14 TYPE_PROTOS.
    #[prost(int32, tag = "20")]
    pub(crate) r#type: i32,
    #[prost(float, tag = "2")]
    pub(crate) f: f32,
    #[prost(int64, tag = "3")]
    pub(crate) i: i64,
    #[prost(bytes = "vec", tag = "4")]
    pub(crate) s: Vec<u8>,
    #[prost(message, optional, tag = "5")]
    pub(crate) t: Option<TensorProto>,
    #[prost(float, repeated, tag = "7")]
    pub(crate) floats: Vec<f32>,
    #[prost(int64, repeated, tag = "8")]
    pub(crate) ints: Vec<i64>,
    #[prost(bytes = "vec", repeated, tag = "9")]
    pub(crate) strings: Vec<Vec<u8>>,
    /// Set in function bodies only: the attribute's value comes from the caller.
    #[prost(string, tag = "21")]
    pub(crate) ref_attr_name: String,
}

/// `TensorProto`: a weight's name, type, dims and data: inline (`raw_data`, little-endian, or one
/// of the typed fields) or external (`data_location = EXTERNAL`, with `external_data` keys
/// `location`, `offset`, `length`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct TensorProto {
    #[prost(int64, repeated, tag = "1")]
    pub(crate) dims: Vec<i64>,
    #[prost(int32, tag = "2")]
    pub(crate) data_type: i32,
    #[prost(string, tag = "8")]
    pub(crate) name: String,
    /// FLOAT (and COMPLEX64) values.
    #[prost(float, repeated, tag = "4")]
    pub(crate) float_data: Vec<f32>,
    /// INT32, INT16, INT8, UINT16, UINT8, BOOL, FLOAT16, BFLOAT16 values, one per element.
    #[prost(int32, repeated, tag = "5")]
    pub(crate) int32_data: Vec<i32>,
    #[prost(int64, repeated, tag = "7")]
    pub(crate) int64_data: Vec<i64>,
    /// The elements as little-endian bytes, row-major.
    #[prost(bytes = "vec", tag = "9")]
    pub(crate) raw_data: Vec<u8>,
    #[prost(double, repeated, tag = "10")]
    pub(crate) double_data: Vec<f64>,
    /// UINT32 and UINT64 values.
    #[prost(uint64, repeated, tag = "11")]
    pub(crate) uint64_data: Vec<u64>,
    #[prost(message, repeated, tag = "13")]
    pub(crate) external_data: Vec<StringStringEntryProto>,
    /// 0 = DEFAULT (inline), 1 = EXTERNAL.
    #[prost(int32, tag = "14")]
    pub(crate) data_location: i32,
}

/// `StringStringEntryProto`: a key/value pair (external data's location, offset, ...).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct StringStringEntryProto {
    #[prost(string, tag = "1")]
    pub(crate) key: String,
    #[prost(string, tag = "2")]
    pub(crate) value: String,
}

/// `SparseTensorProto`: a sparse weight; its `values` carry the name.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct SparseTensorProto {
    #[prost(message, optional, tag = "1")]
    pub(crate) values: Option<TensorProto>,
    #[prost(int64, repeated, tag = "3")]
    pub(crate) dims: Vec<i64>,
}

/// `ValueInfoProto`: a value's name and type.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct ValueInfoProto {
    #[prost(string, tag = "1")]
    pub(crate) name: String,
    #[prost(message, optional, tag = "2")]
    pub(crate) r#type: Option<TypeProto>,
}

/// `TypeProto`: only the tensor case is read.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct TypeProto {
    #[prost(oneof = "type_proto::Value", tags = "1, 4, 5, 8, 9")]
    pub(crate) value: Option<type_proto::Value>,
}

pub(crate) mod type_proto {
    use prost::{Message, Oneof};

    /// `TypeProto.value`.
    #[derive(Clone, PartialEq, Oneof)]
    pub(crate) enum Value {
        #[prost(message, tag = "1")]
        TensorType(Tensor),
        /// `sequence_type`: not a tensor (contents skipped).
        #[prost(message, tag = "4")]
        SequenceType(Opaque),
        /// `map_type`.
        #[prost(message, tag = "5")]
        MapType(Opaque),
        /// `sparse_tensor_type`.
        #[prost(message, tag = "8")]
        SparseTensorType(Opaque),
        /// `optional_type`.
        #[prost(message, tag = "9")]
        OptionalType(Opaque),
    }

    /// `TypeProto.Tensor`: element type and shape.
    #[derive(Clone, PartialEq, Message)]
    pub(crate) struct Tensor {
        #[prost(int32, tag = "1")]
        pub(crate) elem_type: i32,
        #[prost(message, optional, tag = "2")]
        pub(crate) shape: Option<super::TensorShapeProto>,
    }

    /// A message whose fields are not read.
    #[derive(Clone, PartialEq, Message)]
    pub(crate) struct Opaque {}
}

/// `TensorShapeProto`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct TensorShapeProto {
    #[prost(message, repeated, tag = "1")]
    pub(crate) dim: Vec<Dimension>,
}

/// `TensorShapeProto.Dimension`: a fixed size, a symbolic name, or nothing (unknown).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Dimension {
    #[prost(oneof = "DimensionValue", tags = "1, 2")]
    pub(crate) value: Option<DimensionValue>,
}

/// `Dimension.value`.
#[derive(Clone, PartialEq, Oneof)]
pub(crate) enum DimensionValue {
    #[prost(int64, tag = "1")]
    DimValue(i64),
    #[prost(string, tag = "2")]
    DimParam(String),
}
