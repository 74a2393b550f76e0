// SPDX-License-Identifier: Apache-2.0
// A model's bytes copied into a 16-byte-aligned buffer and loaded, for tests
// that inspect what Model::Load accepted (status, tensors, regions), or what
// Init() made of it.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/interpreter.h"
#include "runtime/core/model.h"
#include "runtime/tools/model_file.h"

namespace floe::testing {

struct LoadedModel {
  tools::AlignedBytes buffer;
  Model model;
  Status status = Status::kOk;
};

// Heap-held: Model refers to the buffer, so the pair must not move apart.
inline std::unique_ptr<LoadedModel> load_model(const std::vector<uint8_t>& bytes) {
  auto l = std::make_unique<LoadedModel>();
  l->buffer = tools::aligned_bytes(bytes.size());
  std::memcpy(l->buffer.get(), bytes.data(), bytes.size());
  l->status = l->model.Load(l->buffer.get(), bytes.size());
  return l;
}

// What Load, then Init() on an arena of the model's size, made of `bytes`:
// the first failing status (Load's or Init's), its message and op.
struct InitOutcome {
  Status status = Status::kOk;
  std::string message;
  int32_t op = -1;
};

inline InitOutcome init_outcome(const std::vector<uint8_t>& bytes) {
  InitOutcome r;
  const std::unique_ptr<LoadedModel> loaded = load_model(bytes);
  const Error* error = &loaded->model.error();
  r.status = loaded->status;
  tools::AlignedBytes arena;
  std::unique_ptr<Interpreter> interpreter;
  if (r.status == Status::kOk) {
    arena = tools::aligned_bytes(loaded->model.arena_size());
    interpreter = std::make_unique<Interpreter>(loaded->model, arena.get(), loaded->model.arena_size());
    r.status = interpreter->Init();
    error = &interpreter->error();
  }
  if (r.status != Status::kOk) {
    r.message = error->message != nullptr ? error->message : "";
    r.op = error->op;
  }
  return r;
}

}  // namespace floe::testing
