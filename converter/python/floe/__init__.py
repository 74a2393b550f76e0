# SPDX-License-Identifier: Apache-2.0
"""floe from Python: convert a TF1 graph or a .tflite file, run the result.

    import floe
    model = floe.convert(graph="m.meta", checkpoint="ckpt_dir", outputs=["logits"],
                         input_shapes={"images": [1, 784]})
    logits = floe.Interpreter(model_content=model).run(images=x)["logits"]

convert() takes floe-convert's options as keyword arguments and returns the
model's bytes. Interpreter runs a .floe model (or a .tflite file, converted on
the fly) on floe's host runtime (reference kernels, XNNPACK when built with it)
inside one arena, as a device would, behind tflite_runtime's interface: a
script written for tflite_runtime.interpreter.Interpreter runs with floe's.
"""

import os
import struct
import tempfile

import numpy as np

from ._floe import ConvertError
from ._floe import Interpreter as _Interpreter
from ._floe import convert as _convert

__all__ = ["ConvertError", "Interpreter", "SignatureRunner", "convert", "dequantize", "quantize"]


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
            int8_rounding="exact", verbose=False):
    """Converts a model and returns the .floe bytes; raises floe.ConvertError.

    graph, checkpoint, outputs, inputs, target, tags, signature, quantize, io,
    strict_int8, calibration_method, int8_rounding: as floe-convert's options of
    those names ("exact": TFLM's int8 bytes on every target; "fast": XNNPACK's
    int8 on the host targets, within a step per op).
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
    has no maximum_iterations (--max-loop-iterations; 0 = none: the loop runs
    until its condition is false; a loop writing TensorArrays needs one).
    verbose: print floe-convert's summary.
    """
    frozen = {}
    for name, value in (freeze_inputs or {}).items():
        values = np.atleast_1d(np.asarray(value)).ravel()
        frozen[name] = ",".join(str(v).lower() if isinstance(v, (bool, np.bool_)) else str(v) for v in values)
    shapes = {name: [int(d) for d in dims] for name, dims in (input_shapes or {}).items()}
    with tempfile.TemporaryDirectory(prefix="floe-calibration-") as scratch:
        calibration_path = ""
        # Files this call writes, and what the user gave instead: errors name the latter.
        written = {}
        if isinstance(calibration, dict):
            calibration_path = os.path.join(scratch, "calibration.npz")
            np.savez(calibration_path, **{name: np.asarray(a) for name, a in calibration.items()})
            written[calibration_path] = "calibration={%s}" % ", ".join("'%s': array" % n for n in calibration)
        elif calibration is not None:
            calibration_path = os.fspath(calibration)
        selftest = {}
        for name, sample in (selftest_inputs or {}).items():
            if isinstance(sample, (str, os.PathLike)):
                selftest[name] = os.fspath(sample)
            else:
                selftest[name] = os.path.join(scratch, "selftest_%d.npy" % len(selftest))
                np.save(selftest[name], np.asarray(sample))
                written[selftest[name]] = "selftest_inputs['%s']" % name
        try:
            model, summary = _convert(
                graph=os.fspath(graph), checkpoint=os.fspath(checkpoint) if checkpoint else "",
                outputs=_names(outputs), inputs=_names(inputs), input_shapes=shapes, target=target,
                tags=_names(tags), signature=signature, freeze_inputs=frozen, optimize=optimize,
                disable_passes=_names(disable_passes), quantize=quantize or "", calibration=calibration_path,
                io=io, strict_int8=strict_int8, calibration_method=calibration_method, selftest_inputs=selftest,
                memory_regions=",".join("%s=%s" % (name, size) for name, size in (memory_regions or {}).items()),
                max_loop_iterations=int(max_loop_iterations), int8_rounding=int8_rounding)
        except ConvertError as error:
            message = str(error)
            if not any(path in message for path in written):
                raise
            for path, given in written.items():
                message = message.replace(path, given)
            raise ConvertError(message) from None
    if verbose:
        print(summary, end="")
    return model




