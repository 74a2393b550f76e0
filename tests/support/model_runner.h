// SPDX-License-Identifier: Apache-2.0
// Test helpers: convert in-process, run a .floe model through the runtime,
// read the corpus' CSV expectations, run the CLI tools.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "converter/ir/host_tensor.h"
#include "converter/pipeline/convert.h"

namespace floe::testing {

using conv::HostTensor;

// Runs `model` with `inputs` (by input name) and returns every output in order.
// Fails the current test (ADD_FAILURE) and returns {} when anything fails.
std::vector<HostTensor> run_model(const std::vector<uint8_t>& model,
                                  const std::map<std::string, HostTensor>& inputs);

HostTensor make_f32(std::vector<int64_t> shape, const std::vector<float>& values);
HostTensor make_i32(std::vector<int64_t> shape, const std::vector<int32_t>& values);
// Seeded uniform values in [lo, hi).
HostTensor random_f32(std::vector<int64_t> shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f);
std::vector<float> as_floats(const HostTensor& t);

// A dl4j corpus `.csv` (one value per line) and its `.shape` file.
HostTensor read_csv_tensor(const std::string& csv_path, const std::string& shape_path);

// max |a-b| over elements; +inf when sizes differ.
float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b);

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout + stderr
};
// Runs a shell command, capturing its output.
CommandResult run_command(const std::string& command);

std::string tool_path(const std::string& name);  // build/<...>/bin/<name>
std::string make_temp_dir();
bool file_exists(const std::string& path);

// `bytes` (a .tflite) through the floe-convert CLI, which must refuse it:
// exit 2 and no output file (both EXPECTed); its output and --error-json.
struct Refusal {
  std::string output, json;
};
Refusal convert_refused(const std::string& bytes);

}  // namespace floe::testing
