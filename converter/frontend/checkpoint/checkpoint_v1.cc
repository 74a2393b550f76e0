// SPDX-License-Identifier: Apache-2.0
// CheckpointReader for V1 checkpoints (tensor_slices.h): every table file is
// read and its block CRCs checked at open(); the meta entries of all shards are
// merged into one tensor list (a partitioned variable may spread its slices over
// shards) and each listed slice's stored value is kept for read(). Invariant
// after open(): every tensor has a fully known shape, every listed slice has the
// tensor's rank and a stored value in exactly one file.
#include <algorithm>
#include <utility>

#include "converter/frontend/checkpoint/checkpoint_reader.h"
#include "converter/frontend/checkpoint/reader_text.h"
#include "converter/frontend/checkpoint/slice_key.h"
#include "converter/frontend/checkpoint/table_reader.h"
#include "converter/frontend/checkpoint/tensor_slices.h"
#include "converter/ir/tf_dtype.h"
#include "converter/ir/error.h"

namespace floe::conv {
namespace {

using ckpt::element_count;
using ckpt::printable_key;
using ckpt::render_shape;
using ckpt::render_slice;

// TF_CHECKPOINT_VERSION: the V1 format's only version.
constexpr int32_t kV1ConsumerVersion = 1;

std::vector<ckpt::SliceRange> slice_ranges(const std::vector<CheckpointSliceExtent>& slice) {
  std::vector<ckpt::SliceRange> ranges;
  for (const CheckpointSliceExtent& x : slice) ranges.push_back({x.start, x.length});
  return ranges;
}

bool is_full_slice(const std::vector<CheckpointSliceExtent>& slice, const std::vector<int64_t>& shape) {
  for (size_t d = 0; d < slice.size(); ++d) {
    if (slice[d].length >= 0 && (slice[d].start != 0 || slice[d].length != shape[d])) return false;
  }
  return true;
}

}  // namespace

void CheckpointReader::load_v1_tables(const std::vector<std::string>& files) {
  v1_files_ = files;
  num_shards_ = static_cast<int>(files.size());
  for (size_t file_index = 0; file_index < files.size(); ++file_index) {
    const std::string& file = files[file_index];
    std::vector<ckpt::TableEntry> table = ckpt::read_table_file(file);
    if (table.empty() || !table.front().key.empty()) {
      throw ConvertError(file + ": V1 checkpoint table has no meta entry (empty key)");
    }
    const ckpt::SavedTensorSliceMeta meta =
        ckpt::decode_saved_tensor_slice_meta(table.front().value, file + ": meta entry (key '')");
    const ckpt::VersionInfo& version = meta.versions;
    if (version.min_consumer > kV1ConsumerVersion) {
      throw ConvertError(file + ": checkpoint version (producer " + std::to_string(version.producer) +
                         ", min_consumer " + std::to_string(version.min_consumer) +
                         ") is newer than this reader (version " + std::to_string(kV1ConsumerVersion) + ")");
    }
    for (int64_t bad : version.bad_consumers) {
      if (bad == kV1ConsumerVersion) {
        throw ConvertError(file + ": checkpoint marks reader version " + std::to_string(bad) + " as bad");
      }
    }
    // Table entries are in strictly increasing key order: find slice values by binary search.
    auto find_value = [&table](const std::string& key) -> std::string* {
      auto it = std::lower_bound(table.begin() + 1, table.end(), key,
                                 [](const ckpt::TableEntry& entry, const std::string& k) { return entry.key < k; });
      return it != table.end() && it->key == key ? &it->value : nullptr;
    };
    for (size_t t = 0; t < meta.tensors.size(); ++t) {
      const ckpt::SavedSliceMeta& tensor = meta.tensors[t];
      const std::string context =
          file + ": meta entry (key ''), tensor " + std::to_string(t) + " '" + printable_key(tensor.name) + "'";
      if (tensor.name.empty()) throw ConvertError(context + ": tensor has no name");
      uint64_t count = 0;
      if (tensor.shape.unknown_rank || !element_count(tensor.shape.dims, count)) {
        throw ConvertError(context + ": shape " + render_shape(tensor.shape.dims) + " is not fully defined");
      }
      auto [it, inserted] = entries_.try_emplace(tensor.name);
      CheckpointEntry& e = it->second;
      if (inserted) {
        e.tf_dtype = tensor.dtype;
        e.shape = tensor.shape.dims;
        e.shard_id = static_cast<int32_t>(file_index);
      } else if (e.tf_dtype != tensor.dtype || e.shape != tensor.shape.dims) {
        throw ConvertError(context + ": " + tf_dtype_name(tensor.dtype) + render_shape(tensor.shape.dims) +
                           " differs from " + tf_dtype_name(e.tf_dtype) + render_shape(e.shape) + " in " +
                           v1_files_[static_cast<size_t>(e.shard_id)]);
      }
      for (const ckpt::TensorSlice& proto_slice : tensor.slices) {
        if (proto_slice.size() != e.shape.size()) {
          throw ConvertError(context + ": slice of rank " + std::to_string(proto_slice.size()) +
                             " for a tensor of shape " + render_shape(e.shape));
        }
        std::vector<CheckpointSliceExtent> slice;
        for (const ckpt::SliceExtent& x : proto_slice) {
          slice.push_back({x.has_length ? x.start : 0, x.has_length ? x.length : -1});
        }
        const std::string slice_key = ckpt::encode_slice_key(tensor.name, slice_ranges(slice));
        std::string* value = find_value(slice_key);
        if (value == nullptr) {
          throw ConvertError(context + ": slice " + render_slice(slice) + " has no entry (key '" +
                             printable_key(slice_key) + "')");
        }
        StoredSlice stored{static_cast<int32_t>(file_index), std::move(*value)};
        if (!v1_slices_.emplace(slice_key, std::move(stored)).second) {
          throw ConvertError(context + ": slice " + render_slice(slice) + " is stored twice");
        }
        e.slices.push_back(std::move(slice));
      }
    }
  }
  for (auto& [name, e] : entries_) {
    e.partitioned = e.slices.size() != 1 || !is_full_slice(e.slices.front(), e.shape);
  }
}

std::vector<uint8_t> CheckpointReader::read_v1_slice(const std::string& key, const CheckpointEntry& e,
                                                     const std::vector<CheckpointSliceExtent>& slice,
                                                     const std::vector<int64_t>& extent,
                                                     const std::string& where) const {
  const std::string slice_key = ckpt::encode_slice_key(key, slice_ranges(slice));
  auto it = v1_slices_.find(slice_key);
  if (it == v1_slices_.end()) throw ConvertError(where + ": slice has no entry");
  const std::string context = data_file_path(it->second.file) + ": tensor '" + printable_key(key) + "' slice " +
                              render_slice(slice) + " (key '" + printable_key(slice_key) + "')";
  const ckpt::SavedSlice saved = ckpt::decode_saved_slice(it->second.value, context);
  if (!saved.name.empty() && saved.name != key) {
    throw ConvertError(context + ": stored slice names tensor '" + printable_key(saved.name) + "'");
  }
  if (saved.has_slice) {
    std::vector<CheckpointSliceExtent> stored;
    for (const ckpt::SliceExtent& x : saved.slice) stored.push_back({x.has_length ? x.start : 0, x.has_length ? x.length : -1});
    const bool same = stored.size() == slice.size() &&
                      std::equal(stored.begin(), stored.end(), slice.begin(), [](const auto& a, const auto& b) {
                        return a.start == b.start && a.length == b.length;
                      });
    if (!same) throw ConvertError(context + ": stored slice is " + render_slice(stored));
  }
  uint64_t count = 1;
  for (int64_t x : extent) count *= static_cast<uint64_t>(x);  // inside the validated shape
  return ckpt::decode_slice_values(saved.data, e.tf_dtype, count, context);
}

}  // namespace floe::conv
