#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes model/add_chain.pbtxt: a TF1 GraphDef of 64 chained one-element float
Adds (x + c0 + c1 + ... + c63, each constant different so nothing folds or
merges), and model/input.npy. The firmware bench runs it to measure what the
interpreter costs per op (an ADD of one element is almost all overhead).
Standard library only."""
import os
import struct

COUNT = 64
HERE = os.path.dirname(os.path.abspath(__file__))


def const(name, value):
    return ('node {\n  name: "%s"\n  op: "Const"\n'
            '  attr { key: "dtype" value { type: DT_FLOAT } }\n'
            '  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } } '
            'float_val: %r } } }\n}\n' % (name, value))


def add(name, a, b):
    return ('node {\n  name: "%s"\n  op: "Add"\n  input: "%s"\n  input: "%s"\n'
            '  attr { key: "T" value { type: DT_FLOAT } }\n}\n' % (name, a, b))


def main():
    nodes = ['node {\n  name: "x"\n  op: "Placeholder"\n'
             '  attr { key: "dtype" value { type: DT_FLOAT } }\n'
             '  attr { key: "shape" value { shape { dim { size: 1 } } } }\n}\n']
    previous = "x"
    for i in range(COUNT):
        nodes.append(const("c%d" % i, 0.25 + i / 128.0))
        name = "add%d" % i if i + 1 < COUNT else "y"
        nodes.append(add(name, previous, "c%d" % i))
        previous = name
    with open(os.path.join(HERE, "model", "add_chain.pbtxt"), "w") as f:
        f.write("".join(nodes) + "versions { producer: 27 }\n")
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }"
    header += " " * (63 - len(header) % 64) + "\n"
    with open(os.path.join(HERE, "model", "input.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack("<f", 1.5))


if __name__ == "__main__":
    main()
