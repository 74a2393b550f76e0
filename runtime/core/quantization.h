// SPDX-License-Identifier: Apache-2.0
// Reading a tensor's quantization record (schemas/floe.fbs, TensorQuantization)
// into a Quantization, checked against the format's rules. Header-only: the
// Model reads it for the API (Model::quantization), and a kernel whose prepare
// needs a tensor's scale (QUANTIZE, DEQUANTIZE) reads it through its
// OpContext; a program whose kernels never ask carries none of it.
#pragma once

#include <stdint.h>
#include <string.h>

#include "runtime/core/registry.h"
#include "runtime/core/tensor.h"
#include "schemas/floe_generated.h"

namespace floe {
namespace quantization_detail {

// The zero points an integer dtype can hold; false for dtypes that are never
// quantized (floats, BOOL, 64-bit integers).
inline bool zero_point_range(schema::DType t, int64_t* lo, int64_t* hi) {
  switch (t) {
    case schema::DType::INT8: *lo = -128; *hi = 127; return true;
    case schema::DType::UINT8: *lo = 0; *hi = 255; return true;
    case schema::DType::INT16: *lo = -32768; *hi = 32767; return true;
    case schema::DType::INT32: *lo = INT32_MIN; *hi = INT32_MAX; return true;
    default: return false;
  }
}

// Zero point i of a quantization record. The FlatBuffers rules align vectors
// to 4 bytes only, so a hostile file can place this int64 vector off its
// natural alignment (a fault on Cortex-M): read it bytewise.
inline int64_t zero_point_at(const flatbuffers::Vector<int64_t>* zero_points, uint32_t i) {
  int64_t value;
  memcpy(&value, zero_points->Data() + sizeof(int64_t) * i, sizeof value);
  return value;
}

}  // namespace quantization_detail

// A record that breaks the rules (scale count, quantized_dimension, finite
// positive scales, zero points that fit the dtype) reads as "not quantized",
// which the int8 edges (QUANTIZE / DEQUANTIZE prepare) refuse by op index.
inline Quantization read_quantization(const schema::Tensor& t) {
  using quantization_detail::zero_point_at;
  Quantization out;
  const schema::TensorQuantization* q = t.quantization();
  if (q == nullptr) return out;
  const auto* scales = q->scale();
  const auto* zero_points = q->zero_point();
  const uint32_t count = scales ? scales->size() : 0;
  const uint32_t rank = t.shape() ? t.shape()->size() : 0;
  const uint32_t dim = static_cast<uint32_t>(q->quantized_dimension());  // negative: huge
  int64_t lo = 0, hi = 0;
  // One zero point may stand for every channel (symmetric int8 weights: all 0).
  const uint32_t zero_point_count = zero_points ? zero_points->size() : 0;
  bool ok = quantization_detail::zero_point_range(t.dtype(), &lo, &hi) && count != 0 &&
            (zero_point_count == count || zero_point_count == 1) &&
            (count == 1 ? dim < rank || dim == 0 : dim < rank && count == static_cast<uint32_t>(t.shape()->Get(dim)));
  for (uint32_t c = 0; ok && c < count; ++c) {
    const float scale = scales->Get(c);
    const int64_t zero_point = zero_point_at(zero_points, zero_point_count == 1 ? 0 : c);
    // NaN fails both comparisons; +inf fails the second.
    ok = scale > 0.0f && scale <= 3.402823466e38f && zero_point >= lo && zero_point <= hi;
  }
  if (!ok) return out;
  out.scale = scales->Get(0);
  out.zero_point = static_cast<int32_t>(zero_point_at(zero_points, 0));
  out.channels = count;
  return out;
}

inline Quantization OpContext::input_quantization(int i) const {
  return has_input(i) ? read_quantization(*tensors->Get(static_cast<uint32_t>(op->inputs()->Get(static_cast<uint32_t>(i)))))
                      : Quantization();
}
// State is arena bytes: a variable marked constant would be written in the model.
inline bool OpContext::input_is_state(int i) const {
  if (!has_input(i)) return false;
  const schema::Tensor& t = *tensors->Get(static_cast<uint32_t>(op->inputs()->Get(static_cast<uint32_t>(i))));
  return t.variable() && !t.is_constant() && t.live_first_op() < 0 && t.live_last_op() < 0;
}
inline bool OpContext::output_is_state(int i) const {
  if (i < 0 || i >= output_count()) return false;
  const schema::Tensor& t = *tensors->Get(static_cast<uint32_t>(op->outputs()->Get(static_cast<uint32_t>(i))));
  return t.variable() && !t.is_constant() && t.live_first_op() < 0 && t.live_last_op() < 0;
}
inline bool OpContext::input_is_constant(int i) const {
  if (!has_input(i)) return false;
  return tensors->Get(static_cast<uint32_t>(op->inputs()->Get(static_cast<uint32_t>(i))))->is_constant();
}
inline Quantization OpContext::output_quantization(int i) const {
  return i >= 0 && i < output_count()
             ? read_quantization(*tensors->Get(static_cast<uint32_t>(op->outputs()->Get(static_cast<uint32_t>(i)))))
             : Quantization();
}

}  // namespace floe
