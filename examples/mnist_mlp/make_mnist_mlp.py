# SPDX-License-Identifier: Apache-2.0
"""Train the seed article's MNIST MLP and save it the way TensorFlow 1.14 would.

    /usr/bin/python3 examples/mnist_mlp/make_mnist_mlp.py [--out DIR]

The graph is what the TF1 tutorial (fully_connected_feed.py + mnist.py:
inference/loss/training, hidden1=128, hidden2=32) builds, with the inputs
named ``images`` / ``labels``; it is trained here with plain numpy SGD on
scikit-learn's bundled 8x8 digits upscaled to 28x28, then written as

  mnist_mlp.meta            MetaGraphDef (binary, with _output_shapes), Saver.save style
  mnist_mlp.pbtxt           GraphDef text (tf.train.write_graph(sess.graph_def, as_text=True))
  model.ckpt.index / model.ckpt.data-00000-of-00001 / checkpoint   V2 checkpoint
  digit_<label>.npy         held-out samples, float32 [1, 784]
  expected.json             logits computed in numpy for those samples

No TensorFlow is used anywhere.  Deterministic (fixed seeds).
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.join(HERE, "..", "tf1_writer"))
import tf1_writer as tfw  # noqa: E402
from tf1_writer import DT_FLOAT, DT_INT32, DT_INT64, DT_STRING  # noqa: E402

IMAGE_SIZE = 28
IMAGE_PIXELS = IMAGE_SIZE * IMAGE_SIZE
NUM_CLASSES = 10
HIDDEN1 = 128
HIDDEN2 = 32
LEARNING_RATE = 0.3
BATCH_SIZE = 100
MAX_STEPS = 400
SEED = 20190618  # TF 1.14.0 release date, for want of a better number
N_TEST = 297     # held-out digits (of 1797)
SAMPLE_LABELS = (3, 7, 9)
LAYER_SCOPES = ("hidden1", "hidden2", "softmax_linear")

PREVENT_GRADIENT_MSG = (
    "Currently there is no way to take the second derivative of "
    "sparse_softmax_cross_entropy_with_logits due to the fused implementation's "
    "interaction with tf.gradients()")


# ---------------------------------------------------------------------------
# Data: sklearn digits (8x8, 0..16) -> 28x28 in [0, 1]
# ---------------------------------------------------------------------------
def _bilinear_matrix(n_in, n_out):
    """Rows: output pixels; half-pixel-centre bilinear weights over input pixels."""
    r = np.zeros((n_out, n_in))
    for o in range(n_out):
        src = min(max((o + 0.5) * n_in / n_out - 0.5, 0.0), n_in - 1.0)
        lo = int(math.floor(src))
        hi = min(lo + 1, n_in - 1)
        frac = src - lo
        r[o, lo] += 1.0 - frac
        r[o, hi] += frac
    return r


def load_data():
    from sklearn.datasets import load_digits
    digits = load_digits()
    imgs8 = digits.images.astype(np.float64) / 16.0          # [N, 8, 8] in [0, 1]
    r = _bilinear_matrix(8, IMAGE_SIZE)
    imgs28 = np.einsum("oi,nij,pj->nop", r, imgs8, r)        # separable resize
    x = np.clip(imgs28, 0.0, 1.0).reshape(-1, IMAGE_PIXELS).astype(np.float32)
    y = digits.target.astype(np.int32)
    perm = np.random.RandomState(SEED).permutation(len(x))
    test, train = perm[:N_TEST], perm[N_TEST:]
    return x[train], y[train], x[test], y[test]


# ---------------------------------------------------------------------------
# Training (numpy, float64 master weights, plain minibatch SGD = GradientDescentOptimizer)
# ---------------------------------------------------------------------------
def truncated_normal(rng, shape, stddev):
    """tf.truncated_normal semantics: N(0, stddev) redrawn outside 2 stddev."""
    v = rng.standard_normal(shape)
    bad = np.abs(v) > 2.0
    while bad.any():
        v[bad] = rng.standard_normal(int(bad.sum()))
        bad = np.abs(v) > 2.0
    return v * stddev


def init_params(rng):
    sizes = [(IMAGE_PIXELS, HIDDEN1), (HIDDEN1, HIDDEN2), (HIDDEN2, NUM_CLASSES)]
    return [(truncated_normal(rng, s, 1.0 / math.sqrt(float(s[0]))), np.zeros(s[1]))
            for s in sizes]


def forward(params, x):
    acts = [x]
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = np.maximum(h, 0.0)
        acts.append(h)
    return acts


def train(x, y, steps):
    rng = np.random.RandomState(SEED + 1)
    params = init_params(rng)
    x = x.astype(np.float64)
    n = len(x)
    order = rng.permutation(n)
    pos = 0
    for _ in range(steps):
        if pos + BATCH_SIZE > n:
            order = rng.permutation(n)
            pos = 0
        idx = order[pos:pos + BATCH_SIZE]
        pos += BATCH_SIZE
        acts = forward(params, x[idx])
        logits = acts[-1]
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        p[np.arange(len(idx)), y[idx]] -= 1.0
        grad = p / len(idx)                       # d(mean xentropy)/d logits
        new = []
        for i in reversed(range(len(params))):
            w, b = params[i]
            gw = acts[i].T @ grad
            gb = grad.sum(axis=0)
            if i > 0:
                grad = (grad @ w.T) * (acts[i] > 0)
            new.append((w - LEARNING_RATE * gw, b - LEARNING_RATE * gb))
        params = new[::-1]
    return [(w.astype(np.float32), b.astype(np.float32)) for w, b in params]


def logits_f32(params, x):
    """The graph's op order in float32: MatMul -> Add -> Relu ... -> MatMul -> Add."""
    h = x.astype(np.float32)
    for i, (w, b) in enumerate(params):
        h = np.matmul(h, w) + b
        if i < len(params) - 1:
            h = np.maximum(h, np.float32(0))
    return h


