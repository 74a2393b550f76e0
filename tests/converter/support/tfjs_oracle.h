// SPDX-License-Identifier: Apache-2.0
// Runs a graph the test wrote (TfGraphText) through floe and through the
// TensorFlow.js oracle (../shared/tools/peers/tfjs_oracle.js: tfjs-converter's
// GraphModel on the cpu backend) on the same inputs, for op-by-op checks of
// the ops TF.js executes. The oracle needs node and the peers' node_modules;
// without them FLOE_REQUIRE_TFJS_ORACLE skips the test with a visible message.
#pragma once

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "converter/ir/graph.h"
#include "converter/pipeline/convert.h"
#include "runtime/tools/npy.h"
#include "tests/converter/support/tf_graph_text.h"
#include "tests/support/corpus.h"
#include "tests/support/model_runner.h"

namespace floe::testing {

inline std::string tfjs_peers_dir() { return shared_dir() + "/tools/peers"; }

// Why the peer script `script` (needing node module `module`) cannot run
// here, or "" when it can.
inline std::string peer_unavailable(const std::string& script, const std::string& module) {
  const std::string peers = tfjs_peers_dir();
  if (!path_exists(peers + "/" + script)) return peers + "/" + script + " not available";
  if (!path_exists(peers + "/node_modules/" + module)) return peers + "/node_modules not installed (npm ci there)";
  if (std::system("node --version >/dev/null 2>&1") != 0) return "node not installed";
  return "";
}

// Why the oracle cannot run here, or "" when it can.
inline std::string tfjs_oracle_unavailable() { return peer_unavailable("tfjs_oracle.js", "@tensorflow/tfjs-converter"); }

#define FLOE_REQUIRE_TFJS_ORACLE()                                                       \
  do {                                                                                   \
    const std::string why = ::floe::testing::tfjs_oracle_unavailable();                  \
    if (!why.empty()) GTEST_SKIP() << "SKIPPED: the TF.js oracle cannot run: " << why;   \
  } while (0)

// One graph, its inputs and the tensors to compare.
struct OracleGraph {
  TfGraphText graph;
  std::map<std::string, HostTensor> inputs;  // by placeholder name
  std::vector<std::string> outputs;          // "node" or "node:k"
};

// A text GraphDef as the binary one tfjs_oracle.js reads (dir/graph.pb); ""
// and a test failure when the text does not parse.
inline std::string write_binary_graph(const std::string& pbtxt, const std::string& dir) {
  tfproto::GraphDef def;
  if (!google::protobuf::TextFormat::ParseFromString(pbtxt, &def)) {
    ADD_FAILURE() << "the test's graph does not parse:\n" << pbtxt;
    return "";
  }
  const std::string path = dir + "/graph.pb";
  std::ofstream(path, std::ios::binary) << def.SerializeAsString();
  return path;
}

inline HostTensor tensor_of(const tools::NpyArray& a) {
  HostTensor t;
  t.dtype = a.dtype;
  t.shape = a.shape;
  t.data = a.data;
  return t;
}

// The oracle's values of `outputs` for the text GraphDef `pbtxt` fed
// `inputs` (by placeholder name); {} and a test failure when it fails.
inline std::vector<HostTensor> run_tfjs_oracle(const std::string& pbtxt, const std::map<std::string, HostTensor>& inputs,
                                               const std::vector<std::string>& outputs) {
  const std::string dir = make_temp_dir();
  const std::string pb = write_binary_graph(pbtxt, dir);
  if (pb.empty()) return {};
  std::string command = "node " + tfjs_peers_dir() + "/tfjs_oracle.js " + pb;
  for (const auto& [name, value] : inputs) {
    const std::string path = dir + "/in_" + name + ".npy";
    tools::write_npy(path, value.dtype, value.shape, value.data.data());
    command += " -i " + name + "=" + path;
  }
  std::vector<std::string> paths;
  for (size_t i = 0; i < outputs.size(); ++i) {
    paths.push_back(dir + "/out" + std::to_string(i) + ".npy");
    command += " -o " + outputs[i] + "=" + paths.back();
  }
  const CommandResult r = run_command(command);
  if (r.exit_code != 0) {
    ADD_FAILURE() << "tfjs_oracle.js failed (" << r.exit_code << "): " << command << "\n" << r.output;
    return {};
  }
  std::vector<HostTensor> out;
  for (const std::string& p : paths) out.push_back(tensor_of(tools::read_npy(p)));
  return out;
}

// The oracle's values of `c.outputs`; {} (and a test failure) when it fails.
inline std::vector<HostTensor> run_tfjs_oracle(const OracleGraph& c) {
  std::ifstream text_file(c.graph.write(make_temp_dir() + "/graph.pbtxt"));
  std::stringstream text;
  text << text_file.rdbuf();
  return run_tfjs_oracle(text.str(), c.inputs, c.outputs);
}

// floe's values of `c.outputs` (the graph converted in-process for the host).
inline std::vector<HostTensor> run_floe(const OracleGraph& c) {
  conv::ConvertOptions options;
  options.graph_path = c.graph.write(make_temp_dir() + "/graph.pbtxt");
  options.outputs = c.outputs;
  return run_model(conv::convert(options).model, c.inputs);
}

inline std::vector<double> values_of(const HostTensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    switch (t.dtype) {
      case DType::kFloat32: v.push_back(t.as<float>()[i]); break;
      case DType::kInt32: v.push_back(t.as<int32_t>()[i]); break;
      case DType::kInt64: v.push_back(static_cast<double>(t.as<int64_t>()[i])); break;
      case DType::kBool: case DType::kUInt8: v.push_back(t.as<uint8_t>()[i]); break;
      case DType::kInt8: v.push_back(t.as<int8_t>()[i]); break;
      default: ADD_FAILURE() << "unexpected dtype " << dtype_name(t.dtype); return v;
    }
  }
  return v;
}

