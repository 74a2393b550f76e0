# SPDX-License-Identifier: Apache-2.0
"""Random valid .tflite models for the differential runner: float32, fully int8 or int16x8.

The file is written with Python bindings flatc generates from floe's own subset
of the TFLite schema (converter/frontend/tflite/tflite_subset.fbs keeps the
original field ids and union numbers), so the bytes are what TFLite's schema
says. Quantized models follow TFLite's rules as its kernels check them:
per-channel symmetric int8 filters with int32 (int16x8: int64) biases at input_scale *
filter_scale, symmetric int16 activations (zero point 0), per-tensor weights for FULLY_CONNECTED, the fixed output grids of
SOFTMAX / LOGISTIC / TANH, and equal input and output grids where TFLite's
kernels need them (pooling, reshapes, slices, padding, concatenation,
MAXIMUM/MINIMUM). Grids come from a rough range estimate carried with each
tensor: saturating is legal, it only tests less.
"""

import copy
import os
import subprocess
import sys
import tempfile

import numpy as np

import growth

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "..", "..", "converter", "frontend", "tflite", "tflite_subset.fbs")

# TensorType and BuiltinOperator numbers of TFLite's schema.
FLOAT32, INT32, INT64, INT16, INT8 = 0, 2, 4, 7, 9
OPS = {"ADD": 0, "AVERAGE_POOL_2D": 1, "CONCATENATION": 2, "CONV_2D": 3, "DEPTHWISE_CONV_2D": 4,
       "FULLY_CONNECTED": 9, "LOGISTIC": 14, "MAX_POOL_2D": 17, "MUL": 18, "RELU": 19, "RELU6": 21,
       "RESHAPE": 22, "SOFTMAX": 25, "TANH": 28, "PAD": 34, "TRANSPOSE": 39, "MEAN": 40, "SUB": 41,
       "STRIDED_SLICE": 45, "MAXIMUM": 55, "MINIMUM": 57, "LEAKY_RELU": 98}
SAME, VALID = 0, 1
ACT_NONE, ACT_RELU, ACT_RELU6 = 0, 1, 3

_tfl = None


def schema():
    """The flatc-generated Python object API (generated once per process)."""
    global _tfl
    if _tfl is None:
        out = tempfile.mkdtemp(prefix="floe-tflite-py-")
        fbs = os.path.join(out, "tflite.fbs")
        with open(SCHEMA) as f:
            text = f.read().replace("namespace floe.tflite_schema;", "namespace floe_differential_tfl;")
        with open(fbs, "w") as f:
            f.write(text)
        subprocess.run(["flatc", "--python", "--gen-object-api", "-o", out, fbs], check=True)
        sys.path.insert(0, out)
        import floe_differential_tfl as pkg
        import importlib
        mods = {}
        for name in os.listdir(os.path.join(out, "floe_differential_tfl")):
            if name.endswith(".py") and name != "__init__.py":
                mods[name[:-3]] = importlib.import_module("floe_differential_tfl." + name[:-3])
        pkg.mods = mods
        _tfl = pkg
    return _tfl


class Value(object):
    def __init__(self, index, shape, lo, hi, q=None):
        self.index = index
        self.shape = list(shape)
        self.lo, self.hi = lo, hi  # rough real range
        self.q = q  # (scale, zero_point) when quantized


def grid16(lo, hi):
    """int16x8 activations: symmetric, zero point 0."""
    scale = max(abs(lo), abs(hi), 1e-3) / 32767.0
    return float(np.float32(scale)), 0


