// SPDX-License-Identifier: Apache-2.0
// Post-training int8 quantization (converter/quantize/post_training.h) and its
// calibration files (converter/frontend/calibration): small lowered models are
// calibrated, quantized, given their integers and run through emit and the
// runtime; the int8 results must stay within a few output steps of float, and
// the structure (QUANTIZE/DEQUANTIZE at the edges, float ops wrapped, weight
// axes, fixed output scales) must be TFLite's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <zlib.h>

#include "converter/frontend/calibration/calibration_file.h"
#include "converter/ir/error.h"
#include "converter/quantize/int8_arithmetic.h"
#include "converter/quantize/post_training.h"
#include "tests/converter/support/optimize_test_util.h"
#include "tests/support/npz_writer.h"

namespace floe::testing {
namespace {

using conv::CalibrationArray;
using conv::CalibrationSample;
using conv::ConvertError;
using conv::PostTrainingOptions;

std::vector<uint8_t> bytes_of(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConvertError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConvertError";
  return "";
}

// ---- calibration files -------------------------------------------------------

TEST(CalibrationFile, ReadsNumpySavezLayoutWithZip64Extras) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {-1, 0.5f};
  for (const bool zip64 : {true, false}) {
    NpzOptions o;
    o.zip64_local_extra = zip64;
    const std::string npz = npz_bytes({{"x.npy", npy_f32({2, 3}, a)}, {"scope/y.npy", npy_f32({2}, b)}}, o);
    const std::vector<CalibrationArray> arrays = conv::parse_npz(bytes_of(npz), "cal.npz");
    ASSERT_EQ(arrays.size(), 2u);
    EXPECT_EQ(arrays[0].name, "x");
    EXPECT_EQ(arrays[0].tensor.shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(as_floats(arrays[0].tensor), a);
    EXPECT_EQ(arrays[1].name, "scope/y");
    EXPECT_EQ(as_floats(arrays[1].tensor), b);
  }
}

TEST(CalibrationFile, RefusesUnknownCompressionCorruptTruncatedAndEmpty) {
  const std::string member = npy_f32({1, 2}, {1, 2});
  // Deflate is read (tests/python: np.savez_compressed's own files); stored
  // bytes labelled deflate are not deflate data.
  NpzOptions deflate;
  deflate.method = 8;
  const std::string not_deflate =
      message_of([&] { conv::parse_npz(bytes_of(npz_bytes({{"x.npy", member}}, deflate)), "c.npz"); });
  EXPECT_NE(not_deflate.find("c.npz: member x.npy: corrupt deflate data"), std::string::npos) << not_deflate;
  NpzOptions bzip2;
  bzip2.method = 12;
  EXPECT_NE(message_of([&] { conv::parse_npz(bytes_of(npz_bytes({{"x.npy", member}}, bzip2)), "c.npz"); })
                .find("compression method 12 is not supported"),
            std::string::npos);
  NpzOptions corrupt;
  corrupt.corrupt_crc = true;
  EXPECT_NE(message_of([&] { conv::parse_npz(bytes_of(npz_bytes({{"x.npy", member}}, corrupt)), "c.npz"); })
                .find("CRC-32 mismatch"),
            std::string::npos);
  const std::string whole = npz_bytes({{"x.npy", member}});
  for (size_t cut : {size_t{10}, whole.size() / 2, whole.size() - 5}) {
    const std::string m = message_of([&] { conv::parse_npz(bytes_of(whole.substr(0, cut)), "c.npz"); });
    EXPECT_NE(m.find("c.npz"), std::string::npos) << m;
  }
  EXPECT_NE(message_of([&] { conv::parse_npz(bytes_of(npz_bytes({})), "c.npz"); }).find("empty calibration set"),
            std::string::npos);
  EXPECT_NE(message_of([&] { conv::parse_npz(bytes_of(npz_bytes({{"x.npy", member}, {"x.npy", member}})), "c.npz"); })
                .find("appears twice"),
            std::string::npos);
  // A member whose .npy is malformed names the member.
  const std::string m = message_of([&] { conv::parse_npz(bytes_of(npz_bytes({{"x.npy", "garbage"}})), "c.npz"); });
  EXPECT_NE(m.find("member x.npy"), std::string::npos) << m;
}

// Raw deflate (no zlib header), as zip method 8 holds it.
std::string raw_deflate(const std::string& data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// The uncompressed size in a zip header is untrusted: a few bytes claiming
// gigabytes are refused before anything is allocated (reserving the claimed
// size would let a tiny file exhaust memory), and a size that disagrees with
// the stream either way names which.
TEST(CalibrationFile, DeflatedMemberSizeIsCheckedNotTrusted) {
  const std::string member = npy_f32({64, 4}, std::vector<float>(256, 0.5f));  // compresses well
  const std::string deflated = raw_deflate(member);
  ASSERT_LT(deflated.size(), member.size());
  auto parse_claiming = [&](int64_t size) {
    NpzOptions o;
    o.method = 8;
    o.uncompressed_size = size;
    o.crc = zip_crc32(member);
    return conv::parse_npz(bytes_of(npz_bytes({{"x.npy", deflated}}, o)), "c.npz");
  };
  const std::vector<CalibrationArray> arrays = parse_claiming(static_cast<int64_t>(member.size()));
  ASSERT_EQ(arrays.size(), 1u);
  EXPECT_EQ(arrays[0].tensor.shape, (std::vector<int64_t>{64, 4}));
  EXPECT_EQ(as_floats(arrays[0].tensor), std::vector<float>(256, 0.5f));

  const std::string bomb = message_of([&] { parse_claiming(int64_t{0xfffffff0}); });
  EXPECT_NE(bomb.find("c.npz: member x.npy: claims 4294967280 bytes uncompressed from " +
                      std::to_string(deflated.size()) + " compressed, more than deflate can expand to"),
            std::string::npos)
      << bomb;
  const std::string longer = message_of([&] { parse_claiming(static_cast<int64_t>(member.size()) + 100); });
  EXPECT_NE(longer.find("shorter than the size its header gives"), std::string::npos) << longer;
  const std::string shorter = message_of([&] { parse_claiming(static_cast<int64_t>(member.size()) - 100); });
  EXPECT_NE(shorter.find("longer than the size its header gives"), std::string::npos) << shorter;
}

TEST(CalibrationFile, DirectoryOfNpyFilesAndEmptyDirectory) {
  const std::string dir = make_temp_dir();
  std::ofstream(dir + "/images.npy", std::ios::binary) << npy_f32({2, 2}, {1, 2, 3, 4});
  std::ofstream(dir + "/notes.txt") << "ignored";
  const std::vector<CalibrationArray> arrays = conv::read_calibration(dir);
  ASSERT_EQ(arrays.size(), 1u);
  EXPECT_EQ(arrays[0].name, "images");
  EXPECT_EQ(arrays[0].source, dir + "/images.npy");
  const std::string empty = make_temp_dir();
  EXPECT_NE(message_of([&] { conv::read_calibration(empty); }).find("no .npy files"), std::string::npos);
  EXPECT_NE(message_of([&] { conv::read_calibration(empty + "/missing.npz"); }).find("no such file"),
            std::string::npos);
}

// ---- matching arrays to inputs ----------------------------------------------

conv::LoweredModel one_input_model() {
  ModelBuilder b;
  const int x = b.input("images:0", {1, 4});
  b.output(b.op(schema::OpCode::RELU, {x}, {1, 4}));
  return b.model;
}

CalibrationArray array(const std::string& name, conv::HostTensor t) {
  CalibrationArray a;
  a.name = name;
  a.source = "cal.npz: member " + name + ".npy";
  a.tensor = std::move(t);
  return a;
}

TEST(CalibrationSamples, SplitsBatchesAndMatchesNames) {
  const conv::LoweredModel m = one_input_model();
  for (const char* name : {"images", "images:0", "images_0"}) {
    const std::vector<CalibrationSample> s =
        conv::calibration_samples(m, {array(name, random_f32({3, 4}, 1))});
    ASSERT_EQ(s.size(), 3u) << name;
    EXPECT_EQ(s[2][0].shape, (std::vector<int64_t>{1, 4}));
  }
}

TEST(CalibrationSamples, ABatchedModelTakesSamplesStackedAlongItsBatch) {
  ModelBuilder b;
  const int x = b.input("images:0", {3, 4});
  b.output(b.op(schema::OpCode::RELU, {x}, {3, 4}));
  const conv::HostTensor stacked = random_f32({6, 4}, 2);
  const std::vector<CalibrationSample> s = conv::calibration_samples(b.model, {array("images", stacked)});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1][0].shape, (std::vector<int64_t>{3, 4}));
  EXPECT_TRUE(std::equal(s[1][0].data.begin(), s[1][0].data.end(), stacked.data.begin() + 12 * 4));
  // 7 rows are not whole samples of a batch of 3.
  const std::string e = message_of([&] { conv::calibration_samples(b.model, {array("images", random_f32({7, 4}, 3))}); });
  EXPECT_NE(e.find("has shape [3,4], the array has shape [7,4] (expected samples of it stacked along the first dim)"),
            std::string::npos) << e;
}

TEST(CalibrationSamples, ALoneNpyFeedsTheOnlyInput) {
  const std::string dir = make_temp_dir();
  std::ofstream(dir + "/digits.npy", std::ios::binary) << npy_f32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  const std::vector<CalibrationArray> arrays = conv::read_calibration(dir + "/digits.npy");
  EXPECT_EQ(conv::calibration_samples(one_input_model(), arrays).size(), 2u);
  // In a directory the file name is the input name.
  EXPECT_NE(message_of([&] { conv::calibration_samples(one_input_model(), conv::read_calibration(dir)); })
                .find("'digits' is not a model input"),
            std::string::npos);
}

TEST(CalibrationSamples, SavezUnnamedArraysFeedTheInputsInOrder) {
  ModelBuilder b;
  const int x = b.input("images:0", {1, 4});
  const int y = b.input("scale:0", {1, 4});
  b.output(b.op(schema::OpCode::MUL, {x, y}, {1, 4}));
  const conv::HostTensor first = random_f32({2, 4}, 1), second = random_f32({2, 4}, 2);
  // np.savez(first, second) names them arr_0 and arr_1; listed in any order.
  const std::vector<CalibrationSample> s =
      conv::calibration_samples(b.model, {array("arr_1", second), array("arr_0", first)});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_TRUE(std::equal(s[1][0].data.begin(), s[1][0].data.end(), first.data.begin() + 16));
  EXPECT_TRUE(std::equal(s[1][1].data.begin(), s[1][1].data.end(), second.data.begin() + 16));
  // One model input: np.savez(x) feeds it.
  EXPECT_EQ(conv::calibration_samples(one_input_model(), {array("arr_0", first)}).size(), 2u);
  const std::string e = message_of([&] { conv::calibration_samples(one_input_model(), {array("arr_1", first)}); });
  EXPECT_NE(e.find("'arr_1' is not a model input (inputs: images:0; np.savez's unnamed arrays feed the inputs in "
                   "order)"),
            std::string::npos) << e;
}

TEST(CalibrationSamples, Float64IsRoundedToAFloat32InputWithANote) {
  conv::HostTensor f64;
  f64.dtype = DType::kFloat64;
  f64.shape = {2, 4};
  const double values[8] = {0.1, -2.5, 3.0, 1e-3, 7.25, -0.3, 1.0 / 3.0, 100.0};
  f64.data.resize(sizeof values);
  std::memcpy(f64.data.data(), values, sizeof values);
  std::vector<std::string> notes;
  const std::vector<CalibrationSample> s = conv::calibration_samples(one_input_model(), {array("images", f64)}, &notes);
  ASSERT_EQ(s.size(), 2u);
  ASSERT_EQ(s[1][0].dtype, DType::kFloat32);
  float got[4];
  std::memcpy(got, s[1][0].data.data(), sizeof got);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], static_cast<float>(values[4 + i]));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("cal.npz: member images.npy is float64; rounded to float32"), std::string::npos) << notes[0];
}

