// SPDX-License-Identifier: Apache-2.0
// Memory-plan verification (see verify_plan.h). Lifetimes are closed intervals
// of operator indices; a graph input is written by the caller before op 0 and a
// graph output is read after the last op, hence 0 and the op count.
#include "runtime/core/verify_plan.h"

#include "runtime/core/control_flow.h"
#include "runtime/core/registry.h"
#include "runtime/core/status.h"
#include "schemas/contract/op_traits.h"
#include "schemas/floe_generated.h"

namespace floe {
namespace {

// What the plan check needs of one tensor, read once through the accessors
// (one out-of-line reader keeps the Cortex-M footprint small).
struct Span {
  bool in_arena;
  uint32_t region;      // memory region (each has its own arena and offsets)
  uint64_t begin, end;  // bytes [begin, end); in the arena (checked by Model::Load)
  int32_t first, last;  // closed lifetime; absent = the whole run [0, op count]
};

Span span_of(const schema::Model& model, int32_t index, int32_t op_count) {
  const schema::Tensor& t = *model.tensors()->Get(static_cast<uint32_t>(index));
  Span s;
  s.in_arena = !t.is_constant();
  s.region = t.region();
  s.begin = t.offset();
  const uint64_t size = t.size();
  // Inside the arena: cannot overflow. An empty tensor owns no bytes: its end
  // at 0 makes both overlap tests below fail, wherever it points.
  s.end = size != 0 ? s.begin + size : 0;
  s.first = t.live_first_op();
  s.last = t.live_last_op();
  if (s.first < 0 || s.last < 0) {
    s.first = 0;
    s.last = op_count;
  }
  return s;
}

// Two tensors may share bytes when one's lifetime ends at the op where the
// other's starts, that op is a RESHAPE and both start at the same offset (the
// converter's zero-copy reshape: its output at its dying input's offset). Only
// that op sees both, and it writes exactly the bytes it reads (nothing when the
// addresses are equal; its memcpy never sees a partial overlap), so no value is lost; any other tensor it touches is checked
// against both as usual. RESHAPE is the one op whose output is its input's
// bytes (the SAME_BYTES trait of schemas/contract/ops.def; asserted below), and a
// compare costs less flash than a trait lookup.
bool is_alias(const flatbuffers::Vector<flatbuffers::Offset<schema::Operator>>& ops, const Span& sa,
              const Span& sb, int32_t op_count) {
  // Either may be the earlier one: tensor indices follow no op order.
  const int32_t at = sa.last == sb.first ? sa.last : sb.last == sa.first ? sb.last : op_count;
  return at < op_count && sa.begin == sb.begin &&
         ops.Get(static_cast<uint32_t>(at))->opcode() == schema::OpCode::RESHAPE;
}

constexpr bool reshape_is_the_only_same_bytes_op() {
  for (uint32_t code = 0; code <= static_cast<uint32_t>(schema::OpCode::MAX); ++code) {
    const bool same_bytes = op_traits(static_cast<schema::OpCode>(code)).shape == OpShape::SAME_BYTES;
    if (same_bytes != (static_cast<schema::OpCode>(code) == schema::OpCode::RESHAPE)) return false;
  }
  return true;
}
static_assert(reshape_is_the_only_same_bytes_op(),
              "another op has the SAME_BYTES trait in schemas/contract/ops.def: let is_alias() accept it too");

// Whether an arena operand of ops [from, to] breaks the plan's rule (its
// index in *tensor): with loop < 0, the op lies outside the operand's
// lifetime; with loop = a WHILE's index and `to` the loop's last op, the
// operand is the WHILE's own or lives when the loop starts, yet dies before
// `to`. One walk for both rules (Cortex-M flash).
// Inlined into each caller: the loop check is linked only with run-time control flow.
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline bool operand_breaks_plan(const schema::Model& model, int32_t from, int32_t to, int32_t loop, int32_t* tensor) {
  const auto& ops = *model.operators();
  const int32_t op_count = static_cast<int32_t>(ops.size());
  for (int32_t i = from; i <= to; ++i) {
    const schema::Operator* op = ops.Get(static_cast<uint32_t>(i));
    for (const auto* list : {op->inputs(), op->outputs()}) {
      for (const int32_t index : *list) {
        if (index < 0) continue;  // absent optional input
        const Span s = span_of(model, index, op_count);
        *tensor = index;
        if (!s.in_arena) continue;
        if (loop < 0 ? i < s.first || i > s.last : (i == loop || s.first <= loop) && s.last < to) return true;
      }
    }
  }
  return false;
}

}  // namespace

const char* verify_memory_plan(const schema::Model& model, int32_t* tensor) {
  const int32_t tensor_count = static_cast<int32_t>(model.tensors()->size());
  const auto& ops = *model.operators();
  // Vector lengths are < 2^31 (verify_buffer.h), so counts fit int32.
  const int32_t op_count = static_cast<int32_t>(ops.size());
  // Every op that touches an arena tensor lies inside its lifetime.
  if (operand_breaks_plan(model, 0, op_count - 1, -1, tensor)) {
    return FLOE_MSG("op uses a tensor outside its lifetime");
  }
  // (Without WHILE and IF in the registry, Model::Load has refused them already.)
  if (kKernelRegistry.control_flow != nullptr) {
    if (const char* why = kKernelRegistry.control_flow->check_loop_lifetimes(model, tensor)) return why;
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
    for (int32_t b = a + 1; b < tensor_count; ++b) {
      const Span sb = span_of(model, b, op_count);
      *tensor = b;
      if (sb.in_arena && sb.region == sa.region && sb.begin < sa.end && sa.begin < sb.end &&
          sa.first <= sb.last && sb.first <= sa.last && !is_alias(ops, sa, sb, op_count)) {
        return FLOE_MSG("two simultaneously live tensors share arena bytes");
      }
    }
  }
  *tensor = -1;
  return nullptr;
}

const char* check_loop_lifetimes(const schema::Model& model, int32_t* tensor) {
  const auto& ops = *model.operators();
  const int32_t op_count = static_cast<int32_t>(ops.size());
  for (int32_t w = 0; w < op_count; ++w) {
    const schema::Operator* loop = ops.Get(static_cast<uint32_t>(w));
    if (loop->opcode() != schema::OpCode::WHILE) continue;
    const int32_t last = loop->options_as_WhileOptions()->body_end() - 1;  // ranges checked by Model::Load
    if (operand_breaks_plan(model, w, last, w, tensor)) {
      return FLOE_MSG("a tensor a loop reads across iterations dies inside the loop");
    }
  }
  return nullptr;
}

}  // namespace floe
