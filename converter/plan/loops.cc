// SPDX-License-Identifier: Apache-2.0
// Run-time loops in the op order (see loops.h).
#include "converter/plan/loops.h"

#include <algorithm>
#include <string>

#include "converter/ir/error.h"

namespace floe::conv {

bool has_runtime_loops(const LoweredModel& model) {
  for (const LoweredOp& op : model.ops) {
    if (op.opcode == schema::OpCode::WHILE) return true;
  }
  return false;
}

void assign_loop_ranges(LoweredModel& model) {
  const size_t count = model.ops.size();
  // A nested loop's WHILE is an op of its enclosing loop: each loop's parent.
  std::vector<int> while_of(model.loops.size(), -1);  // loop -> index of its WHILE op
  for (size_t j = 0; j < count; ++j) {
    const int id = model.ops[j].runs_loop;
    if (id >= 0 && static_cast<size_t>(id) < while_of.size()) while_of[static_cast<size_t>(id)] = static_cast<int>(j);
  }
  // Whether op `j` is in loop `id` (directly or in a nested loop), and then
  // whether in its condition (a nested loop's ops are where its WHILE is).
  auto member = [&](size_t j, int id, bool* in_cond) {
    const LoweredOp* op = &model.ops[j];
    for (size_t hops = 0; op->loop >= 0 && hops <= while_of.size(); ++hops) {
      if (op->loop == id) {
        *in_cond = op->loop_cond;
        return true;
      }
      if (static_cast<size_t>(op->loop) >= while_of.size() || while_of[static_cast<size_t>(op->loop)] < 0) return false;
      op = &model.ops[static_cast<size_t>(while_of[static_cast<size_t>(op->loop)])];
    }
    return false;
  };
  for (size_t w = 0; w < count; ++w) {
    LoweredOp& loop_op = model.ops[w];
    if (loop_op.opcode != schema::OpCode::WHILE) continue;
    const int id = loop_op.runs_loop;
    if (id < 0 || static_cast<size_t>(id) >= model.loops.size()) {
      throw ConvertError("internal error: WHILE op of node '" + loop_op.node_name + "' names no loop");
    }
    const RuntimeLoop& loop = model.loops[static_cast<size_t>(id)];
    bool in_cond = false;
    size_t i = w + 1;
    while (i < count && member(i, id, &in_cond) && in_cond) ++i;
    const size_t cond_end = i;
    while (i < count && member(i, id, &in_cond) && !in_cond) ++i;
    const size_t body_end = i;
    for (size_t j = 0; j < count; ++j) {
      if (member(j, id, &in_cond) && (j <= w || j >= body_end)) {
        throw ConvertError("internal error: op of node '" + model.ops[j].node_name + "' of loop '" + loop.name +
                           "' lies outside the loop's op range (an optimization pass moved it; "
                           "--disable-pass NAME turns passes off)");
      }
    }
    schema::WhileOptionsT options;
    options.cond_end = static_cast<int32_t>(cond_end);
    options.body_end = static_cast<int32_t>(body_end);
    options.max_iterations = loop.max_iterations;
    loop_op.options.Set(std::move(options));
  }
}

void extend_over_loops(const LoweredModel& model, std::vector<int32_t>* first, std::vector<int32_t>* last) {
  const int32_t count = static_cast<int32_t>(model.ops.size());
  for (int32_t w = 0; w < count; ++w) {
    const LoweredOp& loop_op = model.ops[static_cast<size_t>(w)];
    // Without its ranges (assign_loop_ranges not run) Model::Load refuses it anyway.
    const auto* options = loop_op.options.AsWhileOptions();
    if (loop_op.opcode != schema::OpCode::WHILE || options == nullptr) continue;
    const int32_t end = std::min(options->body_end, count) - 1;
    auto grow = [&](int v) {
      if (v < 0) return;
      int32_t& f = (*first)[static_cast<size_t>(v)];
      f = f < 0 ? w : std::min(f, w);
      (*last)[static_cast<size_t>(v)] = std::max((*last)[static_cast<size_t>(v)], end);
    };
    for (int v : loop_op.inputs) grow(v);
    for (int v : loop_op.outputs) grow(v);
    for (int32_t i = w + 1; i <= end; ++i) {
      const LoweredOp& op = model.ops[static_cast<size_t>(i)];
      for (const std::vector<int>* list : {&op.inputs, &op.outputs}) {
        for (int v : *list) {
          if (v >= 0 && (*first)[static_cast<size_t>(v)] >= 0 && (*first)[static_cast<size_t>(v)] <= w) grow(v);
        }
      }
    }
  }
}

}  // namespace floe::conv
