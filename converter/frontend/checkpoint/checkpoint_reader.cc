// SPDX-License-Identifier: Apache-2.0
// CheckpointReader: index loading and validation, key lookup, tensor reads and
// CRC verification. Invariant after open(): every non-partitioned entry has a
// known shape with non-negative dims, a shard id in range, and a byte range that
// lies inside its (existing) data file, so reads need no further bounds logic.
#include "converter/frontend/checkpoint/checkpoint_reader.h"

#include <cstdio>
#include <memory>

#include "converter/frontend/checkpoint/crc32c.h"
#include "converter/frontend/checkpoint/data_file.h"
#include "converter/frontend/checkpoint/reader_text.h"
#include "converter/frontend/checkpoint/table_reader.h"
#include "converter/ir/tf_dtype.h"
#include "converter/frontend/checkpoint/wire.h"
#include "converter/ir/error.h"

namespace floe::conv {
namespace {

using ckpt::element_count;
using ckpt::printable_key;
using ckpt::render_shape;

// kTensorBundleVersion / kTensorBundleMinProducer of TF's tensor_bundle.
constexpr int32_t kBundleConsumerVersion = 1;
constexpr int32_t kBundleMinProducer = 0;
constexpr size_t kMaxKeysInMessage = 20;

std::string hex32(uint32_t value) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", value);
  return buf;
}

void byte_swap_elements(std::vector<uint8_t>& data, size_t element_size) {
  if (element_size <= 1) return;
  for (size_t i = 0; i + element_size <= data.size(); i += element_size) {
    for (size_t a = i, b = i + element_size - 1; a < b; ++a, --b) std::swap(data[a], data[b]);
  }
}

}  // namespace

std::string CheckpointReader::describe() const { return "checkpoint '" + prefix_ + "'"; }

std::string CheckpointReader::data_file_path(int shard_id) const {
  if (format_ == CheckpointFormat::kV1Table) {
    return shard_id >= 0 && static_cast<size_t>(shard_id) < v1_files_.size() ? v1_files_[static_cast<size_t>(shard_id)]
                                                                              : prefix_;
  }
  char suffix[64];
  std::snprintf(suffix, sizeof(suffix), ".data-%05d-of-%05d", shard_id, num_shards_);
  return prefix_ + suffix;
}

CheckpointReader CheckpointReader::open(const std::string& path) {
  CheckpointReader reader;
  const CheckpointLocation location = locate_checkpoint(path);
  reader.prefix_ = location.prefix;
  reader.format_ = location.format;
  if (location.format == CheckpointFormat::kV1Table) {
    reader.load_v1_tables(location.v1_files);
  } else {
    reader.load_index();
  }
  return reader;
}