def quantize(values, details):
    """Float values into a quantized input's dtype with its scale and zero point,
    as the model's own QUANTIZE computes it (float32 quotient, rounded half away
    from zero, saturated; NaN gives the zero point)."""
    scale, zero_point = details["quantization"]
    dtype = np.dtype(details["dtype"])
    if scale == 0.0 or dtype.kind not in "iu":
        raise ValueError("quantize: '%s' is %s, not a quantized tensor" % (details["name"], dtype.name))
    info = np.iinfo(dtype)
    steps = (np.asarray(values, dtype=np.float32) / np.float32(scale)).astype(np.float64)
    q = np.sign(steps) * np.floor(np.abs(steps) + 0.5) + zero_point
    q = np.where(np.isnan(q), zero_point, q)
    return np.clip(q, info.min, info.max).astype(dtype)


def dequantize(values, details):
    """A quantized tensor's values as float32: scale * (q - zero_point)."""
    scale, zero_point = details["quantization"]
    if scale == 0.0:
        raise ValueError("dequantize: '%s' is not a quantized tensor" % details["name"])
    return (scale * (np.asarray(values).astype(np.float64) - zero_point)).astype(np.float32)


def _short_name(name):
    """TFLite's tensor names have no ':0' (floe's TF graphs carry TF's 'x:0')."""
    return name[:-2] if name.endswith(":0") else name


class _Flat:
    """Just enough of a FlatBuffers reader for a .tflite's signature_defs."""

    def __init__(self, data):
        self.data = data

    def u32(self, at):
        return struct.unpack_from("<I", self.data, at)[0]

    def field(self, table, index):
        vtable = table - struct.unpack_from("<i", self.data, table)[0]
        if 4 + 2 * index >= struct.unpack_from("<H", self.data, vtable)[0]:
            return None
        offset = struct.unpack_from("<H", self.data, vtable + 4 + 2 * index)[0]
        return table + offset if offset else None

    def ref(self, table, index):
        at = self.field(table, index)
        return None if at is None else at + self.u32(at)

    def tables(self, table, index):
        vector = self.ref(table, index)
        if vector is None:
            return []
        return [vector + 4 + 4 * i + self.u32(vector + 4 + 4 * i) for i in range(self.u32(vector))]

    def string(self, table, index):
        at = self.ref(table, index)
        return "" if at is None else bytes(self.data[at + 4:at + 4 + self.u32(at)]).decode("utf-8", "replace")

    def uint(self, table, index):
        at = self.field(table, index)
        return 0 if at is None else self.u32(at)


def _tflite_signatures(content):
    """{signature key: {"inputs": {name: tensor name}, "outputs": {...}}} of a
    .tflite's main-subgraph SignatureDefs (Model field 7); {} when it has none
    or the file cannot be read that far (the converter reports such files)."""
    try:
        flat = _Flat(memoryview(content))
        model = flat.u32(0)
        subgraphs = flat.tables(model, 2)
        signatures = {}
        for signature in flat.tables(model, 7):
            if flat.uint(signature, 4) != 0:
                continue  # floe converts the main subgraph
            tensors = flat.tables(subgraphs[0], 0)
            maps = {}
            for key, field in (("inputs", 0), ("outputs", 1)):
                maps[key] = {flat.string(m, 0): flat.string(tensors[flat.uint(m, 1)], 3) for m in flat.tables(signature, field)}
            signatures[flat.string(signature, 2) or "serving_default"] = maps
        return signatures
    except (struct.error, IndexError):
        return {}


def _is_tflite(content):
    return len(content) >= 8 and bytes(content[4:8]) == b"TFL3"


def _checked(value, details, quantize_floats=False):
    """value as the tensor's dtype and shape, or ValueError naming both: floe
    never casts an array of another dtype (a float image into an int8 model
    would run on zeros). Plain Python numbers and lists take the dtype when
    they hold its values exactly; quantize_floats quantizes float arrays."""
    name = details["name"]
    want = np.dtype(details["dtype"])
    given = value
    if quantize_floats and details["quantization"][0] != 0.0 and np.asarray(value).dtype.kind == "f":
        value = quantize(value, details)
    elif isinstance(value, (np.ndarray, np.generic)):
        if value.dtype != want:
            raise ValueError("input '%s' is %s, got %s%s" % (
                name, want.name, value.dtype.name,
                " (run(..., quantize=True) quantizes float inputs)" if details["quantization"][0] != 0.0
                and value.dtype.kind == "f" else ""))
    else:
        plain = np.asarray(value)
        try:
            value = plain.astype(want)
        except (TypeError, ValueError):
            raise ValueError("input '%s' is %s, got %r" % (name, want.name, given)) from None
        if plain.dtype.kind in "fciub" and not np.array_equal(value, plain):
            raise ValueError("input '%s' is %s: %s values do not fit it" % (name, want.name, plain.dtype.name))
    value = np.asarray(value)
    shape = tuple(int(d) for d in details["shape"])
    if value.shape != shape:
        raise ValueError("input '%s' has shape %s, got %s" % (name, list(shape), list(value.shape)))
    return value


