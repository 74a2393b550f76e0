// SPDX-License-Identifier: Apache-2.0
// Prepare/eval adapters of the op families, defined in dispatch_<family>.cc and
// named by runtime/ops.def (as ops::prepare_x). Same contract as dispatch.cc:
// prepare validates everything the kernel assumes (counts, ranks, dims, dtypes,
// constant indices) once at Init(), so that no model passing Init can make a
// kernel read or write out of bounds, and writes the op's params block; eval
// reads only that block and the bound operands, and checks only data-dependent
// indices (returning kKernelError).
#pragma once

#include "runtime/core/dispatch.h"
#include "runtime/core/model.h"
#include "runtime/kernels/cortexm/conv2d.h"
#include "runtime/kernels/reference/conv2d.h"

namespace floe::ops {

// ---- shared helpers (inline: used by every family file) ----

inline In<void> in_void(const TensorView& v) { return In<void>{v.data, v.shape}; }
inline Out<void> out_void(const TensorView& v) { return Out<void>{v.data, v.shape}; }
template <typename T>
In<T> in_as(const TensorView& v) { return In<T>{static_cast<const T*>(v.data), v.shape}; }
template <typename T>
Out<T> out_as(const TensorView& v) { return Out<T>{static_cast<T*>(v.data), v.shape}; }

inline bool dims_equal(const Shape& a, const Shape& b) {
  if (a.rank != b.rank) return false;
  for (int i = 0; i < a.rank; ++i) {
    if (a.dims[i] != b.dims[i]) return false;
  }
  return true;
}

// Exactly `inputs` present inputs and `outputs` outputs.
inline bool has_io(const OpContext& ctx, int inputs, int outputs) {
  if (ctx.input_count() != inputs || ctx.output_count() != outputs) return false;
  for (int i = 0; i < inputs; ++i) {
    if (!ctx.has_input(i)) return false;
  }
  return true;
}

// `o` is the broadcast of the given shapes.
bool is_broadcast_of(const Shape* shapes, int n, const Shape& o);

// ---- params blocks (pointer-free, fixed-width: see runtime/core/dispatch.h) ----

// Binary arithmetic: the element count when no operand broadcasts.
struct ElementwisePrepared {
  int32_t count;
};
struct AxisPrepared {
  int32_t axis;
};
struct LeakyReluPrepared {
  float alpha;
};
struct ReducePrepared {
  int32_t axes[kMaxRank];
  int32_t axis_count;
};
struct StridedSlicePrepared {
  int32_t begin[kMaxRank];
  int32_t stride[kMaxRank];
  int32_t element_size;
};
struct GatherPrepared {
  int32_t axis;
  int32_t batch_dims;
  int32_t element_size;
  bool indices_int64;
};
struct TopKPrepared {
  bool sorted;
};
struct FakeQuantPrepared {
  int32_t num_bits;
  bool narrow_range;
};
struct ConcatPrepared {
  int32_t axis;
  int32_t element_size;
};
struct TransposePrepared {
  int32_t perm[kMaxRank];
  int32_t element_size;
};
struct PadPrepared {
  int32_t paddings[2 * kMaxRank];
  int32_t element_size;
  uint8_t mode;                 // ref::PadMode
  bool value_from_input;        // CONSTANT mode: input 1 holds the value
  uint8_t constant_value[8];    // CONSTANT mode otherwise: one element
};

// CONV2D: the reference kernel's params, or the Cortex-M kernel's whole plan
// (runtime/kernels/cortexm/conv2d.h) when the converter chose CORTEX_M.
union Conv2DPrepared {
  ref::Conv2DParams reference;
  cortexm::Conv2DPlan cortexm;
};

#define FLOE_DECLARE(name)                  \
  const char* prepare_##name(const OpContext&); \
  Status eval_##name(const PreparedOp&);

// dispatch_math.cc
FLOE_DECLARE(add) FLOE_DECLARE(sub) FLOE_DECLARE(mul) FLOE_DECLARE(div) FLOE_DECLARE(maximum)
FLOE_DECLARE(minimum) FLOE_DECLARE(floor_div) FLOE_DECLARE(floor_mod) FLOE_DECLARE(truncate_div)
FLOE_DECLARE(pow) FLOE_DECLARE(atan2) FLOE_DECLARE(squared_difference)
FLOE_DECLARE(equal) FLOE_DECLARE(not_equal) FLOE_DECLARE(less) FLOE_DECLARE(less_equal)
FLOE_DECLARE(greater) FLOE_DECLARE(greater_equal) FLOE_DECLARE(logical_and) FLOE_DECLARE(logical_or)
FLOE_DECLARE(floor) FLOE_DECLARE(ceil) FLOE_DECLARE(round) FLOE_DECLARE(sign) FLOE_DECLARE(reciprocal)
FLOE_DECLARE(sin) FLOE_DECLARE(cos) FLOE_DECLARE(tan) FLOE_DECLARE(asin) FLOE_DECLARE(acos)
FLOE_DECLARE(atan) FLOE_DECLARE(sinh) FLOE_DECLARE(cosh) FLOE_DECLARE(asinh) FLOE_DECLARE(acosh)
FLOE_DECLARE(atanh) FLOE_DECLARE(expm1) FLOE_DECLARE(log1p) FLOE_DECLARE(elu) FLOE_DECLARE(selu)
FLOE_DECLARE(softplus) FLOE_DECLARE(softsign) FLOE_DECLARE(abs) FLOE_DECLARE(neg) FLOE_DECLARE(square)
FLOE_DECLARE(logical_not) FLOE_DECLARE(is_nan) FLOE_DECLARE(is_inf) FLOE_DECLARE(is_finite)
FLOE_DECLARE(leaky_relu) FLOE_DECLARE(cast) FLOE_DECLARE(select)

// dispatch_data.cc
FLOE_DECLARE(sum) FLOE_DECLARE(mean) FLOE_DECLARE(prod) FLOE_DECLARE(reduce_max) FLOE_DECLARE(reduce_min)
FLOE_DECLARE(reduce_all) FLOE_DECLARE(reduce_any) FLOE_DECLARE(arg_max) FLOE_DECLARE(arg_min)
FLOE_DECLARE(strided_slice) FLOE_DECLARE(tile) FLOE_DECLARE(gather) FLOE_DECLARE(gather_nd)
FLOE_DECLARE(one_hot)

// dispatch_nn.cc
FLOE_DECLARE(batch_matmul) FLOE_DECLARE(transpose_conv2d) FLOE_DECLARE(resize_bilinear)
FLOE_DECLARE(resize_nearest) FLOE_DECLARE(resize_bicubic) FLOE_DECLARE(resize_area) FLOE_DECLARE(topk)
FLOE_DECLARE(cumsum) FLOE_DECLARE(cumprod) FLOE_DECLARE(fake_quant) FLOE_DECLARE(lrn)
FLOE_DECLARE(log_softmax) FLOE_DECLARE(extract_patches) FLOE_DECLARE(conv3d)

// dispatch_layout.cc
FLOE_DECLARE(transpose) FLOE_DECLARE(pad)

#undef FLOE_DECLARE

}  // namespace floe::ops
