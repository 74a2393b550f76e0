// SPDX-License-Identifier: Apache-2.0
// Lowering driver (see lower_graph.h). Per node, in topological order:
//   1. infer output dtypes/shapes (handlers may compute values, e.g. Shape);
//   2. if every input is constant, fold (ops/evaluate.h: the node alone, run
//      through the runtime's reference kernels);
//   3. otherwise lower into the model being built.
#include "converter/lower/lower_graph.h"

#include <functional>
#include <map>

#include "converter/ir/attrs.h"
#include "converter/ir/error.h"
#include "converter/ir/limits.h"
#include "converter/ops/evaluate.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {

void check_supported_ops(const Graph& graph, const std::vector<bool>& keep) {
  // (Random, variable-mutating and training-only ops are refused earlier, with
  // their reasons, by passes/inference_check.)
  std::map<std::string, std::vector<std::string>> unsupported;
  for (size_t n = 0; n < graph.size(); ++n) {
    const Node& node = graph.node(static_cast<int>(n));
    if (keep[n] && find_handler(node.op()) == nullptr) unsupported[node.op()].push_back(node.name());
  }
  if (!unsupported.empty()) throw unsupported_ops_error(graph.source(), unsupported);
}

bool is_model_input_op(const std::string& op) { return op == "Placeholder" || op == "PlaceholderV2"; }
// Each WHILE op followed by its loop's ops, the condition's first, each group
// in lowering order. Valid: a loop's ops read only its variables, each other
// and values that exist before the WHILE (_FloeWhileLoop waits for every
// tensor the loop reads from outside), and nothing outside reads them.
// A WHILE nested in a loop is one of that loop's ops; its own group follows it.
static void group_loop_ops(LoweredModel& model) {
  if (model.loops.empty()) return;
  std::vector<LoweredOp> ordered;
  ordered.reserve(model.ops.size());
  std::function<void(LoweredOp&)> place = [&](LoweredOp& op) {
    const int id = op.runs_loop;
    ordered.push_back(std::move(op));
    if (id < 0) return;
    for (const bool cond : {true, false}) {
      for (LoweredOp& member : model.ops) {
        if (member.loop == id && member.loop_cond == cond) place(member);
      }
    }
  };
  for (LoweredOp& op : model.ops) {
    if (op.loop < 0) place(op);
  }
  model.ops = std::move(ordered);
}

// Each IF op followed by its then ops, then its else ops (a nested if's ops
// inside the branch its IF op belongs to), each group in lowering order. Valid
// like the loops' grouping: a branch's ops read only each other and values that
// exist before the IF (_FloeIf waits for every tensor the branches read from
// outside), and outside, only the cond's results (the branches' copies) are read.
static void group_if_ops(LoweredModel& model) {
  if (model.ifs.empty()) return;
  std::vector<std::vector<size_t>> members[2];  // [then?][id]: ops in lowering order
  members[0].resize(model.ifs.size());
  members[1].resize(model.ifs.size());
  for (size_t i = 0; i < model.ops.size(); ++i) {
    const LoweredOp& op = model.ops[i];
    if (op.if_id >= 0 && static_cast<size_t>(op.if_id) < model.ifs.size()) {
      members[op.if_then ? 1 : 0][static_cast<size_t>(op.if_id)].push_back(i);
    }
  }
  std::vector<LoweredOp> ordered;
  ordered.reserve(model.ops.size());
  std::function<void(size_t)> emit = [&](size_t i) {
    const int id = model.ops[i].runs_if;
    ordered.push_back(std::move(model.ops[i]));
    if (id < 0 || static_cast<size_t>(id) >= model.ifs.size()) return;
    for (const int side : {1, 0}) {
      for (const size_t m : members[side][static_cast<size_t>(id)]) emit(m);
    }
  };
  for (size_t i = 0; i < model.ops.size(); ++i) {
    if (model.ops[i].if_id < 0 || static_cast<size_t>(model.ops[i].if_id) >= model.ifs.size()) emit(i);
  }
  if (ordered.size() != model.ops.size()) {
    throw ConvertError("internal error: a run-time if's ops are not all reachable from its IF op");
  }
  model.ops = std::move(ordered);
}

