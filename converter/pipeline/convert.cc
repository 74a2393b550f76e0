// SPDX-License-Identifier: Apache-2.0
// Conversion pipeline (see convert.h).
#include "converter/pipeline/convert.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "converter/frontend/checkpoint/checkpoint_reader.h"
#include "converter/frontend/checkpoint/tf_dtype.h"
#include "converter/frontend/graphdef/attrs.h"
#include "converter/frontend/graphdef/graph_loader.h"
#include "converter/frontend/graphdef/tensor_proto.h"
#include "converter/ir/error.h"
#include "converter/lower/backend_cortexm.h"
#include "converter/lower/backend_xnnpack.h"
#include "converter/lower/lower_graph.h"
#include "converter/ops/op_registry.h"
#include "converter/passes/cond_to_select.h"
#include "converter/passes/control_flow.h"
#include "converter/passes/freeze.h"
#include "converter/passes/prune.h"
#include "converter/passes/training_structure.h"
#include "converter/pipeline/info.h"
#include "converter/pipeline/signature.h"

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
Feed describe_feed(const Graph& graph, TensorRef ref, int producer, bool* unknown_rank) {
  const Node& node = graph.node(ref.node);
  Feed feed;
  feed.ref = ref;
  *unknown_rank = false;
  if (node.op() == "Const" && ref.port == 0) {
    const tfproto::AttrValue* value = find_attr(node.def, "value");
    if (value && value->has_tensor()) {
      const HostTensor t = tensor_from_proto(value->tensor(), graph.source() + ": node '" + node.name() + "'");
      feed.dtype = compute_dtype(t.dtype);
      feed.shape = t.shape;
      return feed;
    }
  }
  int tf_type = attr_type(node.def, "dtype", 0);
  if (tf_type == 0) tf_type = attr_type(node.def, "T", 0);
  feed.dtype = tf_type == 0 ? DType::kFloat32 : compute_dtype(tf_dtype_to_floe(tf_type));
  if (feed.dtype == DType::kInvalid) {
    throw ConvertError(graph.source() + ": input '" + graph.tensor_name(ref) + "' has dtype " +
                       tf_dtype_name(tf_type) + ", which floe cannot feed");
  }
  if ((node.op() == "Placeholder" || node.op() == "PlaceholderV2") && find_attr(node.def, "shape")) {
    feed.shape = placeholder_shape(node.def, producer, unknown_rank);  // producer < 22: [] = unknown
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

std::string join_shape_notes(const std::vector<std::string>& notes) {
  std::string s;
  for (const auto& n : notes) s += "  note: " + n + "\n";
  return s;
}

}  // namespace

ConvertResult convert(const ConvertOptions& options) {
  LoadOptions load_options;
  load_options.tags = options.tags;
  LoadedGraph loaded = load_graph(options.graph_path, load_options);
  Graph graph(loaded.graph, loaded.path);
  freeze_placeholders(graph, options.frozen_inputs);

  refuse_tf2_saved_model(loaded);

  // Default inputs/outputs from the SignatureDef (SavedModel / MetaGraphDef).
  std::vector<std::string> output_names = options.outputs, input_names = options.inputs;
  std::optional<Signature> signature;
  if (loaded.meta && (output_names.empty() || !options.signature.empty())) {
    signature = choose_signature(*loaded.meta, options.signature, loaded.path);
  } else if (!options.signature.empty()) {
    throw ConvertError(loaded.path + ": --signature needs a SavedModel or MetaGraphDef (a " +
                       graph_file_kind_name(loaded.kind) + " has no signatures)");
  }
  if (signature && output_names.empty()) {
    for (const SignatureTensor& t : signature->outputs) output_names.push_back(t.tensor);
    if (input_names.empty()) {
      for (const SignatureTensor& t : signature->inputs) input_names.push_back(t.tensor);
    }
  }
  if (output_names.empty()) {
    throw ConvertError(loaded.path + ": --outputs is required (candidate outputs: " + candidate_list(graph) + ")");
  }
  std::vector<TensorRef> fetches;
  for (const std::string& name : output_names) fetches.push_back(graph.resolve_tensor(name));

  std::vector<TensorRef> explicit_feeds;
  std::set<TensorRef> feed_set;
  for (const std::string& name : input_names) {
    explicit_feeds.push_back(graph.resolve_tensor(name));
    feed_set.insert(explicit_feeds.back());
  }

  // Training-only structure: Switch/Merge on conversion-time constants collapse,
  // then the pruned graph must be an inference graph (all offenders listed at once).
  ControlFlowReport control_flow = resolve_static_control_flow(graph, fetches, feed_set);
  select_input_dependent_conds(graph, fetches, feed_set, control_flow);
  PruneResult pruned = prune_for_fetches(graph, fetches, feed_set);
  // TF1 while loops and TensorArrays are unrolled after freezing (below); their
  // insides are checked once they are plain nodes.
  check_inference_graph(graph, outside_loops(graph, pruned.keep), control_flow);

  // Variables before input shapes: a missing or V1 checkpoint is the more basic problem.
  std::unique_ptr<CheckpointReader> checkpoint;
  std::string checkpoint_path = options.checkpoint_path;
  if (checkpoint_path.empty()) checkpoint_path = default_checkpoint_for(loaded);
  bool needs_variables = false;
  for (size_t n = 0; n < graph.size(); ++n) {
    needs_variables = needs_variables || (pruned.keep[n] && is_variable_op(graph.node(static_cast<int>(n)).op()));
  }
  if (!checkpoint_path.empty() && needs_variables) {
    checkpoint = std::make_unique<CheckpointReader>(CheckpointReader::open(checkpoint_path));
  }
  const FreezeReport frozen =
      freeze_variables(graph, pruned.keep, checkpoint.get(), saver_scope(loaded),
                       loaded.meta ? variable_hints_from_collections(*loaded.meta)
                                   : std::map<std::string, VariableKeyHint>{});
  std::vector<TensorRef> feed_refs = explicit_feeds;
  for (int p : pruned.placeholders) feed_refs.push_back(TensorRef{p, 0});

  // Shapes: the graph's, then --input-shape, then unknown dims default to 1.
  std::map<TensorRef, std::vector<int64_t>> shape_overrides;
  for (const auto& [name, shape] : options.input_shapes) {
    const TensorRef ref = graph.resolve_tensor(name);
    if (std::find(feed_refs.begin(), feed_refs.end(), ref) == feed_refs.end()) {
      throw ConvertError("--input-shape names '" + name + "', which is not a model input");
    }
    shape_overrides[ref] = shape;
  }
  std::vector<Feed> feeds;
  std::vector<std::string> notes;
  for (size_t n = 0; n < graph.size(); ++n) {
    const Node& node = graph.node(static_cast<int>(n));
    auto is_double = [&](const char* attr) {
      const tfproto::AttrValue* v = find_attr(node.def, attr);
      return v != nullptr && v->value_case() == tfproto::AttrValue::kType && tf_dtype_base(v->type()) == kTfDouble;
    };
    if (pruned.keep[n] && (is_double("T") || is_double("dtype"))) {
      notes.push_back("the graph computes in float64; floe computes it in float32");
      break;
    }
  }
  for (const TensorRef& ref : feed_refs) {
    bool unknown_rank = false;
    Feed feed = describe_feed(graph, ref, loaded.graph.versions().producer(), &unknown_rank);
    const auto it = shape_overrides.find(ref);
    const std::string name = graph.tensor_name(ref);
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
      throw ConvertError(loaded.path + ": input '" + name +
                         "' has unknown rank: pass --input-shape " + graph.node(ref.node).name() +
                         "=d0,d1,...");
    }
    for (int64_t& d : feed.shape) {
      if (d < 0) {
        notes.push_back("input '" + name + "' has an unknown dim; using 1 (set it with --input-shape)");
        d = 1;
      }
    }
    feeds.push_back(std::move(feed));
  }

  const size_t graph_nodes = graph.size();  // as loaded: unrolling appends nodes
  size_t kept = 0;
  for (bool k : pruned.keep) kept += k;
  const UnrollReport unrolled = unroll_control_flow(graph, pruned.keep, feeds);
  if (unrolled.changed()) {
    pruned = prune_for_fetches(graph, fetches, feed_set);
    check_inference_graph(graph, pruned.keep, control_flow);
  }
  check_supported_ops(graph, pruned.keep);

  LowerStats lower_stats;
  const bool fold = options.optimize.enabled && options.optimize.disabled.count("fold-constants") == 0 &&
                    options.optimize.fold_while_lowering;
  check_optimize_options(options.optimize);
  LoweredModel lowered = lower_graph(graph, pruned.keep, feeds, fetches, &lower_stats, fold);
  OptimizeReport optimization = optimize(lowered, options.optimize);
  // Cortex-M targets: the CORTEX_M kernels (lower/backend_cortexm.h); no XNNPACK.
  const bool cortexm = is_cortexm_target(options.target);
  const int cortexm_ops = cortexm ? assign_cortexm_backends(&lowered, options.target) : 0;
  const BackendReport backends = assign_backends(&lowered, cortexm ? "reference" : options.target);
  ConvertResult result;
  result.model = emit_model(lowered, kProducer, &result.stats);
  result.optimization = std::move(optimization);

  // ---- summary ----
  std::ostringstream s;
  s << "floe-convert: " << loaded.path << "\n";
  if (signature) s << "  signature " << signature->name << "\n";
  for (int v : lowered.inputs) {
    const Value& value = lowered.values[static_cast<size_t>(v)];
    s << "  input   " << value.name << "  " << dtype_name(value.dtype) << " " << shape_to_string(value.shape) << "\n";
  }
  for (int v : lowered.outputs) {
    const Value& value = lowered.values[static_cast<size_t>(v)];
    s << "  output  " << value.name << "  " << dtype_name(value.dtype) << " " << shape_to_string(value.shape) << "\n";
  }
  s << "  graph: " << graph_nodes << " nodes, " << kept << " needed by the outputs";
  if (!pruned.control_only.empty()) {
    s << " (+" << pruned.control_only.size() << " reached only by control edges, dropped)";
  }
  s << "\n";
  if (control_flow.switches_resolved > 0) {
    s << "  resolved " << control_flow.switches_resolved << " Switch and " << control_flow.merges_resolved
      << " Merge node(s) on conversion-time predicates (" << control_flow.dead_nodes
      << " node(s) on untaken branches dropped)\n";
  }
  if (control_flow.conds_selected > 0) {
    s << "  " << control_flow.conds_selected << " cond(s) with an input-dependent predicate: both branches "
      << "computed, a Select picks (";
    for (size_t i = 0; i < control_flow.selected_merges.size(); ++i) {
      s << (i ? ", " : "") << control_flow.selected_merges[i];
    }
    s << ")\n";
  }
  if (!frozen.frozen.empty()) {
    s << "  froze " << frozen.frozen.size() << " variable(s) from " << checkpoint->prefix() << "\n";
  }
  s << "  folded " << lower_stats.folded_nodes << " node(s), removed " << lower_stats.aliased_nodes
    << " identity-like node(s)\n";
  s << unrolled.summary();
  s << result.optimization.summary();
  std::map<std::string, int> histogram;
  for (const LoweredOp& op : lowered.ops) histogram[schema::EnumNameOpCode(op.opcode)]++;
  s << "  ops (" << lowered.ops.size() << "):";
  for (const auto& [name, count] : histogram) s << " " << name << " x" << count;
  s << "\n";
  s << "  parameters: " << result.stats.parameter_count << " (" << result.stats.constant_bytes
    << " bytes)\n";
  s << "  arena: " << result.stats.arena_bytes << " bytes of activations ("
    << result.stats.naive_bytes << " without reuse) + prepared ops "
    << (cortexm ? result.stats.persistent_bytes_ptr32 : result.stats.persistent_bytes_ptr64)
    << " bytes (" << (cortexm ? "32" : "64") << "-bit pointers; "
    << (cortexm ? result.stats.persistent_bytes_ptr64 : result.stats.persistent_bytes_ptr32) << " with "
    << (cortexm ? "64" : "32") << ")\n";
  if (cortexm) {
    s << "  target " << options.target << ": " << cortexm_ops << " of " << lowered.ops.size()
      << " ops on the Cortex-M kernels\n";
  }
  if (backends.target != "reference") {
    s << "  target " << backends.target << ": " << backends.xnnpack_ops << " of " << lowered.ops.size()
      << " ops on XNNPACK";
    if (backends.single_threaded_ops > 0) {
      s << " (" << backends.single_threaded_ops << " too small for a thread pool run on the caller's thread)";
    }
    s << "; XNNPACK arena budget " << result.stats.xnnpack_arena_bytes << " bytes; total arena "
      << ((result.stats.arena_bytes + result.stats.xnnpack_arena_bytes + 15) / 16 * 16 +
          result.stats.persistent_bytes_ptr64)
      << " bytes\n";
  }
  s << "  model: " << result.model.size() << " bytes\n";
  s << join_shape_notes(notes);
  result.summary = s.str();
  return result;
}

}  // namespace floe::conv
