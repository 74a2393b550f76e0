// SPDX-License-Identifier: Apache-2.0
// Validate-before-write (see validate.h).
#include "converter/pipeline/validate.h"

#include <cstdlib>
#include <cstring>
#include <memory>

#include "converter/ir/error.h"
#include "runtime/core/interpreter.h"
#include "runtime/core/model.h"
#include "schemas/floe_generated.h"

namespace floe::conv {
namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// "op 3 (CONV2D, node 'conv1')" from the model's own operator table.
std::string describe_op(const Model& model, int32_t op) {
  if (op < 0) return std::string();
  std::string text = " at op " + std::to_string(op);
  const schema::Model* m = model.schema();
  if (m != nullptr && m->operators() != nullptr && static_cast<uint32_t>(op) < m->operators()->size()) {
    const schema::Operator* o = m->operators()->Get(static_cast<uint32_t>(op));
    text += std::string(" (") + schema::EnumNameOpCode(o->opcode());
    if (o->name() != nullptr) text += ", node '" + o->name()->str() + "'";
    text += ")";
  }
  return text;
}

[[noreturn]] void refuse(const std::string& source, const char* stage, const Model& model, const Error& e) {
  const std::string op = describe_op(model, e.op);
  ErrorLocation where{source, "", "", -1};
  const schema::Model* m = model.schema();
  if (e.op >= 0 && m != nullptr && m->operators() != nullptr && static_cast<uint32_t>(e.op) < m->operators()->size()) {
    const schema::Operator* o = m->operators()->Get(static_cast<uint32_t>(e.op));
    where.op = schema::EnumNameOpCode(o->opcode());
    if (o->name() != nullptr) where.node = o->name()->str();
  }
  throw ConvertError(source + ": internal error: the converter produced a model the runtime refuses at " + stage +
                         op + ": " + status_name(e.status) + ": " + e.message +
                         (e.tensor >= 0 ? " (tensor " + std::to_string(e.tensor) + ")" : std::string()) +
                         "; nothing was written",
                     ErrorCategory::kInternal, where);
}

}  // namespace

ValidationReport validate_emitted_model(const std::vector<uint8_t>& bytes, const std::string& source) {
  ValidationReport report;
  // The runtime wants the model 16-byte aligned, as a device would place it.
  std::unique_ptr<uint8_t, FreeDeleter> copy(
      static_cast<uint8_t*>(std::aligned_alloc(16, (bytes.size() + 15) / 16 * 16 + 16)));
  if (!copy) throw ConvertError(source + ": out of memory validating the model", ErrorCategory::kInternal);
  if (!bytes.empty()) std::memcpy(copy.get(), bytes.data(), bytes.size());
  Model model;
  LoadOptions options;
  options.verify_checksum = true;
  if (model.Load(copy.get(), bytes.size(), options) != Status::kOk) refuse(source, "Load", model, model.error());
  report.arena_bytes = model.arena_size();
  if (model.arena_size() > kMaxValidationArena) return report;
  // Untouched pages of the scratch arena cost no memory.
  const size_t arena_size = static_cast<size_t>(model.arena_size());
  std::unique_ptr<uint8_t, FreeDeleter> arena(static_cast<uint8_t*>(std::aligned_alloc(16, (arena_size + 15) / 16 * 16 + 16)));
  if (!arena) throw ConvertError(source + ": out of memory validating the model", ErrorCategory::kInternal);
  Interpreter interpreter(model, arena.get(), arena_size);
  if (interpreter.Init() != Status::kOk) refuse(source, "Init", model, interpreter.error());
  report.initialized = true;
  return report;
}

}  // namespace floe::conv
