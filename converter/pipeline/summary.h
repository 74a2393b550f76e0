// SPDX-License-Identifier: Apache-2.0
// What the conversion stages (pipeline/convert.cc) produced, and the summary
// floe-convert prints from it.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "converter/emit/emit.h"
#include "converter/frontend/checkpoint/checkpoint_reader.h"
#include "converter/frontend/graphdef/graph_loader.h"
#include "converter/ir/graph.h"
#include "converter/lower/backend_xnnpack.h"
#include "converter/lower/lower_graph.h"
#include "converter/optimize/optimize.h"
#include "converter/passes/control_flow.h"
#include "converter/passes/freeze.h"
#include "converter/passes/prune.h"
#include "converter/passes/training_structure.h"
#include "converter/plan/op_schedule.h"
#include "converter/plan/order_search.h"
#include "converter/quantize/int8_arithmetic.h"
#include "converter/quantize/post_training.h"
#include "converter/pipeline/signature.h"

namespace floe::conv {

struct Conversion {
  // load, resolve inputs/outputs
  LoadedGraph loaded;
  std::unique_ptr<Graph> graph;
  std::optional<Signature> signature;
  std::vector<TensorRef> fetches, explicit_feeds;
  std::set<TensorRef> feed_set;
  std::vector<std::string> fixed_inputs;  // --freeze-input, one line each
  // training structure, pruning
  ControlFlowReport control_flow;
  PruneResult pruned;
  size_t graph_nodes = 0, kept_nodes = 0;
  // freezing, inputs
  std::unique_ptr<CheckpointReader> checkpoint;
  FreezeReport frozen;
  std::vector<Feed> feeds;
  // Input tensor name -> its dims the graph left unknown (-1) and floe set to
  // 1, e.g. "0" or "0, 2", for the summary's input line.
  std::map<std::string, std::string> defaulted_dims;
  // Inputs declared `shape {}` in a graph of producer < 22 (TF: unknown rank),
  // converted as scalars; named in a refusal that may come from it.
  std::vector<std::string> scalar_before_22;
  std::vector<std::string> notes;
  // unrolling, lowering, optimization, backends
  UnrollReport unrolled;
  LowerStats lower_stats;
  LoweredModel lowered;
  OptimizeReport optimization;
  std::string target;
  bool cortexm = false;
  int cortexm_ops = 0;
  BackendReport backends;
  // .tflite input (converter/frontend/tflite): its operator count and histogram
  Int8ArithmeticStats int8;  // converter/quantize
  // post-training quantization: calibration samples, what was rewritten, the
  // SQNR of each int8 op's output, and the float model's size for comparison
  bool post_training = false;
  size_t calibration_samples = 0;
  // quantization-aware-trained graphs: FakeQuant ops whose ranges were used
  // (on activations; weights count in ptq.weights_from_fake_quant)
  int fake_quant_activations = 0;
  std::vector<std::string> unusable_fake_quants;  // "NODE (OP): why", refused together
  PostTrainingReport ptq;
  std::vector<LayerSqnr> sqnr;
  size_t float_model_bytes = 0;
  bool from_tflite = false;
  size_t tflite_operators = 0;
  size_t tflite_called_operators = 0, tflite_called_subgraphs = 0;  // what WHILE / IF call, each once
  std::map<std::string, int> tflite_op_counts;
  // op order (converter/plan/op_schedule.h)
  OpSchedule schedule;
  bool keep_op_order = false;
  double schedule_milliseconds = 0;
  // op order searched with the placement (converter/plan/order_search.h)
  OrderSearch order_search;
  // emission
  EmitStats stats;
  size_t model_bytes = 0;
};

// Inputs, outputs, what each stage did, op histogram, parameters, arena, model size.
std::string conversion_summary(const Conversion& c);

// The summary cut to a screenful where it lists: a run of more than 12 detail
// lines at one indent (6 or more: a pass's rewrites; 4: lines that also start
// with the same word, e.g. the per-layer SQNR) keeps its first 8, a line
// longer than 240 characters its first ones, each saying what it left out.
// verbose: unchanged.
std::string fold_summary(const std::string& summary, bool verbose);

}  // namespace floe::conv
