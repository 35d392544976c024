#!/usr/bin/env python3
"""Thirteen small ONNX networks of families nobody tuned memplan's kernels for, with reference data.

For the developer, never needed by a user: `pip install onnx onnxruntime numpy`, then

    python3 memplan-runner/bench/make_unseen.py                   # writes target/unseen/
    python3 memplan-runner/bench/make_unseen.py --out DIR         # or anywhere else

The networks are built node by node with `onnx.helper` (no exporter, no torch), in the node
patterns PyTorch's exporter produces, with opset 17, float32, batch 1 and static shapes:

- gpt2_tiny         decoder-only transformer on an embedded [1,128,256] sequence: 2 pre-norm blocks,
                    4 heads of 64, fused qkv MatMul + Split, additive causal mask, Erf GELU MLP.
- vit_tiny          [1,3,32,32] image: 4x4 patch Conv, positional embedding, 2 encoder blocks
                    (3 heads of 64, tanh GELU with Pow), mean over tokens, Gemm to 10 classes.
- resnet8_32        MLPerf Tiny's ResNet-8 shape: Conv/BatchNormalization/Relu, three residual
                    stages (16, 32, 64 channels; 1x1 stride-2 Conv shortcuts), AveragePool, Gemm, Softmax.
- dwcnn_96          MobileNetV1-like, width 0.25, 96x96: 13 depthwise-separable blocks, Clip as Relu6.
- mlp_784           Gemm 784->512->512->10 with Relu and Softmax.
- convnext_like_28  two ConvNeXt blocks on [1,16,28,28] (7x7 depthwise Conv, NHWC LayerNormalization,
                    Erf GELU MLP, residual), then a 2x2 stride-2 Conv, HardSwish, pooling and Gemm.
- unet_64, bert_encoder, effnet_like_96, tcn_audio_200, vgg_64: see their functions below.
- lstm_kws_49       two stacked LSTMs of 64 units on [1,49,10] MFCC frames (PyTorch's batch_first
                    export: Transpose, zero initial states), the last state, Gemm to 12 keywords.
- gru_bidir_100     a bidirectional GRU of 48 units (linear_before_reset) on [1,100,32], the mean
                    over time, Gemm to 10 classes.

Weights are random with a fixed seed per network (numpy `default_rng`), scaled by fan-in so the
activations stay in a sane range. `onnx.shape_inference.infer_shapes` annotates every intermediate
value (the memplan build needs a static shape for each), and the script checks that it did.

For each network `<name>` the output folder gets `<name>.onnx`, `<name>.input.bin` (the single
input, random normal with a fixed seed, raw little-endian float32) and `<name>.output.bin` (the
single output as computed by ONNX Runtime's CPUExecutionProvider with ORT_DISABLE_ALL and one
intra-op thread, raw little-endian float32). It prints each network's file size and, as a sanity
check, the max abs difference between ONNX Runtime's default-optimisation output and that reference.
"""

import argparse
import math
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
WORKSPACE = os.path.dirname(os.path.dirname(HERE))

OPSET = 17
IR_VERSION = 8  # the lowest IR version opset 17 allows: readable by older tools too
MAX_BYTES = 8 * 1024 * 1024


