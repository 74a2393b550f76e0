# SPDX-License-Identifier: Apache-2.0
"""Random valid TF1 GraphDefs for the differential runner.

A model is a chain or DAG of float32 ops floe lowers, over NHWC images or
[batch, features] matrices, with random shapes, attributes and constants. Every
op's output shape is derived here, so each generated graph is one TensorFlow
would accept; values stay bounded (weights scale with 1/sqrt(fan-in), exp only
after a bounded op) so that float32 rounding, not overflow, decides the
tolerance. Ops whose result jumps at a boundary (Floor, Round, Sign, ArgMax,
comparisons) only read exact values (placeholders and constants): applied to a
computed value, one ulp of legitimate rounding difference would flip them.
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "tf1_writer"))
import tf1_writer as tw  # noqa: E402

import growth  # noqa: E402

F32 = tw.DT_FLOAT
I32 = tw.DT_INT32


class Value(object):
    """One tensor of the graph: its reference, static shape and what is known of it."""

    def __init__(self, ref, shape, exact=False, bounded=False, dtype=F32):
        self.ref = ref
        self.shape = list(shape)
        self.exact = exact  # an input or a constant: no rounding has touched it
        self.bounded = bounded  # |x| <= 6
        self.dtype = dtype


class Model(object):
    """A generated graph, its inputs and the outputs to compare."""

    def __init__(self, graph, inputs, outputs, ops):
        self.graph = graph
        self.inputs = inputs  # name -> np.ndarray
        self.outputs = outputs  # node names (output 0)
        self.ops = ops  # op names used, in order

    def write(self, path):
        with open(path, "wb") as f:
            f.write(self.graph.graph_def().serialize())


class Builder(object):
    def __init__(self, rng):
        self.rng = rng
        self.g = tw.Graph()
        self.values = []
        self.ints = []  # int32 values (an int32 placeholder and the ops on it)
        self.inputs = {}
        self.ops = []
        self.count = 0

    # -- helpers ---------------------------------------------------------------
    def fresh(self, op):
        self.count += 1
        return "%s_%d" % (op.lower(), self.count)

    def uniform(self, shape, lo=-1.0, hi=1.0):
        return self.rng.uniform(lo, hi, size=shape).astype(np.float32)

    def const(self, array, dtype=None):
        array = np.asarray(array)
        if dtype is None:
            dtype = F32 if array.dtype.kind == "f" else I32
        node = tw.const(self.g, self.fresh("c"), array, dtype)
        return node.name

    def placeholder(self, shape):
        name = "x%d" % len(self.inputs)
        tw.placeholder(self.g, name, F32, shape)
        self.inputs[name] = self.uniform(shape, -2.0, 2.0)
        v = Value(name, shape, exact=True)
        self.values.append(v)
        return v

    def emit(self, op, inputs, attrs, shape, bounded=False, dtype=F32, typed=True):
        attrs = dict(attrs)
        if typed and "T" not in attrs:
            attrs["T"] = tw.attr_type(F32)
        name = self.fresh(op)
        self.g.add(name, op, inputs, attrs, out_shapes=[shape])
        self.ops.append(op)
        v = Value(name, shape, bounded=bounded, dtype=dtype)
        if dtype == F32:
            self.values.append(v)
        return v

    def pick(self, rank=None, exact=None):
        cands = [v for v in self.values
                 if (rank is None or len(v.shape) == rank) and (exact is None or v.exact == exact)]
        if not cands:
            return None
        # Prefer recent values: chains grow deeper, earlier values still feed DAG joins.
        weights = np.arange(1, len(cands) + 1, dtype=np.float64) ** 2
        return cands[self.rng.choice(len(cands), p=weights / weights.sum())]

    def chance(self, p):
        return self.rng.random() < p

    def int_in(self, lo, hi):
        return int(self.rng.integers(lo, hi + 1))


# -- op generators: each takes the builder, returns a Value or None (not applicable) --

UNARY_ANY = ["Relu", "Tanh", "Sigmoid", "Abs", "Neg", "Elu", "Selu", "Softplus",
             "Square", "Sin", "Cos", "Atan", "Erf", "Relu6"]
BOUNDING = {"Relu6", "Tanh", "Sigmoid", "Sin", "Cos", "Atan", "Erf"}
STEP = ["Floor", "Ceil", "Round", "Sign"]


def unary(b):
    x = b.pick()
    op = UNARY_ANY[b.int_in(0, len(UNARY_ANY) - 1)]
    if op == "Square" and not x.bounded:
        op = "Abs"
    return b.emit(op, [x.ref], {}, x.shape, bounded=op in BOUNDING or (x.bounded and op in ("Abs", "Neg", "Relu")))


def leaky_relu(b):
    x = b.pick()
    return b.emit("LeakyRelu", [x.ref], {"alpha": tw.attr_f(float(b.rng.uniform(0.01, 0.5)))}, x.shape,
                  bounded=x.bounded)


def exp_of_bounded(b):
    cands = [v for v in b.values if v.bounded]
    if not cands:
        return None
    x = cands[-1]
    return b.emit("Exp", [x.ref], {}, x.shape)


def step(b):
    x = b.pick(exact=True)
    if x is None:
        return None
    op = STEP[b.int_in(0, len(STEP) - 1)]
    return b.emit(op, [x.ref], {}, x.shape, bounded=x.bounded)


def broadcast_shape_for(b, shape):
    """A shape that broadcasts against `shape`: full, trailing, 1s mixed in, or a scalar."""
    kind = b.int_in(0, 3)
    if kind == 0:
        return list(shape)
    if kind == 1:
        return [shape[-1]]
    if kind == 2:
        return [1 if b.chance(0.5) else d for d in shape]
    return []


def binary(b):
    x = b.pick()
    op = ["Add", "AddV2", "Sub", "Mul", "Maximum", "Minimum", "SquaredDifference"][b.int_in(0, 6)]
    same = [v for v in b.values if v.shape == x.shape and v is not x]
    if same and b.chance(0.4):
        y = same[b.int_in(0, len(same) - 1)].ref
        yb = False
    else:
        y = b.const(b.uniform(broadcast_shape_for(b, x.shape)))
        yb = True
    if op in ("Mul", "SquaredDifference") and not (x.bounded and yb):
        op = "Add"
    operands = [x.ref, y] if b.chance(0.5) else [y, x.ref]
    return b.emit(op, operands, {}, x.shape)


def divide_by_constant(b):
    x = b.pick()
    d = b.uniform(broadcast_shape_for(b, x.shape), 0.5, 2.0)
    d *= np.where(b.rng.random(d.shape) < 0.5, -1.0, 1.0).astype(np.float32)
    return b.emit("RealDiv", [x.ref, b.const(d)], {}, x.shape, bounded=x.bounded)


def bias_add(b):
    x = b.pick()
    if len(x.shape) < 2:
        return None
    return b.emit("BiasAdd", [x.ref, b.const(b.uniform([x.shape[-1]]))],
                  {"data_format": tw.attr_s("NHWC")}, x.shape)


def matmul(b):
    x = b.pick(rank=2)
    if x is None:
        return None
    k = x.shape[1]
    m = b.int_in(1, 12)
    w = b.uniform([k, m]) / np.float32(np.sqrt(k))
    tb = b.chance(0.3)
    wref = b.const(w.T.copy() if tb else w)
    return b.emit("MatMul", [x.ref, wref], {"transpose_a": tw.attr_b(False), "transpose_b": tw.attr_b(tb)},
                  [x.shape[0], m])


def window_out(size, k, stride, dilation, padding):
    eff = (k - 1) * dilation + 1
    if padding == "SAME":
        return (size + stride - 1) // stride
    if size < eff:
        return 0
    return (size - eff) // stride + 1


def window_attrs(b, x, square=False):
    k_h, k_w = b.int_in(1, 3), b.int_in(1, 3)
    if square:
        k_w = k_h
    stride = b.int_in(1, 2)
    dilation = b.int_in(1, 2) if stride == 1 and b.chance(0.3) else 1
    padding = "SAME" if b.chance(0.5) else "VALID"
    oh = window_out(x.shape[1], k_h, stride, dilation, padding)
    ow = window_out(x.shape[2], k_w, stride, dilation, padding)
    if oh == 0 or ow == 0:
        padding = "SAME"
        oh = window_out(x.shape[1], k_h, stride, dilation, padding)
        ow = window_out(x.shape[2], k_w, stride, dilation, padding)
    return k_h, k_w, stride, dilation, padding, oh, ow


def conv2d(b):
    x = b.pick(rank=4)
    if x is None:
        return None
    k_h, k_w, s, d, pad, oh, ow = window_attrs(b, x)
    c = x.shape[3]
    oc = b.int_in(1, 8)
    w = b.uniform([k_h, k_w, c, oc]) / np.float32(np.sqrt(k_h * k_w * c))
    attrs = {"strides": tw.attr_list_i([1, s, s, 1]), "padding": tw.attr_s(pad),
             "dilations": tw.attr_list_i([1, d, d, 1]), "data_format": tw.attr_s("NHWC"),
             "use_cudnn_on_gpu": tw.attr_b(True)}
    return b.emit("Conv2D", [x.ref, b.const(w)], attrs, [x.shape[0], oh, ow, oc])


def depthwise(b):
    x = b.pick(rank=4)
    if x is None:
        return None
    k_h, k_w, s, d, pad, oh, ow = window_attrs(b, x)
    c = x.shape[3]
    mult = b.int_in(1, 2)
    w = b.uniform([k_h, k_w, c, mult]) / np.float32(np.sqrt(k_h * k_w))
    attrs = {"strides": tw.attr_list_i([1, s, s, 1]), "padding": tw.attr_s(pad),
             "dilations": tw.attr_list_i([1, d, d, 1]), "data_format": tw.attr_s("NHWC")}
    return b.emit("DepthwiseConv2dNative", [x.ref, b.const(w)], attrs, [x.shape[0], oh, ow, c * mult])


def pool(b):
    x = b.pick(rank=4)
    if x is None:
        return None
    op = "MaxPool" if b.chance(0.5) else "AvgPool"
    k_h, k_w = b.int_in(1, 3), b.int_in(1, 3)
    s_h, s_w = b.int_in(1, 3), b.int_in(1, 3)
    pad = "SAME" if b.chance(0.5) else "VALID"
    oh, ow = window_out(x.shape[1], k_h, s_h, 1, pad), window_out(x.shape[2], k_w, s_w, 1, pad)
    if oh == 0 or ow == 0:
        pad = "SAME"
        oh, ow = window_out(x.shape[1], k_h, s_h, 1, pad), window_out(x.shape[2], k_w, s_w, 1, pad)
    attrs = {"ksize": tw.attr_list_i([1, k_h, k_w, 1]), "strides": tw.attr_list_i([1, s_h, s_w, 1]),
             "padding": tw.attr_s(pad), "data_format": tw.attr_s("NHWC")}
    return b.emit(op, [x.ref], attrs, [x.shape[0], oh, ow, x.shape[3]], bounded=x.bounded)


def batch_norm(b):
    x = b.pick(rank=4)
    if x is None:
        return None
    c = x.shape[3]
    scale, offset = b.uniform([c], 0.5, 1.5), b.uniform([c])
    mean, var = b.uniform([c]), b.uniform([c], 0.2, 2.0)
    attrs = {"T": tw.attr_type(F32), "U": tw.attr_type(F32), "epsilon": tw.attr_f(0.001),
             "is_training": tw.attr_b(False), "data_format": tw.attr_s("NHWC"),
             "exponential_avg_factor": tw.attr_f(1.0)}
    ins = [x.ref] + [b.const(a) for a in (scale, offset, mean, var)]
    return b.emit("FusedBatchNormV3", ins, attrs, x.shape)


def softmax(b):
    x = b.pick()
    op = "Softmax" if b.chance(0.7) else "LogSoftmax"
    return b.emit(op, [x.ref], {}, x.shape, bounded=op == "Softmax")


def factor(b, n, parts):
    """Split n into `parts` factors at random."""
    dims = []
    for _ in range(parts - 1):
        divs = [d for d in range(1, n + 1) if n % d == 0]
        d = divs[b.int_in(0, len(divs) - 1)]
        dims.append(d)
        n //= d
    dims.append(n)
    return dims


def reshape(b):
    x = b.pick()
    n = int(np.prod(x.shape[1:]))
    if len(x.shape) == 4 or b.chance(0.3):
        shape = [x.shape[0], n]
        spec = [x.shape[0], -1] if b.chance(0.5) else shape
    else:
        shape = [x.shape[0]] + factor(b, n, 3)
        spec = list(shape)
        if b.chance(0.5):
            spec[b.int_in(1, 3)] = -1
    attrs = {"Tshape": tw.attr_type(I32)}
    return b.emit("Reshape", [x.ref, b.const(np.array(spec, np.int32))], attrs, shape,
                  bounded=x.bounded)


def transpose(b):
    x = b.pick()
    perm = list(b.rng.permutation(len(x.shape)))
    return b.emit("Transpose", [x.ref, b.const(np.array(perm, np.int32))], {"Tperm": tw.attr_type(I32)},
                  [x.shape[p] for p in perm], bounded=x.bounded)


def concat(b):
    x = b.pick()
    axis = b.int_in(0, len(x.shape) - 1)
    parts = [x]
    for _ in range(b.int_in(1, 2)):
        same = [v for v in b.values if len(v.shape) == len(x.shape) and all(
            v.shape[i] == x.shape[i] for i in range(len(x.shape)) if i != axis)]
        if same and b.chance(0.5):
            parts.append(same[b.int_in(0, len(same) - 1)])
        else:
            shape = list(x.shape)
            shape[axis] = b.int_in(1, 3)
            parts.append(Value(b.const(b.uniform(shape)), shape, exact=True))
    shape = list(x.shape)
    shape[axis] = sum(p.shape[axis] for p in parts)
    axis_value = axis - len(x.shape) if b.chance(0.3) else axis
    attrs = {"N": tw.attr_i(len(parts)), "Tidx": tw.attr_type(I32)}
    return b.emit("ConcatV2", [p.ref for p in parts] + [b.const(np.array(axis_value, np.int32))], attrs, shape)


def pad(b):
    x = b.pick()
    mode = ["Pad", "PadV2", "MirrorPad"][b.int_in(0, 2)]
    pads = []
    for d in x.shape:
        if mode == "MirrorPad":
            reflect_limit = d - 1
            pads.append([b.int_in(0, min(2, reflect_limit)), b.int_in(0, min(2, reflect_limit))])
        else:
            pads.append([b.int_in(0, 2), b.int_in(0, 2)])
    shape = [d + p[0] + p[1] for d, p in zip(x.shape, pads)]
    ins = [x.ref, b.const(np.array(pads, np.int32))]
    attrs = {"Tpaddings": tw.attr_type(I32)}
    if mode == "PadV2":
        ins.append(b.const(np.array(b.rng.uniform(-1, 1), np.float32)))
    if mode == "MirrorPad":
        attrs["mode"] = tw.attr_s("REFLECT")
    return b.emit(mode, ins, attrs, shape, bounded=x.bounded)


def reduce(b):
    x = b.pick()
    op = ["Mean", "Sum", "Max", "Min", "Prod"][b.int_in(0, 4)]
    if op == "Prod" and not x.bounded:
        op = "Mean"
    rank = len(x.shape)
    axes = sorted(set(int(a) for a in b.rng.choice(rank, size=b.int_in(1, rank), replace=False)))
    keep = b.chance(0.5)
    if keep:
        shape = [1 if i in axes else d for i, d in enumerate(x.shape)]
    else:
        shape = [d for i, d in enumerate(x.shape) if i not in axes]
    if not shape:
        return None  # keep every value at least rank 1 (a batch-free scalar ends the chain)
    if op == "Prod" and int(np.prod([x.shape[a] for a in axes])) > 16:
        op = "Max"
    spec = [a - rank if b.chance(0.3) else a for a in axes]
    attrs = {"keep_dims": tw.attr_b(keep), "Tidx": tw.attr_type(I32)}
    return b.emit(op, [x.ref, b.const(np.array(spec, np.int32))], attrs, shape,
                  bounded=x.bounded and op in ("Mean", "Max", "Min"))


def slice_op(b):
    x = b.pick()
    begin, size, shape = [], [], []
    for d in x.shape:
        start = b.int_in(0, d - 1)
        length = b.int_in(1, d - start)
        begin.append(start)
        size.append(-1 if (start + length == d and b.chance(0.3)) else length)
        shape.append(length)
    attrs = {"Index": tw.attr_type(I32)}
    return b.emit("Slice", [x.ref, b.const(np.array(begin, np.int32)), b.const(np.array(size, np.int32))],
                  attrs, shape, bounded=x.bounded)


def strided_slice(b):
    x = b.pick()
    begin, end, strides, shape = [], [], [], []
    begin_mask = end_mask = 0
    for i, d in enumerate(x.shape):
        stride = [1, 1, 2, 3, -1, -2][b.int_in(0, 5)]
        lo, hi = sorted((b.int_in(0, d - 1), b.int_in(0, d - 1)))
        start, stop = (lo, hi + 1) if stride > 0 else (hi, lo - 1)
        begin_value, end_value = start, stop
        if b.chance(0.2):
            begin_mask |= 1 << i
            start = 0 if stride > 0 else d - 1
        if stop == -1 or b.chance(0.2):
            # An end of -1 would mean the last element (Python's rule), not "past index 0".
            end_mask |= 1 << i
            stop = d if stride > 0 else -1
            end_value = 0
        elif 0 < end_value < d and b.chance(0.2):
            end_value -= d  # negative indices count from the end
        if begin_value > 0 and b.chance(0.2):
            begin_value -= d
        n = len(range(start, stop, stride))
        begin.append(begin_value)
        end.append(end_value)
        strides.append(stride)
        shape.append(n)
    attrs = {"Index": tw.attr_type(I32), "begin_mask": tw.attr_i(begin_mask), "end_mask": tw.attr_i(end_mask),
             "ellipsis_mask": tw.attr_i(0), "new_axis_mask": tw.attr_i(0), "shrink_axis_mask": tw.attr_i(0)}
    ins = [x.ref] + [b.const(np.array(v, np.int32)) for v in (begin, end, strides)]
    return b.emit("StridedSlice", ins, attrs, shape, bounded=x.bounded)


def tile(b):
    x = b.pick()
    mult = [b.int_in(1, 2) for _ in x.shape]
    return b.emit("Tile", [x.ref, b.const(np.array(mult, np.int32))], {"Tmultiples": tw.attr_type(I32)},
                  [d * m for d, m in zip(x.shape, mult)], bounded=x.bounded)


def squeeze_expand(b):
    x = b.pick()
    ones = [i for i, d in enumerate(x.shape) if d == 1 and i > 0]
    if ones and len(x.shape) > 2:
        dims = ones[:1]
        shape = [d for i, d in enumerate(x.shape) if i not in dims]
        return b.emit("Squeeze", [x.ref], {"squeeze_dims": tw.attr_list_i(dims)}, shape, bounded=x.bounded)
    if len(x.shape) >= 4:
        return None
    axis = b.int_in(1, len(x.shape))
    shape = list(x.shape)
    shape.insert(axis, 1)
    return b.emit("ExpandDims", [x.ref, b.const(np.array(axis, np.int32))], {"Tdim": tw.attr_type(I32)},
                  shape, bounded=x.bounded)


def clip(b):
    x = b.pick()
    lo = float(b.rng.uniform(-1.0, 0.0))
    hi = float(b.rng.uniform(0.0, 1.0))
    return b.emit("ClipByValue", [x.ref, b.const(np.array(lo, np.float32)), b.const(np.array(hi, np.float32))],
                  {}, x.shape, bounded=True)


def select_by_compare(b):
    """Select(Greater(x, c), x, y): the comparison reads an exact value."""
    x = b.pick(exact=True)
    if x is None:
        return None
    cmp = ["Greater", "GreaterEqual", "Less", "LessEqual"][b.int_in(0, 3)]
    c = b.const(np.array(b.rng.uniform(-1, 1), np.float32))
    name = b.fresh(cmp)
    b.g.add(name, cmp, [x.ref, c], {"T": tw.attr_type(F32)}, out_shapes=[x.shape])
    b.ops.append(cmp)
    other = b.pick()
    if other.shape != x.shape:
        other = x
    return b.emit("SelectV2", [name, x.ref, other.ref], {}, x.shape)


def int_op(b):
    """An int32 op on an int32 value: TF's integer semantics (floor division and modulo
    of negatives, broadcasting) against TF.js's."""
    if not b.ints:
        return None
    x = b.ints[b.int_in(0, len(b.ints) - 1)]
    op = ["Add", "Sub", "Mul", "FloorDiv", "FloorMod", "Maximum", "Minimum", "Abs", "Neg"][b.int_in(0, 8)]
    attrs = {"T": tw.attr_type(I32)}
    if op in ("Abs", "Neg"):
        inputs = [x.ref]
    else:
        shape = broadcast_shape_for(b, x.shape)
        if op in ("FloorDiv", "FloorMod"):
            c = b.rng.integers(1, 8, size=shape) * np.where(b.rng.random(shape) < 0.5, -1, 1)
        elif op == "Mul":
            c = b.rng.integers(-3, 4, size=shape)
        else:
            c = b.rng.integers(-20, 21, size=shape)
        inputs = [x.ref, b.const(np.asarray(c, np.int32), I32)]
    name = b.fresh(op)
    b.g.add(name, op, inputs, attrs, out_shapes=[x.shape])
    b.ops.append(op)
    v = Value(name, x.shape, exact=True, dtype=I32)
    b.ints.append(v)
    return v


