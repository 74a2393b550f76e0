# SPDX-License-Identifier: Apache-2.0
"""The differential runner's common steps: run a tool, convert and run with floe, compare, keep."""

import hashlib
import json
import os
import shutil
import subprocess

import numpy as np

import tolerance


class Tools(object):
    def __init__(self, bin_dir, peers, targets, timeout=60):
        self.convert = os.path.join(bin_dir, "floe-convert")
        self.run = os.path.join(bin_dir, "floe-run")
        self.peers = peers
        self.targets = targets
        self.timeout = timeout


class Outcome(object):
    """What happened to one model: 'ok', 'refused' (floe said no cleanly), 'oracle' (the oracle
    could not run it: not floe's business) or a finding: 'mismatch', 'crash', 'run' (floe-run
    failed where TF ran) or 'internal' (floe-convert's own consistency check failed)."""

    def __init__(self, kind, detail="", target=None, max_diff=None):
        self.kind = kind
        self.detail = detail
        self.target = target
        self.max_diff = max_diff  # mismatches: the largest |floe - TF| (integer outputs: in steps)

    @property
    def finding(self):
        return self.kind in ("mismatch", "crash", "run", "internal")


def call(cmd, timeout):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        return p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return "timeout", "timed out after %d s: %s" % (timeout, " ".join(cmd))


def first_line(text):
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[0][:300] if lines else ""


def run_floe(tools, model_path, outputs, inputs, target, work, extra=()):
    """Convert and run; returns (Outcome or None, {output: array})."""
    floe = os.path.join(work, "m_%s.floe" % target)
    # A .tflite names its outputs itself; a GraphDef is cut at the requested ones.
    chosen = [] if model_path.endswith(".tflite") else ["--outputs", ",".join(outputs)]
    rc, text = call([tools.convert, "-g", model_path] + chosen + ["--target", target, "-o", floe, "-q"] +
                    list(extra), tools.timeout)
    if rc == 2 and "internal error" not in text:
        return Outcome("refused", first_line(text), target), {}
    if rc == 2:
        return Outcome("internal", first_line(text), target), {}
    if rc != 0:
        return Outcome("crash", "floe-convert exit %s: %s" % (rc, first_line(text)), target), {}
    out_dir = os.path.join(work, "out_" + target)
    os.makedirs(out_dir, exist_ok=True)
    cmd = [tools.run, floe, "-o", out_dir]
    for name, path in inputs.items():
        cmd += ["-i", "%s=%s" % (name, path)]
    rc, text = call(cmd, tools.timeout)
    if rc != 0:
        kind = "crash" if (rc == "timeout" or rc < 0 or rc >= 128) else "run"
        return Outcome(kind, "floe-run exit %s: %s" % (rc, first_line(text)), target), {}
    got = {}
    for o in outputs:
        path = os.path.join(out_dir, o.replace(":", "_").replace("/", "_") + ".npy")
        if not os.path.exists(path):
            return Outcome("run", "floe-run wrote no %s" % path, target), {}
        got[o] = np.load(path)
    return None, got


def compare_all(expected, got, rule, target):
    for name, e in expected.items():
        ok, why = tolerance.agree(got[name], e, rule)
        if not ok:
            diff = None
            if np.shape(got[name]) == np.shape(e):
                diff = float(np.max(np.abs(np.asarray(got[name], np.float64) - np.asarray(e, np.float64))))
            return Outcome("mismatch", "%s: %s" % (name, why), target, diff)
    return None


def check(tools, case, work):
    """Run one case (a generator's model, or a stored regression): oracle, then floe per target."""
    expected = case.expected if case.expected is not None else case.oracle(tools, work)
    if isinstance(expected, Outcome):
        return expected, None
    case.expected_cache = expected
    refused = None
    first = None  # (target, outputs) of the first target that ran
    for target in tools.targets:
        bad, got = run_floe(tools, case.model_path, case.outputs, case.input_paths, target, work, case.convert_args)
        if bad is not None and bad.kind == "refused":
            refused = bad
            continue
        if bad is None and case.rule == "exact" and first is not None:
            # Integer outputs are the same bytes on every target (floe's promise, TFLM's arithmetic).
            for name in case.outputs:
                ok, why = tolerance.agree(got[name], first[1][name], "exact")
                if not ok:
                    bad = Outcome("mismatch", "%s differs from --target %s: %s" % (name, first[0], why), target)
                    break
        if bad is None:
            bad = compare_all(expected, got, case.rule, target)
        if bad is not None:
            return bad, expected
        if first is None:
            first = (target, got)
    return (refused or Outcome("ok")), expected


def save_regression(case, outcome, expected, regress_dir, generator, seed):
    digest = hashlib.sha1(open(case.model_path, "rb").read()).hexdigest()[:10]
    d = os.path.join(regress_dir, "%s-%s" % (generator, digest))
    os.makedirs(d, exist_ok=True)
    model_name = os.path.basename(case.model_path)
    shutil.copyfile(case.model_path, os.path.join(d, model_name))
    for name, path in case.input_paths.items():
        shutil.copyfile(path, os.path.join(d, "input_%s.npy" % tolerance.file_safe(name)))
    for i, name in enumerate(case.outputs):
        np.save(os.path.join(d, "expected_%d.npy" % i), expected[name])
    meta = {"generator": generator, "seed": seed, "model": model_name, "outputs": case.outputs,
            "inputs": list(case.input_paths), "rule": case.rule, "convert_args": list(case.convert_args),
            "ops": case.ops, "found": "%s on %s: %s" % (outcome.kind, outcome.target, outcome.detail)}
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    return d


def oracle_error(text):
    """The oracle's own error line (tfjs_oracle prints a stack after it)."""
    for line in text.splitlines():
        if "error" in line.lower():
            return line.strip()[:300]
    return first_line(text)


def snapshot_tools(tools, directory):
    """Copies of floe-convert and floe-run, so that a rebuild during a long campaign
    neither breaks it nor mixes two builds in one run."""
    for attr in ("convert", "run"):
        path = getattr(tools, attr)
        copy = os.path.join(directory, os.path.basename(path))
        shutil.copy2(path, copy)
        setattr(tools, attr, copy)


def run_oracle(tools, command, outputs, work, label, repair=None):
    """Runs an oracle command, adding `-o SPEC` for each (name, SPEC) of `outputs` (SPEC holds
    {path}, where the oracle writes that output); returns {name: array}, or an
    Outcome('oracle') when the oracle could not run the model. repair(name, array, text)
    may correct an array from what the oracle printed."""
    cmd = list(command)
    paths = {}
    for i, (name, spec) in enumerate(outputs):
        paths[name] = os.path.join(work, "oracle_%d.npy" % i)
        cmd += ["-o", spec.format(path=paths[name])]
    rc, text = call(cmd, tools.timeout)
    if rc != 0:
        return Outcome("oracle", "%s: %s" % (label, oracle_error(text)))
    arrays = {name: np.load(path) for name, path in paths.items()}
    if repair is not None:
        arrays = {name: repair(name, array, text) for name, array in arrays.items()}
    return arrays
