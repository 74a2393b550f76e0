// SPDX-License-Identifier: Apache-2.0
// Conversion pipeline (see convert.h).
#include "converter/pipeline/convert.h"
#include "converter/pipeline/selftest.h"
#include "converter/pipeline/validate.h"

#include <cctype>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "converter/frontend/checkpoint/checkpoint_reader.h"
#include "converter/ir/tf_dtype.h"
#include "converter/ir/attrs.h"
#include "converter/frontend/graphdef/graph_loader.h"
#include "converter/ir/tensor_proto.h"
#include "converter/eval/run_lowered.h"
#include "converter/frontend/tflite/tflite_import.h"
#include "converter/optimize/passes.h"
#include "converter/passes/loop_fallback.h"
#include "converter/quantize/fake_quant_ranges.h"
#include "converter/quantize/int8_arithmetic.h"
#include "converter/quantize/quantization_aware.h"
#include "converter/quantize/post_training.h"
#include "converter/frontend/calibration/calibration_file.h"
#include "converter/ir/error.h"
#include "converter/ir/limits.h"
#include "converter/plan/order_search.h"
#include "schemas/contract/xnnpack_budget.h"
#include "schemas/contract/limits.h"
#include "schemas/contract/limits.h"
#include "converter/lower/backend_cortexm.h"
#include "converter/lower/backend_xnnpack.h"
#include "converter/lower/lower_graph.h"
#include "converter/plan/ifs.h"
#include "converter/plan/loops.h"
#include "converter/ops/op_registry.h"
#include "converter/passes/cond_to_select.h"
#include "converter/passes/control_flow.h"
#include "converter/passes/freeze.h"
#include "converter/passes/prune.h"
#include "converter/passes/training_structure.h"
#include "converter/pipeline/info.h"
#include "converter/pipeline/signature.h"
#include "converter/pipeline/summary.h"

