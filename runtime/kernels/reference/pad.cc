// SPDX-License-Identifier: Apache-2.0
// Pad, dimension by dimension: for each output coordinate of dim d, either the
// whole sub-block lies in the constant border (filled with the pad element) or it
// maps to one input coordinate (directly, or mirrored once), and the walk
// descends into dim d + 1. In the last dim the in-range run is one memcpy.
// Recursion depth is the rank (<= kMaxRank); no allocation.
#include "runtime/kernels/reference/pad.h"

#include <stdint.h>
#include <string.h>
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {
namespace {

struct Walk {
  const PadParams* params;
  const int32_t* in_dims;
  const int32_t* out_dims;
  int32_t rank;
  size_t in_block[kMaxRank];   // bytes of one step along dim d in the input
  size_t out_block[kMaxRank];  // bytes of one step along dim d in the output
};

void fill(unsigned char* dst, size_t bytes, const PadParams& params) {
  const size_t size = params.element_size;
  const unsigned char* value = static_cast<const unsigned char*>(params.constant_value);
  for (size_t i = 0; i + size <= bytes; i += size) memcpy(dst + i, value, size);
}

// Input coordinate of output coordinate `o` along a dim of `n` input elements
// with `before` padding, or -1 for the constant border.
int32_t source(PadMode mode, int32_t o, int32_t before, int32_t n) {
  int32_t i = o - before;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kReflect:
      return i < 0 ? -i : 2 * (n - 1) - i;
    case PadMode::kSymmetric:
      return i < 0 ? -i - 1 : 2 * n - 1 - i;
  }
  return -1;
}

void pad_dim(const Walk& w, int32_t d, const unsigned char* src, unsigned char* dst) {
  const int32_t before = w.params->paddings[2 * d];
  const int32_t n = w.in_dims[d];
  const int32_t out = w.out_dims[d];
  if (d == w.rank - 1) {
    const size_t size = w.params->element_size;
    for (int32_t o = 0; o < out;) {
      const int32_t i = o - before;
      if (i >= 0 && i < n) {  // the whole in-range run at once
        const int32_t run = n - i < out - o ? n - i : out - o;
        memcpy(dst + static_cast<size_t>(o) * size, src + static_cast<size_t>(i) * size,
               static_cast<size_t>(run) * size);
        o += run;
        continue;
      }
      const int32_t s = source(w.params->mode, o, before, n);
      if (s < 0) {
        fill(dst + static_cast<size_t>(o) * size, size, *w.params);
      } else {
        memcpy(dst + static_cast<size_t>(o) * size, src + static_cast<size_t>(s) * size, size);
      }
      ++o;
    }
    return;
  }
  for (int32_t o = 0; o < out; ++o) {
    unsigned char* block = dst + static_cast<size_t>(o) * w.out_block[d];
    const int32_t s = source(w.params->mode, o, before, n);
    if (s < 0) {
      fill(block, w.out_block[d], *w.params);
    } else {
      pad_dim(w, d + 1, src + static_cast<size_t>(s) * w.in_block[d], block);
    }
  }
}

}  // namespace

void pad(const PadParams& params, const In<void>& input, const Out<void>& output) {
  const int32_t rank = input.shape.rank;
  const size_t size = params.element_size;
  if (output.shape.num_elements() == 0) return;
  if (rank == 0) {
    memcpy(output.data, input.data, size);
    return;
  }
  if (input.shape.num_elements() == 0) {  // nothing to copy or mirror: all border
    fill(static_cast<unsigned char*>(output.data),
         static_cast<size_t>(output.shape.num_elements()) * size, params);
    return;
  }
  Walk w;
  w.params = &params;
  w.in_dims = input.shape.dims;
  w.out_dims = output.shape.dims;
  w.rank = rank;
  size_t in_bytes = size, out_bytes = size;
  for (int32_t d = rank - 1; d >= 0; --d) {
    w.in_block[d] = in_bytes;
    w.out_block[d] = out_bytes;
    in_bytes *= static_cast<size_t>(input.shape.dims[d]);
    out_bytes *= static_cast<size_t>(output.shape.dims[d]);
  }
  pad_dim(w, 0, static_cast<const unsigned char*>(input.data),
          static_cast<unsigned char*>(output.data));
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {
namespace {

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

static_assert(static_cast<int>(ref::PadMode::kReflect) == static_cast<int>(schema::PadMode::REFLECT) &&
                  static_cast<int>(ref::PadMode::kSymmetric) == static_cast<int>(schema::PadMode::SYMMETRIC),
              "ref::PadMode must mirror schema::PadMode");

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
  if (const schema::Requantization* r = ctx.op->requantization()) {
    // Quantized: the padding is real zero, i.e. the output's zero point (0 for
    // int16, TFLite's 16x8 scheme).
    const bool wide = input.dtype == DType::kInt16;
    if ((input.dtype != DType::kInt8 && !wide) || mode != schema::PadMode::CONSTANT || ctx.has_input(1) ||
        (wide ? r->output_offset() != 0 : (r->output_offset() < -128 || r->output_offset() > 127))) {
      return FLOE_MSG("quantized pad takes int8 or int16 and pads with the output zero point");
    }
    if (wide) {
      const int16_t zero = 0;
      memcpy(prepared.constant_value, &zero, sizeof(zero));
    } else {
      const int8_t zero = static_cast<int8_t>(r->output_offset());
      memcpy(prepared.constant_value, &zero, 1);
    }
  } else if (mode == schema::PadMode::CONSTANT) {
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

namespace floe::ref {

void pad_s8(const PadS8Params& params, const In<int8_t>& input, const Out<int8_t>& output) {
  const int8_t value = static_cast<int8_t>(params.pad_value);
  PadParams bytes;
  bytes.paddings = params.paddings;
  bytes.mode = PadMode::kConstant;
  bytes.element_size = 1;
  bytes.constant_value = &value;
  pad(bytes, In<void>{input.data, input.shape}, Out<void>{output.data, output.shape});
}

}  // namespace floe::ref

FLOE_KERNEL(REFERENCE, PAD, ANY, ops::PadPrepared, ops::prepare_pad, ops::eval_pad)
