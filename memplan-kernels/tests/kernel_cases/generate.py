#!/usr/bin/env python3
"""Reference values for the kernel tests, computed by ONNX Runtime.

Builds one single-node ONNX model per case, runs it with ONNX Runtime (CPU, all graph
optimizations off, one thread) and writes the inputs, attributes and outputs of every case to
`cases.json` beside this script. The Rust test `tests/kernels_ort.rs` replays them through
`memplan_kernels::run`. Test tooling only: CI uses the committed `cases.json`.

The `special_*` cases (`special_values()`) run NaN, infinities, signed zeros, huge and subnormal
values through every float operator; they use no random numbers, so the other cases stay as
they were.

    python3 -m venv venv && venv/bin/pip install onnx onnxruntime numpy
    venv/bin/python memplan-kernels/tests/kernel_cases/generate.py
"""

import json
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

RNG = np.random.default_rng(20261201)
CASES = []

DTYPES = {
    np.dtype(np.float32): ("f32", TensorProto.FLOAT),
    np.dtype(np.int64): ("i64", TensorProto.INT64),
    np.dtype(np.int32): ("i32", TensorProto.INT32),
    np.dtype(np.bool_): ("bool", TensorProto.BOOL),
    np.dtype(np.int8): ("i8", TensorProto.INT8),
    np.dtype(np.uint8): ("u8", TensorProto.UINT8),
}


def f(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


def i64(values):
    return np.array(values, dtype=np.int64)


def encode_tensor(arr):
    name, _ = DTYPES[arr.dtype]
    flat = arr.reshape(-1)
    if name == "f32":
        # JSON has no inf/nan: those are written as strings.
        data = [str(np.float32(v)) if np.isfinite(v) else '"%s"' % str(np.float32(v)) for v in flat]
    else:
        data = [str(int(v)) for v in flat]
    return '{"dtype":"%s","shape":%s,"data":[%s]}' % (
        name,
        json.dumps(list(arr.shape)),
        ",".join(data),
    )


def encode_attr(name, value):
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int):
        return {"name": name, "int": value}
    if isinstance(value, float):
        return {"name": name, "float": value}
    if isinstance(value, str):
        return {"name": name, "str": value}
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return {"name": name, "ints": value}
    if isinstance(value, list) and all(isinstance(v, float) for v in value):
        return {"name": name, "floats": value}
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return {"name": name, "strs": value}
    if isinstance(value, onnx.TensorProto):
        arr = onnx.numpy_helper.to_array(value).reshape(-1)
        if arr.dtype == np.float32:
            return {"name": name, "float": float(arr[0])}
        return {"name": name, "int": int(arr[0])}
    raise ValueError(f"attribute {name}: {value!r}")


def case(name, op, inputs, attrs=None, opset=17, outputs=1, domain=""):
    """One node `op` over `inputs` (None = an absent optional input); `domain` "com.microsoft"
    for ONNX Runtime's contrib operators."""
    attrs = attrs or {}
    in_names = [("" if x is None else f"in{i}") for i, x in enumerate(inputs)]
    out_names = [f"out{i}" for i in range(outputs)]
    node = helper.make_node(op, in_names, out_names, domain=domain or None, **attrs)
    graph_inputs = [
        helper.make_tensor_value_info(n, DTYPES[x.dtype][1], list(x.shape))
        for n, x in zip(in_names, inputs)
        if x is not None
    ]
    graph_outputs = [onnx.ValueInfoProto(name=n) for n in out_names]
    graph = helper.make_graph([node], name, graph_inputs, graph_outputs)
    opsets = [helper.make_opsetid("", opset)]
    if domain:
        opsets.append(helper.make_opsetid(domain, 1))
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    feeds = {n: x for n, x in zip(in_names, inputs) if x is not None}
    results = session.run(out_names, feeds)
    CASES.append(
        '{"name":%s,"op":%s,"attrs":%s,\n "inputs":[%s],\n "outputs":[%s]}'
        % (
            json.dumps(name),
            json.dumps(op),
            json.dumps([encode_attr(k, v) for k, v in attrs.items()]),
            ",".join("null" if x is None else encode_tensor(x) for x in inputs),
            ",".join(encode_tensor(np.asarray(r)) for r in results),
        )
    )


def unary():
    x = f(2, 3, 5, lo=-4, hi=4)
    for op in ["Relu", "Sigmoid", "Tanh", "Exp", "Erf", "Neg", "Abs", "Floor", "Ceil",
               "Sin", "Cos", "Softplus", "Sign", "HardSwish"]:
        case(op.lower(), op, [x])
    pos = f(4, 6, lo=0.1, hi=9)
    for op in ["Sqrt", "Log", "Reciprocal"]:
        case(op.lower(), op, [pos])
    case("erf_wide", "Erf", [np.linspace(-6, 6, 241, dtype=np.float32)])
    case("round_halves", "Round", [np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.4, -0.6], np.float32)])
    case("sigmoid_large", "Sigmoid", [np.array([-100, -20, 0, 20, 100], np.float32)])
    case("leaky_relu", "LeakyRelu", [x], {"alpha": 0.1})
    case("elu", "Elu", [x], {"alpha": 0.7})
    case("hard_sigmoid_default", "HardSigmoid", [x])
    case("hard_sigmoid_attrs", "HardSigmoid", [x], {"alpha": 0.3, "beta": 0.4})
    case("clip_min_max", "Clip", [x, np.array(-1, np.float32), np.array(1.5, np.float32)])
    case("clip_min_only", "Clip", [x, np.array(0.5, np.float32)])
    case("clip_max_only", "Clip", [x, None, np.array(0.0, np.float32)])
    case("clip_none", "Clip", [x])
    case("clip_relu6", "Clip", [x * 3, np.array(0, np.float32), np.array(6, np.float32)])
    case("clip_opset6_attrs", "Clip", [x], {"min": -0.5, "max": 0.5}, opset=6)
    case("not", "Not", [RNG.integers(0, 2, size=(3, 4)).astype(np.bool_)])
    case("neg_i64", "Neg", [i64([[1, -2, 3], [0, 5, -7]])])
    case("abs_i64", "Abs", [i64([1, -2, 3, 0, -9])])


def binary():
    a = f(2, 3, 4)
    for op in ["Add", "Sub", "Mul", "Div"]:
        case(f"{op.lower()}_same", op, [a, f(2, 3, 4)])
        case(f"{op.lower()}_bcast_last", op, [a, f(4, lo=0.5, hi=2)])
        case(f"{op.lower()}_bcast_both", op, [f(2, 1, 4), f(3, 1, lo=0.5, hi=2)])
        case(f"{op.lower()}_scalar_left", op, [np.array(1.5, np.float32), f(3, 2, lo=0.5, hi=2)])
    case("add_rank_mismatch", "Add", [f(1, 3, 1, 2), f(4, 1)])
    case("add_i64", "Add", [i64([[1, 2, 3]]), i64([[10], [20]])])
    case("mul_i32", "Mul", [np.array([2, -3, 4], np.int32), np.array([5], np.int32)])
    case("div_i64", "Div", [i64([7, -7, 9, 10]), i64([2, 2, -4, 5])])
    case("sub_i64", "Sub", [i64([7, -7, 9, 10]), i64([1])])
    case("pow_f32", "Pow", [f(3, 4, lo=0.1, hi=3), f(3, 4, lo=-2, hi=2)])
    case("pow_square", "Pow", [f(3, 4), np.array(2.0, np.float32)])
    case("pow_sqrt", "Pow", [f(3, 4, lo=0, hi=4), np.array(0.5, np.float32)])
    case("pow_i64_exponent", "Pow", [f(3, 4), i64([3])])
    for op in ["Max", "Min", "Sum", "Mean"]:
        case(f"{op.lower()}_three", op, [f(2, 3), f(3), f(2, 1)])
        case(f"{op.lower()}_one", op, [f(2, 3)])
    case("max_i64", "Max", [i64([1, 5, -3]), i64([2, 2, 2])])
    b = np.round(f(3, 4) * 2) / 2
    c = np.round(f(4) * 2) / 2
    for op in ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"]:
        case(op.lower(), op, [b, c])
    case("equal_i64", "Equal", [i64([[1, 2], [3, 4]]), i64([1, 4])])
    p = RNG.integers(0, 2, size=(2, 3)).astype(np.bool_)
    q = RNG.integers(0, 2, size=(3,)).astype(np.bool_)
    for op in ["And", "Or", "Xor"]:
        case(op.lower(), op, [p, q])
    case("where_bcast", "Where", [RNG.integers(0, 2, size=(2, 1, 4)).astype(np.bool_), f(3, 4), f(2, 3, 1)])
    case("where_scalar_y", "Where", [RNG.integers(0, 2, size=(3, 4)).astype(np.bool_), f(3, 4), np.array(-1e9, np.float32)])
    case("where_i64", "Where", [np.array([True, False, True]), i64([1, 2, 3]), i64([-1, -2, -3])])