namespace floe::conv {
namespace {

constexpr const char* kProducer = "floe-convert 0.1";

std::string saver_scope(const LoadedGraph& loaded) {
  if (!loaded.meta || !loaded.meta->has_saver_def()) return "";
  const std::string& restore = loaded.meta->saver_def().restore_op_name();
  const size_t slash = restore.rfind('/');
  return slash == std::string::npos ? "" : restore.substr(0, slash + 1);
}

// Candidate outputs for the "--outputs is required" message.
std::string candidate_list(const Graph& graph) {
  const std::vector<std::string> names = candidate_outputs(graph);
  std::string list;
  for (size_t i = 0; i < names.size() && i < 10; ++i) list += (i ? ", " : "") + names[i];
  if (names.size() > 10) list += ", ... (" + std::to_string(names.size()) + " in all; see --info)";
  return list.empty() ? "none found; see --info" : list;
}

// dtype and (possibly partial) shape of a tensor that is about to be fed.
// `empty_shape_before_22`: a Placeholder declares `shape {}` in a graph whose
// producer is below 22, which TensorFlow itself reads as unknown rank.
Feed describe_feed(const Graph& graph, TensorRef ref, int producer, bool* unknown_rank, bool* empty_shape_before_22) {
  const Node& node = graph.node(ref.node);
  Feed feed;
  feed.ref = ref;
  *unknown_rank = false;
  *empty_shape_before_22 = false;
  if (node.op() == "DecodeWav") {  // its outputs have no dtype attr; the samples' shape is in its attrs
    int tf_type = 0;
    output_signature(node.def, ref.port, &tf_type, &feed.shape, unknown_rank);
    feed.dtype = compute_dtype(tf_dtype_to_floe(tf_type));
    if (feed.dtype == DType::kInvalid) {
      throw ConvertError(graph.source() + ": input '" + graph.tensor_name(ref) + "' is not an output of DecodeWav");
    }
    return feed;
  }
  if (node.op() == "Const" && ref.port == 0) {
    const tfproto::AttrValue* value = find_attr(node.def, "value");
    if (value && value->has_tensor()) {
      const HostTensor t = tensor_from_proto(value->tensor(), graph.source() + ": node '" + node.name() + "'");
      feed.dtype = compute_dtype(t.dtype);
      feed.source_dtype = t.dtype;
      feed.shape = t.shape;
      return feed;
    }
  }
  const bool placeholder = node.op() == "Placeholder" || node.op() == "PlaceholderV2";
  // A tensor the node does not have, refused as `--outputs relu:3` is.
  const int outputs = tf_output_count(node.def);
  if (outputs >= 0 && ref.port >= outputs) {
    throw ConvertError(graph.source() + ": input '" + graph.tensor_name(ref) + "': node '" + node.name() +
                           "' (op " + node.op() + ") has " + std::to_string(outputs) + " output" +
                           (outputs == 1 ? ", '" + node.name() + ":0'" : "s"),
                       ErrorCategory::kInvalidInput, ErrorLocation{graph.source(), node.name(), node.op(), -1})
        .with_tensor(graph.tensor_name(ref));
  }
  // TF refuses a Placeholder without its dtype at import; no type is assumed.
  if (placeholder && (find_attr(node.def, "dtype") == nullptr ||
                      find_attr(node.def, "dtype")->value_case() != tfproto::AttrValue::kType)) {
    throw ConvertError(graph.source() + ": node '" + node.name() + "' (op " + node.op() +
                           "): attr 'dtype' is missing (a Placeholder must declare its dtype)",
                       ErrorCategory::kInvalidInput, ErrorLocation{graph.source(), node.name(), node.op(), -1})
        .with_tensor(graph.tensor_name(ref));
  }
  int tf_type = attr_type(node.def, "dtype", 0);
  if (tf_type == 0) tf_type = attr_type(node.def, "T", 0);
  feed.dtype = tf_type == 0 ? DType::kFloat32 : compute_dtype(tf_dtype_to_floe(tf_type));
  feed.source_dtype = tf_type == 0 ? feed.dtype : tf_dtype_to_floe(tf_type);
  // Complex64 is fed as its own bytes, float32 pairs (the pair dim is added
  // once the shape is final); complex128 is computed in complex64 as float64
  // is in float32.
  if (tf_dtype_base(tf_type) == kTfComplex64 || tf_dtype_base(tf_type) == kTfComplex128) {
    feed.complex = true;
    feed.dtype = DType::kFloat32;
    feed.source_dtype = tf_dtype_base(tf_type) == kTfComplex128 ? DType::kFloat64 : DType::kFloat32;
  }
  if (feed.dtype == DType::kInvalid) {
    throw ConvertError(graph.source() + ": input '" + graph.tensor_name(ref) + "' has dtype " +
                       tf_dtype_name(tf_type) + ", which floe cannot feed");
  }
  if ((node.op() == "Placeholder" || node.op() == "PlaceholderV2") && find_attr(node.def, "shape")) {
    // `shape {}` declares a scalar, as --info shows it.
    try {
      feed.shape = attr_shape(node.def, "shape", unknown_rank);
    } catch (const ConvertError& e) {  // named with its file
      throw ConvertError(graph.source() + ": " + e.what(), e.category(),
                         ErrorLocation{graph.source(), node.name(), node.op(), -1});
    }
    *empty_shape_before_22 = producer < 22 && !*unknown_rank && feed.shape.empty();
  } else if (find_attr(node.def, "shape")) {
    feed.shape = attr_shape(node.def, "shape", unknown_rank);
  } else if (const tfproto::AttrValue* shapes = find_attr(node.def, "_output_shapes");
             shapes && shapes->list().shape_size() > ref.port) {
    const auto& s = shapes->list().shape(ref.port);
    *unknown_rank = s.unknown_rank();
    for (const auto& d : s.dim()) feed.shape.push_back(d.size());
  } else {
    *unknown_rank = true;
  }
  return feed;
}

// TF2 (tf.saved_model.save): the model lives in library functions behind
// StatefulPartitionedCall, with object-based checkpoint keys. Said first, before
// signature selection, because that is the reason it cannot convert.
void refuse_tf2_saved_model(const LoadedGraph& loaded) {
  if (loaded.kind != GraphFileKind::kSavedModel || loaded.graph.library().function_size() == 0) return;
  int calls = 0;
  for (const auto& node : loaded.graph.node()) {
    calls += node.op() == "StatefulPartitionedCall" || node.op() == "PartitionedCall";
  }
  if (calls == 0) return;
  throw ConvertError(loaded.path + ": a TF2 SavedModel (tf.saved_model.save: the computation lives in " +
                     std::to_string(loaded.graph.library().function_size()) +
                     " FunctionDefLibrary functions called through " + std::to_string(calls) +
                     " StatefulPartitionedCall node(s), variables use object-based checkpoint keys); floe "
                     "converts TF1 graphs: export with TF1 SavedModelBuilder / tf.compat.v1, or freeze the "
                     "concrete function to a GraphDef");
}

// ---- the stages, in order ---------------------------------------------------

// Tells options.progress which stage starts (a terminal shows the slow ones).
void report(const ConvertOptions& options, const std::string& stage) {
  if (options.progress) options.progress(stage);
}

// Load the file, fix frozen placeholders, refuse TF2 SavedModels.
void load_stage(const ConvertOptions& options, Conversion& c) {
  LoadOptions load_options;
  load_options.tags = options.tags;
  c.loaded = load_graph(options.graph_path, load_options);
  c.graph = std::make_unique<Graph>(c.loaded.graph, c.loaded.path);
  c.fixed_inputs = freeze_placeholders(*c.graph, options.frozen_inputs);
  refuse_tf2_saved_model(c.loaded);
}

// Fetches and feeds: the options', else the SignatureDef's.
void resolve_io_stage(const ConvertOptions& options, Conversion& c) {
  const Graph& graph = *c.graph;
  std::vector<std::string> output_names = options.outputs, input_names = options.inputs;
  if (c.loaded.meta && (output_names.empty() || !options.signature.empty())) {
    c.signature = choose_signature(*c.loaded.meta, options.signature, c.loaded.path);
  } else if (!options.signature.empty()) {
    throw ConvertError(c.loaded.path + ": --signature needs a SavedModel or MetaGraphDef (a " +
                       graph_file_kind_name(c.loaded.kind) + " has no signatures)");
  }
  if (c.signature && output_names.empty()) {
    for (const SignatureTensor& t : c.signature->outputs) output_names.push_back(t.tensor);
    if (input_names.empty()) {
      for (const SignatureTensor& t : c.signature->inputs) input_names.push_back(t.tensor);
    }
  }
  if (output_names.empty()) {
    throw ConvertError(c.loaded.path + ": --outputs is required (candidate outputs: " + candidate_list(graph) + ")");
  }
  for (const std::string& name : output_names) c.fetches.push_back(graph.resolve_tensor(name));
  for (const std::string& name : input_names) {
    c.explicit_feeds.push_back(graph.resolve_tensor(name));
    c.feed_set.insert(c.explicit_feeds.back());
  }
}

// Training-only structure: Switch/Merge on conversion-time constants collapse,
// then the pruned graph must be an inference graph (all offenders listed at once).
void training_structure_stage(Conversion& c) {
  Graph& graph = *c.graph;
  c.control_flow = resolve_static_control_flow(graph, c.fetches, c.feed_set);
  select_input_dependent_conds(graph, c.fetches, c.feed_set, c.control_flow);
  read_assigned_values(graph, c.fetches, c.feed_set);
  c.pruned = prune_for_fetches(graph, c.fetches, c.feed_set);
  // TF1 while loops and TensorArrays are unrolled after freezing (below); their
  // insides are checked once they are plain nodes.
  check_inference_graph(graph, outside_loops(graph, c.pruned.keep), c.control_flow, c.feed_set);
  refuse_batch_norm_reserve_reads(graph, c.pruned.keep, c.fetches);
  for (size_t n = 0; n < graph.size(); ++n) {
    const Node& node = graph.node(static_cast<int>(n));
    if (c.pruned.keep[n] && node.op().rfind("FusedBatchNorm", 0) == 0 && attr_bool(node.def, "is_training", true)) {
      c.notes.push_back("node '" + node.name() + "' (" + node.op() +
                        ") is in training mode: it normalizes with each batch's own mean and variance, as "
                        "Session.run does (export the inference graph to use the moving statistics)");
    }
  }
  c.graph_nodes = graph.size();  // as loaded: unrolling appends nodes
  for (bool k : c.pruned.keep) c.kept_nodes += k;
}

// Variables from the checkpoint (before input shapes: a missing or V1
// checkpoint is the more basic problem).
void freeze_stage(const ConvertOptions& options, Conversion& c) {
  Graph& graph = *c.graph;
  std::string checkpoint_path = options.checkpoint_path;
  if (checkpoint_path.empty()) checkpoint_path = default_checkpoint_for(c.loaded);
  bool needs_variables = false;
  for (size_t n = 0; n < graph.size(); ++n) {
    needs_variables = needs_variables || (c.pruned.keep[n] && is_variable_op(graph.node(static_cast<int>(n)).op()));
  }
  if (!checkpoint_path.empty() && needs_variables) {
    c.checkpoint = std::make_unique<CheckpointReader>(CheckpointReader::open(checkpoint_path));
  }
  c.frozen = freeze_variables(graph, c.pruned.keep, c.checkpoint.get(), saver_scope(c.loaded),
                              c.loaded.meta ? variable_hints_from_collections(*c.loaded.meta)
                                            : std::map<std::string, VariableKeyHint>{});
}

// Input dtypes and shapes: the graph's, then --input-shape, then unknown dims
// default to 1 (with a note).
void feed_shapes_stage(const ConvertOptions& options, Conversion& c) {
  const Graph& graph = *c.graph;
  std::vector<TensorRef> feed_refs = c.explicit_feeds;
  for (int p : c.pruned.placeholders) feed_refs.push_back(TensorRef{p, 0});
  std::map<TensorRef, std::vector<int64_t>> shape_overrides;
  for (const auto& [name, shape] : options.input_shapes) {
    const TensorRef ref = graph.resolve_tensor(name);
    if (std::find(feed_refs.begin(), feed_refs.end(), ref) == feed_refs.end()) {
      throw ConvertError("--input-shape names '" + name + "', which is not a model input");
    }
    shape_overrides[ref] = shape;
  }
  for (size_t n = 0; n < graph.size(); ++n) {
    const Node& node = graph.node(static_cast<int>(n));
    auto is_double = [&](const char* attr) {
      const tfproto::AttrValue* v = find_attr(node.def, attr);
      return v != nullptr && v->value_case() == tfproto::AttrValue::kType && tf_dtype_base(v->type()) == kTfDouble;
    };
    if (c.pruned.keep[n] && (is_double("T") || is_double("dtype"))) {
      c.notes.push_back("the graph computes in float64; floe computes it in float32");
      break;
    }
  }
  for (size_t n = 0; n < graph.size(); ++n) {
    const Node& node = graph.node(static_cast<int>(n));
    const tfproto::AttrValue* v = find_attr(node.def, "dtype");
    if (c.pruned.keep[n] && v != nullptr && v->value_case() == tfproto::AttrValue::kType &&
        tf_dtype_base(v->type()) == kTfComplex128) {
      c.notes.push_back("the graph feeds complex128; floe computes it in complex64");
      break;
    }
  }
  for (size_t n = 0; n < graph.size(); ++n) {
    const Node& node = graph.node(static_cast<int>(n));
    if (c.pruned.keep[n] && node.op() == "Print") {
      c.notes.push_back("Print node '" + node.name() + "' passes its input through; its printing is dropped");
    }
  }
  for (const TensorRef& ref : feed_refs) {
    bool unknown_rank = false, empty_shape_before_22 = false;
    const int producer = c.loaded.graph.versions().producer();
    Feed feed = describe_feed(graph, ref, producer, &unknown_rank, &empty_shape_before_22);
    const auto it = shape_overrides.find(ref);
    const std::string name = graph.tensor_name(ref);
    if (empty_shape_before_22) {
      if (it != shape_overrides.end()) {
        unknown_rank = true;  // any rank may be given, as TF would accept any
      } else {
        c.scalar_before_22.push_back(name);
        c.notes.push_back("input '" + name + "' declares shape {} in a graph of producer " + std::to_string(producer) +
                          " (< 22, where TensorFlow reads it as unknown rank); converted as a scalar "
                          "(--input-shape gives another shape)");
      }
    }
    if (it != shape_overrides.end()) {
      if (!unknown_rank && it->second.size() != feed.shape.size()) {
        throw ConvertError("--input-shape for '" + name + "' has rank " +
                           std::to_string(it->second.size()) + ", the graph says " +
                           shape_to_string(feed.shape));
      }
      for (size_t d = 0; d < feed.shape.size() && !unknown_rank; ++d) {
        if (feed.shape[d] >= 0 && feed.shape[d] != it->second[d]) {
          throw ConvertError("--input-shape for '" + name + "' conflicts with the graph's shape " +
                             shape_to_string(feed.shape));
        }
      }
      feed.shape = it->second;
    } else if (unknown_rank) {
      throw ConvertError(c.loaded.path + ": input '" + name +
                         "' has unknown rank: pass --input-shape " + graph.node(ref.node).name() +
                         "=d0,d1,...");
    }
    std::string defaulted;
    for (size_t d = 0; d < feed.shape.size(); ++d) {
      if (feed.shape[d] < 0) {
        defaulted += (defaulted.empty() ? "" : ", ") + std::to_string(d);
        feed.shape[d] = 1;
      }
    }
    if (!defaulted.empty()) {
      c.defaulted_dims[name] = defaulted;
      c.notes.push_back("input '" + name + "' has an unknown dim (" + defaulted +
                        "); using 1 (set it with --input-shape)");
    }
    if (feed.complex) feed.shape.push_back(2);  // (real, imaginary)
    c.feeds.push_back(std::move(feed));
  }
}

// TF1 while loops and TensorArrays become plain nodes; the result is checked again.
// `must_unroll`: loops --loops=auto must unroll (their WHILE failed before).
void unroll_stage(const ConvertOptions& options, const std::map<std::string, std::string>& must_unroll,
                  Conversion& c) {
  LoopPolicy policy;
  policy.mode = options.loops;
  policy.runtime_allowed = !options.quantize_int8;
  policy.unroll = must_unroll;
  policy.progress = [&](const std::string& loop) { report(options, "unrolling loops: " + loop); };
  c.unrolled = unroll_control_flow(*c.graph, c.pruned.keep, c.feeds, options.max_loop_iterations, policy);
  // A tf.cond in a run-time loop's body: a Select or an IF there, now that the
  // loop has no cycle.
  if (!c.unrolled.runtime_loops.empty()) select_input_dependent_conds(*c.graph, c.fetches, c.feed_set, c.control_flow);
  if (c.unrolled.changed()) {
    c.pruned = prune_for_fetches(*c.graph, c.fetches, c.feed_set);
    check_inference_graph(*c.graph, c.pruned.keep, c.control_flow, c.feed_set);
  }
  check_supported_ops(*c.graph, c.pruned.keep);
}

// FakeQuant on weights (folded while lowering) leaves the weights on its
// grid: recorded as the constant's quantization (scale, zero point - 128, per
// last-dim channel when per-channel) for int8 quantization to keep. A
// FAKE_QUANT op over constants that lowering did not fold (the optimizer's
// fold-constants pass will, into the same value) gets it on its output.
void keep_trained_weight_grids(std::vector<FoldedFakeQuant> folded, Conversion& c) {
  // Values computed from constants alone (ops are in topological order).
  std::vector<bool> from_constants(c.lowered.values.size(), false);
  for (size_t v = 0; v < from_constants.size(); ++v) from_constants[v] = c.lowered.values[v].is_constant();
  for (const LoweredOp& op : c.lowered.ops) {
    bool constant_inputs = !op.inputs.empty();
    for (int v : op.inputs) constant_inputs = constant_inputs && (v < 0 || from_constants[static_cast<size_t>(v)]);
    for (int v : op.outputs) from_constants[static_cast<size_t>(v)] = constant_inputs;
    const auto* o = op.options.AsFakeQuantOptions();
    if (op.opcode != schema::OpCode::FAKE_QUANT || !constant_inputs || o == nullptr || op.inputs.size() != 3 ||
        op.outputs.size() != 1 || !c.lowered.values[static_cast<size_t>(op.inputs[1])].is_constant() ||
        !c.lowered.values[static_cast<size_t>(op.inputs[2])].is_constant()) {
      continue;
    }
    FoldedFakeQuant f;
    f.value = op.outputs[0];
    f.node = op.node_name;
    f.op = "FAKE_QUANT";
    f.num_bits = o->num_bits;
    f.narrow_range = o->narrow_range;
    for (const auto& [index, range] : {std::pair<int, std::vector<float>*>{1, &f.min}, {2, &f.max}}) {
      const HostTensor& t = *c.lowered.values[static_cast<size_t>(op.inputs[static_cast<size_t>(index)])].constant;
      range->assign(t.as<float>(), t.as<float>() + t.num_elements());
    }
    folded.push_back(std::move(f));
  }
  for (const FoldedFakeQuant& f : folded) {
    Value& w = c.lowered.values[static_cast<size_t>(f.value)];
    const std::string where = f.node + " (" + f.op + "): ";
    if (f.num_bits != 8) {
      c.unusable_fake_quants.push_back(where + "num_bits " + std::to_string(f.num_bits) +
                                       " on weights: only 8-bit FakeQuant grids map onto int8 weights (TFLite's "
                                       "converter would re-derive an 8-bit grid from the same min/max, which is not "
                                       "the grid the model was trained with)");
      continue;
    }
    const bool per_tensor = f.min.size() == 1 && f.max.size() == 1;
    if (w.dtype != DType::kFloat32 ||
        (!per_tensor && (f.min.size() != f.max.size() || w.shape.empty() ||
                         static_cast<int64_t>(f.min.size()) != w.shape.back()))) {
      continue;  // not a float grid floe can describe: the weights are quantized from their values
    }
    Quantization q = int8_from_fake_quant(f.min, f.max, f.narrow_range, static_cast<int>(w.shape.size()) - 1);
    bool valid = true;
    for (float scale : q.scale) valid = valid && scale > 0 && std::isfinite(scale);
    if (!valid) {
      c.unusable_fake_quants.push_back(where + "empty or invalid range on weights");
      continue;
    }
    w.quantization = std::move(q);
  }
}

// Inference, folding and lowering to floe ops, then the optimization passes.
void lower_and_optimize_stage(const ConvertOptions& options, Conversion& c) {
  const bool fold = options.optimize.enabled && options.optimize.disabled.count("fold-constants") == 0 &&
                    options.optimize.fold_while_lowering;
  check_optimize_options(options.optimize);
  std::vector<FoldedFakeQuant> folded_fake_quants;
  c.lowered = lower_graph(*c.graph, c.pruned.keep, c.feeds, c.fetches, &c.lower_stats, fold,
                          options.quantize_int8 ? &folded_fake_quants : nullptr);
  // Before optimizing: batch-norm folding rescales these grids with the weights.
  if (options.quantize_int8) keep_trained_weight_grids(folded_fake_quants, c);
  c.optimization = optimize(c.lowered, options.optimize);
}

// int8 ops get the integers their kernels run with (converter/quantize).
// The weights it re-lays out and the activations it folds leave values no op
// reads: dropped again.
void int8_arithmetic_stage(Conversion& c) {
  c.int8 = derive_int8_arithmetic(&c.lowered);
  if (c.int8.ops > 0) {
    opt::PassLog log;
    opt::eliminate_dead_code(c.lowered, log);
  }
}

// int8 quantization (converter/quantize/post_training.h). FakeQuant ops of a
// quantization-aware-trained graph give their values' quantization (and are
// then dropped: in int8 they are the rounding the quantized tensor does); the
// calibration samples, when given, fill every other range: the optimized float
// model is calibrated on them. Then the model is rewritten to int8, given its
// integers, and (with samples) compared with the float model value by value
// (SQNR) before dead code is dropped (which renumbers values).
void post_training_stage(const ConvertOptions& options, const std::vector<CalibrationArray>& arrays, Conversion& c) {
  TrainedRanges trained = trained_ranges(c.lowered);
  std::vector<std::string> unusable = c.unusable_fake_quants;
  unusable.insert(unusable.end(), trained.unusable.begin(), trained.unusable.end());
  refuse_unusable_fake_quants(unusable);
  bool trained_weights = false;
  for (const Value& v : c.lowered.values) trained_weights = trained_weights || (v.is_constant() && !v.quantization.empty());
  if (arrays.empty() && trained.fake_quants.empty() && !trained_weights) {
    throw ConvertError("--quantize int8 needs --calibration PATH (.npz or a directory of .npy files), or a "
                       "quantization-aware-trained graph whose FakeQuant ops give the ranges");
  }
  const std::vector<CalibrationSample> samples =
      arrays.empty() ? std::vector<CalibrationSample>{} : calibration_samples(c.lowered, arrays, &c.notes);
  PostTrainingOptions post_training = options.post_training;
  post_training.on_sample = [&](size_t done, size_t total) {
    report(options, "calibrating: sample " + std::to_string(done + 1) + " of " + std::to_string(total));
  };
  const std::vector<ValueRange> ranges =
      samples.empty() ? std::vector<ValueRange>{} : calibrate(c.lowered, samples, post_training);
  report(options, "quantizing");
  const LoweredModel float_model = c.lowered;
  c.post_training = true;
  c.calibration_samples = samples.size();
  c.fake_quant_activations = drop_trained_fake_quants(trained, &c.lowered);
  c.ptq = quantize_post_training(&c.lowered, ranges, options.post_training, trained.quantization);
  c.int8 = derive_int8_arithmetic(&c.lowered);
  clamp_narrow_range_outputs(trained, &c.lowered);
  if (!samples.empty()) c.sqnr = measure_sqnr(float_model, c.lowered, samples);
  opt::PassLog log;
  opt::eliminate_dead_code(c.lowered, log);
  // The float model as it would have been written, for the size comparison.
  LoweredModel float_copy = float_model;
  for (Value& v : float_copy.values) v.quantization = Quantization{};  // trained grids are not float tensors'
  const bool cortexm = is_cortexm_target(options.target);
  if (cortexm) assign_cortexm_backends(&float_copy, options.target);
  assign_backends(&float_copy, cortexm ? "reference" : options.target, options.int8_fast_rounding);
  c.float_model_bytes = plan_and_emit(float_copy, kProducer).size();
}

std::vector<CalibrationArray> read_calibration_if_asked(const ConvertOptions& options) {
  if (!options.quantize_int8 || options.calibration_path.empty()) return {};
  return read_calibration(options.calibration_path);
}

// A model read from .tflite or holding int8 ops is prepared once on the
// reference kernels before it is written (dtype and quantization combinations
// the runtime has no kernel for surface here, naming the op), so the converter
// never writes a model the runtime refuses.
// The check packs every value into its own arena slot (no planning), so it is
// skipped above 256 MiB of activations rather than allocating that much.
void runtime_check_stage(Conversion& c) {
  if (!c.from_tflite && c.int8.ops == 0) return;
  constexpr uint64_t kLimit = uint64_t{256} << 20;
  uint64_t activations = 0;
  for (const Value& v : c.lowered.values) {
    if (v.is_constant()) continue;
    uint64_t bytes = dtype_size(v.dtype);
    for (int64_t d : v.shape) {
      if (d < 0 || (d > 0 && bytes > kLimit / static_cast<uint64_t>(d))) return;  // beyond the limit
      bytes *= static_cast<uint64_t>(d);
    }
    activations += bytes;
    if (activations > kLimit) return;
  }
  const LoweredRunner prepared(c.lowered, c.loaded.path);
}

// Kernel library per op for the target: Cortex-M kernels, XNNPACK, or reference.
// --selftest-input: the finished model's run on the reference kernels, stored
// in it for floe::SelfTest (after every rewrite, so the digests are the ops'
// as emitted).
std::string selftest_stage(const ConvertOptions& options, Conversion& c) {
  if (options.selftest_inputs.empty()) return std::string();
  return attach_selftest(options.selftest_inputs, &c.lowered);
}

void backend_stage(const ConvertOptions& options, Conversion& c) {
  c.target = options.target;
  c.cortexm = is_cortexm_target(options.target);
  // The host and aarch64 targets run integer ops on the same kernels (their
  // AVX2 / VNNI / Advanced SIMD builds) unless XNNPACK's inexact int8 is asked for.
  const std::string resolved = c.cortexm ? options.target : resolve_target(options.target);
  const bool exact_integers = !c.cortexm && !options.int8_fast_rounding && resolved != "reference";
  const bool x86 = resolved == xnnpack_budget::kTargetX86_64 || resolved == xnnpack_budget::kTargetX86_64Avx512;
  c.cortexm_ops = c.cortexm         ? assign_cortexm_backends(&c.lowered, options.target)
                  : exact_integers ? assign_exact_integer_kernels(&c.lowered, x86)
                                   : 0;
  if (c.cortexm_ops > 0 && (c.int8.ops > 0 || !c.cortexm)) {
    opt::PassLog log;  // the weights and arrays the int8 kernels replaced
    opt::eliminate_dead_code(c.lowered, log);
  }
  c.backends = assign_backends(&c.lowered, c.cortexm ? "reference" : options.target, options.int8_fast_rounding);
}

// The op order with the smallest peak of live activations, unless the file's
// order is asked for (it is still measured, for the summary).
void schedule_stage(const ConvertOptions& options, Conversion& c) {
  // A run-time loop's ops stay grouped after their WHILE (plan/loops.h), and
  // a variable's reads and writes keep their order: the lowering's order is kept.
  const bool loops = has_runtime_loops(c.lowered) || has_runtime_ifs(c.lowered);
  c.keep_op_order = options.keep_op_order || loops || c.lowered.has_variable_writes();
  if (c.keep_op_order) {
    std::vector<int> file_order(c.lowered.ops.size());
    for (size_t i = 0; i < file_order.size(); ++i) file_order[i] = static_cast<int>(i);
    c.schedule.order = file_order;
    c.schedule.file_peak = c.schedule.chosen_peak = order_peak_bytes(c.lowered, file_order);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  c.schedule = schedule_ops(c.lowered, kTensorAlignment);
  c.schedule_milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (c.schedule.reordered) apply_op_order(&c.lowered, c.schedule.order);
  // Small graphs whose plan is stuck above the floor: order and placement
  // together (one region only; regions are filled by heat, not by this plan).
  if (options.memory_regions.empty()) {
    c.order_search = search_order_for_arena(c.lowered, kTensorAlignment, kActivationOffsetAlignment);
    if (c.order_search.reordered) {
      apply_op_order(&c.lowered, c.order_search.order);
      std::vector<int> composed(c.order_search.order.size());
      for (size_t k = 0; k < composed.size(); ++k)
        composed[k] = c.schedule.order[static_cast<size_t>(c.order_search.order[k])];
      c.schedule.order = std::move(composed);
      c.schedule.reordered = true;
      std::vector<int> identity(c.lowered.ops.size());
      for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<int>(i);
      c.schedule.chosen_peak = order_peak_bytes(c.lowered, identity);
      c.schedule.chosen_aligned_peak = order_aligned_peak_bytes(c.lowered, identity, kTensorAlignment);
      c.schedule.exact = false;  // the peak is no longer what the order was chosen by
    }
  }
  c.schedule_milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The whole file when it is a .tflite (sniffed from its bytes, never the name).
std::optional<std::string> read_if_tflite(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[8] = {};
  if (!in || !in.read(head, 8) || !is_tflite(std::string(head, 8))) return std::nullopt;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0 || static_cast<uint64_t>(size) > kMaxInputFileBytes) {
    throw ConvertError(path + ": .tflite of " + std::to_string(size) + " bytes, over floe's limit of " +
                       std::to_string(kMaxInputFileBytes) + " bytes (FlatBuffers' 2 GiB)");
  }
  in.seekg(0);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Post-training quantization does not yet calibrate through run-time loops and ifs.
void refuse_quantize_with_control_flow(const Conversion& c) {
  if (has_runtime_loops(c.lowered)) {
    throw ConvertError(c.loaded.path + ": --quantize int8 of a model with a loop run at run time is not supported",
                       ErrorCategory::kUnsupported)
        .with_refusals({Refusal{"run-time while loop with --quantize", {{"WHILE", {c.lowered.loops.front().name}}}}});
  }
  if (has_runtime_ifs(c.lowered)) {
    throw ConvertError(c.loaded.path + ": --quantize int8 of a model with a cond run at run time is not supported",
                       ErrorCategory::kUnsupported)
        .with_refusals({Refusal{"run-time if with --quantize", {{"IF", {c.lowered.ifs.front()}}}}});
  }
}

// The back half every conversion shares, once the model is lowered (and
// quantized): kernels, op order, self-test, then the arena plan and the file.
ConvertResult finish_conversion(const ConvertOptions& options, Conversion& c) {
  report(options, "choosing kernels");
  backend_stage(options, c);
  assign_loop_ranges(c.lowered);  // after the last pass that adds, removes or moves ops
  assign_if_ranges(c.lowered);
  runtime_check_stage(c);
  report(options, "ordering ops");
  schedule_stage(options, c);
  plan_xnnpack_region(&c.lowered);  // its bump allocations follow the final op order
  if (!options.selftest_inputs.empty()) report(options, "computing the self-test");
  const std::string selftest = selftest_stage(options, c);
  report(options, "planning memory, writing the model");
  ConvertResult result;
  result.model = plan_and_emit(c.lowered, kProducer, &result.stats, options.memory_regions);
  validate_emitted_model(result.model, c.loaded.path);  // no model the runtime refuses leaves the converter
  c.stats = result.stats;
  c.model_bytes = result.model.size();
  result.summary = fold_summary(conversion_summary(c) + selftest, options.verbose_summary);
  result.optimization = std::move(c.optimization);
  return result;
}

// A .tflite is already a list of kernels: it is imported straight into the
// lowered model, then optimized, assigned backends and emitted like a TF graph.
ConvertResult convert_tflite(const ConvertOptions& options, const std::string& bytes) {
  const std::string& path = options.graph_path;
  auto refuse = [&](bool given, const char* flag) {
    if (given) throw ConvertError(path + ": " + flag + " does not apply to a .tflite model");
  };
  refuse(!options.checkpoint_path.empty(), "--checkpoint");
  refuse(!options.inputs.empty(), "--inputs (a .tflite model's inputs are its subgraph's)");
  refuse(!options.input_shapes.empty(), "--input-shape (a .tflite model's shapes are fixed)");
  refuse(!options.frozen_inputs.empty(), "--freeze-input");
  refuse(!options.signature.empty(), "--signature");
  refuse(options.loops == LoopMode::kUnroll, "--loops=unroll (a .tflite's WHILE always runs at run time)");
  check_optimize_options(options.optimize);
  TfliteOptions tflite_options;
  tflite_options.outputs = options.outputs;
  tflite_options.max_loop_iterations = options.max_loop_iterations;
  report(options, "reading the .tflite");
  TfliteImport imported = import_tflite(bytes, path, tflite_options);
  Conversion c;
  c.loaded.path = path;
  c.from_tflite = true;
  c.tflite_operators = imported.tflite_operators;
  c.tflite_called_operators = imported.called_operators;
  c.tflite_called_subgraphs = imported.called_subgraphs;
  c.tflite_op_counts = imported.op_counts;
  c.notes = std::move(imported.notes);
  // Printed like a TF graph's run-time conds, one line per WHILE / IF.
  c.control_flow.runtime_ifs = std::move(imported.control_flow);
  c.lowered = std::move(imported.model);
  OptimizeOptions optimize_options = options.optimize;
  if (imported.quantized) {
    // The other passes rewrite float arithmetic (fold, fuse, fold batch norm)
    // and would drop or misapply tensors' quantization.
    for (const std::string& name : optimization_pass_names()) {
      if (name != "dead-code") optimize_options.disabled.insert(name);
    }
    c.notes.push_back("quantized model: of the optimization passes only dead-code runs");
  }
  report(options, "optimizing");
  c.optimization = optimize(c.lowered, optimize_options);
  if (options.quantize_int8) {
    if (imported.quantized) throw ConvertError(path + ": --quantize int8: the model is already quantized");
    refuse_quantize_with_control_flow(c);
    post_training_stage(options, read_calibration_if_asked(options), c);
  } else {
    int8_arithmetic_stage(c);
  }
  return finish_conversion(options, c);
}

}  // namespace

std::vector<uint8_t> plan_and_emit(const LoweredModel& model, const std::string& producer, EmitStats* stats,
                                   const std::vector<MemoryRegion>& memory_regions) {
  check_model_limits(model);  // before planning a model the format cannot hold
  const auto start = std::chrono::steady_clock::now();
  // 16-byte slots, or finer ones (4-byte, kActivationOffsetAlignment, all any
  // kernel needs; then element slots: bools, bytes and halves that only
  // reference kernels touch, at multiples of their size) when they do better.
  const ArenaPlan plan = plan_model_arena(model, kTensorAlignment, kActivationOffsetAlignment,
                                          arena_request(model, memory_regions));
  const std::chrono::duration<double, std::milli> planning = std::chrono::steady_clock::now() - start;
  std::vector<uint8_t> bytes = emit_model(model, plan, producer, stats, memory_regions);
  if (stats != nullptr) stats->plan_milliseconds = planning.count();
  return bytes;
}

std::vector<MemoryRegion> parse_memory_regions(const std::string& text) {
  std::vector<MemoryRegion> regions;
  std::set<std::string> names;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string entry = text.substr(start, comma - start);
    start = comma + 1;
    auto bad = [&](const std::string& why) {
      return ConvertError("--memory-regions: '" + entry + "': " + why +
                          " (expected NAME=SIZE,..., e.g. fast=64K,slow=4M)");
    };
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) throw bad("no '='");
    MemoryRegion region;
    region.name = entry.substr(0, eq);
    // Names become C identifiers in generated headers (floe-embed).
    bool identifier = !region.name.empty() && !std::isdigit(static_cast<unsigned char>(region.name[0]));
    for (char ch : region.name) identifier = identifier && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
    if (!identifier) throw bad("the name must be letters, digits and '_', not starting with a digit");
    if (!names.insert(region.name).second) throw bad("the name is given twice");
    std::string size = entry.substr(eq + 1);
    uint64_t unit = 1;
    if (!size.empty() && (size.back() == 'K' || size.back() == 'k')) unit = 1024;
    if (!size.empty() && (size.back() == 'M' || size.back() == 'm')) unit = 1024 * 1024;
    if (unit != 1) size.pop_back();
    if (size.empty() || size.size() > 12 || size.find_first_not_of("0123456789") != std::string::npos) {
      throw bad("the size must be a number of bytes, or of K or M");
    }
    region.capacity = std::stoull(size) * unit;
    if (region.capacity == 0) throw bad("the size is 0");
    regions.push_back(region);
    if (comma == text.size()) break;
  }
  if (regions.size() > kMaxMemoryRegions) {
    throw ConvertError("--memory-regions: at most " + std::to_string(kMaxMemoryRegions) + " regions, got " +
                       std::to_string(regions.size()));
  }
  return regions;
}

namespace {

// One conversion of a graph; empty when a loop --loops=auto chose to run at
// run time failed to lower as a WHILE: it is added to `must_unroll` and the
// caller converts again.
std::optional<ConvertResult> convert_graph(const ConvertOptions& options,
                                           const std::vector<CalibrationArray>& calibration,
                                           std::map<std::string, std::string>& must_unroll) {
  Conversion c;
  report(options, "loading the graph");
  load_stage(options, c);
  resolve_io_stage(options, c);
  training_structure_stage(c);
  report(options, "freezing variables");
  freeze_stage(options, c);
  feed_shapes_stage(options, c);
  try {
    report(options, "unrolling loops");
    unroll_stage(options, must_unroll, c);
    report(options, "lowering and optimizing");
    lower_and_optimize_stage(options, c);
  } catch (const RuntimeLoopsFailed& failed) {
    for (const std::string& loop : failed.loops) must_unroll[loop] = "its run-time WHILE failed: " + failed.reason;
    return std::nullopt;
  } catch (const ConvertError& e) {
    if (!c.unrolled.runtime_by_choice.empty()) {
      std::string first_line = e.what();
      first_line = first_line.substr(0, first_line.find('\n'));
      for (const std::string& loop : c.unrolled.runtime_by_choice) {
        must_unroll[loop] = "its run-time WHILE failed: " + first_line;
      }
      return std::nullopt;
    }
    // A `shape {}` read as a scalar where TF would read unknown rank may be
    // why: the refusal says so.
    if (c.scalar_before_22.empty()) throw;
    ConvertError hinted(std::string(e.what()) + " (input '" + c.scalar_before_22.front() +
                            "' declares shape {} in a graph of producer < 22, read as a scalar; TensorFlow reads it "
                            "as unknown rank there: if it is not a scalar, pass --input-shape)",
                        e.category(), e.where());
    hinted.with_tensor(e.tensor()).with_refusals(e.refusals());
    if (e.needs_predicate()) hinted.with_predicate();
    if (e.needs_loop_bound()) hinted.with_loop_bound();
    throw hinted;
  }
  if (options.quantize_int8) {
    refuse_quantize_with_control_flow(c);
    post_training_stage(options, calibration, c);
  } else {
    int8_arithmetic_stage(c);
  }
  return finish_conversion(options, c);
}

}  // namespace

ConvertResult convert(const ConvertOptions& options) {
  if (const std::optional<std::string> tflite = read_if_tflite(options.graph_path)) {
    return convert_tflite(options, *tflite);
  }
  const std::vector<CalibrationArray> calibration = read_calibration_if_asked(options);  // a bad file fails first
  std::map<std::string, std::string> must_unroll;
  for (;;) {
    if (std::optional<ConvertResult> result = convert_graph(options, calibration, must_unroll)) return *result;
  }
}

}  // namespace floe::conv
