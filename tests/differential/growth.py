# SPDX-License-Identifier: Apache-2.0
"""How both generators grow a model: op generators drawn by weight until the model has its ops."""

import numpy as np

MAX_VALUES = 4096  # per tensor: keeps each oracle run short


def grow(rng, generators, builder, n_ops, attempts):
    """Calls generators (pairs of function and weight) on `builder` until it holds n_ops ops
    or `attempts` calls were made (a generator returns None when it does not apply). False when
    a tensor grew over MAX_VALUES values: the caller draws another model."""
    funcs = [g for g, _ in generators]
    weights = np.array([w for _, w in generators], dtype=np.float64)
    for _ in range(attempts):
        if len(builder.ops) >= n_ops:
            break
        value = funcs[rng.choice(len(funcs), p=weights / weights.sum())](builder)
        if value is not None and int(np.prod(value.shape)) > MAX_VALUES:
            return False
    return True