def int_to_float(b):
    """Cast an int32 value into the float graph: exact, so later step ops may read it."""
    computed = [v for v in b.ints if not v.ref.startswith("i")]
    if not computed:
        return None
    x = computed[-1]
    name = b.fresh("Cast")
    b.g.add(name, "Cast", [x.ref], {"SrcT": tw.attr_type(I32), "DstT": tw.attr_type(F32),
                                   "Truncate": tw.attr_b(False)}, out_shapes=[x.shape])
    b.ops.append("Cast")
    v = Value(name, x.shape, exact=True)
    b.values.append(v)
    return v


GENERATORS = [
    (unary, 6), (leaky_relu, 1), (exp_of_bounded, 1), (step, 1), (binary, 5), (divide_by_constant, 1),
    (bias_add, 2), (matmul, 3), (conv2d, 4), (depthwise, 3), (pool, 3), (batch_norm, 1), (softmax, 1),
    (reshape, 2), (transpose, 1), (concat, 2), (pad, 2), (reduce, 2), (slice_op, 1), (strided_slice, 2),
    (tile, 1), (squeeze_expand, 1), (clip, 1), (select_by_compare, 1), (int_op, 6), (int_to_float, 2),
]


def generate(seed, max_ops=8):
    """One random model from a seed (the same seed gives the same model)."""
    rng = np.random.default_rng(seed)
    b = Builder(rng)
    if b.chance(0.7):
        shape = [b.int_in(1, 2), b.int_in(1, 9), b.int_in(1, 9), b.int_in(1, 6)]
    else:
        shape = [b.int_in(1, 3), b.int_in(1, 16)]
    first = b.placeholder(shape)
    if b.chance(0.25):
        b.placeholder(shape)
    if b.chance(0.3):
        tw.placeholder(b.g, "i0", I32, shape)
        b.inputs["i0"] = rng.integers(-50, 51, size=shape).astype(np.int32)
        b.ints.append(Value("i0", shape, exact=True, dtype=I32))
    if not growth.grow(rng, GENERATORS, b, b.int_in(1, max_ops), 10 * max_ops):
        return generate(seed + 7919, max_ops)
    computed = [v for v in b.values if not v.exact]
    if not computed:
        computed = [b.emit("Identity", [first.ref], {}, first.shape)]
    outputs = [computed[-1].ref]
    consumed = {i.split(":")[0] for n in b.g.nodes for i in n.inputs}
    loose = [v.ref for v in computed[:-1] if v.ref not in consumed]
    if loose and b.chance(0.5):
        outputs.append(loose[-1])
    int_results = [v.ref for v in b.ints if v.ref != "i0" and v.ref not in consumed]
    if int_results:
        outputs.append(int_results[-1])
    return Model(b.g, b.inputs, outputs, b.ops)


def needed_nodes(graph, outputs):
    """Names of the nodes the outputs depend on (what Session.run would execute)."""
    seen, stack = set(), [o.split(":")[0] for o in outputs]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        for i in graph[name].inputs:
            stack.append(i.lstrip("^").split(":")[0])
    return seen
