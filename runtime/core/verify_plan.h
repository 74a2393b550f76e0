// SPDX-License-Identifier: Apache-2.0
// Load-time proof that the converter's memory plan is sound, so a model that
// validates cannot make two tensors that are live at the same time share arena
// bytes (which would corrupt results, even though every access stays inside the
// arena). The converter stores each arena tensor's lifetime [live_first_op,
// live_last_op]; this check needs no heap and no trust in those numbers:
//   1. each stored lifetime covers every op that reads or writes the tensor,
//      starts at 0 for graph inputs and ends at the op count for graph outputs
//      (absent lifetimes count as the whole run, which is always safe; the
//      converter records variable tensors, whose state outlives Invoke(), so,
//      and the kernels that keep state refuse one that records a lifetime);
//   2. no two arena tensors of one memory region (each region is an arena of
//      its own) whose lifetimes intersect overlap in bytes, except
//      a zero-copy alias: when one's lifetime ends at the op where the other's
//      starts, that op is a RESHAPE (the SAME_BYTES op of schemas/contract/ops.def),
//      which writes exactly the bytes it reads, and both start at the same offset; the converter puts a reshape's
//      output at the offset of an input that dies there, and its kernel then
//      copies nothing.
// Cost: O(operator inputs/outputs) + O(arena tensors^2) comparisons, no memory.
// Relies on Model::Load having range-checked every index, offset and size.
#pragma once

#include <stdint.h>

namespace floe {

namespace schema {
struct Model;
}

// nullptr when the plan is sound, else the reason; *tensor is the offending tensor.
const char* verify_memory_plan(const schema::Model& model, int32_t* tensor);

// Run-time loops only (ControlFlow::check_loop_lifetimes, which
// verify_memory_plan calls when the registry has WHILE): a WHILE reruns its
// ranges, so its operands and every arena tensor its ops read that exists when
// the loop starts must stay live until its last op.
const char* check_loop_lifetimes(const schema::Model& model, int32_t* tensor);

}  // namespace floe
