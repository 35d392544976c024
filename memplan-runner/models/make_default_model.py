"""Writes default.onnx, the small network memplan-runner builds for when MEMPLAN_MODEL is unset,
with a reference input and ONNX Runtime's output for it.

    pip install onnx onnxruntime numpy   # once; CI never runs this
    python3 make_default_model.py

A residual CNN on a 1x3x32x32 image with 10 classes: Conv, BatchNormalization, Relu, MaxPool, a
residual Add, Clip, GlobalAveragePool, Reshape by a Constant shape, Gemm and Softmax. Weights are
seeded random numbers; the reference comes from ONNX Runtime with graph optimisations off.
"""

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(20261201)


def weight(name, *shape, scale=0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


inits = [
    weight("conv1.weight", 16, 3, 3, 3),
    weight("conv1.bias", 16),
    weight("bn.scale", 16, scale=0.2),
    weight("bn.bias", 16, scale=0.1),
    weight("bn.mean", 16, scale=0.1),
    numpy_helper.from_array((rng.random(16) + 0.5).astype(np.float32), "bn.var"),
    weight("conv2.weight", 16, 16, 3, 3, scale=0.1),
    weight("conv2.bias", 16),
    weight("conv3.weight", 16, 1, 3, 3),  # depthwise
    weight("fc.weight", 10, 16),
    weight("fc.bias", 10),
]
nodes = [
    helper.make_node("Conv", ["input", "conv1.weight", "conv1.bias"], ["c1"], name="/conv1/Conv",
                     pads=[1, 1, 1, 1]),
    helper.make_node("BatchNormalization", ["c1", "bn.scale", "bn.bias", "bn.mean", "bn.var"],
                     ["b1"], name="/bn/BatchNormalization", epsilon=1e-5),
    helper.make_node("Relu", ["b1"], ["r1"], name="/relu1/Relu"),
    helper.make_node("MaxPool", ["r1"], ["p1"], name="/pool/MaxPool", kernel_shape=[2, 2],
                     strides=[2, 2]),
    helper.make_node("Conv", ["p1", "conv2.weight", "conv2.bias"], ["c2"], name="/conv2/Conv",
                     pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c2"], ["r2"], name="/relu2/Relu"),
    helper.make_node("Add", ["r2", "p1"], ["s"], name="/add/Add"),
    helper.make_node("Conv", ["s", "conv3.weight"], ["c3"], name="/conv3/Conv", group=16,
                     strides=[2, 2], pads=[1, 1, 1, 1]),
    helper.make_node("Clip", ["c3", "", ""], ["k"], name="/clip/Clip"),
    helper.make_node("GlobalAveragePool", ["k"], ["g"], name="/gap/GlobalAveragePool"),
    helper.make_node("Constant", [], ["shape"], name="/Constant",
                     value=numpy_helper.from_array(np.array([1, 16], dtype=np.int64))),
    helper.make_node("Reshape", ["g", "shape"], ["f"], name="/Reshape"),
    helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"], name="/fc/Gemm",
                     transB=1),
    helper.make_node("Softmax", ["logits"], ["probs"], name="/Softmax", axis=-1),
]
graph = helper.make_graph(
    nodes, "default",
    [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])],
    [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])],
    initializer=inits,
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="memplan-runner")
model.ir_version = 8
model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
onnx.checker.check_model(model, full_check=True)
onnx.save(model, "default.onnx")

x = rng.standard_normal((1, 3, 32, 32)).astype(np.float32)
options = ort.SessionOptions()
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
options.intra_op_num_threads = 1
session = ort.InferenceSession("default.onnx", options, providers=["CPUExecutionProvider"])
(y,) = session.run(None, {"input": x})
x.astype("<f4").tofile("default.input.bin")
y.astype("<f4").tofile("default.output.bin")
print("default.onnx:", len(nodes), "nodes; output", y.shape, "top class", int(y.argmax()))
