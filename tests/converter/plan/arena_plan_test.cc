// SPDX-License-Identifier: Apache-2.0
// The arena plan of whole lowered models: zero-copy reshapes (the output takes
// its input's bytes when the input dies there, Model::Load accepts exactly
// that overlap, the device copies nothing) and the memory-aware op order.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>

#include "converter/pipeline/convert.h"
#include "converter/plan/arena_plan.h"
#include "converter/plan/op_schedule.h"
#include "converter/plan/order_search.h"
#include "runtime/core/registry.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "tests/support/edited_model.h"
#include "tests/support/loaded_model.h"
#include "tests/converter/support/optimize_test_util.h"

namespace floe::testing {
namespace {

using schema::OpCode;

struct ReshapeChain {
  ModelBuilder b;
  int x, activated, reshaped, y;
};

// x -> RELU -> a -> RESHAPE -> r -> RELU -> y: a dies at the reshape.
ReshapeChain reshape_chain() {
  ReshapeChain m;
  m.x = m.b.input("x", {1, 4, 4, 2});
  m.activated = m.b.op(OpCode::RELU, {m.x}, {1, 4, 4, 2});
  m.reshaped = m.b.op(OpCode::RESHAPE, {m.activated}, {1, 32});
  m.y = m.b.op(OpCode::RELU, {m.reshaped}, {1, 32});
  m.b.output(m.y);
  return m;
}

TEST(ZeroCopyReshape, OutputSharesItsInputsBytes) {
  ReshapeChain m = reshape_chain();
  const conv::ArenaPlan plan = conv::plan_arena(m.b.model, 16);
  EXPECT_EQ(plan.aliased_values, 1);
  EXPECT_EQ(plan.offsets[static_cast<size_t>(m.reshaped)], plan.offsets[static_cast<size_t>(m.activated)]);
  EXPECT_EQ(plan.arena_size, 2u * 128);  // x and a, then a (= r) and y: never three buffers

  // On the device: Load accepts the overlap, both tensors bind to one address,
  // and the output is right.
  conv::EmitStats stats;
  const std::vector<uint8_t> bytes = conv::plan_and_emit(m.b.model, "test", &stats);
  EXPECT_EQ(stats.aliased_values, 1);
  std::unique_ptr<LoadedModel> l = load_model(bytes);
  ASSERT_EQ(l->status, Status::kOk) << l->model.error().message;
  tools::AlignedBytes arena = tools::aligned_bytes(static_cast<size_t>(l->model.arena_size()));
  Interpreter interpreter(l->model, arena.get(), static_cast<size_t>(l->model.arena_size()));
  ASSERT_EQ(interpreter.Init(), Status::kOk) << interpreter.error().message;
  uint8_t* const arenas[] = {arena.get()};
  EXPECT_EQ(bind_tensor(l->model, arenas, m.activated).data, bind_tensor(l->model, arenas, m.reshaped).data);
  const HostTensor x = random_f32({1, 4, 4, 2}, 11);
  std::memcpy(interpreter.input(0).data, x.data.data(), x.data.size());
  ASSERT_EQ(interpreter.Invoke(), Status::kOk);
  const float* y = interpreter.output(0).as<float>();
  const std::vector<float> xs = as_floats(x);
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(y[i], std::max(xs[i], 0.0f)) << i;
}

// A graph of a few scalars: 16-byte slots would be 32 B for 8 B of live data,
// so the converter packs it in 4-byte slots (kActivationOffsetAlignment), at
// the raw floor; the runtime accepts the word-aligned offsets and computes the
// same result. Larger activations keep their 16-byte slots.
TEST(ActivationSlots, ScalarsArePackedInWordSlots) {
  ModelBuilder b;
  const int x = b.input("x", {});
  const int a = b.op(OpCode::NEG, {x}, {});
  const int y = b.op(OpCode::NEG, {a}, {});
  b.output(y);
  EXPECT_EQ(conv::plan_arena(b.model, 16).arena_size, 32u);
  conv::EmitStats stats;
  const std::vector<uint8_t> bytes = conv::plan_and_emit(b.model, "test", &stats);
  std::unique_ptr<LoadedModel> l = load_model(bytes);
  ASSERT_EQ(l->status, Status::kOk) << l->model.error().message;
  EXPECT_EQ(l->model.activation_arena_size(), 8u);  // x and a, then a and y
  tools::AlignedBytes arena = tools::aligned_bytes(static_cast<size_t>(l->model.arena_size()));
  Interpreter interpreter(l->model, arena.get(), static_cast<size_t>(l->model.arena_size()));
  ASSERT_EQ(interpreter.Init(), Status::kOk) << interpreter.error().message;
  const float in = 2.5f;
  std::memcpy(interpreter.input(0).data, &in, sizeof in);
  ASSERT_EQ(interpreter.Invoke(), Status::kOk);
  EXPECT_EQ(interpreter.output(0).as<float>()[0], 2.5f);

  ReshapeChain chain = reshape_chain();
  std::unique_ptr<LoadedModel> large = load_model(conv::plan_and_emit(chain.b.model, "test"));
  ASSERT_EQ(large->status, Status::kOk);
  for (size_t t = 0; t < large->model.tensor_count(); ++t) {
    if (!large->model.is_constant(t)) EXPECT_EQ(large->model.tensor_offset(t) % 16, 0u) << t;
  }
}

TEST(ZeroCopyReshape, InputReadLaterKeepsItsOwnBytes) {
  // a is read again by the ADD after the reshapes, so the first reshape must
  // copy; the second one's input dies there, so it aliases.
  ModelBuilder b;
  const int x = b.input("x", {1, 4, 4, 2});
  const int a = b.op(OpCode::RELU, {x}, {1, 4, 4, 2});
  const int flat = b.op(OpCode::RESHAPE, {a}, {1, 32});
  const int back = b.op(OpCode::RESHAPE, {flat}, {1, 4, 4, 2});
  b.output(b.op(OpCode::ADD, {a, back}, {1, 4, 4, 2}));
  const conv::ArenaPlan plan = conv::plan_arena(b.model, 16);
  EXPECT_EQ(plan.aliased_values, 1);
  EXPECT_NE(plan.offsets[static_cast<size_t>(flat)], plan.offsets[static_cast<size_t>(a)]);
  EXPECT_EQ(plan.offsets[static_cast<size_t>(back)], plan.offsets[static_cast<size_t>(flat)]);
  const HostTensor input = random_f32({1, 4, 4, 2}, 12);
  const std::vector<HostTensor> out = run_model(conv::plan_and_emit(b.model, "test"), {{"x", input}});
  ASSERT_EQ(out.size(), 1u);
  const std::vector<float> xs = as_floats(input), ys = as_floats(out[0]);
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(ys[i], 2 * std::max(xs[i], 0.0f)) << i;
}

TEST(ZeroCopyReshape, OutputMayBeNumberedBeforeItsInput) {
  // Tensor indices follow no op order (a .tflite numbers them freely): the
  // reshape's output here is value 0, its input value 2.
  ModelBuilder b;
  const int reshaped = b.value("r:0", {1, 32});
  const int x = b.input("x", {1, 4, 4, 2});
  const int activated = b.op(OpCode::RELU, {x}, {1, 4, 4, 2});
  conv::LoweredOp reshape;
  reshape.opcode = OpCode::RESHAPE;
  reshape.inputs = {activated};
  reshape.outputs = {reshaped};
  reshape.node_name = "r";
  b.model.ops.push_back(reshape);
  b.output(b.op(OpCode::RELU, {reshaped}, {1, 32}));
  const conv::ArenaPlan plan = conv::plan_arena(b.model, 16);
  EXPECT_EQ(plan.aliased_values, 1);
  EXPECT_EQ(plan.offsets[static_cast<size_t>(reshaped)], plan.offsets[static_cast<size_t>(activated)]);
  const HostTensor input = random_f32({1, 4, 4, 2}, 13);
  const std::vector<HostTensor> out = run_model(conv::plan_and_emit(b.model, "test"), {{"x", input}});
  ASSERT_EQ(out.size(), 1u);
  const std::vector<float> xs = as_floats(input), ys = as_floats(out[0]);
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(ys[i], std::max(xs[i], 0.0f)) << i;
}

// Rewrites one emitted model (object API) and loads it.
Status load_edited(const std::vector<uint8_t>& bytes, const std::function<void(conv::schema::ModelT&)>& edit,
                   std::string* why) {
  std::unique_ptr<LoadedModel> l = load_model(edited_model(bytes.data(), edit));
  *why = l->model.error().message ? l->model.error().message : "";
  return l->status;
}

TEST(ZeroCopyReshape, LoadRefusesOtherOverlaps) {
  ReshapeChain m = reshape_chain();
  const std::vector<uint8_t> bytes = conv::plan_and_emit(m.b.model, "test");
  std::string why;
  ASSERT_EQ(load_edited(bytes, [](conv::schema::ModelT&) {}, &why), Status::kOk) << why;
  // The same overlap under an op that changes bytes (RELU) is a broken plan.
  EXPECT_EQ(load_edited(bytes, [](conv::schema::ModelT& model) { model.operators[1]->opcode = OpCode::RELU; }, &why),
            Status::kInvalidModel);
  EXPECT_NE(why.find("share arena bytes"), std::string::npos) << why;
  // So is a reshape whose input is still live after it.
  const int activated = m.activated;
  EXPECT_EQ(load_edited(bytes,
                        [&](conv::schema::ModelT& model) {
                          model.tensors[static_cast<size_t>(activated)]->live_last_op += 1;
                        },
                        &why),
            Status::kInvalidModel);
  EXPECT_NE(why.find("share arena bytes"), std::string::npos) << why;
}

// x (3 floats) -> IS_NAN -> b1 -> LOGICAL_NOT -> b2 -> LOGICAL_NOT -> b3:
// 15 live bytes at the first op (12 + 3). Word slots give the bools 4 bytes
// each (16 B, 6.7 % over), so the converter places bools at byte
// granularity: only reference kernels touch them, element by element.
struct BoolChain {
  ModelBuilder b;
  int x, b1, b2, b3;
};

BoolChain bool_chain() {
  BoolChain m;
  m.x = m.b.input("x", {3});
  m.b1 = m.b.op(OpCode::IS_NAN, {m.x}, {3});
  m.b2 = m.b.op(OpCode::LOGICAL_NOT, {m.b1}, {3});
  m.b3 = m.b.op(OpCode::LOGICAL_NOT, {m.b2}, {3});
  for (int v : {m.b1, m.b2, m.b3}) m.b.model.values[static_cast<size_t>(v)].dtype = DType::kBool;
  m.b.output(m.b3);
  return m;
}

TEST(ActivationSlots, BoolsArePackedAtByteGranularity) {
  BoolChain m = bool_chain();
  EXPECT_EQ(conv::plan_arena(m.b.model, 4).arena_size, 16u);
  const conv::ArenaPlan plan = conv::plan_arena(m.b.model, 4, {}, /*element_slots=*/true);
  EXPECT_EQ(plan.arena_size, 15u);
  EXPECT_EQ(plan.offsets[static_cast<size_t>(m.x)] % 4, 0u);
  conv::EmitStats stats;
  const std::vector<uint8_t> bytes = conv::plan_and_emit(m.b.model, "test", &stats);
  std::unique_ptr<LoadedModel> l = load_model(bytes);
  ASSERT_EQ(l->status, Status::kOk) << l->model.error().message;
  EXPECT_EQ(l->model.activation_arena_size(), 15u);
  EXPECT_EQ(stats.arena_lower_bound, 15u);
  bool odd = false;
  for (int v : {m.b1, m.b2, m.b3}) odd |= l->model.tensor_offset(static_cast<size_t>(v)) % 4 != 0;
  EXPECT_TRUE(odd) << "no bool left a word boundary: the test no longer covers byte offsets";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<HostTensor> out = run_model(bytes, {{"x", make_f32({3}, {nan, 1.0f, nan})}});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].data.size(), 3u);
  EXPECT_EQ(out[0].data, (std::vector<uint8_t>{1, 0, 1}));
}

