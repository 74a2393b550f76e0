// SPDX-License-Identifier: Apache-2.0
// floe::SelfTest on this machine: a model converted with its self-test
// (--selftest-input) passes every op on the kernels this build runs (XNNPACK
// for the MNIST example's float ops; the int8 KWS model on the reference
// kernels, exact; a run-time WHILE loop). Built for the host and for aarch64, where the
// aarch64-linux preset runs it under qemu-aarch64.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "runtime/core/backend.h"
#include "runtime/core/model.h"
#include "runtime/core/selftest.h"
#include "runtime/tools/model_file.h"

namespace floe {
namespace {

// `loop`: the model has a run-time WHILE, whose ops are checked once per run.
void expect_selftest_passes(const std::string& name, bool xnnpack_ops, bool loop = false, bool one_branch = false) {
  const std::string path = std::string(FLOE_XNNPACK_MODELS) + "/" + name + ".floe";
  std::FILE* probe = std::fopen(path.c_str(), "rb");
  if (probe == nullptr) GTEST_SKIP() << "SKIPPED: " << path << " not built (the ../shared corpus is absent)";
  std::fclose(probe);
  ASSERT_EQ(backend_initialize(), Status::kOk);
  const tools::ModelFile file = tools::read_model_file(path);
  Model model;
  LoadOptions options;
  options.verify_checksum = true;
  ASSERT_EQ(model.Load(file.data.get(), file.size, options), Status::kOk) << model.error().message;
  const size_t bytes = static_cast<size_t>(model.arena_size());
  const tools::AlignedBytes arena = tools::aligned_bytes(bytes);
  const SelfTestResult r = SelfTest(model, arena.get(), bytes);
  EXPECT_EQ(r.status, Status::kOk) << name << ": op " << r.op << " (" << r.op_name << "), output " << r.output
                                   << ": " << r.message;
  if (loop) {
    EXPECT_GT(r.ops_checked, model.operator_count());
  } else if (one_branch) {
    EXPECT_LT(r.ops_checked, model.operator_count());  // the untaken branch's ops never ran
  } else {
    EXPECT_EQ(r.ops_checked, model.operator_count());
  }
  std::printf("%s: self-test %s, %zu ops checked on %s\n", name.c_str(), r.status == Status::kOk ? "PASS" : "FAIL",
              r.ops_checked, xnnpack_ops ? backend_description() : "the reference kernels");
}

TEST(XnnpackSelfTest, MnistPassesOnThisMachinesKernels) { expect_selftest_passes("selftest_mnist", true); }

TEST(XnnpackSelfTest, KwsInt8PassesExactly) { expect_selftest_passes("selftest_kws_int8", false); }

// examples/while_loop: a loop whose trip count depends on the input, run as a
// WHILE op, its body's ADD and MUL on XNNPACK; its output against the host's.
TEST(XnnpackSelfTest, RunTimeWhileLoopPasses) { expect_selftest_passes("selftest_while_loop", true, true); }

// examples/nested_loop: that loop as a WHILE inside another WHILE's body.
TEST(XnnpackSelfTest, NestedRunTimeWhileLoopsPass) { expect_selftest_passes("selftest_nested_loop", true, true); }

// examples/runtime_if: a cond run as an IF op, the taken branch's MUL on
// XNNPACK, the other branch's XNNPACK op skipped; its output against the host's.
TEST(XnnpackSelfTest, RunTimeIfPasses) { expect_selftest_passes("selftest_runtime_if", true, false, true); }

}  // namespace
}  // namespace floe
