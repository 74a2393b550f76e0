// SPDX-License-Identifier: Apache-2.0
// The whole conversion: load -> resolve feeds/fetches -> prune -> freeze ->
// check ops -> infer/fold/lower -> plan -> emit. One call, one result or one
// ConvertError; nothing is written to disk here (the CLI does that atomically).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "converter/emit/emit.h"
#include "converter/optimize/optimize.h"
#include "converter/passes/control_flow.h"
#include "converter/quantize/post_training.h"

namespace floe::conv {

struct ConvertOptions {
  std::string graph_path;
  std::string checkpoint_path;             // prefix, directory or file; "" = none
  std::vector<std::string> outputs;        // node or node:k
  std::vector<std::string> inputs;         // any tensor; default: the Placeholders the outputs need
  std::map<std::string, std::vector<int64_t>> input_shapes;  // fixes unknown dims
  // Kernel backends are chosen for this target (converter/lower/backend_xnnpack.h):
  // "reference" (portable kernels only), "x86_64", "x86_64-avx512", "aarch64", "aarch64-no-dotprod" or "host".
  std::string target = "reference";
  // int8 / int16x8 ops on the host and aarch64 targets: false (the default)
  // runs them on floe's own integer kernels, bit-exact with TFLM's reference
  // arithmetic; true (--int8-rounding fast) lets XNNPACK take the int8 ops it
  // can, whose float requantization may differ from TFLM's by one step per op.
  bool int8_fast_rounding = false;
  // SavedModel: the MetaGraphDef whose tag set equals this one.
  std::vector<std::string> tags = {"serve"};
  // SignatureDef supplying default inputs/outputs ("" = serving_default, or the only one).
  std::string signature;
  // Placeholders fixed to constants at conversion time: name -> "v0,v1,..." (e.g.
  // is_training -> "false"); lets Switch/Merge on them resolve statically.
  std::map<std::string, std::string> frozen_inputs;
  // Optimization passes over the lowered model (converter/optimize/):
  // all on by default; --no-optimize / --disable-pass NAME turn them off.
  OptimizeOptions optimize;
  // Post-training int8 quantization (--quantize int8 --calibration PATH):
  // calibrated on the samples in `calibration_path` (.npz or .npy directory).
  bool quantize_int8 = false;
  std::string calibration_path;
  PostTrainingOptions post_training;
  // On-device self-test (--selftest-input NAME=x.npy): input name -> .npy
  // sample; the model then carries it, the host's outputs and every op's
  // digest (converter/pipeline/selftest.h).
  std::map<std::string, std::string> selftest_inputs;
  // Keep the ops in the order the graph (or .tflite) lists them; by default
  // they run in the order with the smallest peak of live activations
  // (converter/plan/op_schedule.h).
  bool keep_op_order = false;
  // --memory-regions NAME=SIZE,... (fastest first): the most-accessed tensors
  // go to the first regions, the rest to the last (plan/arena_plan.h); the
  // conversion is refused when they cannot fit. Empty: one arena, no limit.
  std::vector<MemoryRegion> memory_regions;
  // Bound of a TF1 while loop run at run time (its condition depends on an
  // input) when the graph gives none (no maximum_iterations); 0 = not given,
  // and such a loop is refused. More iterations fail Interpreter::Invoke().
  uint32_t max_loop_iterations = 0;
  // --loops: a loop whose trip count is known at conversion is unrolled or run
  // as a WHILE op by the cost rule (kAuto), always unrolled, or always run at
  // run time (refused, with the reason, when it cannot); passes/control_flow.h.
  LoopMode loops = LoopMode::kAuto;
  // The summary lists every rewrite, loop and layer (floe-convert --verbose);
  // by default a list longer than a screenful keeps its first lines and says
  // how many it left out.
  bool verbose_summary = false;
  // Called as each stage starts ("lowering", "calibrating: sample 3 of 100",
  // ...): floe-convert shows it on a terminal once a conversion takes over 1 s.
  std::function<void(const std::string&)> progress;
};

// Plans the model's arena (plan/arena_plan.h, with what emit/ needs around the
// activations) and writes the .floe (emit/): how every conversion ends, and a
// lowered model built by hand becomes a file.
std::vector<uint8_t> plan_and_emit(const LoweredModel& model, const std::string& producer, EmitStats* stats = nullptr,
                                   const std::vector<MemoryRegion>& memory_regions = {});

// Parses "fast=64K,slow=4M" (sizes in bytes, or with K / M: 1024 / 1024^2)
// into regions; throws ConvertError naming the bad entry.
std::vector<MemoryRegion> parse_memory_regions(const std::string& text);

struct ConvertResult {
  std::vector<uint8_t> model;
  std::string summary;  // human-readable report (op histogram, parameters, arena)
  EmitStats stats;
  OptimizeReport optimization;  // what each optimization pass did
};

ConvertResult convert(const ConvertOptions& options);

}  // namespace floe::conv
