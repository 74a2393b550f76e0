// SPDX-License-Identifier: Apache-2.0
// float32 kernels for TF op coverage (see nn_extra.h). Formulas follow the
// TensorFlow CPU kernels' documented conventions (resize coordinate mapping,
// fake-quant nudging, Keys cubic weights); code is our own.
#include "runtime/kernels/reference/nn_extra.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "runtime/kernels/reference/element_copy.h"

namespace floe::ref {

// ---- batch matmul ---------------------------------------------------------------

void batch_matmul_f32(const BatchMatMulParams& p, In<float> x, In<float> y, Out<float> output) {
  const Shape &xs = x.shape, &ys = y.shape, &os = output.shape;
  const int r = os.rank;
  const ptrdiff_t m = os.dims[r - 2], n = os.dims[r - 1];
  const ptrdiff_t k = p.adj_x ? xs.dims[xs.rank - 2] : xs.dims[xs.rank - 1];
  const ptrdiff_t batches = static_cast<ptrdiff_t>(os.span(0, r - 2));
  // Batch index -> operand batch offsets through broadcasting (right-aligned).
  for (ptrdiff_t b = 0; b < batches; ++b) {
    ptrdiff_t rem = b, xb = 0, yb = 0, xmul = 1, ymul = 1;
    for (int d = r - 3; d >= 0; --d) {
      const ptrdiff_t od = os.dims[d];
      const ptrdiff_t i = rem % od;
      rem /= od;
      const int xd = d - (r - xs.rank), yd = d - (r - ys.rank);
      if (xd >= 0) {
        xb += (xs.dims[xd] == 1 ? 0 : i) * xmul;
        xmul *= xs.dims[xd];
      }
      if (yd >= 0) {
        yb += (ys.dims[yd] == 1 ? 0 : i) * ymul;
        ymul *= ys.dims[yd];
      }
    }
    const float* a = x.data + xb * m * k;
    const float* bm = y.data + yb * k * n;
    float* o = output.data + b * m * n;
    for (ptrdiff_t i = 0; i < m; ++i) {
      for (ptrdiff_t j = 0; j < n; ++j) {
        float acc = 0.0f;
        for (ptrdiff_t t = 0; t < k; ++t) {
          const float av = p.adj_x ? a[t * m + i] : a[i * k + t];
          const float bv = p.adj_y ? bm[j * k + t] : bm[t * n + j];
          acc += av * bv;
        }
        o[i * n + j] = acc;
      }
    }
  }
}

// ---- transposed convolution ---------------------------------------------------------

void transpose_conv2d_f32(const TransposeConv2DParams& p, In<float> input, In<float> filter,
                          Out<float> output) {
  const int32_t* id = input.shape.dims;
  const int32_t* fd = filter.shape.dims;
  const int32_t* od = output.shape.dims;
  const ptrdiff_t batches = id[0], in_h = id[1], in_w = id[2], in_c = id[3];
  const ptrdiff_t k_h = fd[0], k_w = fd[1], out_c = fd[2];
  const ptrdiff_t out_h = od[1], out_w = od[2];
  const ptrdiff_t total = static_cast<ptrdiff_t>(output.shape.num_elements());
  for (ptrdiff_t i = 0; i < total; ++i) output.data[i] = 0.0f;
  for (ptrdiff_t n = 0; n < batches; ++n) {
    for (ptrdiff_t iy = 0; iy < in_h; ++iy) {
      for (ptrdiff_t ix = 0; ix < in_w; ++ix) {
        const float* x = input.data + ((n * in_h + iy) * in_w + ix) * in_c;
        for (ptrdiff_t ky = 0; ky < k_h; ++ky) {
          const ptrdiff_t oy = iy * p.stride_h - p.pad_top + ky * p.dilation_h;
          if (oy < 0 || oy >= out_h) continue;
          for (ptrdiff_t kx = 0; kx < k_w; ++kx) {
            const ptrdiff_t ox = ix * p.stride_w - p.pad_left + kx * p.dilation_w;
            if (ox < 0 || ox >= out_w) continue;
            float* o = output.data + ((n * out_h + oy) * out_w + ox) * out_c;
            const float* f = filter.data + (ky * k_w + kx) * out_c * in_c;
            for (ptrdiff_t co = 0; co < out_c; ++co) {
              float acc = 0.0f;
              for (ptrdiff_t ci = 0; ci < in_c; ++ci) acc += x[ci] * f[co * in_c + ci];
              o[co] += acc;
            }
          }
        }
      }
    }
  }
}

// ---- resize ----------------------------------------------------------------------

namespace {

float resize_scale(int32_t in, int32_t out, bool align_corners) {
  return (align_corners && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                    : static_cast<float>(in) / static_cast<float>(out);
}

inline ptrdiff_t clamp_index(ptrdiff_t i, ptrdiff_t n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }

struct CubicTaps {
  ptrdiff_t index[4];
  float weight[4];
};

// Keys' cubic convolution: a = -0.75 (TF's legacy), -0.5 with half-pixel
// centers, where taps outside the image are dropped and weights renormalised.
CubicTaps cubic_taps(float in, ptrdiff_t size, bool half_pixel) {
  const float a = half_pixel ? -0.5f : -0.75f;
  const float base = floorf(in);
  // TF reads the weights from a 1024-entry table: t is quantised to 1/1024.
  const float t = static_cast<float>(lrintf((in - base) * 1024.0f)) / 1024.0f;
  CubicTaps c;
  const float d[4] = {t + 1.0f, t, 1.0f - t, 2.0f - t};
  float sum = 0.0f;
  for (int i = 0; i < 4; ++i) {
    const float x = d[i];
    c.weight[i] = x <= 1.0f ? ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1.0f
                            : ((a * x - 5.0f * a) * x + 8.0f * a) * x - 4.0f * a;
    const ptrdiff_t idx = static_cast<ptrdiff_t>(base) - 1 + i;
    if (half_pixel && (idx < 0 || idx >= size)) c.weight[i] = 0.0f;
    sum += c.weight[i];
    c.index[i] = clamp_index(idx, size);
  }
  if (half_pixel && sum != 0.0f) {
    for (int i = 0; i < 4; ++i) c.weight[i] /= sum;
  }
  return c;
}

void resize_float(const ResizeParams& p, In<float> input, Out<float> output) {
  const int32_t* id = input.shape.dims;
  const int32_t* od = output.shape.dims;
  const ptrdiff_t batches = id[0], in_h = id[1], in_w = id[2], ch = id[3];
  const ptrdiff_t out_h = od[1], out_w = od[2];
  const float sy = resize_scale(id[1], od[1], p.align_corners);
  const float sx = resize_scale(id[2], od[2], p.align_corners);
  const float* in = input.data;
  float* out = output.data;
  auto pixel = [&](ptrdiff_t n, ptrdiff_t y, ptrdiff_t x) { return in + ((n * in_h + y) * in_w + x) * ch; };
  for (ptrdiff_t n = 0; n < batches; ++n) {
    for (ptrdiff_t oy = 0; oy < out_h; ++oy) {
      for (ptrdiff_t ox = 0; ox < out_w; ++ox) {
        float* o = out + ((n * out_h + oy) * out_w + ox) * ch;
        if (p.mode == ResizeMode::kBilinear) {
          const float fy = p.half_pixel_centers ? (oy + 0.5f) * sy - 0.5f : oy * sy;
          const float fx = p.half_pixel_centers ? (ox + 0.5f) * sx - 0.5f : ox * sx;
          const float fy0 = floorf(fy), fx0 = floorf(fx);
          const ptrdiff_t y0 = clamp_index(static_cast<ptrdiff_t>(fy0), in_h);
          const ptrdiff_t y1 = clamp_index(static_cast<ptrdiff_t>(ceilf(fy)), in_h);
          const ptrdiff_t x0 = clamp_index(static_cast<ptrdiff_t>(fx0), in_w);
          const ptrdiff_t x1 = clamp_index(static_cast<ptrdiff_t>(ceilf(fx)), in_w);
          const float ly = fy - fy0, lx = fx - fx0;
          const float *tl = pixel(n, y0, x0), *tr = pixel(n, y0, x1), *bl = pixel(n, y1, x0),
                      *br = pixel(n, y1, x1);
          for (ptrdiff_t c = 0; c < ch; ++c) {
            const float top = tl[c] + (tr[c] - tl[c]) * lx;
            const float bottom = bl[c] + (br[c] - bl[c]) * lx;
            o[c] = top + (bottom - top) * ly;
          }
        } else if (p.mode == ResizeMode::kBicubic) {
          const float fy = p.half_pixel_centers ? (oy + 0.5f) * sy - 0.5f : oy * sy;
          const float fx = p.half_pixel_centers ? (ox + 0.5f) * sx - 0.5f : ox * sx;
          const CubicTaps ty = cubic_taps(fy, in_h, p.half_pixel_centers);
          const CubicTaps tx = cubic_taps(fx, in_w, p.half_pixel_centers);
          for (ptrdiff_t c = 0; c < ch; ++c) {
            float acc = 0.0f;
            for (int i = 0; i < 4; ++i) {
              float row = 0.0f;
              for (int j = 0; j < 4; ++j) row += tx.weight[j] * pixel(n, ty.index[i], tx.index[j])[c];
              acc += ty.weight[i] * row;
            }
            o[c] = acc;
          }
        } else {  // area: average of the input area the output pixel covers
          const float y0 = oy * sy, y1 = (oy + 1) * sy;
          const float x0 = ox * sx, x1 = (ox + 1) * sx;
          for (ptrdiff_t c = 0; c < ch; ++c) o[c] = 0.0f;
          for (ptrdiff_t y = static_cast<ptrdiff_t>(floorf(y0)); y < static_cast<ptrdiff_t>(ceilf(y1)); ++y) {
            const float wy = fminf(static_cast<float>(y + 1), y1) - fmaxf(static_cast<float>(y), y0);
            for (ptrdiff_t x = static_cast<ptrdiff_t>(floorf(x0)); x < static_cast<ptrdiff_t>(ceilf(x1)); ++x) {
              const float wx = fminf(static_cast<float>(x + 1), x1) - fmaxf(static_cast<float>(x), x0);
              const float* v = pixel(n, clamp_index(y, in_h), clamp_index(x, in_w));
              for (ptrdiff_t c = 0; c < ch; ++c) o[c] += v[c] * wy * wx;
            }
          }
          const float inv = 1.0f / (sy * sx);
          for (ptrdiff_t c = 0; c < ch; ++c) o[c] *= inv;
        }
      }
    }
  }
}

}  // namespace

void resize(const ResizeParams& p, size_t element_size, In<void> input, Out<void> output) {
  if (p.mode != ResizeMode::kNearest) {
    resize_float(p, {static_cast<const float*>(input.data), input.shape},
                 {static_cast<float*>(output.data), output.shape});
    return;
  }
  const int32_t* id = input.shape.dims;
  const int32_t* od = output.shape.dims;
  const ptrdiff_t batches = id[0], in_h = id[1], in_w = id[2], ch = id[3];
  const ptrdiff_t out_h = od[1], out_w = od[2];
  const float sy = resize_scale(id[1], od[1], p.align_corners);
  const float sx = resize_scale(id[2], od[2], p.align_corners);
  auto source = [&](ptrdiff_t o, float s, ptrdiff_t size) {
    const float f = p.half_pixel_centers ? (o + 0.5f) * s : o * s;
    const float r = p.align_corners ? roundf(f) : floorf(f);
    return clamp_index(static_cast<ptrdiff_t>(r), size);
  };
  const size_t run = static_cast<size_t>(ch) * element_size;
  const uint8_t* in = static_cast<const uint8_t*>(input.data);
  uint8_t* out = static_cast<uint8_t*>(output.data);
  for (ptrdiff_t n = 0; n < batches; ++n) {
    for (ptrdiff_t oy = 0; oy < out_h; ++oy) {
      const ptrdiff_t y = source(oy, sy, in_h);
      for (ptrdiff_t ox = 0; ox < out_w; ++ox) {
        const ptrdiff_t x = source(ox, sx, in_w);
        if (run) memcpy(out, in + static_cast<size_t>((n * in_h + y) * in_w + x) * run, run);
        out += run;
      }
    }
  }
}

// ---- cumulative ---------------------------------------------------------------------

namespace {
template <typename T>
void cumulative_typed(const CumulativeParams& p, In<void> input, Out<void> output) {
  const Shape& s = input.shape;
  const ptrdiff_t outer = static_cast<ptrdiff_t>(s.span(0, p.axis));
  const ptrdiff_t count = s.dims[p.axis];
  const ptrdiff_t inner = static_cast<ptrdiff_t>(s.span(p.axis + 1, s.rank));
  const T* in = static_cast<const T*>(input.data);
  T* out = static_cast<T*>(output.data);
  for (ptrdiff_t o = 0; o < outer; ++o) {
    for (ptrdiff_t i = 0; i < inner; ++i) {
      T acc = p.product ? T(1) : T(0);
      for (ptrdiff_t step = 0; step < count; ++step) {
        const ptrdiff_t k = p.reverse ? count - 1 - step : step;
        const ptrdiff_t at = (o * count + k) * inner + i;
        const T v = in[at];
        if (p.exclusive) {
          out[at] = acc;
          acc = p.product ? static_cast<T>(acc * v) : static_cast<T>(acc + v);
        } else {
          acc = p.product ? static_cast<T>(acc * v) : static_cast<T>(acc + v);
          out[at] = acc;
        }
      }
    }
  }
}
}  // namespace

bool cumulative_supports(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kInt32 || dtype == DType::kInt64;
}

void cumulative(const CumulativeParams& p, DType dtype, In<void> input, Out<void> output) {
  switch (dtype) {
    case DType::kFloat32: return cumulative_typed<float>(p, input, output);
    case DType::kInt32: return cumulative_typed<int32_t>(p, input, output);
    case DType::kInt64: return cumulative_typed<int64_t>(p, input, output);
    default: return;
  }
}

// ---- fake quantization ------------------------------------------------------------------

void fake_quant_f32(int32_t num_bits, bool narrow_range, In<float> input, In<float> min, In<float> max,
                    Out<float> output) {
  const float quant_min = narrow_range ? 1.0f : 0.0f;
  const float quant_max = static_cast<float>((1 << num_bits) - 1);
  const ptrdiff_t channels = static_cast<ptrdiff_t>(min.shape.num_elements());
  const ptrdiff_t n = static_cast<ptrdiff_t>(input.shape.num_elements());
  for (ptrdiff_t c = 0; c < channels; ++c) {
    const float lo = min.data[c], hi = max.data[c];
    // Nudge so that real 0.0 is exactly representable (TF's FakeQuant* rule).
    const float scale = (hi - lo) / (quant_max - quant_min);
    const float zero_from_min = quant_min - lo / scale;
    const float zero = zero_from_min < quant_min ? quant_min
                       : zero_from_min > quant_max ? quant_max
                                                   : roundf(zero_from_min);
    const float nudged_min = (quant_min - zero) * scale;
    const float nudged_max = (quant_max - zero) * scale;
    const float inv_scale = 1.0f / scale;
    for (ptrdiff_t i = c; i < n; i += channels) {
      const float x = input.data[i];
      const float clamped = x < nudged_min ? nudged_min : (x > nudged_max ? nudged_max : x);
      output.data[i] = floorf((clamped - nudged_min) * inv_scale + 0.5f) * scale + nudged_min;
    }
  }
}

// ---- top-k ------------------------------------------------------------------------------

namespace {

// The k + 1 slots of a top-k selection: k in the output row, one extra on the
// stack, so no scratch memory is needed.
struct TopKSlots {
  float* values;
  int32_t* indices;
  ptrdiff_t k;
  float extra_value = 0.0f;
  int32_t extra_index = 0;
  float& v(ptrdiff_t i) { return i < k ? values[i] : extra_value; }
  int32_t& x(ptrdiff_t i) { return i < k ? indices[i] : extra_index; }
};

// Binary-heap steps with the same sift order as the C++ library's heap
// algorithms (libstdc++ / libc++ agree), ordered so that the smallest value is at
// the root: TF's unsorted TopK returns exactly this heap's layout.
void sift_up(TopKSlots& s, ptrdiff_t hole, ptrdiff_t top, float value, int32_t index) {
  ptrdiff_t parent = (hole - 1) / 2;
  while (hole > top && s.v(parent) > value) {
    s.v(hole) = s.v(parent);
    s.x(hole) = s.x(parent);
    hole = parent;
    parent = (hole - 1) / 2;
  }
  s.v(hole) = value;
  s.x(hole) = index;
}

void adjust(TopKSlots& s, ptrdiff_t hole, ptrdiff_t length, float value, int32_t index) {
  const ptrdiff_t top = hole;
  ptrdiff_t child = hole;
  while (child < (length - 1) / 2) {
    child = 2 * (child + 1);
    if (s.v(child) > s.v(child - 1)) --child;
    s.v(hole) = s.v(child);
    s.x(hole) = s.x(child);
    hole = child;
  }
  if ((length & 1) == 0 && child == (length - 2) / 2) {
    child = 2 * (child + 1);
    s.v(hole) = s.v(child - 1);
    s.x(hole) = s.x(child - 1);
    hole = child - 1;
  }
  sift_up(s, hole, top, value, index);
}

void make_heap(TopKSlots& s, ptrdiff_t n) {
  if (n < 2) return;
  for (ptrdiff_t parent = (n - 2) / 2;; --parent) {
    adjust(s, parent, n, s.v(parent), s.x(parent));
    if (parent == 0) return;
  }
}

// Moves the root to slot n-1 and restores the heap on [0, n-1).
void pop_heap(TopKSlots& s, ptrdiff_t n) {
  const float value = s.v(n - 1);
  const int32_t index = s.x(n - 1);
  s.v(n - 1) = s.v(0);
  s.x(n - 1) = s.x(0);
  adjust(s, 0, n - 1, value, index);
}

// TF's unsorted selection (gtl::TopN): fill k + 1 slots in input order, heapify
// and drop the smallest; then each larger value replaces the smallest.
void topk_heap_order(const float* row, ptrdiff_t n, TopKSlots& s) {
  const ptrdiff_t k = s.k;
  ptrdiff_t size = 0;
  bool heap = false;
  for (ptrdiff_t i = 0; i < n; ++i) {
    const float value = row[i];
    if (!heap) {
      s.v(size) = value;
      s.x(size) = static_cast<int32_t>(i);
      ++size;
      if (size == k + 1) {
        make_heap(s, size);
        pop_heap(s, size);
        --size;
        heap = true;
      }
    } else if (value > s.v(0)) {
      s.v(k) = value;
      s.x(k) = static_cast<int32_t>(i);
      sift_up(s, k, 0, value, static_cast<int32_t>(i));
      pop_heap(s, k + 1);
    }
  }
}

}  // namespace

void topk_f32(bool sorted, In<float> input, Out<float> values, Out<int32_t> indices) {
  const ptrdiff_t n = input.shape.dims[input.shape.rank - 1];
  const ptrdiff_t k = values.shape.dims[values.shape.rank - 1];
  const ptrdiff_t rows = n > 0 ? static_cast<ptrdiff_t>(input.shape.num_elements()) / n : 0;
  for (ptrdiff_t r = 0; r < rows; ++r) {
    const float* row = input.data + r * n;
    float* v = values.data + r * k;
    int32_t* idx = indices.data + r * k;
    if (k == 0) continue;
    if (!sorted) {
      TopKSlots slots{v, idx, k};
      topk_heap_order(row, n, slots);
      continue;
    }
    // Sorted: descending, lowest index first among equal values (selection,
    // O(n k); k is small in practice).
    for (ptrdiff_t j = 0; j < k; ++j) {
      ptrdiff_t best = -1;
      for (ptrdiff_t i = 0; i < n; ++i) {
        bool taken = false;
        for (ptrdiff_t t = 0; t < j && !taken; ++t) taken = idx[t] == i;
        if (taken) continue;
        if (best < 0 || row[i] > row[best]) best = i;
      }
      idx[j] = static_cast<int32_t>(best);
      v[j] = row[best];
    }
  }
}

// ---- log-softmax / LRN ---------------------------------------------------------------------

void log_softmax_f32(In<float> input, Out<float> output) {
  const ptrdiff_t n = input.shape.rank > 0 ? input.shape.dims[input.shape.rank - 1] : 1;
  const ptrdiff_t rows = n > 0 ? static_cast<ptrdiff_t>(input.shape.num_elements()) / n : 0;
  for (ptrdiff_t r = 0; r < rows; ++r) {
    const float* x = input.data + r * n;
    float* o = output.data + r * n;
    float m = x[0];
    for (ptrdiff_t i = 1; i < n; ++i) m = x[i] > m ? x[i] : m;
    float sum = 0.0f;
    for (ptrdiff_t i = 0; i < n; ++i) sum += expf(x[i] - m);
    const float log_sum = logf(sum);
    for (ptrdiff_t i = 0; i < n; ++i) o[i] = (x[i] - m) - log_sum;
  }
}

void lrn_f32(const LrnParams& p, In<float> input, Out<float> output) {
  const ptrdiff_t depth = input.shape.dims[input.shape.rank - 1];
  const ptrdiff_t rows = depth > 0 ? static_cast<ptrdiff_t>(input.shape.num_elements()) / depth : 0;
  for (ptrdiff_t r = 0; r < rows; ++r) {
    const float* x = input.data + r * depth;
    float* o = output.data + r * depth;
    for (ptrdiff_t c = 0; c < depth; ++c) {
      const ptrdiff_t lo = c - p.depth_radius < 0 ? 0 : c - p.depth_radius;
      const ptrdiff_t hi = c + p.depth_radius >= depth ? depth - 1 : c + p.depth_radius;
      float sum = 0.0f;
      for (ptrdiff_t j = lo; j <= hi; ++j) sum += x[j] * x[j];
      o[c] = x[c] / powf(p.bias + p.alpha * sum, p.beta);
    }
  }
}

}  // namespace floe::ref

namespace floe::ref {

void extract_patches(const ExtractPatchesParams& p, size_t element_size, In<void> input, Out<void> output) {
  const int32_t* id = input.shape.dims;
  const int32_t* od = output.shape.dims;
  const ptrdiff_t batches = id[0], in_h = id[1], in_w = id[2], ch = id[3];
  const ptrdiff_t out_h = od[1], out_w = od[2];
  const size_t run = static_cast<size_t>(ch) * element_size;
  const uint8_t* in = static_cast<const uint8_t*>(input.data);
  uint8_t* out = static_cast<uint8_t*>(output.data);
  for (ptrdiff_t n = 0; n < batches; ++n) {
    for (ptrdiff_t oy = 0; oy < out_h; ++oy) {
      for (ptrdiff_t ox = 0; ox < out_w; ++ox) {
        for (ptrdiff_t ky = 0; ky < p.size_h; ++ky) {
          const ptrdiff_t iy = oy * p.stride_h - p.pad_top + ky * p.rate_h;
          for (ptrdiff_t kx = 0; kx < p.size_w; ++kx, out += run) {
            const ptrdiff_t ix = ox * p.stride_w - p.pad_left + kx * p.rate_w;
            if (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w) {
              if (run) memset(out, 0, run);
            } else if (run) {
              memcpy(out, in + static_cast<size_t>((n * in_h + iy) * in_w + ix) * run, run);
            }
          }
        }
      }
    }
  }
}

}  // namespace floe::ref

namespace floe::ref {

void conv3d_f32(const Conv3DParams& p, In<float> input, In<float> filter, Out<float> output) {
  const int32_t* id = input.shape.dims;
  const int32_t* fd = filter.shape.dims;
  const int32_t* od = output.shape.dims;
  const ptrdiff_t batches = id[0], in_d = id[1], in_h = id[2], in_w = id[3], in_c = id[4];
  const ptrdiff_t k_d = fd[0], k_h = fd[1], k_w = fd[2], out_c = fd[4];
  const ptrdiff_t out_d = od[1], out_h = od[2], out_w = od[3];
  float* o = output.data;
  for (ptrdiff_t n = 0; n < batches; ++n) {
    for (ptrdiff_t oz = 0; oz < out_d; ++oz) {
      for (ptrdiff_t oy = 0; oy < out_h; ++oy) {
        for (ptrdiff_t ox = 0; ox < out_w; ++ox, o += out_c) {
          for (ptrdiff_t co = 0; co < out_c; ++co) o[co] = 0.0f;
          for (ptrdiff_t kz = 0; kz < k_d; ++kz) {
            const ptrdiff_t iz = oz * p.stride_d - p.pad_front + kz * p.dilation_d;
            if (iz < 0 || iz >= in_d) continue;
            for (ptrdiff_t ky = 0; ky < k_h; ++ky) {
              const ptrdiff_t iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
              if (iy < 0 || iy >= in_h) continue;
              for (ptrdiff_t kx = 0; kx < k_w; ++kx) {
                const ptrdiff_t ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
                if (ix < 0 || ix >= in_w) continue;
                const float* x = input.data + (((n * in_d + iz) * in_h + iy) * in_w + ix) * in_c;
                const float* f = filter.data + ((kz * k_h + ky) * k_w + kx) * in_c * out_c;
                for (ptrdiff_t ci = 0; ci < in_c; ++ci, f += out_c) {
                  const float xv = x[ci];
                  for (ptrdiff_t co = 0; co < out_c; ++co) o[co] += xv * f[co];
                }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace floe::ref
