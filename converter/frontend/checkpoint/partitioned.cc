// SPDX-License-Identifier: Apache-2.0
// Assembly of partitioned (sliced) variables, tf-formats.md §11.8: the full entry
// lists its slices; each slice is an ordinary entry under an OrderedCode key and
// is copied into its [start, start+length) box of the full row-major tensor. The
// slices must tile the tensor exactly: overlaps and gaps are errors.
#include <algorithm>
#include <limits>

#include "converter/frontend/checkpoint/checkpoint_reader.h"
#include "converter/frontend/checkpoint/slice_key.h"
#include "converter/frontend/checkpoint/tf_dtype.h"
#include "converter/ir/error.h"

namespace floe::conv {
namespace {

std::string render_slice(const std::vector<CheckpointSliceExtent>& slice) {
  std::string out;
  for (size_t d = 0; d < slice.size(); ++d) {
    if (d) out += ":";
    out += slice[d].length < 0
               ? "-"
               : std::to_string(slice[d].start) + "," + std::to_string(slice[d].length);
  }
  return out;
}

}  // namespace

HostTensor CheckpointReader::assemble_partitioned(const std::string& key,
                                                  const CheckpointEntry& e) const {
  const size_t element_size = tf_dtype_fixed_size(e.tf_dtype);
  const size_t rank = e.shape.size();
  if (rank == 0)
    throw ConvertError(describe() + ": scalar tensor '" + key + "' claims to be partitioned");
  HostTensor full;
  full.dtype = tf_dtype_to_floe(e.tf_dtype);
  full.shape = e.shape;
  const uint64_t total = static_cast<uint64_t>(full.num_elements());  // shape validated at open()
  if (total > std::numeric_limits<size_t>::max() / element_size) {
    throw ConvertError(describe() + ": partitioned tensor '" + key + "' is too large");
  }
  full.data.assign(static_cast<size_t>(total) * element_size, 0);
  std::vector<bool> covered(static_cast<size_t>(total), false);

  // Row-major strides (in elements) of the full tensor.
  std::vector<uint64_t> stride(rank, 1);
  for (size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * static_cast<uint64_t>(e.shape[d]);

  for (const std::vector<CheckpointSliceExtent>& slice : e.slices) {
    const std::string where =
        describe() + ": partitioned tensor '" + key + "' slice " + render_slice(slice);
    std::vector<ckpt::SliceRange> ranges;
    std::vector<int64_t> begin(rank), extent(rank);
    for (size_t d = 0; d < rank; ++d) {
      const CheckpointSliceExtent& x = slice[d];
      ranges.push_back({x.start, x.length});
      begin[d] = x.length < 0 ? 0 : x.start;
      extent[d] = x.length < 0 ? e.shape[d] : x.length;
      if (begin[d] < 0 || extent[d] < 0 || begin[d] > e.shape[d] ||
          extent[d] > e.shape[d] - begin[d]) {
        throw ConvertError(where + ": extent lies outside shape " + std::to_string(d) +
                           " of the tensor");
      }
    }
    const std::string slice_key = ckpt::encode_slice_key(key, ranges);
    auto it = slice_entries_.find(slice_key);
    if (it == slice_entries_.end())
      throw ConvertError(where + ": slice entry missing from the index");
    const CheckpointEntry& part = it->second;
    if (part.tf_dtype != e.tf_dtype || part.shape != extent) {
      throw ConvertError(where + ": slice entry has dtype " + tf_dtype_name(part.tf_dtype) +
                         " and a shape that does not match the slice");
    }
    const std::vector<uint8_t> bytes =
        read_verified_bytes(key + " slice " + render_slice(slice), part);

    // Copy one innermost run at a time; `index` walks the outer dims of the slice box.
    uint64_t slice_count = 1;
    for (int64_t x : extent) slice_count *= static_cast<uint64_t>(x);
    if (slice_count == 0) continue;
    const uint64_t run = static_cast<uint64_t>(extent[rank - 1]);
    std::vector<int64_t> index(rank, 0);
    for (uint64_t done = 0; done < slice_count; done += run) {
      uint64_t dest = 0;
      for (size_t d = 0; d < rank; ++d)
        dest += static_cast<uint64_t>(begin[d] + index[d]) * stride[d];
      for (uint64_t i = 0; i < run; ++i) {
        if (covered[dest + i]) throw ConvertError(where + ": overlaps another slice");
        covered[dest + i] = true;
      }
      std::copy_n(bytes.data() + done * element_size, run * element_size,
                  full.data.data() + dest * element_size);
      for (size_t d = rank - 1; d-- > 0;) {  // odometer over dims [0, rank-1)
        if (++index[d] < extent[d]) break;
        index[d] = 0;
      }
    }
  }
  for (uint64_t i = 0; i < total; ++i) {
    if (!covered[i]) {
      throw ConvertError(describe() + ": partitioned tensor '" + key +
                         "' is not fully covered by its " + std::to_string(e.slices.size()) +
                         " slices (element " + std::to_string(i) + " missing)");
    }
  }
  return full;
}

}  // namespace floe::conv
