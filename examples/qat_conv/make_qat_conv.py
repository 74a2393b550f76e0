# SPDX-License-Identifier: Apache-2.0
"""A quantization-aware-trained TF1 conv net, saved the way TensorFlow 1.14 would.

    /usr/bin/python3 examples/qat_conv/make_qat_conv.py [--out DIR]

The graph is what ``tf.contrib.quantize.create_eval_graph`` leaves after a
conv net is trained with fake quantization (names follow its rewriter):

    images [1,8,8,2] -> input FakeQuant
    conv1: 3x3, 2 -> 4; batch norm folded into the weights in the graph
           (weights * gamma / sqrt(moving_variance + eps), then
           weights_quant/FakeQuantWithMinMaxVars, narrow range), add_fold
           (beta - moving_mean * multiplier), Relu, act_quant FakeQuant
    dw:    3x3 depthwise, weights_quant per tensor, BiasAdd, Relu6, act_quant
    conv2: 1x1, 4 -> 6, weights_quant per channel
           (FakeQuantWithMinMaxVarsPerChannel), BiasAdd, act_quant
    fc:    Reshape [1,384], MatMul 384 -> 10, weights_quant per channel,
           BiasAdd, act_quant (the output)

Every weight, bias, batch-norm statistic and FakeQuant min/max is a variable
held by a V2 checkpoint. Weight ranges are the weights' own min/max
(symmetric for per-channel, as TF's per-channel QAT records them);
activation ranges are the min/max the float net (no fake quantization)
reaches on 64 seeded inputs, as a training run's moving averages would
have settled near. Values come from numpy's RandomState(5).

Writes qat_conv.meta, model.ckpt.{index,data-00000-of-00001} and checkpoint.
"""

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.join(HERE, "..", "tf1_writer"))
import tf1_writer as tfw  # noqa: E402
from tf1_writer import DT_FLOAT, DT_INT32  # noqa: E402

SEED = 5
EPSILON = 0.001
IMAGE = [1, 8, 8, 2]


def conv_same(x, w, depthwise=False):
    """Stride-1 SAME NHWC convolution (HWIO, or [kh,kw,C,1] depthwise) in float64."""
    kh, kw = w.shape[0], w.shape[1]
    xp = np.pad(x.astype(np.float64), ((0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)))
    n, h, wd, c = x.shape
    out = np.zeros((n, h, wd, w.shape[2] if depthwise else w.shape[3]))
    for i in range(h):
        for j in range(wd):
            patch = xp[:, i:i + kh, j:j + kw, :]
            if depthwise:
                out[:, i, j, :] = np.einsum("nhwc,hwc->nc", patch, w[:, :, :, 0].astype(np.float64))
            else:
                out[:, i, j, :] = np.tensordot(patch, w.astype(np.float64), axes=([1, 2, 3], [0, 1, 2]))
    return out


def make_values(rng):
    v = {}
    v["conv1/weights"] = rng.normal(0, 0.3, [3, 3, 2, 4]).astype(np.float32)
    v["conv1/BatchNorm/gamma"] = rng.uniform(0.8, 1.2, [4]).astype(np.float32)
    v["conv1/BatchNorm/beta"] = rng.uniform(-0.1, 0.1, [4]).astype(np.float32)
    v["conv1/BatchNorm/moving_mean"] = rng.uniform(-0.1, 0.1, [4]).astype(np.float32)
    v["conv1/BatchNorm/moving_variance"] = rng.uniform(0.5, 1.5, [4]).astype(np.float32)
    v["dw/depthwise_weights"] = rng.normal(0, 0.3, [3, 3, 4, 1]).astype(np.float32)
    v["dw/biases"] = rng.uniform(-0.1, 0.1, [4]).astype(np.float32)
    v["conv2/weights"] = rng.normal(0, 0.5, [1, 1, 4, 6]).astype(np.float32)
    v["conv2/biases"] = rng.uniform(-0.1, 0.1, [6]).astype(np.float32)
    v["fc/weights"] = rng.normal(0, 0.05, [384, 10]).astype(np.float32)
    v["fc/biases"] = rng.uniform(-0.1, 0.1, [10]).astype(np.float32)
    return v


