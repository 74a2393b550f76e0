// SPDX-License-Identifier: Apache-2.0
// TensorArrayV3 resolution for the loop unroller. A TensorArray is a list of
// tensors threaded through the graph by its "flow" value; every op takes the
// handle and a flow and (for writes) yields a new flow. Here each flow Sym
// carries the list's state, so once sizes and indices fold to constants:
//   TensorArrayV3(size)           -> an empty list of `size` slots
//   Write(i, v) / Scatter(idx, v) -> the list with slot i = v / slots idx = rows of v (Unpack)
//   Split(v, lengths)             -> slots = consecutive pieces of v (SplitV)
//   Read(i)                       -> Identity of slot i
//   Gather(idx) / Concat          -> ExpandDims + ConcatV2 of the slots (stack / concat)
//   Size                          -> a Const
// so no TensorArray op survives, and the new nodes are ordinary ops floe lowers.
#include "converter/ir/tf_dtype.h"
#include "converter/ir/attrs.h"
#include "converter/ir/error.h"
#include "converter/passes/control_flow_internal.h"

namespace floe::conv::cf {
namespace {

// ConcatV2 lowers at most this many inputs at once; longer lists concat in chunks.
constexpr size_t kConcatChunk = 64;

void set_type(tfproto::NodeDef& def, const char* attr, int tf_type) {
  (*def.mutable_attr())[attr].set_type(static_cast<tfproto::DataType>(tf_type));
}
void set_int(tfproto::NodeDef& def, const char* attr, int64_t v) { (*def.mutable_attr())[attr].set_i(v); }

tfproto::NodeDef make_node(const std::string& op, const std::vector<std::string>& inputs) {
  tfproto::NodeDef def;
  def.set_op(op);
  for (const std::string& in : inputs) def.add_input(in);
  return def;
}

std::vector<int64_t> ints_of(const HostTensor& t) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    out.push_back(t.dtype == DType::kInt64 ? t.as<int64_t>()[i] : t.as<int32_t>()[i]);
  }
  return out;
}

