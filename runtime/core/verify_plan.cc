// SPDX-License-Identifier: Apache-2.0
// Memory-plan verification (see verify_plan.h). Lifetimes are closed intervals
// of operator indices; a graph input is written by the caller before op 0 and a
// graph output is read after the last op, hence 0 and the op count.
#include "runtime/core/verify_plan.h"

#include "runtime/core/status.h"
#include "schemas/floe_generated.h"

namespace floe {
namespace {

struct Lifetime {
  int64_t first;
  int64_t last;
};

Lifetime lifetime_of(const schema::Tensor& t, int64_t op_count) {
  if (t.live_first_op() < 0 || t.live_last_op() < 0) return Lifetime{0, op_count};
  return Lifetime{t.live_first_op(), t.live_last_op()};
}

bool in_arena(const schema::Tensor& t) { return !t.is_constant(); }

// Every op that touches an arena tensor must lie inside its lifetime.
const char* check_uses(const schema::Model& model, int64_t op_count, int32_t* tensor) {
  const auto& tensors = *model.tensors();
  const auto& ops = *model.operators();
  for (uint32_t i = 0; i < ops.size(); ++i) {
    const schema::Operator* op = ops.Get(i);
    for (const auto* list : {op->inputs(), op->outputs()}) {
      for (int32_t index : *list) {
        if (index < 0) continue;  // absent optional input
        const schema::Tensor& t = *tensors.Get(static_cast<uint32_t>(index));
        if (!in_arena(t)) continue;
        const Lifetime life = lifetime_of(t, op_count);
        if (static_cast<int64_t>(i) < life.first || static_cast<int64_t>(i) > life.last) {
          *tensor = index;
          return FLOE_MSG("an operator uses a tensor outside its planned lifetime");
        }
      }
    }
  }
  for (int32_t index : *model.inputs()) {
    if (lifetime_of(*tensors.Get(static_cast<uint32_t>(index)), op_count).first != 0) {
      *tensor = index;
      return FLOE_MSG("a graph input's planned lifetime does not start at op 0");
    }
  }
  for (int32_t index : *model.outputs()) {
    const schema::Tensor& t = *tensors.Get(static_cast<uint32_t>(index));
    if (in_arena(t) && lifetime_of(t, op_count).last != op_count) {
      *tensor = index;
      return FLOE_MSG("a graph output's planned lifetime does not reach the end");
    }
  }
  return nullptr;
}

}  // namespace

const char* verify_memory_plan(const schema::Model& model, int32_t* tensor) {
  const auto& tensors = *model.tensors();
  const int64_t op_count = static_cast<int64_t>(model.operators()->size());
  for (uint32_t i = 0; i < tensors.size(); ++i) {
    const schema::Tensor& t = *tensors.Get(i);
    if (!in_arena(t)) continue;
    const Lifetime life = lifetime_of(t, op_count);
    if (life.first > life.last || life.last > op_count) {
      *tensor = static_cast<int32_t>(i);
      return FLOE_MSG("tensor lifetime is empty or runs past the last operator");
    }
  }
  if (const char* reason = check_uses(model, op_count, tensor)) return reason;

  // Pairwise: bytes of simultaneously live tensors must be disjoint. Offsets and
  // sizes are already known to lie inside the arena, so the sums cannot overflow.
  for (uint32_t a = 0; a < tensors.size(); ++a) {
    const schema::Tensor& ta = *tensors.Get(a);
    if (!in_arena(ta) || ta.size() == 0) continue;
    const Lifetime la = lifetime_of(ta, op_count);
    const uint64_t a_begin = ta.offset(), a_end = ta.offset() + ta.size();
    for (uint32_t b = a + 1; b < tensors.size(); ++b) {
      const schema::Tensor& tb = *tensors.Get(b);
      if (!in_arena(tb) || tb.size() == 0) continue;
      const uint64_t b_begin = tb.offset(), b_end = tb.offset() + tb.size();
      if (a_begin >= b_end || b_begin >= a_end) continue;  // disjoint bytes
      const Lifetime lb = lifetime_of(tb, op_count);
      if (la.first <= lb.last && lb.first <= la.last) {
        *tensor = static_cast<int32_t>(b);
        return FLOE_MSG("two simultaneously live tensors share arena bytes");
      }
    }
  }
  return nullptr;
}

}  // namespace floe
