// SPDX-License-Identifier: Apache-2.0
// TOPK over the last axis (values and int32 indices, sorted or in input order) (see topk.h). Formulas follow the TensorFlow CPU kernels'
// documented conventions; code is our own.
#include "runtime/kernels/reference/topk.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "runtime/kernels/reference/element_copy.h"
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {
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

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

const char* prepare_topk(const OpContext& ctx) {
  if (!has_io(ctx, 1, 2)) return FLOE_MSG("expects 1 input and 2 outputs");
  const TensorView in = ctx.input(0), values = ctx.output(0), indices = ctx.output(1);
  if (in.dtype != DType::kFloat32 || values.dtype != DType::kFloat32 || indices.dtype != DType::kInt32) {
    return FLOE_MSG("expects float32 values and int32 indices");
  }
  if (in.shape.rank < 1 || !dims_equal(values.shape, indices.shape) || values.shape.rank != in.shape.rank) {
    return FLOE_MSG("output shapes mismatch");
  }
  for (int d = 0; d + 1 < in.shape.rank; ++d) {
    if (values.shape.dims[d] != in.shape.dims[d]) return FLOE_MSG("output shapes mismatch");
  }
  if (values.shape.dims[in.shape.rank - 1] > in.shape.dims[in.shape.rank - 1]) return FLOE_MSG("k > last dim");
  ctx.params<TopKPrepared>().sorted = ctx.op->options_as_TopKOptions()->sorted();
  return nullptr;
}

Status eval_topk(const PreparedOp& ctx) {
  ref::topk_f32(ctx.params_as<TopKPrepared>().sorted, in_as<float>(ctx.input(0)), out_as<float>(ctx.output(0)), out_as<int32_t>(ctx.output(1)));
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, TOPK, ANY, ops::TopKPrepared, ops::prepare_topk, ops::eval_topk)
