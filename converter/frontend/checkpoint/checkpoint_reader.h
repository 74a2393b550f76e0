// SPDX-License-Identifier: Apache-2.0
// TensorFlow V2 checkpoints ("tensor bundles", tf-formats.md §10-11): prefix
// resolution, the verified index, and tensor reads with CRC32C checks. The index
// is decoded fully at open(); tensor bytes are read from the data shards on
// demand. Every failure is a ConvertError naming file, tensor and byte offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "converter/ir/host_tensor.h"

namespace floe::conv {
namespace ckpt {
class DataFile;
}

// Accepts a prefix ("dir/model.ckpt-1000"), a directory holding a `checkpoint`
// state file (without one: a single .index file, or a SavedModel's
// variables/variables), the state file itself, or a path ending in .index /
// .data-NNNNN-of-NNNNN / .meta (suffix stripped). Stale absolute paths in the
// state file fall back to <dir of state file>/<basename>. A V1 checkpoint throws
// "...: checkpoint V1 format is not supported; re-save with
// tf.train.Saver(write_version=V2)".
std::string resolve_checkpoint_prefix(const std::string& path);

// One dimension of a stored slice of a partitioned variable; length -1 = full dimension.
struct CheckpointSliceExtent {
  int64_t start = 0;
  int64_t length = -1;
};

struct CheckpointEntry {
  int tf_dtype = 0;  // TensorFlow DataType enum value as stored
  std::vector<int64_t> shape;
  int32_t shard_id = 0;
  uint64_t offset = 0, size = 0;
  uint32_t masked_crc32c = 0;
  bool partitioned = false;  // has slices (full entry of a partitioned variable)
  // For partitioned entries: the stored slices, one extent per dimension each.
  std::vector<std::vector<CheckpointSliceExtent>> slices;
};

class CheckpointReader {
 public:
  // Resolves `path`, reads and verifies the whole index (block CRCs, header, every
  // entry's dtype/shape/shard/bounds against the data files' sizes).
  static CheckpointReader open(const std::string& path);

  const std::string& prefix() const { return prefix_; }
  int num_shards() const { return num_shards_; }
  // Data file name of a shard: "<prefix>.data-00000-of-00002".
  std::string data_file_path(int shard_id) const;

  // Real tensor keys, sorted bytewise; no header "" and no slice keys (0x00-prefixed).
  std::vector<std::string> keys() const;
  bool contains(const std::string& key) const;
  // Throws ConvertError listing available keys when missing.
  const CheckpointEntry& entry(const std::string& key) const;

  // Reads a tensor's bytes, checks size == N*elem_size and the CRC32C, maps the TF
  // dtype to floe::DType. Partitioned variables are assembled from their slices.
  // DT_STRING and other dtypes floe cannot run throw a clear ConvertError.
  HostTensor read(const std::string& key) const;

  // Verifies the CRC of every stored tensor (real and slice entries, strings
  // included) in every shard. Returns how many were checked; DT_VARIANT entries
  // (layout not verified against real files) and data-less partitioned full entries
  // are not counted.
  size_t verify_all() const;

 private:
  CheckpointReader() = default;
  void load_index();
  std::string describe() const;  // "checkpoint '<prefix>'"
  [[noreturn]] void fail_missing_key(const std::string& key) const;
  // Raw stored bytes of a non-partitioned entry after size and CRC checks.
  std::vector<uint8_t> read_verified_bytes(const std::string& key, const CheckpointEntry& e) const;
  void verify_entry(const std::string& key, const CheckpointEntry& e,
                    const ckpt::DataFile& file) const;
  HostTensor assemble_partitioned(const std::string& key, const CheckpointEntry& e) const;
  std::string tensor_location(const std::string& key, const CheckpointEntry& e) const;

  std::string prefix_;
  int num_shards_ = 0;
  bool big_endian_ = false;
  std::map<std::string, CheckpointEntry> entries_;        // real tensor keys
  std::map<std::string, CheckpointEntry> slice_entries_;  // OrderedCode slice keys
};

}  // namespace floe::conv
