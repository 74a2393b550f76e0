// SPDX-License-Identifier: Apache-2.0
// Host-side execution of a lowered model (see run_lowered.h).
#include "converter/lower/run_lowered.h"

#include <cstdlib>
#include <cstring>
#include <memory>

#include "converter/emit/emit.h"
#include "converter/ir/error.h"
#include "runtime/core/interpreter.h"

namespace floe::conv {
namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<uint8_t, FreeDeleter>;

AlignedBuffer aligned_copy(const void* data, size_t size) {
  const size_t rounded = (size + 15) / 16 * 16 + 16;
  AlignedBuffer buffer(static_cast<uint8_t*>(std::aligned_alloc(16, rounded)));
  if (!buffer) throw ConvertError("out of memory");
  if (data != nullptr && size > 0) {
    std::memcpy(buffer.get(), data, size);
  } else {
    std::memset(buffer.get(), 0, rounded);
  }
  return buffer;
}

std::string describe(const Error& e) {
  return std::string(status_name(e.status)) + ": " + e.message +
         (e.op >= 0 ? " (op " + std::to_string(e.op) + ")" : std::string());
}

}  // namespace

std::vector<HostTensor> run_lowered(const LoweredModel& lowered, const std::string& context) {
  const std::vector<uint8_t> bytes = emit_model(lowered, "floe-convert (fold)");
  const AlignedBuffer model_buffer = aligned_copy(bytes.data(), bytes.size());
  Model model;
  if (model.Load(model_buffer.get(), bytes.size()) != Status::kOk) {
    throw ConvertError(context + ": folding failed: " + describe(model.error()));
  }
  const size_t arena_size = static_cast<size_t>(model.arena_size());
  const AlignedBuffer arena = aligned_copy(nullptr, arena_size);
  Interpreter interpreter(model, arena.get(), arena_size);
  if (interpreter.Init() != Status::kOk || interpreter.Invoke() != Status::kOk) {
    throw ConvertError(context + ": folding failed: " + describe(interpreter.error()));
  }
  std::vector<HostTensor> outputs;
  for (size_t i = 0; i < interpreter.output_count(); ++i) {
    const TensorView view = interpreter.output(i);
    HostTensor t;
    t.dtype = view.dtype;
    t.shape.assign(view.shape.dims, view.shape.dims + view.shape.rank);
    const auto* data = static_cast<const uint8_t*>(view.data);
    t.data.assign(data, data + view.bytes);
    outputs.push_back(std::move(t));
  }
  return outputs;
}

}  // namespace floe::conv