def logits_f64(params, x):
    h = x.astype(np.float64)
    for i, (w, b) in enumerate(params):
        h = h @ w.astype(np.float64) + b.astype(np.float64)
        if i < len(params) - 1:
            h = np.maximum(h, 0.0)
    return h


# ---------------------------------------------------------------------------
# The TF 1.14 graph
# ---------------------------------------------------------------------------
def _t(dt):
    return tfw.attr_type(dt)


def build_graph():
    g = tfw.Graph()
    B = -1  # batch dimension (None)

    # placeholder_inputs()
    images = tfw.placeholder(g, "images", DT_FLOAT, [B, IMAGE_PIXELS])
    labels = tfw.placeholder(g, "labels", DT_INT32, [B])

    # mnist.inference(images, HIDDEN1, HIDDEN2)
    variables = []
    layers = []   # (scope, input, matmul, add, weights var, biases var, fan_in, units)
    x = images
    for scope, fan_in, units in zip(LAYER_SCOPES, (IMAGE_PIXELS, HIDDEN1, HIDDEN2),
                                    (HIDDEN1, HIDDEN2, NUM_CLASSES)):
        init_w = tfw.truncated_normal(g, scope + "/truncated_normal", [fan_in, units],
                                      stddev=1.0 / math.sqrt(float(fan_in)))
        weights = tfw.variable(g, scope + "/weights", init_w)
        biases = tfw.variable(g, scope + "/biases", tfw.zeros(g, scope + "/zeros", [units]))
        mm = tfw.matmul(g, scope + "/MatMul", x, weights.read, [B, units])
        add = tfw.add(g, scope + "/add", mm, biases.read, [B, units])
        layers.append((scope, x, mm, add, weights, biases, fan_in, units))
        variables += [weights, biases]
        x = tfw.relu(g, scope + "/Relu", add, [B, units]) if scope != "softmax_linear" else add
    logits = x

    # mnist.loss(logits, labels)
    to64 = g.add("ToInt64", "Cast", (labels,),
                 {"DstT": _t(DT_INT64), "SrcT": _t(DT_INT32), "Truncate": tfw.attr_b(False)},
                 out_shapes=[[B]])
    g.add("xentropy/Shape", "Shape", (to64,), {"T": _t(DT_INT64), "out_type": _t(DT_INT32)},
          out_shapes=[[1]])
    xent = g.add("xentropy/xentropy", "SparseSoftmaxCrossEntropyWithLogits", (logits, to64),
                 {"T": _t(DT_FLOAT), "Tlabels": _t(DT_INT64)},
                 out_shapes=[[B], [B, NUM_CLASSES]])
    red = tfw.const(g, "Const", np.array([0], np.int32))
    loss = g.add("xentropy_mean", "Mean", (xent, red),
                 {"T": _t(DT_FLOAT), "Tidx": _t(DT_INT32), "keep_dims": tfw.attr_b(False)},
                 out_shapes=[[]])

    # mnist.training(loss, learning_rate)
    tags = tfw.const(g, "loss/tags", b"loss", DT_STRING)
    g.add("loss", "ScalarSummary", (tags, loss), {"T": _t(DT_FLOAT)}, out_shapes=[[]])
    global_step = tfw.variable(g, "global_step",
                               tfw.const(g, "global_step/initial_value", np.int32(0)),
                               trainable=False)
    variables.append(global_step)
    grads = build_gradients(g, layers, xent, loss)
    train_op = build_apply_gradient_descent(g, layers, grads, global_step)

    # summary = tf.summary.merge_all(); init; saver
    g.add("Merge/MergeSummary", "MergeSummary", ("loss",), {"N": tfw.attr_i(1)}, out_shapes=[[]])
    tfw.global_variables_initializer(g, variables)
    saver_def = tfw.saver(g, variables)

    collections = tfw.variables_collections(variables)
    collections["summaries"] = tfw.collection_node_list(["loss:0"])
    collections["train_op"] = tfw.collection_node_list([train_op.name])
    return g, saver_def, collections, variables


