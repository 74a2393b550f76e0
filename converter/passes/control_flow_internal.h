// SPDX-License-Identifier: Apache-2.0
// Internals of the loop unroller (control_flow.cc) shared with its TensorArray
// half (control_flow_tensor_array.cc). The unroller evaluates the graph
// symbolically: each (instance, node) gets Syms (the tensor it became in the
// output graph, its dtype/shape and, when known, its value). An instance is the
// root graph or one iteration of one loop; nodes of an iteration are cloned with
// a suffix, root nodes are rewritten in place. Invariant: every Sym that is
// neither dead nor a TensorArray handle/flow names a node of the output graph (or
// a fed tensor); handles and flows are read only by the TensorArray ops, which
// this pass resolves, so their names never end up in a NodeDef.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "converter/ops/op_registry.h"
#include "converter/passes/control_flow.h"

namespace floe::conv::cf {

// A TensorArray's contents at one point of the dataflow (its flow value).
struct TensorArrayState;

struct Sym {
  std::string node;  // output-graph node (or fed node) holding the tensor
  int port = 0;
  TensorInfo info;
  std::shared_ptr<const TensorArrayState> array;  // set for TensorArray handles and flows
  bool dead = false;                             // untaken branch of a cond / finished loop

  std::string input() const { return port == 0 ? node : node + ":" + std::to_string(port); }
};

struct TensorArrayState {
  int id = 0;               // which TensorArrayV3 node created it
  int creator = -1;         // that node's index in the graph
  int tf_dtype = 0;         // the element dtype attr, as TF numbers it
  bool dynamic_size = false;
  std::vector<Sym> elements;  // node empty = never written
};

struct NodeSyms {
  bool dead = false;
  std::vector<Sym> ports;
};

struct Instance {
  const Instance* parent = nullptr;
  std::string suffix;  // appended to clone names ("" for the root)
  std::unordered_map<int, NodeSyms> nodes;
};

struct Frame {
  std::string name;
  int parent = -1;
  int depth = 0;
  std::vector<int> members;   // nodes directly in this frame, topological order
  std::vector<int> children;  // nested frames
  std::vector<int> enters, loop_merges, next_iterations, exits;
  int loop_cond = -1;
  std::vector<TensorRef> external_inputs;  // read inside the subtree, produced outside
};

// Thrown by Unroller::run when a top-level loop with a conversion-time trip
// count is better run at run time (or, found late, must be unrolled):
// unroll_control_flow rewrites the graph or notes the loop, then unrolls again.
struct LoopDecision {
  int frame = -1;
  std::string loop;      // the loop's name scope ("while" for "while/LoopCond")
  bool runtime = false;  // true: make it a WHILE; false: unroll it (`reason` says why)
  uint32_t trip_count = 0;
  std::string reason;
  // Runtime: its nested loops (frame names, deepest first) with their bounds.
  std::vector<std::pair<std::string, uint32_t>> nested;
};

class Unroller {
 public:
  // Splits the kept nodes into frames (throws on malformed loops). Without a
  // policy every loop whose condition folds is unrolled.
  Unroller(const Graph& graph, const std::vector<bool>& keep, const std::vector<Feed>& feeds,
           const LoopPolicy* policy = nullptr);
  // Unrolls and resolves everything, then replaces `target` (the graph given to
  // the constructor) with the rewritten graph.
  UnrollReport run(Graph& target);
  // Kept nodes that are in no while frame (frame analysis only).
  std::vector<bool> root_nodes() const;
  // The frame node `n` is directly in (0 = the root), and a frame by index.
  int frame_index(int n) const { return frame_of_[static_cast<size_t>(n)]; }
  const Frame& frame(int index) const { return frames_[static_cast<size_t>(index)]; }
  int find_frame(const std::string& frame_name) const {  // -1 when none
    for (size_t i = 1; i < frames_.size(); ++i) {
      if (frames_[i].name == frame_name) return static_cast<int>(i);
    }
    return -1;
  }

  // ---- used by the TensorArray half ----
  [[noreturn]] void fail(int node, const std::string& message) const;
  // The error at `node` ("<file>: node 'n' (op Op): message") with its location.
  ConvertError error_at(int node, const std::string& message, ErrorCategory category) const;
  // A new node in the output graph (unique name derived from `base`); returns its name.
  std::string append(tfproto::NodeDef def, const std::string& base);
  // The node standing for original node `n` in `inst`: rewritten in place for the
  // root instance, a suffixed clone otherwise. Returns its name.
  std::string emit(const Instance& inst, int n, tfproto::NodeDef def);
  std::string const_node(const HostTensor& value, const std::string& base);
  const Graph& graph() const { return graph_; }
  // Why `ref` is not a conversion-time constant (the graph inputs it depends on),
  // phrased as ": it depends on ...; 'x' must be known at conversion time to <goal> ...".
  // `inputs` (optional) receives the names of those graph inputs.
  std::string unknown_reason(TensorRef ref, const std::string& goal,
                             std::vector<std::string>* inputs = nullptr) const;
  // The run-time loop (its name) whose variables `ref` is computed from, or "".
  std::string runtime_loop_feeding(TensorRef ref) const;
  int next_array_id() {
    ++report_.tensor_arrays;
    return ++arrays_;
  }
  // Records the dtype and shape of a value written into the TensorArray made by
  // node `creator`: a run-time loop's dense buffer takes its element shape from it.
  void note_element(int creator, const TensorInfo& info);
  // Per TensorArrayV3 node name: the element written into it (dtype, shape;
  // shape {-1} when two writes disagreed). Filled while loops are simulated.
  const std::map<std::string, TensorInfo>& array_elements() const { return array_elements_; }

