# SPDX-License-Identifier: Apache-2.0
"""floe's Python package: convert the MNIST example and classify digits 3, 7
and 9 as demo.sh does, quantize it, and check the Interpreter's contract
(details, tensors, arena size, per-op profile, errors)."""

import json
import os

import numpy as np
import pytest

import floe

SOURCE = os.environ.get("FLOE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
MNIST = os.path.join(SOURCE, "examples", "mnist_mlp", "model")
OUTPUT = "softmax_linear/add"
DIGITS = (3, 7, 9)


def mnist(**options):
    return floe.convert(graph=os.path.join(MNIST, "mnist_mlp.meta"), checkpoint=MNIST, outputs=[OUTPUT],
                        input_shapes={"images": [1, 784]}, **options)


def digit(label):
    return np.load(os.path.join(MNIST, "digit_%d.npy" % label))


@pytest.fixture(scope="module")
def float_model():
    return mnist()


@pytest.fixture(scope="module")
def expected_logits():
    with open(os.path.join(MNIST, "expected.json")) as f:
        samples = json.load(f)["samples"]
    return {s["label"]: np.array(s["logits"], dtype=np.float32) for s in samples}


def test_convert_returns_a_floe_model(float_model, capsys):
    assert isinstance(float_model, bytes)
    assert float_model[4:8] == b"FLOE"  # the FlatBuffers file identifier
    assert mnist(verbose=True) == float_model  # conversion is deterministic
    assert "MATMUL" in capsys.readouterr().out  # the summary's op histogram


@pytest.mark.parametrize("label", DIGITS)
def test_classifies_held_out_digits(float_model, expected_logits, label):
    logits = floe.Interpreter(float_model).run(images=digit(label))[OUTPUT]
    assert logits.shape == (1, 10) and logits.dtype == np.float32
    assert int(np.argmax(logits)) == label
    # The numbers TensorFlow's graph gives for the same weights (examples/mnist_mlp/model/expected.json).
    np.testing.assert_allclose(logits[0], expected_logits[label], rtol=1e-4, atol=1e-4)


def test_tflite_style_calls_match_run(float_model):
    interpreter = floe.Interpreter(float_model)
    (inp,) = interpreter.get_input_details()
    (out,) = interpreter.get_output_details()
    assert inp["name"] == "images" and list(inp["shape"]) == [1, 784] and inp["dtype"] == np.float32
    assert out["name"] == OUTPUT and list(out["shape"]) == [1, 10]
    assert inp["quantization"] == (0.0, 0)
    interpreter.set_tensor(inp["index"], digit(7))
    interpreter.invoke()
    logits = interpreter.get_tensor(out["index"])
    np.testing.assert_array_equal(logits, floe.Interpreter(float_model).run(digit(7))[OUTPUT])


def test_model_path(float_model, tmp_path):
    path = tmp_path / "mnist.floe"
    path.write_bytes(float_model)
    assert int(np.argmax(floe.Interpreter(model_path=str(path)).run(images=digit(3))[OUTPUT])) == 3


def test_arena_size(float_model):
    interpreter = floe.Interpreter(float_model)
    assert interpreter.arena_size == interpreter.model_arena_size > 0
    assert 0 < interpreter.arena_used <= interpreter.arena_size
    larger = floe.Interpreter(float_model, arena_size=interpreter.model_arena_size + 4096)
    assert larger.arena_size == interpreter.model_arena_size + 4096
    with pytest.raises(ValueError, match="arena"):
        floe.Interpreter(float_model, arena_size=interpreter.model_arena_size // 2)


def test_memory_regions(float_model):
    split = mnist(memory_regions={"fast": "1K", "slow": 1 << 20})
    assert split != float_model
    x = digit(7)
    # The regions back to back in the Interpreter's one arena: the same logits, bit for bit.
    np.testing.assert_array_equal(floe.Interpreter(split).run(images=x)[OUTPUT],
                                  floe.Interpreter(float_model).run(images=x)[OUTPUT])
    with pytest.raises(floe.ConvertError, match="region 'slow' is 2048 bytes but needs") as refused:
        mnist(memory_regions={"fast": "1K", "slow": "2K"})
    assert "region 'fast' is 1024 bytes" in str(refused.value)  # the size given, whatever XNNPACK keeps free


def test_per_op_profile(float_model):
    interpreter = floe.Interpreter(float_model)
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], digit(9))
    assert interpreter.profile() == []  # nothing profiled yet
    interpreter.invoke(profile=True)
    profile = interpreter.profile()
    assert len(profile) == interpreter.operator_count == 3
    assert [p["op"] for p in profile] == ["MATMUL"] * 3
    assert profile[0]["node"] == "hidden1/MatMul"
    assert all(p["ms"] >= 0.0 and p["backend"] in ("xnnpack", "kernels") for p in profile)


