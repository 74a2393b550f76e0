// SPDX-License-Identifier: Apache-2.0
// Reading a TensorFlow Lite flatbuffer (.tflite, float or int8) straight into
// the lowered model (converter/ir/lowered.h) the TF lowering produces, so the
// optimizer, planner and writer treat both alike. Its own schema subset is in
// tflite_subset.fbs. Weights are rewritten into floe's layouts here (conv
// OHWI -> HWIO, depthwise [1,H,W,C*M] -> [H,W,C,M]) with their per-channel
// quantization axes following; tensors keep their dtype and quantization.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "converter/ir/lowered.h"

namespace floe::conv {

struct TfliteOptions {
  // Tensor names to output instead of the subgraph's outputs (ops nothing
  // needs are dropped later by the dead-code pass).
  std::vector<std::string> outputs;
  // Bound of every WHILE (TFLite files carry none): more iterations fail
  // Invoke(). 0 = not given, and a model with a WHILE is refused naming
  // --max-loop-iterations.
  uint32_t max_loop_iterations = 0;
};

struct TfliteImport {
  LoweredModel model;
  std::vector<std::string> notes;          // e.g. a normalized quantized_dimension
  size_t tflite_operators = 0;             // in subgraph 0
  size_t called_subgraphs = 0;             // called by WHILE / IF (inlined at each call)
  size_t called_operators = 0;             // in those, each subgraph counted once
  std::map<std::string, int> op_counts;    // TFLite op name -> count
  bool quantized = false;                  // some tensor carries quantization
  std::vector<std::string> control_flow;   // one summary line per WHILE / IF
};

// True when bytes 4..7 hold the TFLite file identifier "TFL3".
bool is_tflite(const std::string& bytes);

// Converts subgraph 0 of the model in `bytes` (`path` names it in errors),
// with the subgraphs its WHILE and IF ops call inlined as run-time WHILE / IF
// op ranges. Throws ConvertError: the file name plus "FlatBuffers verifier
// failed" for a truncated or corrupt file, the op (and its subgraph) and byte
// offset for a bad operator, tensor or subgraph call, and every unsupported op
// of every called subgraph at once (unsupported_ops_error).
TfliteImport import_tflite(const std::string& bytes, const std::string& path,
                           const TfliteOptions& options = {});

// TFLite's builtin operator name for `code` ("CONV_2D"), or "BUILTIN_<n>".
std::string tflite_op_name(int32_t code);

}  // namespace floe::conv
