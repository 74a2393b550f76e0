#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""floe-convert's progress line: on a terminal, a conversion that runs over a
second says which stage it is in (here: calibrating on 30,000 samples) and
clears the line when done; into a pipe it prints nothing of the kind.

  progress_test.py FLOE_CONVERT SOURCE_DIR WORK_DIR"""
import os
import pty
import subprocess
import sys

import numpy as np


def main():
    convert, source, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    mnist = os.path.join(source, "examples", "mnist_mlp", "model")
    calibration = os.path.join(work, "many_samples.npz")
    # 30,000 samples (~2 s of calibration) of a few repeated rows: np.savez_compressed keeps the file small.
    rows = np.random.default_rng(1).uniform(0, 1, (16, 784)).astype(np.float32)
    np.savez_compressed(calibration, images=np.tile(rows, (30000 // 16 + 1, 1))[:30000])
    args = [convert, "--graph", os.path.join(mnist, "mnist_mlp.meta"), "--checkpoint", mnist,
            "--outputs", "softmax_linear/add", "--input-shape", "images=1,784", "--quantize", "int8",
            "--calibration", calibration, "-o", os.path.join(work, "progress.floe")]

    # stderr on a pseudo-terminal, as in an interactive shell.
    leader, follower = pty.openpty()
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=follower)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the terminal's other end is closed
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    text = seen.decode("utf-8", "replace")
    if r.returncode != 0:
        print("FAIL: floe-convert exited %d:\n%s" % (r.returncode, text))
        return 1
    if "floe-convert: " not in text or ": calibrating: sample " not in text:
        print("FAIL: no progress line on the terminal:\n%r" % text[:400])
        return 1
    if not text.endswith("\r\x1b[K"):
        print("FAIL: the progress line is not cleared at the end: %r" % text[-80:])
        return 1
    shown = [part for part in text.split("\r\x1b[K") if part]
    print("on a terminal: %d progress updates, e.g. %r ... %r" % (len(shown), shown[0], shown[-1]))

    piped = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if piped.returncode != 0 or "calibrating" in piped.stderr or "\x1b[K" in piped.stderr:
        print("FAIL: into a pipe (exit %d) stderr should carry no progress:\n%r" % (piped.returncode, piped.stderr))
        return 1
    print("into a pipe: no progress (stderr %r)" % piped.stderr)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
