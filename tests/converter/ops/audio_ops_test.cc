// SPDX-License-Identifier: Apache-2.0
// AudioSpectrogram and Mfcc (converter/ops/audio_ops.cc, the reference kernels
// audio_spectrogram.cc / mfcc.cc / fft.cc) through conversion and the runtime:
// the values of TensorFlow's own unit tests (spectrogram_op_test,
// spectrogram_test frame counts, mfcc_test, mfcc_mel_filterbank_test), the
// conversion-time refusals, and seeded random audio against an independent
// numpy model (audio_frontend_numpy.py, <= 1e-4 relative).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "converter/ir/error.h"
#include "runtime/tools/npy.h"
#include "tests/converter/ops/convert_graph.h"
#include "tests/converter/support/tf_graph_text.h"
#include "tests/support/edited_model.h"
#include "tests/support/loaded_model.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

using G = TfGraphText;

void add_spectrogram(G& g, const std::string& input, int64_t window, int64_t stride, bool squared) {
  g.node("spectrogram", "AudioSpectrogram", {input},
         {G::integer("window_size", window), G::integer("stride", stride), G::boolean("magnitude_squared", squared)});
}

void add_mfcc(G& g, const std::string& spectrogram, const std::string& rate, float lower, float upper, int64_t channels,
              int64_t coefficients) {
  g.node("mfcc", "Mfcc", {spectrogram, rate},
         {"attr { key: \"lower_frequency_limit\" value { f: " + std::to_string(lower) + " } }",
          "attr { key: \"upper_frequency_limit\" value { f: " + std::to_string(upper) + " } }",
          G::integer("filterbank_channel_count", channels), G::integer("dct_coefficient_count", coefficients)});
}

// The FFT's bit-reversal table is range-checked once, at Init(), and indexes
// the scratch at every Invoke(): a model where it is not a constant (here a
// model input, which the caller could fill with anything) is refused.
TEST(AudioSpectrogram, BitReversalTableMustBeAConstant) {
  G g;
  g.placeholder("audio", "DT_FLOAT", {8, 1});
  add_spectrogram(g, "audio", 8, 1, false);
  const std::vector<uint8_t> bytes = convert_graph(g, "sgram", {"spectrogram"}).model;
  const std::vector<uint8_t> edited = edited_model(bytes.data(), [](schema_obj::ModelT& model) {
    for (const auto& op : model.operators) {
      if (op->opcode == schema_obj::OpCode::AUDIO_SPECTROGRAM) make_constant_an_input(model, op->inputs[3]);
    }
  });
  ASSERT_EQ(load_model(edited)->status, Status::kOk);
  const InitOutcome r = init_outcome(edited);
  EXPECT_EQ(r.status, Status::kInvalidModel);
  EXPECT_NE(r.message.find("bit reversal must be a constant"), std::string::npos) << r.message;
}

// spectrogram_op_test: [-1, 0, 1, 0, -1, 0, 1, 0], window 8, stride 1.
TEST(AudioSpectrogram, MatchesTfOpTestValues) {
  const std::vector<float> wave = {-1, 0, 1, 0, -1, 0, 1, 0};
  for (bool squared : {false, true}) {
    G g;
    g.placeholder("audio", "DT_FLOAT", {8, 1});
    add_spectrogram(g, "audio", 8, 1, squared);
    const auto out = run_model(convert_graph(g, "sgram", {"spectrogram"}).model, {{"audio", make_f32({8, 1}, wave)}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape, (std::vector<int64_t>{1, 1, 5}));
    const std::vector<float> want = squared ? std::vector<float>{0, 1, 4, 1, 0} : std::vector<float>{0, 1, 2, 1, 0};
    EXPECT_LE(max_abs_diff(as_floats(out[0]), want), 1e-6f) << (squared ? "squared" : "magnitude");
  }
}

TEST(AudioSpectrogram, MultichannelMatchesTfOpTest) {
  std::vector<float> wave;
  for (float v : {-1, 0, 1, 0, -1, 0, 1, 0}) wave.insert(wave.end(), {v, v});
  G g;
  g.placeholder("audio", "DT_FLOAT", {8, 2});
  add_spectrogram(g, "audio", 8, 1, false);
  const auto out = run_model(convert_graph(g, "multi", {"spectrogram"}).model, {{"audio", make_f32({8, 2}, wave)}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 1, 5}));
  EXPECT_LE(max_abs_diff(as_floats(out[0]), {0, 1, 2, 1, 0, 0, 1, 2, 1, 0}), 1e-6f);
}