def grid(lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi - lo < 1e-3:
        hi = lo + 1e-3
    scale = (hi - lo) / 255.0
    zp = int(np.clip(round(-128 - lo / scale), -128, 127))
    return float(np.float32(scale)), zp


class Builder(object):
    def __init__(self, rng, kind):
        self.rng = rng
        self.kind = kind  # "float", "int8" or "int16" (int16x8)
        self.quantized = kind != "float"
        self.int16 = kind == "int16"
        self.act_dtype = {"float": FLOAT32, "int8": INT8, "int16": INT16}[kind]
        self.limits = (-32768, 32767) if self.int16 else (-128, 127)
        self.tensors = []
        self.buffers = [b""]
        self.operators = []
        self.opcodes = []
        self.ops = []
        self.values = []
        self.inputs = []
        self.input_data = {}

    def chance(self, p):
        return self.rng.random() < p

    def int_in(self, lo, hi):
        return int(self.rng.integers(lo, hi + 1))

    def tensor(self, shape, dtype, data=None, q=None, name=None):
        buf = 0
        if data is not None:
            self.buffers.append(np.ascontiguousarray(data).tobytes())
            buf = len(self.buffers) - 1
        index = len(self.tensors)
        self.tensors.append(dict(shape=list(shape), type=dtype, buffer=buf, q=q,
                                 name=name or "t%d" % index))
        return index

    def activation_tensor(self, shape, lo, hi, q=None):
        if self.quantized and q is None:
            q = grid16(lo, hi) if self.int16 else grid(lo, hi)
        v = Value(self.tensor(shape, self.act_dtype, q=(q if self.quantized else None)), shape, lo, hi,
                  q if self.quantized else None)
        self.values.append(v)
        return v

    def float_const(self, array):
        """A constant operand in the model's activation dtype (quantized: on its own grid)."""
        array = np.asarray(array, np.float32)
        if not self.quantized:
            return self.tensor(array.shape, FLOAT32, array), None
        q = (grid16 if self.int16 else grid)(float(array.min()), float(array.max()))
        return self.tensor(array.shape, self.act_dtype, self.quantize(array, q), q=q), q

    def quantize(self, array, q):
        """`array` on grid q, in the activation dtype."""
        values = np.clip(np.round(np.asarray(array, np.float32) / q[0]) + q[1], *self.limits)
        return values.astype(np.int16 if self.int16 else np.int8)

    def int32_const(self, array):
        array = np.asarray(array, np.int32)
        return self.tensor(array.shape, INT32, array)

    def op(self, name, inputs, outputs, options=None, version=1):
        code = OPS[name]
        key = (code, version)
        if key not in self.opcodes:
            self.opcodes.append(key)
        self.operators.append(dict(opcode=self.opcodes.index(key), inputs=inputs, outputs=outputs,
                                   options=options))
        self.ops.append(name)

    def pick(self, rank=None):
        cands = [v for v in self.values if rank is None or len(v.shape) == rank]
        if not cands:
            return None
        w = np.arange(1, len(cands) + 1, dtype=np.float64) ** 2
        return cands[self.rng.choice(len(cands), p=w / w.sum())]

    def weights(self, shape, fan_in):
        return (self.rng.uniform(-1, 1, size=shape) / np.sqrt(fan_in)).astype(np.float32)

    def filter_and_bias(self, w, x, channel_axis):
        """Filter (and bias) tensors: float, or per-channel int8 with an int32 (int16x8: int64) bias."""
        oc = w.shape[channel_axis]
        bias = self.rng.uniform(-0.5, 0.5, size=[oc]).astype(np.float32)
        if not self.quantized:
            return self.tensor(w.shape, FLOAT32, w), self.tensor([oc], FLOAT32, bias)
        moved = np.moveaxis(w, channel_axis, 0).reshape(oc, -1)
        scales = np.maximum(np.abs(moved).max(axis=1), 1e-6) / 127.0
        scales = scales.astype(np.float32)
        shape = [1] * w.ndim
        shape[channel_axis] = oc
        wq = np.clip(np.round(w / scales.reshape(shape)), -127, 127).astype(np.int8)
        wt = self.tensor(w.shape, INT8, wq, q=(list(map(float, scales)), [0] * oc, channel_axis))
        bias_scales = (np.float64(x.q[0]) * scales.astype(np.float64))
        bias_type, bias_np = (INT64, np.int64) if self.int16 else (INT32, np.int32)
        bq = np.round(bias / bias_scales).astype(bias_np)
        bt = self.tensor([oc], bias_type, bq, q=(list(map(float, bias_scales)), [0] * oc, 0))
        return wt, bt

    def activation_after(self, lo, hi):
        act = [ACT_NONE, ACT_NONE, ACT_RELU, ACT_RELU6][self.int_in(0, 3)]
        if act == ACT_RELU:
            lo = 0.0
        if act == ACT_RELU6:
            lo, hi = 0.0, min(hi, 6.0)
        return act, lo, hi

    # -- serialisation -------------------------------------------------------
    def serialize(self, outputs):
        t = schema()
        m = t.mods
        model = m["Model"].ModelT()
        model.version = 3
        model.description = "floe differential generator"
        for code, version in self.opcodes:
            oc = m["OperatorCode"].OperatorCodeT()
            oc.deprecatedBuiltinCode = code if code < 127 else 127
            oc.builtinCode = code
            oc.version = version
            model.operatorCodes = (model.operatorCodes or []) + [oc]
        sg = m["SubGraph"].SubGraphT()
        sg.tensors = []
        for d in self.tensors:
            tt = m["Tensor"].TensorT()
            tt.shape = d["shape"]
            tt.type = d["type"]
            tt.buffer = d["buffer"]
            tt.name = d["name"]
            if d["q"] is not None:
                qp = m["QuantizationParameters"].QuantizationParametersT()
                if len(d["q"]) == 3:
                    qp.scale, qp.zeroPoint, qp.quantizedDimension = d["q"]
                else:
                    qp.scale, qp.zeroPoint = [d["q"][0]], [d["q"][1]]
                tt.quantization = qp
            sg.tensors.append(tt)
        sg.inputs = list(self.inputs)
        sg.outputs = list(outputs)
        sg.operators = []
        for o in self.operators:
            op = m["Operator"].OperatorT()
            op.opcodeIndex = o["opcode"]
            op.inputs = o["inputs"]
            op.outputs = o["outputs"]
            if o["options"] is not None:
                kind, table = o["options"]
                op.builtinOptionsType = getattr(m["BuiltinOptions"].BuiltinOptions, kind)
                op.builtinOptions = table
            sg.operators.append(op)
        sg.name = "main"
        model.subgraphs = [sg]
        model.buffers = []
        for data in self.buffers:
            b = m["Buffer"].BufferT()
            b.data = list(data) if data else None
            model.buffers.append(b)
        import flatbuffers
        fb = flatbuffers.Builder(1024)
        fb.Finish(model.Pack(fb), file_identifier=b"TFL3")
        return bytes(fb.Output())

    def options(self, kind, **fields):
        table = getattr(schema().mods[kind], kind + "T")()
        for k, v in fields.items():
            setattr(table, k, v)
        return kind, table


# -- op generators --------------------------------------------------------------

def window_out(size, k, stride, dilation, padding):
    eff = (k - 1) * dilation + 1
    if padding == SAME:
        return (size + stride - 1) // stride
    return 0 if size < eff else (size - eff) // stride + 1


def window(b, x, allow_dilation=True):
    k_h, k_w = b.int_in(1, 3), b.int_in(1, 3)
    s_h, s_w = b.int_in(1, 2), b.int_in(1, 2)
    d = b.int_in(1, 2) if allow_dilation and s_h == 1 and s_w == 1 and b.chance(0.3) else 1
    pad = SAME if b.chance(0.5) else VALID
    oh, ow = window_out(x.shape[1], k_h, s_h, d, pad), window_out(x.shape[2], k_w, s_w, d, pad)
    if oh == 0 or ow == 0:
        pad = SAME
        oh, ow = window_out(x.shape[1], k_h, s_h, d, pad), window_out(x.shape[2], k_w, s_w, d, pad)
    return k_h, k_w, s_h, s_w, d, pad, oh, ow


def absmax(v):
    return max(abs(v.lo), abs(v.hi), 1e-3)


def conv2d(b):
    x = b.pick(rank=4)
    if x is None:
        return None
    k_h, k_w, s_h, s_w, d, pad, oh, ow = window(b, x)
    c, oc = x.shape[3], b.int_in(1, 8)
    w = b.weights([oc, k_h, k_w, c], k_h * k_w * c)
    wt, bt = b.filter_and_bias(w, x, 0)
    r = absmax(x) * 1.5 + 0.5
    act, lo, hi = b.activation_after(-r, r)
    y = b.activation_tensor([x.shape[0], oh, ow, oc], lo, hi)
    b.op("CONV_2D", [x.index, wt, bt], [y.index],
         b.options("Conv2DOptions", padding=pad, strideW=s_w, strideH=s_h, fusedActivationFunction=act,
                   dilationWFactor=d, dilationHFactor=d), version=3 if b.quantized else 1)
    return y


def depthwise(b):
    x = b.pick(rank=4)
    if x is None:
        return None
    k_h, k_w, s_h, s_w, d, pad, oh, ow = window(b, x)
    c = x.shape[3]
    mult = b.int_in(1, 2)
    w = b.weights([1, k_h, k_w, c * mult], k_h * k_w)
    wt, bt = b.filter_and_bias(w, x, 3)
    r = absmax(x) * 1.5 + 0.5
    act, lo, hi = b.activation_after(-r, r)
    y = b.activation_tensor([x.shape[0], oh, ow, c * mult], lo, hi)
    b.op("DEPTHWISE_CONV_2D", [x.index, wt, bt], [y.index],
         b.options("DepthwiseConv2DOptions", padding=pad, strideW=s_w, strideH=s_h, depthMultiplier=mult,
                   fusedActivationFunction=act, dilationWFactor=d, dilationHFactor=d), version=3 if b.quantized else 1)
    return y


def fully_connected(b):
    x = b.pick(rank=2)
    if x is None:
        return None
    k, m = x.shape[1], b.int_in(1, 12)
    w = b.weights([m, k], k)
    bias = b.rng.uniform(-0.5, 0.5, size=[m]).astype(np.float32)
    if b.quantized:
        s_w = max(float(np.abs(w).max()), 1e-6) / 127.0
        wt = b.tensor([m, k], INT8, np.clip(np.round(w / s_w), -127, 127).astype(np.int8), q=(s_w, 0))
        s_b = float(np.float32(x.q[0])) * float(np.float32(s_w))
        bias_type, bias_np = (INT64, np.int64) if b.int16 else (INT32, np.int32)
        bt = b.tensor([m], bias_type, np.round(bias / s_b).astype(bias_np), q=(s_b, 0))
    else:
        wt, bt = b.tensor([m, k], FLOAT32, w), b.tensor([m], FLOAT32, bias)
    r = absmax(x) * 1.5 + 0.5
    act, lo, hi = b.activation_after(-r, r)
    y = b.activation_tensor([x.shape[0], m], lo, hi)
    b.op("FULLY_CONNECTED", [x.index, wt, bt], [y.index],
         b.options("FullyConnectedOptions", fusedActivationFunction=act), version=4 if b.quantized else 1)
    return y


def pool(b):
    x = b.pick(rank=4)
    if x is None:
        return None
    name = "MAX_POOL_2D" if b.chance(0.5) else "AVERAGE_POOL_2D"
    k_h, k_w, s_h, s_w, _, pad, oh, ow = window(b, x, allow_dilation=False)
    y = b.activation_tensor([x.shape[0], oh, ow, x.shape[3]], x.lo, x.hi, q=x.q)
    b.op(name, [x.index], [y.index],
         b.options("Pool2DOptions", padding=pad, strideW=s_w, strideH=s_h, filterWidth=k_w, filterHeight=k_h,
                   fusedActivationFunction=ACT_NONE), version=2 if b.quantized else 1)
    return y


def broadcast_shape(b, shape):
    kind = b.int_in(0, 2)
    if kind == 0:
        return list(shape)
    if kind == 1:
        return [1] * (len(shape) - 1) + [shape[-1]]
    return [1 if b.chance(0.5) else d for d in shape]


def binary(b):
    x = b.pick()
    name = ["ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM"][b.int_in(0, 4)]
    const = b.rng.uniform(-1, 1, size=broadcast_shape(b, x.shape)).astype(np.float32)
    if name in ("MAXIMUM", "MINIMUM") and b.quantized:
        # TFLite's quantized MAXIMUM / MINIMUM compare raw values: both operands on x's grid.
        ct = b.tensor(const.shape, b.act_dtype, b.quantize(const, x.q), q=x.q)
        y = b.activation_tensor(x.shape, x.lo, x.hi, q=x.q)
        b.op(name, [x.index, ct], [y.index], None, version=2)
        return y
    ct, _ = b.float_const(const)
    operands = [x.index, ct] if b.chance(0.5) else [ct, x.index]
    r = absmax(x)
    lo, hi = {"ADD": (-r - 1, r + 1), "SUB": (-r - 1, r + 1), "MUL": (-r, r),
              "MAXIMUM": (-1, r), "MINIMUM": (-r, 1)}[name]
    if name in ("MAXIMUM", "MINIMUM"):
        y = b.activation_tensor(x.shape, lo, hi)
        b.op(name, operands, [y.index], None)
        return y
    act, lo, hi = b.activation_after(lo, hi)
    y = b.activation_tensor(x.shape, lo, hi)
    kind = {"ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions"}[name]
    b.op(name, operands, [y.index], b.options(kind, fusedActivationFunction=act), version=2 if b.quantized else 1)
    return y


def unary(b):
    x = b.pick()
    name = ["RELU", "RELU6", "LOGISTIC", "TANH", "LEAKY_RELU"][b.int_in(0, 4)]
    if b.int16 and name != "LEAKY_RELU":
        return None  # TFLite 2.9's int16 activations want power-of-two input scales
    q = None
    if name == "RELU":
        lo, hi = 0.0, max(x.hi, 1e-3)
    elif name == "RELU6":
        lo, hi = 0.0, min(max(x.hi, 1e-3), 6.0)
    elif name == "LOGISTIC":
        lo, hi, q = 0.0, 1.0, (1.0 / 256, -128)
    elif name == "TANH":
        lo, hi, q = -1.0, 1.0, (1.0 / 128, 0)
    else:
        lo, hi = x.lo * 0.5, x.hi
    y = b.activation_tensor(x.shape, lo, hi, q=q)
    options = None
    if name == "LEAKY_RELU":
        options = b.options("LeakyReluOptions", alpha=float(np.float32(b.rng.uniform(0.05, 0.5))))
    b.op(name, [x.index], [y.index], options, version=2 if b.quantized else 1)
    return y


def softmax(b):
    if b.int16:
        return None
    x = b.pick()
    y = b.activation_tensor(x.shape, 0.0, 1.0, q=(1.0 / 256, -128))
    b.op("SOFTMAX", [x.index], [y.index], b.options("SoftmaxOptions", beta=1.0), version=2 if b.quantized else 1)
    return y


def reshape(b):
    x = b.pick()
    n = int(np.prod(x.shape[1:]))
    if len(x.shape) == 4:
        shape = [x.shape[0], n]
    else:
        divs = [d for d in range(1, n + 1) if n % d == 0]
        h = divs[b.int_in(0, len(divs) - 1)]
        shape = [x.shape[0], h, 1, n // h]
    y = b.activation_tensor(shape, x.lo, x.hi, q=x.q)
    b.op("RESHAPE", [x.index, b.int32_const(shape)], [y.index], b.options("ReshapeOptions", newShape=shape))
    return y


def transpose(b):
    x = b.pick()
    perm = [int(p) for p in b.rng.permutation(len(x.shape))]
    y = b.activation_tensor([x.shape[p] for p in perm], x.lo, x.hi, q=x.q)
    b.op("TRANSPOSE", [x.index, b.int32_const(perm)], [y.index], None, version=2 if b.quantized else 1)
    return y


def pad(b):
    x = b.pick()
    pads = [[b.int_in(0, 2), b.int_in(0, 2)] for _ in x.shape]
    shape = [d + p[0] + p[1] for d, p in zip(x.shape, pads)]
    y = b.activation_tensor(shape, min(x.lo, 0.0), max(x.hi, 0.0), q=x.q)
    b.op("PAD", [x.index, b.int32_const(pads)], [y.index], b.options("PadOptions"), version=2 if b.quantized else 1)
    return y


def mean(b):
    x = b.pick()
    rank = len(x.shape)
    axes = sorted(set(int(a) for a in b.rng.choice(rank, size=b.int_in(1, rank), replace=False)))
    keep = b.chance(0.5)
    shape = [1 if i in axes else d for i, d in enumerate(x.shape)] if keep else \
        [d for i, d in enumerate(x.shape) if i not in axes]
    if not shape:
        return None
    # On the input's grid or another: TFLite and TFLM round the two differently.
    q = x.q if b.chance(0.5) else None
    y = b.activation_tensor(shape, x.lo, x.hi * 0.8, q=q)
    b.op("MEAN", [x.index, b.int32_const(axes)], [y.index], b.options("ReducerOptions", keepDims=keep),
         version=2 if b.quantized else 1)
    return y


def concat(b):
    x = b.pick()
    axis = b.int_in(0, len(x.shape) - 1)
    shape = list(x.shape)
    shape[axis] = b.int_in(1, 3)
    data = b.rng.uniform(x.lo, x.hi, size=shape).astype(np.float32)
    if b.quantized:
        other = b.tensor(shape, b.act_dtype, b.quantize(data, x.q), q=x.q)
    else:
        other = b.tensor(shape, FLOAT32, data)
    out = list(x.shape)
    out[axis] += shape[axis]
    y = b.activation_tensor(out, x.lo, x.hi, q=x.q)
    operands = [x.index, other] if b.chance(0.5) else [other, x.index]
    b.op("CONCATENATION", operands, [y.index],
         b.options("ConcatenationOptions", axis=axis, fusedActivationFunction=ACT_NONE), version=2 if b.quantized else 1)
    return y


def strided_slice(b):
    x = b.pick()
    begin, end, strides, shape = [], [], [], []
    for d in x.shape:
        stride = b.int_in(1, 2)
        lo, hi = sorted((b.int_in(0, d - 1), b.int_in(0, d - 1)))
        begin.append(lo)
        end.append(hi + 1)
        strides.append(stride)
        shape.append(len(range(lo, hi + 1, stride)))
    y = b.activation_tensor(shape, x.lo, x.hi, q=x.q)
    b.op("STRIDED_SLICE", [x.index, b.int32_const(begin), b.int32_const(end), b.int32_const(strides)], [y.index],
         b.options("StridedSliceOptions"), version=2 if b.quantized else 1)
    return y


GENERATORS = [(conv2d, 4), (depthwise, 3), (fully_connected, 3), (pool, 3), (binary, 4), (unary, 3),
              (softmax, 1), (reshape, 2), (transpose, 1), (pad, 1), (mean, 1), (concat, 1),
              (strided_slice, 1)]


class Model(object):
    def __init__(self, builder, data, inputs, input_names, outputs, ops, kind):
        self.builder = builder
        self.kind = kind
        self.quantized = kind != "float"
        self.data = data
        self.inputs = inputs  # name -> array
        self.input_names = input_names
        self.outputs = outputs  # tensor names
        self.ops = ops


def generate(seed, max_ops=8):
    rng = np.random.default_rng(seed)
    u = rng.random()
    b = Builder(rng, "float" if u < 0.4 else "int8" if u < 0.8 else "int16")
    shape = [b.int_in(1, 2), b.int_in(1, 9), b.int_in(1, 9), b.int_in(1, 6)] if b.chance(0.7) \
        else [b.int_in(1, 3), b.int_in(1, 16)]
    x = b.activation_tensor(shape, -2.0, 2.0)
    b.tensors[x.index]["name"] = "input_0"
    b.inputs.append(x.index)
    if b.int16:
        data = rng.integers(-20000, 20001, size=shape).astype(np.int16)
    elif b.quantized:
        data = rng.integers(-128, 128, size=shape).astype(np.int8)
    else:
        data = rng.uniform(-2, 2, size=shape).astype(np.float32)
    if not growth.grow(rng, GENERATORS, b, b.int_in(1, max_ops), 10 * max_ops) or not b.ops:
        return generate(seed + 7919, max_ops)
    produced = [o["outputs"][0] for o in b.operators]
    consumed = {i for o in b.operators for i in o["inputs"]}
    outputs = [produced[-1]]
    loose = [t for t in produced[:-1] if t not in consumed]
    if loose and b.chance(0.5):
        outputs.append(loose[-1])
    names = [b.tensors[t]["name"] for t in outputs]
    return Model(b, b.serialize(outputs), {"input_0": data}, ["input_0"], names, b.ops, b.kind)


def cut(model, k):
    """The model's first k + 1 ops, with op k's output as the only output."""
    b = model.builder
    kept = copy.copy(b)
    kept.operators = b.operators[:k + 1]
    kept.ops = b.ops[:k + 1]
    out = kept.operators[-1]["outputs"][0]
    return Model(kept, kept.serialize([out]), model.inputs, model.input_names, [b.tensors[out]["name"]],
                 kept.ops, model.kind)
