#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Writes the small TF GraphDefs (text format) the XNNPACK differential tests
# convert: every op family XNNPACK takes, with odd sizes, padding, strides,
# dilation, depth multiplier and broadcasting, plus ops that stay on the
# reference kernels. Weights come from a fixed LCG so the files never change.
#   /usr/bin/python3 make_graphs.py   (rewrites dense, conv, eltwise, bigfilter, windows .pbtxt)
import os

HERE = os.path.dirname(os.path.abspath(__file__))
_state = [12345]


def rnd(n, scale):
    out = []
    for _ in range(n):
        _state[0] = (_state[0] * 1103515245 + 12345) % 2**31
        out.append(round((_state[0] / 2**31 * 2 - 1) * scale, 6))
    return out


def shape(dims):
    return 'shape { ' + ' '.join(f'dim {{ size: {d} }}' for d in dims) + ' }'


def placeholder(name, dims):
    return (f'node {{ name: "{name}" op: "Placeholder" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }}\n'
            f'  attr {{ key: "shape" value {{ {shape(dims)} }} }} }}\n')


def const(name, dims, values=None, scale=0.5, dtype='DT_FLOAT'):
    n = 1
    for d in dims:
        n *= d
    values = rnd(n, scale) if values is None else values
    field = 'float_val' if dtype == 'DT_FLOAT' else 'int_val'
    vals = ' '.join(f'{field}: {v}' for v in values)
    tshape = 'tensor_shape { ' + ' '.join(f'dim {{ size: {d} }}' for d in dims) + ' }'
    return (f'node {{ name: "{name}" op: "Const" attr {{ key: "dtype" value {{ type: {dtype} }} }}\n'
            f'  attr {{ key: "value" value {{ tensor {{ dtype: {dtype} {tshape} {vals} }} }} }} }}\n')


def op(name, kind, inputs, **attrs):
    s = f'node {{ name: "{name}" op: "{kind}"' + ''.join(f' input: "{i}"' for i in inputs)
    s += ' attr { key: "T" value { type: DT_FLOAT } }'
    for k, v in attrs.items():
        s += f' attr {{ key: "{k}" value {{ {v} }} }}'
    return s + ' }\n'


def ints(*v):
    return 'list { ' + ' '.join(f'i: {x}' for x in v) + ' }'


def pad(p):
    return f's: "{p}"'


def dense():
    g = placeholder('x', [3, 20])
    g += const('w1', [20, 16]) + const('b1', [16], scale=0.1)
    g += op('mm1', 'MatMul', ['x', 'w1']) + op('ba1', 'BiasAdd', ['mm1', 'b1']) + op('r1', 'Relu', ['ba1'])
    g += const('w2t', [9, 16]) + const('b2', [9], scale=0.1)
    g += op('mm2', 'MatMul', ['r1', 'w2t'], transpose_b='b: true') + op('a2', 'AddV2', ['mm2', 'b2'])
    g += op('r2', 'Relu6', ['a2'])
    g += op('sg', 'Sigmoid', ['r2']) + op('ng', 'Neg', ['sg']) + op('ab', 'Abs', ['ng'])
    g += op('sq', 'Square', ['ab']) + op('sr', 'Sqrt', ['sq'])
    g += const('w3', [9, 5]) + op('mm3', 'MatMul', ['sr', 'w3'])
    g += op('out', 'Softmax', ['mm3']) + op('aux', 'Tanh', ['mm3'])
    return g


