// SPDX-License-Identifier: Apache-2.0
// The two nodes a run-time loop becomes (passes/control_flow_runtime.cc):
// _FloeWhileLoop lowers to the WHILE op (initial values -> loop variables) and
// records the loop; _FloeWhileEnd appends the next values and the condition to
// that op's inputs and passes the variables on (no op). Neither is ever folded: a loop variable is not a constant
// even when its initial value is.
#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

std::vector<TensorInfo> infer_while_loop(const NodeContext& ctx) {
  std::vector<TensorInfo> out;
  for (int k = 0; k < ctx.input_count(); ++k) out.push_back(TensorInfo{ctx.input(k).dtype, ctx.input(k).shape, nullptr});
  return out;
}

void lower_while_loop(LowerContext& ctx) {
  const int id = static_cast<int>(attr_int(ctx.node().def, "_floe_runs_loop"));
  std::vector<int> inits, vars;
  for (int k = 0; k < ctx.input_count(); ++k) {
    inits.push_back(ctx.input_value(k));
    vars.push_back(ctx.output_value(k));
  }
  ctx.add_op(schema::OpCode::WHILE, inits, vars, LowerContext::options(schema::WhileOptionsT{}));
  LoweredModel& model = ctx.model();
  model.ops.back().runs_loop = id;
  if (model.loops.size() <= static_cast<size_t>(id)) model.loops.resize(static_cast<size_t>(id) + 1);
  RuntimeLoop& loop = model.loops[static_cast<size_t>(id)];
  loop.name = attr_string(ctx.node().def, "loop_name");
  loop.max_iterations = static_cast<uint32_t>(attr_int(ctx.node().def, "max_iterations"));
}

std::vector<TensorInfo> infer_while_end(const NodeContext& ctx) {
  const TensorInfo& cond = ctx.input(0);
  if (cond.dtype != DType::kBool || cond.shape.size() > 1 || (cond.shape.size() == 1 && cond.shape[0] != 1)) {
    ctx.fail("a loop condition must be one bool");
  }
  // Inputs: condition, n next values, n loop variables; outputs: the variables.
  std::vector<TensorInfo> out;
  const int n = (ctx.input_count() - 1) / 2;
  for (int k = 0; k < n; ++k) out.push_back(TensorInfo{ctx.input(1 + n + k).dtype, ctx.input(1 + n + k).shape, nullptr});
  return out;
}

void lower_while_end(LowerContext& ctx) {
  const int id = static_cast<int>(attr_int(ctx.node().def, "_floe_loop"));
  LoweredModel& model = ctx.model();
  LoweredOp* loop = nullptr;
  for (LoweredOp& op : model.ops) {
    if (op.runs_loop == id) loop = &op;
  }
  if (loop == nullptr) ctx.fail("internal error: the loop's WHILE op was not lowered before its end");
  std::vector<int> next;
  const int n = (ctx.input_count() - 1) / 2;
  for (int k = 1; k <= n; ++k) {
    const int v = ctx.input_value(k);
    const Value& var = ctx.value_info(loop->outputs.at(static_cast<size_t>(k - 1)));
    const Value& value = ctx.value_info(v);
    if (value.dtype != var.dtype || value.shape != var.shape) {
      ctx.fail("loop variable " + std::to_string(k - 1) + " changes dtype or shape between iterations; floe runs "
               "loops at run time only with fixed shapes");
    }
    next.push_back(v);
  }
  if (next.size() != loop->outputs.size()) ctx.fail("internal error: next values do not match the loop variables");
  loop->inputs.insert(loop->inputs.end(), next.begin(), next.end());
  loop->inputs.push_back(ctx.input_value(0));
  // After the loop, the variables hold its results.
  for (int k = 0; k < n; ++k) ctx.alias_output(k, loop->outputs.at(static_cast<size_t>(k)));
}

}  // namespace

const std::vector<OpHandler>& loop_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"_FloeWhileLoop", infer_while_loop, lower_while_loop, true},
      {"_FloeWhileEnd", infer_while_end, lower_while_end, true},
  };
  return handlers;
}

}  // namespace floe::conv