TEST(CalibrationSamples, WrongNameShapeDtypeOrEmptyNamesFileAndInput) {
  const conv::LoweredModel m = one_input_model();
  std::string e = message_of([&] { conv::calibration_samples(m, {array("image", random_f32({1, 4}, 1))}); });
  EXPECT_NE(e.find("cal.npz: member image.npy"), std::string::npos) << e;
  EXPECT_NE(e.find("'image' is not a model input (inputs: images:0)"), std::string::npos) << e;
  e = message_of([&] { conv::calibration_samples(m, {array("images", random_f32({1, 5}, 1))}); });
  EXPECT_NE(e.find("input 'images:0' has shape [1,4], the array has shape [1,5]"), std::string::npos) << e;
  conv::HostTensor ints;
  ints.dtype = DType::kInt32;
  ints.shape = {1, 4};
  ints.data.resize(16);
  e = message_of([&] { conv::calibration_samples(m, {array("images", ints)}); });
  EXPECT_NE(e.find("input 'images:0' is float32, the array is int32"), std::string::npos) << e;
  conv::HostTensor none;
  none.dtype = DType::kFloat32;
  none.shape = {0, 4};
  e = message_of([&] { conv::calibration_samples(m, {array("images", none)}); });
  EXPECT_NE(e.find("empty calibration set"), std::string::npos) << e;
  EXPECT_NE(e.find("cal.npz"), std::string::npos) << e;
}