def cast():
    x = np.array([-2.7, -1.0, -0.5, 0.0, 0.4, 1.5, 3.9, 100.2], np.float32)
    case("cast_f32_i64", "Cast", [x], {"to": TensorProto.INT64})
    case("cast_f32_i32", "Cast", [x], {"to": TensorProto.INT32})
    case("cast_f32_bool", "Cast", [x], {"to": TensorProto.BOOL})
    case("cast_f32_f32", "Cast", [x], {"to": TensorProto.FLOAT})
    case("cast_i64_f32", "Cast", [i64([-3, 0, 7, 1 << 40])], {"to": TensorProto.FLOAT})
    case("cast_i64_i32", "Cast", [i64([-3, 0, 7, 123456])], {"to": TensorProto.INT32})
    case("cast_i32_i64", "Cast", [np.array([-3, 0, 7], np.int32)], {"to": TensorProto.INT64})
    case("cast_bool_f32", "Cast", [np.array([True, False, True])], {"to": TensorProto.FLOAT})
    case("cast_i64_bool", "Cast", [i64([0, 3, -1])], {"to": TensorProto.BOOL})


def conv():
    x = f(1, 4, 7, 8)
    case("conv_basic_bias", "Conv", [x, f(6, 4, 3, 3), f(6)])
    case("conv_no_bias", "Conv", [x, f(5, 4, 1, 1)])
    case("conv_stride2_pad1", "Conv", [x, f(3, 4, 3, 3), f(3)], {"strides": [2, 2], "pads": [1, 1, 1, 1]})
    case("conv_asym_pads", "Conv", [x, f(3, 4, 3, 2)], {"pads": [0, 2, 1, 0], "strides": [1, 2]})
    case("conv_dilation2", "Conv", [x, f(2, 4, 3, 3)], {"dilations": [2, 2], "pads": [2, 2, 2, 2]})
    case("conv_group2", "Conv", [x, f(6, 2, 3, 3), f(6)], {"group": 2, "pads": [1, 1, 1, 1]})
    case("conv_depthwise_s2", "Conv", [x, f(4, 1, 3, 3), f(4)], {"group": 4, "strides": [2, 2], "pads": [1, 1, 1, 1]})
    case("conv_depthwise_mult2", "Conv", [x, f(8, 1, 3, 3)], {"group": 4})
    case("conv_same_upper", "Conv", [x, f(2, 4, 4, 4)], {"auto_pad": "SAME_UPPER", "strides": [2, 2]})
    case("conv_same_lower", "Conv", [x, f(2, 4, 4, 4)], {"auto_pad": "SAME_LOWER", "strides": [2, 2]})
    case("conv_valid", "Conv", [x, f(2, 4, 3, 3)], {"auto_pad": "VALID", "strides": [2, 3]})
    case("conv_kernel_shape_attr", "Conv", [x, f(2, 4, 3, 3)], {"kernel_shape": [3, 3]})
    case("conv_batch2", "Conv", [f(2, 3, 5, 5), f(4, 3, 3, 3), f(4)], {"pads": [1, 1, 1, 1]})
    case("conv_1d", "Conv", [f(1, 3, 10), f(4, 3, 3), f(4)], {"strides": [2], "pads": [1, 1], "dilations": [2]})
    case("conv_3d", "Conv", [f(1, 2, 4, 5, 5), f(3, 2, 2, 3, 3), f(3)], {"pads": [0, 1, 1, 1, 1, 1]})
    case("conv_big_kernel_pad", "Conv", [f(1, 1, 3, 3), f(1, 1, 5, 5)], {"pads": [2, 2, 2, 2]})


