// SPDX-License-Identifier: Apache-2.0
// TF1 while-loop unrolling (see control_flow.h). The graph is split into frames
// the way TF's executor does it (an Enter opens its frame_name inside the
// frame of its input, an Exit's readers are in the parent frame, everything
// else is in the frame of its inputs), then evaluated symbolically in
// topological order with loop back edges (NextIteration -> Merge) cut. A loop
// runs iteration by iteration: its Merges take the loop variables, the frame's
// nodes are inferred (and folded through the lowering's handlers and the
// reference kernels when their inputs are constant) and cloned, LoopCond must
// fold to a constant, and NextIteration's inputs become the next values.
// Deadness follows TF: the untaken side of a Switch is dead, dead inputs make a
// node dead (no clone), a Merge forwards its one live input.
#include "converter/passes/control_flow.h"

#include <algorithm>

#include "converter/ir/tf_dtype.h"
#include "converter/ir/attrs.h"
#include "converter/ir/error.h"
#include "converter/ops/evaluate.h"
#include "converter/passes/control_flow_internal.h"
#include "converter/passes/loop_fallback.h"

namespace floe::conv {
namespace cf {
namespace {

// Unrolling is bounded so a loop that never ends (or one far too long to unroll
// sensibly on a microcontroller) is refused rather than exhausting memory.
constexpr int kMaxIterations = 10000;
constexpr int kMaxNodesAdded = 1000000;

bool is_loop_op(const std::string& op) {
  return is_enter_op(op) || is_exit_op(op) || is_next_iteration_op(op) || op == "LoopCond";
}
bool is_placeholder(const std::string& op) { return op == "Placeholder" || op == "PlaceholderV2"; }
bool is_forwarding(const std::string& op) {
  return op == "Identity" || op == "Snapshot" || op == "StopGradient" || op == "IdentityN";
}
bool narrow(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

bool nonzero(const HostTensor& t) {
  for (uint8_t b : t.data) {
    if (b != 0) return true;
  }
  return false;
}

const Sym& dead_sym() {
  static const Sym sym = [] {
    Sym s;
    s.dead = true;
    return s;
  }();
  return sym;
}

}  // namespace

bool is_tensor_array_op(const std::string& op) {
  return op.rfind("TensorArray", 0) == 0 && op.size() >= 13 && op.compare(op.size() - 2, 2, "V3") == 0;
}

Unroller::Unroller(const Graph& graph, const std::vector<bool>& keep, const std::vector<Feed>& feeds,
                   const LoopPolicy* policy)
    : graph_(graph), keep_(keep), in_place_(graph.size()), rewritten_(graph.size(), false), policy_(policy) {
  for (size_t n = 0; n < graph.size(); ++n) names_.insert(graph.node(static_cast<int>(n)).name());
  for (const Feed& f : feeds) {
    Sym s;
    s.node = graph.node(f.ref.node).name();
    s.port = f.ref.port;
    s.info = TensorInfo{f.dtype, f.shape, nullptr};
    feeds_[f.ref] = s;
  }
  analyze_frames();
}

ConvertError Unroller::error_at(int node, const std::string& message, ErrorCategory category) const {
  const Node& n = graph_.node(node);
  ErrorLocation where;
  where.file = graph_.source();
  where.node = n.name();
  where.op = n.op();
  return ConvertError(graph_.source() + ": node '" + n.name() + "' (op " + n.op() + "): " + message, category, where);
}

void Unroller::fail(int node, const std::string& message) const {
  throw error_at(node, message, ErrorCategory::kInvalidInput);
}

void Unroller::analyze_frames() {
  const size_t count = graph_.size();
  frame_of_.assign(count, -1);
  frames_.assign(1, Frame());
  // Kahn's algorithm; a Merge waits only for its non-NextIteration inputs.
  std::vector<int> pending(count, 0);
  std::vector<std::vector<int>> users(count);
  auto counted = [&](int user, int producer) {
    return keep_[static_cast<size_t>(producer)] &&
           !(is_merge_op(graph_.node(user).op()) && is_next_iteration_op(graph_.node(producer).op()));
  };
  std::vector<std::vector<int>> counted_inputs(count);
  for (size_t n = 0; n < count; ++n) {
    if (!keep_[n]) continue;
    const Node& node = graph_.node(static_cast<int>(n));
    std::vector<int> producers;
    for (const TensorRef& in : node.inputs) producers.push_back(in.node);
    producers.insert(producers.end(), node.control_inputs.begin(), node.control_inputs.end());
    for (int p : producers) {
      if (!counted(static_cast<int>(n), p)) continue;
      ++pending[n];
      users[static_cast<size_t>(p)].push_back(static_cast<int>(n));
      counted_inputs[n].push_back(p);
    }
  }
  auto is_ancestor = [&](int a, int f) {  // frame a is f or encloses f
    for (; f >= 0; f = frames_[static_cast<size_t>(f)].parent) {
      if (f == a) return true;
    }
    return false;
  };
  std::map<std::string, int> frame_by_name;
  std::vector<int> queue;
  for (size_t n = 0; n < count; ++n) {
    if (keep_[n] && pending[n] == 0) queue.push_back(static_cast<int>(n));
  }
  for (size_t i = 0; i < queue.size(); ++i) {
    const int n = queue[i];
    const Node& node = graph_.node(n);
    int frame = 0;
    for (int p : counted_inputs[static_cast<size_t>(n)]) {
      int g = frame_of_[static_cast<size_t>(p)];
      if (is_exit_op(graph_.node(p).op())) g = frames_[static_cast<size_t>(g)].parent;
      if (g < 0) fail(p, "Exit outside of any while loop");
      if (is_ancestor(frame, g)) {
        frame = g;
      } else if (!is_ancestor(g, frame)) {
        fail(n, "reads tensors of two different while loops ('" + frames_[static_cast<size_t>(frame)].name +
                    "' and '" + frames_[static_cast<size_t>(g)].name + "')");
      }
    }
    if (is_enter_op(node.op())) {
      // Frames are named once per graph. An Enter of a constant made outside the
      // enclosing loop may be seen first; a later Enter from inside that loop then
      // moves the frame down to its real parent.
      const std::string name = attr_string(node.def, "frame_name", "");
      const auto found = frame_by_name.find(name);
      int child = found == frame_by_name.end() ? -1 : found->second;
      if (child < 0) {
        Frame f;
        f.name = name;
        f.parent = frame;
        frames_.push_back(f);
        child = static_cast<int>(frames_.size()) - 1;
        frames_[static_cast<size_t>(frame)].children.push_back(child);
        frame_by_name[name] = child;
      } else if (frames_[static_cast<size_t>(child)].parent != frame) {
        const int old_parent = frames_[static_cast<size_t>(child)].parent;
        if (is_ancestor(old_parent, frame) && !is_ancestor(child, frame)) {
          auto& siblings = frames_[static_cast<size_t>(old_parent)].children;
          siblings.erase(std::find(siblings.begin(), siblings.end(), child));
          frames_[static_cast<size_t>(frame)].children.push_back(child);
          frames_[static_cast<size_t>(child)].parent = frame;
        } else if (!is_ancestor(frame, old_parent)) {
          fail(n, "enters while loop '" + name + "' from a different loop than its other Enter nodes");
        }
      }
      frame = child;
    }
    frame_of_[static_cast<size_t>(n)] = frame;
    order_.push_back(n);
    for (int u : users[static_cast<size_t>(n)]) {
      if (--pending[static_cast<size_t>(u)] == 0) queue.push_back(u);
    }
  }
  for (size_t n = 0; n < count; ++n) {
    if (keep_[n] && frame_of_[n] < 0) fail(static_cast<int>(n), "is on a cycle that is not a TF1 while loop");
  }
  for (Frame& f : frames_) {
    f.depth = 0;
    for (int a = f.parent; a >= 0; a = frames_[static_cast<size_t>(a)].parent) ++f.depth;
  }

  for (int n : order_) {
    const int f = frame_of_[static_cast<size_t>(n)];
    Frame& frame = frames_[static_cast<size_t>(f)];
    const Node& node = graph_.node(n);
    frame.members.push_back(n);
    // The unrolling reads these inputs by position: a malformed node is refused here, once.
    const size_t needs = is_switch_op(node.op()) ? 2 : is_loop_op(node.op()) || is_merge_op(node.op()) ? 1 : 0;
    if (node.inputs.size() < needs) {
      fail(n, "has " + std::to_string(node.inputs.size()) + " data input(s) where " + node.op() + " needs " +
                  std::to_string(needs));
    }
    if (f == 0) {
      if (is_loop_op(node.op())) fail(n, "is a loop node outside of any while loop");
      continue;
    }
    if (is_enter_op(node.op())) frame.enters.push_back(n);
    if (is_exit_op(node.op())) frame.exits.push_back(n);
    if (is_next_iteration_op(node.op())) frame.next_iterations.push_back(n);
    if (node.op() == "LoopCond") {
      if (frame.loop_cond >= 0) fail(n, "is the second LoopCond of while loop '" + frame.name + "'");
      frame.loop_cond = n;
    }
    if (is_merge_op(node.op())) {
      for (const TensorRef& in : node.inputs) {
        if (is_enter_op(graph_.node(in.node).op()) && frame_of_[static_cast<size_t>(in.node)] == f) {
          frame.loop_merges.push_back(n);
          break;
        }
      }
    }
  }
  // Tensors each loop reads from outside it (what its unrolling waits for).
  std::vector<std::set<TensorRef>> external(frames_.size());
  for (int n : order_) {
    const int f = frame_of_[static_cast<size_t>(n)];
    for (const TensorRef& in : graph_.node(n).inputs) {
      const int pf = keep_[static_cast<size_t>(in.node)] ? frame_of_[static_cast<size_t>(in.node)] : 0;
      for (int a = f; a > 0; a = frames_[static_cast<size_t>(a)].parent) {
        if (!is_ancestor(a, pf)) external[static_cast<size_t>(a)].insert(in);
      }
    }
  }
  for (size_t f = 1; f < frames_.size(); ++f) {
    frames_[f].external_inputs.assign(external[f].begin(), external[f].end());
  }
}

const Sym* Unroller::lookup(const Instance& inst, TensorRef ref) const {
  const auto fed = feeds_.find(ref);
  if (fed != feeds_.end()) return &fed->second;
  for (const Instance* i = &inst; i != nullptr; i = i->parent) {
    const auto it = i->nodes.find(ref.node);
    if (it == i->nodes.end()) continue;
    if (it->second.dead) return &dead_sym();
    if (ref.port < 0 || static_cast<size_t>(ref.port) >= it->second.ports.size()) {
      fail(ref.node, "output " + std::to_string(ref.port) + " is read but the node has only " +
                         std::to_string(it->second.ports.size()));
    }
    const Sym& s = it->second.ports[static_cast<size_t>(ref.port)];
    if (!s.dead && s.node.empty()) {
      fail(ref.node, "output " + std::to_string(ref.port) + " (a Merge's value_index) is read; floe cannot resolve it statically");
    }
    return &s;
  }
  return nullptr;
}

bool Unroller::ready(const Instance& inst, int item) const {
  if (item < 0) {
    for (const TensorRef& r : frames_[static_cast<size_t>(-item - 1)].external_inputs) {
      if (lookup(inst, r) == nullptr) return false;
    }
    return true;
  }
  for (const TensorRef& r : graph_.node(item).inputs) {
    if (lookup(inst, r) == nullptr) return false;
  }
  return true;
}

void Unroller::process_items(Instance& inst, int frame) {
  const Frame& f = frames_[static_cast<size_t>(frame)];
  std::vector<int> items;
  for (int n : f.members) {
    const std::string& op = graph_.node(n).op();
    if (is_enter_op(op) || is_next_iteration_op(op) || is_exit_op(op)) continue;
    if (std::find(f.loop_merges.begin(), f.loop_merges.end(), n) != f.loop_merges.end()) continue;
    items.push_back(n);
  }
  for (int c : f.children) items.push_back(-c - 1);
  std::vector<bool> done(items.size(), false);
  size_t remaining = items.size();
  while (remaining > 0) {
    bool progress = false;
    for (size_t i = 0; i < items.size(); ++i) {
      if (done[i] || !ready(inst, items[i])) continue;
      if (items[i] < 0) {
        run_loop(inst, -items[i] - 1);
      } else {
        process_node(inst, items[i]);
      }
      done[i] = true;
      --remaining;
      progress = true;
    }
    if (!progress) {
      for (size_t i = 0; i < items.size(); ++i) {
        if (!done[i] && items[i] >= 0) fail(items[i], "internal error: its inputs never become available");
      }
      throw ConvertError(graph_.source() + ": internal error: a nested while loop's inputs never become available");
    }
  }
}

tfproto::NodeDef Unroller::rewired(const Instance& inst, int n, const std::vector<const Sym*>& in) const {
  const Node& node = graph_.node(n);
  tfproto::NodeDef def = node.def;
  def.clear_input();
  for (const Sym* s : in) def.add_input(s->input());
  if (inst.parent == nullptr) {  // root nodes keep their control edges to plain root nodes
    for (int c : node.control_inputs) {
      const Node& dep = graph_.node(c);
      if (keep_[static_cast<size_t>(c)] && frame_of_[static_cast<size_t>(c)] == 0 && !is_tensor_array_op(dep.op())) {
        def.add_input("^" + dep.name());
      }
    }
  }
  return def;
}

std::string Unroller::append(tfproto::NodeDef def, const std::string& base) {
  if (counting_) return base;  // the loop runs at run time: its clones are never used
  std::string name = base;
  for (int k = 1; names_.count(name); ++k) name = base + "_" + std::to_string(k);
  names_.insert(name);
  def.set_name(name);
  appended_.push_back(std::move(def));
  if (++report_.nodes_added > kMaxNodesAdded) {
    ConvertError error(graph_.source() + ": floe refuses to unroll the while loops: they would add more than " +
                           std::to_string(kMaxNodesAdded) + " nodes",
                       ErrorCategory::kUnsupported, ErrorLocation{graph_.source(), "", "", -1});
    throw error.with_refusals({Refusal{"while loops too large to unroll", {}}});
  }
  return name;
}

std::string Unroller::emit(const Instance& inst, int n, tfproto::NodeDef def) {
  if (inst.parent == nullptr) {
    def.set_name(graph_.node(n).name());
    in_place_[static_cast<size_t>(n)] = std::move(def);
    rewritten_[static_cast<size_t>(n)] = true;
    return graph_.node(n).name();
  }
  return append(std::move(def), graph_.node(n).name() + inst.suffix);
}

void Unroller::process_node(Instance& inst, int n) {
  const Node& node = graph_.node(n);
  const std::string& op = node.op();
  std::vector<const Sym*> in;
  bool any_dead = false;
  for (const TensorRef& r : node.inputs) {
    in.push_back(lookup(inst, r));
    any_dead = any_dead || in.back()->dead;
  }
  NodeSyms& out = inst.nodes[n];
  if (is_placeholder(op) && feeds_.count(TensorRef{n, 0})) {
    out.ports = {feeds_.at(TensorRef{n, 0})};
    return;
  }
  if (is_merge_op(op)) {  // a cond's Merge (loop Merges are set by run_loop)
    std::vector<const Sym*> live;
    for (const Sym* s : in) {
      if (!s->dead) live.push_back(s);
    }
    if (live.empty()) {
      out.dead = true;
    } else if (live.size() == 1) {
      out.ports = {*live[0], Sym()};  // value_index: unresolvable (lookup refuses it)
    } else {
      for (const Sym* s : live) {
        if (s->array) {
          throw error_at(n, "merges TensorArray flows of a cond whose predicate is not known at conversion time",
                         ErrorCategory::kNeedsConstant)
              .with_predicate();
        }
      }
      const std::string name = emit(inst, n, rewired(inst, n, in));
      Sym value = *live[0];
      value.node = name;
      value.port = 0;
      value.info.value = nullptr;
      Sym index;
      index.node = name;
      index.port = 1;
      index.info = TensorInfo{DType::kInt32, {}, nullptr};
      out.ports = {value, index};
    }
    return;
  }
  if (any_dead) {
    out.dead = true;
    return;
  }
  if (is_tensor_array_op(op)) {
    process_tensor_array(*this, inst, n, in, out);
    return;
  }
  if (is_switch_op(op)) {
    if (in.size() != 2) fail(n, "expects 2 inputs");
    if (in[1]->info.value) {
      const int taken = nonzero(*in[1]->info.value) ? 1 : 0;
      out.ports.assign(2, dead_sym());
      out.ports[static_cast<size_t>(taken)] = *in[0];
    } else {  // left for check_inference_graph to report
      if (in[0]->array) fail(n, "switches a TensorArray flow on a predicate not known at conversion time");
      const std::string name = emit(inst, n, rewired(inst, n, in));
      Sym s = *in[0];
      s.node = name;
      s.info.value = nullptr;
      out.ports = {s, s};
      out.ports[1].port = 1;
    }
    return;
  }
  if (op == "LoopCond") {
    if (!in[0]->info.value || in[0]->info.value->num_elements() != 1) {
      std::vector<std::string> inputs;
      std::string reason = unknown_reason(node.inputs[0], "unroll the loop", &inputs);
      if (inputs.empty()) {
        // A loop inside a run-time loop's body whose trip count comes from that
        // loop's variables runs at run time too, as a WHILE in the body.
        const std::string loop = runtime_loop_feeding(node.inputs[0]);
        if (!loop.empty()) {
          inputs.push_back(loop);
          reason = ": it depends on the variables of the run-time loop '" + loop + "'";
        }
      }
      ConvertError error = error_at(
          n,
          "floe refuses to unroll TF1 while loop '" +
              frames_[static_cast<size_t>(frame_of_[static_cast<size_t>(n)])].name + "': its condition '" +
              graph_.tensor_name(node.inputs[0]) + "' is not a conversion-time constant" + reason,
          inputs.empty() ? ErrorCategory::kUnsupported : ErrorCategory::kNeedsConstant);
      if (inputs.empty()) throw error.with_refusals({Refusal{"while loop", {{op, {node.name()}}}}});
      error.with_tensor(inputs.front());
      const int frame = frame_of_[static_cast<size_t>(n)];
      if (policy_ != nullptr && policy_->runtime_allowed && !probe_error_ &&
          frames_[static_cast<size_t>(frame)].parent == 0 && uses_tensor_arrays(frame)) {
        // The loop will run at run time: first learn its TensorArrays' element
        // shapes from one iteration (run_loop throws `error` after it).
        probe_error_ = error;
        counting_ = true;
        Sym taken = *in[0];
        HostTensor yes;
        yes.dtype = DType::kBool;
        yes.data = {1};
        taken.info.value = std::make_shared<const HostTensor>(std::move(yes));
        out.ports = {taken};
        return;
      }
      throw error;
    }
    out.ports = {*in[0]};
    return;
  }
  for (const Sym* s : in) {
    if (!s->array) continue;
    if (!is_forwarding(op)) {
      fail(n, "reads a TensorArray handle or flow; floe resolves TensorArrays only through the TensorArray*V3 ops");
    }
    for (const Sym* f : in) out.ports.push_back(*f);
    return;
  }
  process_ordinary(inst, n, in, out);
}

void Unroller::process_ordinary(Instance& inst, int n, const std::vector<const Sym*>& in, NodeSyms& out) {
  const Node& node = graph_.node(n);
  const OpHandler* handler = find_handler(node.op());
  if (handler == nullptr) fail(n, "op is not supported");
  std::vector<const TensorInfo*> infos;
  bool inputs_constant = !in.empty(), any_narrow = false;
  for (const Sym* s : in) {
    infos.push_back(&s->info);
    inputs_constant = inputs_constant && s->info.value != nullptr;
    any_narrow = any_narrow || narrow(s->info.dtype);
  }
  std::vector<TensorInfo> outs = handler->infer(NodeContext(graph_, node, infos));
  bool outputs_constant = true;
  for (const TensorInfo& o : outs) {
    outputs_constant = outputs_constant && o.value != nullptr;
    any_narrow = any_narrow || narrow(o.dtype);
  }
  // Fold as the lowering driver does (ops/evaluate.h), so loop conditions and
  // shape arguments computed inside the body are known. Nodes with narrow dtypes
  // are left unknown here (lowering folds them later).
  if (!outputs_constant && inputs_constant && !any_narrow && handler->lower != nullptr && !handler->never_fold &&
      worth_folding(infos, outs)) {
    std::vector<HostTensor> results = fold_node(graph_, node, *handler, infos, outs);
    for (size_t port = 0; port < outs.size(); ++port) {
      outs[port].value = std::make_shared<const HostTensor>(std::move(results[port]));
    }
  }
  // An op that stays in an unrolled loop (constants fold, forwarding aliases).
  if (inst.parent != nullptr && !is_forwarding(node.op())) {
    bool folded = true;
    for (const TensorInfo& o : outs) folded = folded && o.value != nullptr;
    if (!folded) ++loop_ops_;
  }
  const std::string name = emit(inst, n, rewired(inst, n, in));
  for (size_t port = 0; port < outs.size(); ++port) {
    Sym s;
    s.node = name;
    s.port = static_cast<int>(port);
    s.info = std::move(outs[port]);
    out.ports.push_back(std::move(s));
  }
}

void Unroller::run_loop(Instance& parent, int frame) {
  const Frame& f = frames_[static_cast<size_t>(frame)];
  const int anchor = f.enters.empty() ? f.members.front() : f.enters.front();
  if (f.loop_cond < 0) fail(anchor, "while loop '" + f.name + "' has no LoopCond");
  struct Var {
    int merge = -1, next = -1;
    Sym value;
  };
  std::vector<Var> vars;
  for (int m : f.loop_merges) {
    Var v;
    v.merge = m;
    int enter = -1;
    for (const TensorRef& in : graph_.node(m).inputs) {
      if (is_enter_op(graph_.node(in.node).op())) enter = in.node;
      if (is_next_iteration_op(graph_.node(in.node).op())) v.next = in.node;
    }
    if (enter < 0 || v.next < 0) fail(m, "is a loop Merge without an Enter and a NextIteration input");
    v.value = *lookup(parent, graph_.node(enter).inputs.at(0));
    vars.push_back(std::move(v));
  }
  bool dead = false;
  for (int e : f.enters) dead = dead || lookup(parent, graph_.node(e).inputs.at(0))->dead;

  // A top-level loop: unrolled, or run at run time (policy_, LoopPolicy).
  const bool top = parent.parent == nullptr && policy_ != nullptr && !dead;
  const std::string name = loop_name(frame);
  if (top && policy_->progress) policy_->progress("loop '" + name + "'");
  std::string unroll_reason;
  int64_t budget = -1;  // ops the unrolled loop may add before it runs at run time instead; -1: no limit
  int64_t while_ops = 1;  // the WHILE op and the ops of its condition and body
  std::string holds_runtime_loop;  // the name of a run-time loop inside it
  if (top) {
    // A loop holding a run-time loop (an inner loop on a graph input) must run at run time too.
    for (int m : subtree_members(frame)) {
      const std::string& op = graph_.node(m).op();
      if (!is_loop_op(op) && !is_merge_op(op) && !is_switch_op(op) && !is_forwarding(op) && op != "Const") ++while_ops;
      if (op == "_FloeWhileLoop") holds_runtime_loop = attr_string(graph_.node(m).def, "loop_name", "");
    }
    const auto forced = policy_->unroll.find(name);
    std::string blocker = forced != policy_->unroll.end() ? forced->second
                          : holds_runtime_loop.empty()    ? runtime_blocker(frame)
                                                          : "";
    for (const Var& v : vars) {
      bool known = true;  // a TensorArray flow becomes a buffer whose shape the rewrite checks
      for (int64_t d : v.value.array ? std::vector<int64_t>{} : v.value.info.shape) known = known && d >= 0;
      if (blocker.empty() && !known) {
        blocker = "its variable '" + graph_.node(v.merge).name() + "' has no static shape";
      }
    }
    if (!holds_runtime_loop.empty() && (!blocker.empty() || !policy_->runtime_allowed)) {
      if (policy_->runtime_allowed) {
        throw error_at(f.loop_cond,
                       "while loop '" + name + "' holds the run-time loop '" + holds_runtime_loop +
                           "', so it must run at run time too, but " + blocker,
                       ErrorCategory::kUnsupported)
            .with_refusals({Refusal{"loop around a run-time loop that cannot run at run time (" + blocker + ")",
                                    {{"LoopCond", {graph_.node(f.loop_cond).name()}}}}});
      }
      throw error_at(f.loop_cond, "while loop '" + name + "' holds the run-time loop '" + holds_runtime_loop +
                                      "'; --quantize int8 takes no run-time loops",
                     ErrorCategory::kUnsupported)
          .with_refusals({Refusal{"run-time while loop with --quantize", {{"LoopCond", {graph_.node(f.loop_cond).name()}}}}});
    }
    if (!holds_runtime_loop.empty()) {
      budget = 0;
    } else if (policy_->mode == LoopMode::kUnroll) {
      unroll_reason = "--loops=unroll";
    } else if (!blocker.empty()) {
      if (policy_->mode == LoopMode::kRuntime) {
        throw error_at(f.loop_cond, "while loop '" + name + "' cannot run at run time (--loops=runtime): " + blocker,
                       ErrorCategory::kUnsupported)
            .with_refusals({Refusal{"while loop that cannot run at run time (" + blocker + ")",
                                    {{"LoopCond", {graph_.node(f.loop_cond).name()}}}}});
      }
      unroll_reason = blocker;
    } else if (!policy_->runtime_allowed) {
      unroll_reason = "--quantize int8 takes no run-time loops";
    } else {
      budget = std::max<int64_t>(kUnrollSmallOps, kUnrollGrowth * while_ops);
    }
    loop_ops_ = 0;
    counting_ = budget >= 0 && (policy_->mode == LoopMode::kRuntime || !holds_runtime_loop.empty());
    nested_trips_.clear();
    nested_unstable_.clear();
  }
  int k = 0;
  for (; !dead; ++k) {
    Instance inst;
    inst.parent = &parent;
    inst.suffix = parent.suffix.empty() ? "/iter" + std::to_string(k) : parent.suffix + "_" + std::to_string(k);
    for (int e : f.enters) inst.nodes[e].ports = {*lookup(parent, graph_.node(e).inputs.at(0))};
    for (const Var& v : vars) inst.nodes[v.merge].ports = {v.value, Sym()};
    try {
      process_items(inst, frame);
    } catch (const ConvertError&) {
      if (!probe_error_) throw;  // a probe iteration may fail (e.g. on an index from a graph input)
    }
    if (probe_error_) {
      counting_ = false;
      throw *probe_error_;
    }
    const Sym* cond = lookup(inst, TensorRef{f.loop_cond, 0});
    if (cond == nullptr || cond->dead || !cond->info.value) fail(f.loop_cond, "internal error: condition not evaluated");
    if (!nonzero(*cond->info.value)) break;
    if (k >= kMaxIterations) {  // a loop of exactly kMaxIterations iterations is fine
      throw error_at(f.loop_cond,
                     "floe refuses to unroll TF1 while loop '" + f.name + "': it is still running after " +
                         std::to_string(k) + " iterations (floe unrolls at most " +
                         std::to_string(kMaxIterations) + ")",
                     ErrorCategory::kUnsupported)
          .with_refusals({Refusal{"while loop", {{"LoopCond", {graph_.node(f.loop_cond).name()}}}}});
    }
    for (Var& v : vars) {
      const TensorRef next_in = graph_.node(v.next).inputs.at(0);
      const Sym* next = lookup(inst, next_in);
      if (next == nullptr || next->dead) fail(v.next, "has no value at the end of an iteration");
      // A TensorArray's flow stays one buffer of the same shape as long as it is the same array.
      const bool changes =
          next->array || v.value.array
              ? !next->array || !v.value.array || next->array->creator != v.value.array->creator
              : next->info.dtype != v.value.info.dtype || next->info.shape != v.value.info.shape;
      if (changes && policy_ != nullptr && parent.parent != nullptr && nested_unstable_.empty()) {
        // A nested loop: its enclosing top-level loop decides (below) whether that matters.
        nested_unstable_ = "its nested loop's variable '" + graph_.node(v.merge).name() +
                           "' changes shape between iterations";
      }
      if (budget >= 0 && changes) {
        // A WHILE keeps each variable's dtype and shape: this loop must unroll.
        const std::string why = "its variable '" + graph_.node(v.merge).name() + "' changes shape between iterations";
        if (policy_->mode == LoopMode::kRuntime) {
          counting_ = false;
          throw error_at(f.loop_cond, "while loop '" + name + "' cannot run at run time (--loops=runtime): " + why,
                         ErrorCategory::kUnsupported)
              .with_refusals({Refusal{"while loop that cannot run at run time (" + why + ")",
                                      {{"LoopCond", {graph_.node(f.loop_cond).name()}}}}});
        }
        counting_ = false;
        throw LoopDecision{frame, name, false, 0, why, {}};
      }
      v.value = *next;
    }
    ++report_.iterations;
    if (budget >= 0 && loop_ops_ > budget) counting_ = true;
  }
  if (policy_ != nullptr && parent.parent != nullptr && !dead) {
    uint32_t& most = nested_trips_[frame];
    most = std::max(most, static_cast<uint32_t>(k));
  }
  if (top && (counting_ || loop_ops_ > budget) && budget >= 0 && !nested_unstable_.empty()) {
    counting_ = false;
    if (policy_->mode == LoopMode::kRuntime) {
      throw error_at(f.loop_cond,
                     "while loop '" + name + "' cannot run at run time (--loops=runtime): " + nested_unstable_,
                     ErrorCategory::kUnsupported)
          .with_refusals({Refusal{"while loop that cannot run at run time (" + nested_unstable_ + ")",
                                  {{"LoopCond", {graph_.node(f.loop_cond).name()}}}}});
    }
    throw LoopDecision{frame, name, false, 0, nested_unstable_, {}};
  }
  if (top && counting_ && k > 0) {
    counting_ = false;
    const std::string why = policy_->mode == LoopMode::kRuntime
                                ? "--loops=runtime"
                                : "unrolled would be " + std::to_string(loop_ops_) + " ops, a WHILE " +
                                      std::to_string(while_ops);
    LoopDecision decision{frame, name, true, static_cast<uint32_t>(k), why, {}};
    if (!holds_runtime_loop.empty()) decision.reason = "it holds the run-time loop '" + holds_runtime_loop + "'";
    // Nested loops become WHILE ops inside its body, deepest first, each bounded
    // by the most iterations it ran in the simulation.
    std::vector<int> nested, stack(f.children.begin(), f.children.end());
    while (!stack.empty()) {  // every nested loop, also one that never ran (bound 1)
      const int inner = stack.back();
      stack.pop_back();
      nested.push_back(inner);
      const auto& children = frames_[static_cast<size_t>(inner)].children;
      stack.insert(stack.end(), children.begin(), children.end());
    }
    std::stable_sort(nested.begin(), nested.end(), [&](int a, int b) {
      return frames_[static_cast<size_t>(a)].depth > frames_[static_cast<size_t>(b)].depth;
    });
    for (int inner : nested) {
      const auto trips = nested_trips_.find(inner);
      decision.nested.emplace_back(frames_[static_cast<size_t>(inner)].name,
                                   std::max<uint32_t>(trips == nested_trips_.end() ? 0 : trips->second, 1));
    }
    throw decision;
  }
  if (top) counting_ = false;
  for (int x : f.exits) {
    const Node& exit = graph_.node(x);
    const Node& loop_switch = graph_.node(exit.inputs.at(0).node);  // Exit <- Switch:0 <- Merge
    if (!is_switch_op(loop_switch.op())) fail(x, "does not read a loop variable's Switch in while loop '" + f.name + "'");
    const int merge = loop_switch.inputs.at(0).node;
    const Var* var = nullptr;
    for (const Var& v : vars) {
      if (v.merge == merge) var = &v;
    }
    if (var == nullptr) fail(x, "does not read a loop variable of while loop '" + f.name + "'");
    NodeSyms& out = parent.nodes[x];
    if (dead) {
      out.dead = true;
    } else if (var->value.array) {
      out.ports = {var->value};
    } else {
      tfproto::NodeDef def = exit.def;
      def.set_op("Identity");
      def.clear_input();
      def.add_input(var->value.input());
      Sym s = var->value;
      s.node = emit(parent, x, def);
      s.port = 0;
      out.ports = {s};
    }
  }
  if (dead) return;  // on an untaken branch or past an outer loop's last iteration
  ++report_.loops;
  if (parent.parent == nullptr) {
    report_.details.push_back("while loop '" + f.name + "': " + std::to_string(k) + " iteration(s)");
    const std::string& cond_name = graph_.node(f.loop_cond).name();
    const size_t slash = cond_name.rfind('/');
    std::string line = "loop '" + (slash == std::string::npos ? cond_name : cond_name.substr(0, slash)) +
                       "': unrolled " + std::to_string(k) + "x";
    if (top && !unroll_reason.empty()) {
      line += " (" + unroll_reason + ")";
    } else if (top) {
      line += " (" + std::to_string(loop_ops_) + " ops, a run-time WHILE " + std::to_string(while_ops) + ")";
    }
    report_.unrolled_loops.push_back(line);
  }
}

std::string Unroller::loop_name(int frame) const {
  const Frame& f = frames_[static_cast<size_t>(frame)];
  if (f.loop_cond < 0) return f.name;
  const std::string& cond_name = graph_.node(f.loop_cond).name();
  const size_t slash = cond_name.rfind('/');
  return slash == std::string::npos ? cond_name : cond_name.substr(0, slash);
}

std::vector<int> Unroller::subtree_members(int frame) const {
  std::vector<int> out, stack{frame};
  while (!stack.empty()) {
    const Frame& f = frames_[static_cast<size_t>(stack.back())];
    stack.pop_back();
    out.insert(out.end(), f.members.begin(), f.members.end());
    stack.insert(stack.end(), f.children.begin(), f.children.end());
  }
  return out;
}

std::string Unroller::runtime_blocker(int frame) const {
  // --loops=auto unrolls a loop with TensorArrays whenever its trip count is
  // known: resolved statically they cost no buffer copies per iteration.
  if (policy_ != nullptr && policy_->mode == LoopMode::kAuto && uses_tensor_arrays(frame)) {
    return "it uses TensorArrays, which unroll to plain tensors when the trip count is known";
  }
  return "";
}

bool Unroller::uses_tensor_arrays(int frame) const {
  for (int m : subtree_members(frame)) {
    if (is_tensor_array_op(graph_.node(m).op())) return true;
  }
  return false;
}

void Unroller::note_element(int creator, const TensorInfo& info) {
  if (creator < 0) return;
  const std::string& name = graph_.node(creator).name();
  const auto found = array_elements_.find(name);
  if (found == array_elements_.end()) {
    array_elements_[name] = TensorInfo{info.dtype, info.shape, nullptr};
  } else if (found->second.shape != info.shape) {
    found->second.shape = {-1};
  }
}

std::string Unroller::runtime_loop_feeding(TensorRef ref) const {
  std::vector<bool> seen(graph_.size(), false);
  std::vector<int> stack{ref.node};
  while (!stack.empty()) {
    const int n = stack.back();
    stack.pop_back();
    if (seen[static_cast<size_t>(n)]) continue;
    seen[static_cast<size_t>(n)] = true;
    const Node& node = graph_.node(n);
    if (node.op() == "_FloeWhileLoop") return attr_string(node.def, "loop_name", node.name());
    for (const TensorRef& in : node.inputs) stack.push_back(in.node);
  }
  return "";
}

// Why `ref` is not a conversion-time constant: the graph inputs it depends on.
std::string Unroller::unknown_reason(TensorRef ref, const std::string& goal,
                                     std::vector<std::string>* input_names) const {
  std::vector<bool> seen(graph_.size(), false);
  std::vector<int> stack{ref.node};
  std::vector<std::string> inputs;
  while (!stack.empty() && inputs.size() < 5) {
    const int n = stack.back();
    stack.pop_back();
    if (seen[static_cast<size_t>(n)]) continue;
    seen[static_cast<size_t>(n)] = true;
    const Node& node = graph_.node(n);
    bool fed = false;
    for (const auto& [r, s] : feeds_) fed = fed || r.node == n;
    if (fed) {
      inputs.push_back(node.name());
      continue;
    }
    for (const TensorRef& in : node.inputs) stack.push_back(in.node);
  }
  if (input_names != nullptr) *input_names = inputs;
  if (inputs.empty()) return "";
  std::string list;
  for (const std::string& s : inputs) list += (list.empty() ? "'" : ", '") + s + "'";
  return ": it depends on the graph input(s) " + list + ", which must be known at conversion time to " + goal +
         " (fix with --freeze-input NAME=VALUES)";
}

std::string Unroller::const_node(const HostTensor& value, const std::string& base) {
  int tf_type = 0;
  switch (value.dtype) {
    case DType::kInt32: tf_type = kTfInt32; break;
    case DType::kInt64: tf_type = kTfInt64; break;
    case DType::kFloat32: tf_type = kTfFloat; break;
    case DType::kBool: tf_type = kTfBool; break;
    default: throw ConvertError("internal error: const_node of dtype " + std::string(dtype_name(value.dtype)));
  }
  tfproto::NodeDef def;
  def.set_op("Const");
  (*def.mutable_attr())["dtype"].set_type(static_cast<tfproto::DataType>(tf_type));
  tfproto::TensorProto* t = (*def.mutable_attr())["value"].mutable_tensor();
  t->set_dtype(static_cast<tfproto::DataType>(tf_type));
  for (int64_t d : value.shape) t->mutable_tensor_shape()->add_dim()->set_size(d);
  t->set_tensor_content(std::string(value.data.begin(), value.data.end()));
  return append(std::move(def), base);
}

std::vector<bool> Unroller::root_nodes() const {
  std::vector<bool> out(graph_.size(), false);
  for (int n : order_) out[static_cast<size_t>(n)] = frame_of_[static_cast<size_t>(n)] == 0;
  return out;
}

UnrollReport Unroller::run(Graph& target) {
  std::map<std::string, std::vector<std::string>> unsupported;
  for (int n : order_) {
    const Node& node = graph_.node(n);
    const std::string& op = node.op();
    if (is_loop_op(op) || is_merge_op(op) || is_switch_op(op) || is_tensor_array_op(op) ||
        (is_placeholder(op) && feeds_.count(TensorRef{n, 0})) || find_handler(op) != nullptr) {
      continue;
    }
    unsupported[op].push_back(node.name());
  }
  if (!unsupported.empty()) throw unsupported_ops_error(graph_.source(), unsupported);

  Instance root;
  process_items(root, 0);

  tfproto::GraphDef def;
  for (size_t n = 0; n < graph_.size(); ++n) {
    const Node& node = graph_.node(static_cast<int>(n));
    if (rewritten_[n]) {
      *def.add_node() = in_place_[n];
      continue;
    }
    tfproto::NodeDef* copy = def.add_node();
    *copy = node.def;
    copy->clear_input();  // from the edges, which earlier passes may have rewired
    for (const TensorRef& in : node.inputs) copy->add_input(in.port == 0 ? graph_.node(in.node).name() : graph_.tensor_name(in));
    for (int c : node.control_inputs) copy->add_input("^" + graph_.node(c).name());
  }
  for (tfproto::NodeDef& a : appended_) *def.add_node() = std::move(a);
  Graph rebuilt(def, graph_.source());
  for (size_t n = 0; n < graph_.size(); ++n) {
    rebuilt.node(static_cast<int>(n)).frozen_value = graph_.node(static_cast<int>(n)).frozen_value;
    rebuilt.node(static_cast<int>(n)).removed = graph_.node(static_cast<int>(n)).removed;
  }
  target = std::move(rebuilt);  // graph_ aliases target: nothing reads it after this
  return report_;
}

}  // namespace cf

bool has_loops_or_tensor_arrays(const Graph& graph, const std::vector<bool>& keep) {
  for (size_t n = 0; n < graph.size(); ++n) {
    const std::string& op = graph.node(static_cast<int>(n)).op();
    if (keep[n] && (cf::is_loop_op(op) || cf::is_tensor_array_op(op))) return true;
  }
  return false;
}

std::vector<bool> outside_loops(const Graph& graph, const std::vector<bool>& keep) {
  if (!has_loops_or_tensor_arrays(graph, keep)) return keep;
  std::vector<bool> out = cf::Unroller(graph, keep, {}).root_nodes();
  for (size_t n = 0; n < graph.size(); ++n) {
    out[n] = out[n] && keep[n] && !cf::is_tensor_array_op(graph.node(static_cast<int>(n)).op());
  }
  return out;
}

UnrollReport unroll_control_flow(Graph& graph, const std::vector<bool>& keep, const std::vector<Feed>& feeds,
                                 uint32_t max_loop_iterations, const LoopPolicy& policy) {
  if (!has_loops_or_tensor_arrays(graph, keep)) return UnrollReport();
  // A top-level loop whose condition depends on a graph input runs at run
  // time, and so does one the policy sends there: rewritten
  // (control_flow_runtime.cc), then the rest is unrolled again.
  std::vector<bool> kept = keep;
  std::vector<std::string> runtime_loops, by_choice;
  LoopPolicy local = policy;
  for (;;) {
    cf::Unroller unroller(graph, kept, feeds, &local);
    int frame = -1;
    try {
      UnrollReport report = unroller.run(graph);
      report.runtime_loops = runtime_loops;
      report.runtime_by_choice = by_choice;
      return report;
    } catch (const cf::LoopDecision& d) {
      if (!d.runtime) {
        local.unroll[d.loop] = d.reason;
        continue;
      }
      // Nested loops first (deepest first), each found again in the graph as
      // the previous rewrite left it; then the loop itself.
      std::vector<std::pair<std::string, uint32_t>> loops = d.nested;
      loops.emplace_back(unroller.frame(d.frame).name, d.trip_count);
      for (size_t i = 0; i < loops.size(); ++i) {
        const cf::Unroller current(graph, kept, feeds);
        const int frame = current.find_frame(loops[i].first);
        if (frame < 0) throw ConvertError("internal error: while loop '" + loops[i].first + "' vanished");
        const std::string why = i + 1 < loops.size() ? "nested in loop '" + d.loop + "'" : d.reason;
        runtime_loops.push_back(cf::make_runtime_loop(current, graph, kept, frame,
                                                      static_cast<int>(runtime_loops.size()), max_loop_iterations,
                                                      unroller.array_elements(), loops[i].second, why));
      }
      if (policy.mode == LoopMode::kAuto) by_choice.push_back(d.loop);
      continue;
    } catch (const ConvertError& e) {
      if (e.category() != ErrorCategory::kNeedsConstant || e.where().op != "LoopCond") {
        if (by_choice.empty()) throw;
        std::string first_line = e.what();
        throw RuntimeLoopsFailed{by_choice, first_line.substr(0, first_line.find('\n'))};
      }
      const int cond = graph.find(e.where().node);
      if (cond < 0) throw;
      frame = unroller.frame_index(cond);
      // A loop on a graph input inside other loops runs at run time as a WHILE
      // nested in its enclosing loop's WHILE, which must then run at run time
      // too (Unroller::run_loop), and so on out to the outermost loop.
    }
    runtime_loops.push_back(cf::make_runtime_loop(unroller, graph, kept, frame,
                                                  static_cast<int>(runtime_loops.size()), max_loop_iterations,
                                                  unroller.array_elements()));
  }
}

std::string UnrollReport::summary() const {
  if (!changed()) return "";
  if (loops == 0 && tensor_arrays == 0 && nodes_added == 0) {
    std::string s;
    for (const std::string& d : runtime_loops) s += "  " + d + "\n";
    return s;
  }
  std::string s = "  unrolled " + std::to_string(loops) + " while loop instance(s) (" + std::to_string(iterations) +
                  " iteration(s), " + std::to_string(nodes_added) + " node(s) added), resolved " +
                  std::to_string(tensor_arrays) + " TensorArray(s)\n";
  for (const std::string& d : details) s += "    " + d + "\n";
  for (const std::string& d : unrolled_loops) s += "  " + d + "\n";
  for (const std::string& d : runtime_loops) s += "  " + d + "\n";
  return s;
}

}  // namespace floe::conv
