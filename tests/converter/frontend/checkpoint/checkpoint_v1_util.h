// SPDX-License-Identifier: Apache-2.0
// Writers for synthetic V1 checkpoints (the tensor-slices table format): the
// SavedTensorSlices values TF's V1 Saver stores, built field by field from
// saved_tensor_slice.proto / tensor.proto numbers, for cases the corpus lacks
// (partitioned variables, sharded saves, Snappy blocks, every dtype, damage).
#pragma once

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "converter/frontend/checkpoint/slice_key.h"
#include "tests/converter/support/checkpoint_test_util.h"

namespace floe::testing {

// One dimension of a slice: {start, length}; length -1 = the full dimension.
using V1Extent = std::pair<int64_t, int64_t>;
using V1Slice = std::vector<V1Extent>;

inline std::string v1_slice_proto(const V1Slice& slice) {
  std::string proto;
  for (const V1Extent& x : slice) {
    std::string extent;
    if (x.second >= 0) {
      if (x.first != 0) {
        put_tag(extent, 1, 0);
        put_varint(extent, static_cast<uint64_t>(x.first));
      }
      put_tag(extent, 2, 0);
      put_varint(extent, static_cast<uint64_t>(x.second));
    }
    put_len_field(proto, 1, extent);
  }
  return proto;
}

inline std::string v1_slice_key(const std::string& name, const V1Slice& slice) {
  std::vector<conv::ckpt::SliceRange> ranges;
  for (const V1Extent& x : slice) ranges.push_back({x.second < 0 ? 0 : x.first, x.second});
  return conv::ckpt::encode_slice_key(name, ranges);
}

struct V1TensorMeta {
  std::string name;
  int dtype = 1;
  std::vector<int64_t> shape;
  std::vector<V1Slice> slices;
};

// Value of key "": SavedTensorSlices { meta { tensor* versions { producer } } }.
inline std::string v1_meta_value(const std::vector<V1TensorMeta>& tensors, int producer = 1, int min_consumer = 0) {
  std::string meta;
  for (const V1TensorMeta& t : tensors) {
    std::string m;
    put_len_field(m, 1, t.name);
    put_len_field(m, 2, shape_proto(t.shape));
    put_tag(m, 3, 0);
    put_varint(m, static_cast<uint64_t>(t.dtype));
    for (const V1Slice& s : t.slices) put_len_field(m, 4, v1_slice_proto(s));
    put_len_field(meta, 1, m);
  }
  std::string versions;
  put_tag(versions, 1, 0);
  put_varint(versions, static_cast<uint64_t>(producer));
  if (min_consumer != 0) {
    put_tag(versions, 2, 0);
    put_varint(versions, static_cast<uint64_t>(min_consumer));
  }
  put_len_field(meta, 2, versions);
  std::string value;
  put_len_field(value, 1, meta);
  return value;
}

// Value of a slice key: SavedTensorSlices { data { name slice data: TensorProto } }.
inline std::string v1_slice_value(const std::string& name, const V1Slice& slice, const std::string& tensor_proto) {
  std::string saved;
  put_len_field(saved, 1, name);
  put_len_field(saved, 2, v1_slice_proto(slice));
  put_len_field(saved, 3, tensor_proto);
  std::string value;
  put_len_field(value, 2, saved);
  return value;
}

// TensorProto { dtype, float_val (packed) } as TF's V1 writer fills it.
inline std::string v1_float_values(const std::vector<float>& values) {
  std::string proto, packed;
  put_tag(proto, 1, 0);
  put_varint(proto, 1);
  for (float v : values) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    put_le32(packed, bits);
  }
  put_len_field(proto, 5, packed);
  return proto;
}

// TensorProto with `values` as packed varints in `field` (int_val 7, int64_val 10,
// bool_val 11, half_val 13 ...); negative values as 10-byte two's complement.
inline std::string v1_varint_values(int dtype, uint32_t field, const std::vector<int64_t>& values) {
  std::string proto, packed;
  put_tag(proto, 1, 0);
  put_varint(proto, static_cast<uint64_t>(dtype));
  for (int64_t v : values) put_varint(packed, static_cast<uint64_t>(v));
  put_len_field(proto, field, packed);
  return proto;
}

// Serializes a table whose keys are sorted by std::map.
inline std::string v1_table(const std::map<std::string, std::string>& entries, size_t entries_per_block = 1000,
                            std::string (*compress_block)(const std::string&) = nullptr) {
  return build_table({entries.begin(), entries.end()}, entries_per_block, 16, compress_block);
}

}  // namespace floe::testing
