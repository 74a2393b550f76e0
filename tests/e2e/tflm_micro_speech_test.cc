// SPDX-License-Identifier: Apache-2.0
// TensorFlow Lite Micro's micro_speech example from audio: its preprocessor
// (audio_preprocessor_int8.tflite, TFLM's Signal custom ops) turns 30 ms
// windows of 16 kHz samples into 40 int8 features, and its keyword model
// (micro_speech_quantized.tflite) names 49 stacked frames. TFLM's own test
// data is the truth: the features of yes_30ms.wav / no_30ms.wav must equal
// testdata/*_30ms_features.npy value for value, and the 1000 ms clips must be
// named as micro_speech_test.cc expects. The preprocessor keeps a noise
// estimate across windows (SignalFilterBankSpectralSubtraction), reset as
// TFLM resets it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "converter/frontend/tflite/custom_options.h"
#include "converter/frontend/tflite/tflite_subset_generated.h"
#include "converter/pipeline/convert.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "runtime/tools/npy.h"
#include "runtime/tools/wav.h"
#include "tests/support/corpus.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

namespace tfl = ::floe::tflite_schema;

constexpr const char* kDir = "tflm/examples/micro_speech/";
constexpr const char* kPreprocessor = "tflm/examples/micro_speech/models/audio_preprocessor_int8.tflite";
constexpr const char* kKeywords = "tflm/examples/micro_speech/models/micro_speech_quantized.tflite";
// micro_model_settings.h: 30 ms windows 20 ms apart at 16 kHz, 49 frames of 40.
constexpr size_t kWindow = 480, kStride = 320, kFrames = 49, kFeatures = 40;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<int16_t> wav_samples(const std::string& name) {
  const tools::WavAudio wav = tools::read_wav(corpus_path(std::string(kDir) + "testdata/" + name));
  std::string note;
  return tools::wav_as_pcm16(wav, name, wav.frames, &note);
}

// A converted model with its interpreter (Init() done).
class Running {
 public:
  Running(const std::string& corpus_file, const char* target) {
    conv::ConvertOptions options;
    options.graph_path = corpus_path(corpus_file);
    options.target = target;
    const std::vector<uint8_t> bytes = conv::convert(options).model;
    buffer_ = tools::aligned_bytes(bytes.size());
    std::memcpy(buffer_.get(), bytes.data(), bytes.size());
    EXPECT_EQ(model_.Load(buffer_.get(), bytes.size()), Status::kOk) << model_.error().message;
    arena_ = tools::aligned_bytes(model_.arena_size());
    interpreter_ = std::make_unique<Interpreter>(model_, arena_.get(), model_.arena_size());
    EXPECT_EQ(interpreter_->Init(), Status::kOk) << interpreter_->error().message;
  }
  // Copies `bytes` into input 0, invokes, returns output 0's int8 values.
  std::vector<int8_t> run(const void* bytes, size_t size) {
    const TensorView in = interpreter_->input(0);
    EXPECT_EQ(in.bytes, size);
    std::memcpy(in.data, bytes, in.bytes);
    EXPECT_EQ(interpreter_->Invoke(), Status::kOk) << interpreter_->error().message;
    const TensorView out = interpreter_->output(0);
    EXPECT_EQ(out.dtype, DType::kInt8);
    return std::vector<int8_t>(out.as<int8_t>(), out.as<int8_t>() + out.bytes);
  }
  Interpreter& interpreter() { return *interpreter_; }

 private:
  tools::AlignedBytes buffer_;
  Model model_;
  tools::AlignedBytes arena_;
  std::unique_ptr<Interpreter> interpreter_;
};

std::vector<int8_t> features_of(Running& preprocessor, const std::vector<int16_t>& samples, size_t start) {
  return preprocessor.run(samples.data() + start, kWindow * sizeof(int16_t));
}

const char* const kTargets[] = {"host", "reference", "cortex-m4"};

TEST(TflmMicroSpeech, PreprocessorFeaturesEqualTflmTestData) {
  FLOE_REQUIRE_CORPUS(kPreprocessor);
  for (const char* target : kTargets) {
    SCOPED_TRACE(target);
    for (const char* word : {"yes", "no"}) {
      SCOPED_TRACE(word);
      // A fresh preprocessor per clip (its noise estimate at zero), as TFLM's test builds one.
      Running preprocessor(kPreprocessor, target);
      const std::vector<int16_t> samples = wav_samples(std::string(word) + "_30ms.wav");
      ASSERT_EQ(samples.size(), kWindow);
      const tools::NpyArray want =
          tools::read_npy(corpus_path(std::string(kDir) + "testdata/" + word + "_30ms_features.npy"));
      ASSERT_EQ(want.dtype, DType::kInt8);
      ASSERT_EQ(want.data.size(), kFeatures);
      const std::vector<int8_t> got = features_of(preprocessor, samples, 0);
      ASSERT_EQ(got.size(), kFeatures);
      for (size_t i = 0; i < kFeatures; ++i) {
        EXPECT_EQ(got[i], static_cast<int8_t>(want.data[i])) << "feature " << i;
      }
    }
  }
}