def build_gradients(g, layers, xent, loss):
    """optimizer.compute_gradients(loss): tf.gradients with GATE_OP, TF 1.14 naming."""
    B = -1
    F, I32 = _t(DT_FLOAT), _t(DT_INT32)

    def tuple_deps(scope, a, b, shape_a, shape_b):
        """control_flow_ops.tuple([a, b]): group_deps + two gated Identities."""
        gate = g.add(scope + "/tuple/group_deps", "NoOp", (), {}, control=[a, b])
        outs = []
        for i, (t, shp) in enumerate(((a, shape_a), (b, shape_b))):
            outs.append(g.add(scope + "/tuple/control_dependency" + ("_1" if i else ""),
                              "Identity", (t,),
                              {"T": F, "_class": tfw.attr_list_s(["loc:@" + t.name])},
                              out_shapes=[shp], control=[gate]))
        return outs

    # _DefaultGradYs
    shp = tfw.const(g, "gradients/Shape", np.zeros([0], np.int32))
    one = tfw.const(g, "gradients/grad_ys_0", np.float32(1.0))
    fill = g.add("gradients/Fill", "Fill", (shp, one), {"T": F, "index_type": I32},
                 out_shapes=[[]])

    # xentropy_mean (Mean) -> _MeanGrad
    s = "gradients/xentropy_mean_grad/"
    rs = tfw.const(g, s + "Reshape/shape", np.array([1], np.int32))
    reshape = g.add(s + "Reshape", "Reshape", (fill, rs), {"T": F, "Tshape": I32},
                    out_shapes=[[1]])
    in_shape = g.add(s + "Shape", "Shape", (xent,), {"T": F, "out_type": I32}, out_shapes=[[1]])
    tile = g.add(s + "Tile", "Tile", (reshape, in_shape), {"T": F, "Tmultiples": I32},
                 out_shapes=[[B]])
    shape1 = g.add(s + "Shape_1", "Shape", (xent,), {"T": F, "out_type": I32}, out_shapes=[[1]])
    shape2 = tfw.const(g, s + "Shape_2", np.zeros([0], np.int32))
    c0 = tfw.const(g, s + "Const", np.array([0], np.int32))
    prod = g.add(s + "Prod", "Prod", (shape1, c0),
                 {"T": I32, "Tidx": I32, "keep_dims": tfw.attr_b(False)}, out_shapes=[[]])
    c1 = tfw.const(g, s + "Const_1", np.array([0], np.int32))
    prod1 = g.add(s + "Prod_1", "Prod", (shape2, c1),
                  {"T": I32, "Tidx": I32, "keep_dims": tfw.attr_b(False)}, out_shapes=[[]])
    my = tfw.const(g, s + "Maximum/y", np.int32(1))
    mx = g.add(s + "Maximum", "Maximum", (prod1, my), {"T": I32}, out_shapes=[[]])
    fdiv = g.add(s + "floordiv", "FloorDiv", (prod, mx), {"T": I32}, out_shapes=[[]])
    cast = g.add(s + "Cast", "Cast", (fdiv,),
                 {"DstT": F, "SrcT": I32, "Truncate": tfw.attr_b(False)}, out_shapes=[[]])
    truediv = g.add(s + "truediv", "RealDiv", (tile, cast), {"T": F}, out_shapes=[[B]])

    # xentropy/xentropy: the unused 'backprop' output gets a zeros_like out_grad
    g.add("gradients/zeros_like", "ZerosLike", (xent.output(1),), {"T": F},
          out_shapes=[[B, NUM_CLASSES]])
    s = "gradients/xentropy/xentropy_grad/"
    pg = g.add(s + "PreventGradient", "PreventGradient", (xent.output(1),),
               {"T": F, "message": tfw.attr_s(PREVENT_GRADIENT_MSG)},
               out_shapes=[[B, NUM_CLASSES]])
    dim = tfw.const(g, s + "ExpandDims/dim", np.int32(-1))
    ed = g.add(s + "ExpandDims", "ExpandDims", (truediv, dim), {"T": F, "Tdim": I32},
               out_shapes=[[B, 1]])
    grad = g.add(s + "mul", "Mul", (ed, pg), {"T": F}, out_shapes=[[B, NUM_CLASSES]])

    grads = {}
    for li in reversed(range(len(layers))):
        scope, x_in, mm, add, weights, biases, fan_in, units = layers[li]
        if li < len(layers) - 1:
            s = "gradients/%s/Relu_grad/" % scope
            grad = g.add(s + "ReluGrad", "ReluGrad", (grad, scope + "/Relu"), {"T": F},
                         out_shapes=[[B, units]])
        # Add -> _AddGrad
        s = "gradients/%s/add_grad/" % scope
        sx = g.add(s + "Shape", "Shape", (mm,), {"T": F, "out_type": I32}, out_shapes=[[2]])
        sy = tfw.const(g, s + "Shape_1", np.array([units], np.int32))
        bga = g.add(s + "BroadcastGradientArgs", "BroadcastGradientArgs", (sx, sy), {"T": I32},
                    out_shapes=[[B], [B]])
        red = {"T": F, "Tidx": I32, "keep_dims": tfw.attr_b(False)}
        sum0 = g.add(s + "Sum", "Sum", (grad, bga), red, out_shapes=[tfw.UNKNOWN_RANK])
        r0 = g.add(s + "Reshape", "Reshape", (sum0, sx), {"T": F, "Tshape": I32},
                   out_shapes=[[B, units]])
        sum1 = g.add(s + "Sum_1", "Sum", (grad, bga.output(1)), red,
                     out_shapes=[tfw.UNKNOWN_RANK])
        r1 = g.add(s + "Reshape_1", "Reshape", (sum1, sy), {"T": F, "Tshape": I32},
                   out_shapes=[[units]])
        g_mm, g_b = tuple_deps(s[:-1], r0, r1, [B, units], [units])
        grads[biases.name] = g_b
        # MatMul -> _MatMulGrad (both inputs, also for hidden1's w.r.t. images)
        s = "gradients/%s/MatMul_grad/" % scope
        ga = tfw.matmul(g, s + "MatMul", g_mm, weights.read, [B, fan_in], transpose_b=True)
        gb = tfw.matmul(g, s + "MatMul_1", x_in, g_mm, [fan_in, units], transpose_a=True)
        g_x, g_w = tuple_deps(s[:-1], ga, gb, [B, fan_in], [fan_in, units])
        grads[weights.name] = g_w
        grad = g_x
    return grads