// Model::Load accepts an activation at a multiple of its element size, up to
// a word, and holds operands of XNNPACK and Cortex-M kernels to a word.
TEST(ActivationSlots, LoadChecksOffsetsAgainstElementSizeAndKernel) {
  BoolChain m = bool_chain();
  const std::vector<uint8_t> bytes = conv::plan_and_emit(m.b.model, "test");
  std::unique_ptr<LoadedModel> l = load_model(bytes);
  ASSERT_EQ(l->status, Status::kOk) << l->model.error().message;
  int odd = -1;
  for (int v : {m.b1, m.b2, m.b3}) {
    if (l->model.tensor_offset(static_cast<size_t>(v)) % 2 != 0) odd = v;
  }
  ASSERT_GE(odd, 0);
  std::string why;
  // The same offset for a 2-byte dtype is misaligned.
  EXPECT_EQ(load_edited(bytes,
                        [&](conv::schema::ModelT& model) {
                          auto& t = *model.tensors[static_cast<size_t>(odd)];
                          t.dtype = conv::schema::DType::FLOAT16;
                          t.size *= 2;  // dtype x shape, checked before the offset
                        },
                        &why),
            Status::kInvalidModel);
  EXPECT_NE(why.find("not a multiple of its element size"), std::string::npos) << why;
  // A bool at an odd offset is an operand of a kernel that loads words.
  EXPECT_EQ(load_edited(bytes,
                        [&](conv::schema::ModelT& model) {
                          for (auto& op : model.operators) {
                            if (op->inputs[0] == odd || op->outputs[0] == odd) {
                              op->cortexm_kernel = conv::schema::CortexMKernel::S8_DEPTHWISE;
                            }
                          }
                        },
                        &why),
            Status::kInvalidModel);
  EXPECT_NE(why.find("Cortex-M operand's offset is not 4-byte aligned"), std::string::npos) << why;
}

