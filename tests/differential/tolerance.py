# SPDX-License-Identifier: Apache-2.0
"""When floe's output counts as TF's answer (README.md gives the reasons).

  float  |got - want| <= 1e-4 * max(1, max|want|) + 1e-4 * |want|, elementwise; NaN only
         where the oracle has NaN, infinities equal. Different but correct float32
         summation orders (XNNPACK's, TF.js's) differ by a few ulps per op, a chain of
         eight ops by far less than this; a wrong index, padding or broadcast by far more.
  exact  bit-identical (integer, bool and int8/int16 quantized outputs: floe's integer
         kernels are TFLite's arithmetic).
"""

import numpy as np

FLOAT_ATOL = 1e-4
FLOAT_RTOL = 1e-4


def file_safe(name):
    return name.replace(":", "_").replace("/", "_")


def agree(got, want, rule):
    """(True, "") or (False, why) for floe's `got` against the oracle's `want`."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False, "shape %s, TF gives %s" % (list(got.shape), list(want.shape))
    if got.size == 0:
        return True, ""
    if rule == "float" and want.dtype.kind == "f":
        g, w = got.astype(np.float64), want.astype(np.float64)
        nan_w, nan_g = np.isnan(w), np.isnan(g)
        if (nan_w != nan_g).any():
            i = int(np.argmax(nan_w != nan_g))
            return False, "NaN differs at flat index %d: %r vs TF %r" % (i, g.ravel()[i], w.ravel()[i])
        finite = np.isfinite(w) & ~nan_w
        inf_bad = (~finite & ~nan_w) & (g != w)
        if inf_bad.any():
            i = int(np.argmax(inf_bad))
            return False, "infinity differs at flat index %d: %r vs TF %r" % (i, g.ravel()[i], w.ravel()[i])
        scale = max(1.0, float(np.max(np.abs(w[finite]))) if finite.any() else 1.0)
        bound = FLOAT_ATOL * scale + FLOAT_RTOL * np.abs(w)
        err = np.where(finite, np.abs(g - w), 0.0)
        bad = np.where(finite, err > bound, False)
        if bad.any():
            i = int(np.argmax(err - np.where(finite, bound, 0.0)))
            return False, ("max |diff| %.3g at flat index %d: %r vs TF %r (bound %.3g)"
                           % (float(err.max()), i, float(g.ravel()[i]), float(w.ravel()[i]), float(bound.ravel()[i])))
        return True, ""
    if got.dtype.kind in "iub" and want.dtype.kind in "iub":
        diff = got.astype(np.int64) != want.astype(np.int64)
    else:
        diff = got != want
    if diff.any():
        i = int(np.argmax(diff))
        return False, ("%d of %d values differ; first at flat index %d: %r vs TF %r"
                       % (int(diff.sum()), got.size, i, got.ravel()[i].item(), want.ravel()[i].item()))
    return True, ""
