// SPDX-License-Identifier: Apache-2.0
// TensorFlow's StridedSlice arguments (begin, end, strides and the five masks)
// resolved against an input shape into what floe's STRIDED_SLICE kernel takes:
// per input dim a begin and a stride, the rank-preserving counts, and the
// final shape after new axes and shrunk dims. Shared by the GraphDef op and
// the .tflite importer, so both read a spec alike.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace floe::conv {

struct SliceSpec {
  std::vector<int32_t> begin, stride;
  std::vector<int64_t> counts;       // rank-preserving slice output
  std::vector<int64_t> final_shape;  // after new axes / shrinks
};

struct StridedSliceMasks {
  int64_t begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink = 0;
};

// Fills *spec and returns "" or the reason the arguments are invalid.
inline std::string resolve_strided_slice(const std::vector<int64_t>& in, const std::vector<int64_t>& begin,
                                         const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                                         const StridedSliceMasks& masks, SliceSpec* spec) {
  if (begin.size() != end.size() || begin.size() != strides.size()) return "begin/end/strides lengths differ";
  const size_t n = begin.size();
  const int64_t rank = static_cast<int64_t>(in.size());
  // Entries that consume an input dim (not new-axis, not ellipsis).
  int64_t consuming = 0;
  bool has_ellipsis = false;
  for (size_t i = 0; i < n; ++i) {
    if ((masks.ellipsis >> i) & 1) {
      has_ellipsis = true;
    } else if (!((masks.new_axis >> i) & 1)) {
      ++consuming;
    }
  }
  SliceSpec& s = *spec;
  s = SliceSpec{};
  s.begin.assign(static_cast<size_t>(rank), 0);
  s.stride.assign(static_cast<size_t>(rank), 1);
  s.counts = in;
  int64_t d = 0;
  auto full = [&](int64_t dim) { s.final_shape.push_back(in[static_cast<size_t>(dim)]); };
  for (size_t i = 0; i < n; ++i) {
    if ((masks.ellipsis >> i) & 1) {
      const int64_t span = rank - consuming - d;
      for (int64_t k = 0; k < span; ++k) full(d++);
      continue;
    }
    if ((masks.new_axis >> i) & 1) {
      s.final_shape.push_back(1);
      continue;
    }
    if (d >= rank) return "the spec has more dims than the input";
    const int64_t dim = in[static_cast<size_t>(d)];
    const int64_t st = strides[i];
    if (st == 0) return "stride 0";
    int64_t b = begin[i], e = end[i];
    if ((masks.shrink >> i) & 1) {
      b = b < 0 ? b + dim : b;
      if (b < 0 || b >= dim) return "shrink index out of range";
      s.begin[static_cast<size_t>(d)] = static_cast<int32_t>(b);
      s.counts[static_cast<size_t>(d)] = 1;
      ++d;
      continue;
    }
    const int64_t lo = st > 0 ? 0 : -1, hi = st > 0 ? dim : dim - 1;
    if ((masks.begin >> i) & 1) {
      b = st > 0 ? 0 : dim - 1;
    } else {
      b = b < 0 ? b + dim : b;
      b = std::clamp(b, lo, hi);
    }
    if ((masks.end >> i) & 1) {
      e = st > 0 ? dim : -1;
    } else {
      e = e < 0 ? e + dim : e;
      e = std::clamp(e, lo, hi);
    }
    const int64_t count =
        st > 0 ? (e > b ? (e - b + st - 1) / st : 0) : (b > e ? (b - e + (-st) - 1) / (-st) : 0);
    s.begin[static_cast<size_t>(d)] = static_cast<int32_t>(count > 0 ? b : 0);
    s.stride[static_cast<size_t>(d)] = static_cast<int32_t>(st);
    s.counts[static_cast<size_t>(d)] = count;
    s.final_shape.push_back(count);
    ++d;
  }
  if (!has_ellipsis) {
    while (d < rank) full(d++);
  }
  return "";
}

}  // namespace floe::conv
