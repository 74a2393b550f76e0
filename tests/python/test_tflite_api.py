# SPDX-License-Identifier: Apache-2.0
"""floe.Interpreter as a drop-in for tflite_runtime.interpreter.Interpreter: the
TFLite Python guide's script, run unchanged on a .tflite (converted on the fly)
and a .floe; TFLite's detail keys; signature runners; tensor() views; and a
ValueError, never a silent cast, for an input of the wrong dtype or shape."""

import os

import numpy as np
import pytest

import floe

SOURCE = os.environ.get("FLOE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.environ.get("FLOE_SHARED_DIR", os.path.join(SOURCE, "..", "shared"))
MNIST = os.path.join(SOURCE, "examples", "mnist_mlp", "model")
KWS = os.path.join(SHARED, "corpus", "int8", "mlperf_tiny", "kws")
LSTM = os.path.join(SHARED, "corpus", "tflm", "examples", "mnist_lstm", "trained_lstm.tflite")


def need(path):
    if not os.path.exists(path):
        pytest.skip("SKIPPED: %s absent (../shared/corpus)" % path)


def tflite_guide_script(Interpreter, model_path, input_data):
    """The usage of TFLite's Python guide ("Load and run a model in Python"),
    with only the import changed."""
    interpreter = Interpreter(model_path=model_path)
    interpreter.allocate_tensors()
    input_details = interpreter.get_input_details()
    output_details = interpreter.get_output_details()
    input_shape = input_details[0]["shape"]
    assert np.array_equal(input_shape, input_data.shape)
    interpreter.set_tensor(input_details[0]["index"], input_data)
    interpreter.invoke()
    return interpreter.get_tensor(output_details[0]["index"]), input_details[0], output_details[0]


def test_tflite_script_on_kws_int8_tflite():
    path = os.path.join(KWS, "kws_ref_model.tflite")
    need(path)
    x = np.load(os.path.join(KWS, "kws_input0_int8.npy"))
    y, inp, out = tflite_guide_script(floe.Interpreter, path, x)
    # TFLite 2.9 and TFLM: class 5 at 127, the rest at -128 (../shared/corpus/int8/README.md).
    expected = np.full((1, 12), -128, dtype=np.int8)
    expected[0, 5] = 127
    np.testing.assert_array_equal(y, expected)
    # The file's own quantization, under TFLite's keys.
    assert inp["dtype"] == np.int8 and out["dtype"] == np.int8
    scale, zero_point = inp["quantization"]
    assert scale == pytest.approx(0.584703, rel=1e-5)
    params = inp["quantization_parameters"]
    assert params["scales"].dtype == np.float32 and params["scales"].tolist() == [np.float32(scale)]
    assert params["zero_points"].tolist() == [zero_point] and params["quantized_dimension"] == 0
    assert out["quantization"] == (pytest.approx(1 / 256), -128)
    assert np.array_equal(inp["shape_signature"], inp["shape"]) and inp["shape"].dtype == np.int32


def test_tflite_script_on_the_mnist_floe_model(tmp_path):
    model = floe.convert(graph=os.path.join(MNIST, "mnist_mlp.meta"), checkpoint=MNIST,
                         outputs=["softmax_linear/add"], input_shapes={"images": [1, 784]})
    path = tmp_path / "mnist.floe"
    path.write_bytes(model)
    x = np.load(os.path.join(MNIST, "digit_7.npy"))
    y, inp, out = tflite_guide_script(floe.Interpreter, str(path), x)
    assert int(np.argmax(y)) == 7
    # TFLite's names: no ':0'; the same names run() returns.
    assert inp["name"] == "images" and out["name"] == "softmax_linear/add"
    assert inp["quantization"] == (0.0, 0) and inp["quantization_parameters"]["scales"].size == 0
    interpreter = floe.Interpreter(str(path))  # a path positionally, as TFLite takes it
    np.testing.assert_array_equal(interpreter.run(images=x)["softmax_linear/add"], y)
    np.testing.assert_array_equal(floe.Interpreter(model_content=model).run(x)["softmax_linear/add"], y)


def test_model_content_tflite_and_errors_name_it():
    path = os.path.join(KWS, "kws_ref_model.tflite")
    need(path)
    with open(path, "rb") as f:
        content = f.read()
    x = np.load(os.path.join(KWS, "kws_input0_int8.npy"))
    interpreter = floe.Interpreter(model_content=content, num_threads=2)
    assert interpreter.num_threads in (1, 2)  # 1 in a build without XNNPACK
    assert int(np.argmax(interpreter.run(x)[interpreter.get_output_details()[0]["name"]])) == 5
    broken = content[:8] + content[8:64]  # a .tflite header, then nothing
    with pytest.raises(floe.ConvertError) as refused:
        floe.Interpreter(model_content=broken)
    assert "model_content" in str(refused.value) and "floe-tflite-" not in str(refused.value)
    with pytest.raises(ValueError, match="model_path or model_content"):
        floe.Interpreter()
    with pytest.raises(ValueError, match="delegates"):
        floe.Interpreter(model_path=path, experimental_delegates=[object()])
    with pytest.raises(ValueError, match="num_threads"):
        floe.Interpreter(model_path=path, num_threads=0)


def test_wrong_dtype_or_shape_raises_instead_of_casting():
    path = os.path.join(KWS, "kws_ref_model.tflite")
    need(path)
    interpreter = floe.Interpreter(model_path=path)
    (inp,) = interpreter.get_input_details()
    name = interpreter.get_output_details()[0]["name"]
    x = np.load(os.path.join(KWS, "kws_input0_int8.npy"))
    real = floe.dequantize(x, inp)  # the float features the int8 input stands for
    # A float array into an int8 input: refused by set_tensor, run() and a signature runner alike.
    with pytest.raises(ValueError, match=r"input '%s' is int8, got float32 \(run\(\.\.\., quantize=True\)" % inp["name"]):
        interpreter.run(real)
    with pytest.raises(ValueError, match="is int8, got float32"):
        interpreter.set_tensor(inp["index"], real)
    with pytest.raises(ValueError, match=r"has shape \[1, 49, 10, 1\], got \[49, 10\]"):
        interpreter.run(x.reshape(49, 10))
    with pytest.raises(ValueError, match="is int8, got int16"):
        interpreter.get_signature_runner()(**{inp["name"]: x.astype(np.int16)})
    # Plain Python numbers: taken when they are the dtype's values, refused when they are not.
    with pytest.raises(ValueError, match="do not fit"):
        interpreter.run(real.tolist())
    np.testing.assert_array_equal(interpreter.run(x.tolist())[name], interpreter.run(x)[name])
    # Asked for, floats are quantized as the model's QUANTIZE would: the same bytes, the same answer.
    np.testing.assert_array_equal(floe.quantize(real, inp), x)
    np.testing.assert_array_equal(interpreter.run(real, quantize=True)[name], interpreter.run(x)[name])


def test_tensor_views_write_inputs_and_read_outputs():
    path = os.path.join(KWS, "kws_ref_model.tflite")
    need(path)
    interpreter = floe.Interpreter(model_path=path)
    inp, out = interpreter.get_input_details()[0], interpreter.get_output_details()[0]
    x = np.load(os.path.join(KWS, "kws_input0_int8.npy"))
    view = interpreter.tensor(inp["index"])()
    assert view.shape == (1, 49, 10, 1) and view.dtype == np.int8
    view[...] = x  # into the arena, no copy
    interpreter.invoke()
    result = interpreter.tensor(out["index"])()
    assert result.dtype == np.int8 and int(np.argmax(result)) == 5
    np.testing.assert_array_equal(result, interpreter.get_tensor(out["index"]))


def test_signature_runner_uses_the_tflite_signature_names():
    need(LSTM)
    interpreter = floe.Interpreter(model_path=LSTM)
    signatures = interpreter.get_signature_list()
    assert list(signatures) == ["serving_default"]
    (input_name,) = signatures["serving_default"]["inputs"]
    (output_name,) = signatures["serving_default"]["outputs"]
    runner = interpreter.get_signature_runner()
    assert set(runner.get_input_details()) == {input_name}
    inp = interpreter.get_input_details()[0]
    x = np.random.default_rng(5).uniform(0, 1, tuple(inp["shape"])).astype(np.float32)
    outputs = runner(**{input_name: x})
    assert list(outputs) == [output_name]
    # The LSTM's state carries from one invoke to the next, as in TFLite: reset before the same input again.
    interpreter.reset_all_variables()
    np.testing.assert_array_equal(outputs[output_name], interpreter.run(x)[interpreter.get_output_details()[0]["name"]])
    with pytest.raises(ValueError, match="missing %s" % input_name):
        runner()
    with pytest.raises(ValueError, match="no signature 'train'"):
        interpreter.get_signature_runner("train")


def test_int8_is_tflm_exact_by_default_and_fast_only_when_asked():
    """person_detect on TFLM's no-person image: (57, -57), TFLM's numbers, from
    the default host conversion as from the reference target; XNNPACK's int8
    (int8_rounding="fast") may round its own way."""
    folder = os.path.join(SHARED, "corpus", "int8", "tflite_micro", "person_detection")
    path = os.path.join(folder, "person_detect.tflite")
    need(path)
    x = np.load(os.path.join(folder, "no_person_tflm_int8.npy"))

    def scores(**options):
        interpreter = floe.Interpreter(model_content=floe.convert(path, **options))
        interpreter.set_tensor(interpreter.get_input_details()[0]["index"], x)
        interpreter.invoke()
        return interpreter.get_tensor(interpreter.get_output_details()[0]["index"]).ravel().tolist()

    assert scores() == [57, -57]
    assert scores(target="reference") == [57, -57]
    fast = scores(int8_rounding="fast")
    assert all(abs(a - b) <= 8 for a, b in zip(fast, [57, -57]))
    with pytest.raises(floe.ConvertError, match="int8_rounding='nearest'"):
        floe.convert(path, int8_rounding="nearest")
