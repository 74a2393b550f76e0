// SPDX-License-Identifier: Apache-2.0
// Conversion pipeline (see convert.h).
#include "converter/pipeline/convert.h"

#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "converter/frontend/checkpoint/checkpoint_reader.h"
#include "converter/frontend/checkpoint/tf_dtype.h"
#include "converter/frontend/graphdef/attrs.h"
#include "converter/frontend/graphdef/graph_loader.h"
#include "converter/frontend/graphdef/tensor_proto.h"
#include "converter/ir/error.h"
#include "converter/lower/lower_graph.h"
#include "converter/lower/op_registry.h"
#include "converter/passes/freeze.h"
#include "converter/passes/prune.h"

namespace floe::conv {
namespace {

constexpr const char* kProducer = "floe-convert 0.1";

std::string saver_scope(const LoadedGraph& loaded) {
  if (!loaded.meta || !loaded.meta->has_saver_def()) return "";
  const std::string& restore = loaded.meta->saver_def().restore_op_name();
  const size_t slash = restore.rfind('/');
  return slash == std::string::npos ? "" : restore.substr(0, slash + 1);
}

// Nodes nobody consumes: the likely outputs, listed when --outputs is missing.
std::string candidate_outputs(const Graph& graph) {
  std::vector<bool> consumed(graph.size(), false);
  for (size_t n = 0; n < graph.size(); ++n) {
    for (const TensorRef& in : graph.node(static_cast<int>(n)).inputs) {
      consumed[static_cast<size_t>(in.node)] = true;
    }
    for (int c : graph.node(static_cast<int>(n)).control_inputs) consumed[static_cast<size_t>(c)] = true;
  }
  std::string list;
  int shown = 0;
  for (size_t n = 0; n < graph.size() && shown < 10; ++n) {
    const Node& node = graph.node(static_cast<int>(n));
    if (consumed[n] || node.op() == "NoOp" || node.op() == "Assign" || node.op() == "SaveV2" ||
        node.name().rfind("save", 0) == 0) {
      continue;
    }
    list += (shown++ ? ", " : "") + node.name();
  }
  return list;
}

// dtype and (possibly partial) shape of a tensor that is about to be fed.
Feed describe_feed(const Graph& graph, TensorRef ref, bool* unknown_rank) {
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
  if (find_attr(node.def, "shape")) {
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

std::string join_shape_notes(const std::vector<std::string>& notes) {
  std::string s;
  for (const auto& n : notes) s += "  note: " + n + "\n";
  return s;
}

}  // namespace

ConvertResult convert(const ConvertOptions& options) {
  LoadedGraph loaded = load_graph(options.graph_path);
  Graph graph(loaded.graph, loaded.path);

  if (options.outputs.empty()) {
    throw ConvertError(loaded.path + ": --outputs is required (nodes nobody consumes: " +
                       candidate_outputs(graph) + ")");
  }
  std::vector<TensorRef> fetches;
  for (const std::string& name : options.outputs) fetches.push_back(graph.resolve_tensor(name));

  std::vector<TensorRef> explicit_feeds;
  std::set<TensorRef> feed_set;
  for (const std::string& name : options.inputs) {
    explicit_feeds.push_back(graph.resolve_tensor(name));
    feed_set.insert(explicit_feeds.back());
  }

  const PruneResult pruned = prune_for_fetches(graph, fetches, feed_set);
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
    if (pruned.keep[n] && (attr_type(node.def, "T", 0) == kTfDouble || attr_type(node.def, "dtype", 0) == kTfDouble)) {
      notes.push_back("the graph computes in float64; floe computes it in float32");
      break;
    }
  }
  for (const TensorRef& ref : feed_refs) {
    bool unknown_rank = false;
    Feed feed = describe_feed(graph, ref, &unknown_rank);
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

  std::unique_ptr<CheckpointReader> checkpoint;
  std::string checkpoint_path = options.checkpoint_path;
  if (checkpoint_path.empty() && !loaded.saved_model_dir.empty()) {
    checkpoint_path = loaded.saved_model_dir + "/variables/variables";
  }
  bool needs_variables = false;
  for (size_t n = 0; n < graph.size(); ++n) {
    needs_variables = needs_variables || (pruned.keep[n] && is_variable_op(graph.node(static_cast<int>(n)).op()));
  }
  if (!checkpoint_path.empty() && needs_variables) {
    checkpoint = std::make_unique<CheckpointReader>(CheckpointReader::open(checkpoint_path));
  }
  const FreezeReport frozen = freeze_variables(graph, pruned.keep, checkpoint.get(), saver_scope(loaded));
  check_supported_ops(graph, pruned.keep);

  LowerStats lower_stats;
  LoweredModel lowered = lower_graph(graph, pruned.keep, feeds, fetches, &lower_stats);
  ConvertResult result;
  result.model = emit_model(lowered, kProducer, &result.stats);

  // ---- summary ----
  std::ostringstream s;
  size_t kept = 0;
  for (bool k : pruned.keep) kept += k;
  s << "floe-convert: " << loaded.path << "\n";
  for (int v : lowered.inputs) {
    const Value& value = lowered.values[static_cast<size_t>(v)];
    s << "  input   " << value.name << "  " << dtype_name(value.dtype) << " " << shape_to_string(value.shape) << "\n";
  }
  for (int v : lowered.outputs) {
    const Value& value = lowered.values[static_cast<size_t>(v)];
    s << "  output  " << value.name << "  " << dtype_name(value.dtype) << " " << shape_to_string(value.shape) << "\n";
  }
  s << "  graph: " << graph.size() << " nodes, " << kept << " needed by the outputs";
  if (!pruned.control_only.empty()) {
    s << " (+" << pruned.control_only.size() << " reached only by control edges, dropped)";
  }
  s << "\n";
  if (!frozen.frozen.empty()) {
    s << "  froze " << frozen.frozen.size() << " variable(s) from " << checkpoint->prefix() << "\n";
  }
  s << "  folded " << lower_stats.folded_nodes << " node(s), removed " << lower_stats.aliased_nodes
    << " identity-like node(s)\n";
  std::map<std::string, int> histogram;
  for (const LoweredOp& op : lowered.ops) histogram[schema::EnumNameOpCode(op.opcode)]++;
  s << "  ops (" << lowered.ops.size() << "):";
  for (const auto& [name, count] : histogram) s << " " << name << " x" << count;
  s << "\n";
  s << "  parameters: " << result.stats.parameter_count << " (" << result.stats.constant_bytes
    << " bytes)\n";
  s << "  arena: " << result.stats.arena_bytes << " bytes (" << result.stats.naive_bytes
    << " without reuse)\n";
  s << "  model: " << result.model.size() << " bytes\n";
  s << join_shape_notes(notes);
  result.summary = s.str();
  return result;
}

}  // namespace floe::conv