// floe against the oracle: same shapes, every value within `tolerance`
// (absolute, scaled by max(1, |oracle value|)). TF.js returns int64 tensors as
// int32 and floe may keep int64: values are compared, not dtypes.
inline void expect_matches_tfjs(const OracleGraph& c, double tolerance) {
  const std::vector<HostTensor> want = run_tfjs_oracle(c);
  const std::vector<HostTensor> got = run_floe(c);
  ASSERT_EQ(want.size(), c.outputs.size());
  ASSERT_EQ(got.size(), c.outputs.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(c.outputs[i]);
    // TF.js writes a scalar as shape [] and floe too; compare element counts and shapes.
    EXPECT_EQ(got[i].shape, want[i].shape);
    const std::vector<double> w = values_of(want[i]), g = values_of(got[i]);
    ASSERT_EQ(w.size(), g.size());
    ASSERT_FALSE(w.empty()) << "the oracle returned an empty tensor: nothing compared";
    for (size_t k = 0; k < w.size(); ++k) {
      EXPECT_LE(std::abs(w[k] - g[k]), tolerance * std::max(1.0, std::abs(w[k])))
          << "element " << k << ": floe " << g[k] << ", TF.js " << w[k];
    }
  }
}

// ---- TensorFlow Lite 2.9 (tflite_run.js) ------------------------------------

#define REQUIRE_TFLITE_ORACLE()                                                   \
  do {                                                                            \
    const std::string why = peer_unavailable("tflite_run.js", "tfjs-tflite-node"); \
    if (!why.empty()) GTEST_SKIP() << "SKIPPED: TFLite 2.9 cannot run: " << why;  \
  } while (0)

// TensorFlow Lite 2.9's outputs (as float: tflite_run.js writes float32) for
// `inputs` in the model's input order.
inline std::vector<std::vector<float>> run_tflite(const std::string& bytes, const std::vector<HostTensor>& inputs,
                                           size_t outputs) {
  const std::string dir = make_temp_dir();
  std::ofstream(dir + "/m.tflite", std::ios::binary) << bytes;
  std::string command = "node " + tfjs_peers_dir() + "/tflite_run.js " + dir + "/m.tflite";
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::string path = dir + "/in" + std::to_string(k) + ".npy";
    tools::write_npy(path, inputs[k].dtype, inputs[k].shape, inputs[k].data.data());
    command += " -i " + std::to_string(k) + "=" + path;
  }
  for (size_t k = 0; k < outputs; ++k) command += " -o " + std::to_string(k) + "=" + dir + "/out" + std::to_string(k) + ".npy";
  const CommandResult r = run_command(command);
  if (r.exit_code != 0) {
    ADD_FAILURE() << "tflite_run.js failed (" << r.exit_code << "): " << command << "\n" << r.output;
    return {};
  }
  std::vector<std::vector<float>> out;
  for (size_t k = 0; k < outputs; ++k) {
    const tools::NpyArray a = tools::read_npy(dir + "/out" + std::to_string(k) + ".npy");
    const float* f = reinterpret_cast<const float*>(a.data.data());
    out.emplace_back(f, f + a.data.size() / 4);
  }
  return out;
}

