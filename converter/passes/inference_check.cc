// SPDX-License-Identifier: Apache-2.0
// The inference-graph check (see training_structure.h): how each op fares on the
// path to the outputs, and one ConvertError listing every offender by category
// with op counts. Runs after static control-flow resolution and pruning, before
// freezing, so a training-mode graph is named as such before anything else.
#include <string>

#include "converter/ir/tf_dtype.h"
#include "converter/ir/attrs.h"
#include "converter/ir/error.h"
#include "converter/ops/op_registry.h"
#include "converter/passes/training_structure.h"

namespace floe::conv {

bool OpNamePattern::matches(const std::string& op) const {
  for (const char* e : except) {
    if (op == e) return false;
  }
  for (const char* e : exact) {
    if (op == e) return true;
  }
  for (const char* p : prefixes) {
    if (op.rfind(p, 0) == 0) return true;
  }
  for (const char* s : suffixes) {
    const size_t n = std::char_traits<char>::length(s);
    if (op.size() >= n && op.compare(op.size() - n, n, s) == 0) return true;
  }
  for (const char* s : substrings) {
    if (op.find(s) != std::string::npos) return true;
  }
  return false;
}

namespace {

const OpNamePattern& training_only_ops() {
  static const OpNamePattern ops{
      {"NoOp", "SaveV2", "Save", "SaveSlices", "RestoreV2", "Restore", "RestoreSlice", "MergeV2Checkpoints",
       "ShardedFilename", "ShardedFilespec", "Assign", "AssignAdd", "AssignSub", "AssignVariableOp",
       "AssignAddVariableOp", "AssignSubVariableOp", "VarIsInitializedOp", "IsVariableInitialized",
       "MergeSummary", "BroadcastGradientArgs", "CountUpTo", "Assert", "PrintV2",
       "ReportUninitializedVariables"},
      {"Apply", "ResourceApply", "SparseApply", "ResourceSparseApply", "Scatter", "ResourceScatter",
       "Conv2DBackprop", "DepthwiseConv2dNativeBackprop", "Conv3DBackprop"},
      {"Summary", "SummaryV2", "Grad", "GradV2", "GradV3"},
      {},
      // Conv2DBackpropInput is also the inference op behind conv2d_transpose.
      {"Conv2DBackpropInput", "ScatterNd"}};
  return ops;
}

}  // namespace

bool is_training_only_op(const std::string& op) { return training_only_ops().matches(op); }

const std::vector<OpClassRule>& op_class_rules() {
  static const std::vector<OpClassRule> rules = {
      {OpClass::kRandom,
       {{"RandomUniformInt", "RandomStandardNormal", "TruncatedNormal", "RandomShuffle",
         "Multinomial", "RandomGamma", "RandomPoisson", "RandomPoissonV2", "RandomCrop",
         "LogUniformCandidateSampler", "UniformCandidateSampler", "StatelessRandomUniform",
         "StatelessRandomNormal", "StatelessTruncatedNormal"}}},
      {OpClass::kString,
       {{"AsString", "Substr", "ReduceJoin"}, {"String", "Regex", "StaticRegex", "Unicode"}}},
      {OpClass::kHashTable,
       {{}, {"HashTable", "MutableHashTable", "MutableDenseHashTable", "LookupTable", "InitializeTable"}}},
      {OpClass::kIo,
       {{"PyFunc", "PyFuncStateless", "EagerPyFunc", "ReadFile", "WriteFile", "MatchingFiles", "Iterator",
         "IteratorV2", "IteratorGetNext", "OneShotIterator", "MakeIterator", "TensorSliceDataset"},
        {"Decode", "Encode", "Parse"},
        {},
        {"Queue", "Reader"}}},
      {OpClass::kControlFlow,
       {{"Switch", "RefSwitch", "Merge", "RefMerge"}},
       "resolved at conversion time when the predicate folds to a constant (passes/training_structure), "
       "or, when it is an input, both branches computed and one selected, or only the taken branch run "
       "(an IF) when a branch can fail on the other's data (passes/cond_to_select)"},
      {OpClass::kWhileLoop,
       {{"Enter", "Exit", "NextIteration", "LoopCond", "RefEnter", "RefExit", "RefNextIteration"}},
       "TF1 while loop unrolled at conversion time when every iteration's condition folds to a constant "
       "(passes/control_flow), otherwise run by the runtime as a WHILE op, bounded by maximum_iterations or "
       "--max-loop-iterations or running until its condition is false (passes/control_flow_runtime)"},
      {OpClass::kFunctionalControlFlow, {{"While", "StatelessWhile", "If", "StatelessIf"}}},
      {OpClass::kFunctionCall, {{"StatefulPartitionedCall", "PartitionedCall", "Case", "StatelessCase"}}},
      {OpClass::kTrainingOnly, training_only_ops(),
       "training / saver structure: dropped when no output needs it (passes/prune)"},
      {OpClass::kTensorList, {{"EmptyTensorList"}, {"TensorList"}}},
      {OpClass::kRagged, {{}, {"Ragged"}}},
      {OpClass::kSparse, {{}, {"Sparse"}}},
      {OpClass::kDecisionForest, {{}, {"SimpleML"}}},
      {OpClass::kOptimizerInternal, {{"_FusedBatchNormEx", "_FusedConv3D"}, {"_Mkl"}}},
  };
  return rules;
}

bool is_fetchable_variable_update(const std::string& op) {
  static const OpNamePattern updates{{"ScatterUpdate", "ScatterAdd", "ScatterSub", "ScatterMul", "ScatterDiv",
                                      "ScatterMin", "ScatterMax", "ScatterNdUpdate", "ScatterNdAdd", "ScatterNdSub"}};
  return updates.matches(op);
}

OpClass classify_op(const std::string& op) {
  if (is_fetchable_variable_update(op)) return OpClass::kSupported;  // dropped by prune when not fetched
  for (const OpClassRule& rule : op_class_rules()) {
    if (rule.names.matches(op)) return rule.op_class;
  }
  return find_handler(op) == nullptr ? OpClass::kUnsupported : OpClass::kSupported;
}

OpClass classify_node(const tfproto::NodeDef& node) {
  if (node.op() == "RandomUniform" && attr_int(node, "seed", 0) == 0 && attr_int(node, "seed2", 0) == 0) {
    return OpClass::kRandom;
  }
  return classify_op(node.op());
}

const char* op_class_description(OpClass c) {
  switch (c) {
    case OpClass::kSupported: return "supported";
    case OpClass::kRandom:
      return "random ops on the inference path (training-mode dropout or noise: fix keep_prob / is_training "
             "with --freeze-input, or export the inference graph; a seeded RandomUniform runs, drawing TF's "
             "values)";
    case OpClass::kIo:
      return "string / queue / reader / py_func ops (not computable on the device: feed the tensor after "
             "them with --inputs)";
    case OpClass::kTrainingOnly:
      return "training / variable-update ops on the path to the outputs (optimizer, gradient, assign and "
             "saver ops: fetch the inference tensors instead)";
    case OpClass::kControlFlow: return "control flow whose predicate is not known at conversion time";
    case OpClass::kWhileLoop:
      return "TF1 while loops floe could neither unroll nor run as a run-time WHILE (Enter/Exit/NextIteration/"
             "LoopCond: the conversion error says why; fixing the inputs the trip count depends on with "
             "--freeze-input unrolls it)";
    case OpClass::kFunctionCall:
      return "TF2 function calls (tf.function / TF2 SavedModel: the computation lives in FunctionDefLibrary "
             "functions; floe converts TF1 graphs: export with TF1 SavedModelBuilder / tf.compat.v1, or "
             "freeze the concrete function to a GraphDef)";
    case OpClass::kString:
      return "string ops (floe tensors hold numbers: do the text processing before the model and feed the "
             "numeric tensor after these ops with --inputs)";
    case OpClass::kHashTable:
      return "hash tables (a table is session state its initializer fills at run time, which a constant-only "
             "model cannot hold: look the keys up before the model and feed the ids with --inputs)";
    case OpClass::kRagged:
      return "ragged tensors (rows whose length depends on the data, while floe fixes every shape at conversion "
             "time: pad them to a dense tensor before the model, e.g. RaggedTensor.to_tensor(), and feed that "
             "with --inputs)";
    case OpClass::kSparse:
      return "sparse tensors (index / value lists whose length depends on the data, while floe fixes every "
             "shape at conversion time: densify before the model, e.g. tf.sparse.to_dense(), and feed the dense "
             "tensor with --inputs)";
    case OpClass::kTensorList:
      return "TF2 tensor lists (control flow v2 loop state): build the graph after "
             "tf.compat.v1.disable_control_flow_v2(), whose TensorArrayV3 ops floe resolves at conversion time";
    case OpClass::kFunctionalControlFlow:
      return "functional While / If (their bodies are FunctionDefLibrary functions): build the graph after "
             "tf.compat.v1.disable_control_flow_v2(), whose Enter/Exit loops and Switch/Merge conds floe "
             "unrolls and resolves at conversion time";
    case OpClass::kDecisionForest:
      return "TensorFlow Decision Forests ops (SimpleML*: the forest is loaded from files and run by TF-DF's "
             "own engine, not a tensor computation floe can lower): serve it with TF-DF / YDF, or distill it "
             "into a network";
    case OpClass::kOptimizerInternal:
      return "TF graph-optimizer rewrites made in memory while a session runs (grappler's _FusedBatchNormEx and "
             "_FusedConv3D, oneDNN's _Mkl* ops): convert the graph as it was exported, not a dump of the "
             "optimized one";
    case OpClass::kUnsupported: return "unsupported ops (floe has no handler for them)";
  }
  return "";
}

const char* op_class_key(OpClass c) {
  switch (c) {
    case OpClass::kSupported: return "supported";
    case OpClass::kRandom: return "random";
    case OpClass::kIo: return "string/io";
    case OpClass::kTrainingOnly: return "training ops";
    case OpClass::kControlFlow: return "unresolved control flow";
    case OpClass::kWhileLoop: return "while loop";
    case OpClass::kFunctionCall: return "TF2 function calls";
    case OpClass::kString: return "string";
    case OpClass::kHashTable: return "hash table";
    case OpClass::kRagged: return "ragged";
    case OpClass::kSparse: return "sparse";
    case OpClass::kTensorList: return "TF2 tensor list";
    case OpClass::kFunctionalControlFlow: return "functional control flow";
    case OpClass::kDecisionForest: return "decision forest";
    case OpClass::kOptimizerInternal: return "graph-optimizer internal";
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
    if (!keep[u] || user.removed || classify_node(user.def) != OpClass::kSupported) continue;
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
      // Training mode is computed as Session.run computes it (ops/batch_norm.cc).
      if (!attr_bool(node.def, "is_training", true) && node.inputs.size() >= 5 && (is_empty_const(node.inputs[3]) || is_empty_const(node.inputs[4]))) {
        training_bn.push_back("graph is in training mode: node " + node.name() + " (" + op +
                              ") has empty mean/variance inputs (a training-mode export); export the inference "
                              "graph (is_training=False / K.set_learning_phase(0))");
        training_bn_nodes.nodes_by_op[op].push_back(node.name());
        ++offenders;
        continue;
      }
    }
    if (has_string_dtype(node.def) && classify_node(node.def) == OpClass::kSupported) {
      category = static_cast<int>(OpClass::kIo);
    } else if (classify_node(node.def) != OpClass::kSupported) {
      category = static_cast<int>(classify_node(node.def));
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

void refuse_batch_norm_reserve_reads(const Graph& graph, const std::vector<bool>& keep,
                                     const std::vector<TensorRef>& fetches) {
  auto check = [&](const TensorRef& ref, const std::string& reader) {
    const Node& bn = graph.node(ref.node);
    const std::string& op = bn.op();
    if (ref.port < 3 || !attr_bool(bn.def, "is_training", true) ||
        (op != "FusedBatchNorm" && op != "FusedBatchNormV2" && op != "FusedBatchNormV3")) {
      return;
    }
    throw ConvertError(graph.source() + ": node '" + bn.name() + "' (op " + op + "): " + reader + " '" +
                           graph.tensor_name(ref) + "', a reserve space of training-mode batch norm (" +
                           "what TF's kernels keep for the gradient, different on CPU and GPU); fetch y (:0), "
                           "batch_mean (:1) or batch_variance (:2)",
                       ErrorCategory::kUnsupported, ErrorLocation{graph.source(), bn.name(), op, -1});
  };
  for (const TensorRef& f : fetches) check(f, "the outputs fetch");
  for (size_t n = 0; n < graph.size(); ++n) {
    const Node& node = graph.node(static_cast<int>(n));
    if (!keep[n] || node.removed) continue;
    for (const TensorRef& in : node.inputs) check(in, "node '" + node.name() + "' reads");
  }
}

}  // namespace floe::conv
