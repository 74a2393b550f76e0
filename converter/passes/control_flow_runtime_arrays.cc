// SPDX-License-Identifier: Apache-2.0
// TensorArrays of a run-time loop (see control_flow_internal.h,
// rewrite_tensor_arrays). The unroller resolves TensorArrays symbolically, one
// element per write; a WHILE runs the same ops every iteration, so there each
// TensorArray becomes one dense tensor [size, element...] that travels where
// its float "flow" value did:
//
//   TensorArrayV3(size)          -> Fill([size, element...], 0)
//   Write(index, value, flow)    -> TensorScatterUpdate(flow, [[index]], [value])
//   Scatter(indices, value, flow)-> TensorScatterUpdate(flow, indices[:, None], value)
//   Read(index, flow)            -> GatherV2(flow, index, 0)
//   Gather(indices, flow)        -> GatherV2(flow, indices, 0)
//   Concat(flow)                 -> Reshape(flow, [-1, element[1:]...]), lengths Fill([size], element[0])
//   Size(flow)                   -> the size
//   Close                        -> removed
//
// Elements never written read as zeros (TF does the same when the element
// shape is fully defined, as it is here). An index past the buffer makes the
// gather or scatter kernel fail, so Invoke returns an error (TF fails too);
// nothing is read or written outside the buffer.
#include <algorithm>
#include <set>

#include "converter/ir/tf_dtype.h"
#include "converter/ir/attrs.h"
#include "converter/ir/error.h"
#include "converter/passes/control_flow_internal.h"

namespace floe::conv::cf {
namespace {

bool forwards(const std::string& op) {
  return is_enter_op(op) || is_exit_op(op) || is_next_iteration_op(op) || op == "Identity" || is_switch_op(op) ||
         is_merge_op(op);
}

class ArrayRewriter {
 public:
  ArrayRewriter(const Unroller& u, Graph& graph, std::vector<bool>& keep, const std::string& loop)
      : u_(u), graph_(graph), keep_(keep), loop_(loop) {}

  [[noreturn]] void refuse(int node, const std::string& why) const {
    const Node& n = graph_.node(node);
    throw u_.error_at(node, why + " (TensorArray in the run-time while loop '" + loop_ + "')",
                      ErrorCategory::kUnsupported)
        .with_refusals({Refusal{"TensorArray in a run-time while loop (" + why + ")", {{n.op(), {n.name()}}}}});
  }

  // The TensorArrayV3 a TensorArray op's handle comes from; -1 when it cannot be traced.
  int traced_creator(int n) const {
    TensorRef ref = graph_.node(n).inputs.empty() ? TensorRef{} : graph_.node(n).inputs[0];
    for (int hops = 0; ref.node >= 0 && hops < 10000; ++hops) {
      const Node& p = graph_.node(ref.node);
      if (p.op() == "TensorArrayV3") return ref.node;
      if (!forwards(p.op()) || p.inputs.empty()) break;
      ref = p.inputs[0];
    }
    return -1;
  }
  int creator_of(int n) const {
    const int c = traced_creator(n);
    if (c < 0) refuse(n, "its handle does not come from a TensorArrayV3 through Enter/Identity/Switch/Merge nodes");
    return c;
  }

  // A new node; returns its index.
  int add(const std::string& base, const std::string& op, std::vector<TensorRef> inputs,
          const std::vector<std::pair<const char*, int>>& types = {}) {
    std::string name = base;
    for (int k = 1; graph_.find(name) >= 0; ++k) name = base + "_" + std::to_string(k);
    Node node;
    node.def.set_name(name);
    node.def.set_op(op);
    for (const auto& [attr, type] : types) {
      (*node.def.mutable_attr())[attr].set_type(static_cast<tfproto::DataType>(type));
    }
    node.inputs = std::move(inputs);
    sync_def_inputs(graph_, node);
    const int index = graph_.add_node(std::move(node));
    keep_.resize(graph_.size(), false);
    keep_[static_cast<size_t>(index)] = true;
    added_.push_back(index);
    return index;
  }

  int ints(const std::string& base, const std::vector<int64_t>& values, bool scalar, int tf_type = kTfInt32) {
    const int n = add(base, "Const", {}, {{"dtype", tf_type}});
    tfproto::TensorProto* t = (*graph_.node(n).def.mutable_attr())["value"].mutable_tensor();
    t->set_dtype(static_cast<tfproto::DataType>(tf_type));
    if (!scalar) t->mutable_tensor_shape()->add_dim()->set_size(static_cast<int64_t>(values.size()));
    for (int64_t v : values) {
      if (tf_type == kTfInt64) {
        t->add_int64_val(v);
      } else {
        t->add_int_val(static_cast<int32_t>(v));
      }
    }
    return n;
  }

