// SPDX-License-Identifier: Apache-2.0
// Run-time control flow (see control_flow.h): the WHILE and IF rows, Model::Load's
// range checks and Invoke's path through op ranges.
#include "runtime/core/control_flow.h"

#include <string.h>

#include "runtime/core/interpreter.h"
#include "runtime/core/model.h"
#include "runtime/core/run_op.h"
#include "runtime/core/verify_plan.h"
#include "schemas/floe_generated.h"

namespace floe {
namespace {

// ---- WHILE: copies in and out of the loop variables --------------------------

const char* prepare_while(const OpContext& ctx) {
  const int n = ctx.output_count();
  if (ctx.input_count() != 2 * n + 1) {
    return FLOE_MSG("while takes 2n + 1 inputs (initial values, next values, condition) for n variables");
  }
  for (int k = 0; k < n; ++k) {
    const TensorView& var = ctx.output(k);
    const TensorView& init = ctx.input(k);
    const TensorView& next = ctx.input(n + k);
    if (!ctx.has_input(k) || !ctx.has_input(n + k) || init.dtype != var.dtype || next.dtype != var.dtype ||
        init.bytes != var.bytes || next.bytes != var.bytes) {
      return FLOE_MSG("while: a loop variable differs from its initial or next value in dtype or size");
    }
  }
  const TensorView& cond = ctx.input(2 * n);
  if (!ctx.has_input(2 * n) || cond.dtype != DType::kBool || cond.bytes != 1) {
    return FLOE_MSG("while: the condition must be one BOOL");
  }
  // The op ranges were checked against the plan by Model::Load.
  const auto* options = ctx.op->options_as_WhileOptions();
  WhileParams& p = ctx.params<WhileParams>();
  p.cond_end = static_cast<uint32_t>(options->cond_end());
  p.body_end = static_cast<uint32_t>(options->body_end());
  p.max_iterations = options->max_iterations();
  p.variables = static_cast<uint32_t>(n);
  return nullptr;
}

// The loop's entry: the initial values become the variables.
Status eval_while(const PreparedOp& op) {
  const int n = op.output_count();
  for (int k = 0; k < n; ++k) {
    const TensorView& var = op.output(k);
    if (op.input(k).data != var.data) memmove(var.data, op.input(k).data, var.bytes);
  }
  return Status::kOk;
}

// The end of one body: the next values become the variables. Not inlined:
// Invoke's loop keeps its registers for the ops' own bookkeeping.
#if defined(__GNUC__)
__attribute__((noinline))
#endif
void while_take_next_values(const PreparedOp& op) {
  const int n = op.output_count();
  for (int k = 0; k < n; ++k) {
    const TensorView& var = op.output(k);
    if (op.input(n + k).data != var.data) memmove(var.data, op.input(n + k).data, var.bytes);
  }
}

// The condition the condition ops just computed.
inline bool while_condition(const PreparedOp& op) {
  return *static_cast<const uint8_t*>(op.input(op.input_count() - 1).data) != 0;
}

// ---- IF: the op moves no data; the interpreter picks the branch -------------

const char* prepare_if(const OpContext& ctx) {
  if (ctx.input_count() != 1 || ctx.output_count() != 0) return FLOE_MSG("if takes one input (the predicate) and no outputs");
  const TensorView& pred = ctx.input(0);
  if (!ctx.has_input(0) || pred.dtype != DType::kBool || pred.bytes != 1) {
    return FLOE_MSG("if: the predicate must be one BOOL");
  }
  // The op ranges were checked against the plan by Model::Load.
  const auto* options = ctx.op->options_as_IfOptions();
  IfParams& p = ctx.params<IfParams>();
  p.then_end = static_cast<uint32_t>(options->then_end());
  p.else_end = static_cast<uint32_t>(options->else_end());
  return nullptr;
}

Status eval_if(const PreparedOp&) { return Status::kOk; }

// The predicate, as the ops before the IF computed it.
inline bool if_predicate(const PreparedOp& op) { return *static_cast<const uint8_t*>(op.input(0).data) != 0; }

}  // namespace

const ControlFlow ControlFlow::kSupport = {&Model::validate_loops, &::floe::check_loop_lifetimes,
                                           &Interpreter::invoke_control_flow};

// Each WHILE's ranges lie after it inside the plan, ordered (condition, then
// body), and nest: a WHILE inside another's condition or body ends within that
// range. An IF's ranges (then, else) follow the same rules, so no branch jumps
// out of a loop body or another branch. Invoke keeps one frame per WHILE it is
// inside and per IF whose then ops it runs: at most kMaxLoopNesting.
Status Model::validate_loops(Model& model) { return model.validate_ranges(); }

Status Model::validate_ranges() {
  const auto* ops = model_->operators();
  // 32-bit throughout (64-bit compares cost flash on Cortex-M): op counts are
  // below 2^31 (verify_buffer.h) and the range ends are int32 fields.
  const int32_t count = static_cast<int32_t>(ops->size());
  struct Range {
    int32_t end;
    uint32_t frames;  // Invoke's frames while inside this range
  };
  Range ranges[2 * kMaxLoopNesting];  // enclosing ranges, innermost last
  uint32_t depth = 0;
  for (int32_t i = 0; i < count; ++i) {
    while (depth > 0 && i >= ranges[depth - 1].end) --depth;
    const schema::Operator* op = ops->Get(static_cast<uint32_t>(i));
    const bool is_while = op->opcode() == schema::OpCode::WHILE;
    if (!is_while && op->opcode() != schema::OpCode::IF) continue;
    int32_t first_end = 0, second_end = 0;  // (condition, body) or (then, else)
    if (is_while) {
      const auto* options = op->options_as_WhileOptions();  // present: checked above
      first_end = options->cond_end();
      second_end = options->body_end();
    } else {
      const auto* options = op->options_as_IfOptions();
      first_end = options->then_end();
      second_end = options->else_end();
    }
    if (first_end <= i || first_end > second_end || second_end > count) {
      return fail(Status::kInvalidModel,
                  is_while ? FLOE_MSG("while's op ranges are outside the plan or out of order")
                           : FLOE_MSG("if's op ranges are outside the plan or out of order"),
                  i);
    }
    if (depth > 0 && second_end > ranges[depth - 1].end) {
      return fail(Status::kInvalidModel,
                  is_while ? FLOE_MSG("while's op ranges cross an enclosing loop's range")
                           : FLOE_MSG("if's op ranges cross an enclosing loop's or branch's range"),
                  i);
    }
    const uint32_t frames = depth > 0 ? ranges[depth - 1].frames : 0;
    if (frames >= kMaxLoopNesting || depth + 2 > 2 * kMaxLoopNesting) {
      return fail(Status::kInvalidModel, FLOE_MSG("while loops and ifs nested deeper than kMaxLoopNesting"), i);
    }
    // The outer range, then the inner one, each enclosing what follows. A
    // WHILE's frame lasts over both; an IF's only over its then ops.
    ranges[depth++] = Range{second_end, is_while ? frames + 1 : frames};
    ranges[depth++] = Range{first_end, frames + 1};
  }
  return Status::kOk;
}

// Invoke() with run-time loops or ifs. A WHILE (kLoop) pushes a frame
// and its ranges decide where to go next: at cond_end the condition is read
// (false: past the loop; true: the body runs), at body_end the next values
// become the variables and the condition runs again. An IF (kIf) reads its
// predicate: false jumps to its else ops; true pushes a frame, and at
// then_end the frame pops and the else ops are skipped. Frames live in the
// interpreter (Model::Load bounds the nesting), so control flow needs neither
// recursion nor memory outside the arena.
Status Interpreter::invoke_control_flow(Interpreter& self) {
  return self.invoke_ranges();
}

Status Interpreter::invoke_ranges() {
  LoopFrame* const loops = loops_;
  uint32_t depth = 0;
  size_t i = 0;
  for (;;) {
    if (depth > 0) {
      LoopFrame& loop = loops[depth - 1];
      const PreparedOp& w = ops_[loop.op];
      if ((w.flags & PreparedOp::kIf) != 0) {
        const auto& p = w.params_as<IfParams>();
        if (i == p.then_end) {
          i = p.else_end;
          --depth;
          continue;
        }
      } else {
        const auto& p = w.params_as<WhileParams>();
        if (!loop.in_body && i == p.cond_end) {
          if (!while_condition(w)) {
            i = p.body_end;
            --depth;
            continue;
          }
          if (loop.iterations == p.max_iterations) {
            return fail(Status::kLoopBoundExceeded, FLOE_MSG("loop still running at its bound of iterations"),
                        static_cast<int32_t>(loop.op));
          }
          loop.in_body = 1;
          continue;
        }
        if (loop.in_body && i == p.body_end) {
          while_take_next_values(w);
          ++loop.iterations;
          loop.in_body = 0;
          i = loop.op + 1u;
          continue;
        }
      }
    }
    if (i >= op_count_) break;
    const Status status = run_op(i);
    if (status != Status::kOk) return status;
    const uint16_t flags = ops_[i].flags;
    if ((flags & PreparedOp::kLoop) != 0) {
      loops[depth++] = LoopFrame{static_cast<uint32_t>(i), 0, 0};
    } else if ((flags & PreparedOp::kIf) != 0) {
      if (!if_predicate(ops_[i])) {
        i = ops_[i].params_as<IfParams>().then_end;  // the else ops
        continue;
      }
      loops[depth++] = LoopFrame{static_cast<uint32_t>(i), 0, 0};
    }
    ++i;
  }
  return Status::kOk;
}


}  // namespace floe

FLOE_KERNEL(REFERENCE, WHILE, ANY, WhileParams, prepare_while, eval_while)
FLOE_KERNEL(REFERENCE, IF, ANY, IfParams, prepare_if, eval_if)