void CheckpointReader::load_index() {
  const std::string index_path = prefix_ + ".index";
  std::vector<ckpt::TableEntry> table = ckpt::read_table_file(index_path);
  if (table.empty() || !table.front().key.empty()) {
    throw ConvertError(index_path + ": missing the bundle header entry (empty key)");
  }
  const ckpt::BundleHeader header =
      ckpt::decode_bundle_header(table.front().value, index_path + ": header entry");
  if (header.num_shards <= 0) {
    throw ConvertError(index_path +
                       ": header has num_shards = " + std::to_string(header.num_shards));
  }
  if (header.endianness != 0 && header.endianness != 1) {
    throw ConvertError(index_path + ": header has unknown endianness " +
                       std::to_string(header.endianness));
  }
  const ckpt::VersionInfo& version = header.version;
  if (version.producer < kBundleMinProducer || version.min_consumer > kBundleConsumerVersion) {
    throw ConvertError(
        index_path + ": bundle version (producer " + std::to_string(version.producer) +
        ", min_consumer " + std::to_string(version.min_consumer) +
        ") is newer than this reader (version " + std::to_string(kBundleConsumerVersion) + ")");
  }
  for (int64_t bad : version.bad_consumers) {
    if (bad == kBundleConsumerVersion) {
      throw ConvertError(index_path + ": bundle marks reader version " + std::to_string(bad) +
                         " as bad");
    }
  }
  num_shards_ = header.num_shards;
  big_endian_ = header.endianness == 1;

  // Keyed by shard id: a corrupt num_shards must not size an allocation.
  std::map<int32_t, uint64_t> shard_sizes;
  for (size_t i = 1; i < table.size(); ++i) {
    const std::string& key = table[i].key;
    const std::string context = index_path + ": entry '" + printable_key(key) + "'";
    const ckpt::BundleEntry proto = ckpt::decode_bundle_entry(table[i].value, context);
    CheckpointEntry e;
    e.tf_dtype = proto.dtype;
    e.shape = proto.shape.dims;
    e.partitioned = !proto.slices.empty();
    uint64_t count = 0;
    if (proto.shape.unknown_rank || !element_count(e.shape, count)) {
      throw ConvertError(context + ": shape " + render_shape(e.shape) + " is not fully defined");
    }
    if (e.partitioned) {
      for (const ckpt::TensorSlice& slice : proto.slices) {
        if (slice.size() != e.shape.size()) {
          throw ConvertError(context + ": slice of rank " + std::to_string(slice.size()) +
                             " for a tensor of shape " + render_shape(e.shape));
        }
        std::vector<CheckpointSliceExtent> extents;
        for (const ckpt::SliceExtent& x : slice) {
          extents.push_back({x.has_length ? x.start : 0, x.has_length ? x.length : -1});
        }
        e.slices.push_back(std::move(extents));
      }
      entries_.emplace(key, std::move(e));
      continue;
    }
    if (proto.shard_id < 0 || proto.shard_id >= num_shards_ || proto.offset < 0 || proto.size < 0) {
      throw ConvertError(context + ": invalid location (shard " + std::to_string(proto.shard_id) +
                         " of " + std::to_string(num_shards_) + ", offset " +
                         std::to_string(proto.offset) + ", size " + std::to_string(proto.size) +
                         ")");
    }
    e.shard_id = proto.shard_id;
    e.offset = static_cast<uint64_t>(proto.offset);
    e.size = static_cast<uint64_t>(proto.size);
    e.masked_crc32c = proto.masked_crc32c;
    auto shard = shard_sizes.find(e.shard_id);
    if (shard == shard_sizes.end()) {
      shard =
          shard_sizes.emplace(e.shard_id, ckpt::DataFile(data_file_path(e.shard_id)).size()).first;
    }
    const uint64_t file_size = shard->second;
    if (e.offset > file_size || e.size > file_size - e.offset) {
      throw ConvertError(data_file_path(e.shard_id) + ": tensor '" + printable_key(key) +
                         "' at offset " + std::to_string(e.offset) + " size " +
                         std::to_string(e.size) + " runs past the end of the file (" +
                         std::to_string(file_size) + " bytes; truncated data file?)");
    }
    // Slice keys start with 0x00 (OrderedCode number 0) and sort before every real key.
    auto& target = key[0] == '\0' ? slice_entries_ : entries_;
    target.emplace(key, std::move(e));
  }
}

std::vector<std::string> CheckpointReader::keys() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& item : entries_) out.push_back(item.first);
  return out;
}

bool CheckpointReader::contains(const std::string& key) const { return entries_.count(key) != 0; }

void CheckpointReader::fail_missing_key(const std::string& key) const {
  std::string available;
  size_t listed = 0;
  for (const auto& item : entries_) {
    if (listed == kMaxKeysInMessage) {
      available += ", ... (" + std::to_string(entries_.size() - listed) + " more)";
      break;
    }
    available += (listed ? ", " : "") + printable_key(item.first);
    ++listed;
  }
  throw ConvertError(describe() + ": no tensor named '" + printable_key(key) +
                     "' (available: " + (available.empty() ? "none" : available) + ")");
}

const CheckpointEntry& CheckpointReader::entry(const std::string& key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) fail_missing_key(key);
  return it->second;
}

std::string CheckpointReader::tensor_location(const std::string& key,
                                              const CheckpointEntry& e) const {
  return data_file_path(e.shard_id) + ": tensor '" + printable_key(key) + "' at offset " +
         std::to_string(e.offset) + " size " + std::to_string(e.size);
}

