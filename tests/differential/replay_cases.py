# SPDX-License-Identifier: Apache-2.0
"""The kept findings (regress/<name>/case.json): each replays with TF's stored answer."""

import json
import os

import numpy as np


class StoredCase(object):
    def __init__(self, directory):
        with open(os.path.join(directory, "case.json")) as f:
            meta = json.load(f)
        self.name = os.path.basename(directory)
        self.model_path = os.path.join(directory, meta["model"])
        self.outputs = meta["outputs"]
        self.rule = meta["rule"]
        self.convert_args = meta.get("convert_args", [])
        self.ops = meta.get("ops", [])
        self.input_paths = {name: os.path.join(directory, "input_%s.npy" % name.replace(":", "_").replace("/", "_"))
                            for name in meta["inputs"]}
        self.expected = {name: np.load(os.path.join(directory, "expected_%d.npy" % i))
                         for i, name in enumerate(self.outputs)}


def load_all(regress_dir):
    if not os.path.isdir(regress_dir):
        return []
    return [StoredCase(os.path.join(regress_dir, d)) for d in sorted(os.listdir(regress_dir))
            if os.path.exists(os.path.join(regress_dir, d, "case.json"))]
