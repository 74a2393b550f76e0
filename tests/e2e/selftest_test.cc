// SPDX-License-Identifier: Apache-2.0
// The on-device self-test end to end: floe-convert --selftest-input embeds the
// MNIST example's digit 7, the host's outputs and every op's digest; SelfTest
// passes on the untouched model (float on each target's kernels, int8 exactly)
// and, with one constant byte corrupted and the file checksum off, names the
// first op that reads it; floe-run --selftest says the same.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "converter/ir/error.h"
#include "converter/pipeline/convert.h"
#include "runtime/core/backend.h"
#include "runtime/core/model.h"
#include "runtime/core/selftest.h"
#include "runtime/tools/model_file.h"
#include "schemas/floe_generated.h"

namespace {

const std::string kMnist = std::string(FLOE_SOURCE_DIR) + "/examples/mnist_mlp/model";

std::vector<uint8_t> convert_mnist(const std::string& target, bool int8, bool with_selftest = true) {
  floe::conv::ConvertOptions options;
  options.graph_path = kMnist + "/mnist_mlp.meta";
  options.checkpoint_path = kMnist;
  options.outputs = {"softmax_linear/add"};
  options.input_shapes["images"] = {1, 784};
  options.target = target;
  if (int8) {
    options.quantize_int8 = true;
    options.calibration_path = kMnist + "/digit_3.npy";  // one [1, 784] sample is enough to calibrate
  }
  if (with_selftest) options.selftest_inputs["images"] = kMnist + "/digit_7.npy";
  return floe::conv::convert(options).model;
}

// The result, with the op's name copied: SelfTestResult::op_name points into
// the model, which is freed when self_test returns.
struct Outcome : floe::SelfTestResult {
  std::string name;
};

Outcome self_test(const std::vector<uint8_t>& bytes) {
  EXPECT_EQ(floe::backend_initialize(), floe::Status::kOk);
  floe::tools::AlignedBytes data = floe::tools::aligned_bytes(bytes.size());
  std::memcpy(data.get(), bytes.data(), bytes.size());
  floe::Model model;
  // Model::Load(data, size): no file checksum, so a corrupted constant loads.
  EXPECT_EQ(model.Load(data.get(), bytes.size()), floe::Status::kOk) << model.error().message;
  const size_t arena_size = static_cast<size_t>(model.arena_size());
  floe::tools::AlignedBytes arena = floe::tools::aligned_bytes(arena_size);
  Outcome outcome;
  static_cast<floe::SelfTestResult&>(outcome) = floe::SelfTest(model, arena.get(), arena_size);
  outcome.name = outcome.op_name != nullptr ? outcome.op_name : "";
  outcome.op_name = nullptr;
  return outcome;
}

// The index of the `nth` operator with this opcode.
uint32_t nth_op(const std::vector<uint8_t>& bytes, floe::schema::OpCode opcode, int nth) {
  const auto* ops = floe::schema::GetModel(bytes.data())->operators();
  for (uint32_t i = 0; i < ops->size(); ++i) {
    if (ops->Get(i)->opcode() == opcode && nth-- == 0) return i;
  }
  ADD_FAILURE() << "no such operator";
  return 0;
}

// Corrupts the bias (input 2) of operator `op`: its first non-negative 32-bit
// element gets bit 30 set (float: an exponent bit, int32: +2^30), so the op's
// output changes whatever clamp follows.
std::vector<uint8_t> corrupt_bias(std::vector<uint8_t> bytes, uint32_t op) {
  const auto* model = floe::schema::GetModel(bytes.data());
  const auto* bias = model->tensors()->Get(static_cast<uint32_t>(model->operators()->Get(op)->inputs()->Get(2)));
  EXPECT_TRUE(bias->is_constant());
  const size_t start = static_cast<size_t>(model->constants()->data() - bytes.data()) + bias->offset();
  for (size_t at = start; at < start + bias->size(); at += 4) {
    if ((bytes[at + 3] & 0x80) == 0) {
      bytes[at + 3] |= 0x40;  // little-endian: byte 3 holds bits 24..31
      return bytes;
    }
  }
  ADD_FAILURE() << "no non-negative bias element";
  return bytes;
}

TEST(SelfTest, FloatModelPassesOnEveryTarget) {
  for (const char* target : {"reference", "cortex-m4", "host"}) {
    const Outcome r = self_test(convert_mnist(target, false));
    EXPECT_EQ(r.status, floe::Status::kOk) << target << ": " << r.message << " at op " << r.op << " " << r.name;
    EXPECT_EQ(r.ops_checked, 3u) << target;
    EXPECT_FLOAT_EQ(r.tolerance, 1e-4f);
  }
}

TEST(SelfTest, CorruptedFloatConstantNamesTheFirstOpThatReadsIt) {
  for (const char* target : {"reference", "host"}) {
    const std::vector<uint8_t> model = convert_mnist(target, false);
    const uint32_t second = nth_op(model, floe::schema::OpCode::MATMUL, 1);
    const Outcome r = self_test(corrupt_bias(model, second));
    EXPECT_EQ(r.status, floe::Status::kKernelError) << target;
    EXPECT_EQ(r.op, static_cast<int32_t>(second)) << target;
    EXPECT_EQ(r.name, "hidden2/MatMul") << target;
  }
}

TEST(SelfTest, Int8ModelIsExactAndACorruptedBiasIsNamed) {
  const std::vector<uint8_t> model = convert_mnist("reference", true);
  const Outcome ok = self_test(model);
  EXPECT_EQ(ok.status, floe::Status::kOk) << ok.message << " at op " << ok.op << " " << ok.name;
  const uint32_t first = nth_op(model, floe::schema::OpCode::MATMUL, 0);
  const Outcome bad = self_test(corrupt_bias(model, first));
  EXPECT_EQ(bad.status, floe::Status::kKernelError);
  EXPECT_EQ(bad.op, static_cast<int32_t>(first));
  EXPECT_EQ(bad.name, "hidden1/MatMul");
}

TEST(SelfTest, ModelWithoutSelfTestSaysSo) {
  const Outcome r = self_test(convert_mnist("reference", false, false));
  EXPECT_EQ(r.status, floe::Status::kNotFound);
  EXPECT_NE(std::string(r.message).find("--selftest-input"), std::string::npos);
}

TEST(SelfTest, WrongSampleIsRefusedAtConversion) {
  floe::conv::ConvertOptions options;
  options.graph_path = kMnist + "/mnist_mlp.meta";
  options.checkpoint_path = kMnist;
  options.outputs = {"softmax_linear/add"};  // images left [?, 784]: batch 1 by default
  options.selftest_inputs["pixels"] = kMnist + "/digit_7.npy";
  try {
    floe::conv::convert(options);
    FAIL() << "converted with a sample for an input the model does not have";
  } catch (const floe::conv::ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("no sample for input 'images"), std::string::npos) << e.what();
  }
}