class ArrayOp {
 public:
  ArrayOp(Unroller& u, Instance& inst, int n, const std::vector<const Sym*>& in)
      : u_(u), inst_(inst), n_(n), node_(u.graph().node(n)), in_(in) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw u_.error_at(n_, "floe refuses to resolve this TensorArray op statically: " + message,
                      ErrorCategory::kUnsupported)
        .with_refusals({Refusal{"TensorArray resolved statically", {{node_.op(), {node_.name()}}}}});
  }

  std::vector<int64_t> ints(size_t i, const char* what) const {
    if (i >= in_.size()) fail("expects at least " + std::to_string(i + 1) + " inputs");
    const TensorInfo& info = in_[i]->info;
    if (info.dtype != DType::kInt32 && info.dtype != DType::kInt64) {
      fail(std::string(what) + " ('" + u_.graph().tensor_name(node_.inputs[i]) + "') must be int32 or int64");
    }
    if (!info.value) {
      std::vector<std::string> inputs;
      const std::string reason = u_.unknown_reason(node_.inputs[i], "resolve the TensorArray statically", &inputs);
      throw u_.error_at(n_,
                        "floe refuses to resolve this TensorArray op statically: " + std::string(what) + " ('" +
                            u_.graph().tensor_name(node_.inputs[i]) + "') " +
                            (reason.empty() ? "must be known at conversion time to resolve the TensorArray statically"
                                            : "is not a conversion-time constant" + reason),
                        ErrorCategory::kNeedsConstant)
          .with_tensor(inputs.empty() ? u_.graph().tensor_name(node_.inputs[i]) : inputs.front());
    }
    return ints_of(*info.value);
  }

  // The list state flowing in: input `flow` is the flow, input 0 the handle.
  const TensorArrayState& state(size_t flow) const {
    if (flow >= in_.size() || !in_[flow]->array || !in_[0]->array) {
      fail("reads a TensorArray handle/flow that floe could not trace to its TensorArrayV3");
    }
    if (in_[flow]->array->id != in_[0]->array->id) fail("handle and flow belong to different TensorArrays");
    return *in_[flow]->array;
  }

  const Sym& element(const TensorArrayState& st, int64_t index) const {
    if (index < 0 || index >= static_cast<int64_t>(st.elements.size())) {
      fail("reads index " + std::to_string(index) + " of a TensorArray of size " + std::to_string(st.elements.size()));
    }
    const Sym& e = st.elements[static_cast<size_t>(index)];
    if (e.node.empty()) fail("reads index " + std::to_string(index) + " of a TensorArray before it was written");
    return e;
  }

  Sym flow_out(std::shared_ptr<const TensorArrayState> st) const {
    Sym s;
    s.node = node_.name() + inst_.suffix;  // never read as a tensor: flows are resolved
    s.info = TensorInfo{DType::kFloat32, {}, nullptr};
    s.array = std::move(st);
    return s;
  }

  // Stores `value` at `index`, growing dynamic arrays.
  void store(TensorArrayState& st, int64_t index, Sym value) const {
    if (index < 0) fail("writes index " + std::to_string(index));
    if (index >= static_cast<int64_t>(st.elements.size())) {
      if (!st.dynamic_size) {
        fail("writes index " + std::to_string(index) + " of a TensorArray of size " +
             std::to_string(st.elements.size()) + " (dynamic_size is false)");
      }
      st.elements.resize(static_cast<size_t>(index) + 1);
    }
    Sym& slot = st.elements[static_cast<size_t>(index)];
    if (!slot.node.empty()) fail("writes index " + std::to_string(index) + " of a TensorArray a second time");
    value.array = nullptr;
    u_.note_element(st.creator, value.info);
    slot = std::move(value);
  }

  // ExpandDims(e, 0) of each element then ConcatV2 along 0 (chunked), the last
  // node standing for this op. `expand` false: plain concat along axis 0.
  Sym concat(const std::vector<const Sym*>& parts, bool expand) {
    if (parts.empty()) fail("stacks or concatenates zero TensorArray elements; floe cannot size that tensor");
    const int tf_type = attr_type(node_.def, "dtype", 0);
    std::vector<int64_t> shape = parts[0]->info.shape;
    int64_t rows = 0;
    for (const Sym* p : parts) {
      const std::vector<int64_t>& s = p->info.shape;
      if (s.size() != shape.size() || (!expand && s.empty()) ||
          !std::equal(s.begin() + (expand ? 0 : 1), s.end(), shape.begin() + (expand ? 0 : 1))) {
        fail("TensorArray elements have different shapes (" + shape_to_string(shape) + " and " +
             shape_to_string(s) + ")");
      }
      rows += expand ? 1 : s[0];
    }
    if (expand) {
      shape.insert(shape.begin(), rows);
    } else {
      shape[0] = rows;
    }
    const std::string base = node_.name() + inst_.suffix;
    const std::string zero = u_.const_node(integer_tensor(DType::kInt32, {}, {0}), base + "/axis");
    std::vector<std::string> pieces;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!expand) {
        pieces.push_back(parts[i]->input());
        continue;
      }
      tfproto::NodeDef e = make_node("ExpandDims", {parts[i]->input(), zero});
      set_type(e, "T", tf_type);
      set_type(e, "Tdim", kTfInt32);
      if (parts.size() == 1) return finish(e, shape);
      pieces.push_back(u_.append(e, base + "/stack_" + std::to_string(i)));
    }
    while (pieces.size() > kConcatChunk) {
      std::vector<std::string> merged;
      for (size_t i = 0; i < pieces.size(); i += kConcatChunk) {
        const size_t end = std::min(pieces.size(), i + kConcatChunk);
        std::vector<std::string> in(pieces.begin() + static_cast<long>(i), pieces.begin() + static_cast<long>(end));
        in.push_back(zero);
        tfproto::NodeDef c = make_node("ConcatV2", in);
        set_type(c, "T", tf_type);
        set_type(c, "Tidx", kTfInt32);
        set_int(c, "N", static_cast<int64_t>(end - i));
        merged.push_back(u_.append(c, base + "/concat_" + std::to_string(i / kConcatChunk)));
      }
      pieces = std::move(merged);
    }
    if (pieces.size() == 1 && !expand) {
      tfproto::NodeDef id = make_node("Identity", pieces);
      set_type(id, "T", tf_type);
      return finish(id, shape);
    }
    std::vector<std::string> in = pieces;
    in.push_back(zero);
    tfproto::NodeDef c = make_node("ConcatV2", in);
    set_type(c, "T", tf_type);
    set_type(c, "Tidx", kTfInt32);
    set_int(c, "N", static_cast<int64_t>(pieces.size()));
    return finish(c, shape);
  }

  // `def` becomes the node standing for this op (in place at the root).
  Sym finish(const tfproto::NodeDef& def, std::vector<int64_t> shape, DType dtype = DType::kInvalid) {
    Sym s;
    s.node = u_.emit(inst_, n_, def);
    s.info.dtype = dtype == DType::kInvalid ? in_dtype() : dtype;
    s.info.shape = std::move(shape);
    return s;
  }

  DType in_dtype() const { return compute_dtype(tf_dtype_to_floe(attr_type(node_.def, "dtype", 0))); }

  Unroller& u_;
  Instance& inst_;
  const int n_;
  const Node& node_;
  const std::vector<const Sym*>& in_;
};

}  // namespace

}  // namespace floe::conv::cf

