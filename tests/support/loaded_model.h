// SPDX-License-Identifier: Apache-2.0
// A model's bytes copied into a 16-byte-aligned buffer and loaded, for tests
// that inspect what Model::Load accepted (status, tensors, regions).
#pragma once

#include <cstring>
#include <memory>
#include <vector>

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

}  // namespace floe::testing
