// SPDX-License-Identifier: Apache-2.0
// Typed reductions (see reduce_ops.h). One row-major pass over the input: an
// odometer keeps the output offset (reduced dims have output stride 0), so each
// input element costs one combine; the kind/dtype switch runs once per call.
#include "runtime/kernels/reference/reduce_ops.h"
#include "runtime/kernels/reference/wrapping.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

namespace floe::ref {
namespace {

template <typename T> struct SumOp {
  static T init() { return 0; }
  static T combine(T a, T b) { return wrapping_add(a, b); }
};
template <typename T> struct ProdOp {
  static T init() { return 1; }
  static T combine(T a, T b) { return wrapping_mul(a, b); }
};
template <typename T> struct MaxOp {
  static T init();
  static T combine(T a, T b) { return (b > a || b != b) ? b : a; }
};
template <typename T> struct MinOp {
  static T init();
  static T combine(T a, T b) { return (b < a || b != b) ? b : a; }
};
template <> float MaxOp<float>::init() { return -INFINITY; }
template <> int32_t MaxOp<int32_t>::init() { return INT32_MIN; }
template <> int64_t MaxOp<int64_t>::init() { return INT64_MIN; }
template <> float MinOp<float>::init() { return INFINITY; }
template <> int32_t MinOp<int32_t>::init() { return INT32_MAX; }
template <> int64_t MinOp<int64_t>::init() { return INT64_MAX; }
struct AllOp {
  static uint8_t init() { return 1; }
  static uint8_t combine(uint8_t a, uint8_t b) { return (a != 0 && b != 0) ? 1 : 0; }
};
struct AnyOp {
  static uint8_t init() { return 0; }
  static uint8_t combine(uint8_t a, uint8_t b) { return (a != 0 || b != 0) ? 1 : 0; }
};

template <typename T, typename Op>
void reduce_walk(const ReduceParams& params, In<void> input, Out<void> output) {
  const Shape& shape = input.shape;
  const T* in = static_cast<const T*>(input.data);
  T* out = static_cast<T*>(output.data);
  const int64_t out_count = output.shape.num_elements();
  for (int64_t i = 0; i < out_count; ++i) out[i] = Op::init();
  const int64_t n = shape.num_elements();
  if (n == 0) return;
  // Output strides of the input dims (0 for reduced dims).
  ptrdiff_t out_stride[kMaxRank] = {};
  ptrdiff_t step = 1;
  for (int d = shape.rank - 1; d >= 0; --d) {
    bool reduced = false;
    for (int k = 0; k < params.axis_count; ++k) reduced = reduced || params.axes[k] == d;
    out_stride[d] = reduced ? 0 : step;
    if (!reduced) step *= shape.dims[d];
  }
  if (shape.rank == 0) {
    out[0] = Op::combine(out[0], in[0]);
    return;
  }
  const int last = shape.rank - 1;
  const ptrdiff_t inner = shape.dims[last];
  const ptrdiff_t inner_stride = out_stride[last];
  ptrdiff_t index[kMaxRank] = {};
  ptrdiff_t off = 0;
  for (int64_t done = 0; done < n; done += inner) {
    const T* row = in + done;
    T* o = out + off;
    for (ptrdiff_t i = 0; i < inner; ++i) o[i * inner_stride] = Op::combine(o[i * inner_stride], row[i]);
    for (int d = last - 1; d >= 0; --d) {
      off += out_stride[d];
      if (++index[d] < shape.dims[d]) break;
      off -= out_stride[d] * shape.dims[d];
      index[d] = 0;
    }
  }
}

template <typename T>
void reduce_int(ReduceKind kind, const ReduceParams& params, In<void> input, Out<void> output) {
  switch (kind) {
    case ReduceKind::kSum: return reduce_walk<T, SumOp<T>>(params, input, output);
    case ReduceKind::kProd: return reduce_walk<T, ProdOp<T>>(params, input, output);
    case ReduceKind::kMax: return reduce_walk<T, MaxOp<T>>(params, input, output);
    case ReduceKind::kMin: return reduce_walk<T, MinOp<T>>(params, input, output);
    case ReduceKind::kMean: {
      reduce_walk<T, SumOp<T>>(params, input, output);
      int64_t count = 1;
      for (int k = 0; k < params.axis_count; ++k) count *= input.shape.dims[params.axes[k]];
      T* out = static_cast<T*>(output.data);
      const int64_t n = output.shape.num_elements();
      // Integer mean truncates, like TF's; the mean of nothing is 0 here.
      for (int64_t i = 0; i < n && count > 0; ++i) out[i] = static_cast<T>(out[i] / static_cast<T>(count));
      return;
    }
    default: return;
  }
}

template <typename TI, typename TO, bool kMax>
void arg_walk(int32_t axis, In<void> input, Out<void> output) {
  const Shape& s = input.shape;
  const ptrdiff_t outer = static_cast<ptrdiff_t>(s.span(0, axis));
  const ptrdiff_t count = s.dims[axis];
  const ptrdiff_t inner = static_cast<ptrdiff_t>(s.span(axis + 1, s.rank));
  const TI* in = static_cast<const TI*>(input.data);
  TO* out = static_cast<TO*>(output.data);
  for (ptrdiff_t o = 0; o < outer; ++o) {
    for (ptrdiff_t i = 0; i < inner; ++i) {
      const TI* p = in + o * count * inner + i;
      ptrdiff_t best = 0;
      TI best_value = p[0];
      for (ptrdiff_t k = 1; k < count; ++k) {
        const TI v = p[k * inner];
        if (kMax ? (v > best_value) : (v < best_value)) {
          best = k;
          best_value = v;
        }
      }
      out[o * inner + i] = static_cast<TO>(best);
    }
  }
}

template <typename TI>
void arg_typed(bool is_max, DType out_dtype, int32_t axis, In<void> input, Out<void> output) {
  if (out_dtype == DType::kInt32) {
    return is_max ? arg_walk<TI, int32_t, true>(axis, input, output)
                  : arg_walk<TI, int32_t, false>(axis, input, output);
  }
  return is_max ? arg_walk<TI, int64_t, true>(axis, input, output)
                : arg_walk<TI, int64_t, false>(axis, input, output);
}

}  // namespace

bool reduce_supports(ReduceKind kind, DType dtype) {
  switch (kind) {
    case ReduceKind::kAll:
    case ReduceKind::kAny:
      return dtype == DType::kBool;
    default:
      return dtype == DType::kFloat32 || dtype == DType::kInt32 || dtype == DType::kInt64;
  }
}

void reduce(ReduceKind kind, DType dtype, const ReduceParams& params, In<void> input, Out<void> output) {
  if (kind == ReduceKind::kAll) return reduce_walk<uint8_t, AllOp>(params, input, output);
  if (kind == ReduceKind::kAny) return reduce_walk<uint8_t, AnyOp>(params, input, output);
  switch (dtype) {
    case DType::kFloat32: {
      const In<float> in{static_cast<const float*>(input.data), input.shape};
      const Out<float> out{static_cast<float*>(output.data), output.shape};
      switch (kind) {
        case ReduceKind::kSum: return sum_f32(params, {in, out});
        case ReduceKind::kMean: return mean_f32(params, {in, out});
        case ReduceKind::kProd: return reduce_walk<float, ProdOp<float>>(params, input, output);
        case ReduceKind::kMax: return reduce_walk<float, MaxOp<float>>(params, input, output);
        case ReduceKind::kMin: return reduce_walk<float, MinOp<float>>(params, input, output);
        default: return;
      }
    }
    case DType::kInt32: return reduce_int<int32_t>(kind, params, input, output);
    case DType::kInt64: return reduce_int<int64_t>(kind, params, input, output);
    default: return;
  }
}

bool arg_reduce_supports(DType input, DType output) {
  return (input == DType::kFloat32 || input == DType::kInt32 || input == DType::kInt64) &&
         (output == DType::kInt32 || output == DType::kInt64);
}

void arg_reduce(bool is_max, DType input_dtype, DType output_dtype, int32_t axis, In<void> input,
                Out<void> output) {
  switch (input_dtype) {
    case DType::kFloat32: return arg_typed<float>(is_max, output_dtype, axis, input, output);
    case DType::kInt32: return arg_typed<int32_t>(is_max, output_dtype, axis, input, output);
    case DType::kInt64: return arg_typed<int64_t>(is_max, output_dtype, axis, input, output);
    default: return;
  }
}

}  // namespace floe::ref
