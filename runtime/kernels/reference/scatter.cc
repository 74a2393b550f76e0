// SPDX-License-Identifier: Apache-2.0
// The scatter kernel and its adapters (see scatter.h). Each index row costs one
// bounds check per index component; the slice it addresses is contiguous.
#include "runtime/kernels/reference/scatter.h"

#include <string.h>

#include <type_traits>

#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/reference/element_copy.h"
#include "runtime/kernels/common/wrapping.h"

namespace floe::ref {
namespace {

inline int64_t index_at(const void* indices, bool is64, int64_t i) {
  return is64 ? static_cast<const int64_t*>(indices)[i] : static_cast<const int32_t*>(indices)[i];
}

// dst[i] = dst[i] (op) src[i]; false on an integer division by zero.
template <typename T>
bool combine(ScatterMode mode, T* dst, const T* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T x = dst[i], u = src[i];
    switch (mode) {
      case ScatterMode::kAdd: dst[i] = wrapping_add(x, u); break;
      case ScatterMode::kSub: dst[i] = wrapping_sub(x, u); break;
      case ScatterMode::kMul: dst[i] = wrapping_mul(x, u); break;
      case ScatterMode::kDiv:
        if constexpr (std::is_integral<T>::value) {
          if (u == T{0}) return false;
          // x / -1 is the negation, which wraps for the most negative value.
          dst[i] = u == static_cast<T>(-1) ? wrapping_sub(T{0}, x) : static_cast<T>(x / u);
        } else {
          dst[i] = x / u;
        }
        break;
      case ScatterMode::kMin: dst[i] = u < x ? u : x; break;
      case ScatterMode::kMax: dst[i] = u > x ? u : x; break;
      case ScatterMode::kUpdate: dst[i] = u; break;
    }
  }
  return true;
}

}  // namespace