def folded_conv1(v):
    multiplier = v["conv1/BatchNorm/gamma"] / np.sqrt(v["conv1/BatchNorm/moving_variance"] + np.float32(EPSILON))
    weights = v["conv1/weights"] * multiplier
    bias = v["conv1/BatchNorm/beta"] - v["conv1/BatchNorm/moving_mean"] * multiplier
    return weights, bias


def float_activations(v, images):
    """The float net's activations at each act_quant (no fake quantization)."""
    w1, b1 = folded_conv1(v)
    a = {"input": images}
    a["conv1"] = np.maximum(conv_same(images, w1) + b1, 0)
    a["dw"] = np.clip(conv_same(a["conv1"], v["dw/depthwise_weights"], depthwise=True) + v["dw/biases"], 0, 6)
    a["conv2"] = conv_same(a["dw"], v["conv2/weights"]) + v["conv2/biases"]
    a["fc"] = a["conv2"].reshape(len(images), 384) @ v["fc/weights"] + v["fc/biases"]
    return a


def build(v, act_ranges):
    g = tfw.Graph()
    variables = []
    tensors = []

    def variable(name, value):
        init = tfw.const(g, name + "/Initializer/Const", value)
        var = tfw.variable(g, name, init)
        variables.append(var)
        tensors.append((name, value))
        return var.read

    def fake_quant(scope, x, lo, hi, narrow_range, shape):
        per_channel = np.ndim(lo) == 1
        mn = variable(scope + "/min", np.asarray(lo, np.float32))
        mx = variable(scope + "/max", np.asarray(hi, np.float32))
        op = "FakeQuantWithMinMaxVarsPerChannel" if per_channel else "FakeQuantWithMinMaxVars"
        return g.add(scope + "/" + op, op, (x, mn, mx),
                     {"narrow_range": tfw.attr_b(narrow_range), "num_bits": tfw.attr_i(8)}, out_shapes=[shape])

    def act_quant(scope, x, key, shape):
        lo, hi = act_ranges[key]
        return fake_quant(scope + "/act_quant", x, np.float32(lo), np.float32(hi), False, shape)

    def weights_quant(scope, w, value, per_channel):
        if per_channel:
            axes = tuple(range(value.ndim - 1))
            top = np.abs(value).max(axis=axes).astype(np.float32)
            lo, hi = -top, top
        else:
            lo, hi = np.float32(value.min()), np.float32(value.max())
        return fake_quant(scope + "/weights_quant", w, lo, hi, True, list(value.shape))

    def bias_add(name, x, b, shape):
        return g.add(name, "BiasAdd", (x, b), {"T": tfw.attr_type(DT_FLOAT), "data_format": tfw.attr_s("NHWC")},
                     out_shapes=[shape])

    images = tfw.placeholder(g, "images", DT_FLOAT, IMAGE)
    x = act_quant("input", images, "input", IMAGE)

    # conv1 with batch norm folded into the weights by the rewriter
    w1 = variable("conv1/weights", v["conv1/weights"])
    gamma = variable("conv1/BatchNorm/gamma", v["conv1/BatchNorm/gamma"])
    beta = variable("conv1/BatchNorm/beta", v["conv1/BatchNorm/beta"])
    mean = variable("conv1/BatchNorm/moving_mean", v["conv1/BatchNorm/moving_mean"])
    var = variable("conv1/BatchNorm/moving_variance", v["conv1/BatchNorm/moving_variance"])
    eps = tfw.const(g, "conv1/BatchNorm/batchnorm/add/y", np.float32(EPSILON))
    var_eps = tfw.add(g, "conv1/BatchNorm/batchnorm/add", var, eps, [4])
    rsqrt = g.add("conv1/BatchNorm/batchnorm/Rsqrt", "Rsqrt", (var_eps,), {"T": tfw.attr_type(DT_FLOAT)},
                  out_shapes=[[4]])
    multiplier = tfw._binary(g, "conv1/BatchNorm/batchnorm/mul", "Mul", rsqrt, gamma, DT_FLOAT, [4])
    mul_fold = tfw._binary(g, "conv1/mul_fold", "Mul", w1, multiplier, DT_FLOAT, [3, 3, 2, 4])
    folded_weights, _ = folded_conv1(v)
    w1q = weights_quant("conv1", mul_fold, folded_weights, per_channel=False)
    conv1 = tfw.conv2d(g, "conv1/Conv2D", x, w1q, [1, 1, 1, 1], "SAME", [1, 8, 8, 4])
    mean_mul = tfw._binary(g, "conv1/BatchNorm/batchnorm/mul_2", "Mul", mean, multiplier, DT_FLOAT, [4])
    bias_fold = tfw._binary(g, "conv1/BatchNorm/batchnorm/sub", "Sub", beta, mean_mul, DT_FLOAT, [4])
    add_fold = tfw.add(g, "conv1/add_fold", conv1, bias_fold, [1, 8, 8, 4])
    relu1 = tfw.relu(g, "conv1/Relu", add_fold, [1, 8, 8, 4])
    x = act_quant("conv1", relu1, "conv1", [1, 8, 8, 4])

    # depthwise 3x3 + relu6
    wd = variable("dw/depthwise_weights", v["dw/depthwise_weights"])
    wdq = weights_quant("dw", wd, v["dw/depthwise_weights"], per_channel=False)
    dw = g.add("dw/depthwise", "DepthwiseConv2dNative", (x, wdq),
               {"T": tfw.attr_type(DT_FLOAT), "data_format": tfw.attr_s("NHWC"),
                "dilations": tfw.attr_list_i([1, 1, 1, 1]), "padding": tfw.attr_s("SAME"),
                "strides": tfw.attr_list_i([1, 1, 1, 1])}, out_shapes=[[1, 8, 8, 4]])
    dw = bias_add("dw/BiasAdd", dw, variable("dw/biases", v["dw/biases"]), [1, 8, 8, 4])
    relu6 = g.add("dw/Relu6", "Relu6", (dw,), {"T": tfw.attr_type(DT_FLOAT)}, out_shapes=[[1, 8, 8, 4]])
    x = act_quant("dw", relu6, "dw", [1, 8, 8, 4])

    # 1x1 conv, per-channel weights
    w2 = variable("conv2/weights", v["conv2/weights"])
    w2q = weights_quant("conv2", w2, v["conv2/weights"], per_channel=True)
    conv2 = tfw.conv2d(g, "conv2/Conv2D", x, w2q, [1, 1, 1, 1], "SAME", [1, 8, 8, 6])
    conv2 = bias_add("conv2/BiasAdd", conv2, variable("conv2/biases", v["conv2/biases"]), [1, 8, 8, 6])
    x = act_quant("conv2", conv2, "conv2", [1, 8, 8, 6])

    # flatten + fully connected, per-channel weights
    shape = tfw.const(g, "fc/Reshape/shape", np.array([1, 384], np.int32))
    flat = g.add("fc/Reshape", "Reshape", (x, shape),
                 {"T": tfw.attr_type(DT_FLOAT), "Tshape": tfw.attr_type(DT_INT32)}, out_shapes=[[1, 384]])
    w3 = variable("fc/weights", v["fc/weights"])
    w3q = weights_quant("fc", w3, v["fc/weights"], per_channel=True)
    fc = tfw.matmul(g, "fc/MatMul", flat, w3q, [1, 10])
    fc = bias_add("fc/BiasAdd", fc, variable("fc/biases", v["fc/biases"]), [1, 10])
    act_quant("fc", fc, "fc", [1, 10])

    tfw.global_variables_initializer(g, variables)
    saver_def = tfw.saver(g, variables)
    return g, saver_def, tfw.variables_collections(variables), tensors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "model"), help="output directory")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    rng = np.random.RandomState(SEED)
    values = make_values(rng)
    samples = rng.uniform(-1.0, 1.0, [64] + IMAGE[1:]).astype(np.float32)
    acts = float_activations(values, samples)
    act_ranges = {k: (float(min(a.min(), 0.0)), float(max(a.max(), 0.0))) for k, a in acts.items()}

    g, saver_def, collections, tensors = build(values, act_ranges)
    meta = tfw.meta_graph_def(g, saver_def, collections, add_shapes=True)
    tfw.write_bytes(os.path.join(args.out, "qat_conv.meta"), meta.serialize())
    tfw.write_checkpoint(os.path.join(args.out, "model.ckpt"), sorted(tensors))
    tfw.write_checkpoint_state(args.out, "model.ckpt")
    for k in ["input", "conv1", "dw", "conv2", "fc"]:
        print("act_quant %-6s [%.6f, %.6f]" % (k, act_ranges[k][0], act_ranges[k][1]))
    print("%d nodes, %d variables; wrote %s" % (len(g.nodes), len(tensors), args.out))


if __name__ == "__main__":
    main()
