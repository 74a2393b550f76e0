// SPDX-License-Identifier: Apache-2.0
// Dead-code elimination over the lowered model. Walking the ops backwards, an
// op is live when it writes a variable (the only side effect an op has) or
// one of its outputs is a graph output or is read by a live op (a WHILE's
// next values are read by ops before them, so the walk repeats until nothing
// more becomes live). An IF, which has no outputs, is live when an op of its
// branches is. Then every value no live op, graph input or graph output
// refers to is dropped and the survivors are renumbered in their original
// order, so names and execution order are unchanged.
#include <string>

#include "converter/optimize/graph_view.h"
#include "converter/optimize/passes.h"

namespace floe::conv::opt {

int eliminate_dead_code(LoweredModel& model, PassLog& log) {
  std::vector<bool> needed(model.values.size(), false);
  for (int v : model.outputs) needed[static_cast<size_t>(v)] = true;
  // A WHILE reads its next values from ops after it (they rerun): repeat the
  // walk until no op becomes live (once, without run-time loops).
  std::vector<bool> remove;
  int removed_ops = 0;
  for (bool grew = true; grew;) {
    grew = false;
    remove.assign(model.ops.size(), false);
    removed_ops = 0;
    std::vector<bool> branch_live(model.ifs.size(), false);  // branch ops come after their IF
    for (size_t i = model.ops.size(); i-- > 0;) {
      const LoweredOp& op = model.ops[i];
      bool live = model.writes_variable(op);  // its effect outlives the Invoke()
      for (int v : op.outputs) live = live || needed[static_cast<size_t>(v)];
      if (op.opcode == schema::OpCode::IF && op.runs_if >= 0 && static_cast<size_t>(op.runs_if) < branch_live.size()) {
        live = branch_live[static_cast<size_t>(op.runs_if)];
      }
      if (live && op.if_id >= 0 && static_cast<size_t>(op.if_id) < branch_live.size()) {
        branch_live[static_cast<size_t>(op.if_id)] = true;
      }
      if (!live) {
        remove[i] = true;
        ++removed_ops;
        continue;
      }
      for (int v : op.inputs) {
        if (v >= 0 && !needed[static_cast<size_t>(v)]) {
          needed[static_cast<size_t>(v)] = true;
          grew = grew || op.opcode == schema::OpCode::WHILE;
        }
      }
    }
  }
  for (size_t i = remove.size(); i-- > 0;) {
    if (!remove[i]) continue;
    log.push_back(std::string("removed unused ") + schema::EnumNameOpCode(model.ops[i].opcode) + " '" +
                  model.ops[i].node_name + "'");
  }
  if (removed_ops > 0) erase_ops(model, remove);

  // Values still referred to (outputs of live ops count even when unread: the
  // kernel writes them).
  std::vector<bool> referenced(model.values.size(), false);
  for (int v : model.inputs) referenced[static_cast<size_t>(v)] = true;
  for (int v : model.outputs) referenced[static_cast<size_t>(v)] = true;
  for (const LoweredOp& op : model.ops) {
    for (int v : op.inputs) {
      if (v >= 0) referenced[static_cast<size_t>(v)] = true;
    }
    for (int v : op.outputs) referenced[static_cast<size_t>(v)] = true;
  }
  int removed_values = 0;
  for (bool r : referenced) removed_values += r ? 0 : 1;
  if (removed_values > 0) {
    std::vector<int> renumber(model.values.size(), -1);
    std::vector<Value> kept;
    for (size_t v = 0; v < model.values.size(); ++v) {
      if (!referenced[v]) continue;
      renumber[v] = static_cast<int>(kept.size());
      kept.push_back(std::move(model.values[v]));
    }
    model.values = std::move(kept);
    auto remap = [&](std::vector<int>& ids) {
      for (int& v : ids) {
        if (v >= 0) v = renumber[static_cast<size_t>(v)];
      }
    };
    remap(model.inputs);
    remap(model.outputs);
    for (LoweredOp& op : model.ops) {
      remap(op.inputs);
      remap(op.outputs);
    }
    log.push_back("removed " + std::to_string(removed_values) + " unreferenced value(s)");
  }
  return removed_ops + removed_values;
}

}  // namespace floe::conv::opt