// floe-convert --selftest-input and floe-run --selftest, as a user runs them.
std::string run(const std::string& command, int* status) {
  std::string output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  char buffer[512];
  while (pipe != nullptr && std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  const int raw = pipe != nullptr ? pclose(pipe) : -1;
  *status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return output;
}

TEST(SelfTest, CommandLine) {
  const std::string bin = std::string(FLOE_BINARY_DIR) + "/bin/";
  const std::string dir = std::string(FLOE_BINARY_DIR) + "/tests/e2e/selftest_cli";
  std::filesystem::create_directories(dir);
  const std::string model = dir + "/mnist_selftest.floe";
  int status = -1;
  const std::string converted =
      run(bin + "floe-convert --graph " + kMnist + "/mnist_mlp.meta --checkpoint " + kMnist +
              " --outputs softmax_linear/add --input-shape images=1,784 --selftest-input images=" + kMnist +
              "/digit_7.npy -o " + model, &status);
  ASSERT_EQ(status, 0) << converted;
  EXPECT_NE(converted.find("self-test: 1 input(s)"), std::string::npos) << converted;
  std::string out = run(bin + "floe-run " + model + " --selftest", &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("self-test: PASS: 3 ops"), std::string::npos) << out;

  std::ifstream in(model, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::vector<uint8_t> corrupted = corrupt_bias(bytes, nth_op(bytes, floe::schema::OpCode::MATMUL, 0));
  const std::string bad = dir + "/mnist_selftest_corrupted.floe";
  std::ofstream(bad, std::ios::binary).write(reinterpret_cast<const char*>(corrupted.data()),
                                             static_cast<std::streamsize>(corrupted.size()));
  out = run(bin + "floe-run " + bad + " --selftest", &status);
  EXPECT_EQ(status, 2) << out;  // the file checksum catches it first
  EXPECT_NE(out.find("checksum"), std::string::npos) << out;
  out = run(bin + "floe-run " + bad + " --selftest --no-verify-checksum", &status);
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("FAIL at op 0 (hidden1/MatMul)"), std::string::npos) << out;
}

}  // namespace