// ---- parameters --------------------------------------------------------------

TEST(PostTraining, AsymmetricParametersAreTflites) {
  // min -1, max 3: scale 4/255, zero point round(-128 + 1 / (4/255)) = round(-64.25) = -64.
  conv::Quantization q = conv::asymmetric_int8(-1.0f, 3.0f);
  EXPECT_FLOAT_EQ(q.scale[0], 4.0f / 255.0f);
  EXPECT_EQ(q.zero_point[0], -64);
  q = conv::asymmetric_int8(0.5f, 2.0f);  // widened to [0, 2]
  EXPECT_FLOAT_EQ(q.scale[0], 2.0f / 255.0f);
  EXPECT_EQ(q.zero_point[0], -128);
  q = conv::asymmetric_int8(-3.0f, -1.0f);  // widened to [-3, 0]
  EXPECT_EQ(q.zero_point[0], 127);
  q = conv::asymmetric_int8(0.0f, 0.0f);  // never a zero scale
  EXPECT_GT(q.scale[0], 0.0f);
}

// ---- quantizing and running --------------------------------------------------

std::vector<CalibrationSample> random_samples(const conv::LoweredModel& m, int n, uint32_t seed, float lo = -2.0f,
                                              float hi = 2.0f) {
  std::vector<CalibrationSample> samples;
  for (int i = 0; i < n; ++i) {
    CalibrationSample s;
    for (int v : m.inputs) {
      s.push_back(random_f32(m.values[static_cast<size_t>(v)].shape, seed + static_cast<uint32_t>(i) * 7919u, lo, hi));
    }
    samples.push_back(std::move(s));
  }
  return samples;
}

struct Quantized {
  conv::LoweredModel model;
  conv::PostTrainingReport report;
  std::vector<conv::LayerSqnr> sqnr;
};

Quantized quantize(const conv::LoweredModel& float_model, const std::vector<CalibrationSample>& samples,
                   PostTrainingOptions options = {}) {
  Quantized q;
  q.model = float_model;
  const std::vector<conv::ValueRange> ranges = conv::calibrate(float_model, samples, options);
  q.report = conv::quantize_post_training(&q.model, ranges, options);
  conv::derive_int8_arithmetic(&q.model);
  q.sqnr = conv::measure_sqnr(float_model, q.model, samples);
  return q;
}

std::map<std::string, HostTensor> named(const conv::LoweredModel& m, const CalibrationSample& s) {
  std::map<std::string, HostTensor> inputs;
  for (size_t i = 0; i < m.inputs.size(); ++i) inputs[m.values[static_cast<size_t>(m.inputs[i])].name] = s[i];
  return inputs;
}

// The output's quantization step of the int8 model (its last QUANTIZE's or the output's own).
float output_step(const conv::LoweredModel& m) {
  for (const LoweredOp& op : m.ops) {
    if (op.opcode == schema::OpCode::DEQUANTIZE && op.outputs[0] == m.outputs[0]) {
      return m.values[static_cast<size_t>(op.inputs[0])].quantization.scale[0];
    }
  }
  return m.values[static_cast<size_t>(m.outputs[0])].quantization.scale.at(0);
}

// A small CNN: conv (+bias, relu) -> max pool -> reshape -> matmul (+bias) -> softmax.
conv::LoweredModel small_cnn() {
  ModelBuilder b;
  const int x = b.input("x:0", {1, 6, 6, 2});
  const int w = b.random_constant("w", {3, 3, 2, 4}, 11, -0.5f, 0.5f);
  const int bias = b.random_constant("b", {4}, 12, -0.2f, 0.2f);
  schema::Conv2DOptionsT co;
  co.activation = schema::Activation::RELU;
  const int c = b.op(schema::OpCode::CONV2D, {x, w, bias}, {1, 4, 4, 4}, ModelBuilder::options(co), "conv");
  schema::Pool2DOptionsT po;
  po.filter_h = po.filter_w = po.stride_h = po.stride_w = 2;
  const int p = b.op(schema::OpCode::MAX_POOL2D, {c}, {1, 2, 2, 4}, ModelBuilder::options(po), "pool");
  const int r = b.op(schema::OpCode::RESHAPE, {p}, {1, 16}, {}, "flatten");
  const int fw = b.random_constant("fc_w", {16, 5}, 13, -0.6f, 0.6f);
  const int fb = b.random_constant("fc_b", {5}, 14, -0.1f, 0.1f);
  schema::MatMulOptionsT mo;
  const int logits = b.op(schema::OpCode::MATMUL, {r, fw, fb}, {1, 5}, ModelBuilder::options(mo), "fc");
  schema::SoftmaxOptionsT so;
  b.output(b.op(schema::OpCode::SOFTMAX, {logits}, {1, 5}, ModelBuilder::options(so), "softmax"));
  return b.model;
}

