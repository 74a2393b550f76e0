#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""numpy.fft in double precision, the reference of spectral_ops_test.cc.

spectral_numpy.py OP N REAL.npy IMAG.npy OUT_PREFIX
  OP: fft, ifft (complex input REAL + i IMAG), rfft (REAL; IMAG ignored),
      irfft (REAL + i IMAG, as TF: the inner dim cropped or zero-padded to N//2+1).
  Writes OUT_PREFIX_re.npy and, for complex results, OUT_PREFIX_im.npy (float64),
  transforms over the innermost dim with length N.
"""
import sys

import numpy as np


def main():
    op, n, re_path, im_path, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    re = np.load(re_path).astype(np.float64)
    x = re + 1j * np.load(im_path).astype(np.float64) if op != "rfft" else re
    if op == "fft":
        y = np.fft.fft(x, n=n, axis=-1)
    elif op == "ifft":
        y = np.fft.ifft(x, n=n, axis=-1)
    elif op == "rfft":
        y = np.fft.rfft(x, n=n, axis=-1)
    elif op == "irfft":
        bins = n // 2 + 1
        if x.shape[-1] > bins:
            x = x[..., :bins]
        elif x.shape[-1] < bins:
            pad = [(0, 0)] * (x.ndim - 1) + [(0, bins - x.shape[-1])]
            x = np.pad(x, pad)
        y = np.fft.irfft(x, n=n, axis=-1)
    else:
        sys.exit("unknown op " + op)
    np.save(prefix + "_re.npy", np.ascontiguousarray(np.real(y)))
    if np.iscomplexobj(y):
        np.save(prefix + "_im.npy", np.ascontiguousarray(np.imag(y)))


if __name__ == "__main__":
    main()
