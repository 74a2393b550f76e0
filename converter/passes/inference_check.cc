// SPDX-License-Identifier: Apache-2.0
// The inference-graph check (see training_structure.h): how each op fares on the
// path to the outputs, and one ConvertError listing every offender by category
// with op counts. Runs after static control-flow resolution and pruning, before
// freezing, so a training-mode graph is named as such before anything else.
#include <unordered_set>

#include "converter/frontend/checkpoint/tf_dtype.h"
#include "converter/frontend/graphdef/attrs.h"
#include "converter/ir/error.h"
#include "converter/ops/op_registry.h"
#include "converter/passes/training_structure.h"

namespace floe::conv {
namespace {


bool in_set(const std::string& op, std::initializer_list<const char*> ops) {
  for (const char* o : ops) {
    if (op == o) return true;
  }
  return false;
}

}  // namespace

bool is_training_only_op(const std::string& op) {
  static const std::unordered_set<std::string> exact = {
      "NoOp", "SaveV2", "Save", "SaveSlices", "RestoreV2", "Restore", "RestoreSlice", "MergeV2Checkpoints",
      "ShardedFilename", "ShardedFilespec", "Assign", "AssignAdd", "AssignSub", "AssignVariableOp",
      "AssignAddVariableOp", "AssignSubVariableOp", "VarIsInitializedOp", "IsVariableInitialized",
      "MergeSummary", "BroadcastGradientArgs", "CountUpTo", "Assert", "PrintV2",
      "ReportUninitializedVariables"};
  if (exact.count(op)) return true;
  auto starts = [&](const char* p) { return op.rfind(p, 0) == 0; };
  auto ends = [&](const char* s) {
    const size_t n = std::char_traits<char>::length(s);
    return op.size() >= n && op.compare(op.size() - n, n, s) == 0;
  };
  return starts("Apply") || starts("ResourceApply") || starts("SparseApply") || starts("ResourceSparseApply") ||
         starts("Scatter") || starts("ResourceScatter") || ends("Summary") || ends("SummaryV2") ||
         ends("Grad") || ends("GradV2") || ends("GradV3") ||
         // Conv2DBackpropInput is also the inference op behind conv2d_transpose.
         (starts("Conv2DBackprop") && op != "Conv2DBackpropInput") ||
         starts("DepthwiseConv2dNativeBackprop") || starts("Conv3DBackprop");
}

OpClass classify_op(const std::string& op) {
  if (in_set(op, {"RandomUniform", "RandomUniformInt", "RandomStandardNormal", "TruncatedNormal",
                  "RandomShuffle", "Multinomial", "RandomGamma", "RandomPoisson", "RandomPoissonV2",
                  "RandomCrop", "LogUniformCandidateSampler", "UniformCandidateSampler",
                  "StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal"})) {
    return OpClass::kRandom;
  }
  if (in_set(op, {"PyFunc", "PyFuncStateless", "EagerPyFunc"}) || op.find("Queue") != std::string::npos ||
      op.find("Reader") != std::string::npos || op.rfind("Decode", 0) == 0 || op.rfind("Encode", 0) == 0 ||
      op.rfind("String", 0) == 0 || op.rfind("Parse", 0) == 0 || op.rfind("Regex", 0) == 0 ||
      op.rfind("StaticRegex", 0) == 0 ||
      in_set(op, {"ReadFile", "WriteFile", "AsString", "Substr", "MatchingFiles",
                  "Iterator", "IteratorV2", "IteratorGetNext", "OneShotIterator", "MakeIterator",
                  "TensorSliceDataset", "LookupTableFindV2", "HashTableV2"})) {
    return OpClass::kIo;
  }
  if (is_switch_op(op) || is_merge_op(op)) return OpClass::kControlFlow;
  if (in_set(op, {"Enter", "Exit", "NextIteration", "LoopCond", "RefEnter", "RefExit", "RefNextIteration"})) {
    return OpClass::kWhileLoop;
  }
  if (in_set(op, {"StatefulPartitionedCall", "PartitionedCall", "If", "StatelessIf", "While",
                  "StatelessWhile", "Case", "StatelessCase"})) {
    return OpClass::kFunctionCall;
  }
  if (is_training_only_op(op)) return OpClass::kTrainingOnly;
  return find_handler(op) == nullptr ? OpClass::kUnsupported : OpClass::kSupported;
}

const char* op_class_description(OpClass c) {
  switch (c) {
    case OpClass::kSupported: return "supported";
    case OpClass::kRandom:
      return "random ops on the inference path (training-mode dropout or noise: fix keep_prob / is_training "
             "with --freeze-input, or export the inference graph)";
    case OpClass::kIo:
      return "string / queue / reader / py_func ops (not computable on the device: feed the tensor after "
             "them with --inputs)";
    case OpClass::kTrainingOnly:
      return "training / variable-update ops on the path to the outputs (optimizer, gradient, assign and "
             "saver ops: fetch the inference tensors instead)";
    case OpClass::kControlFlow: return "control flow whose predicate is not known at conversion time";
    case OpClass::kWhileLoop: return "TF1 while loops (Enter/Exit/NextIteration/LoopCond) are not supported";
    case OpClass::kFunctionCall:
      return "TF2 function calls (tf.function / TF2 SavedModel: the computation lives in FunctionDefLibrary "
             "functions; floe converts TF1 graphs: export with TF1 SavedModelBuilder / tf.compat.v1, or "
             "freeze the concrete function to a GraphDef)";
    case OpClass::kUnsupported: return "unsupported ops (floe has no handler for them)";
  }
  return "";
}

// Short, stable names of the classes (ConvertError refusals).
const char* op_class_key(OpClass c) {
  switch (c) {
    case OpClass::kSupported: return "supported";
    case OpClass::kRandom: return "random";
    case OpClass::kIo: return "string/io";
    case OpClass::kTrainingOnly: return "training ops";
    case OpClass::kControlFlow: return "unresolved control flow";
    case OpClass::kWhileLoop: return "while loop";
    case OpClass::kFunctionCall: return "TF2 function calls";
    case OpClass::kUnsupported: return "unsupported";
  }
  return "";
}

namespace {

// For a string/io node: which of its outputs (not fed) computable ops read, so the user
// knows the tensors to feed (--inputs) or fix (--freeze-input), e.g. DecodeWav's
// samples and sample rate. "" when none does.
std::string computable_readers(const Graph& graph, const std::vector<bool>& keep, const std::set<TensorRef>& feeds,
                               int producer) {
  std::map<int, std::string> read;  // port -> first reader
  for (size_t u = 0; u < graph.size(); ++u) {
    const Node& user = graph.node(static_cast<int>(u));
    if (!keep[u] || user.removed || classify_op(user.op()) != OpClass::kSupported) continue;
    for (const TensorRef& in : user.inputs) {
      if (in.node == producer && !feeds.count(in) && !read.count(in.port)) read[in.port] = user.name();
    }
  }
  if (read.empty()) return "";
  std::string text = " (";
  for (const auto& [port, user] : read) {
    text += (text.size() > 2 ? ", " : "") + graph.tensor_name(TensorRef{producer, port}) + " read by '" + user + "'";
  }
  return text + ": feed with --inputs or fix with --freeze-input)";
}

}  // namespace

void check_inference_graph(const Graph& graph, const std::vector<bool>& keep,
                           const ControlFlowReport& control_flow, const std::set<TensorRef>& feeds) {
  // category -> op -> nodes
  struct Category {
    const char* title = "";
    std::map<std::string, std::vector<std::string>> ops;
  };
  constexpr int kCount = static_cast<int>(OpClass::kUnsupported) + 1;
  Category categories[kCount];
  for (int c = 0; c < kCount; ++c) categories[c].title = op_class_description(static_cast<OpClass>(c));
  std::vector<std::string> training_bn;
  Refusal training_bn_nodes{"training-mode batch norm", {}};
  size_t offenders = 0;

  auto has_string_dtype = [](const NodeDef& def) {
    for (const char* attr : {"dtype", "T", "out_type", "Tout"}) {
      const AttrValue* v = find_attr(def, attr);
      if (v != nullptr && v->value_case() == AttrValue::kType && tf_dtype_base(v->type()) == kTfString) return true;
    }
    return false;
  };
  // Empty Const through Identity chains: what a training-mode export leaves as mean/variance.
  auto is_empty_const = [&](TensorRef ref) {
    for (int guard = 0; guard < 16; ++guard) {
      const Node& n = graph.node(ref.node);
      if (n.op() == "Identity" && !n.inputs.empty()) {
        ref = n.inputs[0];
        continue;
      }
      if (n.op() != "Const") return false;
      const AttrValue* v = find_attr(n.def, "value");
      if (v == nullptr || !v->has_tensor()) return false;
      int64_t count = 1;
      for (const auto& d : v->tensor().tensor_shape().dim()) count *= d.size();
      return count == 0;
    }
    return false;
  };

  for (size_t n = 0; n < graph.size(); ++n) {
    const Node& node = graph.node(static_cast<int>(n));
    if (!keep[n] || node.removed) continue;
    const std::string& op = node.op();
    int category = -1;
    if (op == "FusedBatchNorm" || op == "FusedBatchNormV2" || op == "FusedBatchNormV3") {
      const bool own = find_attr(node.def, "is_training") != nullptr;
      if (attr_bool(node.def, "is_training", true)) {
        training_bn.push_back("graph is in training mode: node " + node.name() + " (" + op +
                              ") has is_training=true; export the inference graph (is_training=False / "
                              "K.set_learning_phase(0))" +
                              (own ? "" : " [the attr is absent and TF's default is true]"));
        training_bn_nodes.nodes_by_op[op].push_back(node.name());
        ++offenders;
        continue;
      }
      if (node.inputs.size() >= 5 && (is_empty_const(node.inputs[3]) || is_empty_const(node.inputs[4]))) {
        training_bn.push_back("graph is in training mode: node " + node.name() + " (" + op +
                              ") has empty mean/variance inputs (a training-mode export); export the inference "
                              "graph (is_training=False / K.set_learning_phase(0))");
        training_bn_nodes.nodes_by_op[op].push_back(node.name());
        ++offenders;
        continue;
      }
    }
    if (has_string_dtype(node.def) && classify_op(op) == OpClass::kSupported) {
      category = static_cast<int>(OpClass::kIo);
    } else if (classify_op(op) != OpClass::kSupported) {
      category = static_cast<int>(classify_op(op));
    }
    // The Switch/Merge of a while loop belong with the loop, not with conds.
    if (category == static_cast<int>(OpClass::kControlFlow)) {
      for (const TensorRef& in : node.inputs) {
        const std::string& producer = graph.node(in.node).op();
        if (producer == "LoopCond" || producer == "NextIteration" || producer == "Enter" ||
            producer == "RefNextIteration" || producer == "RefEnter") {
          category = static_cast<int>(OpClass::kWhileLoop);
        }
      }
    }
    if (category < 0) continue;
    std::string label = node.name();
    if (category == static_cast<int>(OpClass::kIo)) label += computable_readers(graph, keep, feeds, static_cast<int>(n));
    if (category == static_cast<int>(OpClass::kUnsupported) && refusal_reason(op) != nullptr) {
      label += std::string(" (") + refusal_reason(op) + ")";
    }
    if (is_switch_op(op) && category == static_cast<int>(OpClass::kControlFlow)) {
      const auto it = control_flow.unresolved.find(static_cast<int>(n));
      if (it != control_flow.unresolved.end()) label += " (" + it->second + ")";
    }
    categories[category].ops[op].push_back(label);
    ++offenders;
  }
  if (offenders == 0) return;

  std::string message = graph.source() + ": cannot convert: " + std::to_string(offenders) +
                        " node(s) on the path to the outputs cannot run on floe:";
  for (size_t i = 0; i < training_bn.size(); ++i) {
    if (i == 4 && training_bn.size() > 5) {
      message += "\n  ... and " + std::to_string(training_bn.size() - 4) + " more batch-norm node(s) in training mode";
      break;
    }
    message += "\n  " + training_bn[i];
  }
  std::vector<Refusal> refusals;
  if (!training_bn_nodes.nodes_by_op.empty()) refusals.push_back(training_bn_nodes);
  for (int k = 0; k < kCount; ++k) {
    const Category& c = categories[k];
    if (c.ops.empty()) continue;
    message += "\n  " + std::string(c.title) + ":";
    for (const auto& [op, nodes] : c.ops) {
      message += "\n    " + op + " x" + std::to_string(nodes.size()) + ": ";
      for (size_t i = 0; i < nodes.size() && i < 5; ++i) message += (i ? ", " : "") + nodes[i];
      if (nodes.size() > 5) message += ", ...";
    }
    refusals.push_back(Refusal{op_class_key(static_cast<OpClass>(k)), c.ops});
  }
  ConvertError error(message, ErrorCategory::kUnsupported, ErrorLocation{graph.source(), "", "", -1});
  error.with_refusals(std::move(refusals));
  if (!categories[static_cast<int>(OpClass::kControlFlow)].ops.empty()) error.with_predicate();
  throw error;
}

}  // namespace floe::conv
