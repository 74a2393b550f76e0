#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# The measuring half of compare.sh: runs floe-bench, tflite_bench (TF Lite 2.9 C
# library + its XNNPACK delegate) and ort_run.js (onnxruntime-node, MLAS) on
# the same inputs, checks every output against floe's (|diff| <= 1e-4), then
# times each (model, threads) in R interleaved rounds of N runs and reports the
# median of the per-round medians (robust to other load on the machine).
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

MODELS = [  # name, floe model, tflite model, onnx model, NHWC input, NCHW input (ORT)
    ('mlp b1', 'mlp_b1.floe', 'mlp_b1.tflite', 'mlp.onnx', 'mlp_x_b1.npy', 'mlp_x_b1.npy'),
    ('mlp b64', 'mlp_b64.floe', 'mlp_b64.tflite', 'mlp.onnx', 'mlp_x_b64.npy', 'mlp_x_b64.npy'),
    ('cnn', 'cnn.floe', 'cnn.tflite', 'cnn.onnx', 'cnn_x_nhwc.npy', 'cnn_x_nchw.npy'),
]
# int8 (floe: XNNPACK QC8/QS8 + its own int8 kernels; TF Lite 2.9: XNNPACK
# delegate in QS8 mode): name, floe model, tflite model, int8 input, input name.
INT8_MODELS = [
    ('kws int8', 'kws_int8.floe', 'kws_int8.tflite', 'kws_int8_x.npy', 'input_1'),
]


def sh(cmd, cwd):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f'compare: failed ({r.returncode}): {" ".join(cmd)}\n{r.stdout}{r.stderr}')
    return r.stdout