def pool():
    x = f(1, 3, 7, 8)
    case("maxpool_k3s2p1", "MaxPool", [x], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})
    case("maxpool_k2", "MaxPool", [x], {"kernel_shape": [2, 2]})
    case("maxpool_ceil", "MaxPool", [x], {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1})
    case("maxpool_ceil_pads", "MaxPool", [f(1, 2, 5, 5)], {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1})
    case("maxpool_dilation", "MaxPool", [x], {"kernel_shape": [2, 2], "dilations": [2, 2]})
    case("maxpool_same_upper", "MaxPool", [x], {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"})
    case("maxpool_same_lower", "MaxPool", [x], {"kernel_shape": [2, 2], "strides": [2, 2], "auto_pad": "SAME_LOWER"})
    case("maxpool_1d", "MaxPool", [f(1, 2, 9)], {"kernel_shape": [3], "strides": [2]})
    case("maxpool_3d", "MaxPool", [f(1, 2, 4, 4, 4)], {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2]})
    case("avgpool_k3s2p1", "AveragePool", [x], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})
    case("avgpool_include_pad", "AveragePool", [x], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 1})
    case("avgpool_ceil", "AveragePool", [x], {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1})
    case("avgpool_ceil_include_pad", "AveragePool", [f(1, 2, 6, 6)], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1, "count_include_pad": 1})
    case("avgpool_same_upper", "AveragePool", [x], {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER"})
    case("global_avgpool", "GlobalAveragePool", [x])
    case("global_maxpool", "GlobalMaxPool", [x])
    case("global_avgpool_1d", "GlobalAveragePool", [f(2, 3, 5)])


def matmul():
    case("gemm_default", "Gemm", [f(3, 5), f(5, 4)])
    case("gemm_bias_vec", "Gemm", [f(3, 5), f(5, 4), f(4)])
    case("gemm_transb", "Gemm", [f(2, 6), f(4, 6), f(4)], {"transB": 1})
    case("gemm_transa", "Gemm", [f(6, 2), f(6, 4), f(2, 1)], {"transA": 1})
    case("gemm_both_alpha_beta", "Gemm", [f(6, 2), f(4, 6), f(2, 4)], {"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0})
    case("gemm_scalar_c", "Gemm", [f(3, 5), f(5, 4), np.array(0.25, np.float32)], {"beta": 3.0})
    case("matmul_2d", "MatMul", [f(3, 5), f(5, 4)])
    case("matmul_batch_x_2d", "MatMul", [f(2, 3, 5), f(5, 4)])
    case("matmul_batch_bcast", "MatMul", [f(2, 1, 3, 4), f(3, 4, 5)])
    case("matmul_4d_attention", "MatMul", [f(1, 2, 6, 4), f(1, 2, 4, 6)])
    case("matmul_1d_left", "MatMul", [f(5), f(2, 5, 3)])
    case("matmul_1d_right", "MatMul", [f(2, 3, 5), f(5)])
    case("matmul_1d_both", "MatMul", [f(5), f(5)])


def normalization():
    case("batchnorm_4d", "BatchNormalization", [f(2, 3, 4, 5), f(3), f(3), f(3), f(3, lo=0.1, hi=2)], {"epsilon": 1e-3})
    case("batchnorm_2d", "BatchNormalization", [f(4, 3), f(3), f(3), f(3), f(3, lo=0.1, hi=2)])
    case("layernorm_last", "LayerNormalization", [f(2, 5, 8), f(8), f(8)], {"epsilon": 1e-5})
    case("layernorm_axis1_no_bias", "LayerNormalization", [f(2, 3, 4), f(3, 4)], {"axis": 1})
    case("layernorm_bcast_scale", "LayerNormalization", [f(2, 3, 4), f(1, 4), f(4)], {"axis": -2})
    case("layernorm_stats", "LayerNormalization", [f(3, 6), f(6), f(6)], {"epsilon": 1e-3}, outputs=3)
    case("softmax_last", "Softmax", [f(2, 3, 5)])
    case("softmax_axis1", "Softmax", [f(2, 3, 5)], {"axis": 1})
    case("softmax_axis0", "Softmax", [f(2, 3, 5) * 10], {"axis": 0})
    case("logsoftmax_last", "LogSoftmax", [f(2, 3, 5)])
    case("logsoftmax_axis1", "LogSoftmax", [f(2, 3, 5)], {"axis": 1})


def reduce():
    x = f(2, 3, 4)
    case("reducemean_attr_keep", "ReduceMean", [x], {"axes": [1]})
    case("reducemean_attr_drop", "ReduceMean", [x], {"axes": [0, -1], "keepdims": 0})
    case("reducemean_all", "ReduceMean", [x])
    case("reducemean_input_18", "ReduceMean", [x, i64([-1])], opset=18)
    case("reducemean_noop_18", "ReduceMean", [x], {"noop_with_empty_axes": 1}, opset=18)
    case("reducesum_input_13", "ReduceSum", [x, i64([0, 2])], {"keepdims": 0}, opset=13)
    case("reducesum_all_13", "ReduceSum", [x], opset=13)
    for op in ["ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare"]:
        case(op.lower(), op, [x], {"axes": [1, 2]})


def shape_ops():
    x = f(2, 3, 4)
    case("reshape_zero_minus1", "Reshape", [x, i64([0, -1])])
    case("reshape_4d", "Reshape", [x, i64([2, 2, 3, 2])])
    case("reshape_allowzero", "Reshape", [x, i64([4, 6])], {"allowzero": 1}, opset=14)
    case("flatten_default", "Flatten", [f(2, 3, 2, 2)])
    case("flatten_axis0", "Flatten", [x], {"axis": 0})
    case("flatten_axis_neg", "Flatten", [x], {"axis": -1})
    case("flatten_axis_rank", "Flatten", [x], {"axis": 3})
    case("squeeze_axes", "Squeeze", [f(1, 3, 1, 2), i64([0, -2])])
    case("squeeze_all", "Squeeze", [f(1, 3, 1, 2)])
    case("squeeze_attr_11", "Squeeze", [f(1, 3, 1, 2)], {"axes": [2]}, opset=11)
    case("unsqueeze_axes", "Unsqueeze", [x, i64([0, -1])])
    case("unsqueeze_mid", "Unsqueeze", [x, i64([2])])
    case("unsqueeze_attr_11", "Unsqueeze", [x], {"axes": [1]}, opset=11)
    case("identity", "Identity", [x])
    case("identity_i64", "Identity", [i64([4, 5])])
    case("dropout", "Dropout", [x])
    case("transpose_default", "Transpose", [x])
    case("transpose_perm", "Transpose", [f(2, 3, 4, 5)], {"perm": [0, 2, 1, 3]})
    case("transpose_perm2", "Transpose", [f(2, 3, 4, 5)], {"perm": [3, 0, 2, 1]})
    case("transpose_i64", "Transpose", [i64([[1, 2, 3], [4, 5, 6]])])
    case("concat_axis1", "Concat", [f(2, 1, 3), f(2, 4, 3), f(2, 2, 3)], {"axis": 1})
    case("concat_axis_neg", "Concat", [f(2, 3), f(2, 1)], {"axis": -1})
    case("concat_i64", "Concat", [i64([1, 2]), i64([3]), i64([4, 5, 6])], {"axis": 0})
    case("split_input", "Split", [f(2, 7), i64([2, 5])], {"axis": 1}, outputs=2)
    case("split_equal", "Split", [f(6, 2)], outputs=3)
    case("split_attr_11", "Split", [f(5, 2)], {"split": [1, 4]}, opset=11, outputs=2)
    case("split_num_outputs_18", "Split", [f(2, 5)], {"axis": -1, "num_outputs": 2}, opset=18, outputs=2)
    y = f(4, 5, 6)
    case("slice_basic", "Slice", [y, i64([1, 0]), i64([3, 4])])
    case("slice_axes_steps", "Slice", [y, i64([0, 1]), i64([6, 5]), i64([2, 0]), i64([2, 2])])
    case("slice_negative", "Slice", [y, i64([-3]), i64([-1]), i64([1])])
    case("slice_reverse", "Slice", [y, i64([-1, 4]), i64([-1000, 0]), i64([2, 1]), i64([-1, -2])])
    case("slice_clamp", "Slice", [y, i64([2]), i64([1 << 62]), i64([-1])])
    case("slice_empty", "Slice", [y, i64([3]), i64([1]), i64([0])])
    case("slice_i64", "Slice", [i64([1, 2, 3, 4, 5]), i64([1]), i64([-1])])
    case("slice_attr_9", "Slice", [y], {"starts": [1], "ends": [3], "axes": [2]}, opset=9)
    emb = f(10, 4)
    case("gather_axis0", "Gather", [emb, i64([[0, 3], [9, -1]])])
    case("gather_axis1", "Gather", [f(3, 5, 2), i64([4, 0, -2])], {"axis": 1})
    case("gather_scalar_index", "Gather", [f(3, 5), np.array(-1, np.int64)], {"axis": 1})
    case("gather_i32_indices", "Gather", [emb, np.array([1, 2, 1], np.int32)])
    case("gather_i64_data", "Gather", [i64([[1, 2], [3, 4], [5, 6]]), i64([2, 0])])
    case("expand", "Expand", [f(3, 1), i64([2, 3, 4])])
    case("expand_smaller_shape", "Expand", [f(2, 3), i64([3])])
    case("expand_i64", "Expand", [i64([1, 2]), i64([3, 1])])
    case("shape", "Shape", [x])
    case("shape_start_end_15", "Shape", [f(2, 3, 4, 5)], {"start": 1, "end": -1}, opset=15)
    case("constant_of_shape", "ConstantOfShape", [i64([2, 3])],
         {"value": helper.make_tensor("value", TensorProto.FLOAT, [1], [2.5])})
    case("constant_of_shape_i64", "ConstantOfShape", [i64([4])],
         {"value": helper.make_tensor("value", TensorProto.INT64, [1], [7])})
    case("constant_of_shape_default", "ConstantOfShape", [i64([3])])
    case("range_f32", "Range", [np.array(1.0, np.float32), np.array(2.2, np.float32), np.array(0.3, np.float32)])
    case("range_i64", "Range", [np.array(10, np.int64), np.array(1, np.int64), np.array(-3, np.int64)])


def resize():
    x = f(1, 2, 3, 4)
    up = np.array([1, 1, 2, 2], np.float32)
    odd = np.array([1, 1, 1.5, 2.5], np.float32)
    for ct in ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"]:
        case(f"resize_linear_{ct}", "Resize", [x, None, up], {"mode": "linear", "coordinate_transformation_mode": ct})
        case(f"resize_linear_{ct}_odd", "Resize", [x, None, odd], {"mode": "linear", "coordinate_transformation_mode": ct})
        case(f"resize_linear_{ct}_down", "Resize", [f(1, 1, 6, 7), None, None, i64([1, 1, 4, 3])], {"mode": "linear", "coordinate_transformation_mode": ct})
    for nm in ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]:
        for ct in ["half_pixel", "asymmetric", "align_corners", "tf_half_pixel_for_nn"]:
            case(f"resize_nearest_{nm}_{ct}", "Resize", [x, None, odd], {"mode": "nearest", "nearest_mode": nm, "coordinate_transformation_mode": ct})
    case("resize_nearest_default_up2", "Resize", [x, None, up])
    case("resize_nearest_sizes_down", "Resize", [f(1, 1, 5, 7), None, None, i64([1, 1, 2, 3])])
    case("resize_nearest_3d_input", "Resize", [f(2, 3, 4), None, np.array([1, 2, 0.5], np.float32)], {"mode": "nearest"})
    case("resize_linear_1d", "Resize", [f(1, 2, 5), None, np.array([1, 1, 1.6], np.float32)], {"mode": "linear"})
    case("resize_axes_18", "Resize", [x, None, np.array([2, 3], np.float32)], {"mode": "linear", "axes": [2, 3]}, opset=18)


def more():
    x = f(2, 3, 4)
    case("prelu_channel", "PRelu", [f(1, 3, 2, 2), f(3, 1, 1)])
    case("prelu_same", "PRelu", [x, f(2, 3, 4)])
    case("mod_fmod_f32", "Mod", [f(3, 4, lo=-5, hi=5), f(4, lo=0.5, hi=2)], {"fmod": 1})
    case("mod_i64", "Mod", [i64([7, -7, 7, -7, 0]), i64([3, 3, -3, -3, 2])])
    case("mod_fmod_i64", "Mod", [i64([7, -7, 7, -7]), i64([3, 3, -3, -3])], {"fmod": 1})
    case("tile", "Tile", [f(2, 3), i64([2, 1])])
    case("tile_3d", "Tile", [f(1, 2, 2), i64([2, 3, 1])])
    case("tile_i64", "Tile", [i64([[1, 2]]), i64([2, 2])])
    case("argmax", "ArgMax", [f(3, 4)], {"axis": 1})
    case("argmax_drop", "ArgMax", [f(3, 4, 2)], {"axis": -2, "keepdims": 0})
    case("argmin_axis0", "ArgMin", [f(3, 4)])
    ties = np.array([[1, 3, 3, 0], [2, 2, 1, 2]], np.float32)
    case("argmax_last_index", "ArgMax", [ties], {"axis": 1, "select_last_index": 1})
    case("argmin_ties_first", "ArgMin", [ties], {"axis": 1})
    case("trilu_upper", "Trilu", [f(2, 4, 5)])
    case("trilu_lower_k", "Trilu", [f(4, 5), i64([1])], {"upper": 0})
    case("trilu_upper_neg_k", "Trilu", [f(4, 5), i64([-2])])
    case("instancenorm", "InstanceNormalization", [f(2, 3, 4, 5), f(3), f(3)], {"epsilon": 1e-3})
    y = f(2, 3, 4)
    case("pad_constant", "Pad", [y, i64([0, 1, 2, 0, 2, 1])])
    case("pad_constant_value", "Pad", [y, i64([1, 0, 0, 0, 0, 3]), np.array(-2.5, np.float32)])
    case("pad_crop", "Pad", [y, i64([0, -1, 1, 0, 0, -2])])
    case("pad_edge", "Pad", [y, i64([0, 2, 3, 0, 1, 2])], {"mode": "edge"})
    case("pad_reflect", "Pad", [y, i64([0, 2, 3, 0, 1, 2])], {"mode": "reflect"})
    case("pad_axes_18", "Pad", [y, i64([1, 2]), None, i64([-1])], opset=18)
    case("pad_wrap_19", "Pad", [y, i64([0, 1, 2, 0, 2, 1])], {"mode": "wrap"}, opset=19)
    case("pad_i64", "Pad", [i64([[1, 2], [3, 4]]), i64([1, 0, 0, 1])])
    case("pad_attr_2", "Pad", [y], {"pads": [0, 0, 1, 0, 0, 1], "value": 1.5}, opset=2)
    x = f(1, 4, 3, 4)
    case("convtranspose_basic", "ConvTranspose", [x, f(4, 3, 3, 3), f(3)])
    case("convtranspose_s2_p1_outpad", "ConvTranspose", [x, f(4, 2, 3, 3)], {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]})
    case("convtranspose_k2s2", "ConvTranspose", [x, f(4, 2, 2, 2), f(2)], {"strides": [2, 2]})
    case("convtranspose_group_dilation", "ConvTranspose", [x, f(4, 1, 2, 3)], {"group": 2, "dilations": [2, 1], "pads": [0, 1, 1, 0]})
    case("convtranspose_output_shape", "ConvTranspose", [x, f(4, 2, 3, 3)], {"strides": [2, 2], "output_shape": [6, 8]})
    case("convtranspose_same_upper", "ConvTranspose", [x, f(4, 2, 3, 3)], {"strides": [2, 2], "auto_pad": "SAME_UPPER"})
    case("convtranspose_1d", "ConvTranspose", [f(2, 3, 5), f(3, 2, 4), f(2)], {"strides": [3]})
    u = f(2, 3, 5, lo=-4, hi=4)
    case("selu", "Selu", [u])
    case("selu_attrs", "Selu", [u], {"alpha": 1.5, "gamma": 2.0})
    case("celu", "Celu", [u], {"alpha": 0.5})
    case("softsign", "Softsign", [u])
    case("thresholded_relu", "ThresholdedRelu", [u], {"alpha": 0.5})
    case("mish_18", "Mish", [u], opset=18)
    case("gelu_20", "Gelu", [u], opset=20)
    case("gelu_tanh_20", "Gelu", [u], {"approximate": "tanh"}, opset=20)
    case("lrn", "LRN", [f(1, 5, 3, 3)], {"size": 3, "alpha": 0.01, "beta": 0.75, "bias": 1.5})
    case("lrn_wide", "LRN", [f(2, 4, 2, 2)], {"size": 5})
    case("depth_to_space_dcr", "DepthToSpace", [f(1, 8, 2, 3)], {"blocksize": 2})
    case("depth_to_space_crd", "DepthToSpace", [f(1, 8, 2, 3)], {"blocksize": 2, "mode": "CRD"})
    case("space_to_depth", "SpaceToDepth", [f(1, 2, 4, 6)], {"blocksize": 2})
    case("cumsum", "CumSum", [f(2, 3, 4), i64(1)])
    case("cumsum_excl_rev", "CumSum", [f(2, 3, 4), np.array(-1, np.int32)], {"exclusive": 1, "reverse": 1})
    case("cumsum_i64", "CumSum", [i64([[1, 2, 3], [4, 5, 6]]), i64(0)], {"exclusive": 1})
    case("gather_elements", "GatherElements", [f(3, 4), i64([[0, 3, -1], [2, 2, 0]])], {"axis": 1})
    case("gather_elements_axis0", "GatherElements", [f(3, 4), i64([[2, 0, 1, 1]])])
    case("einsum_matmul", "Einsum", [f(3, 4), f(4, 5)], {"equation": "ij,jk->ik"})
    case("einsum_attention", "Einsum", [f(1, 2, 3, 4), f(1, 2, 5, 4)], {"equation": "bhqd,bhkd->bhqk"})
    case("einsum_implicit", "Einsum", [f(3, 4), f(4, 5)], {"equation": "ij,jk"})
    case("einsum_transpose", "Einsum", [f(2, 3, 4)], {"equation": "abc->cab"})
    case("einsum_trace_diag", "Einsum", [f(3, 3)], {"equation": "ii->i"})
    case("einsum_sum_all", "Einsum", [f(3, 4)], {"equation": "ij->"})
    case("einsum_ellipsis", "Einsum", [f(2, 3, 4, 5), f(5, 6)], {"equation": "...ij,jk->...ik"})
    case("einsum_ellipsis_bcast", "Einsum", [f(2, 1, 4, 5), f(2, 3, 5, 6)], {"equation": "...ij,...jk->...ik"})
    case("einsum_outer_three", "Einsum", [f(2), f(3), f(2)], {"equation": "a,b,a->ab"})
    up = f(1, 2, 2, 3)
    case("upsample_nearest_9", "Upsample", [up, np.array([1, 1, 2, 1.5], np.float32)], opset=9)
    case("upsample_linear_9", "Upsample", [up, np.array([1, 1, 2.5, 2], np.float32)], {"mode": "linear"}, opset=9)
    case("upsample_attr_7", "Upsample", [up], {"scales": [1.0, 1.0, 3.0, 2.0]}, opset=7)
    special = np.array([1.0, np.inf, -np.inf, 0.0, -2.5], np.float32)
    case("isinf", "IsInf", [special])
    case("isinf_negative", "IsInf", [special], {"detect_positive": 0})
    case("isnan", "IsNaN", [np.array([1.0, 0.0, -3.0], np.float32)])
    case("size", "Size", [f(2, 3, 4)])
    t = f(2, 5, lo=-0.9, hi=0.9)
    for op in ["Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Atanh"]:
        case(op.lower(), op, [t])
    case("acosh", "Acosh", [f(2, 5, lo=1, hi=5)])
    case("reducelogsum", "ReduceLogSum", [f(2, 3, 4, lo=0.1, hi=2)], {"axes": [1]})
    case("reducelogsumexp", "ReduceLogSumExp", [f(2, 3, 4)], {"axes": [2], "keepdims": 0})
    case("scatternd_rows", "ScatterND", [f(4, 3), i64([[2], [0]]), f(2, 3)])
    case("scatternd_elements", "ScatterND", [f(2, 3), i64([[1, 2], [0, -1]]), f(2)], opset=13)
    case("scatternd_add", "ScatterND", [f(4, 3), i64([[2], [2]]), f(2, 3)], {"reduction": "add"}, opset=16)
    case("scatterelements", "ScatterElements", [f(3, 4), i64([[1, 0, 3], [2, 2, -1]]), f(2, 3)], {"axis": 1})
    case("scatterelements_max", "ScatterElements", [f(3, 4), i64([[1, 0, 2, 2]]), f(1, 4)], {"reduction": "max"}, opset=18)
    ties2 = np.array([[1, 3, 3, 0, 2], [5, 5, 5, 1, 9]], np.float32)
    case("topk_largest", "TopK", [ties2, i64([3])], outputs=2)
    case("topk_smallest_axis0", "TopK", [f(4, 3), i64([2])], {"axis": 0, "largest": 0}, outputs=2)
    case("hardmax", "Hardmax", [f(3, 4)])
    case("hardmax_axis0_ties", "Hardmax", [ties2], {"axis": 0})
    case("onehot", "OneHot", [i64([0, 3, -1, 7]), i64(4), np.array([0, 1], np.float32)])
    case("onehot_axis0", "OneHot", [i64([[1, 0], [2, 1]]), i64(3), i64([-1, 5])], {"axis": 0})
    case("lpnorm_l2", "LpNormalization", [f(3, 4)])
    case("lpnorm_l1_axis0", "LpNormalization", [f(3, 4)], {"axis": 0, "p": 1})
    case("instancenorm_1d", "InstanceNormalization", [f(1, 2, 6), f(2), f(2)])


# Special values: NaN, infinities, signed zeros, huge and subnormal numbers. These cases use no
# random numbers (except SPECIAL_RNG for weights), so the random cases above are unchanged.
NAN, INF = float("nan"), float("inf")
SPECIAL = np.array([NAN, INF, -INF, -0.0, 0.0, 1.0, -1.0, 0.5, -0.5, -2.5, 100.0, -100.0,
                    3e38, -3e38, 1e-40, -1e-40], np.float32)
# The operands of binary operators (every pair, by broadcasting a column against a row).
PAIR = np.array([NAN, INF, -INF, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3e38, 1e-40], np.float32)
# Rows for reductions, pools, Softmax, ArgMax, TopK and normalizations (reduced along the last
# axis): NaN first, inside, last, twice; both infinities; all equal; signed zeros in either
# order; overflowing sums; subnormals; exp overflow.
ROWS = np.array([
    [NAN, 1, 2, -INF, INF, 0],
    [1, NAN, 2, -INF, INF, 0],
    [1, 2, -INF, INF, 0, NAN],
    [1, 2, 3, NAN, NAN, -1],
    [INF, 1, -INF, 2, 0, -1],
    [-1, INF, 2, INF, 0, 3],
    [-INF] * 6,
    [INF] * 6,
    [NAN] * 6,
    [-0.0] * 6,
    [-0.0, 0.0, -0.0, 0.0, -0.0, 0.0],
    [0.0, -0.0, 0.0, -0.0, 0.0, -0.0],
    [-0.0, -1, -2, -3, -4, -5],
    [3e38, 3e38, -1, 1, 0, 2],
    [-3e38, -3e38, 1e-40, -1e-40, 0, -1],
    [1e-40, -1e-40, 1e-45, 0, -0.0, 2e-40],
    [100, 90, -100, 0, 1, 2],
    [-INF, -INF, -INF, 1, -INF, -INF],
    [NAN, -INF, -INF, -INF, -INF, -INF],
    [2, 2, 2, 2, 2, 2],
], np.float32)
# ONNX Runtime's results that depend on where a value sits relative to its SIMD lanes (MLAS's
# 2-d and 3-d MaxPool, GlobalMaxPool; Eigen's vectorised ReduceMax/ReduceMin and Hardmax), or
# on which of its code paths runs (the sign of a zero mean, Max/Min of -0 and +0), are not
# recorded: those cases take the rows below, which avoid them (see the crate docs, "Semantics
# worth knowing").
# Rows without NaN and without -0/+0 ties (Eigen's vectorised maximum along a row keeps or
# ignores a NaN depending on its lane, and either zero of a tie).
ROWS_NO_NAN = ROWS[[4, 5, 6, 7, 9, 12, 13, 14, 15, 16, 17, 19]]
# ... and without windows of only -inf (MLAS's max pools give -inf or -3.4e38 for them).
ROWS_MAXPOOL = ROWS[[4, 5, 7, 9, 12, 13, 14, 15, 16, 19]]
# Rows without an all -0 window (ONNX Runtime's AveragePool gives -0 or +0 for it).
ROWS_AVGPOOL = ROWS[[i for i in range(len(ROWS)) if i != 9]]
# Rows whose sums and squares do not overflow (ONNX Runtime's LayerNormalization accumulates
# partly in double, giving 0 or NaN where float32 overflows).
ROWS_NO_OVERFLOW = ROWS[[i for i in range(len(ROWS)) if i not in (13, 14)]]
SPECIAL_RNG = np.random.default_rng(20261202)


def pairs(values):
    """Every ordered pair of `values`, flattened: [a0, b0, a1, b1, ...]."""
    return np.array([[a, b] for a in values for b in values], np.float32).reshape(-1)


def special_values():
    x = SPECIAL
    for op in ["Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Erf", "Reciprocal", "Floor",
               "Ceil", "Round", "Neg", "Abs", "Sign", "Softplus", "Softsign", "HardSwish",
               "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh",
               "Atanh", "IsNaN", "IsInf"]:
        case(f"special_{op.lower()}", op, [x])
    case("special_isinf_positive", "IsInf", [x], {"detect_negative": 0})
    case("special_leaky_relu", "LeakyRelu", [x], {"alpha": 0.1})
    case("special_elu", "Elu", [x], {"alpha": 0.7})
    case("special_selu", "Selu", [x])
    case("special_celu", "Celu", [x], {"alpha": 0.5})
    case("special_hard_sigmoid", "HardSigmoid", [x])
    case("special_thresholded_relu", "ThresholdedRelu", [x], {"alpha": -0.5})
    case("special_mish_18", "Mish", [x], opset=18)
    case("special_gelu_20", "Gelu", [x], opset=20)
    case("special_gelu_tanh_20", "Gelu", [x], {"approximate": "tanh"}, opset=20)
    case("special_prelu", "PRelu", [PAIR.reshape(-1, 1), PAIR])
    f32 = lambda v: np.array(v, np.float32)
    case("special_clip", "Clip", [x, f32(-1), f32(1)])
    case("special_clip_relu6", "Clip", [x, f32(0), f32(6)])
    case("special_clip_min_only", "Clip", [x, f32(-0.0)])
    case("special_clip_max_only", "Clip", [x, None, f32(0.0)])
    case("special_clip_zero_signs", "Clip", [x, f32(-0.0), f32(0.0)])
    case("special_clip_nan_min", "Clip", [x, f32(NAN), f32(1)])
    case("special_clip_nan_max", "Clip", [x, f32(-1), f32(NAN)])
    case("special_clip_inf_bounds", "Clip", [x, f32(-INF), f32(INF)])
    case("special_clip_none", "Clip", [x])
    case("special_clip_opset6", "Clip", [x], {"min": -1.0, "max": 0.0}, opset=6)
    case("special_cast_bool", "Cast", [x], {"to": TensorProto.BOOL})
    case("special_cast_f32", "Cast", [x], {"to": TensorProto.FLOAT})
    case("special_cast_i64_finite", "Cast", [f32([-0.0, 0.0, 0.5, -0.5, -2.5, 1e-40, -1e-40, 100.0, -100.0])],
         {"to": TensorProto.INT64})

    # Binary operators: every ordered pair of PAIR (a column against a row).
    a, b = PAIR.reshape(-1, 1), PAIR
    for op in ["Add", "Sub", "Mul", "Div", "Pow", "Sum", "Mean", "Equal", "Less", "Greater",
               "LessOrEqual", "GreaterOrEqual"]:
        case(f"special_{op.lower()}", op, [a, b])
    # Max/Min of -0 and +0 is either zero in ONNX Runtime, depending on the broadcast: no +0.
    c = PAIR[PAIR.view(np.uint32) != 0]
    for op in ["Max", "Min"]:
        case(f"special_{op.lower()}", op, [c.reshape(-1, 1), c])
    case("special_mod_fmod", "Mod", [a, b], {"fmod": 1})
    case("special_pow_square", "Pow", [x, f32(2.0)])
    case("special_pow_sqrt", "Pow", [x, f32(0.5)])
    case("special_pow_i64", "Pow", [x.reshape(-1, 1), i64([0, 1, 2, 3, -1])])
    # Variadic Max/Min/Sum/Mean: NaN and signed zeros in each position of three inputs.
    p = f32([NAN, 1, 1, -0.0, -0.0, 2, INF, -INF])
    q = f32([1, NAN, 1, -0.0, -1, -0.0, -INF, 1])
    r = f32([1, 1, NAN, -0.0, -2, 3, 1, INF])
    for op in ["Max", "Min", "Sum", "Mean"]:
        case(f"special_{op.lower()}_three", op, [p, q, r])
        case(f"special_{op.lower()}_one", op, [x])
    cond = np.array([True, False] * 8).reshape(16)
    case("special_where", "Where", [cond, x, x[::-1].copy()])

    # Pools. The 1-d pools see every ordered pair of PAIR as one window (kernel 2, stride 2);
    # the 2-d ones see rows as [2, 3] windows, and with padding.
    pr = pairs(PAIR).reshape(1, 1, -1)
    rows = ROWS_MAXPOOL.reshape(1, -1, 2, 3)
    case("special_maxpool_pairs", "MaxPool", [pr], {"kernel_shape": [2], "strides": [2]})
    case("special_avgpool_pairs", "AveragePool", [pr], {"kernel_shape": [2], "strides": [2]})
    case("special_maxpool_rows", "MaxPool", [rows], {"kernel_shape": [2, 3]})
    case("special_maxpool_rows_k2", "MaxPool", [rows], {"kernel_shape": [2, 2]})
    case("special_maxpool_rows_pads", "MaxPool", [rows], {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1], "strides": [2, 2]})
    case("special_maxpool_rows_1d", "MaxPool", [ROWS.reshape(1, ROWS.shape[0], 6)], {"kernel_shape": [3], "strides": [1]})
    # (ONNX Runtime's dilated MaxPool keeps a NaN or -inf that comes first in its window.)
    case("special_maxpool_rows_dilated", "MaxPool", [ROWS_MAXPOOL.reshape(1, -1, 6)], {"kernel_shape": [2], "dilations": [2]})
    case("special_maxpool_3d", "MaxPool", [ROWS_MAXPOOL.reshape(1, -1, 1, 2, 3)], {"kernel_shape": [1, 2, 2]})
    avg = ROWS_AVGPOOL.reshape(1, -1, 2, 3)
    case("special_avgpool_rows", "AveragePool", [avg], {"kernel_shape": [2, 3]})
    case("special_avgpool_rows_pads", "AveragePool", [avg], {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1], "strides": [2, 2]})
    case("special_avgpool_rows_include_pad", "AveragePool", [avg], {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1], "strides": [2, 2], "count_include_pad": 1})
    case("special_global_maxpool", "GlobalMaxPool", [rows])
    case("special_global_avgpool", "GlobalAveragePool", [avg])
    case("special_global_maxpool_1d", "GlobalMaxPool", [ROWS_MAXPOOL.reshape(1, -1, 6)])

    # Reductions along the last axis of ROWS, and over every axis.
    for op in ["ReduceSum", "ReduceMean", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare",
               "ReduceLogSumExp", "ReduceLogSum"]:
        case(f"special_{op.lower()}", op, [ROWS], {"axes": [1]}, opset=13 if op != "ReduceSum" else 11)
    for op in ["ReduceMax", "ReduceMin"]:
        case(f"special_{op.lower()}", op, [ROWS_NO_NAN], {"axes": [1]}, opset=13)
        # Along axis 0 ONNX Runtime compares row by row, the same in every lane: a NaN in the
        # first row is the result, a later one is ignored.
        case(f"special_{op.lower()}_axis0", op, [ROWS], {"axes": [0], "keepdims": 0}, opset=13)
    case("special_reducesum_axis0", "ReduceSum", [ROWS, i64([0])], opset=13)
    for op in ["ArgMax", "ArgMin"]:
        case(f"special_{op.lower()}", op, [ROWS], {"axis": 1})
        case(f"special_{op.lower()}_last", op, [ROWS], {"axis": 1, "select_last_index": 1})
        case(f"special_{op.lower()}_axis0", op, [ROWS], {"axis": 0})
    case("special_topk_largest", "TopK", [ROWS, i64([3])], outputs=2)
    case("special_topk_smallest", "TopK", [ROWS, i64([3])], {"largest": 0}, outputs=2)
    case("special_topk_all", "TopK", [ROWS, i64([6])], outputs=2)
    case("special_hardmax", "Hardmax", [ROWS_NO_NAN])
    case("special_cumsum", "CumSum", [ROWS, i64(1)])
    case("special_cumsum_exclusive", "CumSum", [ROWS, i64(1)], {"exclusive": 1})
    case("special_cumsum_reverse", "CumSum", [ROWS, i64(1)], {"reverse": 1})

    # Softmax and normalizations.
    case("special_softmax", "Softmax", [ROWS])
    case("special_logsoftmax", "LogSoftmax", [ROWS])
    case("special_softmax_axis0", "Softmax", [ROWS], {"axis": 0})
    case("special_logsoftmax_axis0", "LogSoftmax", [ROWS], {"axis": 0})
    n = ROWS.shape[0]
    case("special_layernorm", "LayerNormalization", [ROWS_NO_OVERFLOW, np.ones(6, np.float32), np.zeros(6, np.float32)])
    case("special_instancenorm", "InstanceNormalization", [ROWS.reshape(1, n, 6), np.ones(n, np.float32), np.zeros(n, np.float32)])
    case("special_lpnorm_l2", "LpNormalization", [ROWS])
    case("special_lpnorm_l1", "LpNormalization", [ROWS], {"p": 1})
    # ONNX Runtime's LRN slides one running sum of squares along the channels, so a NaN or an
    # infinity reaches every later channel: the special values sit in the last channel only.
    case("special_lrn", "LRN", [np.concatenate([np.ones((2, 16), np.float32) * f32([[0.5], [-2]]), x[None]]).reshape(1, 3, 4, 4)], {"size": 3})
    case("special_batchnorm", "BatchNormalization",
         [x.reshape(1, 16, 1), np.ones(16, np.float32), np.zeros(16, np.float32),
          np.zeros(16, np.float32), np.ones(16, np.float32)])
    case("special_batchnorm_params", "BatchNormalization",
         [np.ones((1, 4, 2), np.float32),
          f32([1, NAN, 1, -0.0]), f32([0, 0, INF, -0.0]), f32([INF, 0, 0, 1]), f32([1, 1, 0, INF])])

    # Matrix products and Conv with a NaN and an infinity in the input (the weights finite,
    # some of them zero): NaN and inf * 0 must reach the outputs they touch.
    w = SPECIAL_RNG.uniform(-2, 2, size=(4, 3)).astype(np.float32)
    w[1, 0] = 0.0
    m = SPECIAL_RNG.uniform(-2, 2, size=(3, 4)).astype(np.float32)
    m[0, 1], m[2, 3] = NAN, INF
    case("special_matmul", "MatMul", [m, w])
    case("special_gemm", "Gemm", [m, w, f32([NAN, 1, -0.0])])
    img = SPECIAL_RNG.uniform(-2, 2, size=(1, 2, 4, 4)).astype(np.float32)
    img[0, 0, 1, 1], img[0, 1, 3, 0] = NAN, -INF
    case("special_conv", "Conv", [img, SPECIAL_RNG.uniform(-1, 1, size=(2, 2, 3, 3)).astype(np.float32)], {"pads": [1, 1, 1, 1]})
    case("special_convtranspose", "ConvTranspose", [img, SPECIAL_RNG.uniform(-1, 1, size=(2, 1, 2, 2)).astype(np.float32)], {"strides": [2, 2]})
    case("special_einsum", "Einsum", [m, w], {"equation": "ij,jk->ik"})
    case("special_einsum_sum", "Einsum", [ROWS], {"equation": "ij->i"})
    z = f32([[-0.0, -0.0], [-0.0, 1.0]])
    case("special_einsum_zero_products", "Einsum", [z, z], {"equation": "ij,jk->ik"})
    case("special_einsum_zero_mul", "Einsum", [z, f32([[1, 2], [3, 4]])], {"equation": "ij,ij->ij"})
    # Upsampled along both axes, so that no tap has weight 0 (ONNX Runtime multiplies those
    # too: 0 * inf is NaN).
    case("special_resize_linear", "Resize", [ROWS[:4].reshape(1, 1, 4, 6), None, f32([1, 1, 2, 2])], {"mode": "linear"})


