// SPDX-License-Identifier: Apache-2.0
// An Error as the host tools print it (floe-run, the Python module): status,
// message, the op (with its opcode when the model is given), the tensor, and
// for kIndexOutOfRange the index, in TF's words. Header-only, host-side.
#pragma once

#include <string>

#include "runtime/core/model.h"
#include "runtime/core/status.h"
#include "schemas/floe_generated.h"

namespace floe::tools {

// `index`: Interpreter::index_fault() after an Invoke().
inline std::string error_text(const Error& e, const Model* model = nullptr, const IndexFault& index = IndexFault()) {
  std::string s = std::string(status_name(e.status)) + ": ";
  if (e.status == Status::kIndexOutOfRange && index.position >= 0) {
    s += "indices[" + std::to_string(index.position) + "] = " + std::to_string(index.value) + " is not in [0, " +
         std::to_string(index.bound) + ")";
  } else {
    s += e.message;
  }
  if (e.op >= 0) {
    s += " (op " + std::to_string(e.op);
    if (model != nullptr && model->loaded() && static_cast<uint32_t>(e.op) < model->schema()->operators()->size()) {
      s += ", " + std::string(schema::EnumNameOpCode(model->schema()->operators()->Get(static_cast<uint32_t>(e.op))->opcode()));
    }
    s += ")";
  }
  if (e.tensor >= 0) s += " (tensor " + std::to_string(e.tensor) + ")";
  return s;
}

}  // namespace floe::tools