// micro_speech_test.cc: each 1000 ms clip through a fresh preprocessor, 49
// windows, then the keyword model; labels silence, unknown, yes, no.
TEST(TflmMicroSpeech, NamesEachClipFromAudio) {
  FLOE_REQUIRE_CORPUS(kPreprocessor);
  FLOE_REQUIRE_CORPUS(kKeywords);
  const struct {
    const char* clip;
    int label;
  } kClips[] = {{"yes_1000ms.wav", 2}, {"no_1000ms.wav", 3}, {"silence_1000ms.wav", 0}, {"noise_1000ms.wav", 0}};
  for (const char* target : kTargets) {
    SCOPED_TRACE(target);
    Running keywords(kKeywords, target);
    for (const auto& c : kClips) {
      SCOPED_TRACE(c.clip);
      Running preprocessor(kPreprocessor, target);
      const std::vector<int16_t> samples = wav_samples(c.clip);
      std::vector<int8_t> frames;
      for (size_t start = 0; frames.size() < kFrames * kFeatures && start + kWindow <= samples.size();
           start += kStride) {
        const std::vector<int8_t> f = features_of(preprocessor, samples, start);
        frames.insert(frames.end(), f.begin(), f.end());
      }
      ASSERT_EQ(frames.size(), kFrames * kFeatures);
      const std::vector<int8_t> scores = keywords.run(frames.data(), frames.size());
      ASSERT_EQ(scores.size(), 4u);
      int best = 0;
      for (int i = 1; i < 4; ++i) best = scores[static_cast<size_t>(i)] > scores[static_cast<size_t>(best)] ? i : best;
      EXPECT_EQ(best, c.label) << "scores " << int{scores[0]} << " " << int{scores[1]} << " " << int{scores[2]} << " "
                               << int{scores[3]};
    }
  }
}

// audio_preprocessor_test.py: the same window twice gives other features (the
// noise estimate moved), and a reset gives the first ones again.
TEST(TflmMicroSpeech, NoiseEstimateCarriesOverAndResets) {
  FLOE_REQUIRE_CORPUS(kPreprocessor);
  Running preprocessor(kPreprocessor, "reference");
  const std::vector<int16_t> samples = wav_samples("yes_30ms.wav");
  const std::vector<int8_t> first = features_of(preprocessor, samples, 0);
  EXPECT_NE(features_of(preprocessor, samples, 0), first);
  ASSERT_EQ(preprocessor.interpreter().ResetVariableTensors(), Status::kOk);
  EXPECT_EQ(features_of(preprocessor, samples, 0), first);
  features_of(preprocessor, samples, 0);
  ASSERT_EQ(preprocessor.interpreter().Init(), Status::kOk);
  EXPECT_EQ(features_of(preprocessor, samples, 0), first);
}

