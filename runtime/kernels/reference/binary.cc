// SPDX-License-Identifier: Apache-2.0
// Element-wise binary ops (Add, Sub, Mul, Div, Maximum, Minimum) with NumPy /
// TensorFlow broadcasting and a fused output activation. Owns the broadcasting
// walk: operand shapes are right-aligned against the output, runs of dimensions
// that broadcast the same way are merged, and the merged innermost run becomes a
// tight loop in which each operand is either contiguous or a single value.
#include "runtime/kernels/reference/binary.h"

#include <math.h>
#include <stddef.h>

namespace floe::ref {
namespace {

// The fused activation as a [lo, hi] clamp computed once per call, so inner
// loops carry no switch (activation.h).
using Clamp = ActivationRange;

// One run of `n` outputs. sa/sb are 1 (operand walks with the output) or 0 (the
// operand is one value repeated: bias-like or scalar broadcasting). The value of a
// repeated operand is read once, before any write, so `out` may alias the other,
// full-size operand.
template <typename Op>
void run(const float* a, ptrdiff_t sa, const float* b, ptrdiff_t sb, float* out, ptrdiff_t n,
         Clamp clamp) {
  if (sa != 0 && sb != 0) {
    for (ptrdiff_t i = 0; i < n; ++i) out[i] = clamp(Op::apply(a[i], b[i]));
  } else if (sa != 0) {
    const float bv = *b;
    for (ptrdiff_t i = 0; i < n; ++i) out[i] = clamp(Op::apply(a[i], bv));
  } else if (sb != 0) {
    const float av = *a;
    for (ptrdiff_t i = 0; i < n; ++i) out[i] = clamp(Op::apply(av, b[i]));
  } else {
    const float v = clamp(Op::apply(*a, *b));
    for (ptrdiff_t i = 0; i < n; ++i) out[i] = v;
  }
}

// The broadcast layout in merged form. Dimension g of the merged output has
// `size[g]` elements; stepping it advances operand a by `a_stride[g]` elements
// (0 when a broadcasts along it), likewise b. The output is dense row-major.
struct Layout {
  int count = 0;
  ptrdiff_t size[kMaxRank];
  ptrdiff_t a_stride[kMaxRank];
  ptrdiff_t b_stride[kMaxRank];
};

// Right-aligns a and b against the output (missing leading dims count as 1),
// drops output dims of size 1 (nobody moves along them), and merges neighbours
// whose (a broadcasts, b broadcasts) pattern is the same: such a run is one
// longer dimension for both operands. Strides are then the running products of
// the sizes each operand really holds, from the innermost outwards.
Layout make_layout(const Shape& a, const Shape& b, const Shape& out) {
  Layout l;
  bool a_full[kMaxRank];
  bool b_full[kMaxRank];
  const int rank = out.rank;
  for (int i = 0; i < rank; ++i) {
    const int32_t od = out.dims[i];
    if (od == 1) continue;
    const int ai = i - (rank - a.rank);
    const int bi = i - (rank - b.rank);
    const bool af = ai >= 0 && a.dims[ai] != 1;
    const bool bf = bi >= 0 && b.dims[bi] != 1;
    if (l.count > 0 && a_full[l.count - 1] == af && b_full[l.count - 1] == bf) {
      l.size[l.count - 1] *= od;
    } else {
      a_full[l.count] = af;
      b_full[l.count] = bf;
      l.size[l.count] = od;
      ++l.count;
    }
  }
  ptrdiff_t a_step = 1;
  ptrdiff_t b_step = 1;
  for (int g = l.count - 1; g >= 0; --g) {
    l.a_stride[g] = a_full[g] ? a_step : 0;
    l.b_stride[g] = b_full[g] ? b_step : 0;
    if (a_full[g]) a_step *= l.size[g];
    if (b_full[g]) b_step *= l.size[g];
  }
  return l;
}

template <typename Op>
void binary(const BinaryOperands& ops, Clamp clamp) {
  const ptrdiff_t n_out = static_cast<ptrdiff_t>(ops.output.shape.num_elements());
  if (n_out == 0) return;
  const ptrdiff_t n_a = static_cast<ptrdiff_t>(ops.a.shape.num_elements());
  const ptrdiff_t n_b = static_cast<ptrdiff_t>(ops.b.shape.num_elements());
  const float* a = ops.a.data;
  const float* b = ops.b.data;
  float* out = ops.output.data;

  // Fast paths that need no layout. An operand with as many elements as the
  // output has the output's shape up to size-1 dims, so it walks flat; a
  // single-element operand is a scalar. (When one operand is a scalar the other
  // necessarily has the output's element count.)
  if (n_a == n_out && n_b == n_out) {
    run<Op>(a, 1, b, 1, out, n_out, clamp);
    return;
  }
  if (n_b == 1) {
    run<Op>(a, 1, b, 0, out, n_out, clamp);
    return;
  }
  if (n_a == 1) {
    run<Op>(a, 0, b, 1, out, n_out, clamp);
    return;
  }

  // General walk: the innermost merged dim is the tight loop (for [M,N] + [N]
  // that is one contiguous/contiguous run per row); an odometer over the outer
  // merged dims moves the operand offsets by their strides, rewinding a dim's
  // whole extent when it wraps, so no per-element index arithmetic remains.
  const Layout l = make_layout(ops.a.shape, ops.b.shape, ops.output.shape);
  const int inner = l.count - 1;  // >= 0: n_out > 1 here, so some dim is not 1
  const ptrdiff_t n = l.size[inner];
  const ptrdiff_t sa = l.a_stride[inner] != 0 ? 1 : 0;
  const ptrdiff_t sb = l.b_stride[inner] != 0 ? 1 : 0;
  ptrdiff_t index[kMaxRank] = {};
  ptrdiff_t a_off = 0;
  ptrdiff_t b_off = 0;
  for (ptrdiff_t done = 0; done < n_out; done += n) {
    run<Op>(a + a_off, sa, b + b_off, sb, out + done, n, clamp);
    for (int g = inner - 1; g >= 0; --g) {
      a_off += l.a_stride[g];
      b_off += l.b_stride[g];
      if (++index[g] < l.size[g]) break;
      a_off -= l.a_stride[g] * l.size[g];
      b_off -= l.b_stride[g] * l.size[g];
      index[g] = 0;
    }
  }
}

}  // namespace

void binary_f32(const BinaryParams& params, const BinaryOperands& ops) {
  const Clamp clamp = activation_range(params.activation);
  switch (params.op) {
    case BinaryOp::kAdd:
      return binary<AddOp>(ops, clamp);
    case BinaryOp::kSub:
      return binary<SubOp>(ops, clamp);
    case BinaryOp::kMul:
      return binary<MulOp>(ops, clamp);
    case BinaryOp::kDiv:
      return binary<DivOp>(ops, clamp);
    case BinaryOp::kMaximum:
      return binary<MaxOp>(ops, clamp);
    case BinaryOp::kMinimum:
      return binary<MinOp>(ops, clamp);
  }
}

}  // namespace floe::ref
