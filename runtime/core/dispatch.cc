// SPDX-License-Identifier: Apache-2.0
// The dispatch table (runtime/ops.def expanded at compile time) and what the
// adapters share: operand binding. Each op's adapter lives with its kernel
// (runtime/kernels/<backend>/<op>.cc).
#include "runtime/core/dispatch.h"

#include "runtime/core/model.h"
#include "runtime/core/op_adapter.h"
#include "runtime/kernels/reference/audio_spectrogram.h"
#include "runtime/kernels/reference/batch_matmul.h"
#include "runtime/kernels/reference/binary.h"
#include "runtime/kernels/reference/concat.h"
#include "runtime/kernels/reference/conv2d.h"
#include "runtime/kernels/reference/conv3d.h"
#include "runtime/kernels/reference/crop_and_resize.h"
#include "runtime/kernels/reference/cumulative.h"
#include "runtime/kernels/reference/depthwise_conv2d.h"
#include "runtime/kernels/reference/dilation2d.h"
#include "runtime/kernels/reference/extract_patches.h"
#include "runtime/kernels/reference/fake_quant.h"
#include "runtime/kernels/reference/gather.h"
#include "runtime/kernels/reference/image_projective_transform.h"
#include "runtime/kernels/reference/lrn.h"
#include "runtime/kernels/reference/matmul.h"
#include "runtime/kernels/reference/max_pool_with_argmax.h"
#include "runtime/kernels/reference/mfcc.h"
#include "runtime/kernels/reference/non_max_suppression.h"
#include "runtime/kernels/reference/pad.h"
#include "runtime/kernels/reference/pool2d.h"
#include "runtime/kernels/reference/pool3d.h"
#include "runtime/kernels/reference/quantize.h"
#include "runtime/kernels/reference/reduce.h"
#include "runtime/kernels/reference/reshape.h"
#include "runtime/kernels/reference/resize.h"
#include "runtime/kernels/reference/scatter.h"
#include "runtime/kernels/reference/select.h"
#include "runtime/kernels/reference/slice.h"
#include "runtime/kernels/reference/softmax.h"
#include "runtime/kernels/reference/topk.h"
#include "runtime/kernels/reference/transpose.h"
#include "runtime/kernels/reference/transpose_conv2d.h"
#include "runtime/kernels/reference/unary.h"
#include "runtime/kernels/reference/while_loop.h"
#include "runtime/kernels/reference/if_cond.h"
#include "runtime/kernels/cortexm/conv2d.h"
#include "schemas/contract/op_traits.h"
#include "runtime/core/op_selection.h"

namespace floe {

static_assert(static_cast<int>(DType::kBool) == static_cast<int>(schema::DType::BOOL),
              "runtime DType must mirror schema DType");
static_assert(static_cast<int>(Activation::kRelu6) == static_cast<int>(schema::Activation::RELU6),
              "runtime Activation must mirror schema Activation");

// Concat inputs are gathered on the stack: at most kMaxConcatInputs
// (schemas/contract/limits.h); the converter refuses larger concats.

TensorView bind_tensor(const Model& model, uint8_t* const* arenas, int32_t index) {
  if (index < 0) return TensorView();
  TensorView view = model.tensor(static_cast<size_t>(index));
  if (!model.is_constant(static_cast<size_t>(index))) {
    const size_t i = static_cast<size_t>(index);
    view.data = arenas[model.tensor_region(i)] + model.tensor_offset(i);
  }
  return view;
}

const TensorView PreparedOp::kAbsent = TensorView();

TensorView OpContext::input(int i) const {
  return has_input(i) ? bind_tensor(*model, arenas, op->inputs()->Get(i)) : TensorView();
}
TensorView OpContext::output(int i) const {
  // An empty view past the op's outputs, as input() gives for an absent input:
  // a prepare may read a dtype before it checks the operand counts.
  return i >= 0 && i < output_count() ? bind_tensor(*model, arenas, op->outputs()->Get(i)) : TensorView();
}

namespace {

// ---- the table -------------------------------------------------------------

// Op selection (runtime/core/op_selection.h): a row whose op is not selected is
// dropped from the table at compile time, so its adapters and kernels are never
// referenced and the linker removes them (TFLM's MicroMutableOpResolver,
// decided by the converter). Model::Load reports a dropped op as unsupported.

// Size of a params block; NoParams has none.
struct NoParams {};
template <typename T>
struct ParamsBytes {
  static_assert(alignof(T) <= kPersistentAlignment, "params blocks are 8-byte aligned");
  static constexpr uint16_t value = static_cast<uint16_t>(sizeof(T));
};
template <>
struct ParamsBytes<NoParams> {
  static constexpr uint16_t value = 0;
};

constexpr OpKernel kAllKernels[] = {
#define FLOE_OP(code, options, params, prepare, eval)                    \
  {schema::OpCode::code, schema::OpOptions::options, #code,              \
   op_selected(schema::OpCode::code) ? prepare : nullptr,                \
   op_selected(schema::OpCode::code) ? eval : nullptr,                   \
   ParamsBytes<params>::value,                                           \
   op_traits(schema::OpCode::code).max_inputs,                           \
   op_traits(schema::OpCode::code).backends},
#include "runtime/ops.def"
};
// ops.def lists each op once in FLOE_OP and once in FLOE_OP_TRAITS.
constexpr bool every_op_has_traits() {
  for (const OpKernel& k : kAllKernels) {
    if (!op_traits(k.opcode).known()) return false;
  }
  return sizeof(kAllKernels) / sizeof(kAllKernels[0]) == op_traits_row_count();
}
static_assert(every_op_has_traits(), "runtime/ops.def: every FLOE_OP needs its FLOE_OP_TRAITS row and vice versa");
constexpr int count_selected() {
  int n = 0;
  for (const OpKernel& k : kAllKernels) n += k.eval != nullptr ? 1 : 0;
  return n;
}
struct KernelTable {
  OpKernel rows[count_selected() > 0 ? count_selected() : 1];
};
constexpr KernelTable make_table() {
  KernelTable table{};
  int n = 0;
  for (const OpKernel& k : kAllKernels) {
    if (k.eval != nullptr) table.rows[n++] = k;
  }
  return table;
}
// Only this compacted table is emitted; kAllKernels exists at compile time only.
constexpr KernelTable kTable = make_table();
constexpr int kKernelCount = count_selected();

// Direct lookup by opcode value; built at compile time from kKernels.
constexpr int kMaxOpCode = static_cast<int>(schema::OpCode::MAX);
struct KernelIndex {
  int16_t slot[kMaxOpCode + 1];
};
constexpr KernelIndex make_index() {
  KernelIndex index{};
  for (int i = 0; i <= kMaxOpCode; ++i) index.slot[i] = -1;
  for (int i = 0; i < kKernelCount; ++i) {
    index.slot[static_cast<int>(kTable.rows[i].opcode)] = static_cast<int16_t>(i);
  }
  return index;
}
constexpr KernelIndex kIndex = make_index();

}  // namespace

const OpKernel* find_kernel(schema::OpCode code) {
  const int value = static_cast<int>(code);
  if (value < 0 || value > kMaxOpCode || kIndex.slot[value] < 0) return nullptr;
  return &kTable.rows[kIndex.slot[value]];
}

size_t op_params_bytes(schema::OpCode code) {
  const OpKernel* kernel = find_kernel(code);
  return kernel != nullptr ? kernel->params_bytes : 0;
}

}  // namespace floe