// floe-run takes a WAV through both models in a row.
TEST(TflmMicroSpeech, FloeRunNamesAClipThroughTheFrontEnd) {
  FLOE_REQUIRE_CORPUS(kPreprocessor);
  FLOE_REQUIRE_CORPUS(kKeywords);
  const std::string dir = make_temp_dir();
  for (const auto& [model, out] : {std::pair<const char*, const char*>{kPreprocessor, "pre.floe"}, {kKeywords, "kws.floe"}}) {
    const CommandResult r =
        run_command(tool_path("floe-convert") + " -q --graph " + corpus_path(model) + " -o " + dir + "/" + out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  std::ofstream(dir + "/labels.txt") << "silence\nunknown\nyes\nno\n";
  const CommandResult r = run_command(tool_path("floe-run") + " " + dir + "/kws.floe --front-end " + dir +
                                      "/pre.floe --stride 320 --input Reshape_1=" +
                                      corpus_path(std::string(kDir) + "testdata/no_1000ms.wav") + " --labels " + dir +
                                      "/labels.txt");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("label: no "), std::string::npos) << r.output;
}

// ---- refusals: exit 2 with the reason, nothing written.


// The first operator whose custom code is `name`.
tfl::Operator* custom_op(std::string& bytes, const std::string& name) {
  auto* model = tfl::GetMutableModel(&bytes[0]);
  auto* graph = model->mutable_subgraphs()->GetMutableObject(0);
  for (uint32_t i = 0; i < graph->operators()->size(); ++i) {
    auto* op = graph->mutable_operators()->GetMutableObject(i);
    const auto* code = model->operator_codes()->Get(op->opcode_index());
    if (code->custom_code() != nullptr && code->custom_code()->str() == name) return op;
  }
  return nullptr;
}

TEST(TflmMicroSpeechRefusals, TruncatedCustomOptionsAreInvalidNamingTheOp) {
  FLOE_REQUIRE_CORPUS(kPreprocessor);
  std::string bytes = read_bytes(corpus_path(kPreprocessor));
  tfl::Operator* op = custom_op(bytes, "SignalFilterBankSpectralSubtraction");
  ASSERT_NE(op, nullptr);
  // The vector's length word, shortened: the FlatBuffer stays valid, the
  // FlexBuffer map inside it loses its last bytes (where its root is).
  uint8_t* data = op->mutable_custom_options()->data();
  uint32_t length;
  std::memcpy(&length, data - 4, 4);
  ASSERT_GT(length, 8u);
  length -= 5;
  std::memcpy(data - 4, &length, 4);
  const Refusal r = convert_refused(bytes);
  EXPECT_NE(r.output.find("SignalFilterBankSpectralSubtraction"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not a valid FlexBuffer: truncated or corrupt"), std::string::npos) << r.output;
  EXPECT_NE(r.json.find("\"category\": \"invalid-input\""), std::string::npos) << r.json;
  EXPECT_NE(r.json.find("\"op\": \"SignalFilterBankSpectralSubtraction\""), std::string::npos) << r.json;
}

TEST(TflmMicroSpeechRefusals, AFilterBankChannelPastItsBinsIsInvalid) {
  FLOE_REQUIRE_CORPUS(kPreprocessor);
  std::string bytes = read_bytes(corpus_path(kPreprocessor));
  tfl::Operator* op = custom_op(bytes, "SignalFilterBank");
  ASSERT_NE(op, nullptr);
  // Input 3, channel_frequency_starts: its last channel moved past 257 bins.
  auto* model = tfl::GetMutableModel(&bytes[0]);
  const auto* tensor = model->subgraphs()->Get(0)->tensors()->Get(static_cast<uint32_t>(op->inputs()->Get(3)));
  auto* data = model->mutable_buffers()->GetMutableObject(tensor->buffer())->mutable_data();
  const int16_t far = 300;
  std::memcpy(data->data() + 2 * 40, &far, 2);
  const Refusal r = convert_refused(bytes);
  EXPECT_NE(r.output.find("channel 40 (frequency start 300"), std::string::npos) << r.output;
  EXPECT_NE(r.json.find("\"category\": \"invalid-input\""), std::string::npos) << r.json;
}

TEST(TflmMicroSpeechRefusals, ACustomOpFloeLacksIsUnsupportedNamingIt) {
  FLOE_REQUIRE_CORPUS(kPreprocessor);
  std::string bytes = read_bytes(corpus_path(kPreprocessor));
  auto* model = tfl::GetMutableModel(&bytes[0]);
  // Rename "SignalPCAN" to another name of the same length.
  for (uint32_t i = 0; i < model->operator_codes()->size(); ++i) {
    auto* code = model->mutable_operator_codes()->GetMutableObject(i);
    if (code->custom_code() != nullptr && code->custom_code()->str() == "SignalPCAN") {
      std::memcpy(code->mutable_custom_code()->data(), "SignalPDAN", 10);
    }
  }
  const Refusal r = convert_refused(bytes);
  EXPECT_NE(r.output.find("CUSTOM 'SignalPDAN'"), std::string::npos) << r.output;
  EXPECT_NE(r.json.find("\"category\": \"unsupported\""), std::string::npos) << r.json;
}

// kissfft's tables for 512 points, spot-checked against kiss_fftr_alloc's
// formula by hand: the complex FFT's twiddle 64 of 256 is -i, its first
// super-twiddle is exp(-i pi (1/256 + 1/2)).
TEST(SignalTables, KissfftTwiddlesFollowItsFormula) {
  const std::vector<int16_t> tw = conv::kissfft_twiddles(512);
  ASSERT_EQ(tw.size(), 512u);
  EXPECT_EQ(tw[0], 32767);
  EXPECT_EQ(tw[1], 0);
  EXPECT_EQ(tw[2 * 64], 0);
  EXPECT_EQ(tw[2 * 64 + 1], -32767);
  const std::vector<int16_t> st = conv::kissfft_super_twiddles(512);
  ASSERT_EQ(st.size(), 256u);
  EXPECT_EQ(st[0], -402);    // floor(0.5 + 32767 cos(-pi (1/256 + 1/2)))
  EXPECT_EQ(st[1], -32765);  // floor(0.5 + 32767 sin(...))
}

}  // namespace
}  // namespace floe::testing