class GraphBuilder:
    """Collects nodes and initializers of one graph; every value and node gets a readable name.

    `op(...)` adds one node and returns its output name (or names); the node is named after its
    first output. Initializers come from `param` (random, scaled by fan-in), `const` (given values)
    and the scalar helper `scalar`, which reuses one initializer per distinct value.
    """

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.initializers = {}

    # -- initializers ----------------------------------------------------------------------

    def const(self, name, array):
        """A constant initializer holding `array` as given (dtype kept)."""
        if name in self.initializers:
            raise ValueError(f"initializer {name} defined twice")
        self.initializers[name] = numpy_helper.from_array(np.asarray(array), name)
        return name

    def scalar(self, value, dtype=np.float32):
        """A rank-0 constant, shared by every node that uses the same value."""
        name = f"const.{np.dtype(dtype).name}.{value:g}".replace("-", "minus")
        if name not in self.initializers:
            self.const(name, np.array(value, dtype=dtype))
        return name

    def shape(self, name, dims):
        """An int64 shape (or perm, or split sizes) initializer, as Reshape and Split take it."""
        return self.const(name, np.array(dims, dtype=np.int64))

    def param(self, name, shape, fan_in, gain=1.0):
        """A random weight, normal with standard deviation gain / sqrt(fan_in)."""
        std = gain / math.sqrt(fan_in)
        return self.const(name, (self.rng.standard_normal(shape) * std).astype(np.float32))

    def bias(self, name, size, std=0.02):
        return self.const(name, (self.rng.standard_normal(size) * std).astype(np.float32))

    def norm_params(self, prefix, channels):
        """Scale near 1 and shift near 0, so a normalisation is not the identity."""
        scale = self.const(f"{prefix}.weight", (1.0 + 0.1 * self.rng.standard_normal(channels)).astype(np.float32))
        shift = self.const(f"{prefix}.bias", (0.05 * self.rng.standard_normal(channels)).astype(np.float32))
        return scale, shift

    # -- nodes -----------------------------------------------------------------------------

    def op(self, op_type, inputs, outputs, **attributes):
        """Adds one node; `outputs` is a name or a list of names. Returns the same."""
        names = [outputs] if isinstance(outputs, str) else list(outputs)
        self.nodes.append(helper.make_node(op_type, list(inputs), names, name=f"{names[0]}/{op_type}", **attributes))
        return outputs

    # -- layers shared by several networks -------------------------------------------------

    def linear(self, prefix, x, d_in, d_out):
        """x @ W + b, as PyTorch exports nn.Linear on a rank-3 input: MatMul then Add."""
        w = self.param(f"{prefix}.weight", (d_in, d_out), d_in)
        b = self.bias(f"{prefix}.bias", d_out)
        y = self.op("MatMul", [x, w], f"{prefix}.matmul")
        return self.op("Add", [y, b], f"{prefix}.out")

    def gemm(self, prefix, x, d_in, d_out):
        """nn.Linear on a rank-2 input: Gemm with the weight stored [out, in] and transB=1."""
        w = self.param(f"{prefix}.weight", (d_out, d_in), d_in)
        b = self.bias(f"{prefix}.bias", d_out)
        return self.op("Gemm", [x, w, b], f"{prefix}.out", alpha=1.0, beta=1.0, transB=1)

    def layer_norm(self, prefix, x, d):
        scale, shift = self.norm_params(prefix, d)
        return self.op("LayerNormalization", [x, scale, shift], f"{prefix}.out", axis=-1, epsilon=1e-5)

    def gelu_erf(self, prefix, x):
        """x * 0.5 * (1 + erf(x / sqrt(2))) in the five nodes PyTorch exports for nn.GELU()."""
        scaled = self.op("Div", [x, self.scalar(math.sqrt(2.0))], f"{prefix}.div")
        erf = self.op("Erf", [scaled], f"{prefix}.erf")
        one_plus = self.op("Add", [erf, self.scalar(1.0)], f"{prefix}.add")
        times_x = self.op("Mul", [x, one_plus], f"{prefix}.mul")
        return self.op("Mul", [times_x, self.scalar(0.5)], f"{prefix}.out")

    def gelu_tanh(self, prefix, x):
        """0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), with Pow for the cube."""
        cube = self.op("Pow", [x, self.scalar(3.0)], f"{prefix}.pow")
        cube_scaled = self.op("Mul", [cube, self.scalar(0.044715)], f"{prefix}.mul_cube")
        inner = self.op("Add", [x, cube_scaled], f"{prefix}.add_cube")
        inner_scaled = self.op("Mul", [inner, self.scalar(math.sqrt(2.0 / math.pi))], f"{prefix}.mul_sqrt")
        tanh = self.op("Tanh", [inner_scaled], f"{prefix}.tanh")
        one_plus = self.op("Add", [tanh, self.scalar(1.0)], f"{prefix}.add_one")
        half_x = self.op("Mul", [x, self.scalar(0.5)], f"{prefix}.half_x")
        return self.op("Mul", [half_x, one_plus], f"{prefix}.out")

    def self_attention(self, prefix, x, seq, heads, head_dim, mask=None):
        """Multi-head self-attention the way GPT-2 exports: fused qkv, Split, heads by Reshape +
        Transpose (k straight to [b, h, d, s]), scores scaled by Mul, optional additive mask."""
        d = heads * head_dim
        qkv = self.linear(f"{prefix}.qkv", x, d, 3 * d)
        q, k, v = self.op("Split", [qkv, self.shape(f"{prefix}.split_sizes", [d, d, d])],
                          [f"{prefix}.q", f"{prefix}.k", f"{prefix}.v"], axis=-1)
        head_shape = self.shape(f"{prefix}.head_shape", [1, seq, heads, head_dim])
        heads_of = {}
        for name, value, perm in [("q", q, [0, 2, 1, 3]), ("k", k, [0, 2, 3, 1]), ("v", v, [0, 2, 1, 3])]:
            split = self.op("Reshape", [value, head_shape], f"{prefix}.{name}_heads")
            heads_of[name] = self.op("Transpose", [split], f"{prefix}.{name}_transposed", perm=perm)
        scores = self.op("MatMul", [heads_of["q"], heads_of["k"]], f"{prefix}.scores")
        scores = self.op("Mul", [scores, self.scalar(1.0 / math.sqrt(head_dim))], f"{prefix}.scores_scaled")
        if mask is not None:
            scores = self.op("Add", [scores, mask], f"{prefix}.scores_masked")
        probs = self.op("Softmax", [scores], f"{prefix}.probs", axis=-1)
        context = self.op("MatMul", [probs, heads_of["v"]], f"{prefix}.context")
        context = self.op("Transpose", [context], f"{prefix}.context_transposed", perm=[0, 2, 1, 3])
        merged = self.op("Reshape", [context, self.shape(f"{prefix}.merged_shape", [1, seq, d])], f"{prefix}.merged")
        return self.linear(f"{prefix}.proj", merged, d, d)

    def transformer_block(self, prefix, x, seq, heads, head_dim, mlp, gelu, mask=None):
        """Pre-norm block: x + attn(ln1(x)), then h + mlp(ln2(h))."""
        d = heads * head_dim
        normed = self.layer_norm(f"{prefix}.ln1", x, d)
        attended = self.self_attention(f"{prefix}.attn", normed, seq, heads, head_dim, mask)
        h = self.op("Add", [x, attended], f"{prefix}.residual1")
        normed = self.layer_norm(f"{prefix}.ln2", h, d)
        hidden = self.linear(f"{prefix}.mlp.fc1", normed, d, mlp)
        hidden = gelu(f"{prefix}.mlp.gelu", hidden)
        out = self.linear(f"{prefix}.mlp.fc2", hidden, mlp, d)
        return self.op("Add", [h, out], f"{prefix}.residual2")

    def conv(self, prefix, x, c_in, c_out, kernel, stride=1, pad=0, group=1, bias=True):
        """Conv with He-initialised weights [c_out, c_in/group, k, k]."""
        fan_in = (c_in // group) * kernel * kernel
        inputs = [x, self.param(f"{prefix}.weight", (c_out, c_in // group, kernel, kernel), fan_in, gain=math.sqrt(2.0))]
        if bias:
            inputs.append(self.bias(f"{prefix}.bias", c_out))
        return self.op("Conv", inputs, f"{prefix}.out", kernel_shape=[kernel, kernel], strides=[stride, stride],
                       pads=[pad] * 4, group=group, dilations=[1, 1])

    def batch_norm(self, prefix, x, channels):
        """Inference-mode BatchNormalization with random running statistics."""
        scale, shift = self.norm_params(prefix, channels)
        mean = self.const(f"{prefix}.running_mean", (0.1 * self.rng.standard_normal(channels)).astype(np.float32))
        var = self.const(f"{prefix}.running_var", self.rng.uniform(0.5, 1.5, channels).astype(np.float32))
        return self.op("BatchNormalization", [x, scale, shift, mean, var], f"{prefix}.out", epsilon=1e-5, momentum=0.9)

    def relu6(self, prefix, x):
        """Relu6 as Clip with min and max as inputs (opset 11 and later)."""
        return self.op("Clip", [x, self.scalar(0.0), self.scalar(6.0)], f"{prefix}.out")

    def classifier_head(self, prefix, x, channels, classes):
        """GlobalAveragePool, Flatten, Gemm: [1, C, H, W] -> [1, classes]."""
        pooled = self.op("GlobalAveragePool", [x], f"{prefix}.pool")
        flat = self.op("Flatten", [pooled], f"{prefix}.flatten", axis=1)
        return self.gemm(f"{prefix}.fc", flat, channels, classes)

    # -- the model -------------------------------------------------------------------------

    def model(self, name, input_shape, output, output_shape):
        """The finished model: one float input `input`, one float output `output`, shapes inferred."""
        graph = helper.make_graph(
            self.nodes,
            name,
            [helper.make_tensor_value_info("input", TensorProto.FLOAT, input_shape)],
            [helper.make_tensor_value_info("output", TensorProto.FLOAT, output_shape)],
            initializer=list(self.initializers.values()),
        )
        # The last node writes the graph output under its readable name; rename it to `output`.
        last = graph.node[-1]
        assert list(last.output) == [output], f"{name}: the last node must produce the output"
        last.output[0] = "output"
        model = helper.make_model(
            graph,
            producer_name="memplan make_unseen.py",
            opset_imports=[helper.make_opsetid("", OPSET)],
        )
        model.ir_version = IR_VERSION
        model = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
        onnx.checker.check_model(model, full_check=True)
        require_static_shapes(model)
        return model


def require_static_shapes(model):
    """Fails unless every value a node produces has a fully static float32 shape."""
    graph = model.graph
    known = {}
    for info in list(graph.value_info) + list(graph.output):
        tensor = info.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]
        known[info.name] = (tensor.elem_type, tensor.HasField("shape"), dims)
    for node in graph.node:
        for out in node.output:
            if out not in known:
                raise RuntimeError(f"{graph.name}: no value_info for {out} (from {node.name})")
            elem_type, has_shape, dims = known[out]
            if elem_type != TensorProto.FLOAT or not has_shape or any(d is None or d <= 0 for d in dims):
                raise RuntimeError(f"{graph.name}: {out} is not a static float32 tensor: {dims}")


# -- the networks -----------------------------------------------------------------------------


def gpt2_tiny():
    """Decoder-only transformer on an already-embedded sequence [1, 128, 256] -> [1, 128, 256]."""
    seq, heads, head_dim, mlp, blocks = 128, 4, 64, 1024, 2
    d = heads * head_dim
    g = GraphBuilder(seed=101)
    # The additive causal mask older exports carry: 0 on and below the diagonal, -1e4 above.
    causal = np.triu(np.full((seq, seq), -1e4, dtype=np.float32), k=1).reshape(1, 1, seq, seq)
    mask = g.const("causal_mask", causal)
    x = "input"
    for i in range(blocks):
        x = g.transformer_block(f"h{i}", x, seq, heads, head_dim, mlp, g.gelu_erf, mask)
    out = g.layer_norm("ln_f", x, d)
    return g.model("gpt2_tiny", [1, seq, d], out, [1, seq, d])


def vit_tiny():
    """Vision transformer on [1, 3, 32, 32]: 64 patches of 4x4, d 192, 3 heads -> [1, 10]."""
    heads, head_dim, mlp, blocks, classes = 3, 64, 768, 2, 10
    d = heads * head_dim
    patches = (32 // 4) ** 2
    g = GraphBuilder(seed=102)
    x = g.conv("patch_embed", "input", 3, d, kernel=4, stride=4)  # [1, 192, 8, 8]
    x = g.op("Reshape", [x, g.shape("patch_embed.flat_shape", [1, d, patches])], "patch_embed.flat")
    x = g.op("Transpose", [x], "patch_embed.tokens", perm=[0, 2, 1])  # [1, 64, 192]
    pos = g.const("pos_embed", (0.02 * g.rng.standard_normal((1, patches, d))).astype(np.float32))
    x = g.op("Add", [x, pos], "tokens_with_pos")
    for i in range(blocks):
        x = g.transformer_block(f"blocks{i}", x, patches, heads, head_dim, mlp, g.gelu_tanh)
    x = g.layer_norm("norm", x, d)
    x = g.op("ReduceMean", [x], "token_mean", axes=[1], keepdims=0)  # axes is an attribute until opset 18
    out = g.gemm("head", x, d, classes)
    return g.model("vit_tiny", [1, 3, 32, 32], out, [1, classes])


def resnet8_32():
    """MLPerf Tiny's image-classification ResNet-8 on [1, 3, 32, 32] -> class probabilities [1, 10]."""
    g = GraphBuilder(seed=103)
    x = g.conv("stem.conv", "input", 3, 16, kernel=3, pad=1)
    x = g.batch_norm("stem.bn", x, 16)
    x = g.op("Relu", [x], "stem.relu")
    c_in = 16
    for stage, (c_out, stride) in enumerate([(16, 1), (32, 2), (64, 2)], start=1):
        p = f"stage{stage}"
        y = g.conv(f"{p}.conv1", x, c_in, c_out, kernel=3, stride=stride, pad=1)
        y = g.batch_norm(f"{p}.bn1", y, c_out)
        y = g.op("Relu", [y], f"{p}.relu1")
        y = g.conv(f"{p}.conv2", y, c_out, c_out, kernel=3, pad=1)
        y = g.batch_norm(f"{p}.bn2", y, c_out)
        shortcut = x if stride == 1 else g.conv(f"{p}.shortcut", x, c_in, c_out, kernel=1, stride=stride)
        y = g.op("Add", [y, shortcut], f"{p}.add")
        x = g.op("Relu", [y], f"{p}.relu2")
        c_in = c_out
    x = g.op("AveragePool", [x], "pool", kernel_shape=[8, 8], strides=[8, 8])  # [1, 64, 1, 1]
    x = g.op("Flatten", [x], "flatten", axis=1)
    x = g.gemm("fc", x, 64, 10)
    out = g.op("Softmax", [x], "probs", axis=-1)
    return g.model("resnet8_32", [1, 3, 32, 32], out, [1, 10])


def dwcnn_96():
    """MobileNetV1-like, width 0.25, on [1, 3, 96, 96]: 13 depthwise-separable blocks -> [1, 2]."""
    widths = [16, 32, 32, 64, 64, 128, 128, 128, 128, 128, 128, 256, 256]
    strided = {2, 4, 6, 12}  # 1-based block numbers whose depthwise Conv has stride 2
    g = GraphBuilder(seed=104)
    x = g.conv("stem.conv", "input", 3, 8, kernel=3, stride=2, pad=1, bias=False)
    x = g.batch_norm("stem.bn", x, 8)
    x = g.relu6("stem.relu6", x)
    c = 8
    for i, c_out in enumerate(widths, start=1):
        p = f"block{i}"
        x = g.conv(f"{p}.dw", x, c, c, kernel=3, stride=2 if i in strided else 1, pad=1, group=c, bias=False)
        x = g.batch_norm(f"{p}.dw_bn", x, c)
        x = g.relu6(f"{p}.dw_relu6", x)
        x = g.conv(f"{p}.pw", x, c, c_out, kernel=1, bias=False)
        x = g.batch_norm(f"{p}.pw_bn", x, c_out)
        x = g.relu6(f"{p}.pw_relu6", x)
        c = c_out
    out = g.classifier_head("head", x, c, 2)
    return g.model("dwcnn_96", [1, 3, 96, 96], out, [1, 2])


def mlp_784():
    """Multi-layer perceptron on a flattened 28x28 image [1, 784] -> class probabilities [1, 10]."""
    g = GraphBuilder(seed=105)
    x = g.gemm("fc1", "input", 784, 512)
    x = g.op("Relu", [x], "relu1")
    x = g.gemm("fc2", x, 512, 512)
    x = g.op("Relu", [x], "relu2")
    x = g.gemm("fc3", x, 512, 10)
    out = g.op("Softmax", [x], "probs", axis=-1)
    return g.model("mlp_784", [1, 784], out, [1, 10])


def convnext_like_28():
    """Two ConvNeXt blocks on [1, 16, 28, 28], then a strided Conv, HardSwish and a head -> [1, 10]."""
    c, expand, blocks = 16, 64, 2
    g = GraphBuilder(seed=106)
    x = "input"
    for i in range(blocks):
        p = f"block{i}"
        y = g.conv(f"{p}.dwconv", x, c, c, kernel=7, pad=3, group=c)
        y = g.op("Transpose", [y], f"{p}.to_nhwc", perm=[0, 2, 3, 1])  # [1, 28, 28, 16]
        y = g.layer_norm(f"{p}.norm", y, c)
        y = g.linear(f"{p}.pwconv1", y, c, expand)
        y = g.gelu_erf(f"{p}.gelu", y)
        y = g.linear(f"{p}.pwconv2", y, expand, c)
        y = g.op("Transpose", [y], f"{p}.to_nchw", perm=[0, 3, 1, 2])
        x = g.op("Add", [x, y], f"{p}.residual")
    x = g.conv("downsample", x, c, 32, kernel=2, stride=2)  # [1, 32, 14, 14]
    x = g.op("HardSwish", [x], "hardswish")
    out = g.classifier_head("head", x, 32, 10)
    return g.model("convnext_like_28", [1, c, 28, 28], out, [1, 10])


def unet_64():
    """U-Net on [1, 3, 64, 64]: 3x3 Conv/Relu stages down by MaxPool, up by a nearest Resize and a
    2x2 stride-2 ConvTranspose, skip Concats -> a 2-class map [1, 2, 64, 64]."""
    g = GraphBuilder(seed=202)

    def double_conv(prefix, x, c_in, c_out):
        x = g.conv(f"{prefix}.c1", x, c_in, c_out, kernel=3, pad=1)
        x = g.op("Relu", [x], f"{prefix}.r1")
        x = g.conv(f"{prefix}.c2", x, c_out, c_out, kernel=3, pad=1)
        return g.op("Relu", [x], f"{prefix}.r2")

    enc1 = double_conv("e1", "input", 3, 16)  # [1, 16, 64, 64]
    x = g.op("MaxPool", [enc1], "p1", kernel_shape=[2, 2], strides=[2, 2])
    enc2 = double_conv("e2", x, 16, 32)  # [1, 32, 32, 32]
    x = g.op("MaxPool", [enc2], "p2", kernel_shape=[2, 2], strides=[2, 2])
    x = double_conv("b", x, 32, 64)  # [1, 64, 16, 16]
    scales = g.const("up2.scales", np.array([1, 1, 2, 2], np.float32))
    x = g.op("Resize", [x, "", scales], "u2", mode="nearest")
    x = double_conv("d2", g.op("Concat", [x, enc2], "cat2", axis=1), 96, 32)
    weight = g.param("up1.weight", (32, 16, 2, 2), 32 * 4)
    x = g.op("ConvTranspose", [x, weight], "u1", strides=[2, 2], kernel_shape=[2, 2])
    x = double_conv("d1", g.op("Concat", [x, enc1], "cat1", axis=1), 32, 16)
    out = g.conv("head", x, 16, 2, kernel=1)
    return g.model("unet_64", [1, 3, 64, 64], out, [1, 2, 64, 64])


def bert_encoder():
    """Post-norm (BERT) encoder on an embedded [1, 64, 256] sequence: 2 blocks, 4 heads of 64, an
    additive padding mask [1, 1, 1, 64] (the last 8 tokens padding), Erf GELU MLP."""
    seq, heads, head_dim, mlp, blocks = 64, 4, 64, 1024, 2
    d = heads * head_dim
    g = GraphBuilder(seed=203)
    padding = np.zeros((1, 1, 1, seq), np.float32)
    padding[..., 56:] = -1e4
    mask = g.const("padding_mask", padding)
    x = g.layer_norm("embeddings_norm", "input", d)
    for i in range(blocks):
        p = f"layer{i}"
        attended = g.self_attention(f"{p}.attn", x, seq, heads, head_dim, mask)
        x = g.layer_norm(f"{p}.ln1", g.op("Add", [x, attended], f"{p}.residual1"), d)
        hidden = g.linear(f"{p}.fc1", x, d, mlp)
        hidden = g.gelu_erf(f"{p}.gelu", hidden)
        hidden = g.linear(f"{p}.fc2", hidden, mlp, d)
        x = g.layer_norm(f"{p}.ln2", g.op("Add", [x, hidden], f"{p}.residual2"), d)
    return g.model("bert_encoder", [1, seq, d], x, [1, seq, d])


def effnet_like_96():
    """EfficientNet-like on [1, 3, 96, 96]: MBConv blocks (1x1 expansion, 3x3 or 5x5 depthwise
    Conv, squeeze-and-excitation, SiLU as Sigmoid then Mul, residuals) -> [1, 10]."""
    g = GraphBuilder(seed=204)

    def silu(prefix, x):
        gate = g.op("Sigmoid", [x], f"{prefix}.sigmoid")
        return g.op("Mul", [x, gate], f"{prefix}.silu")

    x = silu("stem", g.conv("stem", "input", 3, 16, kernel=3, stride=2, pad=1))  # [1, 16, 48, 48]
    c = 16
    # (expansion, output channels, depthwise kernel, stride)
    blocks = [(1, 16, 3, 1), (4, 24, 3, 2), (4, 24, 3, 1), (4, 40, 5, 2), (4, 40, 5, 1), (4, 80, 3, 2),
              (4, 80, 3, 1), (4, 112, 5, 1)]
    for i, (expansion, c_out, kernel, stride) in enumerate(blocks):
        p = f"b{i}"
        block_input = x
        wide = c * expansion
        if expansion != 1:
            x = silu(f"{p}.e", g.conv(f"{p}.exp", x, c, wide, kernel=1))
        x = g.conv(f"{p}.dw", x, wide, wide, kernel, stride=stride, pad=kernel // 2, group=wide)
        x = silu(f"{p}.d", x)
        squeezed = max(1, c // 4)
        gate = g.op("GlobalAveragePool", [x], f"{p}.gap")
        gate = silu(f"{p}.se", g.conv(f"{p}.se1", gate, wide, squeezed, kernel=1))
        gate = g.op("Sigmoid", [g.conv(f"{p}.se2", gate, squeezed, wide, kernel=1)], f"{p}.gate")
        x = g.op("Mul", [x, gate], f"{p}.scale")
        x = g.conv(f"{p}.proj", x, wide, c_out, kernel=1)
        if stride == 1 and c == c_out:
            x = g.op("Add", [x, block_input], f"{p}.residual")
        c = c_out
    x = silu("top", g.conv("top", x, c, 320, kernel=1))
    out = g.classifier_head("head", x, 320, 10)
    return g.model("effnet_like_96", [1, 3, 96, 96], out, [1, 10])


def tcn_audio_200():
    """Temporal convolutions on [1, 40, 200] audio features: 1-D Convs of kernel 3 dilated 1 to 8,
    BatchNormalization, Relu, residual Adds, a mean over time, Gemm -> [1, 12]."""
    g = GraphBuilder(seed=205)

    def conv1d(prefix, x, c_in, c_out, dilation=1):
        weight = g.param(f"{prefix}.weight", (c_out, c_in, 3), c_in * 3, gain=math.sqrt(2.0))
        return g.op("Conv", [x, weight, g.bias(f"{prefix}.bias", c_out)], f"{prefix}.out", kernel_shape=[3],
                    strides=[1], pads=[dilation, dilation], dilations=[dilation])

    x = conv1d("in", "input", 40, 64)
    for i, dilation in enumerate([1, 2, 4, 8, 1, 2, 4, 8]):
        y = conv1d(f"t{i}.conv", x, 64, 64, dilation)
        y = g.batch_norm(f"t{i}.bn", y, 64)
        y = g.op("Relu", [y], f"t{i}.relu")
        x = g.op("Add", [x, y], f"t{i}.residual")
    x = g.op("ReduceMean", [x], "mean", axes=[2], keepdims=0)
    out = g.gemm("fc", x, 64, 12)
    return g.model("tcn_audio_200", [1, 40, 200], out, [1, 12])


def vgg_64():
    """VGG-like on [1, 3, 64, 64]: three stages of two 3x3 Conv/BatchNormalization/Relu (32, 64,
    128 channels) and a MaxPool, Flatten, two Gemms -> [1, 10]."""
    g = GraphBuilder(seed=206)
    x, c = "input", 3
    for stage, c_out in enumerate([32, 64, 128]):
        for j in range(2):
            p = f"s{stage}.{j}"
            x = g.conv(f"{p}.conv", x, c, c_out, kernel=3, pad=1)
            x = g.batch_norm(f"{p}.bn", x, c_out)
            x = g.op("Relu", [x], f"{p}.relu")
            c = c_out
        x = g.op("MaxPool", [x], f"s{stage}.pool", kernel_shape=[2, 2], strides=[2, 2])
    x = g.op("Flatten", [x], "flatten", axis=1)
    x = g.op("Relu", [g.gemm("fc1", x, 128 * 8 * 8, 128)], "fc1.relu")
    out = g.gemm("fc2", x, 128, 10)
    return g.model("vgg_64", [1, 3, 64, 64], out, [1, 10])


def lstm_kws_49():
    """Keyword spotting with a recurrent network, as PyTorch exports `nn.LSTM(batch_first=True)`:
    [1, 49, 10] MFCC frames turned to sequence-first, two stacked LSTMs of 64 units (zero initial
    states as constants), the last state, Gemm -> [1, 12]."""
    g = GraphBuilder(seed=207)
    x = g.op("Transpose", ["input"], "frames", perm=[1, 0, 2])
    features = 10
    for layer in range(2):
        p = f"lstm{layer}"
        w = g.param(f"{p}.w", (1, 4 * 64, features), features)
        r = g.param(f"{p}.r", (1, 4 * 64, 64), 64)
        b = g.bias(f"{p}.b", (1, 8 * 64), std=0.1)
        zeros = g.const(f"{p}.zeros", np.zeros((1, 1, 64), np.float32))
        y, h, _ = g.op("LSTM", [x, w, r, b, "", zeros, zeros], [f"{p}.y", f"{p}.h", f"{p}.c"], hidden_size=64)
        x = g.op("Squeeze", [y, g.shape(f"{p}.axis", [1])], f"{p}.seq")
        features = 64
    last = g.op("Squeeze", [h, g.shape("last.axis", [0])], "last")
    out = g.gemm("fc", last, 64, 12)
    return g.model("lstm_kws_49", [1, 49, 10], out, [1, 12])


def gru_bidir_100():
    """A bidirectional GRU of 48 units (`linear_before_reset`, as PyTorch exports `nn.GRU`) on
    [1, 100, 32] features turned to sequence-first, both directions side by side, the mean over
    time, Gemm -> [1, 10]."""
    g = GraphBuilder(seed=208)
    x = g.op("Transpose", ["input"], "steps", perm=[1, 0, 2])
    w = g.param("gru.w", (2, 3 * 48, 32), 32)
    r = g.param("gru.r", (2, 3 * 48, 48), 48)
    b = g.bias("gru.b", (2, 6 * 48), std=0.1)
    y, _ = g.op("GRU", [x, w, r, b], ["gru.y", "gru.h"], hidden_size=48, direction="bidirectional",
                linear_before_reset=1)
    y = g.op("Transpose", [y], "gru.t", perm=[0, 2, 1, 3])
    y = g.op("Reshape", [y, g.shape("gru.shape", [100, 96])], "gru.seq")
    y = g.op("ReduceMean", [y], "mean", axes=[0], keepdims=1)
    out = g.gemm("fc", y, 96, 10)
    return g.model("gru_bidir_100", [1, 100, 32], out, [1, 10])


NETWORKS = [gpt2_tiny, vit_tiny, resnet8_32, dwcnn_96, mlp_784, convnext_like_28, unet_64, bert_encoder,
            effnet_like_96, tcn_audio_200, vgg_64, lstm_kws_49, gru_bidir_100]


# -- reference data -----------------------------------------------------------------------------


def run_ort(model_path, feeds, level):
    """The first output of one run in ONNX Runtime's CPU provider, one intra-op thread."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = level
    session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def write_network(build, index, out_dir):
    """Builds one network, saves it with its reference input and output; returns a summary line."""
    model = build()
    name = model.graph.name
    model_path = os.path.join(out_dir, f"{name}.onnx")
    onnx.save(model, model_path)
    size = os.path.getsize(model_path)
    if size > MAX_BYTES:
        raise RuntimeError(f"{name}: {size} bytes, more than {MAX_BYTES}")

    dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(1000 + index).standard_normal(dims).astype("<f4")
    x.tofile(os.path.join(out_dir, f"{name}.input.bin"))

    feeds = {model.graph.input[0].name: x}
    reference = run_ort(model_path, feeds, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    expected = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    if list(reference.shape) != expected or reference.dtype != np.float32:
        raise RuntimeError(f"{name}: output {reference.dtype} {reference.shape}, expected float32 {expected}")
    if not np.all(np.isfinite(reference)):
        raise RuntimeError(f"{name}: the reference output is not finite")
    reference.astype("<f4").tofile(os.path.join(out_dir, f"{name}.output.bin"))

    optimised = run_ort(model_path, feeds, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    diff = float(np.max(np.abs(optimised - reference)))
    return (f"{name:<18} {size:>10} bytes  {len(model.graph.node):>4} nodes  output {expected}  "
            f"max |default - DISABLE_ALL| = {diff:.3g}  (output range {reference.min():.3g} .. {reference.max():.3g})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(WORKSPACE, "target", "unseen"),
                        help="output folder (default: target/unseen in the workspace)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    print(f"onnx {onnx.__version__}, onnxruntime {ort.__version__}, numpy {np.__version__}; writing {args.out}")
    for index, build in enumerate(NETWORKS):
        print(write_network(build, index, args.out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