TEST(PostTraining, SmallCnnRunsInt8WithinAFewStepsOfFloat) {
  const conv::LoweredModel f = small_cnn();
  const Quantized q = quantize(f, random_samples(f, 32, 100));
  // Structure: one QUANTIZE after the float input, one DEQUANTIZE before the float output.
  ASSERT_GE(q.model.ops.size(), 2u);
  EXPECT_EQ(q.model.ops.front().opcode, schema::OpCode::QUANTIZE);
  EXPECT_EQ(q.model.ops.back().opcode, schema::OpCode::DEQUANTIZE);
  EXPECT_EQ(count_ops(q.model, schema::OpCode::QUANTIZE), 1);
  EXPECT_EQ(count_ops(q.model, schema::OpCode::DEQUANTIZE), 1);
  EXPECT_EQ(q.report.int8_ops, 5);
  EXPECT_TRUE(q.report.float_ops.empty());
  EXPECT_EQ(q.model.values[static_cast<size_t>(q.model.inputs[0])].dtype, DType::kFloat32);
  EXPECT_EQ(q.model.values[static_cast<size_t>(q.model.outputs[0])].name, "softmax:0");
  for (const LoweredOp& op : q.model.ops) {
    if (op.opcode == schema::OpCode::CONV2D) {
      const conv::Value& w = q.model.values[static_cast<size_t>(op.inputs[1])];
      EXPECT_EQ(w.dtype, DType::kInt8);
      EXPECT_EQ(w.quantization.dimension, 3);  // HWIO output channels
      EXPECT_EQ(w.quantization.scale.size(), 4u);
      int8_t lowest = 0;
      for (int64_t i = 0; i < w.constant->num_elements(); ++i) lowest = std::min(lowest, w.constant->as<int8_t>()[i]);
      EXPECT_GE(lowest, -127);  // narrow range
      EXPECT_EQ(q.model.values[static_cast<size_t>(op.inputs[2])].dtype, DType::kInt32);
    }
    if (op.opcode == schema::OpCode::MATMUL) {
      const conv::Value& w = q.model.values[static_cast<size_t>(op.inputs[1])];
      EXPECT_EQ(w.shape, (std::vector<int64_t>{5, 16}));  // [N, K] per output column
      EXPECT_EQ(w.quantization.scale.size(), 5u);
      EXPECT_EQ(w.quantization.dimension, 0);
    }
    if (op.opcode == schema::OpCode::SOFTMAX) {
      const conv::Quantization& out = q.model.values[static_cast<size_t>(op.outputs[0])].quantization;
      EXPECT_EQ(out.scale[0], 1.0f / 256.0f);
      EXPECT_EQ(out.zero_point[0], -128);
    }
    if (op.opcode == schema::OpCode::MAX_POOL2D) {  // shares its input's quantization
      EXPECT_EQ(q.model.values[static_cast<size_t>(op.inputs[0])].quantization.scale,
                q.model.values[static_cast<size_t>(op.outputs[0])].quantization.scale);
    }
  }
  // Held-out inputs: within a few output steps of float.
  const float step = output_step(q.model);
  for (const CalibrationSample& s : random_samples(f, 8, 900)) {
    const std::vector<HostTensor> want = run_model(conv::plan_and_emit(f, "float"), named(f, s));
    const std::vector<HostTensor> got = run_model(conv::plan_and_emit(q.model, "int8"), named(q.model, s));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_LE(max_abs_diff(as_floats(want[0]), as_floats(got[0])), 4 * step);
  }
  ASSERT_EQ(q.sqnr.size(), 5u);  // conv, pool, flatten, fc, softmax
  for (const conv::LayerSqnr& l : q.sqnr) EXPECT_GT(l.sqnr_db, 25.0) << l.node;
}

TEST(PostTraining, OpsWithoutInt8KernelStayFloatBetweenDequantizeAndQuantize) {
  ModelBuilder b;
  const int x = b.input("x:0", {1, 8});
  const int w = b.random_constant("w", {8, 8}, 3);
  const int h = b.op(schema::OpCode::MATMUL, {x, w}, {1, 8}, ModelBuilder::options(schema::MatMulOptionsT{}), "fc1");
  const int e = b.op(schema::OpCode::EXP, {h}, {1, 8}, {}, "exp");
  const int w2 = b.random_constant("w2", {8, 3}, 4);
  const int y = b.op(schema::OpCode::MATMUL, {e, w2}, {1, 3}, ModelBuilder::options(schema::MatMulOptionsT{}), "fc2");
  const int n = b.op(schema::OpCode::NEG, {y}, {1, 3}, {}, "neg");
  b.output(n);
  const conv::LoweredModel f = b.model;
  const std::vector<CalibrationSample> samples = random_samples(f, 16, 7, -1.0f, 1.0f);
  const Quantized q = quantize(f, samples);
  std::vector<schema::OpCode> codes;
  for (const LoweredOp& op : q.model.ops) codes.push_back(op.opcode);
  using C = schema::OpCode;
  EXPECT_EQ(codes, (std::vector<C>{C::QUANTIZE, C::MATMUL, C::DEQUANTIZE, C::EXP, C::QUANTIZE, C::MATMUL,
                                   C::DEQUANTIZE, C::NEG}));
  EXPECT_EQ(q.report.float_ops, (std::vector<std::string>{"exp (EXP)", "neg (NEG)"}));
  const std::vector<HostTensor> want = run_model(conv::plan_and_emit(f, "float"), named(f, samples[0]));
  const std::vector<HostTensor> got = run_model(conv::plan_and_emit(q.model, "int8"), named(q.model, samples[0]));
  const float step = q.model.values[static_cast<size_t>(q.model.ops[6].inputs[0])].quantization.scale[0];
  EXPECT_LE(max_abs_diff(as_floats(want[0]), as_floats(got[0])), 4 * step);

  // int8 io: the float input and output ops get a DEQUANTIZE before / a
  // QUANTIZE after them instead.
  ModelBuilder b2;
  const int x2 = b2.input("x:0", {1, 8});
  const int e2 = b2.op(schema::OpCode::EXP, {x2}, {1, 8}, {}, "exp");
  const int h2 = b2.op(schema::OpCode::MATMUL, {e2, b2.random_constant("w", {8, 3}, 3)}, {1, 3},
                       ModelBuilder::options(schema::MatMulOptionsT{}), "fc");
  b2.output(b2.op(schema::OpCode::NEG, {h2}, {1, 3}, {}, "neg"));
  PostTrainingOptions int8_io;
  int8_io.int8_io = true;
  const Quantized qi = quantize(b2.model, random_samples(b2.model, 16, 8, -1.0f, 1.0f), int8_io);
  codes.clear();
  for (const LoweredOp& op : qi.model.ops) codes.push_back(op.opcode);
  EXPECT_EQ(codes, (std::vector<C>{C::DEQUANTIZE, C::EXP, C::QUANTIZE, C::MATMUL, C::DEQUANTIZE, C::NEG, C::QUANTIZE}));
  EXPECT_EQ(qi.model.values[static_cast<size_t>(qi.model.inputs[0])].dtype, DType::kInt8);
  EXPECT_EQ(qi.model.values[static_cast<size_t>(qi.model.outputs[0])].dtype, DType::kInt8);
  EXPECT_EQ(qi.model.values[static_cast<size_t>(qi.model.outputs[0])].name, "neg:0");

  // --strict-int8: one refusal listing both.
  PostTrainingOptions strict;
  strict.strict = true;
  conv::LoweredModel m = f;
  try {
    conv::quantize_post_training(&m, conv::calibrate(f, samples, strict), strict);
    ADD_FAILURE() << "strict quantization accepted EXP and NEG";
  } catch (const ConvertError& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("2 op(s) have no int8 kernel"), std::string::npos) << what;
    EXPECT_NE(what.find("exp (EXP)"), std::string::npos) << what;
    EXPECT_NE(what.find("neg (NEG)"), std::string::npos) << what;
    EXPECT_EQ(error.category(), conv::ErrorCategory::kUnsupported);
  }
}