// spectrogram_test: frames from one call (a 1 kHz sine at 44.1 kHz of the stated lengths).
TEST(AudioSpectrogram, FrameCountsMatchTfSpectrogramTest) {
  struct Case { int64_t samples, window, stride, frames, bins; };
  for (const Case c : {Case{44, 400, 200, 0, 257}, Case{661, 400, 200, 2, 257}, Case{882, 200, 400, 2, 129},
                       Case{2205, 200, 200, 11, 129}}) {
    std::vector<float> sine(static_cast<size_t>(c.samples));
    for (size_t i = 0; i < sine.size(); ++i) sine[i] = static_cast<float>(std::sin(2.0 * M_PI * 1000.0 * i / 44100.0));
    G g;
    g.placeholder("audio", "DT_FLOAT", {c.samples, 1});
    add_spectrogram(g, "audio", c.window, c.stride, true);
    const auto out = run_model(convert_graph(g, "frames", {"spectrogram"}).model, {{"audio", make_f32({c.samples, 1}, sine)}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape, (std::vector<int64_t>{1, c.frames, c.bins})) << c.samples << " samples, window " << c.window;
  }
}

TEST(AudioSpectrogram, RefusesBadWindowAndStride) {
  for (auto [window, stride, why] : {std::tuple<int64_t, int64_t, const char*>{1, 1, "window size must be > 1"},
                                     {-35, 1, "window size must be > 1"},
                                     {35, -5739, "stride must be strictly positive"}}) {
    G g;
    g.placeholder("audio", "DT_FLOAT", {8, 2});
    add_spectrogram(g, "audio", window, stride, false);
    const std::string error = conversion_error(g, "bad", {"spectrogram"});
    EXPECT_NE(error.find(why), std::string::npos) << error;
    EXPECT_NE(error.find("node 'spectrogram'"), std::string::npos) << error;
  }
}

// A spectrogram given directly (a placeholder) into Mfcc with a constant sample rate.
std::vector<float> run_mfcc(const std::vector<float>& spectrum, int32_t rate, float lower, float upper,
                            int64_t channels, int64_t coefficients) {
  const int64_t bins = static_cast<int64_t>(spectrum.size());
  G g;
  g.placeholder("spec", "DT_FLOAT", {1, 1, bins});
  g.constant("rate", "DT_INT32", {}, {static_cast<double>(rate)});
  add_mfcc(g, "spec", "rate", lower, upper, channels, coefficients);
  const auto out = run_model(convert_graph(g, "mfcc", {"mfcc"}).model, {{"spec", make_f32({1, 1, bins}, spectrum)}});
  if (out.size() != 1) return {};
  return as_floats(out[0]);
}

std::vector<float> ramp(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  return v;
}

// mfcc_test AgreesWithPythonGoldenValues: bins i + 1, 22050 Hz, TF's defaults.
TEST(Mfcc, MatchesTfGoldenValues) {
  const std::vector<float> got = run_mfcc(ramp(513), 22050, 20.0f, 4000.0f, 40, 13);
  const std::vector<double> want = {29.13970072, -6.41568601, -0.61903012, -0.96778652, -0.26819878,
                                    -0.40907028, -0.15614748, -0.23203119, -0.10481487, -0.1543029,
                                    -0.0769791,  -0.10806114, -0.06047613};
  ASSERT_EQ(got.size(), want.size());
  double worst = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-4) << "coefficient " << i;  // TF's tolerance
    worst = std::max(worst, std::fabs(got[i] - want[i]));
  }
  std::cout << "max |floe - TF golden| over 13 coefficients: " << worst << "\n";
}