// Two branches, each a large value reduced to a small one, joined by an ADD.
// The file computes both large values first; running each branch to its end
// before starting the other halves the peak.
struct Branches {
  ModelBuilder b;
  int x;
};

Branches two_branches() {
  Branches m;
  m.x = m.b.input("x", {1, 4});
  schema::ReduceOptionsT mean;
  mean.axes = {0};
  const int big1 = m.b.op(OpCode::ADD, {m.x, m.b.random_constant("c1", {64, 4}, 21)}, {64, 4});
  const int big2 = m.b.op(OpCode::ADD, {m.x, m.b.random_constant("c2", {64, 4}, 22)}, {64, 4});
  const int small1 = m.b.op(OpCode::MEAN, {big1}, {4}, ModelBuilder::options(mean));
  const int small2 = m.b.op(OpCode::MEAN, {big2}, {4}, ModelBuilder::options(mean));
  m.b.output(m.b.op(OpCode::ADD, {small1, small2}, {4}));
  return m;
}

TEST(OpSchedule, RunsOneBranchAfterTheOther) {
  Branches m = two_branches();
  const conv::OpSchedule schedule = conv::schedule_ops(m.b.model);
  // File order: x (16) + both large values (1024 each) live at the second ADD.
  EXPECT_EQ(schedule.file_peak, 16u + 1024 + 1024);
  // Chosen: at most one large value live, next to x and a 16-byte mean.
  EXPECT_EQ(schedule.chosen_peak, 16u + 1024 + 16);
  EXPECT_TRUE(schedule.exact);
  EXPECT_TRUE(schedule.reordered);
  EXPECT_EQ(schedule.order, (std::vector<int>{0, 2, 1, 3, 4}));
  EXPECT_EQ(conv::order_peak_bytes(m.b.model, schedule.order), schedule.chosen_peak);

  // The reordered model computes the same, in a smaller arena.
  conv::LoweredModel reordered = m.b.model;
  conv::apply_op_order(&reordered, schedule.order);
  conv::EmitStats file_stats, chosen_stats;
  const std::vector<uint8_t> file_bytes = conv::plan_and_emit(m.b.model, "test", &file_stats);
  const std::vector<uint8_t> chosen_bytes = conv::plan_and_emit(reordered, "test", &chosen_stats);
  EXPECT_EQ(file_stats.arena_lower_bound, schedule.file_peak);
  EXPECT_EQ(chosen_stats.arena_lower_bound, schedule.chosen_peak);
  EXPECT_LT(chosen_stats.arena_bytes, file_stats.arena_bytes);
  const std::map<std::string, HostTensor> inputs = {{"x", random_f32({1, 4}, 23)}};
  const std::vector<HostTensor> a = run_model(file_bytes, inputs), b = run_model(chosen_bytes, inputs);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(as_floats(a[0]), as_floats(b[0]));
}