TEST(PostTraining, Int8InputsAndOutputsCarryTheirQuantization) {
  const conv::LoweredModel f = small_cnn();
  PostTrainingOptions o;
  o.int8_io = true;
  const Quantized q = quantize(f, random_samples(f, 16, 5), o);
  EXPECT_EQ(count_ops(q.model, schema::OpCode::QUANTIZE), 0);
  EXPECT_EQ(count_ops(q.model, schema::OpCode::DEQUANTIZE), 0);
  const conv::Value& in = q.model.values[static_cast<size_t>(q.model.inputs[0])];
  const conv::Value& out = q.model.values[static_cast<size_t>(q.model.outputs[0])];
  EXPECT_EQ(in.dtype, DType::kInt8);
  EXPECT_EQ(in.name, "x:0");
  EXPECT_EQ(in.quantization.scale.size(), 1u);
  EXPECT_EQ(out.dtype, DType::kInt8);
  EXPECT_EQ(out.name, "softmax:0");
  EXPECT_EQ(out.quantization.scale[0], 1.0f / 256.0f);
  // The int8 model's probabilities match float within a few steps.
  const CalibrationSample s = random_samples(f, 1, 77)[0];
  HostTensor qin;
  qin.dtype = DType::kInt8;
  qin.shape = in.shape;
  for (float v : as_floats(s[0])) {
    qin.data.push_back(static_cast<uint8_t>(static_cast<int8_t>(std::clamp<long>(
        std::lround(v / in.quantization.scale[0]) + in.quantization.zero_point[0], -128, 127))));
  }
  const std::vector<HostTensor> got = run_model(conv::plan_and_emit(q.model, "int8"), {{"x:0", qin}});
  const std::vector<float> want = as_floats(run_model(conv::plan_and_emit(f, "float"), named(f, s))[0]);
  ASSERT_EQ(got.size(), 1u);
  for (size_t i = 0; i < want.size(); ++i) {
    const float real = (reinterpret_cast<const int8_t*>(got[0].data.data())[i] + 128) / 256.0f;
    EXPECT_NEAR(real, want[i], 3.0f / 256.0f);
  }
}

TEST(PostTraining, AddReluFoldsAndConcatSharesOneRange) {
  ModelBuilder b;
  const int x = b.input("x:0", {1, 4});
  const int y = b.input("y:0", {1, 4});
  const int s = b.op(schema::OpCode::ADD, {x, y}, {1, 4}, {}, "add");
  const int r = b.op(schema::OpCode::RELU, {s}, {1, 4}, {}, "relu");
  schema::ConcatOptionsT co;
  co.axis = 1;
  b.output(b.op(schema::OpCode::CONCAT, {r, y}, {1, 8}, ModelBuilder::options(co), "concat"));
  const conv::LoweredModel f = b.model;
  conv::LoweredModel m = f;
  const std::vector<CalibrationSample> samples = random_samples(f, 16, 9);
  const conv::PostTrainingReport report = conv::quantize_post_training(&m, conv::calibrate(f, samples, {}), {});
  EXPECT_TRUE(report.float_ops.empty());
  const conv::Int8ArithmeticStats stats = conv::derive_int8_arithmetic(&m);
  EXPECT_EQ(stats.folded_activations, 1);
  EXPECT_EQ(count_ops(m, schema::OpCode::RELU), 0);
  for (const LoweredOp& op : m.ops) {
    if (op.opcode != schema::OpCode::CONCAT) continue;
    for (int v : op.inputs) {
      EXPECT_EQ(m.values[static_cast<size_t>(v)].quantization.scale,
                m.values[static_cast<size_t>(op.outputs[0])].quantization.scale);
    }
  }
  const std::vector<HostTensor> want = run_model(conv::plan_and_emit(f, "float"), named(f, samples[3]));
  const std::vector<HostTensor> got = run_model(conv::plan_and_emit(m, "int8"), named(m, samples[3]));
  EXPECT_LE(max_abs_diff(as_floats(want[0]), as_floats(got[0])), 3 * output_step(m));
}

