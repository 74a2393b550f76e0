# SPDX-License-Identifier: Apache-2.0
"""GraphDef cases for the differential runner: generate, ask TF.js, minimise."""

import copy
import os
import re

import numpy as np

import gen_graphdef
from gen_graphdef import tw
import harness
import tolerance


class GraphdefCase(object):
    rule = "float"
    convert_args = ()

    def __init__(self, graph, inputs, outputs, ops, work):
        self.graph = graph
        self.outputs = list(outputs)
        self.ops = list(ops)
        self.model_path = os.path.join(work, "model.pb")
        with open(self.model_path, "wb") as f:
            f.write(graph.graph_def().serialize())
        needed = gen_graphdef.needed_nodes(graph, self.outputs)
        self.input_values = {k: v for k, v in inputs.items() if k in needed}
        self.input_paths = {}
        for name, value in self.input_values.items():
            path = os.path.join(work, "input_%s.npy" % tolerance.file_safe(name))
            np.save(path, value)
            self.input_paths[name] = path
        self.expected = None

    def oracle(self, tools, work, outputs=None):
        """TF.js's values of `outputs` (default: the case's), or an Outcome('oracle') it could not."""
        outputs = outputs or self.outputs
        cmd = ["node", os.path.join(tools.peers, "tfjs_oracle.js"), self.model_path]
        for name, path in self.input_paths.items():
            cmd += ["-i", "%s=%s" % (name, path)]
        return harness.run_oracle(tools, cmd, [(o, o + ":0={path}") for o in outputs], work, "TF.js",
                                  repair=int32_bits_written_as_float)


def int32_bits_written_as_float(name, array, text):
    """TF.js may hand back the Int32Array of a float32 tensor that a Cast from int32 made
    (or a Reshape of one shares), and tfjs_oracle then writes its bytes as float32:
    values 3 and 46 come out as 4e-45 and 6.4e-44. Its summary line ("name:0: float32 [...]
    min 3 max 46 ...") holds the true range; when the file disagrees with it and the same
    bytes read as int32 agree, those are the values."""
    match = re.search(r"^%s:0: float32 \[.*\] min (\S+) max (\S+)" % re.escape(name), text, re.M)
    if match is None or array.dtype != np.float32 or array.size == 0:
        return array
    lo, hi = float(match.group(1)), float(match.group(2))
    if np.isclose(float(array.min()), lo, rtol=1e-5, atol=0) and np.isclose(float(array.max()), hi, rtol=1e-5, atol=0):
        return array
    as_int = array.view(np.int32).astype(np.float32)
    if np.isclose(float(as_int.min()), lo, rtol=1e-5, atol=1e-6) and np.isclose(float(as_int.max()), hi, rtol=1e-5, atol=1e-6):
        return as_int
    return array


def generate_case(seed, work, max_ops):
    m = gen_graphdef.generate(seed, max_ops)
    return GraphdefCase(m.graph, m.inputs, m.outputs, m.ops, work)


def _subgraph(graph, keep):
    g = tw.Graph()
    for n in graph.nodes:
        if n.name in keep:
            g.add(n.name, n.op, n.inputs, n.attrs, out_shapes=n.out_shapes)
    return g


def minimise(tools, case, outcome, work, check):
    """The first op whose output differs, alone with its inputs fed from TF.js's values;
    else the graph cut at that op; else the case as it is."""
    os.makedirs(work, exist_ok=True)
    one_target = copy.copy(tools)
    one_target.targets = [outcome.target]
    graph = case.graph
    needed = gen_graphdef.needed_nodes(graph, case.outputs)
    order = [n for n in graph.nodes if n.name in needed and n.op not in ("Const", "Placeholder")]
    values = case.oracle(tools, work, [n.name for n in order])
    if not isinstance(values, dict):
        return case
    first = None
    for n in order:
        cut_dir = os.path.join(work, "cut_" + n.name)
        os.makedirs(cut_dir)
        cut = GraphdefCase(_subgraph(graph, gen_graphdef.needed_nodes(graph, [n.name])), case.input_values,
                           [n.name], [m.op for m in order if m.name in gen_graphdef.needed_nodes(graph, [n.name])],
                           cut_dir)
        cut.expected = {n.name: values[n.name]}
        result, _ = check(one_target, cut, cut_dir)
        if result.finding:
            first = cut
            break
    if first is None:
        return case
    node = graph[first.outputs[0]]
    alone = tw.Graph()
    feeds = {}
    for ref in node.inputs:
        producer = graph[ref.lstrip("^").split(":")[0]]
        if producer.name in alone.by_name:
            continue
        if producer.op == "Const" or producer.op == "Placeholder":
            alone.add(producer.name, producer.op, producer.inputs, producer.attrs, out_shapes=producer.out_shapes)
            if producer.op == "Placeholder":
                feeds[producer.name] = case.input_values[producer.name]
        elif values[producer.name].dtype.kind == "f":
            tw.placeholder(alone, producer.name, tw.DT_FLOAT, producer.out_shapes[0])
            feeds[producer.name] = values[producer.name]
        else:
            return first  # a non-float input (a comparison's bool): keep the cut graph
    alone.add(node.name, node.op, node.inputs, node.attrs, out_shapes=node.out_shapes)
    alone_dir = os.path.join(work, "alone")
    os.makedirs(alone_dir)
    single = GraphdefCase(alone, feeds, [node.name], [node.op], alone_dir)
    result, expected = check(one_target, single, alone_dir)
    if result.finding:
        single.expected_cache = expected
        return single
    return first


def named_difference(small, outcome):
    """TF.js and TF agree on every op the generator uses: no difference is named."""
    return None
