// SPDX-License-Identifier: Apache-2.0
// Lowering driver (see lower_graph.h). Per node, in topological order:
//   1. infer output dtypes/shapes (handlers may compute values, e.g. Shape);
//   2. if every input is constant, fold: lower into a scratch model and run it
//      through the runtime's reference kernels;
//   3. otherwise lower into the model being built.
#include "converter/lower/lower_graph.h"

#include <map>

#include "converter/ir/error.h"
#include "converter/lower/op_registry.h"
#include "converter/lower/run_lowered.h"
#include "runtime/kernels/reference/unary_ops.h"

namespace floe::conv {
namespace {

std::vector<int> topological_order(const Graph& graph, const std::vector<bool>& keep) {
  std::vector<int> pending(graph.size(), 0);
  std::vector<std::vector<int>> users(graph.size());
  for (size_t n = 0; n < graph.size(); ++n) {
    if (!keep[n]) continue;
    for (const TensorRef& in : graph.node(static_cast<int>(n)).inputs) {
      if (keep[static_cast<size_t>(in.node)]) {
        ++pending[n];
        users[static_cast<size_t>(in.node)].push_back(static_cast<int>(n));
      }
    }
  }
  std::vector<int> order;
  for (size_t n = 0; n < graph.size(); ++n) {
    if (keep[n] && pending[n] == 0) order.push_back(static_cast<int>(n));
  }
  for (size_t i = 0; i < order.size(); ++i) {
    for (int user : users[static_cast<size_t>(order[i])]) {
      if (--pending[static_cast<size_t>(user)] == 0) order.push_back(user);
    }
  }
  for (size_t n = 0; n < graph.size(); ++n) {
    if (keep[n] && pending[n] > 0) {
      const Node& node = graph.node(static_cast<int>(n));
      throw ConvertError(graph.source() + ": node '" + node.name() + "' (op " + node.op() +
                         ") is on a cycle; TF1 while loops are not supported yet");
    }
  }
  return order;
}


// ---- narrow dtypes: widened at the op boundary ---------------------------------
// float16/bfloat16 are computed in float32, int8/int16/uint8/uint16 in int32:
// the driver casts each narrow input to its wide type (constants at conversion
// time, through the same Cast kernel), the handler lowers a wide op, and each
// narrow output is cast back. Exact for integer arithmetic (two's-complement
// wrap-around survives the round trip) and TF-like for half floats (each op's
// result is rounded to the narrow type, as TF's CPU kernels do).
bool is_narrow(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kInt8 || t == DType::kInt16 ||
         t == DType::kUInt8 || t == DType::kUInt16;
}
DType widened(DType t) {
  if (t == DType::kFloat16 || t == DType::kBFloat16) return DType::kFloat32;
  return is_narrow(t) ? DType::kInt32 : t;
}

HostTensor cast_host(const HostTensor& in, DType to) {
  HostTensor out;
  out.dtype = to;
  out.shape = in.shape;
  out.data.resize(static_cast<size_t>(in.num_elements()) * dtype_size(to));
  std::vector<int32_t> dims(in.shape.begin(), in.shape.end());
  const Shape shape{dims.data(), static_cast<int32_t>(dims.size())};
  ref::cast(in.dtype, to, {In<void>{in.data.data(), shape}, Out<void>{out.data.data(), shape}});
  return out;
}

struct Bridge {
  std::vector<TensorInfo> inputs;   // widened copies
  std::vector<const TensorInfo*> input_ptrs;
  std::vector<TensorInfo> outputs;  // widened copies
  bool active = false;
};

Bridge make_bridge(const std::vector<const TensorInfo*>& inputs, const std::vector<TensorInfo>& outs) {
  Bridge b;
  for (const TensorInfo* in : inputs) b.active = b.active || is_narrow(in->dtype);
  for (const TensorInfo& o : outs) b.active = b.active || is_narrow(o.dtype);
  if (!b.active) return b;
  for (const TensorInfo* in : inputs) {
    TensorInfo w = *in;
    if (is_narrow(w.dtype)) {
      w.dtype = widened(w.dtype);
      if (w.value) w.value = std::make_shared<const HostTensor>(cast_host(*w.value, w.dtype));
    }
    b.inputs.push_back(std::move(w));
  }
  for (const TensorInfo& w : b.inputs) b.input_ptrs.push_back(&w);
  for (TensorInfo o : outs) {
    o.dtype = widened(o.dtype);
    o.value = nullptr;
    b.outputs.push_back(std::move(o));
  }
  return b;
}

// Lowers `node` into `model` through the bridge when needed; returns the output
// value ids (narrow outputs are the Cast results).
std::vector<int> lower_node(const Graph& graph, const Node& node, const OpHandler& handler,
                            const std::vector<const TensorInfo*>& inputs, const std::vector<TensorInfo>& outs,
                            LoweredModel& model, std::vector<int> input_values) {
  Bridge bridge = make_bridge(inputs, outs);
  if (!bridge.active) {
    LowerContext ctx(graph, node, inputs, outs, model, std::move(input_values));
    handler.lower(ctx);
    return ctx.output_values();
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!is_narrow(inputs[i]->dtype) || inputs[i]->value || input_values[i] < 0) continue;
    Value wide;
    wide.name = model.values[static_cast<size_t>(input_values[i])].name + "/widened";
    wide.dtype = widened(inputs[i]->dtype);
    wide.shape = inputs[i]->shape;
    const int id = model.add_value(std::move(wide));
    LoweredOp cast;
    cast.opcode = schema::OpCode::CAST;
    cast.inputs = {input_values[i]};
    cast.outputs = {id};
    cast.node_name = node.name();
    model.ops.push_back(std::move(cast));
    input_values[i] = id;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i]->value && is_narrow(inputs[i]->dtype)) input_values[i] = -1;  // widened constant
  }
  LowerContext ctx(graph, node, bridge.input_ptrs, bridge.outputs, model, std::move(input_values));
  handler.lower(ctx);
  std::vector<int> result = ctx.output_values();
  for (size_t port = 0; port < outs.size(); ++port) {
    if (!is_narrow(outs[port].dtype) || result[port] < 0) continue;
    const std::string name = node.name() + ":" + std::to_string(port);
    Value& wide = model.values[static_cast<size_t>(result[port])];
    if (wide.name == name) wide.name = name + "/wide";
    Value narrow;
    narrow.name = name;
    narrow.dtype = outs[port].dtype;
    narrow.shape = outs[port].shape;
    const int id = model.add_value(std::move(narrow));
    LoweredOp cast;
    cast.opcode = schema::OpCode::CAST;
    cast.inputs = {result[port]};
    cast.outputs = {id};
    cast.node_name = node.name();
    model.ops.push_back(std::move(cast));
    result[port] = id;
  }
  return result;
}

}  // namespace

