# SPDX-License-Identifier: Apache-2.0
""".tflite cases for the differential runner: generate, ask TensorFlow Lite 2.9, minimise."""

import copy
import os

import numpy as np

import gen_tflite
import harness
import tolerance


class TfliteCase(object):
    convert_args = ()

    def __init__(self, model, work):
        self.model = model
        self.rule = "exact" if model.quantized else "float"
        self.outputs = list(model.outputs)
        self.ops = list(model.ops)
        self.model_path = os.path.join(work, "model.tflite")
        with open(self.model_path, "wb") as f:
            f.write(model.data)
        self.input_paths = {}
        for name, value in model.inputs.items():
            path = os.path.join(work, "input_%s.npy" % tolerance.file_safe(name))
            np.save(path, value)
            self.input_paths[name] = path
        self.expected = None

    def oracle(self, tools, work):
        """TFLite 2.9's outputs (builtin kernels), or an Outcome('oracle') when it refuses the model."""
        cmd = ["node", os.path.join(tools.peers, "tflite_run.js"), self.model_path]
        for i, name in enumerate(self.model.input_names):
            cmd += ["-i", "%d=%s" % (i, self.input_paths[name])]
        return harness.run_oracle(tools, cmd, [(o, "%d={path}" % i) for i, o in enumerate(self.outputs)], work,
                                  "TFLite")


def generate_case(seed, work, max_ops):
    return TfliteCase(gen_tflite.generate(seed, max_ops), work)


def minimise(tools, case, outcome, work, check):
    """The model cut after the first op whose output differs (or fails), else as it is."""
    one_target = copy.copy(tools)
    one_target.targets = [outcome.target]
    for k in range(len(case.model.ops)):
        cut_dir = os.path.join(work, "cut_%d" % k)
        os.makedirs(cut_dir)
        cut = TfliteCase(gen_tflite.cut(case.model, k), cut_dir)
        result, _ = check(one_target, cut, cut_dir)
        if result.finding:
            cut.first_differing_op = cut.model.ops[-1]
            cut.outcome = result
            return cut
    case.outcome = outcome
    return case


# Where TensorFlow Lite 2.9's builtin int8 kernels and TFLM's reference kernels
# (which floe reproduces bit for bit) compute differently. A mismatch counts as
# one of these only when the first op whose output differs is named here, its
# inputs are the same bytes on both sides, and it is at most one step apart.
TFLITE_INT8_DIFFERENCES = {
    "FULLY_CONNECTED": "int8 FULLY_CONNECTED/CONV_2D: TFLite 2.9's optimized GEMM (ruy) rounds a requantization "
                       "tie once; TFLM's reference rounds twice (SaturatingRoundingDoublingHighMul, then "
                       "RoundingDivideByPOT), as floe does",
    "MEAN": "int8/int16 MEAN onto another grid: TFLite 2.9 requantizes in float (QuantizedMeanOrSum); TFLM and "
            "floe with an integer multiplier",
    "LOGISTIC": "int8 LOGISTIC/TANH: TFLite 2.9 reads a lookup table built in float; TFLM and floe compute in "
                "fixed point",
    "RELU": "int8 RELU onto another grid: TFLite 2.9 divides the float scales in float before widening, TFLM "
            "(since 2022) and floe in double; the multipliers differ in the last bits, the outputs on ties",
    "SOFTMAX": "int8 SOFTMAX: TFLite 2.9 reads an exp lookup table built in float; TFLM and floe compute in fixed "
               "point",
}
TFLITE_INT8_DIFFERENCES["CONV_2D"] = TFLITE_INT8_DIFFERENCES["FULLY_CONNECTED"]
TFLITE_INT8_DIFFERENCES["TANH"] = TFLITE_INT8_DIFFERENCES["LOGISTIC"]


# Named differences that hold for int16x8 too (the others are int8 kernels' own).
INT16_TOO = {"MEAN"}


def named_difference(small, outcome):
    """The named TFLite 2.9 difference that explains a minimised quantized mismatch, or None."""
    op = getattr(small, "first_differing_op", None)
    found = getattr(small, "outcome", outcome)
    kind = small.model.kind
    if op is None or found.kind != "mismatch" or found.max_diff is None:
        return None
    if kind != "int8" and not (kind == "int16" and op in INT16_TOO):
        return None
    if "differs from --target" in found.detail or found.max_diff > 1:
        return None
    return TFLITE_INT8_DIFFERENCES.get(op)