// PAD -> AVG_POOL -> LOGISTIC, TANH -> MUL -> SUB const -> MAXIMUM (no int8
// kernel in the runtime: left float), CONCAT with the logistic output
// (requantized onto the concat's range) -> MEAN.
TEST(PostTraining, EveryInt8OpKindFollowsTflitesRules) {
  ModelBuilder b;
  using C = schema::OpCode;
  const int x = b.input("x:0", {1, 4, 4, 3});
  schema::PadOptionsT pad;
  pad.paddings = {0, 0, 1, 1, 1, 1, 0, 0};
  const int p = b.op(C::PAD, {x}, {1, 6, 6, 3}, ModelBuilder::options(pad), "pad");
  schema::Pool2DOptionsT pool;
  pool.filter_h = pool.filter_w = pool.stride_h = pool.stride_w = 2;
  const int a = b.op(C::AVG_POOL2D, {p}, {1, 3, 3, 3}, ModelBuilder::options(pool), "avg");
  const int sg = b.op(C::SIGMOID, {a}, {1, 3, 3, 3}, {}, "sigmoid");
  const int th = b.op(C::TANH, {a}, {1, 3, 3, 3}, {}, "tanh");
  const int mu = b.op(C::MUL, {sg, th}, {1, 3, 3, 3}, {}, "mul");
  const int su = b.op(C::SUB, {mu, b.constant("c", {3}, {0.1f, -0.2f, 0.3f})}, {1, 3, 3, 3}, {}, "sub");
  b.output(b.op(C::MAXIMUM, {su, mu}, {1, 3, 3, 3}, {}, "max"));
  schema::ConcatOptionsT cat;
  cat.axis = 3;
  const int k = b.op(C::CONCAT, {su, sg}, {1, 3, 3, 6}, ModelBuilder::options(cat), "concat");
  schema::ReduceOptionsT mean;
  mean.axes = {1, 2};
  b.output(b.op(C::MEAN, {k}, {1, 6}, ModelBuilder::options(mean), "mean"));
  const conv::LoweredModel f = b.model;
  const Quantized q = quantize(f, random_samples(f, 64, 17, -3.0f, 3.0f));
  EXPECT_EQ(q.report.float_ops, std::vector<std::string>{"max (MAXIMUM)"});
  EXPECT_EQ(q.report.int8_ops, 8);
  EXPECT_EQ(count_ops(q.model, C::QUANTIZE), 2);  // the input, and the logistic output onto the concat's range
  EXPECT_EQ(count_ops(q.model, C::DEQUANTIZE), 3);  // MAXIMUM's two inputs, MEAN's output
  const auto quantization_of = [&](const std::string& name) {
    for (const conv::Value& v : q.model.values)
      if (v.name == name) return v.quantization;
    ADD_FAILURE() << name;
    return conv::Quantization{};
  };
  EXPECT_EQ(quantization_of("sigmoid:0").scale, std::vector<float>{1.0f / 256.0f});
  EXPECT_EQ(quantization_of("tanh:0").scale, std::vector<float>{1.0f / 128.0f});
  EXPECT_EQ(quantization_of("pad:0").scale, quantization_of("x:0/quantized").scale);
  EXPECT_EQ(quantization_of("avg:0").scale, quantization_of("x:0/quantized").scale);
  EXPECT_EQ(quantization_of("sigmoid:0/requantized").scale, quantization_of("concat:0").scale);
  EXPECT_EQ(quantization_of("sub:0").scale, quantization_of("concat:0").scale);
  for (const CalibrationSample& s : random_samples(f, 4, 300, -3.0f, 3.0f)) {
    const std::vector<HostTensor> want = run_model(conv::plan_and_emit(f, "float"), named(f, s));
    const std::vector<HostTensor> got = run_model(conv::plan_and_emit(q.model, "int8"), named(q.model, s));
    ASSERT_EQ(got.size(), 2u);
    EXPECT_LE(max_abs_diff(as_floats(want[0]), as_floats(got[0])), 4 * quantization_of("sub:0").scale[0]);
    EXPECT_LE(max_abs_diff(as_floats(want[1]), as_floats(got[1])), 4 * quantization_of("mean:0/int8").scale[0]);
  }
}

// Tiny inputs and weights with a large bias: at input_scale * weight_scale
// the bias would overflow int32, so that channel's weight scale grows instead.
TEST(PostTraining, ABiasTooLargeForInt32EnlargesItsWeightScale) {
  ModelBuilder b;
  const int x = b.input("x:0", {1, 4});
  const int w = b.constant("w", {4, 2}, {1e-3f, 2e-3f, -1e-3f, 1e-3f, 2e-3f, -2e-3f, 1e-3f, 1e-3f});
  const int bias = b.constant("b", {2}, {100.0f, 0.01f});
  b.output(b.op(schema::OpCode::MATMUL, {x, w, bias}, {1, 2}, ModelBuilder::options(schema::MatMulOptionsT{}), "fc"));
  const conv::LoweredModel f = b.model;
  const std::vector<CalibrationSample> samples = random_samples(f, 16, 4, -1e-3f, 1e-3f);
  const Quantized q = quantize(f, samples);
  const LoweredOp* fc = nullptr;
  for (const LoweredOp& op : q.model.ops)
    if (op.opcode == schema::OpCode::MATMUL) fc = &op;
  ASSERT_NE(fc, nullptr);
  const conv::Quantization& wq = q.model.values[static_cast<size_t>(fc->inputs[1])].quantization;
  EXPECT_FLOAT_EQ(wq.scale[1], 2e-3f / 127.0f);  // its bias fits: max|w| / 127
  EXPECT_GT(wq.scale[0], 2e-3f / 127.0f);        // enlarged
  const int32_t* qbias = q.model.values[static_cast<size_t>(fc->inputs[2])].constant->as<int32_t>();
  EXPECT_LE(std::abs(static_cast<int64_t>(qbias[0])), (int64_t{1} << 30) + 64);  // half the int32 range
  const std::vector<HostTensor> want = run_model(conv::plan_and_emit(f, "float"), named(f, samples[0]));
  const std::vector<HostTensor> got = run_model(conv::plan_and_emit(q.model, "int8"), named(q.model, samples[0]));
  EXPECT_NEAR(as_floats(got[0])[0], as_floats(want[0])[0], 3 * output_step(q.model));
}

