// SPDX-License-Identifier: Apache-2.0
// Keyword spotting from raw audio: the 21 ML-KWS-for-MCU frozen graphs (DNN,
// CNN, Basic_LSTM, LSTM, GRU, CRNN, DS_CNN in S/M/L) converted from the decoded
// samples (decoded_sample_data:0 fed, the sample rate decoded_sample_data:1
// fixed at 16000) through AudioSpectrogram -> Mfcc -> network -> labels_softmax,
// and run on the corpus' one-second clips: "yes" hears yes and "no" hears no
// (CNN_S hears "go" in the "no" clip). Prints every model's label and score
// on all five clips.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "runtime/tools/wav.h"
#include "tests/support/corpus.h"
#include "tests/support/model_runner.h"

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

}  // namespace
}  // namespace floe::testing
