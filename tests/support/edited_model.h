// SPDX-License-Identifier: Apache-2.0
// A model's bytes rewritten through the object API (unpack, edit, pack), for
// tests that hand Load / Init a model the converter would never write: a
// broken plan, a field out of its range, an op on a backend that cannot run it.
// The checksum is not recomputed (Model::Load checks it only when asked).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "schemas/floe_obj_generated.h"

namespace floe::testing {

inline std::vector<uint8_t> edited_model(const uint8_t* bytes,
                                         const std::function<void(schema_obj::ModelT&)>& edit) {
  std::unique_ptr<schema_obj::ModelT> model(schema_obj::GetModel(bytes)->UnPack());
  edit(*model);
  flatbuffers::FlatBufferBuilder fbb;
  schema_obj::FinishModelBuffer(fbb, schema_obj::Model::Pack(fbb, model.get()));
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

// Turns constant tensor `t` into a model input the caller writes before each
// Invoke(): placed after the activations (the arena grows by its size), live
// over the whole run. For checks that must hold of constants only, since an
// op could change any other tensor between Init() and Invoke().
inline void make_constant_an_input(schema_obj::ModelT& model, int32_t t) {
  schema_obj::TensorT& tensor = *model.tensors[static_cast<size_t>(t)];
  const uint64_t offset = (model.arena_size + 15) / 16 * 16;
  tensor.is_constant = false;
  tensor.region = 0;
  tensor.offset = offset;
  tensor.live_first_op = tensor.live_last_op = -1;
  if (tensor.name.empty()) tensor.name = "constant_made_input";
  model.arena_size = offset + (tensor.size + 15) / 16 * 16;
  if (!model.region_sizes.empty()) model.region_sizes[0] = model.arena_size;
  model.inputs.push_back(t);
}

}  // namespace floe::testing
