// SPDX-License-Identifier: Apache-2.0
// Assembly of a tensor from its stored slices (tf-formats.md §11.8): a V2
// partitioned variable's full entry lists its slices, each an ordinary entry
// under an OrderedCode key; a V1 checkpoint stores every tensor that way (one
// full slice when it is not partitioned). Each slice is copied into its
// [start, start+length) box of the full row-major tensor. The slices must tile
// the tensor exactly: overlaps and gaps are errors naming the tensor.
#include <algorithm>
#include <limits>

#include "converter/frontend/checkpoint/checkpoint_reader.h"
#include "converter/frontend/checkpoint/reader_text.h"
#include "converter/frontend/checkpoint/slice_key.h"
#include "converter/ir/tf_dtype.h"
#include "converter/ir/error.h"

namespace floe::conv {

using ckpt::printable_key;
using ckpt::render_slice;

std::vector<uint8_t> CheckpointReader::read_slice_bytes(const std::string& key, const CheckpointEntry& e,
                                                        const std::vector<CheckpointSliceExtent>& slice,
                                                        const std::vector<int64_t>& extent,
                                                        const std::string& where) const {
  if (format_ == CheckpointFormat::kV1Table) return read_v1_slice(key, e, slice, extent, where);
  std::vector<ckpt::SliceRange> ranges;
  for (const CheckpointSliceExtent& x : slice) ranges.push_back({x.start, x.length});
  auto it = slice_entries_.find(ckpt::encode_slice_key(key, ranges));
  if (it == slice_entries_.end()) throw ConvertError(where + ": slice entry missing from the index");
  const CheckpointEntry& part = it->second;
  if (part.tf_dtype != e.tf_dtype || part.shape != extent) {
    throw ConvertError(where + ": slice entry has dtype " + tf_dtype_name(part.tf_dtype) +
                       " and a shape that does not match the slice");
  }
  return read_verified_bytes(key + " slice " + render_slice(slice), part);
}

HostTensor CheckpointReader::assemble_partitioned(const std::string& key, const CheckpointEntry& e) const {
  const size_t element_size = tf_dtype_fixed_size(e.tf_dtype);
  const size_t rank = e.shape.size();
  const std::string tensor = describe() + ": " + (e.partitioned ? "partitioned tensor '" : "tensor '") +
                             printable_key(key) + "'";
  if (rank == 0 && format_ != CheckpointFormat::kV1Table) {
    throw ConvertError(describe() + ": scalar tensor '" + printable_key(key) + "' claims to be partitioned");
  }
  HostTensor full;
  full.dtype = tf_dtype_to_floe(e.tf_dtype);
  full.shape = e.shape;
  const uint64_t total = static_cast<uint64_t>(full.num_elements());  // shape validated at open()
  if (total > std::numeric_limits<size_t>::max() / element_size) {
    throw ConvertError(tensor + " is too large");
  }

  // Row-major strides (in elements) of the full tensor.
  std::vector<uint64_t> stride(rank, 1);
  for (size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * static_cast<uint64_t>(e.shape[d]);

  // First every slice's bytes (each sized by its stored data), so that a shape
  // the slices cannot cover is refused before the full tensor is allocated.
  struct Part {
    std::vector<int64_t> begin, extent;
    std::vector<uint8_t> bytes;
    std::string where;
  };
  std::vector<Part> parts;
  uint64_t stored = 0;
  for (const std::vector<CheckpointSliceExtent>& slice : e.slices) {
    Part part;
    part.where = tensor + " slice " + render_slice(slice);
    if (slice.size() != rank) {
      throw ConvertError(part.where + ": slice of rank " + std::to_string(slice.size()) + " for a tensor of rank " +
                         std::to_string(rank));
    }
    part.begin.resize(rank);
    part.extent.resize(rank);
    for (size_t d = 0; d < rank; ++d) {
      const CheckpointSliceExtent& x = slice[d];
      part.begin[d] = x.length < 0 ? 0 : x.start;
      part.extent[d] = x.length < 0 ? e.shape[d] : x.length;
      if (part.begin[d] < 0 || part.extent[d] < 0 || part.begin[d] > e.shape[d] ||
          part.extent[d] > e.shape[d] - part.begin[d]) {
        throw ConvertError(part.where + ": extent lies outside dimension " + std::to_string(d) + " of the tensor");
      }
    }
    part.bytes = read_slice_bytes(key, e, slice, part.extent, part.where);
    stored += part.bytes.size() / element_size;
    parts.push_back(std::move(part));
  }
  if (stored < total) {
    throw ConvertError(tensor + " is not fully covered by its " + std::to_string(e.slices.size()) + " slice(s) (" +
                       std::to_string(stored) + " of " + std::to_string(total) + " elements stored)");
  }

  full.data.assign(static_cast<size_t>(total) * element_size, 0);
  std::vector<bool> covered(static_cast<size_t>(total), false);
  for (const Part& part : parts) {
    // Copy one innermost run at a time; `index` walks the outer dims of the slice box.
    uint64_t slice_count = 1;
    for (int64_t x : part.extent) slice_count *= static_cast<uint64_t>(x);
    if (slice_count == 0) continue;
    const uint64_t run = rank == 0 ? 1 : static_cast<uint64_t>(part.extent[rank - 1]);
    std::vector<int64_t> index(rank, 0);
    for (uint64_t done = 0; done < slice_count; done += run) {
      uint64_t dest = 0;
      for (size_t d = 0; d < rank; ++d) dest += static_cast<uint64_t>(part.begin[d] + index[d]) * stride[d];
      for (uint64_t i = 0; i < run; ++i) {
        if (covered[dest + i]) throw ConvertError(part.where + ": overlaps another slice");
        covered[dest + i] = true;
      }
      std::copy_n(part.bytes.data() + done * element_size, run * element_size, full.data.data() + dest * element_size);
      for (size_t d = rank - 1; rank > 1 && d-- > 0;) {  // odometer over dims [0, rank-1)
        if (++index[d] < part.extent[d]) break;
        index[d] = 0;
      }
    }
  }
  for (uint64_t i = 0; i < total; ++i) {
    if (!covered[i]) {
      throw ConvertError(tensor + " is not fully covered by its " + std::to_string(e.slices.size()) +
                         " slice(s) (element " + std::to_string(i) + " missing)");
    }
  }
  return full;
}

}  // namespace floe::conv
