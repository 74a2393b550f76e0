// SPDX-License-Identifier: Apache-2.0
// Weighted and windowed .tflite ops: CONV_2D, DEPTHWISE_CONV_2D,
// FULLY_CONNECTED, TRANSPOSE_CONV (filters rewritten into floe's layouts,
// per-channel axes following), the pools and MEAN.
#include "converter/frontend/tflite/importer.h"

#include <cstring>

namespace floe::conv::tflite_detail {

namespace {

// Rewrites a quantization's per-channel axis for a transpose: new axis j holds old axis perm[j].
Quantization permuted(Quantization q, const std::vector<int>& perm) {
  if (q.scale.size() > 1) {
    for (size_t j = 0; j < perm.size(); ++j) {
      if (perm[j] == q.dimension) {
        q.dimension = static_cast<int32_t>(j);
        break;
      }
    }
  }
  return q;
}

// out[i0..i3] = in[index along perm] for 4-D, any element size.
std::shared_ptr<const HostTensor> transpose4(const HostTensor& in, const std::vector<int>& perm) {
  auto out = std::make_shared<HostTensor>();
  out->dtype = in.dtype;
  for (int p : perm) out->shape.push_back(in.shape[static_cast<size_t>(p)]);
  const size_t esize = dtype_size(in.dtype);
  out->data.resize(in.data.size());
  int64_t in_stride[4];
  in_stride[3] = 1;
  for (int d = 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * in.shape[static_cast<size_t>(d + 1)];
  const auto& s = out->shape;
  size_t o = 0;
  for (int64_t a = 0; a < s[0]; ++a)
    for (int64_t b = 0; b < s[1]; ++b)
      for (int64_t c = 0; c < s[2]; ++c)
        for (int64_t d = 0; d < s[3]; ++d, ++o) {
          const int64_t idx[4] = {a, b, c, d};
          int64_t src = 0;
          for (int j = 0; j < 4; ++j) src += idx[j] * in_stride[perm[static_cast<size_t>(j)]];
          std::memcpy(&out->data[o * esize], &in.data[static_cast<size_t>(src) * esize], esize);
        }
  return out;
}


}  // namespace

void Importer::lower_conv() {
  const auto* o = op_->builtin_options_as_Conv2DOptions();
  if (o == nullptr) fail_op("Conv2DOptions are missing");
  const int x = input(0), w = float_weights(x, input(1));
  const std::vector<int64_t> xs = value(x).shape, ws = value(w).shape;
  if (xs.size() != 4 || ws.size() != 4) fail_op("input and filter must be 4-D (NHWC, OHWI)");
  if (ws[3] != xs[3]) {
    fail_op("filter " + shape_to_string(ws) + " does not match input channels " + std::to_string(xs[3]) +
            " (grouped convolutions are not supported)");
  }
  const Axis h = axis(xs[1], ws[1], o->stride_h(), o->dilation_h_factor(), o->padding());
  const Axis wd = axis(xs[2], ws[2], o->stride_w(), o->dilation_w_factor(), o->padding());
  schema::Conv2DOptionsT c;
  c.stride_h = o->stride_h();
  c.stride_w = o->stride_w();
  c.dilation_h = o->dilation_h_factor();
  c.dilation_w = o->dilation_w_factor();
  c.pad_top = static_cast<int32_t>(h.before);
  c.pad_bottom = static_cast<int32_t>(h.after);
  c.pad_left = static_cast<int32_t>(wd.before);
  c.pad_right = static_cast<int32_t>(wd.after);
  c.activation = fused(o->fused_activation_function());
  // OHWI -> HWIO: new axis j is old axis kToHwio[j].
  const std::vector<int> kToHwio = {1, 2, 3, 0};
  const Value& filter = value(w);
  Value hwio;
  hwio.name = filter.name + "/hwio";
  hwio.dtype = filter.dtype;
  hwio.shape = {ws[1], ws[2], ws[3], ws[0]};
  hwio.quantization = permuted(filter.quantization, kToHwio);
  int filter_id;
  if (filter.is_constant()) {
    hwio.constant = transpose4(*filter.constant, kToHwio);
    filter_id = out_.model.add_value(std::move(hwio));
    written_.push_back(true);
  } else {
    filter_id = out_.model.add_value(std::move(hwio));
    written_.push_back(false);
    schema::TransposeOptionsT t;
    t.perm = {1, 2, 3, 0};
    add_op(schema::OpCode::TRANSPOSE, {w}, {filter_id}, wrap(t));
  }
  std::vector<int> inputs = {x, filter_id};
  if (has_input(2)) inputs.push_back(input(2));
  const int out = output();
  check_weighted(x, filter_id, has_input(2) ? inputs[2] : -1, out);
  if (has_input(2)) expect_shape(inputs[2], {ws[0]});
  expect_shape(out, {xs[0], h.out, wd.out, ws[0]});
  add_op(schema::OpCode::CONV2D, std::move(inputs), {out}, wrap(c));
}

void Importer::lower_depthwise() {
  const auto* o = op_->builtin_options_as_DepthwiseConv2DOptions();
  if (o == nullptr) fail_op("DepthwiseConv2DOptions are missing");
  const int x = input(0), w = float_weights(x, input(1));
  const std::vector<int64_t> xs = value(x).shape, ws = value(w).shape;
  if (xs.size() != 4 || ws.size() != 4 || ws[0] != 1) fail_op("input must be 4-D NHWC and the filter [1,H,W,C*M]");
  const int64_t channels = xs[3];
  if (channels < 1 || ws[3] % channels != 0) {
    fail_op("filter " + shape_to_string(ws) + " is not a multiple of the " + std::to_string(channels) +
            " input channels");
  }
  // The multiplier follows from the shapes (the option is redundant and some
  // converters leave it 0).
  const int64_t multiplier = ws[3] / channels;
  const Axis h = axis(xs[1], ws[1], o->stride_h(), o->dilation_h_factor(), o->padding());
  const Axis wd = axis(xs[2], ws[2], o->stride_w(), o->dilation_w_factor(), o->padding());
  schema::DepthwiseConv2DOptionsT d;
  d.stride_h = o->stride_h();
  d.stride_w = o->stride_w();
  d.dilation_h = o->dilation_h_factor();
  d.dilation_w = o->dilation_w_factor();
  d.pad_top = static_cast<int32_t>(h.before);
  d.pad_bottom = static_cast<int32_t>(h.after);
  d.pad_left = static_cast<int32_t>(wd.before);
  d.pad_right = static_cast<int32_t>(wd.after);
  d.depth_multiplier = static_cast<int32_t>(multiplier);
  d.activation = fused(o->fused_activation_function());
  // [1,H,W,C*M] and floe's [H,W,C,M] have the same bytes (channel c*M + m).
  const Value& filter = value(w);
  Value hwcm;
  hwcm.name = filter.name + "/hwcm";
  hwcm.dtype = filter.dtype;
  hwcm.shape = {ws[1], ws[2], channels, multiplier};
  hwcm.quantization = filter.quantization;
  if (hwcm.quantization.scale.size() > 1) {
    if (multiplier == 1) {
      hwcm.quantization.dimension = 2;
    } else if (channels == 1) {
      hwcm.quantization.dimension = 3;
    } else {
      fail_op("per-channel weights over " + std::to_string(channels) + " channels x multiplier " +
              std::to_string(multiplier) + " span two of floe's filter dimensions");
    }
  }
  int filter_id;
  if (filter.is_constant()) {
    auto data = std::make_shared<HostTensor>(*filter.constant);
    data->shape = hwcm.shape;
    hwcm.constant = std::move(data);
    filter_id = out_.model.add_value(std::move(hwcm));
    written_.push_back(true);
  } else {
    filter_id = out_.model.add_value(std::move(hwcm));
    written_.push_back(false);
    add_op(schema::OpCode::RESHAPE, {w}, {filter_id});
  }
  std::vector<int> inputs = {x, filter_id};
  if (has_input(2)) inputs.push_back(input(2));
  const int out = output();
  check_weighted(x, filter_id, has_input(2) ? inputs[2] : -1, out);
  if (has_input(2)) expect_shape(inputs[2], {channels * multiplier});
  expect_shape(out, {xs[0], h.out, wd.out, channels * multiplier});
  add_op(schema::OpCode::DEPTHWISE_CONV2D, std::move(inputs), {out}, wrap(d));
}

void Importer::lower_fully_connected() {
  const auto* o = op_->builtin_options_as_FullyConnectedOptions();
  const int8_t activation = o ? o->fused_activation_function() : kActNone;
  const int x = input(0), w = float_weights(x, input(1));
  const std::vector<int64_t> ws = value(w).shape;
  if (ws.size() != 2 || ws[1] < 1) fail_op("weights must be 2-D [units, inputs], got " + shape_to_string(ws));
  const Value xv = value(x);
  int64_t elements = 1;
  for (int64_t d : xv.shape) elements *= d;
  if (elements % ws[1] != 0) {
    fail_op("input " + shape_to_string(xv.shape) + " is not a whole number of rows of " + std::to_string(ws[1]));
  }
  const int64_t rows = elements / ws[1], units = ws[0];
  int a = x;
  if (xv.shape != std::vector<int64_t>{rows, ws[1]}) {
    a = derived(xv, {rows, ws[1]}, "rows");
    add_op(schema::OpCode::RESHAPE, {x}, {a});
  }
  // TFLite's [units, inputs] weights are floe's B with transpose_b: no copy,
  // and a per-channel axis 0 stays the output-channel axis.
  schema::MatMulOptionsT m;
  m.transpose_b = true;
  m.activation = fused(activation);
  std::vector<int> inputs = {a, w};
  if (has_input(2)) inputs.push_back(input(2));
  const int out = output();
  check_weighted(x, w, has_input(2) ? inputs[2] : -1, out);
  if (has_input(2)) expect_shape(inputs[2], {units});
  int64_t out_elements = 1;
  for (int64_t d : value(out).shape) out_elements *= d;
  if (out_elements != rows * units) {
    fail_op("output " + shape_to_string(value(out).shape) + " does not hold " + std::to_string(rows) + " x " +
            std::to_string(units) + " values");
  }
  if (value(out).shape == std::vector<int64_t>{rows, units}) {
    add_op(schema::OpCode::MATMUL, std::move(inputs), {out}, wrap(m));
    return;
  }
  const int flat = derived(value(out), {rows, units}, "rows");  // keep_num_dims
  add_op(schema::OpCode::MATMUL, std::move(inputs), {flat}, wrap(m));
  add_op(schema::OpCode::RESHAPE, {flat}, {out});
}

void Importer::lower_pool(schema::OpCode code) {
  const auto* o = op_->builtin_options_as_Pool2DOptions();
  if (o == nullptr) fail_op("Pool2DOptions are missing");
  const int x = input(0);
  const std::vector<int64_t> xs = value(x).shape;
  if (xs.size() != 4) fail_op("input must be 4-D NHWC");
  const Axis h = axis(xs[1], o->filter_height(), o->stride_h(), 1, o->padding());
  const Axis w = axis(xs[2], o->filter_width(), o->stride_w(), 1, o->padding());
  schema::Pool2DOptionsT p;
  p.filter_h = o->filter_height();
  p.filter_w = o->filter_width();
  p.stride_h = o->stride_h();
  p.stride_w = o->stride_w();
  p.pad_top = static_cast<int32_t>(h.before);
  p.pad_bottom = static_cast<int32_t>(h.after);
  p.pad_left = static_cast<int32_t>(w.before);
  p.pad_right = static_cast<int32_t>(w.after);
  p.activation = fused(o->fused_activation_function());
  const int out = output();
  expect_dtype(out, value(x).dtype, "output");
  expect_shape(out, {xs[0], h.out, w.out, xs[3]});
  add_op(code, {x}, {out}, wrap(p));
}

void Importer::lower_mean() {
  const int x = input(0);
  const int64_t rank = static_cast<int64_t>(value(x).shape.size());
  std::set<int32_t> axes;
  for (int64_t a : int_constant(input(1), "the axes")) {
    if (a < -rank || a >= rank) fail_op("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    axes.insert(static_cast<int32_t>(a < 0 ? a + rank : a));
  }
  const auto* o = op_->builtin_options_as_ReducerOptions();
  schema::ReduceOptionsT r;
  r.axes.assign(axes.begin(), axes.end());
  r.keep_dims = o != nullptr && o->keep_dims();
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!axes.count(static_cast<int32_t>(d))) {
      shape.push_back(value(x).shape[static_cast<size_t>(d)]);
    } else if (r.keep_dims) {
      shape.push_back(1);
    }
  }
  const int out = output();
  expect_dtype(out, value(x).dtype, "output");
  expect_shape(out, shape);
  add_op(schema::OpCode::MEAN, {x}, {out}, wrap(r));
}

// TRANSPOSE_CONV: inputs output_shape, weights [O, H, W, I], input, bias. The
// padding is that of the forward convolution from the output back to the
// input (TFLite computes it from the output's size).
void Importer::lower_transpose_conv() {
  const auto* o = op_->builtin_options_as_TransposeConvOptions();
  if (o == nullptr) fail_op("TransposeConvOptions are missing");
  // The output shape may be a model input (TFLM's SEANet layers feed it):
  // floe's shapes are static, so it is then the output tensor's shape.
  const int shape_input = input(0);
  const int out = output();
  std::vector<int64_t> out_shape;
  if (value(shape_input).is_constant()) {
    out_shape = int_constant(shape_input, "the output shape");
  } else {
    expect_dtype(shape_input, DType::kInt32, "output shape");
    expect_shape(shape_input, {4});
    out_shape = value(out).shape;
  }
  const int x = input(2), w = float_weights(x, input(1));
  const std::vector<int64_t> xs = value(x).shape, ws = value(w).shape;
  if (xs.size() != 4 || ws.size() != 4 || out_shape.size() != 4) {
    fail_op("input, filter and output shape must be 4-D (NHWC, OHWI)");
  }
  if (ws[3] != xs[3]) fail_op("filter " + shape_to_string(ws) + " does not match input channels " + std::to_string(xs[3]));
  if (out_shape[0] != xs[0] || out_shape[3] != ws[0]) {
    fail_op("output shape " + shape_to_string(out_shape) + " disagrees with the input batch or filter channels");
  }
  expect_shape(out, out_shape);
  const Axis h = axis(out_shape[1], ws[1], o->stride_h(), 1, o->padding());
  const Axis wd = axis(out_shape[2], ws[2], o->stride_w(), 1, o->padding());
  schema::Conv2DOptionsT c;
  c.stride_h = o->stride_h();
  c.stride_w = o->stride_w();
  c.dilation_h = 1;
  c.dilation_w = 1;
  c.pad_top = static_cast<int32_t>(h.before);
  c.pad_bottom = static_cast<int32_t>(h.after);
  c.pad_left = static_cast<int32_t>(wd.before);
  c.pad_right = static_cast<int32_t>(wd.after);
  // OHWI -> floe's HWOI: new axis j is old axis kToHwoi[j].
  const std::vector<int> kToHwoi = {1, 2, 0, 3};
  const Value& filter = value(w);
  if (!filter.is_constant()) fail_op("the filter must be a constant");
  Value hwoi;
  hwoi.name = filter.name + "/hwoi";
  hwoi.dtype = filter.dtype;
  hwoi.shape = {ws[1], ws[2], ws[0], ws[3]};
  hwoi.quantization = permuted(filter.quantization, kToHwoi);
  hwoi.constant = transpose4(*filter.constant, kToHwoi);
  const int filter_id = out_.model.add_value(std::move(hwoi));
  written_.push_back(true);
  const int bias = has_input(3) ? input(3) : -1;
  check_weighted(x, filter_id, bias, out);
  if (bias >= 0) expect_shape(bias, {ws[0]});
  const int8_t activation = o->fused_activation_function();
  if (value(x).dtype != DType::kFloat32) {
    // Quantized: the bias and the clamp are part of the op's requantization.
    c.activation = fused(activation);
    std::vector<int> inputs = {x, filter_id};
    if (bias >= 0) inputs.push_back(bias);
    add_op(schema::OpCode::TRANSPOSE_CONV2D, std::move(inputs), {out}, wrap(c));
    return;
  }
  // Float: floe's op has no bias, so the bias (and activation) follow it.
  if (bias < 0) {
    with_activation(schema::OpCode::TRANSPOSE_CONV2D, {x, filter_id}, activation, wrap(c));
    return;
  }
  const int conv = derived(value(out), value(out).shape, "transposed");
  add_op(schema::OpCode::TRANSPOSE_CONV2D, {x, filter_id}, {conv}, wrap(c));
  with_activation(schema::OpCode::ADD, {conv, bias}, activation);
}


}  // namespace floe::conv::tflite_detail