  int zero(const std::string& base, int tf_type, int at) {
    const int n = add(base, "Const", {}, {{"dtype", tf_type}});
    tfproto::TensorProto* t = (*graph_.node(n).def.mutable_attr())["value"].mutable_tensor();
    t->set_dtype(static_cast<tfproto::DataType>(tf_type));
    switch (tf_type) {
      case kTfFloat: t->add_float_val(0); break;
      case kTfDouble: t->add_double_val(0); break;
      case kTfHalf:
      case kTfBFloat16: t->add_half_val(0); break;
      case kTfInt32:
      case kTfInt16:
      case kTfInt8:
      case kTfUInt8:
      case kTfUInt16: t->add_int_val(0); break;
      case kTfInt64: t->add_int64_val(0); break;
      case kTfBool: t->add_bool_val(false); break;
      default: refuse(at, "its dtype cannot start as a zero buffer");
    }
    return n;
  }

  // Turns node `n` into `op` reading `inputs` (its old attrs dropped).
  void become(int n, const std::string& op, std::vector<TensorRef> inputs,
              const std::vector<std::pair<const char*, int>>& types) {
    Node& node = graph_.node(n);
    node.def.set_op(op);
    node.def.mutable_attr()->clear();
    for (const auto& [attr, type] : types) {
      (*node.def.mutable_attr())[attr].set_type(static_cast<tfproto::DataType>(type));
    }
    node.inputs = std::move(inputs);
    node.control_inputs.clear();  // (a write's colocation and ordering edges)
    sync_def_inputs(graph_, node);
  }

  void redirect(TensorRef from, TensorRef to) {
    for (size_t i = 0; i < graph_.size(); ++i) {
      Node& node = graph_.node(static_cast<int>(i));
      bool changed = false;
      for (TensorRef& in : node.inputs) {
        if (in == from) {
          in = to;
          changed = true;
        }
      }
      if (changed) sync_def_inputs(graph_, node);
    }
  }

