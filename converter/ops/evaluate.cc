// SPDX-License-Identifier: Apache-2.0
// Lowering and conversion-time evaluation of single TF nodes (see evaluate.h).
#include "converter/ops/evaluate.h"

#include <set>

#include "converter/eval/run_lowered.h"
#include "converter/ir/error.h"
#include "converter/ir/limits.h"

namespace floe::conv {
namespace {

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

// Narrow constants are widened through the same Cast kernel the device runs.
HostTensor cast_host(const HostTensor& in, DType to) {
  LoweredModel cast;
  Value from;
  from.name = "widen";
  from.dtype = in.dtype;
  from.shape = in.shape;
  from.constant = std::make_shared<const HostTensor>(in);
  Value wide;
  wide.name = "widened";
  wide.dtype = to;
  wide.shape = in.shape;
  LoweredOp op;
  op.opcode = schema::OpCode::CAST;
  op.inputs = {cast.add_value(std::move(from))};
  op.outputs = {cast.add_value(std::move(wide))};
  cast.ops.push_back(std::move(op));
  cast.outputs = {cast.ops.back().outputs[0]};
  return std::move(run_lowered(cast, "widening a constant").at(0));
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

}  // namespace

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


std::string byte_count(double bytes) {
  return bytes < 0x1p64 ? std::to_string(static_cast<uint64_t>(bytes)) : std::string("over 2^64");
}

double tensor_bytes(const TensorInfo& t) {
  double bytes = static_cast<double>(dtype_size(t.dtype));
  for (int64_t d : t.shape) bytes *= static_cast<double>(d);
  return bytes;
}

void check_output_bytes(const Graph& graph, const Node& node, const std::vector<TensorInfo>& outs) {
  for (size_t port = 0; port < outs.size(); ++port) {
    const double bytes = tensor_bytes(outs[port]);
    if (bytes <= static_cast<double>(kMaxTensorBytes)) continue;
    std::string dims;
    for (int64_t d : outs[port].shape) dims += (dims.empty() ? "" : ",") + std::to_string(d);
    throw ConvertError(graph.source() + ": node '" + node.name() + "' (op " + node.op() + "): output " +
                           std::to_string(port) + " [" + dims + "] would take " +
                           byte_count(bytes) + " bytes, over the " +
                           std::to_string(kMaxTensorBytes) + "-byte limit of one tensor",
                       ErrorCategory::kInvalidInput);
  }
}

bool worth_folding(const std::vector<const TensorInfo*>& inputs, const std::vector<TensorInfo>& outs) {
  double in = 0, out = 0;
  for (const TensorInfo* t : inputs) in += tensor_bytes(*t);
  for (const TensorInfo& t : outs) out += tensor_bytes(t);
  return worth_folding(in, out);
}

std::vector<HostTensor> fold_node(const Graph& graph, const Node& node, const OpHandler& handler,
                                  const std::vector<const TensorInfo*>& inputs,
                                  const std::vector<TensorInfo>& outs) {
  check_output_bytes(graph, node, outs);  // before any byte of a fold is allocated
  LoweredModel scratch;
  const std::vector<int> produced =
      lower_node(graph, node, handler, inputs, outs, scratch, std::vector<int>(inputs.size(), -1));
  for (size_t port = 0; port < outs.size(); ++port) {
    if (produced[port] < 0) {
      throw ConvertError(graph.source() + ": node '" + node.name() + "': output " + std::to_string(port) +
                         " was not lowered");
    }
    scratch.outputs.push_back(produced[port]);
  }
  return run_lowered(scratch, graph.source() + ": node '" + node.name() + "' (op " + node.op() + ")");
}

std::shared_ptr<const HostTensor> evaluate_constant(const Graph& graph, const std::vector<bool>& keep,
                                                    TensorRef tensor) {
  std::vector<std::vector<TensorInfo>> infos(graph.size());
  for (int n : topological_order(graph, keep)) {
    const Node& node = graph.node(n);
    const OpHandler* handler = find_handler(node.op());
    if (handler == nullptr) {
      throw ConvertError(graph.source() + ": node '" + node.name() + "' (op " + node.op() +
                         ") cannot be evaluated at conversion time");
    }
    std::vector<const TensorInfo*> inputs;
    bool inputs_constant = !node.inputs.empty();
    for (const TensorRef& in : node.inputs) {
      const auto& produced = infos[static_cast<size_t>(in.node)];
      if (!keep[static_cast<size_t>(in.node)] || in.port < 0 || in.port >= static_cast<int>(produced.size())) {
        throw ConvertError(graph.source() + ": node '" + node.name() + "' reads '" + graph.tensor_name(in) +
                           "', which is not among the evaluated nodes");
      }
      inputs.push_back(&produced[static_cast<size_t>(in.port)]);
      inputs_constant = inputs_constant && inputs.back()->value != nullptr;
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i]->complex && !reads_complex(node.op())) {
        throw ConvertError(graph.source() + ": node '" + node.name() + "' (op " + node.op() + ") reads complex64 '" +
                           graph.tensor_name(node.inputs[i]) + "', which only the spectral ops read");
      }
    }
    std::vector<TensorInfo> outs = handler->infer(NodeContext(graph, node, inputs));
    bool outputs_constant = true;
    for (const TensorInfo& o : outs) outputs_constant = outputs_constant && o.value != nullptr;
    if (!outputs_constant && inputs_constant && handler->lower != nullptr && worth_folding(inputs, outs)) {
      std::vector<HostTensor> results = fold_node(graph, node, *handler, inputs, outs);
      for (size_t port = 0; port < outs.size(); ++port) {
        outs[port].value = std::make_shared<const HostTensor>(std::move(results[port]));
      }
    }
    infos[static_cast<size_t>(n)] = std::move(outs);
  }
  const auto& produced = infos[static_cast<size_t>(tensor.node)];
  if (tensor.port < 0 || tensor.port >= static_cast<int>(produced.size())) {
    throw ConvertError(graph.source() + ": '" + graph.tensor_name(tensor) + "' was not evaluated");
  }
  return produced[static_cast<size_t>(tensor.port)].value;
}

}  // namespace floe::conv
