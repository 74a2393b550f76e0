// SPDX-License-Identifier: Apache-2.0
// The op traits of schemas/contract/ops.def (op_traits.h) say what the
// runtime does: Model::Load refuses more input slots than an op's maximum and a
// backend that does not implement the op; the reference adapters accept the
// shapes an element-wise op promises and refuse an output laid out otherwise;
// a SAME_BYTES op takes any shape of the same bytes and nothing else. Models
// are one-op lowered models serialized by the converter's emitter.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "converter/pipeline/convert.h"
#include "runtime/core/registry.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"

namespace floe::conv {
namespace {

constexpr const char* kTooManyInputs = "operator has more inputs than its op";
constexpr const char* kWrongBackend = "operator's backend does not implement its op";

struct Tensor {
  DType dtype;
  std::vector<int64_t> shape;
};

struct Outcome {
  Status load = Status::kOk;
  std::string load_message;
  Status init = Status::kInvalidModel;
};

// The options an element-wise op's table row asks for (LEAKY_RELU's alone).
schema::OpOptionsUnion options_for(schema::OpCode code) {
  schema::OpOptionsUnion u;
  if (op_traits(code).options == ::floe::schema::OpOptions::LeakyReluOptions) {
    u.Set(schema::LeakyReluOptionsT());
  }
  return u;
}

LoweredModel one_op(schema::OpCode code, const std::vector<Tensor>& inputs, const Tensor& output,
                    schema::Backend backend = schema::Backend::REFERENCE) {
  LoweredModel m;
  LoweredOp op;
  op.opcode = code;
  op.backend = backend;
  op.options = options_for(code);
  op.node_name = "op";
  for (size_t i = 0; i < inputs.size(); ++i) {
    Value v;
    v.name = "in" + std::to_string(i);
    v.dtype = inputs[i].dtype;
    v.shape = inputs[i].shape;
    const int id = m.add_value(std::move(v));
    m.inputs.push_back(id);
    op.inputs.push_back(id);
  }
  Value out;
  out.name = "out";
  out.dtype = output.dtype;
  out.shape = output.shape;
  const int out_id = m.add_value(std::move(out));
  op.outputs = {out_id};
  m.outputs = {out_id};
  m.ops.push_back(std::move(op));
  return m;
}

Outcome run(const LoweredModel& lowered) {
  const std::vector<uint8_t> bytes = conv::plan_and_emit(lowered, "op-traits-test");
  tools::AlignedBytes buffer = tools::aligned_bytes(bytes.size());
  std::memcpy(buffer.get(), bytes.data(), bytes.size());
  Model model;
  Outcome o;
  o.load = model.Load(buffer.get(), bytes.size());
  if (o.load != Status::kOk) {
    o.load_message = model.error().message;
    return o;
  }
  tools::AlignedBytes arena = tools::aligned_bytes(static_cast<size_t>(model.arena_size()) + 16);
  Interpreter interpreter(model, arena.get(), static_cast<size_t>(model.arena_size()));
  o.init = interpreter.Init();
  return o;
}

std::vector<schema::OpCode> listed_ops() {
  std::vector<schema::OpCode> codes;
  for (int c = 0; c <= static_cast<int>(schema::OpCode::MAX); ++c) {
    if (op_traits(static_cast<schema::OpCode>(c)).known()) codes.push_back(static_cast<schema::OpCode>(c));
  }
  return codes;
}

std::string name_of(schema::OpCode code) { return schema::EnumNameOpCode(code); }

const Tensor kF32{DType::kFloat32, {2, 3}};

// Every op of the list has a REFERENCE row in the registry of every kernel
// (runtime/kernels/all_kernels.cc), and every op whose traits name CORTEX_M a
// row of that backend: the converter may assign it there.
TEST(OpTraits, EveryOpHasItsBackendsRows) {
  const std::vector<schema::OpCode> codes = listed_ops();
  EXPECT_EQ(codes.size(), op_traits_row_count());
  auto has_row = [](schema::OpCode code, schema::Backend backend) {
    for (uint32_t i = 0; i < kKernelRegistry.count; ++i) {
      const KernelRow& row = *kKernelRegistry.rows[i];
      if (static_cast<int>(row.opcode) == static_cast<int>(code) &&
          static_cast<int>(row.backend) == static_cast<int>(backend)) {
        return true;
      }
    }
    return false;
  };
  for (schema::OpCode code : codes) {
    EXPECT_TRUE(has_row(code, schema::Backend::REFERENCE)) << name_of(code);
    if (runs_on(code, schema::Backend::CORTEX_M)) EXPECT_TRUE(has_row(code, schema::Backend::CORTEX_M)) << name_of(code);
    EXPECT_TRUE(runs_on(code, schema::Backend::REFERENCE)) << name_of(code);
    // Every op reads an input but the sources (RANDOM_UNIFORM draws its values).
    EXPECT_GE(op_traits(code).max_inputs, code == schema::OpCode::RANDOM_UNIFORM ? 0 : 1) << name_of(code);
  }
  EXPECT_FALSE(op_traits(schema::OpCode::INVALID).known());
}

TEST(OpTraits, LoadRefusesMoreInputsThanTheOpTakes) {
  for (schema::OpCode code : listed_ops()) {
    const int most = op_traits(code).max_inputs;
    const Outcome over = run(one_op(code, std::vector<Tensor>(static_cast<size_t>(most) + 1, kF32), kF32));
    EXPECT_EQ(over.load, Status::kInvalidModel) << name_of(code);
    EXPECT_EQ(over.load_message, kTooManyInputs) << name_of(code);
    const Outcome at_most = run(one_op(code, std::vector<Tensor>(static_cast<size_t>(most), kF32), kF32));
    EXPECT_NE(at_most.load_message, kTooManyInputs) << name_of(code);
  }
}

TEST(OpTraits, LoadRefusesABackendThatDoesNotImplementTheOp) {
  int refused = 0;
  for (schema::OpCode code : listed_ops()) {
    for (schema::Backend backend :
         {schema::Backend::REFERENCE, schema::Backend::XNNPACK, schema::Backend::CORTEX_M}) {
      const Outcome o = run(one_op(code, op_traits(code).max_inputs > 0 ? std::vector<Tensor>{kF32} : std::vector<Tensor>{},
                                   kF32, backend));
      // (Cortex-M average pooling is int8 only: the next test.)
      const bool implemented = runs_on(code, backend) &&
                               !(backend == schema::Backend::CORTEX_M && code == schema::OpCode::AVG_POOL2D);
      // An XNNPACK op is prepared by its REFERENCE row, which says whether
      // XNNPACK implements it; a backend with rows of its own has none for it.
      const bool load_refused = backend == schema::Backend::XNNPACK ? o.load_message == kWrongBackend
                                                                     : o.load == Status::kUnsupportedOp;
      EXPECT_EQ(load_refused, !implemented) << name_of(code) << " on " << schema::EnumNameBackend(backend) << ": "
                                       << o.load_message;
      refused += !implemented;
    }
  }
  EXPECT_GT(refused, 0);
}

// AVG_POOL2D's CORTEX_M kernel is int8 only: a float average pooling on that
// backend finds no row (the trait allows the op, the backend has no float
// kernel), where the same op on the reference kernels initializes.
TEST(OpTraits, CortexMAveragePoolingIsInt8Only) {
  for (schema::Backend backend : {schema::Backend::REFERENCE, schema::Backend::CORTEX_M}) {
    LoweredModel m = one_op(schema::OpCode::AVG_POOL2D, {{DType::kFloat32, {1, 4, 4, 3}}},
                            {DType::kFloat32, {1, 3, 3, 3}}, backend);
    schema::Pool2DOptionsT window;
    window.filter_h = window.filter_w = 2;
    m.ops[0].options.Set(window);
    const Outcome o = run(m);
    // The Cortex-M backend registers no float pooling row: Model::Load says so.
    EXPECT_EQ(o.load, backend == schema::Backend::CORTEX_M ? Status::kUnsupportedOp : Status::kOk)
        << schema::EnumNameBackend(backend) << ": " << o.load_message;
    if (backend == schema::Backend::REFERENCE) EXPECT_EQ(o.init, Status::kOk);
  }
}

// Element-wise: with some dtypes the adapter accepts the shapes the trait
// promises (one input of the output's shape; two inputs broadcasting to it),
// and with those dtypes it refuses an output of the same size laid out otherwise.
TEST(OpTraits, ElementwiseTraitsMatchWhatTheReferenceAdaptersAccept) {
  const std::vector<std::pair<DType, DType>> dtypes = {{DType::kFloat32, DType::kFloat32},
                                                       {DType::kInt32, DType::kInt32},
                                                       {DType::kBool, DType::kBool},
                                                       {DType::kFloat32, DType::kBool}};
  int unary = 0, binary = 0;
  for (schema::OpCode code : listed_ops()) {
    const OpTraits traits = op_traits(code);
    if (!traits.elementwise_unary() && !traits.elementwise_binary()) continue;
    (traits.elementwise_unary() ? unary : binary) += 1;
    bool accepted = false;
    for (const auto& [in, out] : dtypes) {
      const std::vector<Tensor> inputs = traits.elementwise_unary()
                                             ? std::vector<Tensor>{{in, {2, 3}}}
                                             : std::vector<Tensor>{{in, {2, 3}}, {in, {3}}};
      const Outcome ok = run(one_op(code, inputs, {out, {2, 3}}));
      if (ok.load != Status::kOk || ok.init != Status::kOk) continue;
      accepted = true;
      const Outcome transposed = run(one_op(code, inputs, {out, {3, 2}}));
      EXPECT_NE(transposed.init, Status::kOk) << name_of(code) << ": output laid out otherwise";
      break;
    }
    EXPECT_TRUE(accepted) << name_of(code) << ": no dtype runs the shapes its trait promises";
  }
  EXPECT_GT(unary, 0);
  EXPECT_GT(binary, 0);
}

TEST(OpTraits, SameBytesOpsTakeAnyShapeOfTheSameBytes) {
  int same_bytes = 0;
  for (schema::OpCode code : listed_ops()) {
    if (op_traits(code).shape != OpShape::SAME_BYTES) continue;
    ++same_bytes;
    EXPECT_EQ(run(one_op(code, {kF32}, {DType::kFloat32, {3, 1, 2}})).init, Status::kOk) << name_of(code);
    EXPECT_NE(run(one_op(code, {kF32}, {DType::kFloat32, {2, 2}})).init, Status::kOk) << name_of(code);
    EXPECT_NE(run(one_op(code, {kF32}, {DType::kInt32, {2, 3}})).init, Status::kOk) << name_of(code);
  }
  EXPECT_GT(same_bytes, 0);
}

}  // namespace
}  // namespace floe::conv