 private:
  friend void process_tensor_array(Unroller& u, Instance& inst, int n, const std::vector<const Sym*>& in,
                                   NodeSyms& out);
  const Sym* lookup(const Instance& inst, TensorRef ref) const;
  bool ready(const Instance& inst, int item) const;
  void process_items(Instance& inst, int frame);
  void process_node(Instance& inst, int n);
  void process_ordinary(Instance& inst, int n, const std::vector<const Sym*>& in, NodeSyms& out);
  void run_loop(Instance& parent, int frame);
  // Why top-level loop `frame` cannot run at run time ("" when it can).
  std::string runtime_blocker(int frame) const;
  bool uses_tensor_arrays(int frame) const;  // in the frame or a nested one
  std::vector<int> subtree_members(int frame) const;  // nodes of the frame and its nested frames
  std::string loop_name(int frame) const;
  tfproto::NodeDef rewired(const Instance& inst, int n, const std::vector<const Sym*>& in) const;
  void analyze_frames();

  const Graph& graph_;
  const std::vector<bool>& keep_;
  std::map<TensorRef, Sym> feeds_;
  std::vector<int> frame_of_;  // per node; -1 = not kept
  std::vector<Frame> frames_;  // [0] = root
  std::vector<int> order_;     // kept nodes, topological with loop back edges cut
  std::vector<tfproto::NodeDef> in_place_;
  std::vector<bool> rewritten_;
  std::vector<tfproto::NodeDef> appended_;
  std::unordered_set<std::string> names_;
  UnrollReport report_;
  int arrays_ = 0;
  const LoopPolicy* policy_ = nullptr;
  // While a top-level loop is unrolled: the ops its iterations added that do
  // not fold away, and whether iterations are only counted (nothing emitted)
  // because the loop will run at run time.
  int64_t loop_ops_ = 0;
  bool counting_ = false;
  // Nested loops seen while a top-level loop is simulated: the most iterations
  // each ran, and why one could not be a WHILE ("" if none).
  std::map<int, uint32_t> nested_trips_;
  std::string nested_unstable_;
  std::map<std::string, TensorInfo> array_elements_;
  // A top-level loop with TensorArrays whose condition depends on a graph
  // input: one iteration runs with the condition taken as true (nothing
  // emitted) so its writes show the element shapes, then this error is thrown.
  std::optional<ConvertError> probe_error_;
};

bool is_tensor_array_op(const std::string& op);

// Run-time loops (control_flow_runtime.cc). Rewrites top-level loop `frame` of
// `unroller`'s graph into _FloeWhileLoop (initial values -> loop variables)
// and _FloeWhileEnd (condition and next values) nodes, removes its loop nodes,
// rewires their readers and tags its nodes as the loop's condition or body
// (attrs _floe_loop, _floe_loop_cond), so the graph has no cycle and lowering
// emits one WHILE op. `max_loop_iterations` 0 = none given: the bound is then
// the graph's maximum_iterations counter, else the loop is refused.
// Returns the loop's summary line.
// `trip_count` > 0: the loop's trip count is known at conversion (it is the
// bound, and `why` says why the loop runs at run time anyway).
// `array_elements` (Unroller::array_elements) gives the element shape of each
// TensorArray the loop uses: each becomes a dense buffer [size, element...]
// carried through the loop in place of its flow (rewrite_tensor_arrays).
std::string make_runtime_loop(const Unroller& unroller, Graph& graph, std::vector<bool>& keep, int frame, int id,
                              uint32_t max_loop_iterations, const std::map<std::string, TensorInfo>& array_elements,
                              uint32_t trip_count = 0, const std::string& why = "");
// Rewrites every op of the TensorArrays that run-time loop `loop` (nodes
// `loop_members`, bound `bound`) uses into dense-buffer ops (see
// control_flow_runtime_arrays.cc). Returns the nodes it added inside the loop;
// `buffers` = how many TensorArrays became buffers.
std::vector<int> rewrite_tensor_arrays(const Unroller& unroller, Graph& graph, std::vector<bool>& keep,
                                       const std::set<int>& loop_members, const std::string& loop, uint32_t bound,
                                       const std::map<std::string, TensorInfo>& array_elements, int& buffers);
// Resolves TensorArray op `n` (handle/flow semantics; see control_flow_tensor_array.cc).
void process_tensor_array(Unroller& u, Instance& inst, int n, const std::vector<const Sym*>& in, NodeSyms& out);

}  // namespace floe::conv::cf
