// SPDX-License-Identifier: Apache-2.0
// The messages of a V1 checkpoint (TensorFlow's "tensor slices" table, written by
// Saver(write_version=V1) and by TF before 0.12): every table value is a
// SavedTensorSlices. Key "" holds its `meta` (per tensor: name, shape, dtype and
// the slices stored), every other key is a slice key (slice_key.h) whose value
// holds `data`: the slice's values as a TensorProto in its typed repeated field.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "converter/frontend/checkpoint/wire.h"

namespace floe::conv::ckpt {

// SavedSliceMeta: one tensor as listed by the meta entry.
struct SavedSliceMeta {
  std::string name;
  TensorShape shape;
  int32_t dtype = 0;
  std::vector<TensorSlice> slices;
};

struct SavedTensorSliceMeta {
  std::vector<SavedSliceMeta> tensors;
  VersionInfo versions;
};

// SavedSlice: the data of one stored slice. `data` is the undecoded TensorProto.
struct SavedSlice {
  std::string name;
  TensorSlice slice;
  bool has_slice = false;
  std::string_view data;
  bool has_data = false;
};

// Decodes the value under key "": SavedTensorSlices with `meta` set.
SavedTensorSliceMeta decode_saved_tensor_slice_meta(std::string_view value, const std::string& context);
// Decodes a slice key's value: SavedTensorSlices with `data` set. The returned
// `data` views into `value`.
SavedSlice decode_saved_slice(std::string_view value, const std::string& context);

// Decodes the values of a TensorProto holding `count` elements of `tf_dtype` into
// TensorFlow's in-memory layout (little-endian, tf_dtype_fixed_size bytes each).
// Takes the dtype's typed repeated field (float_val, int_val, half_val ...) or,
// when present, tensor_content. A count that differs is an error; a TensorProto
// whose dtype field is set must name `tf_dtype`. Strings are counted, not kept:
// the result is empty for DT_STRING.
std::vector<uint8_t> decode_slice_values(std::string_view tensor_proto, int tf_dtype, uint64_t count,
                                         const std::string& context);

}  // namespace floe::conv::ckpt
