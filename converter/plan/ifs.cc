// SPDX-License-Identifier: Apache-2.0
// Run-time ifs in the op order (see ifs.h).
#include "converter/plan/ifs.h"

#include <string>

#include "converter/ir/error.h"

namespace floe::conv {
namespace {

// The IF op of each if id (-1: none).
std::vector<int> if_ops_by_id(const LoweredModel& model) {
  std::vector<int> by_id(model.ifs.size(), -1);
  for (size_t i = 0; i < model.ops.size(); ++i) {
    const int id = model.ops[i].runs_if;
    if (id >= 0 && static_cast<size_t>(id) < by_id.size()) by_id[static_cast<size_t>(id)] = static_cast<int>(i);
  }
  return by_id;
}

// Whether `op` lies in the then (then_side) or else branch of if `id`, directly
// or through ifs nested in that branch.
bool in_branch(const LoweredModel& model, const std::vector<int>& if_ops, const LoweredOp& op, int id, bool then_side) {
  int at = op.if_id;
  bool side = op.if_then;
  for (size_t hops = 0; at >= 0 && hops <= if_ops.size(); ++hops) {
    if (at == id) return side == then_side;
    if (static_cast<size_t>(at) >= if_ops.size() || if_ops[static_cast<size_t>(at)] < 0) return false;
    const LoweredOp& enclosing = model.ops[static_cast<size_t>(if_ops[static_cast<size_t>(at)])];
    at = enclosing.if_id;
    side = enclosing.if_then;
  }
  return false;
}

}  // namespace

bool has_runtime_ifs(const LoweredModel& model) {
  for (const LoweredOp& op : model.ops) {
    if (op.opcode == schema::OpCode::IF) return true;
  }
  return false;
}

void assign_if_ranges(LoweredModel& model) {
  const std::vector<int> if_ops = if_ops_by_id(model);
  const size_t count = model.ops.size();
  for (size_t w = 0; w < count; ++w) {
    if (model.ops[w].opcode != schema::OpCode::IF) continue;
    const int id = model.ops[w].runs_if;
    if (id < 0 || static_cast<size_t>(id) >= model.ifs.size()) {
      throw ConvertError("internal error: IF op of node '" + model.ops[w].node_name + "' names no if");
    }
    size_t i = w + 1;
    while (i < count && in_branch(model, if_ops, model.ops[i], id, true)) ++i;
    const size_t then_end = i;
    while (i < count && in_branch(model, if_ops, model.ops[i], id, false)) ++i;
    const size_t else_end = i;
    for (size_t j = 0; j < count; ++j) {
      if ((j <= w || j >= else_end) &&
          (in_branch(model, if_ops, model.ops[j], id, true) || in_branch(model, if_ops, model.ops[j], id, false))) {
        throw ConvertError("internal error: op of node '" + model.ops[j].node_name + "' of cond '" +
                           model.ifs[static_cast<size_t>(id)] +
                           "' lies outside the cond's op range (an optimization pass moved it; "
                           "--disable-pass NAME turns passes off)");
      }
    }
    schema::IfOptionsT options;
    options.then_end = static_cast<int32_t>(then_end);
    options.else_end = static_cast<int32_t>(else_end);
    model.ops[w].options.Set(std::move(options));
  }
}

}  // namespace floe::conv
