// SPDX-License-Identifier: Apache-2.0
// WHILE and IF: their called subgraphs checked (indices, recursion, nesting,
// size) and inlined at each call into floe's WHILE / IF ops.
#include "converter/frontend/tflite/importer.h"

#include <algorithm>

#include "converter/ir/limits.h"

namespace floe::conv::tflite_detail {

int Importer::called_subgraph(int32_t index, const char* role) const {
  const uint32_t count = model_->subgraphs()->size();
  if (index < 0 || static_cast<uint32_t>(index) >= count) {
    fail_op(std::string("names subgraph ") + std::to_string(index) + " as its " + role + "; the model has " +
            std::to_string(count) + " subgraphs");
  }
  if (index == 0) fail_op(std::string("calls subgraph 0, the main graph, as its ") + role + " (recursion)");
  return index;
}

void Importer::walk_calls(int index, int depth, std::vector<int>& state, std::vector<uint64_t>& inlined_ops,
                          std::vector<int>& height, std::map<std::string, std::vector<std::string>>& unsupported) {
  const size_t at = static_cast<size_t>(index);
  state[at] = 1;
  const fb::SubGraph* graph = model_->subgraphs()->Get(static_cast<uint32_t>(index));
  const auto* ops = graph->operators();
  const uint32_t op_count = ops ? ops->size() : 0;
  uint64_t total = op_count;
  for (uint32_t i = 0; i < op_count; ++i) {
    graph_ = graph;  // a callee's walk moved them
    subgraph_ = index;
    op_index_ = static_cast<int>(i);
    const fb::Operator* op = ops->Get(i);
    const int32_t code = code_of(op);
    const std::string reason = unsupported_reason(op, code);
    out_.op_counts[tflite_op_name(code)]++;
    if (!reason.empty()) {
      std::string node = (index == 0 ? "" : "subgraph " + std::to_string(index) + " ") + "#" + std::to_string(i);
      if (op->outputs() && op->outputs()->size() > 0) {
        const int32_t t = op->outputs()->Get(0);
        if (t >= 0 && graph->tensors() && static_cast<uint32_t>(t) < graph->tensors()->size() &&
            graph->tensors()->Get(static_cast<uint32_t>(t))->name()) {
          node += " '" + short_name(graph->tensors()->Get(static_cast<uint32_t>(t))->name()->str()) + "'";
        }
      }
      unsupported[reason].push_back(node);
      continue;
    }
    if (code != kWhile && code != kIf && code != kCallOnce) continue;
    enter_op(i, code);
    int callees[2];
    const char* roles[2];
    int callee_count = 2;
    if (code == kCallOnce) {
      const auto* o = op->builtin_options_as_CallOnceOptions();
      if (o == nullptr) fail_op("CallOnceOptions are missing");
      callees[0] = called_subgraph(o->init_subgraph_index(), "init");
      roles[0] = "init";
      callee_count = 1;
    } else if (code == kWhile) {
      const auto* o = op->builtin_options_as_WhileOptions();
      if (o == nullptr) fail_op("WhileOptions are missing");
      callees[0] = called_subgraph(o->cond_subgraph_index(), "condition");
      callees[1] = called_subgraph(o->body_subgraph_index(), "body");
      roles[0] = "condition";
      roles[1] = "body";
    } else {
      const auto* o = op->builtin_options_as_IfOptions();
      if (o == nullptr) fail_op("IfOptions are missing");
      callees[0] = called_subgraph(o->then_subgraph_index(), "then branch");
      callees[1] = called_subgraph(o->else_subgraph_index(), "else branch");
      roles[0] = "then branch";
      roles[1] = "else branch";
    }
    for (int k = 0; k < callee_count; ++k) {
      const size_t callee = static_cast<size_t>(callees[k]);
      if (state[callee] == 1) {
        fail_op(std::string("calls subgraph ") + std::to_string(callees[k]) + " as its " + roles[k] +
                ", which is already running: recursion, which floe cannot inline");
      }
      // The runtime keeps one frame per enclosing WHILE / IF (kMaxLoopNesting).
      if (depth + 1 > static_cast<int>(kMaxLoopNesting) ||
          (state[callee] == 2 && depth + 1 + height[callee] > static_cast<int>(kMaxLoopNesting))) {
        fail_op("nests WHILE / IF ops more than " + std::to_string(kMaxLoopNesting) +
                " deep, the most the runtime runs");
      }
      if (state[callee] == 0) {
        walk_calls(callees[k], depth + 1, state, inlined_ops, height, unsupported);
        graph_ = graph;
        subgraph_ = index;
        enter_op(i, code);
      }
      height[at] = std::max(height[at], 1 + height[callee]);
      total = std::min<uint64_t>(total + inlined_ops[callee], static_cast<uint64_t>(kMaxModelOps) + 1);
    }
  }
  inlined_ops[at] = total;
  if (total > static_cast<uint64_t>(kMaxModelOps)) {
    fail("subgraph " + std::to_string(index) + " with the subgraphs it calls inlined holds over " +
             std::to_string(kMaxModelOps) + " operators, more than a floe model may",
         graph);
  }
  state[at] = 2;
}

std::vector<int> Importer::inline_subgraph(int index, const std::vector<int>& args, const std::string& role,
                                           const std::vector<int>& handles, std::vector<int>* result_handles) {
  const fb::SubGraph* graph = model_->subgraphs()->Get(static_cast<uint32_t>(index));
  const std::string callee = role + " subgraph " + std::to_string(index);
  const auto* inputs = graph->inputs();
  const uint32_t count = inputs ? inputs->size() : 0;
  if (count != args.size()) {
    fail_op(callee + " takes " + std::to_string(count) + " inputs, the " + op_name_ + " passes " +
            std::to_string(args.size()));
  }
  // Its input tensors stand for the caller's values: they must be the same tensors.
  const auto* tensors = graph->tensors();
  const uint32_t tensor_count = tensors ? tensors->size() : 0;
  std::vector<int> bound(tensor_count, -1), bound_handles(tensor_count, -1);
  for (uint32_t k = 0; k < count; ++k) {
    const int32_t t = inputs->Get(k);
    const std::string what = callee + " input " + std::to_string(k);
    if (t < 0 || static_cast<uint32_t>(t) >= tensor_count) {
      fail_op(what + " is tensor index " + std::to_string(t) + ", out of range (" + std::to_string(tensor_count) +
              " tensors)");
    }
    if (bound[static_cast<size_t>(t)] >= 0 || bound_handles[static_cast<size_t>(t)] >= 0) {
      fail_op(what + " is tensor " + std::to_string(t) + " again");
    }
    const fb::Tensor* tensor = tensors->Get(static_cast<uint32_t>(t));
    const std::string name = tensor->name() ? tensor->name()->str() : "tensor_" + std::to_string(t);
    const int handle = k < handles.size() ? handles[k] : -1;
    if ((tensor->type() == kTypeResource) != (handle >= 0)) {
      fail_op(what + " ('" + short_name(name) + "') is " + (handle >= 0 ? "not " : "") +
              "a resource handle, called with " + (handle >= 0 ? "one" : "a value"));
    }
    if (handle >= 0) {
      bound_handles[static_cast<size_t>(t)] = handle;
      continue;
    }
    const Value& arg = value(args[k]);
    std::vector<int64_t> shape;
    if (tensor->shape() != nullptr) {
      for (const int32_t d : *tensor->shape()) {
        if (d < 0) fail_op(what + " ('" + short_name(name) + "') has a dynamic dimension; floe needs static shapes");
        shape.push_back(d);
      }
    }
    const DType dtype = tflite_dtype(tensor->type());
    if (dtype != arg.dtype || shape != arg.shape) {
      fail_op(what + " ('" + short_name(name) + "') is " +
              (dtype == DType::kInvalid ? "TFLite type " + std::to_string(tensor->type()) : dtype_name(dtype)) +
              " " + shape_to_string(shape) + ", called with " + dtype_name(arg.dtype) + " " +
              shape_to_string(arg.shape) + " ('" + short_name(arg.name) +
              "'): floe inlines a called subgraph only with the dtypes and shapes it declares");
    }
    const auto* buffers = model_->buffers();
    if (buffers != nullptr && tensor->buffer() < buffers->size()) {
      const fb::Buffer* buffer = buffers->Get(tensor->buffer());
      if ((buffer->data() != nullptr && buffer->data()->size() > 0) || buffer->offset() > 1) {
        fail_op(what + " ('" + short_name(name) + "') is a constant");
      }
    }
    Quantization q = read_quantization(tensor, shape, name);
    if (dtype != DType::kInt8 && dtype != DType::kUInt8 && dtype != DType::kInt16 && dtype != DType::kInt32) q = {};
    if (q.scale != arg.quantization.scale || q.zero_point != arg.quantization.zero_point) {
      fail_op(what + " ('" + short_name(name) + "') differs from its argument '" + short_name(arg.name) +
              "' in quantization (scale, zero point)");
    }
    bound[static_cast<size_t>(t)] = args[k];
  }

  // Its ops, in the callee's own tensor space.
  const fb::SubGraph* saved_graph = graph_;
  const int saved_subgraph = subgraph_;
  std::string saved_prefix = std::move(prefix_);
  std::vector<int> saved_values = std::move(values_);
  std::vector<int> saved_handles = std::move(handles_);
  const fb::Operator* saved_op = op_;
  const int saved_index = op_index_;
  std::string saved_op_name = op_name_, saved_node = node_name_;
  graph_ = graph;
  subgraph_ = index;
  prefix_ = node_name_ + "/" + role + "/";
  values_ = std::move(bound);
  handles_ = std::move(bound_handles);
  lower_ops();
  std::vector<int> results;
  if (result_handles != nullptr) result_handles->clear();
  const auto* outputs = graph->outputs();
  for (uint32_t k = 0; outputs && k < outputs->size(); ++k) {
    const int32_t t = outputs->Get(k);
    if (t < 0 || static_cast<uint32_t>(t) >= tensor_count) {
      fail("subgraph " + std::to_string(index) + " output " + std::to_string(k) + " is tensor index " +
               std::to_string(t) + ", out of range (" + std::to_string(tensor_count) + " tensors)",
           graph);
    }
    if (tensors->Get(static_cast<uint32_t>(t))->type() == kTypeResource) {
      if (handles_[static_cast<size_t>(t)] < 0) {
        fail("subgraph " + std::to_string(index) + " output " + std::to_string(k) +
                 " is a resource handle no VAR_HANDLE or input gave",
             graph);
      }
      results.push_back(-1);
      if (result_handles != nullptr) result_handles->push_back(handles_[static_cast<size_t>(t)]);
      continue;
    }
    if (result_handles != nullptr) result_handles->push_back(-1);
    const int id = value_of(t);
    if (!written_[static_cast<size_t>(id)]) {
      fail("subgraph " + std::to_string(index) + " output tensor '" + short_name(value(id).name) +
               "' is written by no operator",
           graph);
    }
    results.push_back(id);
  }
  graph_ = saved_graph;
  subgraph_ = saved_subgraph;
  prefix_ = std::move(saved_prefix);
  values_ = std::move(saved_values);
  handles_ = std::move(saved_handles);
  op_ = saved_op;
  op_index_ = saved_index;
  op_name_ = std::move(saved_op_name);
  node_name_ = std::move(saved_node);
  return results;
}

// WHILE(v...) with cond(v...) -> bool and body(v...) -> v'...: floe's WHILE
// op (initial values -> variables = the WHILE's outputs), the condition's ops
// then the body's on the variables, and the body's results as next values.
void Importer::lower_while() {
  const auto* o = op_->builtin_options_as_WhileOptions();
  if (o == nullptr) fail_op("WhileOptions are missing");
  const int cond_index = called_subgraph(o->cond_subgraph_index(), "condition");
  const int body_index = called_subgraph(o->body_subgraph_index(), "body");
  const uint32_t n = op_->inputs() ? op_->inputs()->size() : 0;
  const uint32_t outs = op_->outputs() ? op_->outputs()->size() : 0;
  if (outs != n) {
    fail_op("has " + std::to_string(n) + " inputs and " + std::to_string(outs) +
            " outputs; a WHILE has one output per loop variable");
  }
  // A resource handle passes through the loop unchanged (a tf.while_loop
  // updating a tf.Variable): condition, body and the WHILE's output name the
  // same variable. The other positions are floe's loop variables.
  std::vector<int> handles(n, -1), args(n, -1);  // by position
  std::vector<int> inits, vars;                  // the loop variables
  for (uint32_t k = 0; k < n; ++k) {
    if (is_handle(static_cast<int>(k))) {
      handles[k] = handle_input(static_cast<int>(k));
      const int32_t t = op_->outputs()->Get(k);
      if (tflite_tensor(t, "output")->type() != kTypeResource) {
        fail_op("output " + std::to_string(k) + " is no resource handle; its input is one");
      }
      handles_[static_cast<size_t>(t)] = handles[k];
      continue;
    }
    const int init = input(static_cast<int>(k));
    const int var = output(static_cast<int>(k));
    if (std::find(vars.begin(), vars.end(), var) != vars.end()) fail_op("writes one tensor as two loop variables");
    expect_dtype(var, value(init).dtype, "output");
    expect_shape(var, value(init).shape);
    expect_same_quantization(var, value(init), "output " + std::to_string(k));
    inits.push_back(init);
    vars.push_back(var);
    args[k] = var;
  }
  // A .tflite WHILE has no bound (TFLite runs it until its condition is
  // false) and fixed-shape variables (checked above): --max-loop-iterations
  // adds one as a watchdog.
  const bool bounded = options_.max_loop_iterations != 0;
  const int id = static_cast<int>(out_.model.loops.size());
  RuntimeLoop loop;
  loop.name = node_name_;
  loop.max_iterations = bounded ? options_.max_loop_iterations : kUnboundedLoopIterations;
  loop.bound_source = bounded ? "--max-loop-iterations" : "no bound";
  out_.model.loops.push_back(loop);
  // Outer loops and conds are listed before the ones they hold.
  out_.control_flow.push_back("loop '" + node_name_ + "': run-time WHILE, " +
                              (bounded ? "bound " + std::to_string(options_.max_loop_iterations) +
                                             " (--max-loop-iterations)"
                                       : std::string("no bound")) +
                              "; condition subgraph " + std::to_string(cond_index) + ", body subgraph " +
                              std::to_string(body_index) + " inlined");
  const size_t while_at = out_.model.ops.size();
  add_op(schema::OpCode::WHILE, inits, vars, wrap(schema::WhileOptionsT{}));
  out_.model.ops.back().runs_loop = id;

  const int saved_loop = loop_;
  const bool saved_cond = loop_cond_;
  loop_ = id;
  loop_cond_ = true;
  std::vector<int> returned_handles;
  const std::vector<int> cond = inline_subgraph(cond_index, args, "cond", handles, &returned_handles);
  expect_no_handles(returned_handles, cond_index, "condition");
  if (cond.size() != 1 || value(cond[0]).dtype != DType::kBool || value(cond[0]).byte_size() != 1) {
    fail_op("condition subgraph " + std::to_string(cond_index) + " must return one bool, returns " +
            (cond.size() == 1 ? std::string(dtype_name(value(cond[0]).dtype)) + " " +
                                    shape_to_string(value(cond[0]).shape)
                              : std::to_string(cond.size()) + " values"));
  }
  loop_cond_ = false;
  const std::vector<int> results = inline_subgraph(body_index, args, "body", handles, &returned_handles);
  if (results.size() != n) {
    fail_op("body subgraph " + std::to_string(body_index) + " returns " + std::to_string(results.size()) +
            " values for " + std::to_string(n) + " loop variables");
  }
  std::vector<int> next;  // the loop variables' next values
  for (uint32_t k = 0; k < n; ++k) {
    if (returned_handles[k] != handles[k]) {
      fail_unsupported("body subgraph " + std::to_string(body_index) + " returns " +
                       (returned_handles[k] >= 0 ? "a resource handle" : "a value") + " as loop variable " +
                       std::to_string(k) + ", which enters as " + (handles[k] >= 0 ? "a handle" : "a value") +
                       "; floe passes a variable's handle through a loop unchanged");
    }
    if (handles[k] < 0) next.push_back(results[k]);
  }
  for (uint32_t k = 0; k < vars.size(); ++k) {
    const Value& var = value(vars[k]);
    const Value& v = value(next[k]);
    if (v.dtype != var.dtype || v.shape != var.shape) {
      fail_op("body subgraph " + std::to_string(body_index) + " returns loop variable " + std::to_string(k) + " as " +
              dtype_name(v.dtype) + " " + shape_to_string(v.shape) + ", it enters as " + dtype_name(var.dtype) + " " +
              shape_to_string(var.shape) + ": floe runs loops with fixed dtypes and shapes");
    }
    expect_same_quantization(next[k], var, "body result " + std::to_string(k));
    // The runtime copies next values into the variables in order: a variable
    // passed on to another position is copied first, or it would be overwritten.
    const auto j = std::find(vars.begin(), vars.end(), next[k]);
    if (j != vars.end() && static_cast<uint32_t>(j - vars.begin()) != k) {
      const int copy = derived(var, var.shape, "next" + std::to_string(k));
      add_op(schema::OpCode::RESHAPE, {next[k]}, {copy});
      next[k] = copy;
    }
  }
  loop_ = saved_loop;
  loop_cond_ = saved_cond;
  LoweredOp& w = out_.model.ops[while_at];
  w.inputs.insert(w.inputs.end(), next.begin(), next.end());
  w.inputs.push_back(cond[0]);
}

// IF(p, a...) with then(a...) -> r... and else(a...) -> r...: floe's IF op on
// p, each branch's ops, and each branch ending with copies of its results into
// the IF's outputs.
void Importer::lower_if() {
  const auto* o = op_->builtin_options_as_IfOptions();
  if (o == nullptr) fail_op("IfOptions are missing");
  const int branches[2] = {called_subgraph(o->then_subgraph_index(), "then branch"),
                           called_subgraph(o->else_subgraph_index(), "else branch")};
  const int pred = input(0);
  if (value(pred).dtype != DType::kBool || value(pred).byte_size() != 1) {
    fail_op("the condition '" + short_name(value(pred).name) + "' must be one bool, is " +
            dtype_name(value(pred).dtype) + " " + shape_to_string(value(pred).shape));
  }
  // Resource handles pass into the branches as handles: both name the same variables.
  std::vector<int> args, handles, results;
  for (uint32_t k = 1; k < op_->inputs()->size(); ++k) {
    const bool handle = is_handle(static_cast<int>(k));
    args.push_back(handle ? -1 : input(static_cast<int>(k)));
    handles.push_back(handle ? handle_input(static_cast<int>(k)) : -1);
  }
  const uint32_t outs = op_->outputs() ? op_->outputs()->size() : 0;
  for (uint32_t k = 0; k < outs; ++k) {
    const int r = output(static_cast<int>(k));
    if (std::find(results.begin(), results.end(), r) != results.end()) fail_op("writes one tensor as two results");
    results.push_back(r);
  }
  const int id = static_cast<int>(out_.model.ifs.size());
  out_.model.ifs.push_back(node_name_);
  out_.control_flow.push_back("cond '" + node_name_ + "': run-time IF, only the taken branch runs; then subgraph " +
                              std::to_string(branches[0]) + ", else subgraph " + std::to_string(branches[1]) +
                              " inlined");

  add_op(schema::OpCode::IF, {pred}, {}, wrap(schema::IfOptionsT{}));
  out_.model.ops.back().runs_if = id;
  const int saved_if = if_id_;
  const bool saved_then = if_then_;
  for (const bool then_side : {true, false}) {
    const int index = branches[then_side ? 0 : 1];
    if_id_ = id;
    if_then_ = then_side;
    std::vector<int> returned_handles;
    const std::vector<int> got =
        inline_subgraph(index, args, then_side ? "then" : "else", handles, &returned_handles);
    expect_no_handles(returned_handles, index, then_side ? "then branch" : "else branch");
    if (got.size() != results.size()) {
      fail_op(std::string(then_side ? "then" : "else") + " subgraph " + std::to_string(index) + " returns " +
              std::to_string(got.size()) + " values for " + std::to_string(results.size()) + " outputs");
    }
    for (size_t k = 0; k < got.size(); ++k) {
      const Value& r = value(results[k]);
      const Value& v = value(got[k]);
      if (v.dtype != r.dtype || v.shape != r.shape) {
        fail_op(std::string(then_side ? "then" : "else") + " subgraph " + std::to_string(index) + " returns " +
                dtype_name(v.dtype) + " " + shape_to_string(v.shape) + " for output " + std::to_string(k) + " ('" +
                short_name(r.name) + "', " + dtype_name(r.dtype) + " " + shape_to_string(r.shape) + ")");
      }
      expect_same_quantization(got[k], r, "branch result " + std::to_string(k));
      add_op(schema::OpCode::RESHAPE, {got[k]}, {results[k]});
    }
  }
  if_id_ = saved_if;
  if_then_ = saved_then;
}

void Importer::expect_no_handles(const std::vector<int>& result_handles, int index, const char* role) const {
  for (size_t k = 0; k < result_handles.size(); ++k) {
    if (result_handles[k] >= 0) {
      fail_unsupported(std::string(role) + " subgraph " + std::to_string(index) + " returns a resource handle (output " +
                       std::to_string(k) + "); floe passes handles into called subgraphs, and through WHILE loops");
    }
  }
}


}  // namespace floe::conv::tflite_detail
