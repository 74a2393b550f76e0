// SPDX-License-Identifier: Apache-2.0
// Mean over any sorted, unique set of axes of a rank <= 8 tensor. Each output is
// the pairwise (cascade) float sum of its reduced elements, visited in row-major
// order by a stride walk, divided by their count. The output must not overlap
// the input.
#include "runtime/kernels/reference/reduce.h"

#include <math.h>
#include <stddef.h>

namespace floe::ref {
namespace {

// Why float, and why pairwise: double would be software-emulated on
// single-precision FPUs (Cortex-M4F) and cost far more than the kernel. Plain
// sequential float summation errs by up to ~n * 2^-24 relative (4096 equal terms
// already drift by ~4e-5), which would make this reference a poor yardstick.
// Summing blocks of kBlock terms sequentially and combining block sums pairwise
// (as TensorFlow's vectorised tree reductions effectively do) bounds the error by
// about (kBlock + log2(n / kBlock)) * 2^-24 relative to sum|x| (~2e-6 even at
// 2^24 terms; observed errors are far smaller). Against a tolerance like 1e-5
// relative (of mean|x|) + 1e-6 absolute, the reference's own error is then
// negligible and the comparison measures only the kernel under test.
constexpr ptrdiff_t kBlock = 16;

// Streaming pairwise summation without a buffer of the inputs: a binary counter
// of completed blocks, level l holding the sum of 2^l blocks. Adding block k
// merges equal-sized partial sums exactly as incrementing k carries, so for
// n = kBlock * 2^j the result is the textbook recursive pairwise sum.
class PairwiseSum {
 public:
  // Adds n values x[0], x[stride], ... x[(n-1)*stride].
  void add_run(const float* x, ptrdiff_t n, ptrdiff_t stride) {
    while (n > 0) {
      ptrdiff_t take = kBlock - in_block_;
      if (take > n) take = n;
      float s = block_;
      for (ptrdiff_t i = 0; i < take; ++i, x += stride) s += x[0];
      n -= take;
      in_block_ += take;
      if (in_block_ == kBlock) {
        push(s);
        s = 0.0f;
        in_block_ = 0;
      }
      block_ = s;
    }
  }

  float total() const {
    // Smallest partial sums first: the open block, then the levels upwards.
    float s = block_;
    for (int l = 0; l < kLevels; ++l) {
      if ((blocks_ >> l) & 1u) s = level_[l] + s;
    }
    return s;
  }

 private:
  static constexpr int kLevels = 8 * sizeof(size_t);

  void push(float s) {
    int l = 0;
    for (size_t b = blocks_; b & 1u; b >>= 1, ++l) s = level_[l] + s;
    level_[l] = s;
    ++blocks_;
  }

  float level_[kLevels];
  size_t blocks_ = 0;  // bit l set <=> level_[l] holds a partial sum
  float block_ = 0.0f;
  ptrdiff_t in_block_ = 0;
};

// A run of merged dims: `size` positions, `stride` input elements apart.
struct Run {
  ptrdiff_t size;
  ptrdiff_t stride;
};

}  // namespace

void mean_f32(const ReduceParams& params, const ReduceOperands& ops) {
  const Shape& shape = ops.input.shape;
  const ptrdiff_t out_count = static_cast<ptrdiff_t>(ops.output.shape.num_elements());
  float* out = ops.output.data;
  if (out_count == 0) return;

  ptrdiff_t reduced_count = 1;
  for (int32_t k = 0; k < params.axis_count; ++k) reduced_count *= shape.dims[params.axes[k]];
  if (reduced_count == 0) {
    // The mean of nothing is 0/0 (TensorFlow gives NaN); the sum is 0.
    for (ptrdiff_t i = 0; i < out_count; ++i) out[i] = params.average ? NAN : 0.0f;
    return;
  }

  // Canonical form: drop size-1 dims (reduced or not, they move no index) and
  // merge neighbouring dims of the same kind, leaving alternating kept and
  // reduced runs. Input strides are the products of the sizes inside each run.
  ptrdiff_t size[kMaxRank];
  bool reduced[kMaxRank];
  int groups = 0;
  int32_t next_axis = 0;
  for (int32_t d = 0; d < shape.rank; ++d) {
    const bool is_reduced = next_axis < params.axis_count && params.axes[next_axis] == d;
    if (is_reduced) ++next_axis;
    const ptrdiff_t extent = shape.dims[d];
    if (extent == 1) continue;
    if (groups > 0 && reduced[groups - 1] == is_reduced) {
      size[groups - 1] *= extent;
    } else {
      size[groups] = extent;
      reduced[groups] = is_reduced;
      ++groups;
    }
  }
  Run kept[kMaxRank];
  Run red[kMaxRank];
  int kept_n = 0;
  int red_n = 0;
  ptrdiff_t stride = 1;
  for (int g = groups - 1; g >= 0; --g) {
    const Run r{size[g], stride};
    stride *= size[g];
    if (reduced[g]) {
      red[red_n++] = r;
    } else {
      kept[kept_n++] = r;
    }
  }
  // red[] and kept[] are innermost-first. With nothing left to reduce (only
  // size-1 axes), the mean is a copy.
  const float* in = ops.input.data;
  if (red_n == 0) {
    for (ptrdiff_t i = 0; i < out_count; ++i) out[i] = in[i];
    return;
  }

  const float divisor = static_cast<float>(reduced_count);  // exact up to 2^24
  const Run inner = red[0];
  ptrdiff_t kept_index[kMaxRank] = {};
  ptrdiff_t base = 0;
  for (ptrdiff_t o = 0; o < out_count; ++o) {
    // Visit this output's reduced elements in row-major order: the innermost
    // reduced run is a strided loop inside PairwiseSum, an odometer over the
    // outer reduced runs moves the offset (rewinding a run when it wraps).
    PairwiseSum acc;
    ptrdiff_t red_index[kMaxRank] = {};
    ptrdiff_t off = base;
    for (ptrdiff_t done = 0; done < reduced_count; done += inner.size) {
      acc.add_run(in + off, inner.size, inner.stride);
      for (int r = 1; r < red_n; ++r) {
        off += red[r].stride;
        if (++red_index[r] < red[r].size) break;
        off -= red[r].stride * red[r].size;
        red_index[r] = 0;
      }
    }
    // sum / count, as TensorFlow's mean reducer finalises.
    out[o] = params.average ? acc.total() / divisor : acc.total();

    for (int k = 0; k < kept_n; ++k) {
      base += kept[k].stride;
      if (++kept_index[k] < kept[k].size) break;
      base -= kept[k].stride * kept[k].size;
      kept_index[k] = 0;
    }
  }
}

}  // namespace floe::ref