class Interpreter(_Interpreter):
    """tflite_runtime.interpreter.Interpreter's interface on floe's runtime.

        interpreter = floe.Interpreter(model_path="model.tflite")   # or .floe
        interpreter.allocate_tensors()
        inp = interpreter.get_input_details()[0]
        interpreter.set_tensor(inp["index"], x)
        interpreter.invoke()
        y = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])

    model_path / model_content: a .floe model, or a .tflite one (converted for
    this host on the fly, as `floe-convert m.tflite` would). num_threads: threads
    for the XNNPACK operators. arena_size: the one arena's bytes (default: the
    converter's exact figure, Model::arena_size()). The arena is allocated and
    every op prepared here; allocate_tensors() is there for scripts that call it.
    Extras: run() (inputs by name, outputs by name), invoke(profile=True) and
    profile(), self_test(), arena_size / arena_used. A model with state (SVDF,
    LSTM, resource variables) carries it from one invoke() to the next until
    reset_all_variables().
    """

    def __init__(self, model_path=None, model_content=None, experimental_delegates=None, num_threads=None,
                 experimental_op_resolver_type=None, experimental_preserve_all_tensors=False, *, arena_size=None):
        del experimental_op_resolver_type, experimental_preserve_all_tensors  # floe keeps every tensor readable
        if isinstance(model_path, (bytes, bytearray, memoryview)) and model_content is None:
            model_path, model_content = None, model_path  # floe.Interpreter(model_bytes)
        if (model_path is None) == (model_content is None):
            raise ValueError("Interpreter: give model_path or model_content (one of them)")
        if experimental_delegates:
            raise ValueError("Interpreter: floe takes no delegates (XNNPACK is built in)")
        if model_path is not None:
            with open(os.fspath(model_path), "rb") as f:
                content = f.read()
        else:
            content = bytes(model_content)
        self._signatures = {}
        if _is_tflite(content):
            self._signatures = _tflite_signatures(content)
            content = self._from_tflite(content, model_path)
        super().__init__(content, arena_size, num_threads)
        if not self._signatures:
            self._signatures = {"serving_default": {
                "inputs": {_short_name(d["name"]): d["name"] for d in super().get_input_details()},
                "outputs": {_short_name(d["name"]): d["name"] for d in super().get_output_details()}}}

    @staticmethod
    def _from_tflite(content, model_path):
        if model_path is not None:
            return convert(graph=model_path)
        with tempfile.TemporaryDirectory(prefix="floe-tflite-") as scratch:
            path = os.path.join(scratch, "model_content.tflite")
            with open(path, "wb") as f:
                f.write(content)
            try:
                return convert(graph=path)
            except ConvertError as error:
                raise ConvertError(str(error).replace(path, "model_content")) from None

    def allocate_tensors(self):
        """Nothing left to do: the arena is laid out by the converter and every
        op was prepared when the Interpreter was made."""

    def _details(self, details):
        out = []
        for d in details:
            scale, zero_point = d["quantization"]
            quantized = scale != 0.0
            out.append({
                "name": _short_name(d["name"]),
                "index": int(d["index"]),
                "shape": np.array(d["shape"], dtype=np.int32),
                "shape_signature": np.array(d["shape"], dtype=np.int32),  # floe's shapes are static
                "dtype": np.dtype(d["dtype"]).type,
                "quantization": (float(scale), int(zero_point)),
                "quantization_parameters": {
                    "scales": np.array([scale] if quantized else [], dtype=np.float32),
                    "zero_points": np.array([zero_point] if quantized else [], dtype=np.int32),
                    "quantized_dimension": 0,
                },
                "sparsity_parameters": {},
            })
        return out

    def get_input_details(self):
        return self._details(super().get_input_details())

    def get_output_details(self):
        return self._details(super().get_output_details())

    def set_tensor(self, tensor_index, value):
        """Copies value into an input; ValueError unless dtype and shape match."""
        for d in self.get_input_details():
            if d["index"] == tensor_index:
                if not isinstance(value, (np.ndarray, np.generic)):
                    value = _checked(value, d)
                return super().set_tensor(tensor_index, value)
        raise ValueError("set_tensor: tensor %d is not a model input (inputs: %s)" % (
            tensor_index, ", ".join("%s=%d" % (d["name"], d["index"]) for d in self.get_input_details())))

    def tensor(self, tensor_index):
        """A function returning a numpy view of the tensor in the arena (no
        copy), as tflite_runtime's tensor(): write an input through it, read
        an output after invoke(); do not keep it across invokes."""
        return lambda: self._tensor_view(tensor_index)

    def run(self, *args, quantize=False, **named):
        """Sets the inputs (positionally in model order, or by name), invokes,
        and returns {output name: array}. Arrays must have the input's dtype
        and shape (ValueError otherwise); quantize=True quantizes float arrays
        given for int8/int16 inputs with the input's scale and zero point."""
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
                key = d["name"] if d["name"] in named else d["name"] + ":0"
                if key not in named:
                    raise ValueError("run(): input '%s' missing (inputs: %s)" % (
                        d["name"], ", ".join(x["name"] for x in details)))
                values[d["name"]] = named.pop(key)
            if named:
                raise ValueError("run(): no model input named %s (inputs: %s)" % (
                    ", ".join(sorted(named)), ", ".join(d["name"] for d in details)))
        for d in details:
            super().set_tensor(d["index"], _checked(values[d["name"]], d, quantize))
        self.invoke()
        return {d["name"]: self.get_tensor(d["index"]) for d in self.get_output_details()}

    def get_signature_list(self):
        """{signature key: {"inputs": [names], "outputs": [names]}}: a .tflite's
        SignatureDefs, else one "serving_default" with the model's own names."""
        return {key: {"inputs": list(s["inputs"]), "outputs": list(s["outputs"])}
                for key, s in self._signatures.items()}

    def get_signature_runner(self, signature_key=None):
        if signature_key is None:
            if len(self._signatures) != 1:
                raise ValueError("get_signature_runner: the model has signatures %s: name one"
                                 % ", ".join(sorted(self._signatures)))
            signature_key = next(iter(self._signatures))
        if signature_key not in self._signatures:
            raise ValueError("get_signature_runner: no signature '%s' (the model has %s)"
                             % (signature_key, ", ".join(sorted(self._signatures))))
        return SignatureRunner(self, self._signatures[signature_key])


