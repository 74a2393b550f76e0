// SPDX-License-Identifier: Apache-2.0
// The NumPy/TensorFlow broadcasting walk shared by the typed element-wise
// kernels (binary.cc, select.cc): operands are right-aligned against the output,
// size-1 output dims are dropped, neighbours that broadcast the same way are
// merged, and the innermost merged run becomes a tight loop over a functor (no
// per-element dispatch). Shapes must already broadcast to `out` (checked by prepare).
#pragma once

#include <stddef.h>

#include "runtime/core/tensor.h"

namespace floe::ref {

// Up to three operands broadcast against one output.
struct BroadcastLayout {
  int count = 0;
  ptrdiff_t size[kMaxRank];
  ptrdiff_t stride[3][kMaxRank];  // per operand, 0 where it broadcasts
};

inline BroadcastLayout make_broadcast_layout(const Shape* operands, int n, const Shape& out) {
  BroadcastLayout l;
  bool full[3][kMaxRank];
  const int rank = out.rank;
  for (int i = 0; i < rank; ++i) {
    const int32_t od = out.dims[i];
    if (od == 1) continue;
    bool f[3] = {false, false, false};
    for (int k = 0; k < n; ++k) {
      const int ki = i - (rank - operands[k].rank);
      f[k] = ki >= 0 && operands[k].dims[ki] != 1;
    }
    bool same = l.count > 0;
    for (int k = 0; k < n && same; ++k) same = full[k][l.count - 1] == f[k];
    if (same) {
      l.size[l.count - 1] *= od;
    } else {
      for (int k = 0; k < n; ++k) full[k][l.count] = f[k];
      l.size[l.count] = od;
      ++l.count;
    }
  }
  for (int k = 0; k < n; ++k) {
    ptrdiff_t step = 1;
    for (int g = l.count - 1; g >= 0; --g) {
      l.stride[k][g] = full[k][g] ? step : 0;
      if (full[k][g]) step *= l.size[g];
    }
  }
  return l;
}

// out[i] = f(a[ia], b[ib]) for every output element.
template <typename TA, typename TB, typename TO, typename F>
void broadcast_binary(const TA* a, const Shape& sa, const TB* b, const Shape& sb, TO* out,
                      const Shape& so, F f) {
  const ptrdiff_t n_out = static_cast<ptrdiff_t>(so.num_elements());
  if (n_out == 0) return;
  const ptrdiff_t n_a = static_cast<ptrdiff_t>(sa.num_elements());
  const ptrdiff_t n_b = static_cast<ptrdiff_t>(sb.num_elements());
  if (n_a == n_out && n_b == n_out) {
    for (ptrdiff_t i = 0; i < n_out; ++i) out[i] = f(a[i], b[i]);
    return;
  }
  if (n_b == 1) {
    const TB bv = b[0];
    for (ptrdiff_t i = 0; i < n_out; ++i) out[i] = f(a[i], bv);
    return;
  }
  if (n_a == 1) {
    const TA av = a[0];
    for (ptrdiff_t i = 0; i < n_out; ++i) out[i] = f(av, b[i]);
    return;
  }
  const Shape ops[2] = {sa, sb};
  const BroadcastLayout l = make_broadcast_layout(ops, 2, so);
  const int inner = l.count - 1;
  const ptrdiff_t n = l.size[inner];
  const ptrdiff_t s0 = l.stride[0][inner], s1 = l.stride[1][inner];
  ptrdiff_t index[kMaxRank] = {};
  ptrdiff_t off0 = 0, off1 = 0;
  for (ptrdiff_t done = 0; done < n_out; done += n) {
    const TA* pa = a + off0;
    const TB* pb = b + off1;
    TO* po = out + done;
    for (ptrdiff_t i = 0; i < n; ++i) po[i] = f(pa[i * s0], pb[i * s1]);
    for (int g = inner - 1; g >= 0; --g) {
      off0 += l.stride[0][g];
      off1 += l.stride[1][g];
      if (++index[g] < l.size[g]) break;
      off0 -= l.stride[0][g] * l.size[g];
      off1 -= l.stride[1][g] * l.size[g];
      index[g] = 0;
    }
  }
}

// out[i] = f(a[ia], b[ib], c[ic]).
template <typename TA, typename TB, typename TC, typename TO, typename F>
void broadcast_ternary(const TA* a, const Shape& sa, const TB* b, const Shape& sb, const TC* c,
                       const Shape& sc, TO* out, const Shape& so, F f) {
  const ptrdiff_t n_out = static_cast<ptrdiff_t>(so.num_elements());
  if (n_out == 0) return;
  const Shape ops[3] = {sa, sb, sc};
  const BroadcastLayout l = make_broadcast_layout(ops, 3, so);
  if (l.count == 0) {
    out[0] = f(a[0], b[0], c[0]);
    return;
  }
  const int inner = l.count - 1;
  const ptrdiff_t n = l.size[inner];
  const ptrdiff_t s0 = l.stride[0][inner], s1 = l.stride[1][inner], s2 = l.stride[2][inner];
  ptrdiff_t index[kMaxRank] = {};
  ptrdiff_t off[3] = {0, 0, 0};
  for (ptrdiff_t done = 0; done < n_out; done += n) {
    const TA* pa = a + off[0];
    const TB* pb = b + off[1];
    const TC* pc = c + off[2];
    TO* po = out + done;
    for (ptrdiff_t i = 0; i < n; ++i) po[i] = f(pa[i * s0], pb[i * s1], pc[i * s2]);
    for (int g = inner - 1; g >= 0; --g) {
      for (int k = 0; k < 3; ++k) off[k] += l.stride[k][g];
      if (++index[g] < l.size[g]) break;
      for (int k = 0; k < 3; ++k) off[k] -= l.stride[k][g] * l.size[g];
      index[g] = 0;
    }
  }
}

}  // namespace floe::ref