// mfcc_mel_filterbank_test: 20 channels, 20..4000 Hz. With as many coefficients as
// channels the DCT (C C^T = diag(2, 1, ..., 1)) inverts, giving back the log mel energies.
TEST(Mfcc, FilterbankMatchesTfGoldenValues) {
  constexpr int kChannels = 20;
  const std::vector<float> y = run_mfcc(ramp(513), 22050, 20.0f, 4000.0f, kChannels, kChannels);
  ASSERT_EQ(y.size(), static_cast<size_t>(kChannels));
  const std::vector<double> want = {7.38894574,   10.30330648, 13.72703292,  17.24158686,  21.35253118,
                                    25.77781089,  31.30624108, 37.05877236,  43.9436536,   51.80306637,
                                    60.79867148,  71.14363376, 82.90910141,  96.50069158,  112.08428368,
                                    129.96721968, 150.4277597, 173.74997634, 200.86037462, 231.59802942};
  double worst = 0.0;
  for (int j = 0; j < kChannels; ++j) {
    double log_energy = 0.0;
    for (int k = 0; k < kChannels; ++k) {
      log_energy += (k == 0 ? 0.5 : 1.0) * std::sqrt(2.0 / kChannels) * std::cos(M_PI / kChannels * k * (j + 0.5)) * y[k];
    }
    // float32 kernels against TF's double filterbank: 1e-5 relative (TF tests 1e-4 absolute in double).
    EXPECT_NEAR(std::exp(log_energy), want[static_cast<size_t>(j)], 1e-5 * want[static_cast<size_t>(j)]) << "channel " << j;
    worst = std::max(worst, std::fabs(std::exp(log_energy) / want[static_cast<size_t>(j)] - 1.0));
  }
  std::cout << "max relative |floe - TF golden| over 20 mel channels: " << worst << "\n";
}

// mfcc_test AvoidsNansWithZeroInput and SimpleInputSaneResult.
TEST(Mfcc, ZeroInputGivesTheFloorAndNoNans) {
  const std::vector<float> got = run_mfcc(std::vector<float>(513, 0.0f), 22050, 20.0f, 4000.0f, 40, 13);
  ASSERT_EQ(got.size(), 13u);
  for (float v : got) EXPECT_FALSE(std::isnan(v));
  // Every band at the floor: c0 = sqrt(2/40) * 40 * log(1e-12), the rest 0.
  EXPECT_NEAR(got[0], std::sqrt(2.0 / 40) * 40 * std::log(1e-12), 1e-3);
}

TEST(Mfcc, LowSinusoidPeaksAtC1AsTfTestExpects) {
  std::vector<float> spectrum(129, 0.0f);
  spectrum[10] = 1.0f;
  const std::vector<float> got = run_mfcc(spectrum, 8000, 125.0f, 3800.0f, 40, 40);
  ASSERT_EQ(got.size(), 40u);
  EXPECT_EQ(std::max_element(got.begin(), got.end()) - got.begin(), 1);
}