class SignatureRunner:
    """tflite_runtime's SignatureRunner: runner(**inputs) -> {output: array},
    inputs and outputs by their signature names."""

    def __init__(self, interpreter, signature):
        self._interpreter = interpreter
        self._inputs = self._resolve(signature["inputs"], interpreter.get_input_details())
        self._outputs = self._resolve(signature["outputs"], interpreter.get_output_details())

    @staticmethod
    def _resolve(names, details):
        by_name = {d["name"]: d for d in details}
        resolved = {}
        for name, tensor in names.items():
            d = by_name.get(_short_name(tensor))
            if d is None:
                raise ValueError("signature tensor '%s' (%s) is not among the converted model's inputs and outputs "
                                 "(%s)" % (name, tensor, ", ".join(by_name)))
            resolved[name] = d
        return resolved

    def get_input_details(self):
        return dict(self._inputs)

    def get_output_details(self):
        return dict(self._outputs)

    def __call__(self, **inputs):
        missing = sorted(set(self._inputs) - set(inputs))
        extra = sorted(set(inputs) - set(self._inputs))
        if missing or extra:
            raise ValueError("signature runner: %s%s (inputs: %s)" % (
                "missing " + ", ".join(missing) if missing else "",
                ("; " if missing else "") + "unknown " + ", ".join(extra) if extra else "",
                ", ".join(self._inputs)))
        for name, d in self._inputs.items():
            self._interpreter.set_tensor(d["index"], _checked(inputs[name], dict(d, name=name)))
        self._interpreter.invoke()
        return {name: self._interpreter.get_tensor(d["index"]) for name, d in self._outputs.items()}