def test_int8_quantization(float_model):
    samples = np.concatenate([digit(d) for d in DIGITS])  # [3, 784]: three calibration samples
    int8_model = mnist(quantize="int8", calibration={"images": samples})
    assert len(int8_model) < 0.3 * len(float_model)
    interpreter = floe.Interpreter(int8_model)
    for label in DIGITS:
        assert int(np.argmax(interpreter.run(images=digit(label))[OUTPUT])) == label


def test_int8_io_and_calibration_file(tmp_path):
    samples = np.concatenate([digit(d) for d in DIGITS])
    path = tmp_path / "calibration.npz"
    np.savez(path, images=samples)
    from_file = mnist(quantize="int8", calibration=str(path), io="int8")
    assert from_file == mnist(quantize="int8", calibration={"images": samples}, io="int8")
    interpreter = floe.Interpreter(from_file)
    (inp,) = interpreter.get_input_details()
    scale, zero_point = inp["quantization"]
    assert inp["dtype"] == np.int8 and scale > 0.0
    q = np.clip(np.round(digit(7) / scale) + zero_point, -128, 127).astype(np.int8)
    assert int(np.argmax(interpreter.run(images=q)[OUTPUT])) == 7


def test_calibration_as_numpy_writes_it(tmp_path):
    samples = np.concatenate([digit(d) for d in DIGITS])
    reference = mnist(quantize="int8", calibration={"images": samples})
    # np.savez_compressed (deflate), np.savez's positional arr_0, float64 (np.random.rand's dtype; rounded
    # to float32, which these samples are exactly): the same model as the named float32 arrays give.
    compressed, positional = tmp_path / "compressed.npz", tmp_path / "positional.npz"
    np.savez_compressed(compressed, images=samples)
    np.savez(positional, samples)
    assert mnist(quantize="int8", calibration=str(compressed)) == reference
    assert mnist(quantize="int8", calibration=str(positional)) == reference
    assert mnist(quantize="int8", calibration={"images": samples.astype(np.float64)}) == reference


def test_calibration_errors_name_what_the_user_gave():
    with pytest.raises(floe.ConvertError) as refused:
        mnist(quantize="int8", calibration={"pixels": digit(3)})
    message = str(refused.value)
    assert "calibration={'pixels': array}" in message and "'pixels' is not a model input" in message
    assert "floe-calibration-" not in message  # no temporary file the user never made


def test_errors(float_model):
    with pytest.raises(floe.ConvertError, match="no node named 'nope'"):
        mnist_graph = os.path.join(MNIST, "mnist_mlp.meta")
        floe.convert(graph=mnist_graph, checkpoint=MNIST, outputs=["nope"])
    with pytest.raises(floe.ConvertError, match="needs calibration"):
        mnist(quantize="int8")
    with pytest.raises(floe.ConvertError, match="io="):
        mnist(quantize="int8", calibration={"images": digit(3)}, io="int16")
    with pytest.raises(ValueError, match="Model::Load"):
        floe.Interpreter(b"not a floe model, not at all")
    interpreter = floe.Interpreter(float_model)
    index = interpreter.get_input_details()[0]["index"]
    with pytest.raises(ValueError, match="float32"):
        interpreter.set_tensor(index, digit(3).astype(np.float64))
    with pytest.raises(ValueError, match="shape"):
        interpreter.set_tensor(index, digit(3).reshape(784))
    with pytest.raises(ValueError, match="missing"):
        interpreter.run(pixels=digit(3))