def conv():
    g = placeholder('x', [2, 17, 19, 3])
    g += const('k1', [3, 3, 3, 8]) + const('cb1', [8], scale=0.1)
    g += op('c1', 'Conv2D', ['x', 'k1'], strides=ints(1, 1, 1, 1), padding=pad('SAME'))
    g += op('c1b', 'BiasAdd', ['c1', 'cb1']) + op('c1r', 'Relu', ['c1b'])
    g += const('k2', [3, 3, 8, 12], scale=0.3) + const('cb2', [12], scale=0.1)
    g += op('c2', 'Conv2D', ['c1r', 'k2'], strides=ints(1, 2, 2, 1), padding=pad('SAME'))
    g += op('c2b', 'BiasAdd', ['c2', 'cb2'])
    g += const('k3', [2, 2, 12, 6], scale=0.3)
    g += op('c3', 'Conv2D', ['c2b', 'k3'], strides=ints(1, 1, 1, 1), padding=pad('VALID'),
            dilations=ints(1, 2, 2, 1))
    g += const('dk1', [3, 3, 6, 1]) + const('db1', [6], scale=0.1)
    g += op('d1', 'DepthwiseConv2dNative', ['c3', 'dk1'], strides=ints(1, 1, 1, 1), padding=pad('SAME'))
    g += op('d1b', 'BiasAdd', ['d1', 'db1']) + op('d1r', 'Relu6', ['d1b'])
    g += const('dk2', [5, 5, 6, 2], scale=0.3)
    g += op('d2', 'DepthwiseConv2dNative', ['d1r', 'dk2'], strides=ints(1, 2, 2, 1), padding=pad('SAME'))
    g += const('dk3', [3, 3, 12, 1])
    g += op('d3', 'DepthwiseConv2dNative', ['d2', 'dk3'], strides=ints(1, 2, 2, 1), padding=pad('SAME'))
    g += const('k4', [1, 1, 12, 10], scale=0.3)
    g += op('p1', 'Conv2D', ['d2', 'k4'], strides=ints(1, 1, 1, 1), padding=pad('VALID'))
    g += op('mp', 'MaxPool', ['p1'], ksize=ints(1, 3, 3, 1), strides=ints(1, 2, 2, 1), padding=pad('SAME'))
    g += op('ap', 'AvgPool', ['mp'], ksize=ints(1, 2, 2, 1), strides=ints(1, 1, 1, 1), padding=pad('SAME'))
    g += const('axes', [2], values=[1, 2], dtype='DT_INT32')
    g += op('out', 'Mean', ['ap', 'axes']) + op('aux', 'Mean', ['d3', 'axes'])
    return g


def eltwise():
    g = placeholder('x', [2, 3, 4, 5])
    g += const('axes01', [2], values=[0, 1], dtype='DT_INT32') + op('y', 'Mean', ['x', 'axes01'])  # [4, 5]
    g += op('a', 'AddV2', ['x', 'y'])
    g += const('c5', [5]) + op('s', 'Sub', ['a', 'c5'])
    g += const('two', [], values=[2.5]) + op('m', 'Mul', ['s', 'two'])
    g += const('den', [1, 1, 1, 5], values=[1.5, 2.0, 0.75, 3.0, 1.25]) + op('d', 'RealDiv', ['m', 'den'])
    g += op('mx', 'Maximum', ['d', 'x'])
    g += const('c3', [3, 1, 1], scale=1.0) + op('mn', 'Minimum', ['mx', 'c3'])
    g += op('mul2', 'Mul', ['mn', 'x']) + op('out', 'Sub', ['mul2', 'y'])
    g += op('aux', 'Exp', ['mn'])
    return g


def bigfilter():
    # The filter (72 KiB) is larger than all activations: its HWIO -> OHWI rewrite
    # at Init takes scratch from the top of the XNNPACK region, not the activations.
    g = placeholder('x', [1, 3, 3, 32])
    g += const('k', [3, 3, 32, 64], scale=0.2) + const('b', [64], scale=0.1)
    g += op('c', 'Conv2D', ['x', 'k'], strides=ints(1, 1, 1, 1), padding=pad('SAME'))
    g += op('cb', 'BiasAdd', ['c', 'b']) + op('out', 'Relu', ['cb'])
    g += const('axes', [2], values=[1, 2], dtype='DT_INT32') + op('aux', 'Mean', ['out', 'axes'])
    return g


