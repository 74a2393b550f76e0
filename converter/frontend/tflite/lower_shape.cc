// SPDX-License-Identifier: Apache-2.0
// .tflite ops that move or reshape data: PAD, STRIDED_SLICE, CONCATENATION,
// EXPAND_DIMS, SHAPE, PACK, RESIZE_NEAREST_NEIGHBOR, REVERSE_V2.
#include "converter/frontend/tflite/importer.h"

#include <algorithm>

#include "converter/ops/strided_slice_spec.h"

namespace floe::conv::tflite_detail {

void Importer::lower_pad() {
  const int x = input(0);
  const std::vector<int64_t> xs = value(x).shape;
  const std::vector<int64_t> pads = int_constant(input(1), "the paddings");
  if (pads.size() != 2 * xs.size()) fail_op("paddings must be [rank, 2]");
  schema::PadOptionsT p;
  std::vector<int64_t> shape;
  for (size_t d = 0; d < xs.size(); ++d) {
    const int64_t before = pads[2 * d], after = pads[2 * d + 1];
    if (before < 0 || after < 0 || before > INT32_MAX || after > INT32_MAX) fail_op("paddings must be >= 0");
    p.paddings.push_back(static_cast<int32_t>(before));
    p.paddings.push_back(static_cast<int32_t>(after));
    shape.push_back(xs[d] + before + after);
  }
  p.mode = schema::PadMode::CONSTANT;
  p.constant_value = 0.0f;  // real zero: the zero point of a quantized tensor
  const int out = output();
  expect_dtype(out, value(x).dtype, "output");
  expect_shape(out, shape);
  add_op(schema::OpCode::PAD, {x}, {out}, wrap(p));
}

void Importer::lower_strided_slice() {
  const auto* o = op_->builtin_options_as_StridedSliceOptions();
  StridedSliceMasks masks;
  bool offset = false;
  if (o != nullptr) {
    masks.begin = o->begin_mask();
    masks.end = o->end_mask();
    masks.ellipsis = o->ellipsis_mask();
    masks.new_axis = o->new_axis_mask();
    masks.shrink = o->shrink_axis_mask();
    offset = o->offset();
  }
  const int x = input(0);
  const std::vector<int64_t> begin = int_constant(input(1), "begin");
  std::vector<int64_t> end = int_constant(input(2), "end");
  const std::vector<int64_t> strides = int_constant(input(3), "strides");
  if (offset) {  // end counts from begin
    if (end.size() != begin.size()) fail_op("begin and end lengths differ");
    for (size_t i = 0; i < end.size(); ++i) end[i] += begin[i];
  }
  SliceSpec spec;
  const std::string error = resolve_strided_slice(value(x).shape, begin, end, strides, masks, &spec);
  if (!error.empty()) fail_op(error);
  const int out = output();
  expect_dtype(out, value(x).dtype, "output");
  expect_shape(out, spec.final_shape);
  schema::StridedSliceOptionsT s;
  s.begin = spec.begin;
  s.stride = spec.stride;
  if (spec.counts == spec.final_shape) {
    add_op(schema::OpCode::STRIDED_SLICE, {x}, {out}, wrap(s));
    return;
  }
  const int mid = derived(value(out), spec.counts, "slice");
  add_op(schema::OpCode::STRIDED_SLICE, {x}, {mid}, wrap(s));
  add_op(schema::OpCode::RESHAPE, {mid}, {out});
}

void Importer::lower_concat() {
  const auto* o = op_->builtin_options_as_ConcatenationOptions();
  if (o == nullptr) fail_op("ConcatenationOptions are missing");
  const auto* list = op_->inputs();
  if (list == nullptr || list->size() == 0) fail_op("has no inputs");
  std::vector<int> inputs;
  for (uint32_t k = 0; k < list->size(); ++k) inputs.push_back(input(static_cast<int>(k)));
  const int64_t rank = static_cast<int64_t>(value(inputs[0]).shape.size());
  int64_t a = o->axis();
  if (a < -rank || a >= rank) fail_op("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
  if (a < 0) a += rank;
  std::vector<int64_t> shape = value(inputs[0]).shape;
  shape[static_cast<size_t>(a)] = 0;
  for (int v : inputs) {
    const std::vector<int64_t>& s = value(v).shape;
    if (static_cast<int64_t>(s.size()) != rank) fail_op("inputs differ in rank");
    expect_dtype(v, value(inputs[0]).dtype, "input");
    for (int64_t d = 0; d < rank; ++d) {
      if (d != a && s[static_cast<size_t>(d)] != value(inputs[0]).shape[static_cast<size_t>(d)]) {
        fail_op("inputs differ outside the concatenation axis");
      }
    }
    shape[static_cast<size_t>(a)] += s[static_cast<size_t>(a)];
  }
  expect_shape(output(), shape);
  expect_dtype(output(), value(inputs[0]).dtype, "output");
  schema::ConcatOptionsT c;
  c.axis = static_cast<int32_t>(a);
  with_activation(schema::OpCode::CONCAT, std::move(inputs), o->fused_activation_function(), wrap(c));
}

int64_t Importer::scalar_constant(int id, const char* what) const {
  const std::vector<int64_t> v = int_constant(id, what);
  if (v.size() != 1) fail_op(std::string(what) + " must hold one value, holds " + std::to_string(v.size()));
  return v[0];
}

// EXPAND_DIMS: a RESHAPE inserting a 1 at the axis (input 1).
void Importer::lower_expand_dims() {
  const int x = input(0), out = output();
  std::vector<int64_t> shape = value(x).shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = scalar_constant(input(1), "axis");
  if (axis < -rank - 1 || axis > rank) {
    fail_op("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  if (axis < 0) axis += rank + 1;
  shape.insert(shape.begin() + axis, 1);
  expect_dtype(out, value(x).dtype, "output");
  expect_shape(out, shape);
  expect_same_quantization(out, value(x), "output");
  add_op(schema::OpCode::RESHAPE, {x}, {out});
}

// SHAPE: floe's shapes are static, so its output is a constant.
void Importer::lower_shape() {
  const int x = input(0);
  const int out = output();
  const std::vector<int64_t> in = value(x).shape;
  Value& v = out_.model.values[static_cast<size_t>(out)];
  if (v.dtype != DType::kInt32 && v.dtype != DType::kInt64) fail_op("output must be int32 or int64");
  expect_shape(out, {static_cast<int64_t>(in.size())});
  auto host = std::make_shared<HostTensor>();
  host->dtype = v.dtype;
  host->shape = v.shape;
  host->data.resize(in.size() * dtype_size(v.dtype));
  for (size_t i = 0; i < in.size(); ++i) {
    if (v.dtype == DType::kInt32) {
      host->as<int32_t>()[i] = static_cast<int32_t>(in[i]);
    } else {
      host->as<int64_t>()[i] = in[i];
    }
  }
  v.constant = std::move(host);
  v.quantization = {};
  written_[static_cast<size_t>(out)] = true;
}

// PACK: each input reshaped with a 1 at the axis, then concatenated there.
// TFLite copies the stored values: every operand shares one quantization.
void Importer::lower_pack() {
  const auto* o = op_->builtin_options_as_PackOptions();
  if (o == nullptr) fail_op("PackOptions are missing");
  const auto* list = op_->inputs();
  if (list == nullptr || list->size() == 0) fail_op("has no inputs");
  if (o->values_count() != static_cast<int32_t>(list->size())) {
    fail_op("values_count " + std::to_string(o->values_count()) + " differs from its " +
            std::to_string(list->size()) + " inputs");
  }
  std::vector<int> inputs;
  for (uint32_t k = 0; k < list->size(); ++k) inputs.push_back(input(static_cast<int>(k)));
  const int out = output();
  const Value first = value(inputs[0]);  // a copy: derived() adds values
  const int64_t rank = static_cast<int64_t>(first.shape.size());
  int64_t axis = o->axis();
  if (axis < -rank - 1 || axis > rank) {
    fail_op("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  if (axis < 0) axis += rank + 1;
  std::vector<int64_t> one = first.shape, shape = first.shape;
  one.insert(one.begin() + axis, 1);
  shape.insert(shape.begin() + axis, static_cast<int64_t>(inputs.size()));
  for (int v : inputs) {
    expect_dtype(v, first.dtype, "input");
    expect_shape(v, first.shape);
    expect_same_quantization(v, first, "input");
  }
  expect_dtype(out, first.dtype, "output");
  expect_shape(out, shape);
  expect_same_quantization(out, first, "output");
  if (inputs.size() == 1) {
    add_op(schema::OpCode::RESHAPE, {inputs[0]}, {out});
    return;
  }
  std::vector<int> pieces;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const int piece = derived(value(inputs[k]), one, "pack" + std::to_string(k));
    add_op(schema::OpCode::RESHAPE, {inputs[k]}, {piece});
    pieces.push_back(piece);
  }
  schema::ConcatOptionsT c;
  c.axis = static_cast<int32_t>(axis);
  add_op(schema::OpCode::CONCAT, pieces, {out}, wrap(c));
}

// RESIZE_NEAREST_NEIGHBOR: NHWC, the new size a constant (input 1); values
// are copied, so input and output share one quantization.
void Importer::lower_resize_nearest() {
  const auto* o = op_->builtin_options_as_ResizeNearestNeighborOptions();
  const int x = input(0), out = output();
  const std::vector<int64_t> size = int_constant(input(1), "size");
  const std::vector<int64_t> in = value(x).shape;
  if (in.size() != 4 || size.size() != 2 || size[0] < 1 || size[1] < 1) {
    fail_op("input must be NHWC and size two positive extents, got " + shape_to_string(in) + " and " +
            std::to_string(size.size()) + " values");
  }
  expect_dtype(out, value(x).dtype, "output");
  expect_shape(out, {in[0], size[0], size[1], in[3]});
  expect_same_quantization(out, value(x), "output");
  schema::ResizeOptionsT r;
  r.align_corners = o != nullptr && o->align_corners();
  r.half_pixel_centers = o != nullptr && o->half_pixel_centers();
  add_op(schema::OpCode::RESIZE_NEAREST, {x}, {out}, wrap(r));
}

// REVERSE_V2: one STRIDED_SLICE walking the reversed axes (input 1) backwards.
void Importer::lower_reverse() {
  const int x = input(0), out = output(), axes = input(1);
  const std::vector<int64_t> in = value(x).shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  schema::StridedSliceOptionsT s;
  s.begin.assign(in.size(), 0);
  s.stride.assign(in.size(), 1);
  for (int64_t axis : int_constant(axes, "axis")) {
    if (axis < -rank || axis >= rank) {
      fail_op("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    }
    if (axis < 0) axis += rank;
    const size_t a = static_cast<size_t>(axis);
    s.begin[a] = static_cast<int32_t>(in[a] > 0 ? in[a] - 1 : 0);
    s.stride[a] = -1;
  }
  expect_dtype(out, value(x).dtype, "output");
  expect_shape(out, in);
  expect_same_quantization(out, value(x), "output");
  add_op(schema::OpCode::STRIDED_SLICE, {x}, {out}, wrap(s));
}


}  // namespace floe::conv::tflite_detail
