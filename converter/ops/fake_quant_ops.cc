// SPDX-License-Identifier: Apache-2.0
// FakeQuantWithMinMaxArgs / Vars / VarsPerChannel: one FAKE_QUANT op whose
// min and max are inputs (the Args variant's attributes become constants).
#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

std::vector<TensorInfo> infer_fake_quant(const NodeContext& ctx) {
  ctx.expect_inputs(ctx.node().op() == "FakeQuantWithMinMaxArgs" ? 1 : 3,
                    ctx.node().op() == "FakeQuantWithMinMaxArgs" ? 1 : 3);
  return {TensorInfo{ctx.input(0).dtype, ctx.input(0).shape, nullptr}};
}

void lower_fake_quant(LowerContext& ctx) {
  const auto& def = ctx.node().def;
  schema::FakeQuantOptionsT o;
  o.num_bits = static_cast<int32_t>(attr_int(def, "num_bits", 8));
  o.narrow_range = attr_bool(def, "narrow_range", false);
  int lo, hi;
  if (ctx.node().op() == "FakeQuantWithMinMaxArgs") {
    auto scalar = [&](const char* name, float fallback) {
      HostTensor t;
      t.dtype = DType::kFloat32;
      t.shape = {};
      t.data.resize(4);
      *t.as<float>() = attr_float(def, name, fallback);
      return ctx.constant_value(name, std::move(t));
    };
    lo = scalar("min", -6.0f);
    hi = scalar("max", 6.0f);
  } else {
    lo = ctx.input_value(1);
    hi = ctx.input_value(2);
  }
  ctx.add_op(schema::OpCode::FAKE_QUANT, {ctx.input_value(0), lo, hi}, {ctx.output_value(0)},
             LowerContext::options(o));
}

}  // namespace

const std::vector<OpHandler>& fake_quant_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"FakeQuantWithMinMaxArgs", infer_fake_quant, lower_fake_quant},
      {"FakeQuantWithMinMaxVars", infer_fake_quant, lower_fake_quant},
      {"FakeQuantWithMinMaxVarsPerChannel", infer_fake_quant, lower_fake_quant},
  };
  return handlers;
}

}  // namespace floe::conv