TEST(Mfcc, SampleRateMustBeConstant) {
  G g;
  g.placeholder("spec", "DT_FLOAT", {1, 4, 257});
  g.placeholder("rate", "DT_INT32", {});
  add_mfcc(g, "spec", "rate", 20.0f, 4000.0f, 40, 13);
  const std::string error = conversion_error(g, "rate", {"mfcc"});
  EXPECT_NE(error.find("node 'mfcc' (op Mfcc): the sample rate (input 1, 'rate:0') must be known at conversion time"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("--freeze-input rate:0=RATE"), std::string::npos) << error;
}

TEST(Mfcc, RefusesALimitAboveNyquist) {
  G g;
  g.placeholder("spec", "DT_FLOAT", {1, 4, 257});
  g.constant("rate", "DT_INT32", {}, {8000});
  add_mfcc(g, "spec", "rate", 20.0f, 4100.0f, 40, 13);
  const std::string error = conversion_error(g, "nyquist", {"mfcc"});
  EXPECT_NE(error.find("upper_frequency_limit 4100"), std::string::npos) << error;
  EXPECT_NE(error.find("above the spectrogram's highest bin"), std::string::npos) << error;
}

// Seeded random audio through AudioSpectrogram -> Mfcc against the numpy model.
TEST(AudioFrontEnd, MatchesIndependentNumpyModel) {
  if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "SKIPPED: /usr/bin/python3 with numpy is needed for the numpy comparison";
  }
  struct Case {
    int64_t samples, channels, window, stride;
    bool squared;
    int32_t rate;
    float lower, upper;
    int64_t filterbank, coefficients;
  };
  const Case cases[] = {
      {16000, 1, 640, 320, true, 16000, 20.0f, 4000.0f, 40, 10},   // ML-KWS-for-MCU's front end
      {16000, 1, 480, 160, true, 16000, 20.0f, 7600.0f, 40, 13},   // 30 ms / 10 ms frames
      {4000, 2, 400, 133, false, 8000, 125.0f, 3800.0f, 32, 32},   // magnitude, stereo, odd stride
      {1000, 1, 256, 256, true, 22050, 0.0f, 11025.0f, 20, 12},    // power-of-two window, up to Nyquist
      // Every FFT schedule of the small sizes: n = 2 (no pass), 4 (radix-2),
      // 8 (one radix-4), 16 (radix-2 + radix-4), 64 (radix-2 + two radix-4).
      {50, 1, 2, 1, true, 16000, 0.0f, 8000.0f, 1, 1},
      {50, 1, 3, 2, true, 16000, 0.0f, 8000.0f, 2, 2},
      {50, 2, 7, 3, false, 16000, 0.0f, 8000.0f, 2, 2},
      {100, 1, 12, 5, true, 16000, 0.0f, 8000.0f, 3, 3},
      {400, 1, 40, 17, true, 16000, 100.0f, 7000.0f, 8, 5},
  };
  uint32_t seed = 1;
  for (const Case& c : cases) {
    G g;
    g.placeholder("audio", "DT_FLOAT", {c.samples, c.channels});
    g.constant("rate", "DT_INT32", {}, {static_cast<double>(c.rate)});
    add_spectrogram(g, "audio", c.window, c.stride, c.squared);
    add_mfcc(g, "spectrogram", "rate", c.lower, c.upper, c.filterbank, c.coefficients);
    const HostTensor audio = random_f32({c.samples, c.channels}, seed++);
    const auto out = run_model(convert_graph(g, "frontend", {"spectrogram", "mfcc"}).model, {{"audio", audio}});
    ASSERT_EQ(out.size(), 2u);
    const std::string dir = make_temp_dir();
    tools::write_npy(dir + "/audio.npy", DType::kFloat32, audio.shape, audio.data.data());
    tools::write_npy(dir + "/spec.npy", DType::kFloat32, out[0].shape, out[0].data.data());
    tools::write_npy(dir + "/mfcc.npy", DType::kFloat32, out[1].shape, out[1].data.data());
    auto arg = [](const char* name, double v) { return std::string(" --") + name + " " + std::to_string(v); };
    const std::string command = "/usr/bin/python3 " FLOE_SOURCE_DIR "/tests/converter/ops/audio_frontend_numpy.py --audio " +
                                dir + "/audio.npy --spectrogram " + dir + "/spec.npy --mfcc " + dir + "/mfcc.npy" +
                                " --window " + std::to_string(c.window) + " --stride " + std::to_string(c.stride) +
                                (c.squared ? "" : " --magnitude") + " --sample-rate " + std::to_string(c.rate) +
                                " --channels " + std::to_string(c.filterbank) + " --coefficients " +
                                std::to_string(c.coefficients) + arg("lower", c.lower) + arg("upper", c.upper);
    const CommandResult r = run_command(command);
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.output;
    std::cout << "window " << c.window << " stride " << c.stride << ": " << r.output;
  }
}

}  // namespace
}  // namespace floe::testing
