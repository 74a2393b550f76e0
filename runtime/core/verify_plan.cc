// SPDX-License-Identifier: Apache-2.0
// Memory-plan verification (see verify_plan.h). Lifetimes are closed intervals
// of operator indices; a graph input is written by the caller before op 0 and a
// graph output is read after the last op, hence 0 and the op count.
#include "runtime/core/verify_plan.h"

#include "runtime/core/status.h"
#include "schemas/contract/op_traits.h"
#include "schemas/floe_generated.h"

namespace floe {
namespace {

// What the plan check needs of one tensor, read once through the accessors
// (one out-of-line reader keeps the Cortex-M footprint small).
struct Span {
  bool in_arena;
  uint64_t begin, end;  // bytes [begin, end); in the arena (checked by Model::Load)
  int32_t first, last;  // closed lifetime; absent = the whole run [0, op count]
};

Span span_of(const schema::Model& model, int32_t index, int32_t op_count) {
  const schema::Tensor& t = *model.tensors()->Get(static_cast<uint32_t>(index));
  Span s;
  s.in_arena = !t.is_constant();
  s.begin = t.offset();
  s.end = t.offset() + t.size();  // both inside the arena: cannot overflow
  s.first = t.live_first_op();
  s.last = t.live_last_op();
  if (s.first < 0 || s.last < 0) {
    s.first = 0;
    s.last = op_count;
  }
  return s;
}

// One bit per opcode whose output is its input's bytes (the SAME_BYTES trait of
// runtime/ops.def), built at compile time so only these bytes reach the device.
constexpr size_t kOpCodes = static_cast<size_t>(schema::OpCode::MAX) + 1;
struct SameBytesOps {
  uint32_t bits[(kOpCodes + 31) / 32];
};
constexpr SameBytesOps make_same_bytes_ops() {
  SameBytesOps ops{};
  for (size_t code = 0; code < kOpCodes; ++code) {
    if (op_traits(static_cast<schema::OpCode>(code)).shape == OpShape::SAME_BYTES) {
      ops.bits[code / 32] |= uint32_t{1} << (code % 32);
    }
  }
  return ops;
}
constexpr SameBytesOps kSameBytesOps = make_same_bytes_ops();

// `to` is an alias of `from` (the converter's zero-copy reshape): the op where
// `from`'s lifetime ends and `to`'s starts is a SAME_BYTES op reading `from` as
// its one input and writing `to` as its one output, at the same bytes. Neither
// is used on the other side of that op, and it changes no byte.
bool is_alias(const schema::Model& model, int32_t from, const Span& f, int32_t to, const Span& t,
              int32_t op_count) {
  if (f.begin != t.begin || f.end != t.end || f.last != t.first || f.last >= op_count) return false;
  const schema::Operator* op = model.operators()->Get(static_cast<uint32_t>(f.last));
  const auto code = static_cast<uint32_t>(op->opcode());
  if (code >= kOpCodes || ((kSameBytesOps.bits[code / 32] >> (code % 32)) & 1u) == 0) return false;
  return op->inputs()->size() == 1 && op->outputs()->size() == 1 && op->inputs()->Get(0) == from &&
         op->outputs()->Get(0) == to;
}

}  // namespace

const char* verify_memory_plan(const schema::Model& model, int32_t* tensor) {
  const int32_t tensor_count = static_cast<int32_t>(model.tensors()->size());
  const auto& ops = *model.operators();
  // Vector lengths are < 2^31 (verify_buffer.h), so counts fit int32.
  const int32_t op_count = static_cast<int32_t>(ops.size());
  // Every op that touches an arena tensor lies inside its lifetime.
  for (int32_t i = 0; i < op_count; ++i) {
    const schema::Operator* op = ops.Get(static_cast<uint32_t>(i));
    for (const auto* list : {op->inputs(), op->outputs()}) {
      for (const int32_t index : *list) {
        if (index < 0) continue;  // absent optional input
        const Span s = span_of(model, index, op_count);
        *tensor = index;
        if (s.in_arena && (i < s.first || i > s.last)) {
          return FLOE_MSG("op uses a tensor outside its lifetime");
        }
      }
    }
  }
  // The caller writes inputs before op 0 and reads outputs after the last op.
  for (const int32_t index : *model.inputs()) {
    *tensor = index;
    if (span_of(model, index, op_count).first != 0) {
      return FLOE_MSG("graph input's lifetime starts late");
    }
  }
  for (const int32_t index : *model.outputs()) {
    const Span s = span_of(model, index, op_count);
    *tensor = index;
    if (s.in_arena && s.last != op_count) {
      return FLOE_MSG("graph output's lifetime ends early");
    }
  }
  // Each lifetime is an interval inside the run, and bytes of simultaneously
  // live tensors are disjoint (empty tensors own no bytes, wherever their
  // offset points).
  for (int32_t a = 0; a < tensor_count; ++a) {
    const Span sa = span_of(model, a, op_count);
    *tensor = a;
    if (!sa.in_arena) continue;
    if (sa.first > sa.last || sa.last > op_count) {
      return FLOE_MSG("tensor lifetime empty or past the last op");
    }
    if (sa.begin == sa.end) continue;
    for (int32_t b = a + 1; b < tensor_count; ++b) {
      const Span sb = span_of(model, b, op_count);
      *tensor = b;
      if (sb.in_arena && sb.begin < sa.end && sa.begin < sb.end && sb.begin != sb.end &&
          sa.first <= sb.last && sb.first <= sa.last && !is_alias(model, a, sa, b, sb, op_count) &&
          !is_alias(model, b, sb, a, sa, op_count)) {
        return FLOE_MSG("two simultaneously live tensors share arena bytes");
      }
    }
  }
  *tensor = -1;
  return nullptr;
}

}  // namespace floe
