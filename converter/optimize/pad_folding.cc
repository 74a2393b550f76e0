// SPDX-License-Identifier: Apache-2.0
// Pad folding. Convolution with explicit padding reads zeros outside the input,
// so PAD(x) with CONSTANT mode, value 0, and paddings only on H and W of an NHWC
// tensor, read only by a CONV2D / DEPTHWISE_CONV2D as its data input, equals
// that convolution on x with the paddings added to its own pads (the output
// shape is unchanged). Pooling is excluded: max pooling and TF's average pooling
// ignore padded cells, which is not the same as reading explicit zeros.
#include <string>

#include "converter/optimize/graph_view.h"
#include "converter/optimize/passes.h"

namespace floe::conv::opt {
namespace {

// Spatial paddings [top, bottom, left, right] of a foldable PAD; false otherwise.
bool zero_spatial_pad(const LoweredModel& model, const LoweredOp& pad, int32_t pads[4]) {
  if (pad.opcode != schema::OpCode::PAD || pad.inputs.size() != 1 || pad.outputs.size() != 1) {
    return false;  // a second input carries a non-float32 constant value
  }
  const schema::PadOptionsT* o = pad.options.AsPadOptions();
  if (o == nullptr || o->mode != schema::PadMode::CONSTANT || o->constant_value != 0.0f ||
      o->paddings.size() != 8) {
    return false;
  }
  if (model.values[static_cast<size_t>(pad.inputs[0])].dtype != DType::kFloat32) return false;
  const std::vector<int32_t>& p = o->paddings;
  if (p[0] != 0 || p[1] != 0 || p[6] != 0 || p[7] != 0) return false;  // batch, channels
  pads[0] = p[2];
  pads[1] = p[3];
  pads[2] = p[4];
  pads[3] = p[5];
  return true;
}

template <typename Options>
void add_pads(Options* o, const int32_t pads[4]) {
  o->pad_top += pads[0];
  o->pad_bottom += pads[1];
  o->pad_left += pads[2];
  o->pad_right += pads[3];
}

}  // namespace

int fold_pads(LoweredModel& model, PassLog& log) {
  const GraphView view(model);
  std::vector<bool> remove(model.ops.size(), false);
  int folds = 0;
  for (size_t i = 0; i < model.ops.size(); ++i) {
    int32_t pads[4];
    const LoweredOp& pad = model.ops[i];
    if (!zero_spatial_pad(model, pad, pads)) continue;
    const int c = view.sole_consumer(pad.outputs[0]);
    if (c < 0) continue;
    LoweredOp& conv = model.ops[static_cast<size_t>(c)];
    if (input_slot(conv, pad.outputs[0]) != 0) continue;  // data input only, once
    if (conv.opcode == schema::OpCode::CONV2D) {
      add_pads(conv.options.AsConv2DOptions(), pads);
    } else if (conv.opcode == schema::OpCode::DEPTHWISE_CONV2D) {
      add_pads(conv.options.AsDepthwiseConv2DOptions(), pads);
    } else {
      continue;
    }
    conv.inputs[0] = pad.inputs[0];
    remove[i] = true;
    ++folds;
    log.push_back(std::string(schema::EnumNameOpCode(conv.opcode)) + " '" + conv.node_name + "' <- PAD '" +
                  pad.node_name + "' [" + std::to_string(pads[0]) + "," + std::to_string(pads[1]) + "," +
                  std::to_string(pads[2]) + "," + std::to_string(pads[3]) + "]");
  }
  if (folds > 0) erase_ops(model, remove);
  return folds;
}

}  // namespace floe::conv::opt
