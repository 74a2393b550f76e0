// SPDX-License-Identifier: Apache-2.0
// The Resize* family: bilinear, nearest neighbor, bicubic and area, each one
// RESIZE_* op (align_corners / half_pixel_centers as options); all but nearest
// compute in float32, so other input dtypes get a CAST first.
#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

std::vector<TensorInfo> infer_resize(const NodeContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_rank(0, 4);
  const std::vector<int64_t> size = ctx.constant_ints(1, "the output size");
  if (size.size() != 2 || size[0] < 0 || size[1] < 0) ctx.fail("size must be [height, width]");
  const auto& in = ctx.input(0).shape;
  // TF refuses it too ("input image must be of non-zero size"); the runtime's
  // prepare would reject the emitted op, so it must be said here.
  if ((in[1] == 0 || in[2] == 0) && in[0] * size[0] * size[1] * in[3] != 0) {
    ctx.fail("cannot resize an empty image: input " + shape_to_string(in) + " to " + std::to_string(size[0]) +
             "x" + std::to_string(size[1]));
  }
  const DType t = ctx.node().op() == "ResizeNearestNeighbor" ? ctx.input(0).dtype : DType::kFloat32;
  return {TensorInfo{t, {in[0], size[0], size[1], in[3]}, nullptr}};
}

template <schema::OpCode kCode>
void lower_resize(LowerContext& ctx) {
  schema::ResizeOptionsT o;
  o.align_corners = attr_bool(ctx.node().def, "align_corners", false);
  o.half_pixel_centers = attr_bool(ctx.node().def, "half_pixel_centers", false);
  int input = ctx.input_value(0);
  if (kCode != schema::OpCode::RESIZE_NEAREST && ctx.input(0).dtype != DType::kFloat32) {
    const int f = ctx.new_value(DType::kFloat32, ctx.input(0).shape, "as_float");
    ctx.add_op(schema::OpCode::CAST, {input}, {f});
    input = f;
  }
  ctx.add_op(kCode, {input}, {ctx.output_value(0)}, LowerContext::options(o));
}

}  // namespace

const std::vector<OpHandler>& resize_handlers() {
  using schema::OpCode;
  static const std::vector<OpHandler> handlers = {
      {"ResizeBilinear", infer_resize, lower_resize<OpCode::RESIZE_BILINEAR>},
      {"ResizeNearestNeighbor", infer_resize, lower_resize<OpCode::RESIZE_NEAREST>},
      {"ResizeBicubic", infer_resize, lower_resize<OpCode::RESIZE_BICUBIC>},
      {"ResizeArea", infer_resize, lower_resize<OpCode::RESIZE_AREA>},
  };
  return handlers;
}

}  // namespace floe::conv
