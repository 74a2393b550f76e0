#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Every TF op name in TF.js's converter op list (and the TF graph optimizer's
# fused ops) against `floe-convert --list-ops --all`: each must be lowered,
# handled by a pass, or refused with a reason; none may be missing. Writes or
# checks the generated table converter/ops/tfjs_op_coverage.md.
#
#   tfjs_op_coverage.py --floe-convert BIN --peers DIR --table FILE          check (the ctest)
#   tfjs_op_coverage.py --floe-convert BIN --peers DIR --table FILE --write  regenerate the table
#
# Exit 0 = the table is true and nothing is missing, 1 = a difference or a
# missing op, 77 = skipped (no node, or no node_modules in the peers directory:
# run `ONNXRUNTIME_NODE_INSTALL=skip npm ci` there, or .ci/install-deps.sh --all).
import argparse
import difflib
import fnmatch
import json
import os
import shutil
import subprocess
import sys

SKIP = 77

# What TF's graph optimizer writes into graphs it rewrites (grappler's remapper,
# and oneDNN's layout pass on Intel builds): a frozen dump of an optimized graph
# can hold them, so floe must say what it does with each.
GRAPH_OPTIMIZER_FUSED_OPS = [
    "_FusedConv2D", "_FusedMatMul", "_FusedDepthwiseConv2dNative", "FusedDepthwiseConv2dNative",
    "_FusedBatchNormEx", "_FusedConv3D", "_MklFusedConv2D", "_MklFusedMatMul",
    "_MklFusedDepthwiseConv2dNative", "_MklNativeFusedConv2D", "_MklNativeFusedMatMul",
]

NODE_LIST_OPS = r"""
const fs = require('fs'), path = require('path');
const root = path.join(process.argv[1], 'node_modules', '@tensorflow', 'tfjs-converter');
const dir = path.join(root, 'dist', 'operations', 'op_list');
const names = new Set();
for (const f of fs.readdirSync(dir).filter(f => f.endsWith('.js')).sort()) {
  const m = require(path.join(dir, f));
  for (const e of (m.json || [])) if (e.tfOpName) names.add(e.tfOpName);
}
const version = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version;
console.log(JSON.stringify({version, names: [...names].sort()}));
"""


def tfjs_op_list(peers):
    node = shutil.which("node")
    converter = os.path.join(peers, "node_modules", "@tensorflow", "tfjs-converter")
    if node is None:
        return None, "node is not installed (apt-get install nodejs npm, or .ci/install-deps.sh --all)"
    if not os.path.isdir(converter):
        return None, (converter + " is absent: run `ONNXRUNTIME_NODE_INSTALL=skip npm ci` in " + peers +
                      " (or .ci/install-deps.sh --all)")
    out = subprocess.run([node, "-e", NODE_LIST_OPS, os.path.abspath(peers)], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out), ""


def floe_treatments(floe_convert):
    """(exact name -> (kind, detail), [(pattern, kind, detail)] in the order floe tries them)."""
    text = subprocess.run([floe_convert, "--list-ops", "--all"], check=True, capture_output=True, text=True).stdout
    exact, patterns = {}, []
    for line in text.splitlines():
        if not line.startswith("  "):
            continue
        name, how = line.strip().split(None, 1)
        kind, _, detail = how.partition(": ")
        if "*" in name:
            patterns.append((name, kind, detail))
        else:
            exact[name] = (kind, detail)
    return exact, patterns


def treatment(name, exact, patterns):
    """(kind, detail, what matched) or None when floe does not know the name."""
    if name in exact:
        return exact[name] + (name,)
    for pattern, kind, detail in patterns:
        if fnmatch.fnmatchcase(name, pattern):
            return kind, detail, pattern
    return None


