# SPDX-License-Identifier: Apache-2.0
"""The seed article's conv example, saved the way TensorFlow 1.14 would.

    /usr/bin/python3 examples/conv_seed/make_conv_seed.py [--out DIR]

The TF1 program this imitates (placeholder instead of the article's
``tf.constant`` image so the model has an input):

    image = tf.placeholder(tf.float32, [1, 5, 5, 3], name='image')
    kernel = tf.Variable(tf.random_normal([3, 3, 3, 1], seed=1), name='kernel')
    y = tf.nn.conv2d(image, kernel, strides=[1, 2, 2, 1], padding='SAME', name='conv')
    init = tf.global_variables_initializer()
    saver = tf.train.Saver()
    ...
    saver.save(sess, 'model/model.ckpt')   # + export_meta_graph('model/conv_seed.meta')

Writes conv_seed.meta, model.ckpt.{index,data-00000-of-00001}, checkpoint,
input.npy (1x5x5x3) and expected.npy (1x3x3x1, computed in numpy with TF's
SAME padding).  The kernel values come from numpy's RandomState (TF's Philox
stream is not reproduced; the checkpoint is what holds the values).
"""

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.join(HERE, "..", "tf1_writer"))
import tf1_writer as tfw  # noqa: E402
from tf1_writer import DT_FLOAT  # noqa: E402

IMAGE_SHAPE = [1, 5, 5, 3]
KERNEL_SHAPE = [3, 3, 3, 1]
STRIDES = [1, 2, 2, 1]
SEED = 1


def same_pads(in_size, k, stride, dilation=1):
    """TF SAME padding: total = max((ceil(in/s)-1)*s + (k-1)*d + 1 - in, 0); floor half before."""
    out = -(-in_size // stride)
    total = max((out - 1) * stride + (k - 1) * dilation + 1 - in_size, 0)
    return out, total // 2, total - total // 2


def conv2d_same_nhwc(x, w, strides):
    """Reference NHWC/HWIO convolution, accumulated in float64, rounded to float32."""
    n, h, wd, c = x.shape
    kh, kw, ci, co = w.shape
    assert ci == c
    oh, ph0, ph1 = same_pads(h, kh, strides[1])
    ow, pw0, pw1 = same_pads(wd, kw, strides[2])
    xp = np.pad(x.astype(np.float64), ((0, 0), (ph0, ph1), (pw0, pw1), (0, 0)))
    out = np.zeros((n, oh, ow, co))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, i * strides[1]:i * strides[1] + kh, j * strides[2]:j * strides[2] + kw, :]
            out[:, i, j, :] = np.tensordot(patch, w.astype(np.float64), axes=([1, 2, 3], [0, 1, 2]))
    return out.astype(np.float32)


def build_graph():
    g = tfw.Graph()
    image = tfw.placeholder(g, "image", DT_FLOAT, IMAGE_SHAPE)
    # tf.random_normal(..., seed=1) without a graph seed -> seed=DEFAULT_GRAPH_SEED, seed2=1
    init = tfw.random_normal(g, "random_normal", KERNEL_SHAPE, stddev=1.0,
                             seed=tfw.DEFAULT_GRAPH_SEED, seed2=SEED)
    kernel = tfw.variable(g, "kernel", init)
    oh = same_pads(IMAGE_SHAPE[1], KERNEL_SHAPE[0], STRIDES[1])[0]
    ow = same_pads(IMAGE_SHAPE[2], KERNEL_SHAPE[1], STRIDES[2])[0]
    tfw.conv2d(g, "conv", image, kernel.read, STRIDES, "SAME", [1, oh, ow, KERNEL_SHAPE[3]])
    tfw.global_variables_initializer(g, [kernel])
    saver_def = tfw.saver(g, [kernel])
    return g, saver_def, tfw.variables_collections([kernel])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "model"), help="output directory")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    rng = np.random.RandomState(SEED)
    kernel = rng.standard_normal(KERNEL_SHAPE).astype(np.float32)
    image = rng.uniform(-1.0, 1.0, IMAGE_SHAPE).astype(np.float32)
    expected = conv2d_same_nhwc(image, kernel, STRIDES)

    g, saver_def, collections = build_graph()
    meta = tfw.meta_graph_def(g, saver_def, collections, add_shapes=True)
    tfw.write_bytes(os.path.join(args.out, "conv_seed.meta"), meta.serialize())
    tfw.write_checkpoint(os.path.join(args.out, "model.ckpt"), [("kernel", kernel)])
    tfw.write_checkpoint_state(args.out, "model.ckpt")
    np.save(os.path.join(args.out, "input.npy"), image)
    np.save(os.path.join(args.out, "expected.npy"), expected)
    print("nodes: " + ", ".join("%s(%s)" % (n.name, n.op) for n in g.nodes))
    print("expected conv output [1,3,3,1]:\n%s" % np.array2string(expected[0, :, :, 0], precision=5))
    print("wrote %s" % args.out)


if __name__ == "__main__":
    main()
