// SPDX-License-Identifier: Apache-2.0
#include "runtime/kernels/reference/mfcc.h"

#include <math.h>

#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {

void mfcc_f32(const MfccParams& p, const MfccOperands& ops) {
  // TF's floor before the log, so silent bands give log(1e-12), not -inf.
  constexpr float kEnergyFloor = 1e-12f;
  const int32_t bins = ops.spectrogram.shape.dims[2];
  const int64_t rows = ops.spectrogram.shape.span(0, 2);
  const int32_t channels = p.filterbank_channels;
  float* energy = ops.energies;
  for (int64_t r = 0; r < rows; ++r) {
    const float* spectrum = ops.spectrogram.data + r * bins + p.first_bin;
    for (int32_t c = 0; c < channels; ++c) energy[c] = 0.0f;
    for (int32_t i = 0; i < p.used_bins; ++i) {
      const float magnitude = sqrtf(spectrum[i]);
      const float falling = magnitude * ops.weights[i];
      const int32_t c = ops.band[i];
      if (c >= 0) energy[c] += falling;
      if (c + 1 < channels) energy[c + 1] += magnitude - falling;
    }
    for (int32_t c = 0; c < channels; ++c) energy[c] = logf(energy[c] < kEnergyFloor ? kEnergyFloor : energy[c]);
    float* out = ops.output.data + r * p.coefficients;
    const float* row = ops.dct;
    for (int32_t k = 0; k < p.coefficients; ++k, row += channels) {
      float sum = 0.0f;
      for (int32_t c = 0; c < channels; ++c) sum += row[c] * energy[c];
      out[k] = sum;
    }
  }
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

const char* prepare_mfcc(const OpContext& ctx) {
  if (!has_io(ctx, 4, 2)) return FLOE_MSG("mfcc takes spectrogram, weights, bands, dct matrix");
  const auto* o = ctx.op->options_as_MfccOptions();
  if (o == nullptr) return FLOE_MSG("mfcc needs MfccOptions");
  const TensorView spec = ctx.input(0), weights = ctx.input(1), band = ctx.input(2), dct = ctx.input(3);
  const TensorView out = ctx.output(0), scratch = ctx.output(1);
  if (!is_f32(spec) || spec.shape.rank != 3) return FLOE_MSG("spectrogram must be float32 [channels, frames, bins]");
  if (!is_f32(dct) || dct.shape.rank != 2) return FLOE_MSG("dct must be float32 [coefficients, channels]");
  const int32_t channels = dct.shape.dims[1], coefficients = dct.shape.dims[0];
  if (channels < 1 || coefficients < 1) return FLOE_MSG("mfcc needs channels and coefficients");
  if (!is_f32(weights) || weights.shape.rank != 1 || band.dtype != DType::kInt32 || band.shape.rank != 1 ||
      band.shape.dims[0] != weights.shape.dims[0]) {
    return FLOE_MSG("weights and bands must be float32 / int32 [used bins]");
  }
  const int32_t used = weights.shape.dims[0], first = o->first_bin();
  if (first < 0 || used > spec.shape.dims[2] - first) return FLOE_MSG("filterbank bins outside the spectrogram");
  const int32_t* b = static_cast<const int32_t*>(band.data);
  for (int32_t i = 0; i < used; ++i) {
    if (b[i] < -1 || b[i] >= channels) return FLOE_MSG("filterbank band out of range");
  }
  if (!is_f32(out) || out.shape.rank != 3 || out.shape.dims[0] != spec.shape.dims[0] ||
      out.shape.dims[1] != spec.shape.dims[1] || out.shape.dims[2] != coefficients) {
    return FLOE_MSG("mfcc output must be float32 [channels, frames, coefficients]");
  }
  if (!is_f32(scratch) || scratch.shape.rank != 1 || scratch.shape.dims[0] != channels) {
    return FLOE_MSG("mfcc scratch must be float32 [filterbank channels]");
  }
  ref::MfccParams& p = ctx.params<ref::MfccParams>();
  p.first_bin = first;
  p.used_bins = used;
  p.filterbank_channels = channels;
  p.coefficients = coefficients;
  return nullptr;
}

Status eval_mfcc(const PreparedOp& ctx) {
  ref::mfcc_f32(ctx.params_as<ref::MfccParams>(),
                {in_as<float>(ctx.input(0)), static_cast<const float*>(ctx.input(1).data),
                 static_cast<const int32_t*>(ctx.input(2).data), static_cast<const float*>(ctx.input(3).data),
                 static_cast<float*>(ctx.output(1).data), out_as<float>(ctx.output(0))});
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, MFCC, ANY, ref::MfccParams, ops::prepare_mfcc, ops::eval_mfcc)