namespace floe::conv {

// What process_tensor_array below dispatches on.
const std::vector<const char*>& resolved_tensor_array_ops() {
  static const std::vector<const char*> ops = {
      "TensorArrayV3",        "TensorArrayWriteV3",  "TensorArrayScatterV3",
      "TensorArraySplitV3",   "TensorArrayReadV3",   "TensorArrayGatherV3",
      "TensorArrayConcatV3",  "TensorArraySizeV3",   "TensorArrayCloseV3"};
  return ops;
}

}  // namespace floe::conv

namespace floe::conv::cf {

void process_tensor_array(Unroller& u, Instance& inst, int n, const std::vector<const Sym*>& in, NodeSyms& out) {
  ArrayOp a(u, inst, n, in);
  const Node& node = u.graph().node(n);
  const std::string& op = node.op();
  if (op == "TensorArrayV3") {
    const std::vector<int64_t> size = a.ints(0, "the size");
    if (size.size() != 1 || size[0] < 0) a.fail("size must be a non-negative scalar");
    auto st = std::make_shared<TensorArrayState>();
    st->id = u.next_array_id();
    st->creator = n;
    st->tf_dtype = attr_type(node.def, "dtype", 0);
    st->dynamic_size = attr_bool(node.def, "dynamic_size", false);
    st->elements.resize(static_cast<size_t>(size[0]));
    Sym handle = a.flow_out(st);
    handle.info = TensorInfo{DType::kInt32, {2}, nullptr};
    out.ports = {handle, a.flow_out(st)};
    return;
  }
  if (op == "TensorArrayWriteV3") {  // (handle, index, value, flow_in) -> flow_out
    auto st = std::make_shared<TensorArrayState>(a.state(3));
    const std::vector<int64_t> index = a.ints(1, "the index");
    if (index.size() != 1) a.fail("index must be a scalar");
    a.store(*st, index[0], *in[2]);
    out.ports = {a.flow_out(st)};
    return;
  }
  if (op == "TensorArrayScatterV3") {  // (handle, indices, value, flow_in) -> flow_out
    auto st = std::make_shared<TensorArrayState>(a.state(3));
    const std::vector<int64_t> indices = a.ints(1, "the indices");
    const TensorInfo& value = in[2]->info;
    if (value.shape.empty() || value.shape[0] != static_cast<int64_t>(indices.size())) {
      a.fail("scatters a value of shape " + shape_to_string(value.shape) + " over " + std::to_string(indices.size()) +
             " indices");
    }
    tfproto::NodeDef unstack = make_node("Unpack", {in[2]->input()});
    set_type(unstack, "T", st->tf_dtype);
    set_int(unstack, "num", static_cast<int64_t>(indices.size()));
    set_int(unstack, "axis", 0);
    const std::string name = indices.empty() ? "" : u.append(unstack, node.name() + inst.suffix + "/unstack");
    for (size_t j = 0; j < indices.size(); ++j) {
      Sym e;
      e.node = name;
      e.port = static_cast<int>(j);
      e.info = TensorInfo{value.dtype, std::vector<int64_t>(value.shape.begin() + 1, value.shape.end()), nullptr};
      a.store(*st, indices[j], e);
    }
    out.ports = {a.flow_out(st)};
    return;
  }
  if (op == "TensorArraySplitV3") {  // (handle, value, lengths, flow_in) -> flow_out
    auto st = std::make_shared<TensorArrayState>(a.state(3));
    const std::vector<int64_t> lengths = a.ints(2, "the lengths");
    const TensorInfo& value = in[1]->info;
    int64_t total = 0;
    for (int64_t l : lengths) total += l;
    if (value.shape.empty() || value.shape[0] != total) {
      a.fail("splits a value of shape " + shape_to_string(value.shape) + " into lengths summing to " +
             std::to_string(total));
    }
    if (lengths.size() > st->elements.size() && !st->dynamic_size) {
      a.fail("splits into " + std::to_string(lengths.size()) + " pieces a TensorArray of size " +
             std::to_string(st->elements.size()));
    }
    const std::string base = node.name() + inst.suffix;
    const std::string sizes = u.const_node(integer_tensor(DType::kInt64, {static_cast<int64_t>(lengths.size())}, lengths),
                                           base + "/lengths");
    const std::string dim = u.const_node(integer_tensor(DType::kInt32, {}, {0}), base + "/split_dim");
    tfproto::NodeDef split = make_node("SplitV", {in[1]->input(), sizes, dim});
    set_type(split, "T", st->tf_dtype);
    set_type(split, "Tlen", kTfInt64);
    set_int(split, "num_split", static_cast<int64_t>(lengths.size()));
    const std::string name = u.append(split, base + "/split");
    for (size_t j = 0; j < lengths.size(); ++j) {
      Sym e;
      e.node = name;
      e.port = static_cast<int>(j);
      e.info.dtype = value.dtype;
      e.info.shape = value.shape;
      e.info.shape[0] = lengths[j];
      a.store(*st, static_cast<int64_t>(j), e);
    }
    out.ports = {a.flow_out(st)};
    return;
  }
  if (op == "TensorArrayReadV3") {  // (handle, index, flow_in) -> value
    const std::vector<int64_t> index = a.ints(1, "the index");
    if (index.size() != 1) a.fail("index must be a scalar");
    const Sym& e = a.element(a.state(2), index[0]);
    tfproto::NodeDef id = make_node("Identity", {e.input()});
    set_type(id, "T", attr_type(node.def, "dtype", 0));
    Sym s = e;
    s.node = u.emit(inst, n, id);
    s.port = 0;
    out.ports = {s};
    return;
  }
  if (op == "TensorArrayGatherV3") {  // (handle, indices, flow_in) -> stacked value
    const TensorArrayState& st = a.state(2);
    std::vector<const Sym*> parts;
    for (int64_t i : a.ints(1, "the indices")) parts.push_back(&a.element(st, i));
    out.ports = {a.concat(parts, true)};
    return;
  }
  if (op == "TensorArrayConcatV3") {  // (handle, flow_in) -> value, lengths
    const TensorArrayState& st = a.state(1);
    std::vector<const Sym*> parts;
    std::vector<int64_t> lengths;
    for (size_t i = 0; i < st.elements.size(); ++i) {
      parts.push_back(&a.element(st, static_cast<int64_t>(i)));
      lengths.push_back(parts.back()->info.shape.empty() ? 0 : parts.back()->info.shape[0]);
    }
    const Sym value = a.concat(parts, false);
    HostTensor l = integer_tensor(DType::kInt64, {static_cast<int64_t>(lengths.size())}, lengths);
    Sym len;
    len.node = u.const_node(l, node.name() + inst.suffix + "/lengths");
    len.info = TensorInfo::of(std::make_shared<const HostTensor>(l));
    out.ports = {value, len};
    return;
  }
  if (op == "TensorArraySizeV3") {  // (handle, flow_in) -> int32 scalar
    const TensorArrayState& st = a.state(1);
    const HostTensor size = integer_tensor(DType::kInt32, {}, {static_cast<int64_t>(st.elements.size())});
    tfproto::NodeDef def = make_node("Const", {});
    set_type(def, "dtype", kTfInt32);
    tfproto::TensorProto* t = (*def.mutable_attr())["value"].mutable_tensor();
    t->set_dtype(static_cast<tfproto::DataType>(kTfInt32));
    t->add_int_val(static_cast<int32_t>(st.elements.size()));
    Sym s;
    s.node = u.emit(inst, n, def);
    s.info = TensorInfo::of(std::make_shared<const HostTensor>(size));
    out.ports = {s};
    return;
  }
  if (op == "TensorArrayCloseV3") return;  // no outputs; nothing to release at conversion time
  a.fail("is not supported (floe resolves TensorArray V3 create/read/write/gather/scatter/concat/split/size/close)");
}

}  // namespace floe::conv::cf