def quantize():
    """QuantizeLinear / DequantizeLinear on int8, per tensor and per axis, with ties and
    saturation (ONNX Runtime rounds half to even and saturates to [-128, 127])."""
    i8 = lambda values: np.array(values, dtype=np.int8)
    x = np.concatenate([f(22, lo=-40.0, hi=40.0).reshape(-1), np.float32([0.5, 1.5, -2.5, 1e9, -1e9, 0.0])])
    scalar = lambda v, t: np.array(v, dtype=t)
    case("quantize_per_tensor", "QuantizeLinear", [x, scalar(0.25, np.float32), scalar(3, np.int8)])
    case(
        "quantize_per_axis",
        "QuantizeLinear",
        [f(2, 3, 4, lo=-5.0, hi=5.0), np.float32([0.1, 0.02, 0.5]), i8([0, -10, 7])],
        {"axis": 1},
    )
    q = np.arange(-128, 128, 8, dtype=np.int8)
    case("dequantize_per_tensor", "DequantizeLinear", [q, scalar(0.125, np.float32), scalar(-5, np.int8)])
    case(
        "dequantize_per_axis",
        "DequantizeLinear",
        [q.reshape(2, 4, 4), np.float32([0.5, 0.25, 2.0, 0.01]), i8([1, 0, -3, 100])],
        {"axis": 1},
    )


