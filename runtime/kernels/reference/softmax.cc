// SPDX-License-Identifier: Apache-2.0
// Softmax over the last axis with a beta multiplier. Each row is shifted by its
// extreme value before exp so that no exponent is positive (no overflow for large
// logits); the shift cancels in the normalisation. Alias-safe: the output may be
// the input buffer (each row is read fully for its max before being written, and
// afterwards element i is read before element i is written).
#include "runtime/kernels/reference/softmax.h"

#include <math.h>
#include <stddef.h>
#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/reference/unary.h"

namespace floe::ref {

void softmax_f32(const SoftmaxParams& params, const SoftmaxOperands& ops) {
  const Shape& shape = ops.input.shape;
  const ptrdiff_t depth = shape.dims[shape.rank - 1];
  if (depth == 0) return;
  const ptrdiff_t rows = static_cast<ptrdiff_t>(shape.span(0, shape.rank - 1));
  const float beta = params.beta;
  const float* in = ops.input.data;
  float* out = ops.output.data;

  for (ptrdiff_t r = 0; r < rows; ++r, in += depth, out += depth) {
    // exp(beta*(x - pivot)) must have a non-positive exponent for every x: the
    // pivot is the row max for beta >= 0 (the usual case, matching the header's
    // formula exactly) and the row min for a negative beta.
    float pivot = in[0];
    if (beta >= 0.0f) {
      for (ptrdiff_t i = 1; i < depth; ++i) pivot = in[i] > pivot ? in[i] : pivot;
    } else {
      for (ptrdiff_t i = 1; i < depth; ++i) pivot = in[i] < pivot ? in[i] : pivot;
    }
    float sum = 0.0f;
    for (ptrdiff_t i = 0; i < depth; ++i) {
      const float e = expf(beta * (in[i] - pivot));
      out[i] = e;
      sum += e;
    }
    // sum >= 1 (the pivot's own term is exp(0)). A true division rather than a
    // multiply by 1/sum: one rounding instead of two, as TensorFlow computes it.
    for (ptrdiff_t i = 0; i < depth; ++i) out[i] /= sum;
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

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

namespace {

// The output's dtype (int8 or int16, checked by prepare) picks its stores.
Status eval_softmax_s8(const PreparedOp& ctx) {
  const TensorView& out = ctx.output(0);
  ref::softmax_s8_rows(ctx.params_as<SoftmaxPrepared>().s8, in_as<int8_t>(ctx.input(0)), out.data,
                       out.dtype == DType::kInt16);
  return Status::kOk;
}

// int8 input; output int8 with scale 1/256 and zero point -128, or int16 with
// 1/65536 and -32768 (the converter checked); the beta multiplier, its left
// shift and diff_min come from the converter.
const char* prepare_softmax_s8(const OpContext& ctx) {
  if (!has_io(ctx, 1, 1) || (!is_s8(ctx.output(0)) && ctx.output(0).dtype != DType::kInt16)) {
    return FLOE_MSG("int8 softmax writes one int8 or int16 output");
  }
  if (!dims_equal(ctx.input(0).shape, ctx.output(0).shape) || ctx.input(0).shape.rank < 1) {
    return FLOE_MSG("softmax output shape differs or input is a scalar");
  }
  // The output's offset is its dtype's lowest value, whatever the record says.
  const schema::Requantization* r = ctx.op->requantization();
  if (r == nullptr) return FLOE_MSG("operator without requantization data (convert the model again)");
  ref::SoftmaxS8Params& p = ctx.params<SoftmaxPrepared>().s8;
  p.input_multiplier = r->output_multiplier();
  p.input_left_shift = r->output_shift();
  p.diff_min = r->diff_min();
  if (p.input_multiplier < 0 || p.input_left_shift < 0 || p.input_left_shift > 31 || p.diff_min > 0) {
    return FLOE_MSG("int8 softmax multiplier, shift or diff_min out of range");
  }
  return nullptr;
}

}  // namespace

Status eval_softmax_s16(const PreparedOp& ctx) {
  ref::softmax_s16(ctx.params_as<SoftmaxPrepared>().s16,
                   {in_as<int16_t>(ctx.input(0)), data_as<const int16_t>(ctx.input(1)), data_as<const int16_t>(ctx.input(2)),
                    out_as<int16_t>(ctx.output(0))});
  return Status::kOk;
}

// int16 input and output (zero points 0, output Q0.15: the converter checked),
// its multiplier and shift, and its two constant int16 [513] tables.
const char* prepare_softmax_s16(const OpContext& ctx) {
  if (ctx.input_count() != 3 || ctx.output_count() != 1 || !ctx.has_input(0) || !ctx.has_input(1) ||
      !ctx.has_input(2) || ctx.input(0).dtype != DType::kInt16 || ctx.output(0).dtype != DType::kInt16) {
    return FLOE_MSG("int16 softmax takes an int16 input, its two tables, and writes an int16 output");
  }
  for (int t : {1, 2}) {
    const TensorView& table = ctx.input(t);
    if (table.dtype != DType::kInt16 || table.shape.num_elements() != 513) {
      return FLOE_MSG("int16 softmax tables must be int16 [513]");
    }
  }
  if (!dims_equal(ctx.input(0).shape, ctx.output(0).shape) || ctx.input(0).shape.rank < 1) {
    return FLOE_MSG("softmax output shape differs or input is a scalar");
  }
  const char* why = nullptr;
  const schema::Requantization* r = requantization_of(ctx, &why, DType::kInt16);
  if (r == nullptr) return why;
  ref::SoftmaxS16Params& p = ctx.params<SoftmaxPrepared>().s16;
  p.input_multiplier = r->output_multiplier();
  p.input_shift = r->output_shift();
  if (!valid_multiplier(p.input_multiplier, p.input_shift)) return FLOE_MSG("int16 softmax multiplier out of range");
  return nullptr;
}

const char* prepare_softmax(const OpContext& ctx) {
  if (const char* err = prepare_unary(ctx)) return err;
  if (ctx.input(0).shape.rank < 1) return FLOE_MSG("softmax input must have rank >= 1");
  ctx.params<SoftmaxPrepared>().f32.beta = ctx.op->options_as_SoftmaxOptions()->beta();
  return nullptr;
}

Status eval_softmax(const PreparedOp& ctx) {
  ref::softmax_f32(ctx.params_as<SoftmaxPrepared>().f32,
                   {in_as<float>(ctx.input(0)), out_as<float>(ctx.output(0))});
  return Status::kOk;
}

const char* prepare_log_softmax(const OpContext& ctx) { return prepare_last_axis_f32(ctx); }

Status eval_log_softmax(const PreparedOp& ctx) {
  ref::log_softmax_f32(in_as<float>(ctx.input(0)), out_as<float>(ctx.output(0)));
  return Status::kOk;
}

}  // namespace floe::ops

namespace floe::ref {

void softmax_s8_rows(const SoftmaxS8Params& params, const In<int8_t>& input, void* output, bool wide) {
  constexpr int kScaledDiffIntegerBits = 5;     // d * beta in Q5.26
  constexpr int kAccumulationIntegerBits = 12;  // the sum of up to 4096 exps in Q12.19
  const int32_t lowest = wide ? INT16_MIN : INT8_MIN, highest = wide ? INT16_MAX : INT8_MAX;
  const int output_bits = wide ? 16 : 8;
  const Shape& shape = input.shape;
  const ptrdiff_t depth = shape.rank == 0 ? 1 : shape.dims[shape.rank - 1];
  // 32-bit: Model::Load bounds element counts to int32 (no 64-bit division linked).
  const ptrdiff_t rows = depth == 0 ? 0 : static_cast<int32_t>(shape.num_elements()) / static_cast<int32_t>(depth);
  // d scaled to Q5.26: a left shift then a rounding high multiply, one rounding.
  auto scaled_diff = [&](int32_t d) {
    return saturating_rounding_doubling_high_mul(wrapping_shift_left(d, params.input_left_shift),
                                                 params.input_multiplier);
  };
  for (ptrdiff_t r = 0; r < rows; ++r) {
    const int8_t* x = input.data + r * depth;
    int32_t max_value = INT8_MIN;
    for (ptrdiff_t c = 0; c < depth; ++c) max_value = x[c] > max_value ? x[c] : max_value;

    int32_t sum_of_exps = 0;  // Q12.19
    for (ptrdiff_t c = 0; c < depth; ++c) {
      const int32_t d = x[c] - max_value;
      if (d < params.diff_min) continue;
      const int32_t e = fixed_point::exp_on_negative_values(scaled_diff(d), kScaledDiffIntegerBits);
      sum_of_exps += fixed_point::rescale(e, 0, kAccumulationIntegerBits);
    }
    int num_bits_over_unit = 0;
    const int32_t scale = reciprocal(sum_of_exps, kAccumulationIntegerBits, &num_bits_over_unit);
    for (ptrdiff_t c = 0; c < depth; ++c) {
      const int32_t d = x[c] - max_value;
      int32_t v = lowest;
      if (d >= params.diff_min) {
        const int32_t e = fixed_point::exp_on_negative_values(scaled_diff(d), kScaledDiffIntegerBits);
        // e / sum in Q0.31, brought down to the output's bits.
        const int32_t unsaturated =
            rounding_divide_by_pot(fixed_point::mul(scale, e), num_bits_over_unit + 31 - output_bits);
        v = clamp_to(unsaturated + lowest, lowest, highest);
      }
      if (wide) {
        static_cast<int16_t*>(output)[r * depth + c] = static_cast<int16_t>(v);
      } else {
        static_cast<int8_t*>(output)[r * depth + c] = static_cast<int8_t>(v);
      }
    }
  }
}

namespace {

// TFLite's generic_int16_table_lookup: the table's 512 intervals over the
// int16 range, 128 values each, interpolated with rounding.
int16_t table_lookup(int16_t value, const int16_t* table) {
  const int32_t index = 256 + (value >> 7);
  const int32_t offset = value & 0x7f;
  const int32_t base = table[index];
  const int32_t slope = table[index + 1] - base;
  return static_cast<int16_t>(base + ((slope * offset + 64) >> 7));
}

}  // namespace

void softmax_s16(const SoftmaxS16Params& params, const SoftmaxS16Operands& ops) {
  const Shape& shape = ops.input.shape;
  const ptrdiff_t depth = shape.dims[shape.rank - 1];
  const ptrdiff_t rows = depth == 0 ? 0 : static_cast<int32_t>(shape.num_elements()) / static_cast<int32_t>(depth);
  for (ptrdiff_t r = 0; r < rows; ++r) {
    const int16_t* x = ops.input.data + r * depth;
    int16_t* out = ops.output.data + r * depth;
    int32_t max_value = INT16_MIN;
    for (ptrdiff_t c = 0; c < depth; ++c) max_value = x[c] > max_value ? x[c] : max_value;
    // exp(d) into the output (Q0.15), summed in Q16.15.
    int32_t sum = 0;
    for (ptrdiff_t c = 0; c < depth; ++c) {
      const int32_t scaled = multiply_by_quantized_multiplier(x[c] - max_value, params.input_multiplier,
                                                              params.input_shift);
      const int16_t centred = static_cast<int16_t>(clamp_to(scaled + 32767, INT16_MIN, INT16_MAX));
      out[c] = table_lookup(centred, ops.exp_table);
      sum += out[c];
    }
    // 1 / sum through 1 / (1 + x): sum normalized to [1, 2) in Q1.14, minus
    // one, recentred to int16.
    const int headroom_plus_one = __builtin_clz(static_cast<uint32_t>(sum));
    const int32_t shifted = static_cast<int32_t>(((static_cast<int64_t>(sum) << (headroom_plus_one - 1)) + (1 << 13)) >> 14);
    const int16_t centred_sum =
        static_cast<int16_t>(clamp_to(shifted - ((1 << 15) + (1 << 16)), INT16_MIN, INT16_MAX));
    const int64_t reciprocal = table_lookup(centred_sum, ops.reciprocal_table);
    const int right_shift = 31 - headroom_plus_one;
    const int64_t round = int64_t{1} << (right_shift - 1);
    for (ptrdiff_t c = 0; c < depth; ++c) {
      const int64_t v = (int64_t{out[c]} * reciprocal + round) >> right_shift;
      out[c] = static_cast<int16_t>(v < 0 ? 0 : (v > INT16_MAX ? INT16_MAX : v));
    }
  }
}

}  // namespace floe::ref

FLOE_KERNEL(REFERENCE, SOFTMAX, INT16, ops::SoftmaxPrepared, ops::prepare_softmax_s16, ops::eval_softmax_s16)
FLOE_KERNEL(REFERENCE, SOFTMAX, ANY, ops::SoftmaxPrepared, ops::prepare_softmax, ops::eval_softmax)
FLOE_KERNEL(REFERENCE, SOFTMAX, INT8, ops::SoftmaxPrepared, ops::prepare_softmax_s8, ops::eval_softmax_s8)
FLOE_KERNEL(REFERENCE, LOG_SOFTMAX, ANY, NoParams, ops::prepare_log_softmax, ops::eval_log_softmax)
