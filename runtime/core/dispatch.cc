// SPDX-License-Identifier: Apache-2.0
// Reference-backend adapters: prepare validates what the kernel assumes (ranks,
// dims, dtypes, parameters) once at Init() and turns the operator's options
// into the kernel's params block; eval hands the params and the bound operands
// to the kernel. Kernels never see the FlatBuffers schema.
#include "runtime/core/dispatch.h"
#include "runtime/core/dispatch_ops.h"

#include "runtime/core/model.h"
#if defined(FLOE_OP_SELECTION_HEADER)
#include FLOE_OP_SELECTION_HEADER  // namespace floe: constexpr schema::OpCode kSelectedOps[]
#endif
#include "runtime/kernels/cortexm/conv2d.h"
#include "runtime/kernels/cortexm/depthwise_conv2d.h"
#include "runtime/kernels/cortexm/matmul.h"
#include "runtime/kernels/reference/binary.h"
#include "runtime/kernels/reference/concat.h"
#include "runtime/kernels/reference/conv2d.h"
#include "runtime/kernels/reference/depthwise_conv2d.h"
#include "runtime/kernels/reference/matmul.h"
#include "runtime/kernels/reference/nn_extra.h"
#include "runtime/kernels/reference/pool2d.h"
#include "runtime/kernels/reference/reduce.h"
#include "runtime/kernels/reference/reshape.h"
#include "runtime/kernels/reference/softmax.h"
#include "runtime/kernels/reference/unary.h"