// Element i of an int8, int16, int32 or float32 tensor, as a double (exact).
inline double element_of(const HostTensor& t, size_t i) {
  switch (t.dtype) {
    case DType::kInt8:
      return static_cast<int8_t>(t.data[i]);
    case DType::kInt16: {
      int16_t v;
      std::memcpy(&v, &t.data[i * 2], 2);
      return v;
    }
    case DType::kInt32: {
      int32_t v;
      std::memcpy(&v, &t.data[i * 4], 4);
      return v;
    }
    default: {
      float v;
      std::memcpy(&v, &t.data[i * 4], 4);
      return v;
    }
  }
}

// A one-input, one-output .tflite model converted for each of `targets`
// equals TensorFlow Lite 2.9 on 20 seeded values of input "x" (`input(seed)`,
// seeds 1..20; the oracle runs once per input): every element within
// `tolerance` (0: equal). `check_model(target, model)`, when given, looks at
// each converted model first. The caller skips without the oracle
// (REQUIRE_TFLITE_ORACLE).
template <typename MakeInput, typename CheckModel>
void expect_converted_like_tflite(const std::string& bytes, const std::vector<std::string>& targets,
                                  MakeInput input, double tolerance, CheckModel check_model) {
  const std::string path = make_temp_dir() + "/m.tflite";
  std::ofstream(path, std::ios::binary) << bytes;
  std::vector<std::vector<uint8_t>> models;
  for (const std::string& target : targets) {
    conv::ConvertOptions options;
    options.graph_path = path;
    options.target = target;
    models.push_back(conv::convert(options).model);
    check_model(target, models.back());
  }
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    const HostTensor x = input(seed);
    const std::vector<std::vector<float>> want = run_tflite(bytes, {x}, 1);
    ASSERT_EQ(want.size(), 1u);
    for (size_t t = 0; t < targets.size(); ++t) {
      const std::vector<HostTensor> got = run_model(models[t], {{"x", x}});
      ASSERT_EQ(got.size(), 1u);
      const size_t n = got[0].data.size() / dtype_size(got[0].dtype);
      ASSERT_EQ(n, want[0].size());
      size_t differing = 0;
      for (size_t i = 0; i < n; ++i) {
        differing += std::fabs(element_of(got[0], i) - static_cast<double>(want[0][i])) > tolerance;
      }
      EXPECT_EQ(differing, 0u) << targets[t] << " seed " << seed << ": " << differing << " of " << n
                               << " differ (first: floe " << element_of(got[0], 0) << ", TFLite " << want[0][0]
                               << ")";
    }
  }
}

// TensorFlow Lite 2.9 fed `inputs` (values of input 0) in streams of
// `steps`: each stream on a fresh interpreter, whose variable tensors (SVDF's,
// LSTM's state) carry over its steps (tests/e2e/tflite_sequence.js). Output
// 0 of every invocation, in order, as doubles (exact for float32 and int32).
inline std::vector<std::vector<double>> run_tflite_stream(const std::string& model_bytes,
                                                          const std::vector<HostTensor>& inputs, size_t steps) {
  const std::string dir = make_temp_dir();
  std::ofstream(dir + "/m.tflite", std::ios::binary) << model_bytes;
  {
    std::ofstream bin(dir + "/inputs.bin", std::ios::binary);
    for (const HostTensor& t : inputs) bin.write(reinterpret_cast<const char*>(t.data.data()), static_cast<std::streamsize>(t.data.size()));
  }
  const std::string command = "node " FLOE_SOURCE_DIR "/tests/e2e/tflite_sequence.js " + tfjs_peers_dir() + " " + dir +
                              "/m.tflite " + dir + "/inputs.bin " + std::to_string(steps) + " " +
                              std::to_string(steps == 0 ? 0 : inputs.size() / steps);
  const CommandResult r = run_command(command);
  if (r.exit_code != 0) {
    ADD_FAILURE() << "tflite_sequence.js failed (" << r.exit_code << "): " << command << "\n" << r.output;
    return {};
  }
  std::vector<std::vector<double>> outputs;
  std::istringstream lines(r.output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("[[", 0) != 0) continue;  // [[output 0's values], ...]
    std::vector<double> values;
    std::istringstream fields(line.substr(2, line.find(']') - 2));
    std::string field;
    while (std::getline(fields, field, ',')) values.push_back(std::stod(field));
    outputs.push_back(std::move(values));
  }
  return outputs;
}

}  // namespace floe::testing
