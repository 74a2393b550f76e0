// SPDX-License-Identifier: Apache-2.0
// RandomUniform with a seed: a RANDOM_UNIFORM op that draws TF's values
// (runtime/kernels/reference/random_uniform.h), a new draw each Invoke() as
// each Session.run draws one. Never folded: a constant would repeat the first
// run's values. An op with seed = seed2 = 0 draws from a seed TF picks at run
// time, which no converter can reproduce: refused, naming the remedy.
#include "converter/ir/attrs.h"
#include "converter/ir/tf_dtype.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

std::vector<TensorInfo> infer_random_uniform(const NodeContext& ctx) {
  ctx.expect_inputs(1, 1);
  const int tf_type = attr_type(ctx.node().def, "dtype", 0);
  const DType dtype = tf_dtype_to_floe(tf_type);
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64) {
    ctx.fail("dtype " + tf_dtype_name(tf_type) + " is not supported (float32, float64)");
  }
  if (attr_int(ctx.node().def, "seed", 0) == 0 && attr_int(ctx.node().def, "seed2", 0) == 0) {
    ctx.fail("seed and seed2 are 0, so TF draws from a seed it picks at run time, which floe cannot "
             "reproduce: give the op a seed (tf.compat.v1.set_random_seed or seed=), or export the "
             "inference graph (training-mode dropout)");
  }
  std::vector<int64_t> shape = ctx.constant_ints(0, "the shape");
  for (int64_t d : shape) {
    if (d < 0) ctx.fail("the shape " + shape_to_string(shape) + " has a negative dimension");
  }
  return {TensorInfo{DType::kFloat32, shape, nullptr}};
}

void lower_random_uniform(LowerContext& ctx) {
  schema::RandomUniformOptionsT o;
  o.seed = attr_int(ctx.node().def, "seed", 0);
  o.seed2 = attr_int(ctx.node().def, "seed2", 0);
  o.float64_draws = tf_dtype_to_floe(attr_type(ctx.node().def, "dtype", 0)) == DType::kFloat64;
  ctx.add_op(schema::OpCode::RANDOM_UNIFORM, {}, {ctx.output_value(0)}, LowerContext::options(o));
}

}  // namespace

const std::vector<OpHandler>& random_handlers() {
  static const std::vector<OpHandler> handlers = [] {
    OpHandler uniform{"RandomUniform", infer_random_uniform, lower_random_uniform};
    uniform.never_fold = true;  // a new draw each run
    // passes/inference_check.cc refuses it without a seed (TF's draws then
    // depend on the process, so no value can be matched).
    uniform.refusal = "seeded (seed or seed2 nonzero) draws TF's values; unseeded it is refused as a random op "
                      "on the inference path";
    return std::vector<OpHandler>{uniform};
  }();
  return handlers;
}

}  // namespace floe::conv