def windows():
    # One of each window path XNNPACK takes, each allocating differently: depthwise
    # 2x2 with a stride wider than the window, dilated 3x3, 1x3 (3-tap kernel), 1x1
    # (per-channel multiply-add), 1x1 with multiplier 2 (grouped GEMM); pooling over
    # more than 9 taps, padded and not, and with a stride wider than the window;
    # Conv2D with one input and one output channel (XNNPACK's depthwise path) and
    # Conv2D to a single output pixel (1-row IGEMM).
    g = placeholder('x', [1, 10, 13, 20])
    g += const('w1', [2, 2, 20, 1]) + op('a1', 'DepthwiseConv2dNative', ['x', 'w1'], strides=ints(1, 3, 3, 1), padding=pad('VALID'))
    g += const('w2', [3, 3, 20, 1], scale=0.3)
    g += op('a2', 'DepthwiseConv2dNative', ['x', 'w2'], strides=ints(1, 1, 1, 1), padding=pad('SAME'), dilations=ints(1, 2, 2, 1))
    g += const('w3', [1, 1, 20, 1]) + op('a3', 'DepthwiseConv2dNative', ['x', 'w3'], strides=ints(1, 1, 1, 1), padding=pad('VALID'))
    g += const('w4', [1, 3, 20, 1]) + op('a4', 'DepthwiseConv2dNative', ['x', 'w4'], strides=ints(1, 1, 1, 1), padding=pad('SAME'))
    g += const('w6', [1, 1, 20, 2]) + op('a6', 'DepthwiseConv2dNative', ['x', 'w6'], strides=ints(1, 1, 1, 1), padding=pad('VALID'))
    g += op('mp', 'MaxPool', ['x'], ksize=ints(1, 5, 5, 1), strides=ints(1, 2, 2, 1), padding=pad('SAME'))
    g += op('ap', 'AvgPool', ['x'], ksize=ints(1, 5, 5, 1), strides=ints(1, 2, 2, 1), padding=pad('SAME'))
    g += op('ap2', 'AvgPool', ['x'], ksize=ints(1, 4, 4, 1), strides=ints(1, 3, 3, 1), padding=pad('VALID'))
    g += op('mp2', 'MaxPool', ['x'], ksize=ints(1, 2, 2, 1), strides=ints(1, 3, 3, 1), padding=pad('VALID'))
    g += const('axes', [2], values=[1, 2], dtype='DT_INT32')
    g += op('s1', 'AddV2', ['a2', 'a3']) + op('s2', 'AddV2', ['s1', 'a4']) + op('m1', 'Mean', ['s2', 'axes'])
    g += op('s3', 'AddV2', ['mp', 'ap']) + op('m2', 'Mean', ['s3', 'axes'])
    g += op('s4', 'AddV2', ['a1', 'ap2']) + op('s5', 'AddV2', ['s4', 'mp2']) + op('m3', 'Mean', ['s5', 'axes'])
    g += op('t1', 'AddV2', ['m1', 'm2']) + op('out', 'AddV2', ['t1', 'm3'])
    g += const('k1', [3, 4, 20, 40], scale=0.2) + op('one', 'Conv2D', ['a1', 'k1'], strides=ints(1, 1, 1, 1), padding=pad('VALID'))
    g += const('k2', [1, 1, 20, 1], scale=0.3) + op('p1', 'Conv2D', ['x', 'k2'], strides=ints(1, 1, 1, 1), padding=pad('VALID'))
    g += const('k3', [5, 5, 1, 1], scale=0.3) + op('c5', 'Conv2D', ['p1', 'k3'], strides=ints(1, 1, 1, 1), padding=pad('SAME'))
    g += const('k4', [1, 3, 1, 1]) + op('c3', 'Conv2D', ['c5', 'k4'], strides=ints(1, 1, 1, 1), padding=pad('SAME'))
    g += op('m4', 'Mean', ['a6', 'axes']) + op('m5', 'Mean', ['c3', 'axes'])
    g += op('u1', 'AddV2', ['m4', 'one']) + op('aux', 'AddV2', ['u1', 'm5'])
    return g


if __name__ == '__main__':
    for name, fn in (('dense', dense), ('conv', conv), ('eltwise', eltwise), ('bigfilter', bigfilter),
                     ('windows', windows)):
        with open(os.path.join(HERE, f'{name}.pbtxt'), 'w') as f:
            f.write(f'# Generated by make_graphs.py: {name} graph for the XNNPACK differential tests.\n')
            f.write(fn())