TEST(PostTraining, DepthwiseWeightsArePerChannelAlongTheirOutputAxis) {
  for (const bool multiplier : {false, true}) {
    ModelBuilder b;
    const int channels = multiplier ? 1 : 3, mult = multiplier ? 3 : 1;
    const int x = b.input("x:0", {1, 5, 5, channels});
    const int w = b.random_constant("w", {3, 3, channels, mult}, 21);
    schema::DepthwiseConv2DOptionsT o;
    o.depth_multiplier = mult;
    b.output(b.op(schema::OpCode::DEPTHWISE_CONV2D, {x, w}, {1, 3, 3, 3}, ModelBuilder::options(o), "dw"));
    const conv::LoweredModel f = b.model;
    const std::vector<CalibrationSample> samples = random_samples(f, 8, 31);
    const Quantized q = quantize(f, samples);
    for (const LoweredOp& op : q.model.ops) {
      if (op.opcode != schema::OpCode::DEPTHWISE_CONV2D) continue;
      const conv::Quantization& wq = q.model.values[static_cast<size_t>(op.inputs[1])].quantization;
      EXPECT_EQ(wq.scale.size(), 3u);
      EXPECT_EQ(wq.dimension, multiplier ? 3 : 2);
    }
    const std::vector<HostTensor> want = run_model(conv::plan_and_emit(f, "float"), named(f, samples[0]));
    const std::vector<HostTensor> got = run_model(conv::plan_and_emit(q.model, "int8"), named(q.model, samples[0]));
    EXPECT_LE(max_abs_diff(as_floats(want[0]), as_floats(got[0])), 3 * output_step(q.model));
  }
}

TEST(PostTraining, NanDuringCalibrationIsAnError) {
  ModelBuilder b;
  const int x = b.input("x:0", {1, 4});
  b.output(b.op(schema::OpCode::SQRT, {x}, {1, 4}, {}, "root"));
  const std::string e = message_of([&] { conv::calibrate(b.model, random_samples(b.model, 2, 1, -1.0f, 1.0f), {}); });
  EXPECT_NE(e.find("'root:0' is NaN on calibration sample 0 (computed by root (SQRT))"), std::string::npos) << e;
}

TEST(PostTraining, PercentileIgnoresARareOutlier) {
  const conv::LoweredModel m = one_input_model();
  // 20,000 values: the 99.99th percentile of |value| lies below the one outlier.
  std::vector<CalibrationSample> samples = random_samples(m, 5000, 3, -1.0f, 1.0f);
  samples[5][0].as<float>()[2] = 100.0f;
  const std::vector<conv::ValueRange> minmax = conv::calibrate(m, samples, {});
  PostTrainingOptions o;
  o.method = conv::CalibrationMethod::kPercentile;
  const std::vector<conv::ValueRange> clipped = conv::calibrate(m, samples, o);
  const int input = m.inputs[0];
  EXPECT_EQ(minmax[static_cast<size_t>(input)].max, 100.0f);
  EXPECT_LT(clipped[static_cast<size_t>(input)].max, 1.01f);  // histogram bins of 100 / 16384
  EXPECT_GT(clipped[static_cast<size_t>(input)].max, 0.99f);
  EXPECT_LT(clipped[static_cast<size_t>(input)].min, -0.99f);  // the negative side had no outlier
}

}  // namespace
}  // namespace floe::testing

namespace floe::testing {
namespace {

// The fuzz_calibration seeds are this writer's output (never copied from
// elsewhere): FLOE_WRITE_FUZZ_SEEDS=1 rewrites them, otherwise they must match.
TEST(CalibrationFile, FuzzSeedsAreTheWritersOutput) {
  const std::string dir = std::string(FLOE_SOURCE_DIR) + "/tests/fuzz/corpus/fuzz_calibration/";
  const std::string batch = npy_f32({3, 4}, {0.5f, -1, 2, 0, 1, 1, -3, 0.25f, 0, 0, 0, 0});
  NpzOptions plain;
  plain.zip64_local_extra = false;
  NpzOptions deflate;
  deflate.method = 8;
  const std::vector<std::pair<std::string, std::string>> seeds = {
      {"savez.npz", npz_bytes({{"x.npy", batch}})},
      {"savez_no_zip64.npz", npz_bytes({{"x.npy", batch}}, plain)},
      {"two_members.npz", npz_bytes({{"x.npy", batch}, {"extra.npy", npy_f32({1}, {1})}})},
      {"compressed.npz", npz_bytes({{"x.npy", batch}}, deflate)},
      {"one_sample.npy", npy_f32({1, 4}, {1, 2, 3, 4})},
  };
  const bool write = std::getenv("FLOE_WRITE_FUZZ_SEEDS") != nullptr;
  for (const auto& [name, bytes] : seeds) {
    if (write) std::ofstream(dir + name, std::ios::binary) << bytes;
    std::ifstream in(dir + name, std::ios::binary);
    const std::string committed((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(committed, bytes) << name << " differs from the writer's output (FLOE_WRITE_FUZZ_SEEDS=1 rewrites it)";
  }
  // The accepted seeds do reach the quantizer.
  EXPECT_EQ(conv::parse_npz(bytes_of(seeds[0].second), "savez.npz").size(), 1u);
}

}  // namespace
}  // namespace floe::testing

#include "tests/converter/support/tf1_test_util.h"

namespace floe::testing {
namespace {

std::string float_values(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-0.8f, 0.8f);
  std::string s;
  for (int i = 0; i < n; ++i) s += "float_val: " + std::to_string(d(rng)) + " ";
  return s;
}

// x [1,6] -> MatMul -> Add bias -> Relu -> MatMul -> Exp: the first layer
// fuses into one int8 MATMUL, Exp has no int8 kernel.
conv::ConvertOptions tf_graph_with_exp(const std::string& calibration) {
  const std::string pbtxt =
      placeholder("x", "DT_FLOAT", "dim { size: 1 } dim { size: 6 }") +
      float_const("w1", "dim { size: 6 } dim { size: 5 }", float_values(30, 1)) +
      float_const("b1", "dim { size: 5 }", float_values(5, 2)) +
      float_const("w2", "dim { size: 5 } dim { size: 3 }", float_values(15, 3)) +
      binary("h", "MatMul", "x", "w1") + binary("hb", "Add", "h", "b1") + unary("r", "Relu", "hb") +
      binary("y", "MatMul", "r", "w2") + unary("e", "Exp", "y");
  conv::ConvertOptions options = text_graph_options(pbtxt, {"e"});
  options.target = "reference";
  options.quantize_int8 = true;
  options.calibration_path = calibration;
  return options;
}

TEST(PostTrainingGraph, TfGraphQuantizesWithExpLeftFloat) {
  const std::string dir = make_temp_dir();
  std::vector<float> batch;
  for (int i = 0; i < 200; ++i) {
    for (float v : as_floats(random_f32({1, 6}, 40u + static_cast<uint32_t>(i), -1.0f, 1.0f))) batch.push_back(v);
  }
  const std::string npz = dir + "/cal.npz";
  std::ofstream(npz, std::ios::binary) << npz_bytes({{"x.npy", npy_f32({200, 6}, batch)}});
  const ConvertOutcome q = try_convert(tf_graph_with_exp(npz));
  ASSERT_TRUE(q.error.empty()) << q.error;
  EXPECT_TRUE(contains(q.summary, "calibrated on 200 sample(s); 2 op(s) int8, 1 QUANTIZE and 1 DEQUANTIZE inserted"))
      << q.summary;
  EXPECT_TRUE(contains(q.summary, "left float (no int8 kernel), between DEQUANTIZE and QUANTIZE: e (EXP)")) << q.summary;
  EXPECT_TRUE(contains(q.summary, "ops (5): DEQUANTIZE x1 EXP x1 MATMUL x2 QUANTIZE x1")) << q.summary;
  conv::ConvertOptions float_options = tf_graph_with_exp("");
  float_options.quantize_int8 = false;
  const ConvertOutcome f = try_convert(float_options);
  ASSERT_TRUE(f.error.empty()) << f.error;
  for (uint32_t seed : {500u, 501u, 502u}) {
    const HostTensor x = random_f32({1, 6}, seed, -1.0f, 1.0f);
    const std::vector<float> want = as_floats(run_model(f.model, {{"x", x}}).at(0));
    const std::vector<float> got = as_floats(run_model(q.model, {{"x", x}}).at(0));
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 0.05f * want[i] + 0.02f);
  }
  conv::ConvertOptions strict = tf_graph_with_exp(npz);
  strict.post_training.strict = true;
  const ConvertOutcome refused = try_convert(strict);
  EXPECT_TRUE(contains(refused.error, "--strict-int8: 1 op(s) have no int8 kernel and would stay float:\n  e (EXP)"))
      << refused.error;
}

}  // namespace
}  // namespace floe::testing

