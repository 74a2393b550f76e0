// SPDX-License-Identifier: Apache-2.0
// Training-only structure, resolved or refused before freezing: user-fixed
// placeholders become constants, Switch/Merge pairs whose predicate is known at
// conversion time collapse to the taken branch (the `is_training` pattern of
// batch norm and dropout), and the pruned graph is checked to be an inference
// graph (no training-mode batch norm, random, string/queue/reader/py_func,
// variable-update or TF2 function-call ops), with every offender listed at once.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "converter/ir/graph.h"

namespace floe::conv {

// Tensors the user fixes to constant values ("--freeze-input is_training=false",
// "--freeze-input decoded_sample_data:1=16000"), as a feed_dict key may be any
// tensor: name -> comma-separated values (true/false/1/0 for bool, numbers
// otherwise). One value fills the whole shape; otherwise the count must match
// the tensor's static shape. A placeholder then acts as a Const; any other
// tensor's readers are rewired to a new Const node "<node>/fixed_output_<k>".
// Throws naming the node on bad input. Returns one line per tensor for the
// summary ("name:k = values (dtype shape)").
std::vector<std::string> freeze_placeholders(Graph& graph, const std::map<std::string, std::string>& values);

struct ControlFlowReport {
  int switches_resolved = 0;
  int merges_resolved = 0;
  int dead_nodes = 0;
  // Switches on the path to the fetches whose predicate is not a conversion-time
  // constant: switch node -> why (names the placeholder/op it depends on).
  std::map<int, std::string> unresolved;
  // Conds whose predicate is an input, computed both ways with a Select picking
  // (passes/cond_to_select.h): count, and the Merges that became Selects.
  int conds_selected = 0;
  std::vector<std::string> selected_merges;
  // Conds whose branches may not both run (an op that can fail on the untaken
  // branch's data): run at run time as an IF, one summary line each.
  std::vector<std::string> runtime_ifs;
};

// Resolves every Switch/RefSwitch the fetches reach whose predicate folds to a
// constant (Const, unfed PlaceholderWithDefault, frozen placeholder, or ops over
// them, evaluated by the lowering's folding machinery). The untaken output is dead;
// deadness propagates like TF's executor (through data and control edges, Merge
// needs all inputs dead); a Merge left with one live input becomes an Identity of
// it; a resolved Switch becomes an Identity of its data input. Dead nodes are
// flagged `removed` and no live node reads them afterwards. Repeats until nested
// conds are resolved. `fetches` are remapped if they named a resolved Switch/Merge.
ControlFlowReport resolve_static_control_flow(Graph& graph, std::vector<TensorRef>& fetches,
                                              const std::set<TensorRef>& feeds);

// True for ops that only make sense while training or saving (optimizer updates,
// gradients, savers, summaries, initializers): never candidate outputs.
bool is_training_only_op(const std::string& op);

// Variable updates whose output (the variable after the update) floe computes
// when it is fetched: Scatter{Update,Add,Sub,Mul,Div,Min,Max}, ScatterNd{Update,Add,Sub}.
// Only the fetched value is computed; nothing is written back to a variable.
bool is_fetchable_variable_update(const std::string& op);

// A fetched variable update reads its variable's value; when that variable is
// the output of an Assign (the initializer run in the same Session.run), the
// Assign returns the assigned value, so it becomes an Identity of that value
// and the variable itself is no longer needed. Updates reached only through
// control edges stay dropped. Returns the number of Assigns rewritten.
int read_assigned_values(Graph& graph, const std::vector<TensorRef>& fetches, const std::set<TensorRef>& feeds);

// How an op fares on the inference path (check_inference_graph's categories).
enum class OpClass {
  kRandom,
  kIo,            // queue / reader / decoder / py_func
  kTrainingOnly,  // optimizer, gradient, assign, saver
  kControlFlow,   // Switch / Merge left unresolved
  kWhileLoop,
  kFunctionCall,  // TF2 StatefulPartitionedCall & co.
  kString,        // string processing (StringSplit, StaticRegexReplace, ...)
  kHashTable,     // HashTable*, LookupTable*, InitializeTable*
  kRagged,        // Ragged*
  kSparse,        // Sparse* (indices/values whose count depends on the data)
  kTensorList,    // TF2 control flow v2 lists
  kFunctionalControlFlow,  // While / If with FunctionDefLibrary bodies
  kDecisionForest,         // SimpleML* (TF Decision Forests)
  kOptimizerInternal,      // grappler / oneDNN rewrites never written to a saved graph
  kUnsupported,   // no handler
  kSupported,
};

// Which op names a rule covers: exact names, or names starting with / ending with /
// containing a fragment; `except` names are left to the rules after it.
struct OpNamePattern {
  OpNamePattern(std::vector<const char*> exact_names, std::vector<const char*> name_prefixes = {},
                std::vector<const char*> name_suffixes = {}, std::vector<const char*> name_fragments = {},
                std::vector<const char*> except_names = {})
      : exact(std::move(exact_names)), prefixes(std::move(name_prefixes)), suffixes(std::move(name_suffixes)),
        substrings(std::move(name_fragments)), except(std::move(except_names)) {}
  std::vector<const char*> exact, prefixes, suffixes, substrings, except;
  bool matches(const std::string& op) const;
};

// One row of the op classification, in the order classify_op tries them. `handled`
// is set when a pass resolves such nodes before the inference check (what it
// does), so only the ones it could not resolve are refused.
struct OpClassRule {
  OpClassRule(OpClass c, OpNamePattern n, const char* handled_by = nullptr)
      : op_class(c), names(std::move(n)), handled(handled_by) {}
  OpClass op_class;
  OpNamePattern names;
  const char* handled;
};
const std::vector<OpClassRule>& op_class_rules();

OpClass classify_op(const std::string& op);
// classify_op for one node: a RandomUniform without a seed (seed = seed2 = 0:
// TF picks one at run time) is a random op; with one floe draws TF's values.
OpClass classify_node(const tfproto::NodeDef& node);
const char* op_class_description(OpClass c);
// Short, stable name of a class (the refusal groups of ConvertError / --error-json).
const char* op_class_key(OpClass c);

// Checks the nodes kept for the outputs form an inference graph; throws one
// ConvertError listing every offender by category with op counts:
//   training-mode FusedBatchNorm* (is_training true, also when the attr is absent:
//   TF's default is true; or empty mean/variance inputs), random ops, string /
//   queue / reader / py_func ops, variable updates, unresolved control flow, TF1
//   while loops, TF2 function calls, and ops floe has no handler for. A string /
//   io node whose outputs (other than those in `feeds`) computable ops read
//   names those tensors, to feed or fix.
void check_inference_graph(const Graph& graph, const std::vector<bool>& keep,
                           const ControlFlowReport& control_flow,
                           const std::set<TensorRef>& feeds = {});

// Outputs 3..5 of a training-mode FusedBatchNorm* (TF's reserve spaces, kept for
// the gradient and filled differently by each device's kernel) are refused when
// fetched or read by a kept node, naming the node and the tensor.
void refuse_batch_norm_reserve_reads(const Graph& graph, const std::vector<bool>& keep,
                                     const std::vector<TensorRef>& fetches);

}  // namespace floe::conv
