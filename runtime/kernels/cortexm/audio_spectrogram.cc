// SPDX-License-Identifier: Apache-2.0
// AUDIO_SPECTROGRAM on the CORTEX_M backend: the common kernel
// (runtime/kernels/common/audio_spectrogram.h) with this backend's radix-4 pass.
#include "runtime/kernels/common/audio_spectrogram.h"
#include "runtime/kernels/cortexm/fft.h"

namespace floe::ops {
namespace {

Status eval_audio_spectrogram_cortexm(const PreparedOp& op) {
  kernels::audio_spectrogram_f32<cortexm::radix4_pass>(op.params_as<kernels::AudioSpectrogramParams>(),
                                                       kernels::audio_spectrogram_operands(op));
  return Status::kOk;
}

}  // namespace
}  // namespace floe::ops

FLOE_KERNEL(CORTEX_M, AUDIO_SPECTROGRAM, ANY, kernels::AudioSpectrogramParams,
            kernels::prepare_audio_spectrogram_params, ops::eval_audio_spectrogram_cortexm)
