// SPDX-License-Identifier: Apache-2.0
// Interpreter::run_op, inlined into both of Invoke's paths (interpreter.cc,
// control_flow.cc): one op, on its backend or its kernel; the observer sees it
// after it ran. Internal to runtime/core.
#pragma once

#include "runtime/core/interpreter.h"

namespace floe {

#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline Status Interpreter::run_op(size_t i) {
  const PreparedOp& op = ops_[i];
  Status status;
  if (!kHasBackend || (op.flags & (PreparedOp::kOnBackend | PreparedOp::kUseThreadPool)) == 0) {
    status = op.eval(op);
  } else if ((op.flags & PreparedOp::kOnBackend) != 0) {
    status = backend_run(backend_, static_cast<uint32_t>(i),
                         (op.flags & PreparedOp::kUseThreadPool) != 0 ? thread_pool_ : nullptr);
  } else {  // floe's own kernel, which may split its work (runtime/core/parallel.h)
    const OpThreadsScope threads(op_threads_);
    status = op.eval(op);
  }
  if (status != Status::kOk) {
    return fail(status, FLOE_MSG("kernel failed"), static_cast<int32_t>(i));
  }
  if (observer_ != nullptr) observer_(observer_user_, i, kernel_op_name(static_cast<schema::OpCode>(op.opcode)));
  return Status::kOk;
}

}  // namespace floe
