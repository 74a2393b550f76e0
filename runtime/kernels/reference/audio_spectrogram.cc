// SPDX-License-Identifier: Apache-2.0
// AUDIO_SPECTROGRAM on the reference kernels: the common kernel with the
// portable radix-4 pass (runtime/kernels/common/audio_spectrogram.h).
#include "runtime/kernels/common/audio_spectrogram.h"

namespace floe::ops {
namespace {

Status eval_audio_spectrogram(const PreparedOp& op) {
  kernels::audio_spectrogram_f32<kernels::radix4_pass>(op.params_as<kernels::AudioSpectrogramParams>(),
                                                       kernels::audio_spectrogram_operands(op));
  return Status::kOk;
}

}  // namespace
}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, AUDIO_SPECTROGRAM, ANY, kernels::AudioSpectrogramParams,
            kernels::prepare_audio_spectrogram_params, ops::eval_audio_spectrogram)
