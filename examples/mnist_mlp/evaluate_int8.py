# SPDX-License-Identifier: Apache-2.0
"""Post-training int8 quantization of the MNIST example, measured on held-out digits.

    /usr/bin/python3 examples/mnist_mlp/evaluate_int8.py --bin build/host/bin --work DIR

Calibrates on the example's training digits (the same scikit-learn digits and
split make_mnist_mlp.py trained on), converts the model to float and to int8
with floe-convert, runs both with floe-run on every held-out digit, and prints
the accuracy and bytes of each. Exit status 1 when the int8 model loses more
than --max-drop accuracy points or is larger than --max-size of the float
model (the example's promise: within 1 point, at most 30 %).
"""

import argparse
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, HERE)
import make_mnist_mlp  # noqa: E402

MODEL = os.path.join(HERE, "model")
OUTPUT = "softmax_linear/add"
SKIPPED = 77  # ctest's SKIP_RETURN_CODE


def convert(bin_dir, out, extra):
    cmd = [os.path.join(bin_dir, "floe-convert"), "--graph", os.path.join(MODEL, "mnist_mlp.meta"),
           "--checkpoint", MODEL, "--outputs", OUTPUT, "--input-shape", "images=1,784", "-o", out] + extra
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        sys.exit("floe-convert failed (%d):\n%s" % (result.returncode, result.stdout))
    return result.stdout


def predictions(bin_dir, model, images, work):
    """Class per image, each run through floe-run as a user would."""
    sample = os.path.join(work, "sample.npy")
    out_dir = os.path.join(work, "out")
    os.makedirs(out_dir, exist_ok=True)
    labels = []
    for image in images:
        np.save(sample, image.reshape(1, -1).astype(np.float32))
        subprocess.run([os.path.join(bin_dir, "floe-run"), model, "--input", "images=" + sample,
                        "-o", out_dir], check=True, stdout=subprocess.DEVNULL)
        logits = np.load(os.path.join(out_dir, OUTPUT.replace("/", "_") + ".npy"))
        labels.append(int(np.argmax(logits)))
    return np.array(labels)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="directory of floe-convert and floe-run")
    ap.add_argument("--work", required=True, help="scratch directory (created)")
    ap.add_argument("--max-drop", type=float, default=1.0, help="accuracy points int8 may lose")
    ap.add_argument("--max-size", type=float, default=0.30, help="int8 bytes / float bytes at most")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)

    try:
        import sklearn  # noqa: F401  (the digits come from scikit-learn's bundled set)
    except ImportError:
        print("SKIPPED: scikit-learn is not installed (Debian: python3-sklearn)")
        return SKIPPED
    x_train, _, x_test, y_test = make_mnist_mlp.load_data()
    calibration = os.path.join(args.work, "calibration.npz")
    np.savez(calibration, images=x_train)  # [n, 784]: n samples of the [1, 784] input

    float_model = os.path.join(args.work, "mnist_float.floe")
    int8_model = os.path.join(args.work, "mnist_int8.floe")
    convert(args.bin, float_model, [])
    summary = convert(args.bin, int8_model, ["--quantize", "int8", "--calibration", calibration])
    print("int8 conversion (calibrated on %d training digits):" % len(x_train))
    for line in summary.splitlines():
        if "SQNR" in line or "model:" in line:
            print("  " + line.strip())

    rows = []
    predicted = {}
    for name, path in (("float", float_model), ("int8", int8_model)):
        predicted[name] = predictions(args.bin, path, x_test, args.work)
        accuracy = 100.0 * float(np.mean(predicted[name] == y_test))
        rows.append((name, os.path.getsize(path), accuracy))
        print("%-5s  %7d bytes  held-out accuracy %.2f %% (%d digits)" % (name, rows[-1][1], accuracy, len(x_test)))
    agree = int(np.sum(predicted["float"] == predicted["int8"]))
    print("int8 predicts the float model's class on %d of %d digits" % (agree, len(x_test)))

    (_, float_bytes, float_acc), (_, int8_bytes, int8_acc) = rows
    ratio = int8_bytes / float_bytes
    print("int8 / float: %.1f %% of the bytes, %+.2f accuracy points" % (100.0 * ratio, int8_acc - float_acc))
    ok = int8_acc >= float_acc - args.max_drop and ratio <= args.max_size
    if not ok:
        print("FAILED: int8 must stay within %.1f points of float at <= %.0f %% of its bytes"
              % (args.max_drop, 100.0 * args.max_size))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