bool scatter_nd(ScatterMode mode, DType dtype, bool indices_int64, In<void> data, In<void> indices,
                In<void> updates, Out<void> output, IndexFault* fault) {
  const Shape& os = output.shape;
  const size_t element = dtype_size(dtype);
  const int32_t k = indices.shape.rank == 0 ? 0 : indices.shape.dims[indices.shape.rank - 1];
  const int64_t rows = indices.shape.rank == 0 ? 0 : indices.shape.span(0, indices.shape.rank - 1);
  const int64_t inner = os.span(k, os.rank);
  const size_t total = static_cast<size_t>(os.num_elements()) * element;
  // Every index first, as TF checks them: a bad one fails before the output
  // is touched.
  *fault = IndexFault();
  for (int64_t j = 0; j < rows * k; ++j) {
    const int64_t v = index_at(indices.data, indices_int64, j);
    const int32_t bound = os.dims[j % k];
    if (v < 0 || v >= bound) {
      *fault = {v, static_cast<int32_t>(j), bound};
      return false;
    }
  }
  uint8_t* out = static_cast<uint8_t*>(output.data);
  if (data.data == nullptr) {
    if (total) memset(out, 0, total);
  } else if (total && data.data != output.data) {
    memcpy(out, data.data, total);
  }
  const uint8_t* src = static_cast<const uint8_t*>(updates.data);
  const size_t run = static_cast<size_t>(inner) * element;
  for (int64_t r = 0; r < rows; ++r, src += run) {
    int64_t offset = 0;
    for (int32_t d = 0; d < k; ++d) {
      offset = offset * os.dims[d] + index_at(indices.data, indices_int64, r * k + d);
    }
    uint8_t* dst = out + static_cast<size_t>(offset) * run;
    bool ok = true;
    switch (mode == ScatterMode::kUpdate ? DType::kInvalid : dtype) {
      case DType::kInvalid:
        if (run) memcpy(dst, src, run);
        break;
      case DType::kFloat32:
        ok = combine(mode, reinterpret_cast<float*>(dst), reinterpret_cast<const float*>(src), inner);
        break;
      case DType::kInt32:
        ok = combine(mode, reinterpret_cast<int32_t*>(dst), reinterpret_cast<const int32_t*>(src), inner);
        break;
      case DType::kInt64:
        ok = combine(mode, reinterpret_cast<int64_t*>(dst), reinterpret_cast<const int64_t*>(src), inner);
        break;
      default: return false;
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace floe::ref

// ---- adapters: prepare validates the operands once at Init() and fills the
// params block; eval runs the kernel (runtime/core/registry.h).
namespace floe::ops {
namespace {

Status run(const PreparedOp& ctx, ref::ScatterMode mode) {
  ScatterPrepared& p = *static_cast<ScatterPrepared*>(ctx.params);
  const int first = p.from_zeros ? 0 : 1;
  const In<void> data = p.from_zeros ? In<void>{nullptr, ctx.output(0).shape} : in_void(ctx.input(0));
  if (ref::scatter_nd(mode, static_cast<DType>(p.dtype), p.indices_int64 != 0, data, in_void(ctx.input(first)),
                      in_void(ctx.input(first + 1)), out_void(ctx.output(0)), &p.fault)) {
    return Status::kOk;
  }
  return p.fault.position >= 0 ? Status::kIndexOutOfRange : Status::kKernelError;
}

}  // namespace

// (data, indices, updates) or (indices, updates): updates must be
// indices.shape[:-1] + output.shape[k:], k = indices.shape[-1] <= output rank.
const char* prepare_scatter_nd(const OpContext& ctx) {
  const bool from_zeros = ctx.input_count() == 2;
  if (!has_io(ctx, from_zeros ? 2 : 3, 1)) return FLOE_MSG("expects [data,] indices, updates and 1 output");
  const int first = from_zeros ? 0 : 1;
  const TensorView idx = ctx.input(first), upd = ctx.input(first + 1), out = ctx.output(0);
  if (dtype_size(out.dtype) == 0 || upd.dtype != out.dtype) return FLOE_MSG("updates and output dtypes differ");
  if (!from_zeros && (ctx.input(0).dtype != out.dtype || !dims_equal(ctx.input(0).shape, out.shape))) {
    return FLOE_MSG("data and output differ in dtype or shape");
  }
  if (idx.dtype != DType::kInt32 && idx.dtype != DType::kInt64) return FLOE_MSG("indices must be int32/int64");
  if (idx.shape.rank < 1) return FLOE_MSG("indices need rank >= 1");
  const int32_t k = idx.shape.dims[idx.shape.rank - 1];
  if (k < 0 || k > out.shape.rank) return FLOE_MSG("index depth exceeds the output rank");
  if (upd.shape.rank != idx.shape.rank - 1 + out.shape.rank - k) return FLOE_MSG("updates rank mismatch");
  int u = 0;
  for (int d = 0; d < idx.shape.rank - 1; ++d) {
    if (upd.shape.dims[u++] != idx.shape.dims[d]) return FLOE_MSG("updates shape mismatch");
  }
  for (int d = k; d < out.shape.rank; ++d) {
    if (upd.shape.dims[u++] != out.shape.dims[d]) return FLOE_MSG("updates shape mismatch");
  }
  ScatterPrepared& p = ctx.params<ScatterPrepared>();
  p.dtype = static_cast<uint8_t>(out.dtype);
  p.indices_int64 = idx.dtype == DType::kInt64;
  p.from_zeros = from_zeros;
  p.unused = 0;
  return nullptr;
}

const char* prepare_scatter_nd_arithmetic(const OpContext& ctx) {
  if (const char* reason = prepare_scatter_nd(ctx)) return reason;  // checks the operand counts first
  const DType t = ctx.output(0).dtype;
  if (t != DType::kFloat32 && t != DType::kInt32 && t != DType::kInt64) {
    return FLOE_MSG("arithmetic scatter takes float32, int32 or int64");
  }
  return nullptr;
}

Status eval_scatter_nd_update(const PreparedOp& ctx) { return run(ctx, ref::ScatterMode::kUpdate); }
Status eval_scatter_nd_add(const PreparedOp& ctx) { return run(ctx, ref::ScatterMode::kAdd); }
Status eval_scatter_nd_sub(const PreparedOp& ctx) { return run(ctx, ref::ScatterMode::kSub); }
Status eval_scatter_nd_mul(const PreparedOp& ctx) { return run(ctx, ref::ScatterMode::kMul); }
Status eval_scatter_nd_div(const PreparedOp& ctx) { return run(ctx, ref::ScatterMode::kDiv); }
Status eval_scatter_nd_min(const PreparedOp& ctx) { return run(ctx, ref::ScatterMode::kMin); }
Status eval_scatter_nd_max(const PreparedOp& ctx) { return run(ctx, ref::ScatterMode::kMax); }

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, SCATTER_ND_UPDATE, ANY, ops::ScatterPrepared, ops::prepare_scatter_nd, ops::eval_scatter_nd_update)
FLOE_KERNEL(REFERENCE, SCATTER_ND_ADD, ANY, ops::ScatterPrepared, ops::prepare_scatter_nd_arithmetic, ops::eval_scatter_nd_add)
FLOE_KERNEL(REFERENCE, SCATTER_ND_SUB, ANY, ops::ScatterPrepared, ops::prepare_scatter_nd_arithmetic, ops::eval_scatter_nd_sub)
FLOE_KERNEL(REFERENCE, SCATTER_ND_MUL, ANY, ops::ScatterPrepared, ops::prepare_scatter_nd_arithmetic, ops::eval_scatter_nd_mul)
FLOE_KERNEL(REFERENCE, SCATTER_ND_DIV, ANY, ops::ScatterPrepared, ops::prepare_scatter_nd_arithmetic, ops::eval_scatter_nd_div)
FLOE_KERNEL(REFERENCE, SCATTER_ND_MIN, ANY, ops::ScatterPrepared, ops::prepare_scatter_nd_arithmetic, ops::eval_scatter_nd_min)
FLOE_KERNEL(REFERENCE, SCATTER_ND_MAX, ANY, ops::ScatterPrepared, ops::prepare_scatter_nd_arithmetic, ops::eval_scatter_nd_max)
