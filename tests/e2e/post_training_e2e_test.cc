// SPDX-License-Identifier: Apache-2.0
// floe-convert --quantize int8 end to end: the MNIST example quantized from a
// calibration .npz, run on the runtime, compared with the float model; and
// every bad calibration input refused with exit 2, a message naming the file
// and the input, and no output file.
//
// Calibration data: the example's training set (scikit-learn's digits) is not
// part of the repository and scikit-learn may be absent, so the set is made
// here, deterministically, from the three held-out digits: each shifted by up
// to 2 pixels with seeded uniform noise. The held-out check therefore runs on
// the original digits (which calibration saw only shifted and noisy) and on
// differently seeded variants; it is a fidelity check of the int8 model
// against float, not an accuracy measurement.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <regex>

#include "runtime/tools/npy.h"
#include "tests/support/model_runner.h"
#include "tests/support/npz_writer.h"

namespace floe::testing {
namespace {

const std::string kMnist = std::string(FLOE_SOURCE_DIR) + "/examples/mnist_mlp/model/";
const std::string kConvert = "--graph " + kMnist + "mnist_mlp.meta --outputs softmax_linear/add";

std::vector<float> digit(int label) {
  const tools::NpyArray a = tools::read_npy(kMnist + "digit_" + std::to_string(label) + ".npy");
  const float* p = reinterpret_cast<const float*>(a.data.data());
  return std::vector<float>(p, p + 784);
}

// The digit moved by (dy, dx) pixels on its 28x28 grid, plus noise in [-amount, amount], clipped to [0, 1].
std::vector<float> variant(const std::vector<float>& image, int dy, int dx, float amount, std::mt19937* rng) {
  std::uniform_real_distribution<float> noise(-amount, amount);
  std::vector<float> out(784, 0.0f);
  for (int y = 0; y < 28; ++y) {
    for (int x = 0; x < 28; ++x) {
      const int sy = y - dy, sx = x - dx;
      const float v = sy >= 0 && sy < 28 && sx >= 0 && sx < 28 ? image[static_cast<size_t>(sy * 28 + sx)] : 0.0f;
      out[static_cast<size_t>(y * 28 + x)] = std::clamp(v + noise(*rng), 0.0f, 1.0f);
    }
  }
  return out;
}

std::vector<std::vector<float>> variants(int per_digit, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> shift(-2, 2);
  std::vector<std::vector<float>> out;
  for (int label : {3, 7, 9}) {
    const std::vector<float> image = digit(label);
    for (int i = 0; i < per_digit; ++i) {
      const int dy = shift(rng), dx = shift(rng);
      out.push_back(variant(image, dy, dx, 0.15f, &rng));
    }
  }
  return out;
}

std::string write_npz(const std::string& dir, const std::string& name,
                      const std::vector<std::pair<std::string, std::string>>& members) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << npz_bytes(members);
  return path;
}

std::string batch_npy(const std::vector<std::vector<float>>& images) {
  std::vector<float> flat;
  for (const auto& image : images) flat.insert(flat.end(), image.begin(), image.end());
  return npy_f32({static_cast<int64_t>(images.size()), 784}, flat);
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

HostTensor image_tensor(const std::vector<float>& image) { return make_f32({1, 784}, image); }

int argmax(const std::vector<float>& v) { return static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin()); }

TEST(PostTrainingE2E, MnistQuantizesPredictsLikeFloatAndShrinks) {
  const std::string dir = make_temp_dir();
  const std::string npz = write_npz(dir, "calibration.npz", {{"images.npy", batch_npy(variants(16, 2024))}});
  const CommandResult f = run_command(tool_path("floe-convert") + " " + kConvert + " -o " + dir + "/float.floe");
  ASSERT_EQ(f.exit_code, 0) << f.output;
  const CommandResult q = run_command(tool_path("floe-convert") + " " + kConvert + " --quantize int8 --calibration " +
                                      npz + " -o " + dir + "/int8.floe");
  ASSERT_EQ(q.exit_code, 0) << q.output;
  std::cout << q.output;  // the per-layer SQNR, for the record
  EXPECT_NE(q.output.find("calibrated on 48 sample(s); 3 op(s) int8"), std::string::npos) << q.output;
  EXPECT_NE(q.output.find("no op left float"), std::string::npos) << q.output;
  // One SQNR line per dense layer, each well above the noise floor.
  const std::regex sqnr_re("SQNR ([0-9.]+) dB  ([a-z_0-9/]+)/MatMul \\(MATMUL\\)");
  int layers = 0;
  for (auto it = std::sregex_iterator(q.output.begin(), q.output.end(), sqnr_re); it != std::sregex_iterator(); ++it) {
    EXPECT_GT(std::stod((*it)[1]), 30.0) << (*it)[2];
    ++layers;
  }
  EXPECT_EQ(layers, 3);

  const std::vector<uint8_t> float_model = read_bytes(dir + "/float.floe");
  const std::vector<uint8_t> int8_model = read_bytes(dir + "/int8.floe");
  std::cout << "float model " << float_model.size() << " bytes, int8 model " << int8_model.size() << " bytes\n";
  EXPECT_LE(int8_model.size() * 10, float_model.size() * 3);  // <= 30 %
  EXPECT_NE(q.output.find("(float model " + std::to_string(float_model.size()) + " bytes"), std::string::npos);

  std::vector<std::vector<float>> held_out = {digit(3), digit(7), digit(9)};
  for (const auto& image : variants(10, 77)) held_out.push_back(image);  // seeds unlike calibration's
  int same = 0;
  for (size_t i = 0; i < held_out.size(); ++i) {
    const std::vector<float> want = as_floats(run_model(float_model, {{"images", image_tensor(held_out[i])}}).at(0));
    const std::vector<float> got = as_floats(run_model(int8_model, {{"images", image_tensor(held_out[i])}}).at(0));
    if (i < 3) {
      EXPECT_EQ(argmax(got), argmax(want)) << "digit " << i;
      const int labels[] = {3, 7, 9};
      EXPECT_EQ(argmax(got), labels[i]);
    }
    // A noisy variant whose two best float logits are closer than the int8
    // error may flip; any other disagreement is a quantization bug.
    const float error = max_abs_diff(want, got);
    std::vector<float> sorted = want;
    std::sort(sorted.rbegin(), sorted.rend());
    const bool decisive = sorted[0] - sorted[1] > 2 * error;
    if (decisive) EXPECT_EQ(argmax(got), argmax(want)) << "sample " << i;
    same += argmax(got) == argmax(want);
    EXPECT_LT(error, 0.5f) << "sample " << i;  // logits span ~25
  }
  std::cout << same << " of " << held_out.size() << " held-out images classified as float does\n";
  EXPECT_GE(same, static_cast<int>(held_out.size()) - 2);
}

TEST(PostTrainingE2E, Int8InputsAndOutputs) {
  const std::string dir = make_temp_dir();
  const std::string npz = write_npz(dir, "calibration.npz", {{"images.npy", batch_npy(variants(8, 5))}});
  const CommandResult q = run_command(tool_path("floe-convert") + " " + kConvert + " --quantize int8 --io int8 --calibration " +
                                      npz + " -o " + dir + "/int8.floe");
  ASSERT_EQ(q.exit_code, 0) << q.output;
  EXPECT_NE(q.output.find("input   images:0  int8 [1,784]  scale"), std::string::npos) << q.output;
  EXPECT_NE(q.output.find("output  softmax_linear/add:0  int8 [1,10]  scale"), std::string::npos) << q.output;
  EXPECT_NE(q.output.find("ops (3): MATMUL x3"), std::string::npos) << q.output;
}

TEST(PostTrainingE2E, StrictInt8AcceptsTheAllInt8Mlp) {
  const std::string dir = make_temp_dir();
  const std::string npz = write_npz(dir, "calibration.npz", {{"images.npy", batch_npy(variants(2, 5))}});
  const CommandResult q = run_command(tool_path("floe-convert") + " " + kConvert + " --quantize int8 --strict-int8 " +
                                      "--calibration-method percentile --calibration " + npz + " -o " + dir + "/m.floe");
  EXPECT_EQ(q.exit_code, 0) << q.output;
}

// ---- bad input ----------------------------------------------------------------

std::string expect_refused(const std::string& args) {
  const std::string dir = make_temp_dir();
  const std::string out = dir + "/out.floe";
  const CommandResult r = run_command(tool_path("floe-convert") + " " + kConvert + " " + args + " -o " + out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_FALSE(file_exists(out)) << "output file left behind";
  EXPECT_EQ(run_command("ls -A " + dir).output, "") << "temporary files left behind";
  return r.output;
}

TEST(PostTrainingE2E, WrongInputNameNamesFileAndInput) {
  const std::string dir = make_temp_dir();
  const std::string npz = write_npz(dir, "cal.npz", {{"image.npy", batch_npy(variants(1, 1))}});
  const std::string m = expect_refused("--quantize int8 --calibration " + npz);
  EXPECT_NE(m.find(npz + ": member image.npy"), std::string::npos) << m;
  EXPECT_NE(m.find("'image' is not a model input (inputs: images:0)"), std::string::npos) << m;
}

TEST(PostTrainingE2E, WrongShapeNamesFileAndInput) {
  const std::string dir = make_temp_dir();
  const std::string npz = write_npz(dir, "cal.npz", {{"images.npy", npy_f32({2, 28, 28}, std::vector<float>(1568))}});
  const std::string m = expect_refused("--quantize int8 --calibration " + npz);
  EXPECT_NE(m.find(npz + ": member images.npy"), std::string::npos) << m;
  EXPECT_NE(m.find("input 'images:0' has shape [1,784], the array has shape [2,28,28]"), std::string::npos) << m;
}

TEST(PostTrainingE2E, WrongDtypeNamesFileAndInput) {
  const std::string dir = make_temp_dir();
  const std::vector<int64_t> values(784, 1);
  std::ofstream(dir + "/images.npy", std::ios::binary) << npy_bytes("<i8", {1, 784}, values.data(), 784 * 8);
  const std::string m = expect_refused("--quantize int8 --calibration " + dir);
  EXPECT_NE(m.find(dir + "/images.npy"), std::string::npos) << m;
  EXPECT_NE(m.find("input 'images:0' is float32, the array is int64"), std::string::npos) << m;
}

// numpy's default float64 (np.random.rand) is rounded to the float32 input,
// with a note: the same model as the float32 array of those values gives.
TEST(PostTrainingE2E, Float64CalibrationIsRoundedWithANote) {
  const std::string dir = make_temp_dir(), f32 = make_temp_dir();
  std::vector<double> values(784);
  std::vector<float> rounded(784);
  for (size_t i = 0; i < values.size(); ++i) rounded[i] = static_cast<float>(values[i] = 0.5 + 0.25 * std::sin(0.1 * i));
  std::ofstream(dir + "/images.npy", std::ios::binary) << npy_bytes("<f8", {1, 784}, values.data(), 784 * 8);
  std::ofstream(f32 + "/images.npy", std::ios::binary) << npy_bytes("<f4", {1, 784}, rounded.data(), 784 * 4);
  const CommandResult r = run_command(tool_path("floe-convert") + " " + kConvert + " --quantize int8 --calibration " +
                                      dir + " -o " + dir + "/m.floe");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("note: calibration " + dir + "/images.npy is float64; rounded to float32"),
            std::string::npos)
      << r.output;
  ASSERT_EQ(run_command(tool_path("floe-convert") + " " + kConvert + " --quantize int8 --calibration " + f32 +
                        " -o " + f32 + "/m.floe").exit_code,
            0);
  EXPECT_EQ(run_command("cmp " + dir + "/m.floe " + f32 + "/m.floe").exit_code, 0);
}

TEST(PostTrainingE2E, EmptyCalibrationSetNamesFileAndInput) {
  const std::string dir = make_temp_dir();
  const std::string npz = write_npz(dir, "cal.npz", {{"images.npy", npy_f32({0, 784}, {})}});
  const std::string m = expect_refused("--quantize int8 --calibration " + npz);
  EXPECT_NE(m.find(npz), std::string::npos) << m;
  EXPECT_NE(m.find("input 'images:0' has no samples (an empty calibration set)"), std::string::npos) << m;
  const std::string empty_dir = make_temp_dir();
  const std::string d = expect_refused("--quantize int8 --calibration " + empty_dir);
  EXPECT_NE(d.find(empty_dir + ": the directory holds no .npy files"), std::string::npos) << d;
}

TEST(PostTrainingE2E, CalibrationAndQuantizeNeedEachOther) {
  const std::string dir = make_temp_dir();
  const std::string npz = write_npz(dir, "cal.npz", {{"images.npy", batch_npy(variants(1, 1))}});
  EXPECT_NE(expect_refused("--calibration " + npz).find("--calibration needs --quantize int8"), std::string::npos);
  EXPECT_NE(expect_refused("--quantize int8").find("--quantize int8 needs --calibration"), std::string::npos);
  EXPECT_NE(expect_refused("--strict-int8").find("--strict-int8 needs --quantize int8"), std::string::npos);
  EXPECT_NE(expect_refused("--quantize int4 --calibration " + npz).find("only int8"), std::string::npos);
}

// np.savez_compressed's own files are read (tests/python); a member marked
// deflated whose bytes are not deflate data is refused, naming it.
TEST(PostTrainingE2E, CorruptDeflatedMemberIsRefusedWithTheReason) {
  const std::string dir = make_temp_dir();
  NpzOptions deflate;
  deflate.method = 8;
  const std::string path = dir + "/cal.npz";
  std::ofstream(path, std::ios::binary) << npz_bytes({{"images.npy", batch_npy(variants(1, 1))}}, deflate);
  const std::string m = expect_refused("--quantize int8 --calibration " + path);
  EXPECT_NE(m.find(path + ": member images.npy: corrupt deflate data"), std::string::npos) << m;
}

}  // namespace
}  // namespace floe::testing