def build_apply_gradient_descent(g, layers, grads, global_step):
    """GradientDescentOptimizer(lr).apply_gradients(..., global_step)."""
    lr = tfw.const(g, "GradientDescent/learning_rate", np.float32(LEARNING_RATE))
    updates = []
    for scope, _, _, _, weights, biases, _, _ in layers:
        for v in (weights, biases):
            updates.append(g.add(
                "GradientDescent/update_%s/ApplyGradientDescent" % v.name,
                "ApplyGradientDescent", (v.var, lr, grads[v.name]),
                {"T": _t(DT_FLOAT), "_class": tfw.attr_list_s(["loc:@" + v.name]),
                 "use_locking": tfw.attr_b(False)}, out_shapes=[v.shape]))
    upd = g.add("GradientDescent/update", "NoOp", (), {}, control=updates)
    loc = ["global_step"]
    val = tfw.const(g, "GradientDescent/value", np.int32(1), control=[upd], colocate=loc)
    return g.add("GradientDescent", "AssignAdd", (global_step.var, val),
                 {"T": _t(DT_INT32), "_class": tfw.attr_list_s(["loc:@global_step"]),
                  "use_locking": tfw.attr_b(False)}, out_shapes=[[]], control=[upd])


# ---------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "model"), help="output directory")
    ap.add_argument("--steps", type=int, default=MAX_STEPS, help="SGD steps")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    t0 = time.time()
    xtr, ytr, xte, yte = load_data()
    params = train(xtr, ytr, args.steps)
    train_acc = float((logits_f32(params, xtr).argmax(1) == ytr).mean())
    test_logits = logits_f32(params, xte)
    test_acc = float((test_logits.argmax(1) == yte).mean())
    print("trained %d SGD steps (batch %d, lr %g) on %d digits in %.1fs: "
          "train accuracy %.4f, held-out accuracy %.4f (%d images)"
          % (args.steps, BATCH_SIZE, LEARNING_RATE, len(xtr), time.time() - t0,
             train_acc, test_acc, len(xte)))

    g, saver_def, collections, _ = build_graph()
    meta = tfw.meta_graph_def(g, saver_def, collections, add_shapes=True)
    tfw.write_bytes(os.path.join(args.out, "mnist_mlp.meta"), meta.serialize())
    tfw.write_text(os.path.join(args.out, "mnist_mlp.pbtxt"), g.graph_def(add_shapes=False).to_text())

    values = {"global_step": np.int32(args.steps)}
    for scope, (wt, b) in zip(LAYER_SCOPES, params):
        values[scope + "/weights"] = wt
        values[scope + "/biases"] = b
    keys = sorted(values, key=lambda k: k.encode("utf-8"))   # Saver order
    tfw.write_checkpoint(os.path.join(args.out, "model.ckpt"), [(k, values[k]) for k in keys])
    tfw.write_checkpoint_state(args.out, "model.ckpt")

    samples = []
    for label in SAMPLE_LABELS:
        i = int(np.nonzero(yte == label)[0][0])
        img = xte[i:i + 1].astype(np.float32)
        fname = "digit_%d.npy" % label
        np.save(os.path.join(args.out, fname), np.ascontiguousarray(img))
        lg = logits_f32(params, img)[0]
        samples.append({
            "file": fname,
            "label": label,
            "predicted": int(lg.argmax()),
            "logits": [float(v) for v in lg],
            "logits_float64": [float(v) for v in logits_f64(params, img)[0]],
        })
        print("  %s: label %d predicted %d logits %s" % (
            fname, label, int(lg.argmax()), np.array2string(lg, precision=4, max_line_width=200)))
    expected = {
        "graph": "mnist_mlp.meta",
        "graph_text": "mnist_mlp.pbtxt",
        "checkpoint": "model.ckpt",
        "input": "images",
        "input_shape": [1, IMAGE_PIXELS],
        "output": "softmax_linear/add",
        "checkpoint_keys": keys,
        "train_accuracy": train_acc,
        "heldout_accuracy": test_acc,
        "heldout_images": int(len(xte)),
        "note": "logits: float32 numpy in graph op order (MatMul, Add, Relu); "
                "logits_float64: same weights evaluated in float64",
        "samples": samples,
    }
    with open(os.path.join(args.out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")
    print("wrote %s (%d nodes)" % (args.out, len(g.nodes)))



if __name__ == "__main__":
    main()
