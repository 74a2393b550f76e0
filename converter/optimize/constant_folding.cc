// SPDX-License-Identifier: Apache-2.0
// Lowered-op constant folding: an op whose present inputs are all constants is
// serialized as a one-op model and run by the real interpreter (run_lowered), so
// the folded bytes come from the same reference kernels the device runs. One
// forward sweep suffices: ops are in topological order, so an op's inputs are
// final (folded or not) by the time it is visited.
#include <string>

#include "converter/eval/run_lowered.h"
#include "converter/ir/limits.h"
#include "converter/optimize/graph_view.h"
#include "converter/optimize/passes.h"

namespace floe::conv::opt {

int fold_constants(LoweredModel& model, PassLog& log) {
  std::vector<bool> remove(model.ops.size(), false);
  // A value written by more than one op (a run-time IF's result: one copy per
  // branch) is no constant even when one writer's inputs are.
  std::vector<int> writers(model.values.size(), 0);
  for (const LoweredOp& op : model.ops) {
    for (int v : op.outputs) ++writers[static_cast<size_t>(v)];
  }
  int folded = 0;
  for (size_t i = 0; i < model.ops.size(); ++i) {
    const LoweredOp& op = model.ops[i];
    // WHILE and IF decide which ops run: never folded, even on constant operands.
    if (op.opcode == schema::OpCode::WHILE || op.opcode == schema::OpCode::IF) continue;
    // Assigning a constant to a variable is an effect at run time, not a constant.
    if (model.writes_variable(op)) continue;
    bool shared_output = false;
    for (int v : op.outputs) shared_output = shared_output || writers[static_cast<size_t>(v)] > 1;
    if (shared_output) continue;
    bool all_constant = false;
    for (int v : op.inputs) {
      if (v < 0) continue;
      if (!model.values[static_cast<size_t>(v)].is_constant()) {
        all_constant = false;
        break;
      }
      all_constant = true;
    }
    if (!all_constant) continue;
    // A large expansion of small constants stays a run-time op (kMaxFoldedExpansionBytes).
    uint64_t in_bytes = 0, out_bytes = 0;
    for (int v : op.inputs) {
      if (v >= 0) in_bytes += model.values[static_cast<size_t>(v)].byte_size();
    }
    for (int v : op.outputs) out_bytes += model.values[static_cast<size_t>(v)].byte_size();
    if (!worth_folding(static_cast<double>(in_bytes), static_cast<double>(out_bytes))) continue;

    LoweredModel scratch;
    LoweredOp copy;
    copy.opcode = op.opcode;
    copy.options = op.options;
    copy.node_name = op.node_name;
    for (int v : op.inputs) {
      copy.inputs.push_back(v < 0 ? -1 : scratch.add_value(model.values[static_cast<size_t>(v)]));
    }
    for (int v : op.outputs) {
      Value out = model.values[static_cast<size_t>(v)];
      out.constant = nullptr;
      const int id = scratch.add_value(std::move(out));
      copy.outputs.push_back(id);
      scratch.outputs.push_back(id);
    }
    scratch.ops.push_back(std::move(copy));
    std::vector<HostTensor> results = run_lowered(
        scratch, "constant folding of " + std::string(schema::EnumNameOpCode(op.opcode)) + " (node '" +
                     op.node_name + "')");
    for (size_t k = 0; k < op.outputs.size(); ++k) {
      Value& out = model.values[static_cast<size_t>(op.outputs[k])];
      out.constant = std::make_shared<const HostTensor>(std::move(results[k]));
    }
    remove[i] = true;
    ++folded;
    log.push_back(std::string("folded ") + schema::EnumNameOpCode(op.opcode) + " '" + op.node_name + "'");
  }
  if (folded > 0) erase_ops(model, remove);
  return folded;
}

}  // namespace floe::conv::opt
