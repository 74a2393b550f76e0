#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Writes the TensorFlow Lite 2.9 expectations tests/e2e/tflite_e2e_test.cc
# compares floe with: for each float .tflite of ../shared/corpus/int8 and seed,
# the input comes from the LCG below (the C++ test regenerates it bit for bit),
# runs through ../shared/tools/peers/tflite_run.js (the TFLite 2.9 C library,
# builtin kernels) and output 0 is saved as <case>_seed<k>__<output>.npy.
# Usage (see README.md): make_tflite_fixtures.py --peers DIR --corpus DIR --out DIR
#   --check: regenerate into a temporary directory and compare with --out
#            (exit 1 on a difference, 77 = skipped without node, numpy or the
#            peers' node_modules).
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:  # the --check ctest skips without numpy
    np = None

SKIP = 77

# (case, model in corpus/int8, input shape, scale, output name, seeds).
# scale 0: inputs in [0, 1); scale s > 0: in s * [-1, 1) (s a power of two).
CASES = [
    ("kws_float", "mlperf_tiny/kws/kws_ref_model_float32.tflite", (1, 49, 10, 1), 8, "Identity", [1, 2, 3]),
    ("ic_float", "mlperf_tiny/ic/pretrainedResnet.tflite", (1, 32, 32, 3), 0, "Identity", [1, 2, 3]),
    ("vww_float", "mlperf_tiny/vww/vww_96_float.tflite", (1, 96, 96, 3), 0, "Identity", [1, 2]),
]

# int8 models (int8 in, int8 out): inputs from lcg_int8, outputs saved as int8.
# person_detect is absent: TFLite 2.9 refuses it as shipped (corpus/int8/README.md).
INT8_SEEDS = list(range(1, 21))
INT8_CASES = [
    ("kws_int8", "mlperf_tiny/kws/kws_ref_model.tflite", (1, 49, 10, 1), "Identity", INT8_SEEDS),
    ("ic_int8", "mlperf_tiny/ic/pretrainedResnet_quant.tflite", (1, 32, 32, 3), "Identity_int8", INT8_SEEDS),
    ("vww_int8", "mlperf_tiny/vww/vww_96_int8.tflite", (1, 96, 96, 3), "Identity_int8", INT8_SEEDS),
    ("ad_int8", "mlperf_tiny/ad/ad01_int8.tflite", (1, 640), "Identity", INT8_SEEDS),
]


def lcg_input(shape, seed, scale):
    """x <- 1664525 x + 1013904223 (mod 2^32), starting at seed; each element is
    u = (x >> 8) / 2^24 in [0, 1), mapped to u (scale 0) or scale * (2u - 1):
    exact in float32 for a power-of-two scale."""
    n = int(np.prod(shape))
    out = np.empty(n, dtype=np.float32)
    x = seed & 0xFFFFFFFF
    for i in range(n):
        x = (1664525 * x + 1013904223) & 0xFFFFFFFF
        u = np.float32(x >> 8) * np.float32(1.0 / 16777216.0)
        out[i] = u if scale == 0 else np.float32(scale) * (np.float32(2.0) * u - np.float32(1.0))
    return out.reshape(shape)


def lcg_int8(shape, seed):
    """The same LCG; each element is the top byte of x, minus 128."""
    n = int(np.prod(shape))
    out = np.empty(n, dtype=np.int8)
    x = seed & 0xFFFFFFFF
    for i in range(n):
        x = (1664525 * x + 1013904223) & 0xFFFFFFFF
        out[i] = (x >> 24) - 128
    return out.reshape(shape)


def generate(peers, corpus, out):
    with tempfile.TemporaryDirectory() as tmp:
        for case, model, shape, scale, output, seeds in CASES:
            for seed in seeds:
                xin = os.path.join(tmp, f"{case}_{seed}_in.npy")
                np.save(xin, lcg_input(shape, seed, scale))
                f = os.path.join(out, f"{case}_seed{seed}__{output}.npy")
                cmd = ["node", os.path.join(peers, "tflite_run.js"), os.path.join(corpus, "int8", model),
                       "-i", f"0={xin}", "-o", f"0={f}"]
                print(" ".join(cmd), flush=True)
                subprocess.run(cmd, check=True)
        for case, model, shape, output, seeds in INT8_CASES:
            for seed in seeds:
                xin = os.path.join(tmp, f"{case}_{seed}_in.npy")
                np.save(xin, lcg_int8(shape, seed))
                raw = os.path.join(tmp, f"{case}_{seed}_out.npy")
                cmd = ["node", os.path.join(peers, "tflite_run.js"), os.path.join(corpus, "int8", model),
                       "-i", f"0={xin}", "-o", f"0={raw}"]
                print(" ".join(cmd), flush=True)
                subprocess.run(cmd, check=True)
                # tflite_run.js writes float32 holding the int8 values.
                np.save(os.path.join(out, f"{case}_seed{seed}__{output}.npy"), np.load(raw).astype(np.int8))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peers", required=True, help="a copy of tools/peers with node_modules (npm ci)")
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    missing = [what for what, ok in [("numpy", np is not None), ("node", shutil.which("node") is not None),
                                     ("node_modules", os.path.isdir(os.path.join(args.peers, "node_modules"))),
                                     ("corpus", os.path.isdir(args.corpus))] if not ok]
    if missing:
        print("SKIPPED: the TFLite oracle needs " + ", ".join(missing) + " (see tests/e2e/tflite_oracle/README.md)")
        return SKIP
    if not args.check:
        generate(args.peers, args.corpus, args.out)
        return 0
    with tempfile.TemporaryDirectory() as fresh:
        generate(args.peers, args.corpus, fresh)
        worst, bad = 0.0, []
        for name in sorted(os.listdir(fresh)):
            committed = os.path.join(args.out, name)
            if not os.path.exists(committed):
                bad.append(name + " is not committed")
                continue
            a, b = np.load(os.path.join(fresh, name)), np.load(committed)
            d = float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max()) if a.shape == b.shape else 1.0
            worst = max(worst, d)
            if d > 1e-6:
                bad.append(f"{name}: max abs difference {d}")
        print(f"tflite fixtures re-run: worst difference {worst}")
        for b in bad:
            print("MISMATCH " + b)
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
