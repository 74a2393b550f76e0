// SPDX-License-Identifier: Apache-2.0
// Reference-backend adapters of the layout ops (TRANSPOSE, PAD), defined in
// dispatch_layout.cc and named by runtime/ops.def; the dispatch table in
// dispatch.cc includes this header so the table can take their addresses.
#pragma once

#include "runtime/core/dispatch.h"

namespace floe {

const char* prepare_transpose(const OpContext& ctx);
Status eval_transpose(const OpContext& ctx);
const char* prepare_pad(const OpContext& ctx);
Status eval_pad(const OpContext& ctx);

}  // namespace floe
