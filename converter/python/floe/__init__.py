# SPDX-License-Identifier: Apache-2.0
"""floe from Python: convert a TF1 graph or a .tflite file, check the result.

    import floe
    model = floe.convert(graph="m.meta", checkpoint="ckpt_dir", outputs=["logits"],
                         input_shapes={"images": [1, 784]})
    interpreter = floe.Interpreter(model)
    logits = interpreter.run(images=x)["logits"]

convert() takes floe-convert's options as keyword arguments and returns the
model's bytes; Interpreter runs them on floe's host runtime (reference kernels,
XNNPACK when built with it) inside one arena, as a device would. The methods
get_input_details / set_tensor / invoke / get_tensor follow tflite_runtime's.
"""

import os
import tempfile

import numpy as np

from ._floe import ConvertError
from ._floe import Interpreter as _Interpreter
from ._floe import convert as _convert

__all__ = ["ConvertError", "Interpreter", "convert"]


def _names(value):
    """A list of names from a list, a tuple or one comma-separated string."""
    if value is None:
        return []
    if isinstance(value, str):
        return [v for v in value.split(",") if v]
    return list(value)


def convert(graph, checkpoint=None, outputs=(), inputs=(), input_shapes=None, target="host",
            tags=("serve",), signature="", freeze_inputs=None, optimize=True, disable_passes=(),
            quantize=None, calibration=None, io="float", strict_int8=False,
            calibration_method="minmax", selftest_inputs=None, memory_regions=None, max_loop_iterations=0,
            verbose=False):
    """Converts a model and returns the .floe bytes; raises floe.ConvertError.

    graph, checkpoint, outputs, inputs, target, tags, signature, quantize, io,
    strict_int8, calibration_method: as floe-convert's options of those names.
    input_shapes: {name: [d0, d1, ...]} (--input-shape).
    freeze_inputs: {name: value or [values]} (--freeze-input), e.g. {"is_training": False}.
    optimize=False: --no-optimize; disable_passes: --disable-pass names.
    calibration (with quantize="int8"): an .npz / .npy / directory path, or
    {input name: array [n, ...]} of samples.
    selftest_inputs: {input name: .npy path or array} (--selftest-input): the
    model then carries these inputs, the host's outputs and every op's digest
    for floe::SelfTest on the device (Interpreter.self_test() on the host).
    memory_regions: {name: bytes or "64K"/"4M"}, fastest first (--memory-regions);
    the Interpreter lays the regions out in its one arena.
    max_loop_iterations: bound of a while loop run at run time when the graph
    has no maximum_iterations (--max-loop-iterations; 0 = none).
    verbose: print floe-convert's summary.
    """
    frozen = {}
    for name, value in (freeze_inputs or {}).items():
        values = np.atleast_1d(np.asarray(value)).ravel()
        frozen[name] = ",".join(str(v).lower() if isinstance(v, (bool, np.bool_)) else str(v) for v in values)
    shapes = {name: [int(d) for d in dims] for name, dims in (input_shapes or {}).items()}
    with tempfile.TemporaryDirectory(prefix="floe-calibration-") as scratch:
        calibration_path = ""
        if isinstance(calibration, dict):
            # Stored (uncompressed) members: floe's reader has no inflate.
            calibration_path = os.path.join(scratch, "calibration.npz")
            np.savez(calibration_path, **{name: np.asarray(a) for name, a in calibration.items()})
        elif calibration is not None:
            calibration_path = os.fspath(calibration)
        selftest = {}
        for name, sample in (selftest_inputs or {}).items():
            if isinstance(sample, (str, os.PathLike)):
                selftest[name] = os.fspath(sample)
            else:
                selftest[name] = os.path.join(scratch, "selftest_%d.npy" % len(selftest))
                np.save(selftest[name], np.asarray(sample))
        model, summary = _convert(
            graph=os.fspath(graph), checkpoint=os.fspath(checkpoint) if checkpoint else "",
            outputs=_names(outputs), inputs=_names(inputs), input_shapes=shapes, target=target,
            tags=_names(tags), signature=signature, freeze_inputs=frozen, optimize=optimize,
            disable_passes=_names(disable_passes), quantize=quantize or "", calibration=calibration_path,
            io=io, strict_int8=strict_int8, calibration_method=calibration_method, selftest_inputs=selftest,
            memory_regions=",".join("%s=%s" % (name, size) for name, size in (memory_regions or {}).items()),
            max_loop_iterations=int(max_loop_iterations))
    if verbose:
        print(summary, end="")
    return model


class Interpreter(_Interpreter):
    """Runs a floe model inside one arena of arena_size bytes (default: the
    converter's exact figure, Model::arena_size()).

    Interpreter(model_bytes) or Interpreter(model_path="m.floe"). After
    invoke(profile=True), profile() lists every op with its time in ms. A
    model with state (SVDF) carries it from one invoke() to the next;
    reset_all_variables() starts again, as in tflite_runtime.
    """

    def __init__(self, model=None, *, model_path=None, arena_size=None):
        if (model is None) == (model_path is None):
            raise ValueError("Interpreter: give the model's bytes or model_path, not both")
        if model_path is not None:
            with open(model_path, "rb") as f:
                model = f.read()
        super().__init__(bytes(model), arena_size)

    def run(self, *args, **named):
        """Sets the inputs (positionally in model order, or by name), invokes,
        and returns {output name: array}."""
        details = self.get_input_details()
        if args and named:
            raise ValueError("run(): inputs either by position or by name")
        if args:
            if len(args) != len(details):
                raise ValueError("run(): the model has %d inputs, got %d" % (len(details), len(args)))
            values = dict(zip((d["name"] for d in details), args))
        else:
            values = {}
            for d in details:
                short = d["name"].split(":")[0]
                key = d["name"] if d["name"] in named else short
                if key not in named:
                    raise ValueError("run(): input '%s' missing" % short)
                values[d["name"]] = named.pop(key)
            if named:
                raise ValueError("run(): no model input named %s" % ", ".join(sorted(named)))
        for d in details:
            self.set_tensor(d["index"], np.asarray(values[d["name"]], dtype=d["dtype"]))
        self.invoke()
        return {d["name"].split(":")[0] if d["name"].endswith(":0") else d["name"]: self.get_tensor(d["index"])
                for d in self.get_output_details()}
