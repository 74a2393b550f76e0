// SPDX-License-Identifier: Apache-2.0
#include "tests/support/model_runner.h"
#include "tests/support/operator_scramble.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <system_error>
#include <sys/stat.h>
#include <sys/wait.h>

#include "converter/eval/run_lowered.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"

namespace floe::testing {

std::vector<HostTensor> run_model(const std::vector<uint8_t>& bytes,
                                  const std::map<std::string, HostTensor>& inputs) {
  tools::AlignedBytes buffer = tools::aligned_bytes(bytes.size());
  std::memcpy(buffer.get(), bytes.data(), bytes.size());
  Model model;
  if (model.Load(buffer.get(), bytes.size()) != Status::kOk) {
    ADD_FAILURE() << "Model::Load: " << model.error().message;
    return {};
  }
  tools::AlignedBytes arena = tools::aligned_bytes(static_cast<size_t>(model.arena_size()));
  Interpreter interpreter(model, arena.get(), static_cast<size_t>(model.arena_size()));
  if (interpreter.Init() != Status::kOk) {
    ADD_FAILURE() << "Init: " << interpreter.error().message << " (op " << interpreter.error().op << ")";
    return {};
  }
  // The stated arena is exact without XNNPACK and an upper bound with it.
  if (interpreter.backend_op_count() == 0) {
    EXPECT_EQ(interpreter.arena_used(), model.arena_size()) << "arena bytes Init() used";
  } else {
    EXPECT_LE(interpreter.arena_used(), model.arena_size()) << "arena bytes Init() used";
  }
  // Invoke() runs on the prepared ops alone: every model these tests run must
  // compute the same with its operator tables destroyed.
  scramble_operator_tables(buffer.get());
  for (const auto& [name, value] : inputs) {
    const int index = interpreter.input_index(name.c_str());
    if (index < 0) {
      ADD_FAILURE() << "no input named " << name;
      return {};
    }
    const TensorView in = interpreter.input(static_cast<size_t>(index));
    if (in.bytes != value.data.size() || in.dtype != value.dtype) {
      ADD_FAILURE() << "input " << name << " needs " << in.bytes << " bytes of " << dtype_name(in.dtype);
      return {};
    }
    std::memcpy(in.data, value.data.data(), in.bytes);
  }
  if (interpreter.Invoke() != Status::kOk) {
    ADD_FAILURE() << "Invoke: " << interpreter.error().message;
    return {};
  }
  std::vector<HostTensor> outputs;
  for (size_t i = 0; i < interpreter.output_count(); ++i) outputs.push_back(conv::host_tensor_of(interpreter.output(i)));
  return outputs;
}

HostTensor make_f32(std::vector<int64_t> shape, const std::vector<float>& values) {
  HostTensor t;
  t.dtype = DType::kFloat32;
  t.shape = std::move(shape);
  t.data.resize(values.size() * sizeof(float));
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

HostTensor make_i32(std::vector<int64_t> shape, const std::vector<int32_t>& values) {
  HostTensor t;
  t.dtype = DType::kInt32;
  t.shape = std::move(shape);
  t.data.resize(values.size() * sizeof(int32_t));
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

HostTensor random_f32(std::vector<int64_t> shape, uint32_t seed, float lo, float hi) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> values(static_cast<size_t>(n));
  for (float& v : values) v = dist(rng);
  return make_f32(std::move(shape), values);
}

std::vector<float> as_floats(const HostTensor& t) {
  std::vector<float> out(t.data.size() / sizeof(float));
  std::memcpy(out.data(), t.data.data(), out.size() * sizeof(float));
  return out;
}

HostTensor read_csv_tensor(const std::string& csv_path, const std::string& shape_path) {
  std::vector<int64_t> shape;
  std::ifstream shape_in(shape_path);
  for (std::string line; std::getline(shape_in, line);) {
    if (!line.empty()) shape.push_back(std::stoll(line));
  }
  std::vector<float> values;
  std::ifstream csv(csv_path);
  for (std::string line; std::getline(csv, line);) {
    if (!line.empty()) values.push_back(std::stof(line));
  }
  // dl4j quirk: a shape of [0] with one value is a scalar.
  if (shape.size() == 1 && shape[0] == 0 && values.size() == 1) shape.clear();
  return make_f32(shape, values);
}

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return std::numeric_limits<float>::infinity();
  float worst = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char chunk[4096];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), pipe)) > 0) result.output.append(chunk, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string tool_path(const std::string& name) { return std::string(FLOE_BINARY_DIR) + "/bin/" + name; }

namespace {

// The directories this test process made, removed when it exits (a suite run
// made thousands); FLOE_KEEP_TEST_DIRS=1 keeps them to look at a failure.
struct TempDirs {
  std::vector<std::string> made;
  ~TempDirs() {
    if (std::getenv("FLOE_KEEP_TEST_DIRS") != nullptr) return;
    for (const std::string& dir : made) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  }
};

}  // namespace

std::string make_temp_dir() {
  static TempDirs dirs;
  char pattern[] = "/tmp/floe-test-XXXXXX";
  const char* dir = ::mkdtemp(pattern);
  if (dir == nullptr) return "/tmp";
  dirs.made.push_back(dir);
  return dir;
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

Refusal convert_refused(const std::string& bytes) {
  const std::string dir = make_temp_dir();
  std::ofstream(dir + "/model.tflite", std::ios::binary) << bytes;
  const CommandResult r = run_command(tool_path("floe-convert") + " --graph " + dir + "/model.tflite -o " + dir +
                                      "/out.floe --error-json " + dir + "/error.json");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_FALSE(file_exists(dir + "/out.floe")) << "output file left behind";
  std::ifstream json(dir + "/error.json");
  return {r.output, std::string(std::istreambuf_iterator<char>(json), std::istreambuf_iterator<char>())};
}

}  // namespace floe::testing
