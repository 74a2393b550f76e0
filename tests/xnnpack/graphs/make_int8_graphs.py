#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Writes the one-op float GraphDefs (text format) that the int8 XNNPACK tests
# quantize with floe-convert --quantize int8 --io int8, and their calibration
# samples (int8/<graph>_calib/<input>.npy, float32 [8, ...]). Each graph is one
# int8 operator XNNPACK 2022-02 takes (QC8 convolution incl. stride, padding,
# dilation, depth multiplier and the IGEMM / dwconv paths; fully connected; QS8
# add with broadcasting; global average; convolutions over <= 4 channels, which
# the converter turns into im2col + a 1x1 convolution), so the test compares
# that op with the reference kernel. Weights and samples come from make_graphs.py's fixed LCG.
#   /usr/bin/python3 make_int8_graphs.py
import os
import struct

import make_graphs as mg
from make_graphs import const, ints, op, pad, placeholder

OUT = os.path.join(mg.HERE, 'int8')
SAMPLES = 8


def write_npy(path, dims, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % ''.join(f'{d}, ' for d in dims)
    header += ' ' * (63 - (10 + len(header)) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode('latin1'))
        f.write(struct.pack(f'<{len(values)}f', *values))


def conv(name, x, k, strides=1, padding='SAME', dilation=1, bias=True, act=None):
    g = placeholder('x', x) + const('k', k, scale=0.4)
    body = 'c' if bias or act else 'out'
    g += op(body, 'Conv2D', ['x', 'k'], strides=ints(1, strides, strides, 1), padding=pad(padding),
            dilations=ints(1, dilation, dilation, 1))
    if bias:
        g += const('b', [k[3]], scale=0.2) + op('out' if act is None else 'cb', 'BiasAdd', [body, 'b'])
    if act:
        g += op('out', act, ['cb' if bias else body])
    return g


def depthwise(name, x, k, strides=1, padding='SAME', dilation=1, bias=True, act=None):
    g = placeholder('x', x) + const('k', k, scale=0.4)
    body = 'd' if bias or act else 'out'
    g += op(body, 'DepthwiseConv2dNative', ['x', 'k'], strides=ints(1, strides, strides, 1),
            padding=pad(padding), dilations=ints(1, dilation, dilation, 1))
    if bias:
        g += const('b', [k[2] * k[3]], scale=0.2) + op('out' if act is None else 'db', 'BiasAdd', [body, 'b'])
    if act:
        g += op('out', act, ['db' if bias else body])
    return g


def dense(name, x, units):
    g = placeholder('x', x) + const('w', [x[1], units], scale=0.3) + const('b', [units], scale=0.2)
    return g + op('mm', 'MatMul', ['x', 'w']) + op('out', 'BiasAdd', ['mm', 'b'])


def add(name, x, y):
    g = placeholder('x', x) + placeholder('y', y)
    return g + op('out', 'AddV2', ['x', 'y'])


def avgpool_global(name, x):
    g = placeholder('x', x)
    return g + op('out', 'AvgPool', ['x'], ksize=ints(1, x[1], x[2], 1), strides=ints(1, 1, 1, 1),
                  padding=pad('VALID'))


def mean_hw(name, x):
    g = placeholder('x', x) + const('axes', [2], values=[1, 2], dtype='DT_INT32')
    return g + op('out', 'Mean', ['x', 'axes'], keep_dims='b: true')


# name -> (graph, {input: (shape, calibration range)})
GRAPHS = [
    ('conv_same', lambda: conv('conv_same', [1, 9, 11, 5], [3, 3, 5, 7], act='Relu'), {'x': ([1, 9, 11, 5], 1.0)}),
    ('conv_stride2_valid', lambda: conv('conv_stride2_valid', [1, 12, 10, 6], [3, 3, 6, 6], strides=2, padding='VALID'),
     {'x': ([1, 12, 10, 6], 2.0)}),
    ('conv_dilated', lambda: conv('conv_dilated', [1, 11, 9, 5], [3, 3, 5, 5], dilation=2), {'x': ([1, 11, 9, 5], 1.5)}),
    # <= 4 input channels: the converter's im2col + 1x1 convolution
    ('conv_narrow_dilated', lambda: conv('conv_narrow_dilated', [1, 10, 9, 2], [3, 3, 2, 7], dilation=2, act='Relu'),
     {'x': ([1, 10, 9, 2], 1.5)}),
    ('conv_narrow_stride2', lambda: conv('conv_narrow_stride2', [1, 12, 11, 3], [3, 3, 3, 9], strides=2),
     {'x': ([1, 12, 11, 3], 2.0)}),
    ('conv_first_layer', lambda: conv('conv_first_layer', [1, 49, 10, 1], [10, 4, 1, 16], strides=2, act='Relu'),
     {'x': ([1, 49, 10, 1], 3.0)}),
    ('conv_pointwise', lambda: conv('conv_pointwise', [1, 5, 7, 13], [1, 1, 13, 11], act='Relu6'),
     {'x': ([1, 5, 7, 13], 1.0)}),
    ('conv_no_bias', lambda: conv('conv_no_bias', [2, 6, 5, 9], [2, 3, 9, 4], padding='VALID', bias=False),
     {'x': ([2, 6, 5, 9], 1.0)}),
    ('dw_3x3', lambda: depthwise('dw_3x3', [1, 10, 8, 13], [3, 3, 13, 1], act='Relu6'), {'x': ([1, 10, 8, 13], 1.0)}),
    ('dw_5x5_stride2', lambda: depthwise('dw_5x5_stride2', [1, 13, 11, 6], [5, 5, 6, 1], strides=2, padding='VALID'),
     {'x': ([1, 13, 11, 6], 2.0)}),
    ('dw_multiplier8', lambda: depthwise('dw_multiplier8', [1, 9, 9, 1], [3, 3, 1, 8], strides=2, act='Relu'),
     {'x': ([1, 9, 9, 1], 1.0)}),
    ('dw_dilated', lambda: depthwise('dw_dilated', [1, 11, 11, 7], [3, 3, 7, 1], dilation=2), {'x': ([1, 11, 11, 7], 1.0)}),
    ('dw_2x2_valid', lambda: depthwise('dw_2x2_valid', [1, 6, 7, 9], [2, 2, 9, 1], padding='VALID'),
     {'x': ([1, 6, 7, 9], 1.0)}),
    ('dense', lambda: dense('dense', [3, 37], 19), {'x': ([3, 37], 1.0)}),
    ('add', lambda: add('add', [1, 6, 5, 8], [1, 6, 5, 8]), {'x': ([1, 6, 5, 8], 1.0), 'y': ([1, 6, 5, 8], 3.0)}),
    ('add_broadcast', lambda: add('add_broadcast', [2, 4, 3, 6], [1, 1, 3, 6]),
     {'x': ([2, 4, 3, 6], 2.0), 'y': ([1, 1, 3, 6], 0.5)}),
    ('avgpool_global', lambda: avgpool_global('avgpool_global', [1, 25, 5, 16]), {'x': ([1, 25, 5, 16], 2.0)}),
    ('mean_hw', lambda: mean_hw('mean_hw', [1, 6, 7, 10]), {'x': ([1, 6, 7, 10], 1.0)}),
]

if __name__ == '__main__':
    os.makedirs(OUT, exist_ok=True)
    for name, fn, inputs in GRAPHS:
        with open(os.path.join(OUT, f'{name}.pbtxt'), 'w') as f:
            f.write(f'# Generated by make_int8_graphs.py: {name}, one int8 op for the XNNPACK int8 tests.\n')
            f.write(fn())
        calib = os.path.join(OUT, f'{name}_calib')
        os.makedirs(calib, exist_ok=True)
        # SAMPLES samples [n, ...] of batch-1 inputs; a graph with a larger
        # batch calibrates on one sample of exactly its input shapes.
        batched = all(dims[0] == 1 for dims, _ in inputs.values())
        for input_name, (dims, scale) in inputs.items():
            shape = [SAMPLES] + dims[1:] if batched else dims
            n = 1
            for d in shape:
                n *= d
            write_npy(os.path.join(calib, f'{input_name}.npy'), shape, mg.rnd(n, scale))
