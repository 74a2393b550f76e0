// SPDX-License-Identifier: Apache-2.0
// Adapters for TRANSPOSE and PAD. prepare checks, once at Init(), everything
// the byte-moving kernels assume: rank <= kMaxRank, perm a permutation, output
// shape = permuted / padded input shape, non-negative paddings within the
// mirror limits, and a constant value of the tensor's dtype; it copies perm,
// paddings and the pad element into the params block. Both kernels are
// dtype-agnostic; eval only hands over pointers.
#include "runtime/core/dispatch_ops.h"

#include <string.h>

#include "runtime/kernels/reference/pad.h"
#include "runtime/kernels/reference/transpose.h"

namespace floe::ops {

static_assert(static_cast<int>(ref::PadMode::kReflect) == static_cast<int>(schema::PadMode::REFLECT) &&
                  static_cast<int>(ref::PadMode::kSymmetric) == static_cast<int>(schema::PadMode::SYMMETRIC),
              "ref::PadMode must mirror schema::PadMode");

namespace {

bool same_io_dtype(const OpContext& ctx) {
  return ctx.has_input(0) && ctx.input(0).dtype == ctx.output(0).dtype &&
         dtype_size(ctx.input(0).dtype) > 0;
}

// The CONSTANT-mode pad element written from PadOptions.constant_value for
// dtypes the option can express; false for the others (they need input 1).
bool option_pad_element(DType dtype, float value, unsigned char* element) {
  switch (dtype) {
    case DType::kFloat32: {
      memcpy(element, &value, sizeof value);
      return true;
    }
    case DType::kFloat64: {
      const double v = value;
      memcpy(element, &v, sizeof v);
      return true;
    }
    case DType::kInt8: {
      const int8_t v = static_cast<int8_t>(value);
      memcpy(element, &v, sizeof v);
      return true;
    }
    case DType::kUInt8: {
      const uint8_t v = static_cast<uint8_t>(value);
      memcpy(element, &v, sizeof v);
      return true;
    }
    case DType::kInt16: {
      const int16_t v = static_cast<int16_t>(value);
      memcpy(element, &v, sizeof v);
      return true;
    }
    case DType::kUInt16: {
      const uint16_t v = static_cast<uint16_t>(value);
      memcpy(element, &v, sizeof v);
      return true;
    }
    case DType::kInt32: {
      const int32_t v = static_cast<int32_t>(value);
      memcpy(element, &v, sizeof v);
      return true;
    }
    case DType::kInt64: {
      const int64_t v = static_cast<int64_t>(value);
      memcpy(element, &v, sizeof v);
      return true;
    }
    case DType::kBool: {
      const uint8_t v = value != 0.0f ? 1 : 0;
      memcpy(element, &v, sizeof v);
      return true;
    }
    default:
      return false;
  }
}

// Whole float values in int range convert exactly; checked so the cast in
// option_pad_element is defined.
bool option_value_fits(DType dtype, float value) {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kBool:
      return true;
    case DType::kInt8:
      return value >= -128.0f && value <= 127.0f;
    case DType::kUInt8:
      return value >= 0.0f && value <= 255.0f;
    case DType::kInt16:
      return value >= -32768.0f && value <= 32767.0f;
    case DType::kUInt16:
      return value >= 0.0f && value <= 65535.0f;
    case DType::kInt32:
      return value >= -2147483648.0f && value < 2147483648.0f;
    case DType::kInt64:
      return value >= -9.2233720368547758e18f && value < 9.2233720368547758e18f;
    default:
      return false;
  }
}

}  // namespace

const char* prepare_transpose(const OpContext& ctx) {
  if (ctx.input_count() != 1 || ctx.output_count() != 1 || !same_io_dtype(ctx)) {
    return FLOE_MSG("transpose takes one input and one output of the same dtype");
  }
  const Shape in = ctx.input(0).shape, out = ctx.output(0).shape;
  const auto* perm = ctx.op->options_as_TransposeOptions()->perm();
  const int32_t rank = in.rank;
  if (rank > kMaxRank || out.rank != rank) return FLOE_MSG("transpose rank is wrong or too large");
  if ((perm ? static_cast<int32_t>(perm->size()) : 0) != rank) {
    return FLOE_MSG("transpose perm length differs from the rank");
  }
  bool seen[kMaxRank] = {false};
  for (int32_t i = 0; i < rank; ++i) {
    const int32_t p = perm->Get(static_cast<uint32_t>(i));
    if (p < 0 || p >= rank || seen[p]) return FLOE_MSG("transpose perm is not a permutation");
    seen[p] = true;
    if (out.dims[i] != in.dims[p]) return FLOE_MSG("transpose output shape is not the permuted input");
  }
  TransposePrepared& prepared = ctx.params<TransposePrepared>();
  for (int32_t i = 0; i < rank; ++i) prepared.perm[i] = perm->Get(static_cast<uint32_t>(i));
  prepared.element_size = static_cast<int32_t>(dtype_size(ctx.input(0).dtype));
  return nullptr;
}

