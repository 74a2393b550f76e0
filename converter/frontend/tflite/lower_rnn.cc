// SPDX-License-Identifier: Apache-2.0
// Recurrent .tflite ops: SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM (their state
// tensors become persistent variables).
#include "converter/frontend/tflite/importer.h"

namespace floe::conv::tflite_detail {

// SVDF: float throughout (hybrid int8 weights dequantized), or int8 input and
// output with int8 weights_feature, int16 or int8 weights_time and state and
// an int32 bias; the state a variable tensor (rank-2 shapes, svdf.h).
void Importer::lower_svdf() {
  const auto* o = op_->builtin_options_as_SVDFOptions();
  if (o == nullptr) fail_op("SVDFOptions are missing");
  const int x = input(0);
  const int wf = float_weights(x, input(1)), wt = float_weights(x, input(2));
  const int bias = has_input(3) ? input(3) : -1;
  const int state = state_input(4);
  const int out = output();
  const std::vector<int64_t> xs = value(x).shape, fs = value(wf).shape, ts = value(wt).shape;
  if (xs.size() != 2 || fs.size() != 2 || ts.size() != 2) {
    fail_op("input, weights_feature and weights_time must be 2-D, got " + shape_to_string(xs) + ", " +
            shape_to_string(fs) + ", " + shape_to_string(ts));
  }
  const int64_t rank = o->rank(), filters = fs[0], memory = ts[1];
  if (rank < 1 || filters % rank != 0 || memory < 1 || fs[1] != xs[1] || ts[0] != filters) {
    fail_op("rank " + std::to_string(rank) + ", weights_feature " + shape_to_string(fs) + " and weights_time " +
            shape_to_string(ts) + " do not fit input " + shape_to_string(xs) +
            " (rank must divide the filters, weights_feature [filters, input], weights_time [filters, memory >= 1])");
  }
  const int64_t units = filters / rank;
  expect_shape(state, {xs[0], filters * memory});
  expect_shape(out, {xs[0], units});
  if (bias >= 0) expect_shape(bias, {units});
  const DType t = value(x).dtype;
  if (t == DType::kFloat32) {
    for (int v : {wf, wt, state, out}) expect_dtype(v, DType::kFloat32, "operand");
    if (bias >= 0) expect_dtype(bias, DType::kFloat32, "bias");
  } else if (t == DType::kInt8) {
    expect_dtype(wf, DType::kInt8, "weights_feature");
    const DType s = value(state).dtype;
    if (s != DType::kInt16 && s != DType::kInt8) fail_op(std::string("state is ") + dtype_name(s) + ", not int16 or int8");
    expect_dtype(wt, s, "weights_time");
    if (bias >= 0) expect_dtype(bias, DType::kInt32, "bias");
    expect_dtype(out, DType::kInt8, "output");
  } else {
    fail_op(std::string("input is ") + dtype_name(t) + ", not float32 or int8");
  }
  schema::SvdfOptionsT options;
  options.rank = static_cast<int32_t>(rank);
  if (t == DType::kFloat32) options.activation = fused(o->fused_activation_function());
  add_op(schema::OpCode::SVDF, {x, wf, wt, bias, state}, {out}, wrap(options));
}

// UNIDIRECTIONAL_SEQUENCE_LSTM, float (hybrid int8 weights dequantized) or
// TFLite's 8x8_16 integer form (int8 input, weights, output state and output,
// int32 biases, int16 cell state; converter/quantize derives its integers):
// the operands stay in TFLite's 24 slots, the two states as variable tensors;
// floe adds a scratch output [5, cells] (int16 in int8). The runtime's
// prepare checks the shapes again; here they are checked for the message.
void Importer::lower_lstm() {
  const auto* o = op_->builtin_options_as_UnidirectionalSequenceLSTMOptions();
  if (o == nullptr) fail_op("UnidirectionalSequenceLSTMOptions are missing");
  const auto* slots = op_->inputs();
  if (slots == nullptr || slots->size() < 20 || slots->size() > 24) {
    fail_op("has " + std::to_string(slots ? slots->size() : 0) + " inputs, expected 20 to 24");
  }
  std::vector<int> inputs(24, -1);
  const int x = input(0);
  inputs[0] = x;
  for (int k = 1; k < 18; ++k) {
    if (has_input(k)) inputs[static_cast<size_t>(k)] = float_weights(x, input(k));
  }
  inputs[18] = state_input(18);
  inputs[19] = state_input(19);
  const std::vector<int64_t> xs = value(x).shape;
  if (xs.size() != 3) fail_op("input must be 3-D, got " + shape_to_string(xs));
  if (inputs[2] < 0 || inputs[3] < 0 || inputs[4] < 0 || inputs[6] < 0 || inputs[7] < 0 || inputs[8] < 0) {
    fail_op("the forget, cell and output gates' input and recurrent weights are required");
  }
  const std::vector<int64_t> forget = value(inputs[2]).shape;
  if (forget.size() != 2 || forget[1] != xs[2]) {
    fail_op("input_to_forget_weights " + shape_to_string(forget) + " do not match input " + shape_to_string(xs));
  }
  const int64_t batch = o->time_major() ? xs[1] : xs[0], cells = forget[0];
  if (inputs[16] >= 0 && value(inputs[16]).shape.size() != 2) {
    fail_op("projection_weights must be 2-D [outputs, cells], got " + shape_to_string(value(inputs[16]).shape));
  }
  const int64_t outputs = inputs[16] >= 0 ? value(inputs[16]).shape[0] : cells;
  expect_shape(inputs[18], {batch, outputs});
  expect_shape(inputs[19], {batch, cells});
  const int out = output();
  expect_shape(out, {xs[0], xs[1], outputs});
  const bool quantized = value(x).dtype == DType::kInt8;
  if (quantized) {
    check_lstm_8x8_16(inputs, out);
  } else {
    for (int v : inputs) {
      if (v >= 0) expect_dtype(v, DType::kFloat32, "operand");
    }
    expect_dtype(out, DType::kFloat32, "output");
  }
  Value scratch;
  scratch.name = short_name(value(out).name) + "/lstm_scratch";
  scratch.dtype = quantized ? DType::kInt16 : DType::kFloat32;
  scratch.shape = {5, cells};
  const int scratch_id = out_.model.add_value(std::move(scratch));
  written_.push_back(false);
  schema::LstmOptionsT options;
  options.cell_clip = o->cell_clip();
  options.projection_clip = o->proj_clip();
  options.time_major = o->time_major();
  if (!(options.cell_clip >= 0.0f) || !(options.projection_clip >= 0.0f)) fail_op("clips must be >= 0");
  add_op(schema::OpCode::UNIDIRECTIONAL_SEQUENCE_LSTM, std::move(inputs), {out, scratch_id}, wrap(options));
}

// The integer LSTM floe runs: TFLite's 8x8_16 form without peephole,
// projection or layer normalization (as TFLM's int8 LSTM; unsupported_reason
// lists those). The hidden
// intermediate (the op's fifth intermediate tensor) is what TFLite quantizes
// o * tanh(c) to and copies into the output state, so the two must agree.
void Importer::check_lstm_8x8_16(const std::vector<int>& inputs, int out) {
  for (int k = 1; k < 16; ++k) {
    const int v = inputs[static_cast<size_t>(k)];
    if (v >= 0 && k < 9) expect_dtype(v, DType::kInt8, "weights");
    if (v >= 0 && k >= 12) expect_dtype(v, DType::kInt32, "bias");
  }
  expect_dtype(inputs[18], DType::kInt8, "output state");
  expect_dtype(inputs[19], DType::kInt16, "cell state");
  expect_dtype(out, DType::kInt8, "output");
  const auto* intermediates = op_->intermediates();
  if (intermediates == nullptr || intermediates->size() != 5 || intermediates->Get(4) < 0 ||
      static_cast<uint32_t>(intermediates->Get(4)) >= graph_->tensors()->size()) {
    fail_op("int8 LSTM needs TFLite's five intermediate tensors (the fifth quantizes the hidden state)");
  }
  const fb::Tensor* hidden = graph_->tensors()->Get(static_cast<uint32_t>(intermediates->Get(4)));
  const Quantization q = read_quantization(hidden, {}, hidden->name() ? hidden->name()->str() : "hidden");
  const Quantization& state = value(inputs[18]).quantization;
  if (q.scale.size() != 1 || q.zero_point.size() != 1 || state.scale != q.scale || state.zero_point != q.zero_point) {
    fail_unsupported("int8 LSTM whose hidden intermediate is quantized unlike its output state");
  }
}


}  // namespace floe::conv::tflite_detail
