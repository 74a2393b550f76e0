// SPDX-License-Identifier: Apache-2.0
// The two nodes a run-time if becomes (passes/cond_to_select.cc):
// _FloeIf(predicate, ^what its branches read from outside) lowers to the IF op
// and passes the predicate on; _FloeIfEnd(that predicate, then results...,
// else results...) ends each branch with a copy (RESHAPE) of its result k into
// output k, so the cond's readers find the taken branch's value in one tensor.
// Neither is ever folded: which branch runs is known only at run time.
#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

std::vector<TensorInfo> infer_if(const NodeContext& ctx) {
  const TensorInfo& pred = ctx.input(0);
  if (pred.dtype != DType::kBool || pred.shape.size() > 1 || (pred.shape.size() == 1 && pred.shape[0] != 1)) {
    ctx.fail("a cond's predicate must be one bool");
  }
  return {TensorInfo{pred.dtype, pred.shape, nullptr}};
}

void lower_if(LowerContext& ctx) {
  const int id = static_cast<int>(attr_int(ctx.node().def, "_floe_runs_if"));
  const int pred = ctx.input_value(0);
  ctx.add_op(schema::OpCode::IF, {pred}, {}, LowerContext::options(schema::IfOptionsT{}));
  LoweredModel& model = ctx.model();
  model.ops.back().runs_if = id;
  if (model.ifs.size() <= static_cast<size_t>(id)) model.ifs.resize(static_cast<size_t>(id) + 1);
  model.ifs[static_cast<size_t>(id)] = attr_string(ctx.node().def, "if_name");
  ctx.alias_output(0, pred);
}

std::vector<TensorInfo> infer_if_end(const NodeContext& ctx) {
  // Inputs: the predicate (from _FloeIf), n then results, n else results.
  const int n = (ctx.input_count() - 1) / 2;
  std::vector<TensorInfo> out;
  for (int k = 0; k < n; ++k) {
    const TensorInfo& on_then = ctx.input(1 + k);
    const TensorInfo& on_else = ctx.input(1 + n + k);
    if (on_then.dtype != on_else.dtype || on_then.shape != on_else.shape) {
      ctx.fail("the branches of a cond run at run time give result " + std::to_string(k) +
               " different dtypes or shapes; floe runs conds at run time only with fixed shapes");
    }
    out.push_back(TensorInfo{on_then.dtype, on_then.shape, nullptr});
  }
  return out;
}

void lower_if_end(LowerContext& ctx) {
  const int id = static_cast<int>(attr_int(ctx.node().def, "_floe_if_ends"));
  const int n = (ctx.input_count() - 1) / 2;
  LoweredModel& model = ctx.model();
  for (int k = 0; k < n; ++k) {
    const int result = ctx.output_value(k);
    for (const bool then_side : {true, false}) {
      const int from = ctx.input_value(1 + (then_side ? k : n + k));
      ctx.add_op(schema::OpCode::RESHAPE, {from}, {result});
      model.ops.back().if_id = id;
      model.ops.back().if_then = then_side;
    }
  }
}

}  // namespace

const std::vector<OpHandler>& if_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"_FloeIf", infer_if, lower_if, true},
      {"_FloeIfEnd", infer_if_end, lower_if_end, true},
  };
  return handlers;
}

}  // namespace floe::conv