def qlinear():
    """The QOperator form on int8 and uint8 (QLinearConv, QLinearMatMul, MatMulInteger,
    ConvInteger, com.microsoft's QLinearAdd and QLinearMul, DynamicQuantizeLinear) and the
    QDQ pair on uint8. Some scales are ratios of small powers of two, so that requantised values
    land exactly on ties (rounded half to even)."""
    i8 = lambda shape: RNG.integers(-128, 128, size=shape).astype(np.int8)
    u8 = lambda shape: RNG.integers(0, 256, size=shape).astype(np.uint8)
    s = lambda v: np.array(v, dtype=np.float32)
    zi = lambda v: np.array(v, dtype=np.int8)
    zu = lambda v: np.array(v, dtype=np.uint8)

    # QDQ on uint8.
    x = np.concatenate([f(22, lo=-10.0, hi=60.0).reshape(-1), np.float32([0.5, 1.5, 2.5, -1e9, 1e9, 0.0])])
    case("quantize_u8_per_tensor", "QuantizeLinear", [x, s(0.25), zu(17)])
    case("quantize_u8_no_zero_point", "QuantizeLinear", [x, s(0.5)])
    case("quantize_u8_per_axis", "QuantizeLinear", [f(2, 3, 4, lo=-5.0, hi=5.0), s([0.1, 0.02, 0.5]), zu([128, 0, 255])], {"axis": 1})
    q = np.arange(0, 256, 8, dtype=np.uint8)
    case("dequantize_u8_per_tensor", "DequantizeLinear", [q, s(0.125), zu(130)])
    case("dequantize_u8_per_axis", "DequantizeLinear", [q.reshape(2, 4, 4), s([0.5, 0.25, 2.0, 0.01]), zu([1, 0, 200, 100])], {"axis": 1})

    # QLinearMatMul: (a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp).
    case("qlinear_matmul_s8", "QLinearMatMul", [i8((5, 19)), s(0.02), zi(3), i8((19, 7)), s(0.01), zi(0), s(0.05), zi(-4)])
    case("qlinear_matmul_u8s8", "QLinearMatMul", [u8((2, 4, 16)), s(0.5), zu(128), i8((16, 6)), s(0.25), zi(0), s(16.0), zu(100)])
    case("qlinear_matmul_u8u8", "QLinearMatMul", [u8((6, 33)), s(0.013), zu(120), u8((33, 5)), s(0.021), zu(131), s(0.9), zu(7)])
    case("qlinear_matmul_per_column", "QLinearMatMul", [i8((4, 12)), s(0.03), zi(-2), i8((12, 5)), s([0.01, 0.02, 0.005, 0.04, 0.0125]), zi([0, 0, 0, 0, 0]), s(0.07), zi(5)])
    # MatMulInteger: int32 out.
    case("matmul_integer_u8s8", "MatMulInteger", [u8((3, 10)), i8((10, 4)), zu(128), zi(-3)])
    case("matmul_integer_s8_per_column", "MatMulInteger", [i8((2, 3, 9)), i8((9, 4)), zi(1), zi([0, 1, -1, 5])])
    case("matmul_integer_no_zero_points", "MatMulInteger", [u8((4, 7)), u8((7, 3))])

    # QLinearConv: (x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B).
    bias = lambda n: RNG.integers(-3000, 3000, size=n).astype(np.int32)
    case("qlinear_conv_s8_per_channel", "QLinearConv",
         [i8((1, 3, 7, 8)), s(0.05), zi(-1), i8((4, 3, 3, 3)), s([0.01, 0.02, 0.004, 0.03]), zi([0, 0, 0, 0]), s(0.25), zi(2), bias(4)],
         {"pads": [1, 1, 1, 1], "strides": [2, 2]})
    case("qlinear_conv_u8s8_depthwise", "QLinearConv",
         [u8((1, 4, 9, 9)), s(0.5), zu(128), i8((4, 1, 3, 3)), s(0.25), zi(0), s(8.0), zu(120), bias(4)],
         {"group": 4, "dilations": [2, 2], "pads": [2, 2, 2, 2]})
    case("qlinear_conv_u8u8_same", "QLinearConv",
         [u8((2, 2, 5, 6)), s(0.02), zu(10), u8((3, 2, 2, 3)), s(0.03), zu(127), s(0.4), zu(128)],
         {"auto_pad": "SAME_UPPER"})
    case("qlinear_conv_1d_grouped", "QLinearConv",
         [i8((1, 4, 11)), s(0.125), zi(5), i8((6, 2, 3)), s(0.0625), zi(0), s(1.0), zi(-7), bias(6)],
         {"group": 2, "strides": [2]})
    # ConvInteger: int32 out.
    case("conv_integer_u8u8", "ConvInteger", [u8((1, 2, 5, 5)), u8((3, 2, 3, 3)), zu(100), zu(7)], {"pads": [1, 0, 1, 0]})
    case("conv_integer_s8_groups", "ConvInteger", [i8((1, 4, 4, 4)), i8((4, 2, 2, 2))], {"group": 2})

    # com.microsoft QLinearAdd / QLinearMul: (A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp).
    for kind, q8, z in (("s8", i8, zi), ("u8", u8, zu)):
        lo = -100 if kind == "s8" else 20
        for op in ("QLinearAdd", "QLinearMul"):
            name = op[7:].lower()
            case(f"qlinear_{name}_{kind}", op, [q8((2, 3, 37)), s(0.05), z(lo), q8((2, 3, 37)), s(0.025), z(lo + 7), s(0.1), z(lo + 3)], domain="com.microsoft")
            case(f"qlinear_{name}_{kind}_rows", op, [q8((2, 3, 37)), s(0.03), z(lo), q8((37,)), s(0.07), z(lo + 1), s(0.2), z(lo + 5)], domain="com.microsoft")
            case(f"qlinear_{name}_{kind}_columns", op, [q8((2, 3, 37)), s(0.125), z(lo), q8((3, 1)), s(0.375), z(lo + 2), s(0.25), z(lo + 9)], domain="com.microsoft")
            case(f"qlinear_{name}_{kind}_scalar_a", op, [q8((1,)), s(0.02), z(lo), q8((4, 9)), s(0.013), z(lo + 4), s(0.03), z(lo)], domain="com.microsoft")

    # com.microsoft QGemm: (A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp), and
    # QLinearGlobalAveragePool: (X, x_scale, x_zp, y_scale, y_zp).
    case("qgemm_u8s8", "QGemm", [u8((3, 20)), s(0.04), zu(128), i8((6, 20)), s(0.01), zi(0), bias(6), s(0.3), zu(120)],
         {"transB": 1, "alpha": 0.5}, domain="com.microsoft")
    case("qgemm_s8_per_column", "QGemm", [i8((20, 4)), s(0.05), zi(3), i8((20, 5)), s([0.01, 0.02, 0.004, 0.03, 0.0125]), zi([0, 0, 0, 0, 0]), bias(5), s(0.25), zi(-6)],
         {"transA": 1}, domain="com.microsoft")
    case("qgemm_float_output", "QGemm", [u8((2, 9)), s(0.1), zu(100), i8((9, 3)), s(0.02), zi(0), None], domain="com.microsoft")
    case("qlinear_global_average_pool_u8", "QLinearGlobalAveragePool", [u8((2, 3, 5, 7)), s(0.05), zu(128), s(0.02), zu(100)],
         {"channels_last": 0}, domain="com.microsoft")
    case("qlinear_global_average_pool_s8_nhwc", "QLinearGlobalAveragePool", [i8((1, 4, 4, 6)), s(0.125), zi(-3), s(0.0625), zi(5)],
         {"channels_last": 1}, domain="com.microsoft")

    # MaxPool on 8-bit tensors (the QOperator form's pools).
    case("max_pool_u8", "MaxPool", [u8((1, 2, 7, 6))], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})
    case("max_pool_s8_ceil", "MaxPool", [i8((1, 3, 5, 5))], {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1})

    # DynamicQuantizeLinear: (y uint8, y_scale, y_zero_point).
    case("dynamic_quantize", "DynamicQuantizeLinear", [f(3, 17, lo=-3.0, hi=7.0)], outputs=3, opset=17)
    case("dynamic_quantize_positive", "DynamicQuantizeLinear", [f(20, lo=0.5, hi=2.0)], outputs=3, opset=17)