TEST(OpSchedule, KeepsTheFileOrderWhenNothingIsBetter) {
  ReshapeChain m = reshape_chain();  // a chain has one order
  const conv::OpSchedule schedule = conv::schedule_ops(m.b.model);
  EXPECT_FALSE(schedule.reordered);
  EXPECT_TRUE(schedule.exact);
  EXPECT_EQ(schedule.order, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(schedule.chosen_peak, schedule.file_peak);
  EXPECT_EQ(schedule.file_peak, 2u * 128);
}

// A DAG like an unrolled RNN cell: each op reads one or two of the last few
// values (sometimes the input), writing 3 to 20 floats; a few values are
// graph outputs. Placing such small values in the min-peak order tends to
// leave holes above the floor.
conv::LoweredModel small_cell_like_dag(uint32_t seed) {
  ModelBuilder b;
  std::mt19937 rng(seed);
  const int x = b.input("x", {5});
  std::vector<int> values = {x};
  for (int k = 0; k < 60; ++k) {
    const size_t recent = std::min<size_t>(values.size(), 8);
    std::vector<int> inputs = {values[values.size() - 1 - rng() % recent]};
    if (rng() % 2 == 0) inputs.push_back(rng() % 6 == 0 ? x : values[values.size() - 1 - rng() % recent]);
    values.push_back(b.op(OpCode::ADD, inputs, {static_cast<int64_t>(3 + rng() % 18)}));
    if (rng() % 15 == 0) b.output(values.back());
  }
  b.output(values.back());
  return b.model;
}

bool is_topological(const conv::LoweredModel& model, const std::vector<int>& order) {
  std::vector<bool> written(model.values.size(), false), ran(model.ops.size(), false);
  for (int v : model.inputs) written[static_cast<size_t>(v)] = true;
  for (int op : order) {
    if (op < 0 || static_cast<size_t>(op) >= ran.size() || ran[static_cast<size_t>(op)]) return false;
    ran[static_cast<size_t>(op)] = true;
    for (int v : model.ops[static_cast<size_t>(op)].inputs)
      if (!model.values[static_cast<size_t>(v)].is_constant() && !written[static_cast<size_t>(v)]) return false;
    for (int v : model.ops[static_cast<size_t>(op)].outputs) written[static_cast<size_t>(v)] = true;
  }
  return order.size() == model.ops.size();
}

// Order and placement together: never a larger arena than the min-peak
// order's, an arena or ratio that is better when it reorders, the same result
// every time, and on some of these graphs a better one.
TEST(OrderSearch, FindsOrdersThatPlaceBetterThanTheMinPeakOrder) {
  int improved = 0;
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    conv::LoweredModel model = small_cell_like_dag(seed);
    const conv::OpSchedule schedule = conv::schedule_ops(model);
    if (schedule.reordered) conv::apply_op_order(&model, schedule.order);
    const conv::ArenaPlan start = conv::plan_model_arena(model, 16, 4);
    const conv::OrderSearch found = conv::search_order_for_arena(model, 16, 4);
    EXPECT_TRUE(is_topological(model, found.order)) << "seed " << seed;
    if (start.arena_size <= start.lower_bound) {
      EXPECT_FALSE(found.reordered) << "seed " << seed;  // at its floor already
      continue;
    }
    EXPECT_EQ(found.start_arena, start.arena_size);
    const conv::OrderSearch again = conv::search_order_for_arena(model, 16, 4);
    EXPECT_EQ(again.order, found.order) << "seed " << seed;
    if (!found.reordered) {
      EXPECT_EQ(found.arena, start.arena_size);
      continue;
    }
    conv::LoweredModel reordered = model;
    conv::apply_op_order(&reordered, found.order);
    const conv::ArenaPlan chosen = conv::plan_model_arena(reordered, 16, 4);
    EXPECT_EQ(chosen.arena_size, found.arena) << "seed " << seed;
    EXPECT_EQ(chosen.lower_bound, found.floor) << "seed " << seed;
    EXPECT_LE(chosen.arena_size, start.arena_size) << "seed " << seed;
    // Smaller, or the same arena at a higher floor (a smaller ratio).
    EXPECT_TRUE(chosen.arena_size < start.arena_size ||
                chosen.lower_bound > start.lower_bound)
        << "seed " << seed;
    ++improved;
  }
  EXPECT_GT(improved, 0);
}

TEST(OrderSearch, LeavesAGraphAtItsFloorAlone) {
  ReshapeChain m = reshape_chain();
  const conv::OrderSearch found = conv::search_order_for_arena(m.b.model, 16, 4);
  EXPECT_FALSE(found.reordered);
  EXPECT_EQ(found.orders_tried, 0);
  EXPECT_EQ(found.order, (std::vector<int>{0, 1, 2}));
}

}  // namespace
}  // namespace floe::testing