#include "tests/converter/support/tflite_builder.h"

namespace floe::testing {
namespace {

// A float .tflite FULLY_CONNECTED (weights [N, K], read with transpose_b) +
// RELU -> SOFTMAX quantizes like a TF graph; an int8 .tflite is refused.
TEST(PostTrainingGraph, FloatTfliteQuantizes) {
  TfliteBuilder b;
  std::vector<float> w;
  for (float v : as_floats(random_f32({3, 6}, 61, -0.7f, 0.7f))) w.push_back(v);
  const int x = b.tensor({{1, 6}, kTflFloat32, {}, "x"});
  const int f = b.tensor({{3, 6}, kTflFloat32, raw(w), "w"});
  const int c = b.tensor({{3}, kTflFloat32, raw(std::vector<float>{0.1f, -0.2f, 0.3f}), "b"});
  const int h = b.tensor({{1, 3}, kTflFloat32, {}, "h"});
  const int y = b.tensor({{1, 3}, kTflFloat32, {}, "y"});
  b.op({9, {x, f, c}, {h}, tfl::BuiltinOptions::FullyConnectedOptions, fc_options(1)});
  b.op({25, {h}, {y}, tfl::BuiltinOptions::SoftmaxOptions,
        [](flatbuffers::FlatBufferBuilder& fb) { return tfl::CreateSoftmaxOptions(fb, 1.0f).Union(); }});
  b.inputs = {x};
  b.outputs = {y};
  const std::string dir = make_temp_dir();
  const std::string model = dir + "/m.tflite";
  std::ofstream(model, std::ios::binary) << b.build();
  std::vector<float> batch;
  for (int i = 0; i < 64; ++i) {
    for (float v : as_floats(random_f32({1, 6}, 70u + static_cast<uint32_t>(i), -1.0f, 1.0f))) batch.push_back(v);
  }
  std::ofstream(dir + "/x.npy", std::ios::binary) << npy_f32({64, 6}, batch);
  conv::ConvertOptions options;
  options.graph_path = model;
  options.target = "reference";
  const ConvertOutcome f32 = try_convert(options);
  ASSERT_TRUE(f32.error.empty()) << f32.error;
  options.quantize_int8 = true;
  options.calibration_path = dir;
  const ConvertOutcome q = try_convert(options);
  ASSERT_TRUE(q.error.empty()) << q.error;
  EXPECT_TRUE(contains(q.summary, "2 op(s) int8, 1 QUANTIZE and 1 DEQUANTIZE inserted")) << q.summary;
  for (uint32_t seed : {800u, 801u}) {
    const HostTensor in = random_f32({1, 6}, seed, -1.0f, 1.0f);
    const std::vector<float> want = as_floats(run_model(f32.model, {{"x", in}}).at(0));
    const std::vector<float> got = as_floats(run_model(q.model, {{"x", in}}).at(0));
    EXPECT_LE(max_abs_diff(want, got), 4.0f / 256.0f);
  }
  // Its own int8 output, fed back as a .tflite, is already quantized: refused.
  TfliteBuilder qb;
  const int qx = qb.tensor({{1, 4}, kTflInt8, {}, "x", {0.1f}, {0}});
  const int qy = qb.tensor({{1, 4}, kTflInt8, {}, "y", {0.1f}, {0}});
  qb.op({19, {qx}, {qy}});  // RELU
  qb.inputs = {qx};
  qb.outputs = {qy};
  std::ofstream(model, std::ios::binary) << qb.build();
  EXPECT_TRUE(contains(try_convert(options).error, "already quantized"));
}

}  // namespace
}  // namespace floe::testing