def test_self_test():
    model = mnist(selftest_inputs={"images": digit(7)})
    result = floe.Interpreter(model).self_test()
    assert result["passed"] and result["ops_checked"] == 3 and result["tolerance"] == pytest.approx(1e-4)
    with pytest.raises(RuntimeError, match="no self-test"):
        floe.Interpreter(mnist()).self_test()


COMPLEX_GRAPH = """
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_COMPLEX64 } }
  attr { key: "shape" value { shape { dim { size: 2 } dim { size: 6 } } } } }
node { name: "spectrum" op: "FFT" input: "x" attr { key: "Tcomplex" value { type: DT_COMPLEX64 } } }
versions { producer: 27 }
"""


def test_complex_input_and_output(tmp_path):
    graph = tmp_path / "fft.pbtxt"
    graph.write_text(COMPLEX_GRAPH)
    interpreter = floe.Interpreter(floe.convert(graph=str(graph), outputs=["spectrum"]))
    (inp,) = interpreter.get_input_details()
    (out,) = interpreter.get_output_details()
    assert inp["dtype"] == np.complex64 and list(inp["shape"]) == [2, 6]
    assert out["dtype"] == np.complex64 and list(out["shape"]) == [2, 6]
    rng = np.random.default_rng(3)
    x = (rng.uniform(-1, 1, (2, 6)) + 1j * rng.uniform(-1, 1, (2, 6))).astype(np.complex64)
    spectrum = interpreter.run(x=x)["spectrum"]
    assert spectrum.dtype == np.complex64 and spectrum.shape == (2, 6)
    np.testing.assert_allclose(spectrum, np.fft.fft(x.astype(np.complex128)), atol=1e-6 * 7 * 2)


SHARED = os.environ.get("FLOE_SHARED_DIR", os.path.join(SOURCE, "..", "shared"))
KEYWORD = os.path.join(SHARED, "corpus", "tflm", "models", "keyword_scrambled.tflite")


def test_state_carries_over_invokes_until_reset_all_variables():
    if not os.path.exists(KEYWORD):
        pytest.skip("SKIPPED: %s absent (../shared/corpus/tflm)" % KEYWORD)
    # The last SVDF layer's output (the file's own output is a constant SOFTMAX).
    interpreter = floe.Interpreter(floe.convert(graph=KEYWORD, outputs=["tensor_47"]))
    x = (np.arange(96, dtype=np.int64) * 337 % 4000).astype(np.int16).reshape(1, 96)
    first = interpreter.run(x)["tensor_47"]
    for _ in range(4):
        later = interpreter.run(x)["tensor_47"]
    assert not np.array_equal(later, first), "the SVDF state should change the output of the same input"
    interpreter.reset_all_variables()
    np.testing.assert_array_equal(interpreter.run(x)["tensor_47"], first)


GATHER_GRAPH = """
node { name: 'params' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } }
       attr { key: 'shape' value { shape { dim { size: 5 } } } } }
node { name: 'indices' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } }
       attr { key: 'shape' value { shape { dim { size: 3 } } } } }
node { name: 'axis' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }
       attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
node { name: 'y' op: 'GatherV2' input: 'params' input: 'indices' input: 'axis'
       attr { key: 'Tparams' value { type: DT_FLOAT } } attr { key: 'Tindices' value { type: DT_INT32 } }
       attr { key: 'Taxis' value { type: DT_INT32 } } }
"""


def test_an_out_of_range_fed_index_is_named_as_tf_names_it(tmp_path):
    graph = tmp_path / "gather.pbtxt"
    graph.write_text(GATHER_GRAPH)
    interpreter = floe.Interpreter(floe.convert(graph=str(graph), outputs=["y"]))
    params = np.arange(1, 6, dtype=np.float32)
    np.testing.assert_array_equal(interpreter.run(params=params, indices=np.array([4, 0, 1], np.int32))["y"],
                                  [5, 1, 2])
    with pytest.raises(RuntimeError, match=r"index out of range: indices\[2\] = 7 is not in \[0, 5\) \(op 0, GATHER\)"):
        interpreter.run(params=params, indices=np.array([4, 0, 7], np.int32))
