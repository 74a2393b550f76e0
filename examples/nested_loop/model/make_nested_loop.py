#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Writes nested_loop.pbtxt from ../../while_loop/model/while_loop.pbtxt: that
# loop (trip count from the input, maximum_iterations=64) becomes the inner loop
# of an outer loop of 3 iterations, as TF1 names a tf.while_loop inside another:
#   h = x; for i in range(3): h = inner(h) * 0.5   (inner: while sum(h) < 100: h = h * 1.5 + 0.25)
import os
import re

here = os.path.dirname(os.path.abspath(__file__))
inner = open(os.path.join(here, "../../while_loop/model/while_loop.pbtxt")).read()
nodes = re.findall(r"node \{\n.*?\n\}\n", inner, re.S)
versions = inner[inner.rfind("versions"):]
out = []
for n in nodes:
    name = re.search(r'name: "([^"]+)"', n).group(1)
    if name in ("x", "y"):
        continue
    n = n.replace('"while/', '"outer/while/').replace('s: "while/while_context"', 's: "outer/while/while_context"')
    n = n.replace('input: "x"\n', 'input: "outer/Identity_1"\n')
    out.append(n)


def node(name, op, inputs=(), attrs=()):
    s = 'node {\n  name: "%s"\n  op: "%s"\n' % (name, op)
    s += "".join('  input: "%s"\n' % i for i in inputs)
    s += "".join("  %s\n" % a for a in attrs)
    return s + "}\n"


def t(key, dtype):
    return 'attr { key: "%s" value { type: %s } }' % (key, dtype)


def enter(name, inp, constant, dtype):
    return node(name, "Enter", [inp], [t("T", dtype), 'attr { key: "frame_name" value { s: "outer/while_context" } }',
                                       'attr { key: "is_constant" value { b: %s } }' % ("true" if constant else "false"),
                                       'attr { key: "parallel_iterations" value { i: 10 } }'])


def const(name, dtype, value):
    field = "float_val" if dtype == "DT_FLOAT" else "int_val"
    return node(name, "Const", [], [t("dtype", dtype), 'attr { key: "value" value { tensor { dtype: %s tensor_shape { } %s: %s } } }'
                                    % (dtype, field, value)])


head = [node("x", "Placeholder", [], [t("dtype", "DT_FLOAT"), 'attr { key: "shape" value { shape { dim { size: 4 } } } }']),
        const("outer/n", "DT_INT32", 3), const("outer/zero", "DT_INT32", 0), const("outer/one", "DT_INT32", 1),
        const("outer/half", "DT_FLOAT", 0.5),
        enter("outer/Enter", "outer/zero", False, "DT_INT32"), enter("outer/Enter_1", "x", False, "DT_FLOAT"),
        enter("outer/n_enter", "outer/n", True, "DT_INT32"), enter("outer/one_enter", "outer/one", True, "DT_INT32"),
        enter("outer/half_enter", "outer/half", True, "DT_FLOAT"),
        node("outer/Merge", "Merge", ["outer/Enter", "outer/NextIteration"], [t("T", "DT_INT32"), 'attr { key: "N" value { i: 2 } }']),
        node("outer/Merge_1", "Merge", ["outer/Enter_1", "outer/NextIteration_1"], [t("T", "DT_FLOAT"), 'attr { key: "N" value { i: 2 } }']),
        node("outer/Less", "Less", ["outer/Merge", "outer/n_enter"], [t("T", "DT_INT32")]),
        node("outer/LoopCond", "LoopCond", ["outer/Less"]),
        node("outer/Switch", "Switch", ["outer/Merge", "outer/LoopCond"], [t("T", "DT_INT32")]),
        node("outer/Switch_1", "Switch", ["outer/Merge_1", "outer/LoopCond"], [t("T", "DT_FLOAT")]),
        node("outer/Identity", "Identity", ["outer/Switch:1"], [t("T", "DT_INT32")]),
        node("outer/Identity_1", "Identity", ["outer/Switch_1:1"], [t("T", "DT_FLOAT")]),
        node("outer/add", "Add", ["outer/Identity", "outer/one_enter"], [t("T", "DT_INT32")])]
tail = [node("outer/mul", "Mul", ["outer/while/Exit_1", "outer/half_enter"], [t("T", "DT_FLOAT")]),
        node("outer/NextIteration", "NextIteration", ["outer/add"], [t("T", "DT_INT32")]),
        node("outer/NextIteration_1", "NextIteration", ["outer/mul"], [t("T", "DT_FLOAT")]),
        node("outer/Exit_1", "Exit", ["outer/Switch_1"], [t("T", "DT_FLOAT")]),
        node("y", "Identity", ["outer/Exit_1"], [t("T", "DT_FLOAT")])]
with open(os.path.join(here, "nested_loop.pbtxt"), "w") as f:
    f.write("# Written by make_nested_loop.py: while_loop.pbtxt's loop nested in a 3-iteration outer loop.\n")
    f.write("".join(head + out + tail) + versions)
