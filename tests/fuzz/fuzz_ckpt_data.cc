// SPDX-License-Identifier: Apache-2.0
// Converter harness for checkpoint data shards and the entries that point into
// them. The input is structured, so the fuzzer steers the fields the reader
// must distrust instead of fighting the index CRCs:
//   byte 0      shard count (1 or 2) and header flags (endianness, version)
//   then 1..4 entries, each: key choice, TF dtype, rank + dims, shard id,
//               offset, size, and whether the stored CRC is the true CRC of
//               [offset, offset+size) or 4 fuzzed bytes
//   the rest    the data shard bytes (split in two for 2 shards)
// The harness writes a well-formed .index with those entries (correct block
// CRCs) and the shard files, then runs the checkpoint reader and the conv_seed
// conversion exactly as floe-convert does. Only ConvertError is clean.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "schemas/contract/checksum.h"
#include "tests/fuzz/ckpt_fixture.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using floe::fuzz::put_varint;

// Reads fields from the front of the input; runs dry as zeros.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(byte()) << (8 * i);
    return v;
  }
  std::string rest() {
    std::string s(reinterpret_cast<const char*>(data_ + pos_), size_ - std::min(pos_, size_));
    pos_ = size_;
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

void put_tag(std::string* out, uint32_t field, uint32_t wire) { put_varint(out, (uint64_t{field} << 3) | wire); }

void put_len_field(std::string* out, uint32_t field, const std::string& bytes) {
  put_tag(out, field, 2);
  put_varint(out, bytes.size());
  *out += bytes;
}

struct Entry {
  std::string key;
  std::string proto;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in(data, size);
  const uint8_t flags = in.byte();
  const int shards = 1 + (flags & 1);
  std::string header;
  put_tag(&header, 1, 0);
  put_varint(&header, static_cast<uint64_t>(shards));
  if (flags & 2) {  // BIG endianness
    put_tag(&header, 2, 0);
    put_varint(&header, 1);
  }
  std::string version;
  put_tag(&version, 1, 0);
  put_varint(&version, (flags & 4) ? 7 : 1);  // producer
  if (flags & 8) {                             // min_consumer newer than any reader
    put_tag(&version, 2, 0);
    put_varint(&version, 99);
  }
  put_len_field(&header, 3, version);

  static const char* const kKeys[] = {"kernel", "kernel/Adam", "bias", "global_step"};
  static const int kDtypes[] = {1, 2, 3, 9, 7, 10, 19, 14, 4, 6, 5, 21, 0, 100};
  const int entry_count = 1 + (in.byte() & 3);
  struct Raw {
    std::string key;
    int dtype;
    std::vector<int64_t> dims;
    int shard;
    uint32_t offset, size;
    bool true_crc;
    uint32_t crc;
  };
  std::vector<Raw> raws;
  for (int e = 0; e < entry_count; ++e) {
    Raw r;
    const uint8_t k = in.byte();
    r.key = k < 192 ? kKeys[k % 4] : "x" + std::to_string(k);
    const uint8_t d = in.byte();
    r.dtype = d < 224 ? kDtypes[d % 14] : d;
    const int rank = in.byte() % 6;
    for (int i = 0; i < rank; ++i) {
      const uint8_t lo = in.byte(), hi = in.byte();
      r.dims.push_back(hi == 0xFF ? -1 : (static_cast<int64_t>(hi) << 8 | lo) % 4097);
    }
    const uint8_t s = in.byte();
    r.shard = s < 240 ? s % shards : s;
    r.offset = in.u32() % 4096;
    r.size = in.u32() % 8192;
    r.true_crc = (in.byte() & 7) != 0;
    r.crc = in.u32();
    raws.push_back(r);
  }
  const std::string bytes = in.rest();
  const std::string shard_bytes[2] = {shards == 1 ? bytes : bytes.substr(0, bytes.size() / 2),
                                      shards == 1 ? std::string() : bytes.substr(bytes.size() / 2)};

  std::map<std::string, std::string> entries;  // sorted, unique keys
  for (const Raw& r : raws) {
    std::string e;
    put_tag(&e, 1, 0);
    put_varint(&e, static_cast<uint64_t>(r.dtype));
    std::string shape;
    for (int64_t dim : r.dims) {
      std::string d;
      put_tag(&d, 1, 0);
      put_varint(&d, static_cast<uint64_t>(dim));
      put_len_field(&shape, 2, d);
    }
    put_len_field(&e, 2, shape);
    put_tag(&e, 3, 0);
    put_varint(&e, static_cast<uint64_t>(r.shard));
    put_tag(&e, 4, 0);
    put_varint(&e, r.offset);
    put_tag(&e, 5, 0);
    put_varint(&e, r.size);
    uint32_t crc = r.crc;
    const std::string& shard = shard_bytes[r.shard < shards && r.shard < 2 ? r.shard : 0];
    if (r.true_crc && r.offset <= shard.size() && r.size <= shard.size() - r.offset) {
      crc = floe::fuzz::masked_crc32c(shard.data() + r.offset, r.size);
    }
    put_tag(&e, 6, 5);
    floe::fuzz::put_le32(&e, crc);
    entries[r.key] = e;
  }
  std::vector<std::pair<std::string, std::string>> sorted = {{"", header}};
  sorted.insert(sorted.end(), entries.begin(), entries.end());
  const std::string index = floe::fuzz::build_table(sorted);

  const std::string prefix = floe::fuzz::scratch_dir() + "/data.ckpt";
  floe::fuzz::write_file(prefix + ".index", reinterpret_cast<const uint8_t*>(index.data()), index.size());
  for (int s = 0; s < shards; ++s) {
    const std::string name = prefix + ".data-0000" + std::to_string(s) + "-of-0000" + std::to_string(shards);
    floe::fuzz::write_file(name, reinterpret_cast<const uint8_t*>(shard_bytes[s].data()), shard_bytes[s].size());
  }
  // A stale 2-shard file from an earlier input must not be found by a 1-shard one (names differ).
  floe::fuzz::convert_with_checkpoint(prefix);
  return 0;
}
