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

}  // namespace floe::testing
