// SPDX-License-Identifier: Apache-2.0
// floe-convert: TF1 GraphDef/MetaGraphDef/SavedModel (+ checkpoint) -> .floe
// model; --info / --list-ops describe a graph (or a checkpoint) instead, and
// --list-ops --all every op floe knows.
// Exit 0 on success; on any error exit 2 with one message naming the file /
// node / op, and leave no output file behind (the model is written to a
// temporary file and renamed into place only when complete).
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <chrono>
#include <utility>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <cstdlib>
#include <cstring>

#include "converter/ir/split.h"
#include "converter/ir/error.h"
#include "converter/pipeline/convert.h"
#include "converter/pipeline/info.h"
#include "converter/tools/atomic_write.h"
#include "runtime/core/model.h"
#include "runtime/tools/kernel_selection.h"

namespace {

// One line on stderr saying which stage a conversion is in, once it has run
// over a second, on a terminal only (a log or a pipe gets nothing); cleared
// when the conversion ends.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled), start_(Clock::now()) {}
  ~ProgressLine() { clear(); }
  void show(const std::string& stage) {
    if (!enabled_) return;
    const Clock::time_point now = Clock::now();
    const double seconds = std::chrono::duration<double>(now - start_).count();
    if (seconds < 1.0) return;
    // A stage's own updates ("calibrating: sample k of n") at most 10 a second.
    std::string prefix = stage.substr(0, stage.find(':'));
    if (shown_ && prefix == prefix_ && now - last_ < std::chrono::milliseconds(100)) return;
    std::fprintf(stderr, "\r\033[Kfloe-convert: %.1f s: %s", seconds, stage.c_str());
    std::fflush(stderr);
    shown_ = true;
    last_ = now;
    prefix_ = std::move(prefix);
  }
  void clear() {
    if (!shown_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  Clock::time_point start_, last_;
  bool shown_ = false;
  std::string prefix_;  // the stage last shown, up to its ':'
};

// "name=1,28,28,1"
std::pair<std::string, std::vector<int64_t>> parse_input_shape(const std::string& spec) {
  const size_t eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0) {
    throw floe::conv::ConvertError("--input-shape '" + spec + "': expected NAME=d0,d1,...");
  }
  std::vector<int64_t> dims;
  for (const std::string& d : floe::conv::split_nonempty(spec.substr(eq + 1), ',')) {
    char* end = nullptr;
    const long long v = std::strtoll(d.c_str(), &end, 10);
    if (end == d.c_str() || *end != '\0' || v < 0) {
      throw floe::conv::ConvertError("--input-shape '" + spec + "': '" + d +
                                     "' is not a non-negative integer");
    }
    dims.push_back(v);
  }
  return {spec.substr(0, eq), dims};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"floe-convert: TensorFlow 1.x graph (+ checkpoint) -> floe model"};
  floe::conv::ConvertOptions options;
  std::string outputs, inputs, output_path;
  std::vector<std::string> shapes, frozen_inputs;
  std::string tags = "serve";
  bool quiet = false, info = false, list_ops = false;
  app.add_option("--graph,-g", options.graph_path,
                 "GraphDef (.pb/.pbtxt), MetaGraphDef (.meta) or SavedModel directory");
  app.add_option("--checkpoint,-c", options.checkpoint_path,
                 "checkpoint prefix, or a directory with a 'checkpoint' file");
  app.add_option("--outputs", outputs, "comma-separated output nodes or tensors (node:k)");
  app.add_option("--inputs", inputs,
                 "comma-separated tensors to feed (default: the Placeholders the outputs need)");
  app.add_option("--input-shape", shapes, "NAME=d0,d1,... fixes an input's shape (repeatable)");
  app.add_option("--tags", tags, "SavedModel: comma-separated tag set of the MetaGraphDef (default: serve)");
  app.add_option("--signature", options.signature,
                 "SignatureDef giving the default inputs/outputs (default: serving_default)");
  app.add_option("--freeze-input", frozen_inputs,
                 "NAME=v0,v1,... fixes a placeholder to constant values, e.g. is_training=false (repeatable)");
  app.add_flag("--info", info,
               "describe the graph (placeholders, candidate outputs, variables, signatures) or, without "
               "--graph, the checkpoint; writes nothing");
  app.add_flag("--list-ops", list_ops, "list the graph's ops with counts and how floe treats each; writes nothing");
  bool all_ops = false;
  app.add_flag("--all", all_ops,
               "with --list-ops and no --graph: every op name floe knows and how it treats it (lowered, "
               "handled by a pass, or refused with the reason)");
  app.add_option("-o,--output", output_path, "output .floe file");
  std::string op_selection_path;
  app.add_option("--op-selection", op_selection_path,
                 "also write the kernel selection of a program running this model: a C++ source that, "
                 "compiled into a firmware built another way than floe_add_model() (Make, a vendor IDE), "
                 "links only the kernels the model runs with (floe-embed ops does it for several models)");
  options.target = "host";
  app.add_option("--target", options.target,
                 "kernel backends for: host (default; this machine's arch), x86_64, aarch64 "
                 "(XNNPACK where it applies), x86_64-avx512 (the same, arena sized for "
                 "AVX-512F CPUs only), aarch64-no-dotprod (the same, arena sized for aarch64 CPUs "
                 "without the dot product), cortex-m4, cortex-m33, cortex-m55 (DSP / Helium "
                 "kernels where they apply) or reference (portable kernels only)");
  std::string int8_rounding = "exact";
  app.add_option("--int8-rounding", int8_rounding,
                 "int8 ops on the host and aarch64 targets: exact (default: floe's integer kernels, the same "
                 "bytes as TFLM and --target reference) or fast (XNNPACK where it applies: its float "
                 "requantization may differ from TFLM's by one step per op, more through a network)")
      ->check(CLI::IsMember({"exact", "fast"}));
  app.add_flag("-q,--quiet", quiet, "print nothing on success");
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "the summary lists every rewrite, loop and layer (long lists are cut otherwise)");
  std::string error_json_path;
  app.add_option("--error-json", error_json_path,
                 "on failure, also write the error's fields as JSON to this file (category, file, node, op, "
                 "byte_offset, tensor, every refused op) for build systems and scripts");
  bool no_optimize = false;
  std::vector<std::string> disabled_passes;
  app.add_flag("--no-optimize", no_optimize, "run none of the optimization passes (and fold no constants)");
  app.add_option("--disable-pass", disabled_passes,
                 "turn one optimization pass off (repeatable, or comma-separated): fold-constants, "
                 "transposes, fold-pads, fold-batch-norms, fuse-bias-activation, dead-code");
  app.add_flag("--keep-op-order", options.keep_op_order,
               "run the ops in the order the graph lists them instead of the order with the smallest "
               "peak of live activations");
  app.add_option("--max-loop-iterations", options.max_loop_iterations,
                 "bound of a while loop whose trip count depends on an input (it then runs in the runtime as a "
                 "WHILE op) when the graph has no maximum_iterations; more iterations fail Invoke(). Without it "
                 "such a loop runs until its condition is false (one writing TensorArrays needs it)")
      ->check(CLI::Range(1u, 0xFFFFFFFFu));
  std::string loops = "auto";
  app.add_option("--loops", loops,
                 "a while loop whose trip count is known at conversion: auto (default: unrolled when that adds at "
                 "most 64 ops or 4x the ops of a WHILE, else run at run time as a WHILE op), unroll (always), or "
                 "runtime (always a WHILE; a loop that cannot run at run time is refused with the reason)")
      ->check(CLI::IsMember({"auto", "unroll", "runtime"}));
  std::string quantize, io, calibration_method;
  bool strict_int8 = false;
  app.add_option("--quantize", quantize,
                 "int8 quantization: ranges from the graph's FakeQuant ops (quantization-aware training) and/or "
                 "--calibration; ops without an int8 kernel stay float between DEQUANTIZE and QUANTIZE");
  app.add_option("--calibration", options.calibration_path,
                 "calibration samples for --quantize: an .npz (np.savez / np.savez_compressed) or a directory of "
                 ".npy files, one array per input name (np.savez's arr_0, arr_1, ...: by position), [1,...] or a "
                 "batch [n,...]; float64 is rounded to float32");
  app.add_option("--io", io, "with --quantize: model inputs and outputs stay float (default) or become int8");
  app.add_flag("--strict-int8", strict_int8, "with --quantize: refuse ops without an int8 kernel instead of leaving them float");
  app.add_option("--calibration-method", calibration_method,
                 "with --quantize: minmax (default: absolute min/max over all samples, as TFLite) or percentile "
                 "(ranges clipped to the 99.99th percentile of |value|)");
  std::string memory_regions;
  app.add_option("--memory-regions", memory_regions,
                 "NAME=SIZE,... fastest first (e.g. fast=64K,slow=4M): the most-accessed tensors go to the first "
                 "regions, the rest and the prepared ops to the last; refused when they do not fit. The model then "
                 "takes one arena per region");
  std::vector<std::string> selftest_inputs;
  app.add_option("--selftest-input", selftest_inputs,
                 "NAME=x.npy (repeatable, one per model input): embed this input, the outputs the host's reference "
                 "kernels compute and every op's output digest, for floe::SelfTest / floe-run --selftest");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    options.tags = floe::conv::split_nonempty(tags, ',');
    if (all_ops) {
      if (!list_ops || info || !options.graph_path.empty()) {
        throw floe::conv::ConvertError("--all goes with --list-ops alone (no --graph, no --info)");
      }
      std::cout << floe::conv::describe_all_ops();
      return 0;
    }
    if (info || list_ops) {
      if (options.graph_path.empty() && (list_ops || options.checkpoint_path.empty())) {
        throw floe::conv::ConvertError(std::string(list_ops ? "--list-ops" : "--info") +
                                       " needs --graph" + (list_ops ? "" : " (or --checkpoint)"));
      }
      floe::conv::InfoOptions info_options;
      info_options.graph_path = options.graph_path;
      info_options.checkpoint_path = options.checkpoint_path;
      info_options.tags = options.tags;
      std::cout << (list_ops ? floe::conv::describe_ops(info_options) : floe::conv::describe_graph(info_options));
      return 0;
    }
    if (options.graph_path.empty()) throw floe::conv::ConvertError("--graph is required");
    if (output_path.empty()) throw floe::conv::ConvertError("-o/--output is required");
    for (const std::string& spec : frozen_inputs) {
      const size_t eq = spec.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw floe::conv::ConvertError("--freeze-input '" + spec + "': expected NAME=VALUE[,VALUE...]");
      }
      options.frozen_inputs[spec.substr(0, eq)] = spec.substr(eq + 1);
    }
    options.outputs = floe::conv::split_nonempty(outputs, ',');
    options.inputs = floe::conv::split_nonempty(inputs, ',');
    options.optimize.enabled = !no_optimize;
    for (const std::string& list : disabled_passes) {
      for (const std::string& name : floe::conv::split_nonempty(list, ',')) options.optimize.disabled.insert(name);
    }
    for (const std::string& spec : shapes) options.input_shapes.insert(parse_input_shape(spec));
    if (!memory_regions.empty()) options.memory_regions = floe::conv::parse_memory_regions(memory_regions);
    for (const std::string& spec : selftest_inputs) {
      const size_t eq = spec.rfind('=');
      if (eq == std::string::npos || eq == 0) {
        throw floe::conv::ConvertError("--selftest-input '" + spec + "': expected NAME=file.npy");
      }
      options.selftest_inputs[spec.substr(0, eq)] = spec.substr(eq + 1);
    }
    if (!quantize.empty() && quantize != "int8") {
      throw floe::conv::ConvertError("--quantize '" + quantize + "': only int8 is supported");
    }
    options.quantize_int8 = quantize == "int8";
    options.int8_fast_rounding = int8_rounding == "fast";
    options.loops = loops == "unroll"    ? floe::conv::LoopMode::kUnroll
                    : loops == "runtime" ? floe::conv::LoopMode::kRuntime
                                         : floe::conv::LoopMode::kAuto;
    if (!options.quantize_int8) {
      const char* stray = !options.calibration_path.empty() ? "--calibration"
                          : !io.empty()                     ? "--io"
                          : strict_int8                     ? "--strict-int8"
                          : !calibration_method.empty()     ? "--calibration-method"
                                                            : nullptr;
      if (stray != nullptr) throw floe::conv::ConvertError(std::string(stray) + " needs --quantize int8");
    }
    if (!io.empty() && io != "int8" && io != "float") {
      throw floe::conv::ConvertError("--io '" + io + "': expected int8 or float");
    }
    if (!calibration_method.empty() && calibration_method != "minmax" && calibration_method != "percentile") {
      throw floe::conv::ConvertError("--calibration-method '" + calibration_method + "': expected minmax or percentile");
    }
    options.post_training.int8_io = io == "int8";
    options.post_training.strict = strict_int8;
    options.post_training.method = calibration_method == "percentile" ? floe::conv::CalibrationMethod::kPercentile
                                                                       : floe::conv::CalibrationMethod::kMinMax;
    options.verbose_summary = verbose;
    ProgressLine progress(!quiet && isatty(STDERR_FILENO) != 0);
    options.progress = [&](const std::string& stage) { progress.show(stage); };
    const floe::conv::ConvertResult result = floe::conv::convert(options);
    progress.clear();
    std::string selection;
    if (!op_selection_path.empty()) {
      // The rows the runtime takes for the written model, read back as a device reads it.
      std::vector<uint8_t> aligned(result.model.size() + 16);
      uint8_t* data = aligned.data() + (16 - reinterpret_cast<uintptr_t>(aligned.data()) % 16) % 16;
      std::memcpy(data, result.model.data(), result.model.size());
      floe::Model model;
      if (model.Load(data, result.model.size()) != floe::Status::kOk) {
        throw std::runtime_error(std::string("the written model does not load: ") + model.error().message);
      }
      selection = floe::tools::kernel_selection_source(floe::tools::rows_for_models({&model}),
                                                       output_path.empty() ? "a model" : output_path);
    }
    floe::conv::write_atomically(output_path, result.model);
    if (!op_selection_path.empty()) {
      floe::conv::write_atomically(op_selection_path, std::vector<uint8_t>(selection.begin(), selection.end()));
    }
    if (!quiet) std::cout << result.summary << "  wrote " << output_path << "\n";
    return 0;
  } catch (const floe::conv::ConvertError& e) {
    std::cerr << "floe-convert: error: " << e.what() << "\n";
    if (!error_json_path.empty()) std::ofstream(error_json_path) << floe::conv::error_json(e);
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "floe-convert: error: " << e.what() << "\n";
    if (!error_json_path.empty()) {
      std::ofstream(error_json_path) << floe::conv::error_json(
          floe::conv::ConvertError(e.what(), floe::conv::ErrorCategory::kInternal));
    }
    return 2;
  }
}