def render(version, names, exact, patterns):
    reasons = {}  # detail -> footnote key, in order of first use

    def cell(name):
        t = treatment(name, exact, patterns)
        if t is None:
            kind = "MISSING"
            return kind, "", ""
        kind, detail, matched = t
        note = ""
        if detail:
            prefix = {"lowered": "L", "handled": "H", "refused": "R"}.get(kind, "?")
            if detail not in reasons:
                reasons[detail] = prefix + str(1 + sum(k.startswith(prefix) for k in reasons.values()))
            note = reasons[detail]
        return kind, note, "" if matched == name else "`" + matched + "`"

    rows = [(n,) + cell(n) for n in names]
    fused = [(n,) + cell(n) for n in GRAPH_OPTIMIZER_FUSED_OPS]
    count = lambda kind: sum(r[1] == kind for r in rows)
    missing = [r[0] for r in rows + fused if r[1] == "MISSING"]
    out = ["# TF.js op list × floe", "",
           "<!-- Generated: tests/converter/ops/tfjs_op_coverage.py --write (see below). Do not edit by hand. -->", "",
           "Every TF op name in TensorFlow.js's converter op list (`@tensorflow/tfjs-converter` " + version + ", "
           + str(len(names)) + " names: the ops TF.js runs from a TF graph) and the fused ops TF's graph "
           "optimizer writes, with what floe does with each, as `floe-convert --list-ops --all` states it from "
           "the code that does it (the op registry, the passes' op sets, the inference check's refusal rules). "
           "The ctest `converter_tfjs_op_coverage` fails when this file is not what they say now; regenerate it "
           "with", "",
           "```sh", "python3 tests/converter/ops/tfjs_op_coverage.py --floe-convert build/host/bin/floe-convert \\",
           "    --peers ../shared/tools/peers --table converter/ops/tfjs_op_coverage.md --write", "```", "",
           "| treatment | TF.js ops |", "|---|---:|",
           "| lowered (to floe ops, or folded at conversion time) | " + str(count("lowered")) + " |",
           "| handled by a pass (control flow, TensorArrays, training structure) | " + str(count("handled")) + " |",
           "| refused with a reason | " + str(count("refused")) + " |",
           "| missing | " + str(len(missing)) + " |", "",
           "A name floe knows by a family pattern (`String*`, `Sparse*`, ...) shows the pattern.", "",
           "| TF.js op | floe | note | matched by |", "|---|---|---|---|"]
    out += ["| `%s` | %s | %s | %s |" % r for r in rows]
    out += ["", "## TF graph optimizer's fused ops", "",
            "| op | floe | note | matched by |", "|---|---|---|---|"]
    out += ["| `%s` | %s | %s | %s |" % r for r in fused]
    out += ["", "## Notes", ""]
    out += ["- **%s**: %s" % (key, detail) for detail, key in reasons.items()]
    return "\n".join(out) + "\n", missing


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--floe-convert", required=True)
    ap.add_argument("--peers", required=True, help="tools/peers with node_modules (npm ci)")
    ap.add_argument("--table", required=True, help="the committed table (converter/ops/tfjs_op_coverage.md)")
    ap.add_argument("--write", action="store_true", help="rewrite the table instead of checking it")
    args = ap.parse_args()
    listed, why = tfjs_op_list(args.peers)
    if listed is None:
        print("SKIPPED: TF.js op coverage not checked: " + why)
        return SKIP
    exact, patterns = floe_treatments(args.floe_convert)
    text, missing = render(listed["version"], listed["names"], exact, patterns)
    print("TF.js %s: %d op names; floe knows %d exact names and %d patterns; %d missing"
          % (listed["version"], len(listed["names"]), len(exact), len(patterns), len(missing)))
    status = 0
    if missing:
        print("MISSING (neither lowered, handled nor refused with a reason): " + " ".join(missing))
        status = 1
    if args.write:
        with open(args.table, "w") as f:
            f.write(text)
        print("wrote " + args.table)
        return status
    committed = open(args.table).read() if os.path.exists(args.table) else ""
    if committed != text:
        sys.stdout.writelines(difflib.unified_diff(committed.splitlines(True), text.splitlines(True),
                                                   args.table + " (committed)", "now"))
        print("%s is out of date; regenerate it with:\n  python3 tests/converter/ops/tfjs_op_coverage.py "
              "--floe-convert build/host/bin/floe-convert --peers ../shared/tools/peers --table %s --write"
              % (args.table, args.table))
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
