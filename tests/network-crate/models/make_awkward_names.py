"""Writes `awkward_names.onnx`: values named like the generated code's own words (a graph input
`arena`, values `v`, `e`, `blob`, `k`, a graph output `outputs`), with its input and ONNX Runtime's
output. Needs onnx, onnxruntime."""

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

graph = helper.make_graph(
    [
        helper.make_node("Relu", ["arena"], ["v"], name="inputs"),
        helper.make_node("Add", ["v", "arena"], ["e"], name="outputs_node"),
        helper.make_node("Mul", ["e", "v"], ["blob"], name="k"),
        helper.make_node("Sigmoid", ["blob"], ["k"], name="run"),
        helper.make_node("Sub", ["k", "e"], ["outputs"], name="self"),
    ],
    "awkward_names",
    [helper.make_tensor_value_info("arena", TensorProto.FLOAT, [2, 5])],
    [helper.make_tensor_value_info("outputs", TensorProto.FLOAT, [2, 5])],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
model = onnx.shape_inference.infer_shapes(model)
onnx.checker.check_model(model, full_check=True)
onnx.save(model, "awkward_names.onnx")
x = np.random.default_rng(3).standard_normal((2, 5)).astype(np.float32)
y = ort.InferenceSession("awkward_names.onnx", providers=["CPUExecutionProvider"]).run(None, {"arena": x})[0]
open("awkward_names.input.bin", "wb").write(x.tobytes())
open("awkward_names.output.bin", "wb").write(y.astype("<f4").tobytes())