  const Unroller& u_;
  Graph& graph_;
  std::vector<bool>& keep_;
  const std::string loop_;
  std::vector<int> added_;
};

}  // namespace

std::vector<int> rewrite_tensor_arrays(const Unroller& unroller, Graph& graph, std::vector<bool>& keep,
                                       const std::set<int>& loop_members, const std::string& loop, uint32_t bound,
                                       const std::map<std::string, TensorInfo>& array_elements, int& buffers) {
  ArrayRewriter r(unroller, graph, keep, loop);
  // The TensorArrays the loop touches, and every op of theirs (in or out of the loop).
  std::set<int> creators;
  for (int m : loop_members) {
    const std::string& op = graph.node(m).op();
    if (!is_tensor_array_op(op)) continue;
    creators.insert(op == "TensorArrayV3" ? m : r.creator_of(m));
  }
  std::vector<int> ops;
  std::map<int, int> creator_of;  // traced before the TensorArrayV3 nodes are rewritten
  for (size_t n = 0; n < graph.size(); ++n) {
    const int ni = static_cast<int>(n);
    if (!keep[n] || !is_tensor_array_op(graph.node(ni).op()) || graph.node(ni).op() == "TensorArrayV3") continue;
    const int c = r.traced_creator(ni);  // (another loop's arrays may be traced no further)
    if (creators.count(c)) {
      ops.push_back(ni);
      creator_of[ni] = c;
    }
  }
  for (int op : ops) {
    const std::string& kind = graph.node(op).op();
    if (kind != "TensorArrayWriteV3" && kind != "TensorArrayScatterV3" && kind != "TensorArrayReadV3" &&
        kind != "TensorArrayGatherV3" && kind != "TensorArrayConcatV3" && kind != "TensorArraySizeV3" &&
        kind != "TensorArrayCloseV3") {
      r.refuse(op, "floe keeps a TensorArray of a run-time loop as a dense buffer, which has no " + kind);
    }
  }

  struct Array {
    int tf_type = 0;
    bool dynamic = false;
    std::vector<int64_t> element;
    TensorRef size;
  };
  buffers = static_cast<int>(creators.size());
  std::map<int, Array> arrays;
  std::vector<TensorRef> flows;  // tensors that now carry a buffer
  for (int c : creators) {
    Array a;
    const Node& node = graph.node(c);
    a.tf_type = attr_type(node.def, "dtype", 0);
    a.dynamic = attr_bool(node.def, "dynamic_size", false);
    a.size = node.inputs.at(0);
    const auto seen = array_elements.find(node.name());
    bool known = false;
    if (seen != array_elements.end()) {
      a.element = seen->second.shape;
      known = std::none_of(a.element.begin(), a.element.end(), [](int64_t d) { return d < 0; });
    }
    if (!known && node.def.attr().count("element_shape")) {
      bool unknown_rank = false;
      a.element = attr_shape(node.def, "element_shape", &unknown_rank);
      known = !unknown_rank && std::none_of(a.element.begin(), a.element.end(), [](int64_t d) { return d < 0; });
    }
    if (!known) {
      r.refuse(c, "its element shape is not known at conversion time (no fully defined element_shape attr, and "
                  "no write whose shape floe could infer)");
    }
    arrays[c] = a;
  }

  std::set<int> in_loop;  // rewritten ops whose new helper nodes belong to the loop
  for (int op : ops) {
    if (loop_members.count(op)) in_loop.insert(op);
  }
  std::vector<int> loop_added;
  auto mark = [&](int op, size_t from) {
    if (!in_loop.count(op)) return;
    loop_added.insert(loop_added.end(), r.added_.begin() + static_cast<long>(from), r.added_.end());
  };

  // The buffers, in place of each TensorArrayV3 (its flow output becomes output 0).
  for (auto& [c, a] : arrays) {
    const std::string base = graph.node(c).name() + "/floe_buffer";
    TensorRef rows = a.size;
    if (a.dynamic) {
      // Sized for one row per iteration up to the loop's bound; a write past
      // that fails Invoke where TF would grow the array.
      const int size_node = rows.node;
      const Node& s = graph.node(size_node);
      int64_t initial = -1;
      if (s.op() == "Const") {
        const HostTensor t = attr_tensor(s.def, "value");
        if (t.num_elements() == 1 && t.dtype == DType::kInt32) initial = *t.as<int32_t>();
      }
      if (initial < 0) r.refuse(c, "it has dynamic_size and a size that is not a constant");
      rows = TensorRef{r.ints(base + "/rows", {std::max<int64_t>(initial, bound)}, true), 0};
    }
    const size_t from = r.added_.size();
    const int shape1 = r.ints(base + "/one", {1}, false);
    TensorRef dims{r.add(base + "/rows_1d", "Reshape", {rows, TensorRef{shape1, 0}}, {{"T", kTfInt32}, {"Tshape", kTfInt32}}), 0};
    if (!a.element.empty()) {
      const int element = r.ints(base + "/element_shape", a.element, false);
      const int axis = r.ints(base + "/axis", {0}, true);
      dims = TensorRef{r.add(base + "/dims", "ConcatV2", {dims, TensorRef{element, 0}, TensorRef{axis, 0}},
                             {{"T", kTfInt32}, {"Tidx", kTfInt32}}),
                       0};
      (*graph.node(dims.node).def.mutable_attr())["N"].set_i(2);
    }
    const int zero = r.zero(base + "/zero", a.tf_type, c);
    r.become(c, "Fill", {dims, TensorRef{zero, 0}}, {{"T", a.tf_type}, {"index_type", kTfInt32}});
    r.redirect(TensorRef{c, 1}, TensorRef{c, 0});
    flows.push_back(TensorRef{c, 0});
    if (loop_members.count(c)) in_loop.insert(c);
    mark(c, from);
  }

  for (int op : ops) {
    const Array& a = arrays.at(creator_of.at(op));
    const std::string kind = graph.node(op).op();
    const std::string base = graph.node(op).name() + "/floe";
    const std::vector<TensorRef> in = graph.node(op).inputs;
    const size_t from = r.added_.size();
    const bool whole = kind == "TensorArrayGatherV3" || kind == "TensorArrayConcatV3" || kind == "TensorArraySizeV3";
    if (a.dynamic && whole) {
      r.refuse(op, "it reads the whole of a dynamic_size TensorArray, whose length depends on the trip count "
                   "(floe's shapes are static; give the TensorArray a fixed size)");
    }
    if (kind == "TensorArrayWriteV3") {  // (handle, index, value, flow)
      const int shape = r.ints(base + "/index_shape", {1, 1}, false);
      const int index = r.add(base + "/index", "Reshape", {in.at(1), TensorRef{shape, 0}}, {{"T", kTfInt32}, {"Tshape", kTfInt32}});
      const int axis = r.ints(base + "/axis", {0}, true);
      const int update = r.add(base + "/update", "ExpandDims", {in.at(2), TensorRef{axis, 0}}, {{"T", a.tf_type}, {"Tdim", kTfInt32}});
      r.become(op, "TensorScatterUpdate", {in.at(3), TensorRef{index, 0}, TensorRef{update, 0}},
               {{"T", a.tf_type}, {"Tindices", kTfInt32}});
      flows.push_back(TensorRef{op, 0});
    } else if (kind == "TensorArrayScatterV3") {  // (handle, indices, value, flow)
      const int axis = r.ints(base + "/axis", {-1}, true);
      const int index = r.add(base + "/indices", "ExpandDims", {in.at(1), TensorRef{axis, 0}}, {{"T", kTfInt32}, {"Tdim", kTfInt32}});
      r.become(op, "TensorScatterUpdate", {in.at(3), TensorRef{index, 0}, in.at(2)},
               {{"T", a.tf_type}, {"Tindices", kTfInt32}});
      flows.push_back(TensorRef{op, 0});
    } else if (kind == "TensorArrayReadV3" || kind == "TensorArrayGatherV3") {  // (handle, index(es), flow)
      const int axis = r.ints(base + "/axis", {0}, true);
      r.become(op, "GatherV2", {in.at(2), in.at(1), TensorRef{axis, 0}},
               {{"Tparams", a.tf_type}, {"Tindices", kTfInt32}, {"Taxis", kTfInt32}});
      (*graph.node(op).def.mutable_attr())["batch_dims"].set_i(0);
    } else if (kind == "TensorArraySizeV3") {
      r.become(op, "Identity", {a.size}, {{"T", kTfInt32}});
    } else if (kind == "TensorArrayConcatV3") {  // (handle, flow) -> value, lengths
      if (a.element.empty()) r.refuse(op, "it concatenates scalar elements");
      std::vector<int64_t> shape{-1};
      shape.insert(shape.end(), a.element.begin() + 1, a.element.end());
      const int target = r.ints(base + "/shape", shape, false);
      const int shape1 = r.ints(base + "/one", {1}, false);
      const int rows = r.add(base + "/rows", "Reshape", {a.size, TensorRef{shape1, 0}}, {{"T", kTfInt32}, {"Tshape", kTfInt32}});
      const int length = r.ints(base + "/length", {a.element[0]}, true, kTfInt64);
      const int lengths = r.add(base + "/lengths", "Fill", {TensorRef{rows, 0}, TensorRef{length, 0}},
                                {{"T", kTfInt64}, {"index_type", kTfInt32}});
      r.become(op, "Reshape", {in.at(1), TensorRef{target, 0}}, {{"T", a.tf_type}, {"Tshape", kTfInt32}});
      r.redirect(TensorRef{op, 1}, TensorRef{lengths, 0});
    } else {  // TensorArrayCloseV3: nothing left to release
      keep[static_cast<size_t>(op)] = false;
      graph.node(op).removed = true;
      for (size_t n = 0; n < graph.size(); ++n) {
        auto& deps = graph.node(static_cast<int>(n)).control_inputs;
        deps.erase(std::remove(deps.begin(), deps.end(), op), deps.end());
      }
    }
    mark(op, from);
  }

  // The loop nodes that forward a flow now forward the buffer: their T is its dtype.
  std::set<TensorRef> seen(flows.begin(), flows.end());
  for (size_t i = 0; i < flows.size(); ++i) {
    const int tf_type = attr_type(graph.node(flows[i].node).def, "T", 0);
    for (size_t n = 0; n < graph.size(); ++n) {
      Node& node = graph.node(static_cast<int>(n));
      if (!keep[n] || !forwards(node.op())) continue;
      for (const TensorRef& in : node.inputs) {
        if (!(in == flows[i])) continue;
        (*node.def.mutable_attr())["T"].set_type(static_cast<tfproto::DataType>(tf_type));
        for (int port = 0; port < 2; ++port) {
          const TensorRef out{static_cast<int>(n), port};
          if ((port == 0 || is_switch_op(node.op())) && seen.insert(out).second) flows.push_back(out);
        }
        break;
      }
    }
  }
  return loop_added;
}

}  // namespace floe::conv::cf