Status eval_transpose(const PreparedOp& ctx) {
  const TensorView &input = ctx.input(0), &output = ctx.output(0);
  const TransposePrepared& prepared = ctx.params_as<TransposePrepared>();
  ref::TransposeParams params;
  params.perm = prepared.perm;
  params.element_size = static_cast<size_t>(prepared.element_size);
  ref::transpose(params, In<void>{input.data, input.shape}, Out<void>{output.data, output.shape});
  return Status::kOk;
}

const char* prepare_pad(const OpContext& ctx) {
  if (ctx.input_count() < 1 || ctx.input_count() > 2 || ctx.output_count() != 1 ||
      !same_io_dtype(ctx)) {
    return FLOE_MSG("pad takes an input, an optional constant value, and one output of the same dtype");
  }
  const TensorView input = ctx.input(0);
  const Shape in = input.shape, out = ctx.output(0).shape;
  const auto* options = ctx.op->options_as_PadOptions();
  const auto* paddings = options->paddings();
  const int32_t rank = in.rank;
  if (rank > kMaxRank || out.rank != rank) return FLOE_MSG("pad rank is wrong or too large");
  if ((paddings ? static_cast<int32_t>(paddings->size()) : 0) != 2 * rank) {
    return FLOE_MSG("pad needs two paddings per input dim");
  }
  const schema::PadMode mode = options->mode();
  if (mode != schema::PadMode::CONSTANT && mode != schema::PadMode::REFLECT &&
      mode != schema::PadMode::SYMMETRIC) {
    return FLOE_MSG("unknown pad mode");
  }
  for (int32_t d = 0; d < rank; ++d) {
    const int32_t before = paddings->Get(static_cast<uint32_t>(2 * d));
    const int32_t after = paddings->Get(static_cast<uint32_t>(2 * d + 1));
    if (before < 0 || after < 0) return FLOE_MSG("paddings must be >= 0");
    if (static_cast<int64_t>(in.dims[d]) + before + after != out.dims[d]) {
      return FLOE_MSG("pad output shape is not the padded input");
    }
    const int32_t limit = mode == schema::PadMode::REFLECT ? in.dims[d] - 1 : in.dims[d];
    if (mode != schema::PadMode::CONSTANT && (before > limit || after > limit)) {
      return FLOE_MSG("mirror paddings exceed the input dim");
    }
  }
  PadPrepared& prepared = ctx.params<PadPrepared>();
  if (mode == schema::PadMode::CONSTANT) {
    if (ctx.has_input(1)) {
      const TensorView value = ctx.input(1);
      if (value.dtype != input.dtype || value.shape.num_elements() != 1) {
        return FLOE_MSG("pad constant value must be one element of the input's dtype");
      }
      prepared.value_from_input = true;
    } else if (!option_value_fits(input.dtype, options->constant_value())) {
      return FLOE_MSG("pad constant value for this dtype must be given as input 1");
    } else {
      option_pad_element(input.dtype, options->constant_value(), prepared.constant_value);
    }
  }
  for (int32_t i = 0; i < 2 * rank; ++i) {
    prepared.paddings[i] = paddings->Get(static_cast<uint32_t>(i));
  }
  prepared.mode = static_cast<uint8_t>(mode);
  prepared.element_size = static_cast<int32_t>(dtype_size(input.dtype));
  return nullptr;
}

Status eval_pad(const PreparedOp& ctx) {
  const TensorView &input = ctx.input(0), &output = ctx.output(0);
  const PadPrepared& prepared = ctx.params_as<PadPrepared>();
  ref::PadParams params;
  params.paddings = prepared.paddings;
  params.mode = static_cast<ref::PadMode>(prepared.mode);
  params.element_size = static_cast<size_t>(prepared.element_size);
  params.constant_value =
      prepared.value_from_input ? ctx.input(1).data : static_cast<const void*>(prepared.constant_value);
  ref::pad(params, In<void>{input.data, input.shape}, Out<void>{output.data, output.shape});
  return Status::kOk;
}

}  // namespace floe::ops