LoweredModel lower_graph(const Graph& graph, const std::vector<bool>& keep,
                         const std::vector<Feed>& feeds, const std::vector<TensorRef>& fetches,
                         LowerStats* stats, bool fold_constants, std::vector<FoldedFakeQuant>* folded_fake_quants) {
  LowerStats local_stats;
  LowerStats& st = stats ? *stats : local_stats;
  LoweredModel model;

  std::map<TensorRef, std::pair<TensorInfo, int>> fed;
  for (const Feed& feed : feeds) {
    Value v;
    v.name = graph.tensor_name(feed.ref);
    v.dtype = feed.dtype;
    if (feed.source_dtype != feed.dtype) v.source_dtype = feed.source_dtype;
    v.shape = feed.shape;
    const int id = model.add_value(std::move(v));
    model.inputs.push_back(id);
    model.complex_inputs.push_back(feed.complex);
    TensorInfo info{feed.dtype, feed.shape, nullptr};
    info.complex = feed.complex;
    fed[feed.ref] = {std::move(info), id};
  }

  std::vector<std::vector<TensorInfo>> infos(graph.size());
  // Folded FakeQuant results by their tensor (kept alive by `infos`), matched
  // to the constant values lowered ops create from them at the end.
  std::map<const HostTensor*, FoldedFakeQuant> fake_quant_results;
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

  for (int n : topological_order(graph, keep, /*control_flow_waits=*/true)) {
    const Node& node = graph.node(n);
    // A fed placeholder is a model input already; nothing to infer or lower.
    if (fed.count(TensorRef{n, 0}) && node.def.input_size() == 0 && is_model_input_op(node.op())) {
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
    const NodeContext node_context(graph, node, inputs);
    for (size_t i = 0; i < inputs.size(); ++i) {
      // Complex values are float pairs only the spectral ops know how to read.
      if (inputs[i]->complex && !reads_complex(node.op())) {
        node_context.fail("input " + std::to_string(i) + " ('" + graph.tensor_name(node.inputs[i]) +
                          "') is complex64, which floe computes only inside FFT, IFFT, RFFT, IRFFT, Real, "
                          "Imag and ComplexAbs");
      }
    }
    check_input_types(node_context);
    std::vector<TensorInfo> outs = handler->infer(node_context);
    check_output_bytes(graph, node, outs);  // no tensor, folded or computed at run time, over the limit
    bool outputs_constant = !handler->never_fold;
    for (const TensorInfo& o : outs) outputs_constant = outputs_constant && o.value != nullptr;
    // Values known from inference alone (Identity of a constant, Shape, ...).
    if (outputs_constant && !node.inputs.empty()) ++st.folded_nodes;

    if (!outputs_constant && inputs_constant && handler->lower != nullptr && !handler->never_fold &&
        worth_folding(inputs, outs)) {
      // Fold: run this node alone on its constant inputs.
      std::vector<HostTensor> results = fold_node(graph, node, *handler, inputs, outs);
      for (size_t port = 0; port < outs.size(); ++port) {
        outs[port].value = std::make_shared<const HostTensor>(std::move(results[port]));
      }
      if (folded_fake_quants != nullptr && node.op().rfind("FakeQuantWithMinMax", 0) == 0) {
        FoldedFakeQuant f;
        f.node = node.name();
        f.op = node.op();
        f.num_bits = static_cast<int>(attr_int(node.def, "num_bits", 8));
        f.narrow_range = attr_bool(node.def, "narrow_range", false);
        if (node.op() == "FakeQuantWithMinMaxArgs") {
          f.min = {attr_float(node.def, "min", -6.0f)};
          f.max = {attr_float(node.def, "max", 6.0f)};
        } else {
          const HostTensor& lo = *inputs[1]->value;
          const HostTensor& hi = *inputs[2]->value;
          f.min.assign(lo.as<float>(), lo.as<float>() + lo.num_elements());
          f.max.assign(hi.as<float>(), hi.as<float>() + hi.num_elements());
        }
        fake_quant_results[outs[0].value.get()] = std::move(f);
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
    // Nodes of a run-time loop (passes/control_flow_runtime.cc) tag their ops.
    if (const auto* loop = find_attr(node.def, "_floe_loop"); loop != nullptr && node.op() != "_FloeWhileEnd") {
      const auto* cond = find_attr(node.def, "_floe_loop_cond");
      for (size_t i = ops_before; i < model.ops.size(); ++i) {
        model.ops[i].loop = static_cast<int>(loop->i());
        model.ops[i].loop_cond = cond != nullptr && cond->b();
      }
    }
    // Nodes of a branch of a run-time if (passes/cond_to_select.cc) tag theirs;
    // _FloeIfEnd tags its copies itself (one per branch).
    if (const auto* branch = find_attr(node.def, "_floe_if"); branch != nullptr && node.op() != "_FloeIfEnd") {
      const auto* then_side = find_attr(node.def, "_floe_if_then");
      for (size_t i = ops_before; i < model.ops.size(); ++i) {
        model.ops[i].if_id = static_cast<int>(branch->i());
        model.ops[i].if_then = then_side != nullptr && then_side->b();
      }
    }
  }
  group_loop_ops(model);
  group_if_ops(model);

  // Fetches become outputs, named as TensorFlow names them.
  for (const TensorRef& ref : fetches) {
    const std::string name = graph.tensor_name(ref);
    int id = -1;
    const auto f = fed.find(ref);
    // A complex fetch is its float32 pairs, marked complex in the model.
    const bool complex = info_of(graph.node(ref.node), ref)->complex;
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
    model.complex_outputs.push_back(complex);
  }
  if (folded_fake_quants != nullptr) {
    for (size_t v = 0; v < model.values.size(); ++v) {
      const auto it = model.values[v].constant ? fake_quant_results.find(model.values[v].constant.get())
                                               : fake_quant_results.end();
      if (it == fake_quant_results.end()) continue;
      FoldedFakeQuant f = it->second;
      f.value = static_cast<int>(v);
      folded_fake_quants->push_back(std::move(f));
    }
  }
  return model;
}

}  // namespace floe::conv