namespace floe {

static_assert(static_cast<int>(DType::kBool) == static_cast<int>(schema::DType::BOOL),
              "runtime DType must mirror schema DType");
static_assert(static_cast<int>(Activation::kRelu6) == static_cast<int>(schema::Activation::RELU6),
              "runtime Activation must mirror schema Activation");

// Concat inputs are gathered on the stack: at most kMaxConcatInputs
// (schemas/contract/limits.h); the converter refuses larger concats.

TensorView bind_tensor(const Model& model, uint8_t* arena, int32_t index) {
  if (index < 0) return TensorView();
  TensorView view = model.tensor(static_cast<size_t>(index));
  if (!model.is_constant(static_cast<size_t>(index))) {
    view.data = arena + model.tensor_offset(static_cast<size_t>(index));
  }
  return view;
}

const TensorView PreparedOp::kAbsent = TensorView();

TensorView OpContext::input(int i) const {
  return has_input(i) ? bind_tensor(*model, arena, op->inputs()->Get(i)) : TensorView();
}
TensorView OpContext::output(int i) const {
  return bind_tensor(*model, arena, op->outputs()->Get(i));
}

namespace {

using ops::ConcatPrepared;

// ---- helpers -------------------------------------------------------------

template <typename T>
In<T> in(const TensorView& v) { return In<T>{static_cast<const T*>(v.data), v.shape}; }
template <typename T>
Out<T> out(const TensorView& v) { return Out<T>{static_cast<T*>(v.data), v.shape}; }

bool same_dims(const Shape& a, const Shape& b) {
  if (a.rank != b.rank) return false;
  for (int i = 0; i < a.rank; ++i) {
    if (a.dims[i] != b.dims[i]) return false;
  }
  return true;
}

bool is_f32(const TensorView& v) { return v.dtype == DType::kFloat32; }

Activation activation(schema::Activation a) { return static_cast<Activation>(a); }

// Checks the common "n float inputs -> 1 float output" signature.
const char* expect_f32_io(const OpContext& ctx, int inputs) {
  if (ctx.input_count() != inputs || ctx.output_count() != 1) {
    return FLOE_MSG("wrong number of inputs or outputs");
  }
  for (int i = 0; i < inputs; ++i) {
    if (!ctx.has_input(i) || !is_f32(ctx.input(i))) return FLOE_MSG("input must be float32");
  }
  if (!is_f32(ctx.output(0))) return FLOE_MSG("output must be float32");
  return nullptr;
}

// ---- element-wise --------------------------------------------------------

// ADD..MINIMUM, ABS, NEG, SQUARE and MEAN have typed adapters (dispatch_math.cc,
// dispatch_data.cc).

const char* prepare_unary(const OpContext& ctx) {
  if (const char* err = expect_f32_io(ctx, 1)) return err;
  if (!same_dims(ctx.input(0).shape, ctx.output(0).shape)) {
    return FLOE_MSG("output shape differs from input shape");
  }
  return nullptr;
}

Status eval_unary(const PreparedOp& ctx, ref::UnaryOp op) {
  ref::unary_f32(op, {in<float>(ctx.input(0)), out<float>(ctx.output(0))});
  return Status::kOk;
}
Status eval_relu(const PreparedOp& ctx) { return eval_unary(ctx, ref::UnaryOp::kRelu); }
Status eval_relu6(const PreparedOp& ctx) { return eval_unary(ctx, ref::UnaryOp::kRelu6); }
Status eval_sigmoid(const PreparedOp& ctx) { return eval_unary(ctx, ref::UnaryOp::kSigmoid); }
Status eval_tanh(const PreparedOp& ctx) { return eval_unary(ctx, ref::UnaryOp::kTanh); }
Status eval_exp(const PreparedOp& ctx) { return eval_unary(ctx, ref::UnaryOp::kExp); }
Status eval_log(const PreparedOp& ctx) { return eval_unary(ctx, ref::UnaryOp::kLog); }
Status eval_sqrt(const PreparedOp& ctx) { return eval_unary(ctx, ref::UnaryOp::kSqrt); }
Status eval_rsqrt(const PreparedOp& ctx) { return eval_unary(ctx, ref::UnaryOp::kRsqrt); }

const char* prepare_softmax(const OpContext& ctx) {
  if (const char* err = prepare_unary(ctx)) return err;
  if (ctx.input(0).shape.rank < 1) return FLOE_MSG("softmax input must have rank >= 1");
  ctx.params<ref::SoftmaxParams>().beta = ctx.op->options_as_SoftmaxOptions()->beta();
  return nullptr;
}

Status eval_softmax(const PreparedOp& ctx) {
  ref::softmax_f32(ctx.params_as<ref::SoftmaxParams>(),
                   {in<float>(ctx.input(0)), out<float>(ctx.output(0))});
  return Status::kOk;
}

// ---- shape ops -----------------------------------------------------------

const char* prepare_reshape(const OpContext& ctx) {
  if (ctx.input_count() != 1 || ctx.output_count() != 1 || !ctx.has_input(0)) {
    return FLOE_MSG("reshape takes one input and one output");
  }
  const TensorView input = ctx.input(0), output = ctx.output(0);
  if (input.dtype != output.dtype || input.bytes != output.bytes) {
    return FLOE_MSG("reshape changes the dtype or the byte size");
  }
  return nullptr;
}

Status eval_reshape(const PreparedOp& ctx) {
  const TensorView input = ctx.input(0), output = ctx.output(0);
  ref::reshape(input.data, output.data, output.bytes);
  return Status::kOk;
}

const char* prepare_concat(const OpContext& ctx) {
  const int count = ctx.input_count();
  if (count < 1 || count > kMaxConcatInputs || ctx.output_count() != 1) {
    return FLOE_MSG("concat takes 1..64 inputs and one output");
  }
  const TensorView output = ctx.output(0);
  const int32_t axis = ctx.op->options_as_ConcatOptions()->axis();
  if (axis < 0 || axis >= output.shape.rank) return FLOE_MSG("concat axis out of range");
  int64_t axis_total = 0;
  for (int i = 0; i < count; ++i) {
    if (!ctx.has_input(i)) return FLOE_MSG("concat input missing");
    const TensorView input = ctx.input(i);
    if (input.dtype != output.dtype || input.shape.rank != output.shape.rank) {
      return FLOE_MSG("concat input differs in dtype or rank");
    }
    for (int d = 0; d < output.shape.rank; ++d) {
      if (d != axis && input.shape.dims[d] != output.shape.dims[d]) {
        return FLOE_MSG("concat input differs off the concat axis");
      }
    }
    axis_total += input.shape.dims[axis];
  }
  if (axis_total != output.shape.dims[axis]) return FLOE_MSG("concat axis sizes do not add up");
  ConcatPrepared& prepared = ctx.params<ConcatPrepared>();
  prepared.axis = axis;
  prepared.element_size = static_cast<int32_t>(dtype_size(output.dtype));
  return nullptr;
}

Status eval_concat(const PreparedOp& ctx) {
  In<void> inputs[kMaxConcatInputs];
  const int count = ctx.input_count();
  for (int i = 0; i < count; ++i) {
    const TensorView& v = ctx.input(i);
    inputs[i] = In<void>{v.data, v.shape};
  }
  const TensorView& output = ctx.output(0);
  const ConcatPrepared& prepared = ctx.params_as<ConcatPrepared>();
  ref::ConcatParams params;
  params.axis = prepared.axis;
  params.element_size = static_cast<size_t>(prepared.element_size);
  ref::concat(params, inputs, count, Out<void>{output.data, output.shape});
  return Status::kOk;
}


// ---- dense / convolution / pooling ---------------------------------------

// Cortex-M variants, chosen at prepare when the converter assigned the op to
// the CORTEX_M backend.
Status eval_matmul_cortexm(const PreparedOp& ctx);
Status eval_conv2d_cortexm(const PreparedOp& ctx);
Status eval_depthwise_conv2d_cortexm(const PreparedOp& ctx);

// Checks an optional bias of `channels` floats at input index 2.
const char* check_bias(const OpContext& ctx, int32_t channels) {
  if (!ctx.has_input(2)) return nullptr;
  const TensorView bias = ctx.input(2);
  if (!is_f32(bias) || bias.shape.rank != 1 || bias.shape.dims[0] != channels) {
    return FLOE_MSG("bias must be float32 [output channels]");
  }
  return nullptr;
}

const char* expect_weights_io(const OpContext& ctx) {
  if (ctx.input_count() < 2 || ctx.input_count() > 3 || ctx.output_count() != 1) {
    return FLOE_MSG("expects input, weights, optional bias and one output");
  }
  for (int i = 0; i < 2; ++i) {
    if (!ctx.has_input(i) || !is_f32(ctx.input(i))) return FLOE_MSG("input must be float32");
  }
  if (!is_f32(ctx.output(0))) return FLOE_MSG("output must be float32");
  return nullptr;
}

const char* prepare_matmul(const OpContext& ctx) {
  if (const char* err = expect_weights_io(ctx)) return err;
  const auto* options = ctx.op->options_as_MatMulOptions();
  const Shape a = ctx.input(0).shape, b = ctx.input(1).shape, o = ctx.output(0).shape;
  if (a.rank != 2 || b.rank != 2 || o.rank != 2) return FLOE_MSG("matmul operands must be 2-D");
  const int32_t m = options->transpose_a() ? a.dims[1] : a.dims[0];
  const int32_t ka = options->transpose_a() ? a.dims[0] : a.dims[1];
  const int32_t kb = options->transpose_b() ? b.dims[1] : b.dims[0];
  const int32_t n = options->transpose_b() ? b.dims[0] : b.dims[1];
  if (ka != kb) return FLOE_MSG("matmul inner dimensions differ");
  if (o.dims[0] != m || o.dims[1] != n) return FLOE_MSG("matmul output shape is not [M, N]");
  if (const char* err = check_bias(ctx, n)) return err;
  ref::MatMulParams& params = ctx.params<ref::MatMulParams>();
  params.transpose_a = options->transpose_a();
  params.transpose_b = options->transpose_b();
  params.activation = activation(options->activation());
  // The converter chose the kernel library (Operator.backend); any other value
  // runs the reference kernel, which defines the result.
  if (ctx.op->backend() == schema::Backend::CORTEX_M) ctx.set_eval(eval_matmul_cortexm);
  return nullptr;
}

ref::MatMulOperands matmul_operands(const PreparedOp& ctx) {
  return {in<float>(ctx.input(0)), in<float>(ctx.input(1)), in<float>(ctx.input(2)),
          out<float>(ctx.output(0))};
}
Status eval_matmul(const PreparedOp& ctx) {
  ref::matmul_f32(ctx.params_as<ref::MatMulParams>(), matmul_operands(ctx));
  return Status::kOk;
}
Status eval_matmul_cortexm(const PreparedOp& ctx) {
  cortexm::matmul_f32(ctx.params_as<ref::MatMulParams>(), matmul_operands(ctx));
  return Status::kOk;
}

// Shared geometry checks for NHWC window ops.
const char* check_window(int32_t stride_h, int32_t stride_w, int32_t dilation_h,
                         int32_t dilation_w, int32_t pad_top, int32_t pad_left) {
  if (stride_h < 1 || stride_w < 1 || dilation_h < 1 || dilation_w < 1) {
    return FLOE_MSG("strides and dilations must be >= 1");
  }
  if (pad_top < 0 || pad_left < 0) return FLOE_MSG("padding must be >= 0");
  return nullptr;
}

const char* prepare_conv2d(const OpContext& ctx) {
  if (const char* err = expect_weights_io(ctx)) return err;
  const auto* o = ctx.op->options_as_Conv2DOptions();
  const Shape input = ctx.input(0).shape, filter = ctx.input(1).shape, output = ctx.output(0).shape;
  if (input.rank != 4 || filter.rank != 4 || output.rank != 4) {
    return FLOE_MSG("conv2d tensors must be 4-D (NHWC, HWIO)");
  }
  if (filter.dims[2] != input.dims[3] || output.dims[3] != filter.dims[3] ||
      output.dims[0] != input.dims[0]) {
    return FLOE_MSG("conv2d channel or batch dimensions disagree");
  }
  if (const char* err = check_window(o->stride_h(), o->stride_w(), o->dilation_h(),
                                     o->dilation_w(), o->pad_top(), o->pad_left())) {
    return err;
  }
  if (const char* err = check_bias(ctx, filter.dims[3])) return err;
  ref::Conv2DParams params;
  params.stride_h = o->stride_h();
  params.stride_w = o->stride_w();
  params.dilation_h = o->dilation_h();
  params.dilation_w = o->dilation_w();
  params.pad_top = o->pad_top();
  params.pad_left = o->pad_left();
  params.activation = activation(o->activation());
  ops::Conv2DPrepared& prepared = ctx.params<ops::Conv2DPrepared>();
  if (ctx.op->backend() == schema::Backend::CORTEX_M) {
    prepared.cortexm = cortexm::plan_conv2d(params, input, filter, output);
    ctx.set_eval(eval_conv2d_cortexm);
  } else {
    prepared.reference = params;
  }
  return nullptr;
}

Status eval_conv2d(const PreparedOp& ctx) {
  ref::conv2d_f32(ctx.params_as<ops::Conv2DPrepared>().reference,
                  {in<float>(ctx.input(0)), in<float>(ctx.input(1)), in<float>(ctx.input(2)),
                   out<float>(ctx.output(0))});
  return Status::kOk;
}
Status eval_conv2d_cortexm(const PreparedOp& ctx) {
  // Input, filter and output are present (prepare); an absent bias is bound
  // with data == nullptr, and a missing one is the output's slot.
  const TensorView* v = ctx.operands;
  const float* bias = ctx.inputs > 2 ? static_cast<const float*>(v[2].data) : nullptr;
  cortexm::conv2d_f32(ctx.params_as<ops::Conv2DPrepared>().cortexm, static_cast<const float*>(v[0].data),
                      static_cast<const float*>(v[1].data), bias, static_cast<float*>(v[ctx.inputs].data));
  return Status::kOk;
}

const char* prepare_depthwise_conv2d(const OpContext& ctx) {
  if (const char* err = expect_weights_io(ctx)) return err;
  const auto* o = ctx.op->options_as_DepthwiseConv2DOptions();
  const Shape input = ctx.input(0).shape, filter = ctx.input(1).shape, output = ctx.output(0).shape;
  if (input.rank != 4 || filter.rank != 4 || output.rank != 4) {
    return FLOE_MSG("depthwise tensors must be 4-D");
  }
  if (filter.dims[2] != input.dims[3] || filter.dims[3] != o->depth_multiplier() ||
      output.dims[3] != input.dims[3] * filter.dims[3] || output.dims[0] != input.dims[0]) {
    return FLOE_MSG("depthwise channel, multiplier or batch dimensions disagree");
  }
  if (const char* err = check_window(o->stride_h(), o->stride_w(), o->dilation_h(),
                                     o->dilation_w(), o->pad_top(), o->pad_left())) {
    return err;
  }
  if (const char* err = check_bias(ctx, output.dims[3])) return err;
  ref::DepthwiseConv2DParams& params = ctx.params<ref::DepthwiseConv2DParams>();
  params.stride_h = o->stride_h();
  params.stride_w = o->stride_w();
  params.dilation_h = o->dilation_h();
  params.dilation_w = o->dilation_w();
  params.pad_top = o->pad_top();
  params.pad_left = o->pad_left();
  params.depth_multiplier = o->depth_multiplier();
  params.activation = activation(o->activation());
  if (ctx.op->backend() == schema::Backend::CORTEX_M) ctx.set_eval(eval_depthwise_conv2d_cortexm);
  return nullptr;
}

ref::DepthwiseConv2DOperands depthwise_operands(const PreparedOp& ctx) {
  return {in<float>(ctx.input(0)), in<float>(ctx.input(1)), in<float>(ctx.input(2)),
          out<float>(ctx.output(0))};
}
Status eval_depthwise_conv2d(const PreparedOp& ctx) {
  ref::depthwise_conv2d_f32(ctx.params_as<ref::DepthwiseConv2DParams>(), depthwise_operands(ctx));
  return Status::kOk;
}
Status eval_depthwise_conv2d_cortexm(const PreparedOp& ctx) {
  cortexm::depthwise_conv2d_f32(ctx.params_as<ref::DepthwiseConv2DParams>(),
                                depthwise_operands(ctx));
  return Status::kOk;
}

const char* prepare_pool2d(const OpContext& ctx) {
  if (const char* err = expect_f32_io(ctx, 1)) return err;
  const auto* o = ctx.op->options_as_Pool2DOptions();
  const Shape input = ctx.input(0).shape, output = ctx.output(0).shape;
  if (input.rank != 4 || output.rank != 4) return FLOE_MSG("pooling tensors must be 4-D (NHWC)");
  if (input.dims[0] != output.dims[0] || input.dims[3] != output.dims[3]) {
    return FLOE_MSG("pooling changes batch or channels");
  }
  if (o->filter_h() < 1 || o->filter_w() < 1) return FLOE_MSG("pooling window must be >= 1");
  if (const char* err = check_window(o->stride_h(), o->stride_w(), 1, 1, o->pad_top(), o->pad_left())) {
    return err;
  }
  ref::Pool2DParams& params = ctx.params<ref::Pool2DParams>();
  params.filter_h = o->filter_h();
  params.filter_w = o->filter_w();
  params.stride_h = o->stride_h();
  params.stride_w = o->stride_w();
  params.pad_top = o->pad_top();
  params.pad_left = o->pad_left();
  params.activation = activation(o->activation());
  return nullptr;
}

Status eval_max_pool2d(const PreparedOp& ctx) {
  ref::max_pool2d_f32(ctx.params_as<ref::Pool2DParams>(),
                      {in<float>(ctx.input(0)), out<float>(ctx.output(0))});
  return Status::kOk;
}
Status eval_avg_pool2d(const PreparedOp& ctx) {
  ref::avg_pool2d_f32(ctx.params_as<ref::Pool2DParams>(),
                      {in<float>(ctx.input(0)), out<float>(ctx.output(0))});
  return Status::kOk;
}

// ---- the table -------------------------------------------------------------

// Op selection. A firmware build compiles in only the ops its models use:
// FLOE_OP_SELECTION_HEADER (generated on the host from the embedded models, see
// ports/cortex-m/CMakeLists.txt) lists them, every other row is dropped from
// the table at compile time, so its adapters and kernels are never referenced
// and the linker removes them (TFLM's MicroMutableOpResolver, decided by the
// converter). Model::Load reports a dropped op as unsupported.
#if defined(FLOE_OP_SELECTION_HEADER)
constexpr bool op_selected(schema::OpCode code) {
  for (schema::OpCode selected : kSelectedOps) {
    if (selected == code) return true;
  }
  return false;
}
#else
constexpr bool op_selected(schema::OpCode) { return true; }
#endif

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
   op_selected(schema::OpCode::code) ? eval : nullptr, ParamsBytes<params>::value},
#include "runtime/ops.def"
#undef FLOE_OP
};
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