def median_of(text, pattern):
    m = re.search(pattern, text)
    if not m:
        sys.exit(f'compare: cannot parse timing from:\n{text}')
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--bench', required=True)
    ap.add_argument('--peers', required=True)
    ap.add_argument('--runs', type=int, default=300)
    ap.add_argument('--rounds', type=int, default=5)
    a = ap.parse_args()
    p, m = a.peers, os.path.join(a.peers, 'models')
    tmp = tempfile.mkdtemp()

    # 1. Outputs agree (floe vs TF Lite + XNNPACK vs ORT), same inputs.
    print('outputs (max |diff| against floe):')
    bad = 0
    for name, fl, tfl, onx, x, xc in MODELS:
        fo, to, oo = (os.path.join(tmp, f'{name.replace(" ", "_")}_{k}.npy') for k in ('floe', 'tfl', 'ort'))
        sh([a.bench, f'{m}/{fl}', '--runs', '1', '--warmup', '0', '--profile-runs', '0',
            '--input', f'x={m}/{x}', '--output', f'prob={fo}'], p)
        sh(['tflite_c/tflite_bench', f'{m}/{tfl}', '--xnnpack', '--runs', '1', '--in', f'{m}/{x}',
            '--out', to], p)
        sh(['node', 'ort_run.js', f'{m}/{onx}', '-i', f'x={m}/{xc}', '-o', f'prob={oo}'], p)
        f = np.load(fo).ravel()
        for peer, path in (('TFLite+XNNPACK', to), ('ORT', oo)):
            d = float(np.abs(np.load(path).ravel() - f).max())
            ok = d <= 1e-4
            bad += not ok
            print(f'  {name:8} {peer:15} {d:.2e} {"OK" if ok else "MISMATCH"}')
    int8_models = [row for row in INT8_MODELS if os.path.exists(os.path.join(m, row[1]))]
    for name, fl, tfl, x, xname in int8_models:
        fo, to = (os.path.join(tmp, f'{name.replace(" ", "_")}_{k}') for k in ('floe.npy', 'tfl.bin'))
        out = sh([a.bench, f'{m}/{fl}', '--runs', '1', '--warmup', '0', '--profile-runs', '0',
                  '--input', f'{xname}={m}/{x}', '--output', f'Identity={fo}'], p)
        sh(['./tflite_int8_bench', f'{m}/{tfl}', '--runs', '1', '--in', f'{m}/{x}', '--out', to], p)
        f = np.load(fo).astype(np.int32).ravel()
        t = np.fromfile(to, dtype=np.int8).astype(np.int32)
        d = int(np.abs(t - f).max())
        ok = d <= 1
        bad += not ok
        print(f'  {name:8} {"TFLite+XNN QS8":15} {d} step(s) {"OK" if ok else "MISMATCH"}')
    if bad:
        sys.exit('compare: outputs disagree')

    # 2. Timing: interleaved rounds, median of round medians.
    rows = []
    for threads in (1, 2):
        for name, fl, tfl, onx, x, xc in MODELS:
            t = {'floe': [], 'tfl': [], 'ort': []}
            for _ in range(a.rounds):
                out = sh([a.bench, f'{m}/{fl}', '--threads', str(threads), '--runs', str(a.runs),
                          '--profile-runs', '0', '--input', f'x={m}/{x}'], p)
                t['floe'].append(median_of(out, r'median ([0-9.]+) ms'))
                out = sh(['tflite_c/tflite_bench', f'{m}/{tfl}', '--xnnpack', '--threads', str(threads),
                          '--runs', str(a.runs), '--in', f'{m}/{x}'], p)
                t['tfl'].append(median_of(out, r'median ([0-9.]+) ms'))
                out = sh(['node', 'ort_run.js', f'{m}/{onx}', '-i', f'x={m}/{xc}', '--threads', str(threads),
                          '--bench', str(a.runs)], p)
                t['ort'].append(median_of(out, r'median ([0-9.]+) ms'))
            med = {k: statistics.median(v) for k, v in t.items()}
            rows.append((name, threads, med['floe'], med['tfl'], med['ort']))
    int8_rows = []
    for threads in (1, 2):
        for name, fl, tfl, x, xname in int8_models:
            t = {'floe': [], 'tfl': []}
            for _ in range(a.rounds):
                out = sh([a.bench, f'{m}/{fl}', '--threads', str(threads), '--runs', str(a.runs),
                          '--profile-runs', '0', '--input', f'{xname}={m}/{x}'], p)
                t['floe'].append(median_of(out, r'median ([0-9.]+) ms'))
                out = sh(['./tflite_int8_bench', f'{m}/{tfl}', '--threads', str(threads), '--runs', str(a.runs),
                          '--in', f'{m}/{x}'], p)
                t['tfl'].append(median_of(out, r'median ([0-9.]+) ms'))
            int8_rows.append((name, threads, statistics.median(t['floe']), statistics.median(t['tfl'])))
    mnet = os.path.join(m, 'mnet.floe')
    extra = []
    if os.path.exists(mnet):
        for threads in (1, 2):
            meds = [median_of(sh([a.bench, mnet, '--threads', str(threads), '--runs', str(a.runs),
                                  '--profile-runs', '0'], p), r'median ([0-9.]+) ms') for _ in range(a.rounds)]
            extra.append((threads, statistics.median(meds)))

    print(f'\nmedian latency, ms ({a.rounds} interleaved rounds x {a.runs} runs; median of round medians)')
    print(f'{"model":9} {"thr":>3} {"floe":>9} {"TFLite+XNN":>11} {"ORT":>9} {"floe/TFLite":>12} {"floe/ORT":>9}')
    worst = 0.0
    for name, threads, f, tl, o in rows:
        worst = max(worst, f / tl)
        print(f'{name:9} {threads:>3} {f:9.4f} {tl:11.4f} {o:9.4f} {f / tl:12.3f} {f / o:9.3f}')
    for threads, f in extra:
        print(f'{"mobilenet":9} {threads:>3} {f:9.4f} {"-":>11} {"-":>9} {"-":>12} {"-":>9}   (yeah-world mnet.pb, floe only)')
    for name, threads, f, tl in int8_rows:
        print(f'{name:9} {threads:>3} {f:9.4f} {tl:11.4f} {"-":>9} {f / tl:12.3f} {"-":>9}   (TFLite: XNNPACK QS8)')
    print(f'\nworst floe/TFLite ratio (float): {worst:.3f}')


if __name__ == '__main__':
    main()