std::vector<uint8_t> CheckpointReader::read_verified_bytes(const std::string& key,
                                                           const CheckpointEntry& e) const {
  const size_t element_size = tf_dtype_fixed_size(e.tf_dtype);
  uint64_t count = 0;
  element_count(e.shape, count);  // validated at open
  if (element_size == 0 || count > e.size / element_size || count * element_size != e.size) {
    throw ConvertError(tensor_location(key, e) + ": size does not match " +
                       tf_dtype_name(e.tf_dtype) + render_shape(e.shape) + " (" +
                       std::to_string(count) + " elements of " + std::to_string(element_size) +
                       " bytes)");
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(e.size));
  ckpt::DataFile file(data_file_path(e.shard_id));
  file.read_exact(e.offset, bytes.data(), bytes.size());
  const uint32_t computed = ckpt::crc32c(bytes.data(), bytes.size());
  const uint32_t stored = ckpt::crc32c_unmask(e.masked_crc32c);
  if (computed != stored) {
    throw ConvertError(tensor_location(key, e) + ": CRC32C mismatch (stored " + hex32(stored) +
                       ", computed " + hex32(computed) + ")");
  }
  // CRCs cover the bytes as stored; swap only afterwards.
  if (big_endian_) byte_swap_elements(bytes, element_size);
  return bytes;
}

HostTensor CheckpointReader::read(const std::string& key) const {
  const CheckpointEntry& e = entry(key);
  const DType dtype = tf_dtype_to_floe(e.tf_dtype);
  if (dtype == DType::kInvalid) {
    throw ConvertError(describe() + ": tensor '" + printable_key(key) + "' has dtype " +
                       tf_dtype_name(e.tf_dtype) + ", which floe cannot use for inference");
  }
  if (e.partitioned || format_ == CheckpointFormat::kV1Table) return assemble_partitioned(key, e);
  HostTensor tensor;
  tensor.dtype = dtype;
  tensor.shape = e.shape;
  tensor.data = read_verified_bytes(key, e);
  return tensor;
}

void CheckpointReader::verify_entry(const std::string& key, const CheckpointEntry& e,
                                    const ckpt::DataFile& file) const {
  const uint32_t stored = ckpt::crc32c_unmask(e.masked_crc32c);
  uint32_t computed = 0;
  if (e.tf_dtype == kTfString) {
    uint64_t count = 0;
    element_count(e.shape, count);
    computed = ckpt::string_tensor_crc32c(file, e.offset, e.size, count, tensor_location(key, e));
  } else {
    const size_t element_size = tf_dtype_fixed_size(e.tf_dtype);
    uint64_t count = 0;
    element_count(e.shape, count);
    if (element_size != 0 && (count > e.size / element_size || count * element_size != e.size)) {
      throw ConvertError(tensor_location(key, e) + ": size does not match " +
                         tf_dtype_name(e.tf_dtype) + render_shape(e.shape));
    }
    computed = file.crc32c_of_range(e.offset, e.size);
  }
  if (computed != stored) {
    throw ConvertError(tensor_location(key, e) + ": CRC32C mismatch (stored " + hex32(stored) +
                       ", computed " + hex32(computed) + ")");
  }
}

size_t CheckpointReader::verify_all() const {
  if (format_ == CheckpointFormat::kV1Table) {
    size_t decoded = 0;
    for (const auto& [key, e] : entries_) {
      for (const std::vector<CheckpointSliceExtent>& slice : e.slices) {
        std::vector<int64_t> extent;
        for (size_t d = 0; d < slice.size() && d < e.shape.size(); ++d) {
          extent.push_back(slice[d].length < 0 ? e.shape[d] : slice[d].length);
        }
        read_v1_slice(key, e, slice, extent, describe() + ": tensor '" + printable_key(key) + "'");
        ++decoded;
      }
    }
    return decoded;
  }
  // Open each shard once: sharded saves can hold thousands of small tensors.
  std::map<int32_t, std::unique_ptr<ckpt::DataFile>> shards;
  size_t verified = 0;
  for (const auto* table : {&slice_entries_, &entries_}) {
    for (const auto& [key, e] : *table) {
      if (e.partitioned || e.tf_dtype == kTfVariant) continue;
      auto& shard = shards[e.shard_id];
      if (!shard) shard = std::make_unique<ckpt::DataFile>(data_file_path(e.shard_id));
      verify_entry(key, e, *shard);
      ++verified;
    }
  }
  return verified;
}

}  // namespace floe::conv
