// SPDX-License-Identifier: Apache-2.0
// Keyword spotting from raw audio: the 21 ML-KWS-for-MCU frozen graphs (DNN,
// CNN, Basic_LSTM, LSTM, GRU, CRNN, DS_CNN in S/M/L) converted from the decoded
// samples (decoded_sample_data:0 fed, the sample rate decoded_sample_data:1
// fixed at 16000) through AudioSpectrogram -> Mfcc -> network -> labels_softmax,
// and run on the corpus' one-second clips: "yes" hears yes and "no" hears no
// (CNN_S hears "go" in the "no" clip). Prints every model's label and score
// on all five clips. DS_CNN_S also quantized: its network in int8 on the
// Cortex-M kernels behind the float front end.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "runtime/tools/wav.h"
#include "tests/converter/support/tf_graph_text.h"
#include "tests/support/corpus.h"
#include "tests/support/model_runner.h"
#include "tests/support/npz_writer.h"

namespace floe::testing {
namespace {

const char* const kFamilies[] = {"DNN", "CNN", "Basic_LSTM", "LSTM", "GRU", "CRNN", "DS_CNN"};

std::vector<std::string> labels() {
  std::ifstream in(corpus_path("ML-KWS-for-MCU/Pretrained_models/labels.txt"));
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

HostTensor clip(const std::string& relative) {
  const tools::WavAudio wav = tools::read_wav(corpus_path(relative));
  EXPECT_EQ(wav.sample_rate, 16000) << relative;
  EXPECT_EQ(wav.channels, 1) << relative;
  return make_f32({16000, 1}, tools::fit_frames(wav, 16000));
}

TEST(KeywordSpotting, AllTwentyOneGraphsHearYesAndNoFromRawAudio) {
  FLOE_REQUIRE_CORPUS("ML-KWS-for-MCU/Pretrained_models/DS_CNN/DS_CNN_S.pb");
  FLOE_REQUIRE_CORPUS("speech_commands_wav/yes_1000ms.wav");
  const std::vector<std::string> names = labels();
  ASSERT_EQ(names.size(), 12u);
  const std::vector<std::pair<std::string, std::string>> clips = {
      {"yes", "speech_commands_wav/yes_1000ms.wav"},
      {"no", "speech_commands_wav/no_1000ms.wav"},
      {"silence", "speech_commands_wav/silence_1000ms.wav"},
      {"noise", "speech_commands_wav/noise_1000ms.wav"},
      {"kws-silence", "ML-KWS-for-MCU/silence.wav"}};
  std::vector<HostTensor> audio;
  for (const auto& [name, path] : clips) audio.push_back(clip(path));
  std::printf("%-13s", "model");
  for (const auto& c : clips) std::printf(" %-19s", c.first.c_str());
  std::printf("\n");
  for (const char* family : kFamilies) {
    for (const char* size : {"S", "M", "L"}) {
      const std::string model = std::string(family) + "_" + size;
      conv::ConvertOptions options;
      options.graph_path = corpus_path("ML-KWS-for-MCU/Pretrained_models/" + std::string(family) + "/" + model + ".pb");
      options.outputs = {"labels_softmax"};
      options.inputs = {"decoded_sample_data:0"};
      options.frozen_inputs = {{"decoded_sample_data:1", "16000"}};
      std::vector<uint8_t> converted;
      try {
        converted = conv::convert(options).model;
      } catch (const std::exception& e) {
        ADD_FAILURE() << model << ": " << e.what();
        continue;
      }
      std::printf("%-13s", model.c_str());
      std::vector<std::string> heard;
      for (const HostTensor& samples : audio) {
        const auto out = run_model(converted, {{"decoded_sample_data:0", samples}});
        ASSERT_EQ(out.size(), 1u) << model;
        const std::vector<float> p = as_floats(out[0]);
        ASSERT_EQ(p.size(), 12u) << model;
        size_t best = 0;
        for (size_t i = 1; i < p.size(); ++i) best = p[i] > p[best] ? i : best;
        heard.push_back(names[best]);
        std::printf(" %-10s %.4f  ", names[best].c_str(), p[best]);
      }
      std::printf("\n");
      EXPECT_EQ(heard[0], "yes") << model;
      EXPECT_EQ(heard[1], model == "CNN_S" ? "go" : "no") << model;
    }
  }
}

// Post-training int8 on raw audio: calibrated on the corpus clips (each at three
// gains and three time shifts), the network runs int8 (on the Cortex-M
// kernels for cortex-m4) between a QUANTIZE and a DEQUANTIZE, the front end
// stays float, and it still hears yes and no.
TEST(KeywordSpotting, Int8NetworkBehindTheFloatFrontEndHearsYesAndNo) {
  FLOE_REQUIRE_CORPUS("ML-KWS-for-MCU/Pretrained_models/DS_CNN/DS_CNN_S.pb");
  FLOE_REQUIRE_CORPUS("speech_commands_wav/yes_1000ms.wav");
  const std::vector<std::string> names = labels();
  ASSERT_EQ(names.size(), 12u);
  std::vector<HostTensor> audio;
  for (const char* path : {"speech_commands_wav/yes_1000ms.wav", "speech_commands_wav/no_1000ms.wav",
                           "speech_commands_wav/silence_1000ms.wav", "speech_commands_wav/noise_1000ms.wav",
                           "ML-KWS-for-MCU/silence.wav"}) {
    audio.push_back(clip(path));
  }
  std::vector<float> calibration;
  for (const HostTensor& samples : audio) {
    const std::vector<float> x = as_floats(samples);
    for (const float gain : {0.5f, 1.0f, 1.5f}) {
      for (const int shift : {-1600, 0, 1600}) {
        for (int i = 0; i < 16000; ++i) {
          const float v = gain * x[static_cast<size_t>((i + shift + 16000) % 16000)];
          calibration.push_back(v < -1.0f ? -1.0f : v > 1.0f ? 1.0f : v);
        }
      }
    }
  }
  const std::string dir = make_temp_dir();
  const std::string npz = dir + "/audio.npz";
  std::ofstream(npz, std::ios::binary) << npz_bytes(
      {{"decoded_sample_data.npy", npy_f32({static_cast<int64_t>(calibration.size() / 16000) * 16000, 1}, calibration)}});
  conv::ConvertOptions options;
  options.graph_path = corpus_path("ML-KWS-for-MCU/Pretrained_models/DS_CNN/DS_CNN_S.pb");
  options.outputs = {"labels_softmax"};
  options.inputs = {"decoded_sample_data:0"};
  options.frozen_inputs = {{"decoded_sample_data:1", "16000"}};
  options.quantize_int8 = true;
  options.calibration_path = npz;
  options.target = "cortex-m4";
  const conv::ConvertResult r = conv::convert(options);
  EXPECT_NE(r.summary.find("AudioSpectrogram (AUDIO_SPECTROGRAM) Mfcc (MFCC)"), std::string::npos) << r.summary;
  int on_cortexm = 0;
  for (const auto* op : *schema::GetModel(r.model.data())->operators()) {
    on_cortexm += op->backend() == schema::Backend::CORTEX_M && op->opcode() != schema::OpCode::AUDIO_SPECTROGRAM;
  }
  EXPECT_EQ(on_cortexm, 11);  // 5 convolutions, 4 depthwise, the average pool, the classifier
  std::vector<std::string> heard;
  for (const HostTensor& samples : audio) {
    const std::vector<float> p = as_floats(run_model(r.model, {{"decoded_sample_data:0", samples}}).at(0));
    ASSERT_EQ(p.size(), 12u);
    size_t best = 0;
    for (size_t i = 1; i < p.size(); ++i) best = p[i] > p[best] ? i : best;
    heard.push_back(names[best]);
    std::printf("int8 DS_CNN_S: %-10s %.4f\n", names[best].c_str(), p[best]);
  }
  EXPECT_EQ(heard[0], "yes");
  EXPECT_EQ(heard[1], "no");
  EXPECT_EQ(heard[2], "_silence_");
}

// A RIFF/WAVE file: `format` 1 = PCM, `bits` per sample, `frames` of a ramp;
// `cut` bytes removed from the end (a truncated file).
std::string write_wav(const std::string& path, uint16_t format, uint16_t bits, uint32_t rate, uint16_t channels,
                      uint32_t frames, size_t cut = 0) {
  std::string b;
  auto u16 = [&](uint32_t v) { b += static_cast<char>(v & 0xFF); b += static_cast<char>((v >> 8) & 0xFF); };
  auto u32 = [&](uint32_t v) { u16(v & 0xFFFF); u16(v >> 16); };
  const uint32_t block = channels * bits / 8, data = frames * block;
  b += "RIFF";
  u32(36 + data);
  b += "WAVEfmt ";
  u32(16);
  u16(format);
  u16(channels);
  u32(rate);
  u32(rate * block);
  u16(block);
  u16(bits);
  b += "data";
  u32(data);
  for (uint32_t i = 0; i < data / 2; ++i) u16((i * 37) & 0xFFFF);
  for (uint32_t i = 0; i < data % 2; ++i) b += '\0';
  b.resize(b.size() - cut);
  std::ofstream(path, std::ios::binary) << b;
  return path;
}

// floe-run --input NAME=file.wav on a front end built for 16 kHz (no corpus needed).
TEST(KeywordSpotting, FloeRunDecodesWavAndRefusesBadFiles) {
  const std::string dir = make_temp_dir();
  TfGraphText g;
  g.placeholder("audio", "DT_FLOAT", {16000, 1});
  g.constant("rate", "DT_INT32", {}, {16000});
  g.node("spectrogram", "AudioSpectrogram", {"audio"},
         {TfGraphText::integer("window_size", 640), TfGraphText::integer("stride", 320),
          TfGraphText::boolean("magnitude_squared", true)});
  g.node("mfcc", "Mfcc", {"spectrogram", "rate"}, {TfGraphText::integer("dct_coefficient_count", 10)});
  const std::string graph = g.write(dir + "/frontend.pbtxt");
  const CommandResult convert =
      run_command(tool_path("floe-convert") + " --graph " + graph + " --outputs mfcc -o " + dir + "/m.floe");
  ASSERT_EQ(convert.exit_code, 0) << convert.output;
  auto floe_run = [&](const std::string& wav) {
    return run_command(tool_path("floe-run") + " " + dir + "/m.floe --input audio=" + wav + " -o " + dir);
  };
  // A good file, 12000 samples: padded with a note, output written.
  CommandResult r = floe_run(write_wav(dir + "/short.wav", 1, 16, 16000, 1, 12000));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("12000 samples zero-padded to the input's 16000"), std::string::npos) << r.output;
  EXPECT_TRUE(file_exists(dir + "/mfcc.npy"));
  r = floe_run(write_wav(dir + "/long.wav", 1, 16, 16000, 1, 20000));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("20000 samples truncated"), std::string::npos) << r.output;
  struct Bad { std::string file, why; };
  const Bad bad[] = {
      {write_wav(dir + "/8bit.wav", 1, 8, 16000, 1, 16000), "8-bit samples: only 16-bit PCM is read"},
      {write_wav(dir + "/float.wav", 3, 32, 16000, 1, 16000), "format 3 is not PCM (1)"},
      {write_wav(dir + "/8k.wav", 1, 16, 8000, 1, 8000), "sample rate 8000 Hz; the model's front end was built for 16000 Hz"},
      {write_wav(dir + "/stereo.wav", 1, 16, 16000, 2, 16000), "2 channel(s); input 'audio:0' takes 1"},
      {write_wav(dir + "/cut.wav", 1, 16, 16000, 1, 16000, 1001), "truncated: chunk \"data\" declares 32000 bytes, 30999 remain"},
  };
  for (const Bad& b : bad) {
    r = floe_run(b.file);
    EXPECT_EQ(r.exit_code, 2) << b.file << "\n" << r.output;
    EXPECT_NE(r.output.find(b.file + ": " + b.why), std::string::npos) << r.output;
  }
}

// floe-convert and floe-run as a user runs them: DS_CNN_S from a WAV file to a label.
TEST(KeywordSpotting, FloeRunPrintsTheLabelOfAWavFile) {
  FLOE_REQUIRE_CORPUS("ML-KWS-for-MCU/Pretrained_models/DS_CNN/DS_CNN_S.pb");
  FLOE_REQUIRE_CORPUS("speech_commands_wav/yes_1000ms.wav");
  const std::string dir = make_temp_dir();
  // Feeding the samples alone leaves DecodeWav needed for the sample rate: the refusal says which tensor.
  const CommandResult refused = run_command(
      tool_path("floe-convert") + " --graph " + corpus_path("ML-KWS-for-MCU/Pretrained_models/DS_CNN/DS_CNN_S.pb") +
      " --outputs labels_softmax --inputs decoded_sample_data:0 -o " + dir + "/refused.floe");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("DecodeWav x1: decoded_sample_data (decoded_sample_data:1 read by 'Mfcc': feed with "
                                "--inputs or fix with --freeze-input)"),
            std::string::npos)
      << refused.output;
  EXPECT_FALSE(file_exists(dir + "/refused.floe"));
  const CommandResult convert = run_command(
      tool_path("floe-convert") + " --graph " + corpus_path("ML-KWS-for-MCU/Pretrained_models/DS_CNN/DS_CNN_S.pb") +
      " --outputs labels_softmax --inputs decoded_sample_data:0 --freeze-input decoded_sample_data:1=16000 -o " + dir +
      "/kws.floe");
  ASSERT_EQ(convert.exit_code, 0) << convert.output;
  EXPECT_NE(convert.output.find("fixed   decoded_sample_data:1 = 16000 (int32 [], output of DecodeWav)"),
            std::string::npos)
      << convert.output;
  EXPECT_NE(convert.output.find("input   decoded_sample_data:0  float32 [16000,1]"), std::string::npos) << convert.output;
  EXPECT_NE(convert.output.find("fed     decoded_sample_data:0 (output 0 of DecodeWav 'decoded_sample_data'"),
            std::string::npos)
      << convert.output;
  for (const char* word : {"yes", "no"}) {
    const CommandResult r = run_command(tool_path("floe-run") + " " + dir + "/kws.floe --input decoded_sample_data:0=" +
                                        corpus_path(std::string("speech_commands_wav/") + word + "_1000ms.wav") +
                                        " --labels " + corpus_path("ML-KWS-for-MCU/Pretrained_models/labels.txt"));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find(std::string("label: ") + word + " 0.99"), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace floe::testing
