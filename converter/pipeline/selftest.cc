// SPDX-License-Identifier: Apache-2.0
#include "converter/pipeline/selftest.h"

#include <cstring>
#include <memory>
#include <set>
#include <stdexcept>

#include "converter/eval/run_lowered.h"
#include "converter/ir/error.h"
#include "runtime/tools/npy.h"
#include "schemas/contract/selftest.h"

namespace floe::conv {
namespace {

Value constant_value(const std::string& name, DType dtype, std::vector<int64_t> shape, std::vector<uint8_t> bytes) {
  auto data = std::make_shared<HostTensor>();
  data->dtype = dtype;
  data->shape = shape;
  data->data = std::move(bytes);
  Value value;
  value.name = name;
  value.dtype = dtype;
  value.shape = std::move(shape);
  value.constant = std::move(data);
  return value;
}

HostTensor read_sample(const std::string& path, const Value& input) {
  tools::NpyArray array;
  try {
    array = tools::read_npy(path);
  } catch (const std::exception& e) {
    throw ConvertError(std::string("--selftest-input: ") + e.what());
  }
  HostTensor sample;
  sample.dtype = input.dtype;
  sample.shape = input.shape;
  if (array.dtype != input.dtype || array.data.size() != input.byte_size()) {
    throw ConvertError("--selftest-input " + path + ": input '" + input.name + "' is " +
                       dtype_name(input.dtype) + " " + shape_to_string(input.shape) + ", the file holds " +
                       dtype_name(array.dtype) + " " + shape_to_string(array.shape));
  }
  sample.data = std::move(array.data);
  return sample;
}

}  // namespace

std::string attach_selftest(const std::map<std::string, std::string>& input_files, LoweredModel* model) {
  if (model->ops.empty()) throw ConvertError("--selftest-input: the model has no operators to check");
  std::vector<HostTensor> inputs;
  std::set<std::string> used;
  for (int id : model->inputs) {
    const Value& input = model->values[static_cast<size_t>(id)];
    auto file = input_files.find(input.name);
    if (file == input_files.end()) {
      const size_t colon = input.name.rfind(":0");
      if (colon != std::string::npos && colon + 2 == input.name.size()) file = input_files.find(input.name.substr(0, colon));
    }
    if (file == input_files.end()) {
      throw ConvertError("--selftest-input: no sample for input '" + input.name +
                         "' (give NAME=file.npy for every model input)");
    }
    used.insert(file->first);
    inputs.push_back(read_sample(file->second, input));
  }
  for (const auto& [name, path] : input_files) {
    if (used.count(name) == 0) throw ConvertError("--selftest-input: the model has no input '" + name + "'");
  }

  // Every value as the reference kernels computed it, then each op's digest.
  std::map<int, HostTensor> values;
  LoweredRunner runner(*model, "self-test");
  const std::vector<HostTensor> outputs =
      runner.run(inputs, [&](int value, const TensorView& view) { values[value] = host_tensor_of(view); });
  const size_t op_count = model->ops.size();
  std::vector<uint8_t> crc_bytes(op_count * sizeof(uint32_t));
  std::vector<uint8_t> sum_bytes(op_count * 2 * sizeof(float));
  for (size_t i = 0; i < op_count; ++i) {
    selftest::Digest digest;
    for (int out : model->ops[i].outputs) {
      // Unseen: the op is on the branch of an IF the sample does not take, and
      // the device, taking the same branch, never checks it.
      const auto seen = out < 0 ? values.end() : values.find(out);
      if (seen == values.end()) continue;
      const HostTensor& t = seen->second;
      selftest::add_output(&digest, t.dtype, t.data.data(), t.data.size());
    }
    const float sums[2] = {static_cast<float>(digest.sum), static_cast<float>(digest.bound)};
    std::memcpy(crc_bytes.data() + i * sizeof(uint32_t), &digest.crc32c, sizeof(uint32_t));
    std::memcpy(sum_bytes.data() + i * sizeof sums, sums, sizeof sums);
  }

  std::vector<Value> added;
  for (size_t k = 0; k < inputs.size(); ++k) {
    added.push_back(constant_value(selftest::kInputPrefix + std::to_string(k), inputs[k].dtype, inputs[k].shape,
                                   inputs[k].data));
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    added.push_back(constant_value(selftest::kOutputPrefix + std::to_string(k), outputs[k].dtype,
                                   outputs[k].shape, outputs[k].data));
  }
  const int64_t ops = static_cast<int64_t>(op_count);
  added.push_back(constant_value(selftest::kOpCrc32c, DType::kInt32, {ops}, std::move(crc_bytes)));
  added.push_back(constant_value(selftest::kOpSums, DType::kFloat32, {ops, 2}, std::move(sum_bytes)));
  std::vector<uint8_t> tolerance(sizeof(float));
  std::memcpy(tolerance.data(), &selftest::kFloatTolerance, sizeof(float));
  added.push_back(constant_value(selftest::kTolerance, DType::kFloat32, {1}, std::move(tolerance)));
  for (Value& v : added) model->values.push_back(std::move(v));
  return "  self-test: " + std::to_string(inputs.size()) + " input(s), " + std::to_string(outputs.size()) +
         " expected output(s) and " + std::to_string(op_count) +
         " op digests embedded (int8 and integer outputs exact, float32 within 1e-4)\n";
}

}  // namespace floe::conv
