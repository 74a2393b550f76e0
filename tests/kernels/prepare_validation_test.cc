// SPDX-License-Identifier: Apache-2.0
// The op-coverage adapters' prepare steps refuse every model whose constant
// parameters would make a kernel read or write out of bounds (Init fails with
// kInvalidModel), and data-dependent indices fed at run time are caught in eval
// (Invoke returns kKernelError). Models are built as lowered models and
// serialized with the converter's emitter, then loaded by the real runtime.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "converter/pipeline/convert.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"

namespace floe::conv {
namespace {

struct Built {
  tools::AlignedBytes buffer;
  tools::AlignedBytes arena;
  std::unique_ptr<Model> model;
  std::unique_ptr<Interpreter> interpreter;
  Status init = Status::kOk;
};

Built build(const LoweredModel& lowered) {
  const std::vector<uint8_t> bytes = conv::plan_and_emit(lowered, "prepare-validation-test");
  Built b;
  b.buffer = tools::aligned_bytes(bytes.size());
  std::memcpy(b.buffer.get(), bytes.data(), bytes.size());
  b.model = std::make_unique<Model>();
  EXPECT_EQ(b.model->Load(b.buffer.get(), bytes.size()), Status::kOk) << b.model->error().message;
  b.arena = tools::aligned_bytes(static_cast<size_t>(b.model->arena_size()) + 16);
  b.interpreter = std::make_unique<Interpreter>(*b.model, b.arena.get(), static_cast<size_t>(b.model->arena_size()));
  b.init = b.interpreter->Init();
  return b;
}

int add(LoweredModel& m, const std::string& name, DType t, std::vector<int64_t> shape, bool input = false) {
  Value v;
  v.name = name;
  v.dtype = t;
  v.shape = std::move(shape);
  const int id = m.add_value(std::move(v));
  if (input) m.inputs.push_back(id);
  return id;
}

void op(LoweredModel& m, schema::OpCode code, std::vector<int> in, std::vector<int> out,
        schema::OpOptionsUnion options = {}) {
  LoweredOp o;
  o.opcode = code;
  o.inputs = std::move(in);
  o.outputs = std::move(out);
  o.options = std::move(options);
  o.node_name = "test";
  m.ops.push_back(std::move(o));
  m.outputs = {m.ops.back().outputs[0]};
}

template <typename T>
schema::OpOptionsUnion wrap(T value) {
  schema::OpOptionsUnion u;
  u.Set(std::move(value));
  return u;
}

LoweredModel slice_model(std::vector<int32_t> begin, std::vector<int32_t> stride, std::vector<int64_t> out) {
  LoweredModel m;
  const int x = add(m, "x", DType::kFloat32, {4, 5}, true);
  const int y = add(m, "y", DType::kFloat32, out);
  schema::StridedSliceOptionsT o;
  o.begin = std::move(begin);
  o.stride = std::move(stride);
  op(m, schema::OpCode::STRIDED_SLICE, {x}, {y}, wrap(o));
  return m;
}

TEST(PrepareValidation, StridedSliceWindowMustStayInside) {
  EXPECT_EQ(build(slice_model({1, 0}, {1, 2}, {3, 3})).init, Status::kOk);
  EXPECT_EQ(build(slice_model({2, 0}, {1, 2}, {3, 3})).init, Status::kInvalidModel);   // rows 2..4 of 4
  EXPECT_EQ(build(slice_model({3, 4}, {-1, -2}, {4, 3})).init, Status::kOk);           // rows 3..0, cols 4,2,0
  EXPECT_EQ(build(slice_model({3, 4}, {-1, -2}, {5, 3})).init, Status::kInvalidModel); // row -1
  EXPECT_EQ(build(slice_model({0, 0}, {0, 1}, {2, 2})).init, Status::kInvalidModel);   // stride 0
  EXPECT_EQ(build(slice_model({0}, {1}, {2, 2})).init, Status::kInvalidModel);         // begin per dim
}

TEST(PrepareValidation, TileGatherOneHotResizeShapes) {
  {
    LoweredModel m;
    const int x = add(m, "x", DType::kInt32, {2, 3}, true);
    op(m, schema::OpCode::TILE, {x}, {add(m, "y", DType::kInt32, {4, 7})});
    EXPECT_EQ(build(m).init, Status::kInvalidModel);
  }
  {
    LoweredModel m;
    const int p = add(m, "p", DType::kFloat32, {3, 4}, true);
    const int i = add(m, "i", DType::kInt32, {2}, true);
    schema::GatherOptionsT o;
    o.axis = 2;  // params have rank 2
    op(m, schema::OpCode::GATHER, {p, i}, {add(m, "y", DType::kFloat32, {3, 2})}, wrap(o));
    EXPECT_EQ(build(m).init, Status::kInvalidModel);
  }
  {
    LoweredModel m;
    const int i = add(m, "i", DType::kInt32, {3}, true);
    const int on = add(m, "on", DType::kFloat32, {}, true), off = add(m, "off", DType::kFloat32, {}, true);
    schema::OneHotOptionsT o;
    o.axis = 1;
    op(m, schema::OpCode::ONE_HOT, {i, on, off}, {add(m, "y", DType::kFloat32, {4, 3})}, wrap(o));  // wants [3, depth]
    EXPECT_EQ(build(m).init, Status::kInvalidModel);
  }
  {
    LoweredModel m;
    const int x = add(m, "x", DType::kFloat32, {1, 4, 4, 3}, true);
    op(m, schema::OpCode::RESIZE_BILINEAR, {x}, {add(m, "y", DType::kFloat32, {1, 8, 8, 2})},
       wrap(schema::ResizeOptionsT()));
    EXPECT_EQ(build(m).init, Status::kInvalidModel);  // channels change
  }
}

TEST(PrepareValidation, DtypeRulesAreEnforced) {
  LoweredModel m;
  const int a = add(m, "a", DType::kInt32, {3}, true), b = add(m, "b", DType::kInt32, {3}, true);
  op(m, schema::OpCode::ATAN2, {a, b}, {add(m, "y", DType::kInt32, {3})});
  EXPECT_EQ(build(m).init, Status::kInvalidModel);
  LoweredModel c;
  const int x = add(c, "x", DType::kFloat32, {3}, true), y = add(c, "y", DType::kFloat32, {3}, true);
  op(c, schema::OpCode::LESS, {x, y}, {add(c, "z", DType::kFloat32, {3})});  // must be bool
  EXPECT_EQ(build(c).init, Status::kInvalidModel);
}

// SVDF's state must be a variable tensor (which the converter records
// without a lifetime, so the plan check keeps its bytes its own), and its
// shapes agree; Init() zeroes it.
LoweredModel svdf_model(bool variable_state, int32_t rank) {
  LoweredModel m;
  auto constant = [&](const char* name, std::vector<int64_t> shape) {
    auto t = std::make_shared<HostTensor>();
    t->dtype = DType::kFloat32;
    t->shape = shape;
    t->data.assign(static_cast<size_t>(t->num_elements()) * 4, 0);
    Value v;
    v.name = name;
    v.dtype = DType::kFloat32;
    v.shape = std::move(shape);
    v.constant = std::move(t);
    return m.add_value(std::move(v));
  };
  const int x = add(m, "x", DType::kFloat32, {1, 3}, true);
  const int wf = constant("wf", {4, 3}), wt = constant("wt", {4, 2});
  const int state = add(m, "state", DType::kFloat32, {1, 8});
  m.values[static_cast<size_t>(state)].variable = variable_state;
  schema::SvdfOptionsT o;
  o.rank = rank;
  op(m, schema::OpCode::SVDF, {x, wf, wt, -1, state}, {add(m, "y", DType::kFloat32, {1, 2})}, wrap(o));
  return m;
}

TEST(PrepareValidation, SvdfStateIsAVariableTensorZeroedAtInit) {
  Built ok = build(svdf_model(true, 2));
  ASSERT_EQ(ok.init, Status::kOk);
  const TensorView state = ok.interpreter->tensor(3);
  for (size_t i = 0; i < 8; ++i) state.as<float>()[i] = 5.0f;
  ASSERT_EQ(ok.interpreter->ResetVariableTensors(), Status::kOk);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(state.as<float>()[i], 0.0f) << i;
  EXPECT_EQ(build(svdf_model(false, 2)).init, Status::kInvalidModel);  // an ordinary tensor
  EXPECT_EQ(build(svdf_model(true, 3)).init, Status::kInvalidModel);   // 4 filters, rank 3
}

TEST(PrepareValidation, RunTimeIndicesAreCheckedInEval) {
  LoweredModel m;
  const int p = add(m, "p", DType::kFloat32, {3, 2}, true);
  const int i = add(m, "i", DType::kInt64, {2}, true);
  op(m, schema::OpCode::GATHER, {p, i}, {add(m, "y", DType::kFloat32, {2, 2})}, wrap(schema::GatherOptionsT()));
  Built b = build(m);
  ASSERT_EQ(b.init, Status::kOk);
  int64_t* idx = b.interpreter->input(1).as<int64_t>();
  idx[0] = 2;
  idx[1] = 0;
  EXPECT_EQ(b.interpreter->Invoke(), Status::kOk);
  idx[1] = 3;
  EXPECT_EQ(b.interpreter->Invoke(), Status::kIndexOutOfRange);
  idx[1] = -1;
  EXPECT_EQ(b.interpreter->Invoke(), Status::kIndexOutOfRange);
  EXPECT_EQ(b.interpreter->index_fault().position, 1);
  EXPECT_EQ(b.interpreter->index_fault().value, -1);
  EXPECT_EQ(b.interpreter->index_fault().bound, 3);

  LoweredModel d;
  const int x = add(d, "x", DType::kInt32, {2}, true), z = add(d, "z", DType::kInt32, {2}, true);
  op(d, schema::OpCode::FLOOR_DIV, {x, z}, {add(d, "q", DType::kInt32, {2})});
  Built e = build(d);
  ASSERT_EQ(e.init, Status::kOk);
  e.interpreter->input(0).as<int32_t>()[0] = 7;
  e.interpreter->input(1).as<int32_t>()[0] = 0;
  EXPECT_EQ(e.interpreter->Invoke(), Status::kKernelError);  // integer division by zero
}

}  // namespace
}  // namespace floe::conv