def recurrent():
    """LSTM, GRU and RNN: directions, biases, initial states, peepholes, sequence lengths (one
    row of none), clip, linear_before_reset, named activations with and without alphas."""
    seq, batch, features, hidden = 5, 3, 4, 3
    x = f(seq, batch, features)
    lens = np.array([5, 2, 0], np.int32)
    for op, gates in [("LSTM", 4), ("GRU", 3), ("RNN", 1)]:
        for direction, dirs in [("forward", 1), ("reverse", 1), ("bidirectional", 2)]:
            w = f(dirs, gates * hidden, features, lo=-0.7, hi=0.7)
            r = f(dirs, gates * hidden, hidden, lo=-0.7, hi=0.7)
            b = f(dirs, 2 * gates * hidden, lo=-0.3, hi=0.3)
            h0 = f(dirs, batch, hidden, lo=-0.5, hi=0.5)
            inputs = [x, w, r, b, lens, h0]
            attrs = {"hidden_size": hidden, "direction": direction}
            outputs = 2
            if op == "LSTM":
                inputs += [f(dirs, batch, hidden, lo=-0.5, hi=0.5), f(dirs, 3 * hidden, lo=-0.5, hi=0.5)]
                outputs = 3
            name = f"{op.lower()}_{direction}"
            case(name, op, inputs, attrs, outputs=outputs)
        w = f(1, gates * hidden, features, lo=-0.7, hi=0.7)
        r = f(1, gates * hidden, hidden, lo=-0.7, hi=0.7)
        case(f"{op.lower()}_plain_clip", op, [x, w, r], {"hidden_size": hidden, "clip": 0.6})
    w, r = f(1, 3 * hidden, features), f(1, 3 * hidden, hidden)
    case("gru_linear_before_reset", "GRU", [x, w, r, f(1, 6 * hidden)],
         {"hidden_size": hidden, "linear_before_reset": 1}, outputs=2)
    w, r = f(1, hidden, features), f(1, hidden, hidden)
    for names, alphas, betas in [
        (["Affine"], [0.7], None),
        (["ThresholdedRelu"], None, None),
        (["ScaledTanh"], [1.5], [0.5]),
        (["LeakyRelu"], None, None),
        (["Elu"], [0.5], None),
        (["Softsign"], None, None),
        (["Softplus"], None, None),
    ]:
        attrs = {"hidden_size": hidden, "activations": names}
        if alphas:
            attrs["activation_alpha"] = alphas
        if betas:
            attrs["activation_beta"] = betas
        case(f"rnn_{names[0].lower()}", "RNN", [x, w, r], attrs)


def main():
    unary()
    binary()
    cast()
    conv()
    pool()
    matmul()
    normalization()
    reduce()
    shape_ops()
    resize()
    more()
    special_values()
    quantize()
    qlinear()
    recurrent()
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases.json")
    with open(path, "w") as out:
        out.write("[\n" + ",\n".join(CASES) + "\n]\n")
    print(f"{len(CASES)} cases, onnxruntime {ort.__version__}, {os.path.getsize(path)} bytes -> {path}")


if __name__ == "__main__":
    main()
