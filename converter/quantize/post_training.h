// SPDX-License-Identifier: Apache-2.0
// Post-training int8 quantization, as TFLite's converter does it with a
// representative dataset: the float model (after optimization: batch norm
// folded, activations fused) runs on every calibration sample through the
// reference kernels, every activation's range is recorded, and the model is
// rewritten to int8 with TFLite's rules (asymmetric activations from ranges
// widened to include 0, symmetric per-channel weights in [-127, 127], int32
// biases, fixed outputs for SOFTMAX/LOGISTIC/TANH, shared quantization for
// ops that only move values). Ops without an int8 kernel stay float between
// DEQUANTIZE and QUANTIZE. derive_int8_arithmetic then gives the int8 ops
// their integers.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "converter/frontend/calibration/calibration_file.h"
#include "converter/ir/lowered.h"

namespace floe::conv {

enum class CalibrationMethod {
  kMinMax,      // absolute min and max over all samples (TFLite's calibrator)
  kPercentile,  // ranges clipped to a percentile of |value| (outliers ignored); a second
                // pass over the samples fills a histogram of |value| per tensor
};

struct PostTrainingOptions {
  bool int8_io = false;  // model inputs/outputs become int8 (else they stay float32)
  bool strict = false;   // refuse ops without an int8 kernel instead of leaving them float
  CalibrationMethod method = CalibrationMethod::kMinMax;
  double percentile = 99.99;  // kPercentile: of |value|, per tensor over all samples
  // Called before each calibration sample runs (done, total): progress for a
  // long calibration (floe-convert on a terminal).
  std::function<void(size_t, size_t)> on_sample;
};

// One sample: a tensor per model input, in model.inputs order.
using CalibrationSample = std::vector<HostTensor>;

// Matches calibration arrays to the model's inputs by name ("images" or
// "images:0"; a file name may have '/' and ':' replaced by '_'), or by
// position (np.savez's unnamed arrays arr_0, arr_1, ... feed input 0, 1, ...;
// a lone .npy feeds a one-input model whatever its name), and splits batches
// [n, ...] into samples of the input's shape [1, ...]. A float64 array (what
// np.random.rand gives) for a float32 input is rounded to float32, with a
// note in `notes`. Throws ConvertError naming the file and the input for an
// unknown or missing input, another dtype or shape, differing sample counts,
// or no samples.
std::vector<CalibrationSample> calibration_samples(const LoweredModel& model,
                                                   const std::vector<CalibrationArray>& arrays,
                                                   std::vector<std::string>* notes = nullptr);

struct ValueRange {
  float min = 0;
  float max = 0;
  bool seen = false;
};

// Runs the float model on every sample; the range of every float value
// (inputs and op outputs). A NaN or infinity is an error naming the value,
// its op and the sample.
std::vector<ValueRange> calibrate(const LoweredModel& model, const std::vector<CalibrationSample>& samples,
                                  const PostTrainingOptions& options);

// TFLite's GetAsymmetricQuantizationParams for int8: the range widened to
// include 0, scale (max - min) / 255 in float, zero point rounded from min and
// clamped. A zero range gets a tiny scale instead of 0.
Quantization asymmetric_int8(float min, float max);

struct PostTrainingReport {
  int int8_ops = 0;
  int quantize_ops = 0, dequantize_ops = 0;  // inserted
  std::vector<std::string> float_ops;        // "NODE (OPCODE)": left float, wrapped
  // Where each int8 activation's quantization came from (value names).
  std::set<std::string> ranges_from_fake_quant, ranges_from_calibration;
  int weights_from_fake_quant = 0;           // weight tensors quantized with their trained grid's scales
  std::vector<std::string> trained_weight_ops, untrained_weight_ops;  // "NODE (OPCODE)": with / without a grid
  std::vector<std::string> notes;            // channels or grids that could not keep it, and why
};

// Rewrites `model` (its float values keep their ids; new values are appended).
// `trained` gives values their quantization outright (FakeQuant ranges of a
// quantization-aware-trained graph; a group of values that must share one
// quantization takes it from any member); `ranges` (calibration) fill the
// rest. Float constant weights whose Value::quantization holds a trained
// FakeQuant grid keep its scale (zero point 0) in every channel it holds
// within [-127, 127]. Throws ConvertError (kUnsupported, listing
// every offender) when options.strict and an op has no int8 kernel, or when
// values an int8 op needs have neither (all of them in one message).
PostTrainingReport quantize_post_training(LoweredModel* model, const std::vector<ValueRange>& ranges,
                                          const PostTrainingOptions& options,
                                          const std::map<int, Quantization>& trained = {});

// Per int8 op: the signal-to-quantization-noise ratio of its dequantized
// output against the float model's same value, over all samples.
struct LayerSqnr {
  std::string node;
  std::string opcode;
  double sqnr_db = 0;  // +inf when equal
};
// `float_model` is the model before quantize_post_training, `quantized` after
// it and derive_int8_arithmetic (before any renumbering pass).
std::vector<LayerSqnr> measure_sqnr(const LoweredModel& float_model, const LoweredModel& quantized,
                                    const std::vector<CalibrationSample>& samples);

}  // namespace floe::conv
