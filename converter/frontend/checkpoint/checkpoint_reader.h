// SPDX-License-Identifier: Apache-2.0
// TensorFlow checkpoints: V2 ("tensor bundles", tf-formats.md §10-11: an .index
// table plus data shards) and V1 (one table per file whose values hold the
// tensors' slices, tensor_slices.h; sharded as P-00000-of-00002 ...). Path
// resolution and sniffing, the verified index, and tensor reads. A V2 index is
// decoded fully at open() and tensor bytes are read from the data shards on
// demand; a V1 file is decoded fully at open(). Every failure is a ConvertError
// naming file, tensor (or key) and byte offset.
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
// state file fall back to <dir of state file>/<basename>. V1 checkpoints are
// recognised by their table magic wherever a V2 prefix is accepted: a V1 file,
// one shard "P-00000-of-00002" or the prefix P of its shards, a shard pattern
// "P-?????-of-00002" (as V1 state files name sharded saves; '?' and '*' match
// within the file name), and a directory holding one V1 save and no .index.
enum class CheckpointFormat { kV2Bundle, kV1Table };

struct CheckpointLocation {
  std::string prefix;  // V2: the bundle prefix; V1: the file, or the prefix of its shards
  CheckpointFormat format = CheckpointFormat::kV2Bundle;
  std::vector<std::string> v1_files;  // V1: every table file, in shard order
};

CheckpointLocation locate_checkpoint(const std::string& path);
// locate_checkpoint(path).prefix.
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
  // V2: has slices (full entry of a partitioned variable). V1 stores every tensor
  // as slices: partitioned when that is more than one slice, or one partial slice.
  bool partitioned = false;
  // For partitioned entries: the stored slices, one extent per dimension each.
  std::vector<std::vector<CheckpointSliceExtent>> slices;
};

class CheckpointReader {
 public:
  // Resolves `path`, reads and verifies the whole index (block CRCs, header, every
  // entry's dtype/shape/shard/bounds against the data files' sizes).
  static CheckpointReader open(const std::string& path);

  const std::string& prefix() const { return prefix_; }
  CheckpointFormat format() const { return format_; }
  // V2: data shards; V1: table files.
  int num_shards() const { return num_shards_; }
  // V2: data file name of a shard, "<prefix>.data-00000-of-00002"; V1: the table file.
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

  // V2: verifies the CRC of every stored tensor (real and slice entries, strings
  // included) in every shard. Returns how many were checked; DT_VARIANT entries
  // (layout not verified against real files) and data-less partitioned full entries
  // are not counted. V1 (block CRCs were checked at open): decodes every stored
  // slice of every tensor and checks its value count; returns the slice count.
  size_t verify_all() const;

 private:
  CheckpointReader() = default;
  void load_index();
  void load_v1_tables(const std::vector<std::string>& files);
  // Bytes of one stored slice (shape `extent`), checked against its dtype and size.
  std::vector<uint8_t> read_slice_bytes(const std::string& key, const CheckpointEntry& e,
                                        const std::vector<CheckpointSliceExtent>& slice,
                                        const std::vector<int64_t>& extent, const std::string& where) const;
  std::vector<uint8_t> read_v1_slice(const std::string& key, const CheckpointEntry& e,
                                     const std::vector<CheckpointSliceExtent>& slice,
                                     const std::vector<int64_t>& extent, const std::string& where) const;
  std::string describe() const;  // "checkpoint '<prefix>'"
  [[noreturn]] void fail_missing_key(const std::string& key) const;
  // Raw stored bytes of a non-partitioned entry after size and CRC checks.
  std::vector<uint8_t> read_verified_bytes(const std::string& key, const CheckpointEntry& e) const;
  void verify_entry(const std::string& key, const CheckpointEntry& e,
                    const ckpt::DataFile& file) const;
  HostTensor assemble_partitioned(const std::string& key, const CheckpointEntry& e) const;
  std::string tensor_location(const std::string& key, const CheckpointEntry& e) const;

  std::string prefix_;
  CheckpointFormat format_ = CheckpointFormat::kV2Bundle;
  std::vector<std::string> v1_files_;
  // V1: each slice key's stored value and the file holding it.
  struct StoredSlice {
    int32_t file = 0;
    std::string value;
  };
  std::map<std::string, StoredSlice> v1_slices_;
  int num_shards_ = 0;
  bool big_endian_ = false;
  std::map<std::string, CheckpointEntry> entries_;        // real tensor keys
  std::map<std::string, CheckpointEntry> slice_entries_;  // OrderedCode slice keys
};

}  // namespace floe::conv