void check_supported_ops(const Graph& graph, const std::vector<bool>& keep) {
  // (Random, variable-mutating and training-only ops are refused earlier, with
  // their reasons, by passes/inference_check.)
  std::map<std::string, std::vector<std::string>> unsupported;
  size_t count = 0;
  for (size_t n = 0; n < graph.size(); ++n) {
    const Node& node = graph.node(static_cast<int>(n));
    if (keep[n] && find_handler(node.op()) == nullptr) {
      unsupported[node.op()].push_back(node.name());
      ++count;
    }
  }
  if (unsupported.empty()) return;
  std::string message = graph.source() + ": " + std::to_string(count) +
                        " node(s) use ops floe does not support:";
  for (const auto& [op, nodes] : unsupported) {
    message += "\n  " + op + " x" + std::to_string(nodes.size()) + ": ";
    for (size_t i = 0; i < nodes.size() && i < 5; ++i) message += (i ? ", " : "") + nodes[i];
    if (nodes.size() > 5) message += ", ...";
  }
  throw ConvertError(message);
}

LoweredModel lower_graph(const Graph& graph, const std::vector<bool>& keep,
                         const std::vector<Feed>& feeds, const std::vector<TensorRef>& fetches,
                         LowerStats* stats, bool fold_constants) {
  LowerStats local_stats;
  LowerStats& st = stats ? *stats : local_stats;
  LoweredModel model;

  std::map<TensorRef, std::pair<TensorInfo, int>> fed;
  for (const Feed& feed : feeds) {
    Value v;
    v.name = graph.tensor_name(feed.ref);
    v.dtype = feed.dtype;
    v.shape = feed.shape;
    const int id = model.add_value(std::move(v));
    model.inputs.push_back(id);
    fed[feed.ref] = {TensorInfo{feed.dtype, feed.shape, nullptr}, id};
  }

  std::vector<std::vector<TensorInfo>> infos(graph.size());
  std::vector<std::vector<int>> values(graph.size());
  auto info_of = [&](const Node& user, const TensorRef& ref) -> const TensorInfo* {
    const auto f = fed.find(ref);
    if (f != fed.end()) return &f->second.first;
    const auto& outs = infos[static_cast<size_t>(ref.node)];
    if (ref.port < 0 || ref.port >= static_cast<int>(outs.size())) {
      throw ConvertError(graph.source() + ": node '" + user.name() + "' reads '" +
                         graph.tensor_name(ref) + "', but that node has only " +
                         std::to_string(outs.size()) + " output(s)");
    }
    return &outs[static_cast<size_t>(ref.port)];
  };

  for (int n : topological_order(graph, keep)) {
    const Node& node = graph.node(n);
    // A fed placeholder is a model input already; nothing to infer or lower.
    if (fed.count(TensorRef{n, 0}) && node.def.input_size() == 0 &&
        (node.op() == "Placeholder" || node.op() == "PlaceholderV2")) {
      continue;
    }
    const OpHandler* handler = find_handler(node.op());
    if (handler == nullptr) check_supported_ops(graph, keep);  // throws the full list
    std::vector<const TensorInfo*> inputs;
    bool inputs_constant = !node.inputs.empty();
    for (const TensorRef& in : node.inputs) {
      inputs.push_back(info_of(node, in));
      inputs_constant = inputs_constant && inputs.back()->value != nullptr;
    }
    std::vector<TensorInfo> outs = handler->infer(NodeContext(graph, node, inputs));
    bool outputs_constant = true;
    for (const TensorInfo& o : outs) outputs_constant = outputs_constant && o.value != nullptr;
    // Values known from inference alone (Identity of a constant, Shape, ...).
    if (outputs_constant && !node.inputs.empty()) ++st.folded_nodes;

    if (!outputs_constant && inputs_constant && handler->lower != nullptr) {
      // Fold: run this node alone on its constant inputs.
      LoweredModel scratch;
      const std::vector<int> produced =
          lower_node(graph, node, *handler, inputs, outs, scratch, std::vector<int>(inputs.size(), -1));
      for (size_t port = 0; port < outs.size(); ++port) {
        int id = produced[port];
        if (id < 0) {  // a port the handler never touched: materialize it as an empty op output
          throw ConvertError(graph.source() + ": node '" + node.name() + "': output " +
                             std::to_string(port) + " was not lowered");
        }
        scratch.outputs.push_back(id);
      }
      std::vector<HostTensor> results =
          run_lowered(scratch, graph.source() + ": node '" + node.name() + "' (op " + node.op() + ")");
      for (size_t port = 0; port < outs.size(); ++port) {
        outs[port].value = std::make_shared<const HostTensor>(std::move(results[port]));
      }
      outputs_constant = fold_constants;  // else lowered below as well (see lower_graph.h)
      if (fold_constants) ++st.folded_nodes;
    }
    infos[static_cast<size_t>(n)] = std::move(outs);
    if (outputs_constant) continue;

    std::vector<int> input_values;
    for (const TensorRef& in : node.inputs) {
      const auto f = fed.find(in);
      if (f != fed.end()) {
        input_values.push_back(f->second.second);
      } else {
        const auto& vs = values[static_cast<size_t>(in.node)];
        input_values.push_back(static_cast<size_t>(in.port) < vs.size() ? vs[static_cast<size_t>(in.port)] : -1);
      }
    }
    const size_t ops_before = model.ops.size();
    values[static_cast<size_t>(n)] =
        lower_node(graph, node, *handler, inputs, infos[static_cast<size_t>(n)], model, input_values);
    if (model.ops.size() == ops_before) ++st.aliased_nodes;
  }

  // Fetches become outputs, named as TensorFlow names them.
  for (const TensorRef& ref : fetches) {
    const std::string name = graph.tensor_name(ref);
    int id = -1;
    const auto f = fed.find(ref);
    if (f != fed.end()) {
      id = f->second.second;
    } else {
      const auto& vs = values[static_cast<size_t>(ref.node)];
      if (static_cast<size_t>(ref.port) < vs.size()) id = vs[static_cast<size_t>(ref.port)];
      if (id < 0) {
        const TensorInfo* info = info_of(graph.node(ref.node), ref);
        if (!info->value) throw ConvertError("internal error: fetch '" + name + "' has no value");
        Value v;
        v.name = name;
        v.dtype = info->dtype;
        v.shape = info->shape;
        v.constant = info->value;
        id = model.add_value(std::move(v));
      }
    }
    Value& value = model.values[static_cast<size_t>(id)];
    if (value.name != name) {
      bool shared = value.is_constant();
      for (int v : model.inputs) shared = shared || v == id;
      for (int v : model.outputs) shared = shared || v == id;
      if (shared) {
        // The fetch is another name for an input/constant/output: copy it.
        Value copy;
        copy.name = name;
        copy.dtype = value.dtype;
        copy.shape = value.shape;
        const int copy_id = model.add_value(std::move(copy));
        LoweredOp op;
        op.opcode = schema::OpCode::RESHAPE;
        op.inputs = {id};
        op.outputs = {copy_id};
        op.node_name = graph.node(ref.node).name();
        model.ops.push_back(std::move(op));
        id = copy_id;
      } else {
        value.name = name;
      }
    }
    model.outputs.push_back(id);
  }
  return model;
}

}  // namespace floe::conv
