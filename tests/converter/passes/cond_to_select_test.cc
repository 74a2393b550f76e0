// SPDX-License-Identifier: Apache-2.0
// Conds whose predicate depends on a model input: both branches become plain
// ops and a Select picks, so both sides must give TF's answer on device; conds
// whose untaken branch could fail run at run time as an IF (only the taken
// branch runs); conds whose branches escape the cond stay refused, with why.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <memory>
#include <utility>

#include "runtime/core/interpreter.h"
#include "schemas/floe_generated.h"
#include "tests/converter/support/tf1_test_util.h"
#include "tests/support/loaded_model.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

std::string bool_node(const std::string& name, const std::string& op, const std::string& inputs) {
  return "node { name: '" + name + "' op: '" + op + "' " + inputs + " attr { key: 'T' value { type: DT_BOOL } } }\n";
}

// pred = t > 0 on a fed scalar t; x is float [2].
std::string inputs_and_predicate() {
  return "versions { producer: 27 }\n" + placeholder("x", "DT_FLOAT", "dim { size: 2 }") + placeholder("t", "DT_FLOAT", "") +
         float_const("zero", "", "float_val: 0") + binary("pred", "Greater", "t", "zero");
}

// tf.cond(t > 0, lambda: x * 2, lambda: x + 3) as TF1 builds it (constants hang
// off the pivots by control edges). `extra` nodes may read the branches.
std::string cond_graph(const std::string& extra = "", const std::string& outputs_from = "cond/Merge") {
  return inputs_and_predicate() + bool_node("cond/Switch", "Switch", "input: 'pred' input: 'pred'") +
         bool_node("cond/switch_t", "Identity", "input: 'cond/Switch:1'") +
         bool_node("cond/switch_f", "Identity", "input: 'cond/Switch'") +
         bool_node("cond/pred_id", "Identity", "input: 'pred'") +
         binary("cond/Mul/Switch", "Switch", "x", "cond/pred_id") +
         float_const("cond/Mul/y", "", "float_val: 2", "input: '^cond/switch_t'") +
         binary("cond/Mul", "Mul", "cond/Mul/Switch:1", "cond/Mul/y") +
         binary("cond/Add/Switch", "Switch", "x", "cond/pred_id") +
         float_const("cond/Add/y", "", "float_val: 3", "input: '^cond/switch_f'") +
         binary("cond/Add", "Add", "cond/Add/Switch", "cond/Add/y") +
         binary("cond/Merge", "Merge", "cond/Add", "cond/Mul", "attr { key: 'N' value { i: 2 } }") + extra +
         unary("out", "Identity", outputs_from);
}

std::vector<float> run_with(const std::vector<uint8_t>& model, float t, const std::string& output = "") {
  const std::map<std::string, HostTensor> feeds = {{"x", make_f32({2}, {1.0f, 2.0f})},
                                                           {"t", make_f32({}, {t})}};
  const auto outputs = run_model(model, feeds);
  if (outputs.empty()) return {};
  return as_floats(outputs[output == "second" && outputs.size() > 1 ? 1 : 0]);
}

TEST(CondToSelect, BothSidesOfAnInputDependentCondRunOnDevice) {
  const ConvertOutcome r = try_convert(text_graph_options(cond_graph(), {"out"}));
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(contains(r.summary, "1 cond(s) with an input-dependent predicate")) << r.summary;
  EXPECT_EQ(run_with(r.model, 1.0f), (std::vector<float>{2.0f, 4.0f}));   // true: x * 2
  EXPECT_EQ(run_with(r.model, -1.0f), (std::vector<float>{4.0f, 5.0f}));  // false: x + 3
  EXPECT_EQ(run_with(r.model, 0.0f), (std::vector<float>{4.0f, 5.0f}));   // 0 > 0 is false
}

TEST(CondToSelect, TupleCondSharesItsSwitches) {
  // tf.cond returning (a, b): one Merge per output over the same Switches.
  const std::string second = unary("cond/Neg", "Neg", "cond/Add") +
                             binary("cond/Merge_1", "Merge", "cond/Neg", "cond/Mul", "attr { key: 'N' value { i: 2 } }") +
                             unary("out2", "Identity", "cond/Merge_1");
  const ConvertOutcome r = try_convert(text_graph_options(cond_graph(second), {"out", "out2"}));
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(run_with(r.model, -1.0f, "second"), (std::vector<float>{-4.0f, -5.0f}));
  EXPECT_EQ(run_with(r.model, 1.0f, "second"), (std::vector<float>{2.0f, 4.0f}));
}

TEST(CondToSelect, BranchValueUsedOutsideTheCondIsRefused) {
  // In TF, 'leak' would be dead when the false branch is taken; floe cannot mirror that.
  const ConvertOutcome r =
      try_convert(text_graph_options(cond_graph(binary("leak", "Add", "cond/Merge", "cond/Mul")), {"leak"}));
  EXPECT_TRUE(contains(r.error, "control flow whose predicate is not known at conversion time")) << r.error;
  EXPECT_TRUE(contains(r.error, "not computable as a Select: branch node cond/Mul is also read by leak")) << r.error;
}

std::string int_node(const std::string& name, const std::string& op, const std::string& inputs) {
  return "node { name: '" + name + "' op: '" + op + "' " + inputs + " attr { key: 'T' value { type: DT_INT32 } } }\n";
}
std::string int_placeholder(const std::string& name) {
  return "node { name: '" + name + "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: "
         "'shape' value { shape { } } } }\n";
}

// tf.cond(t > 0, lambda: (n // den, n // den), lambda: (n, n * den)) on int32
// scalars: the true branch's FloorDiv fails on den = 0, which a Select (both
// branches computed) would hit whenever the false branch is taken.
std::string division_cond_graph() {
  return inputs_and_predicate() + int_placeholder("n") + int_placeholder("den") +
         int_node("cond/n", "Switch", "input: 'n' input: 'pred'") +
         int_node("cond/den", "Switch", "input: 'den' input: 'pred'") +
         int_node("cond/div", "FloorDiv", "input: 'cond/n:1' input: 'cond/den:1'") +
         int_node("cond/prod", "Mul", "input: 'cond/n' input: 'cond/den'") +
         int_node("cond/merge", "Merge", "input: 'cond/n' input: 'cond/div' attr { key: 'N' value { i: 2 } }") +
         int_node("cond/merge_1", "Merge", "input: 'cond/prod' input: 'cond/div' attr { key: 'N' value { i: 2 } }") +
         int_node("out", "Identity", "input: 'cond/merge'") + int_node("out2", "Identity", "input: 'cond/merge_1'");
}

std::vector<int32_t> ints_of(const std::vector<HostTensor>& outputs) {
  std::vector<int32_t> v;
  for (const HostTensor& t : outputs) {
    for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.as<int32_t>()[i]);
  }
  return v;
}

TEST(RuntimeIf, BranchThatCanFailWhenNotTakenRunsOnlyWhenTaken) {
  const ConvertOutcome r = try_convert(text_graph_options(division_cond_graph(), {"out", "out2"}));
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(contains(r.summary, "cond 'cond': run-time IF, only the taken branch runs (branch node cond/div "
                                  "(FloorDiv) is an integer division"))
      << r.summary;
  EXPECT_FALSE(contains(r.summary, "a Select picks")) << r.summary;
  auto run = [&](float t, int32_t n, int32_t den) {
    return ints_of(run_model(r.model, {{"t", make_f32({}, {t})},
                                       {"n", make_i32({}, {n})}, {"den", make_i32({}, {den})}}));
  };
  EXPECT_EQ(run(1.0f, 7, 2), (std::vector<int32_t>{3, 3}));
  EXPECT_EQ(run(1.0f, -7, 2), (std::vector<int32_t>{-4, -4}));  // floor, as TF
  // den = 0 only when the division's branch is not taken: TF never divides.
  EXPECT_EQ(run(-1.0f, 7, 0), (std::vector<int32_t>{7, 0}));
  EXPECT_EQ(run(0.0f, 5, 3), (std::vector<int32_t>{5, 15}));
  EXPECT_EQ(run(2.0f, 9, 3), (std::vector<int32_t>{3, 3}));  // after the else branch ran
}

TEST(RuntimeIf, OutsideValuesTheBranchesReadAreComputedBeforeTheIf) {
  // The branches read n and den through chains that are longer than the
  // predicate's: the IF (and with it the branches' ops) must still come after them.
  std::string graph = division_cond_graph();
  for (const char* name : {"n", "den"}) {
    const std::string from = "input: '" + std::string(name) + "' input: 'pred'";
    const std::string to = "input: '" + std::string(name) + "_c' input: 'pred'";
    graph.replace(graph.find(from), from.size(), to);
    graph += int_node(std::string(name) + "_a", "Abs", "input: '" + std::string(name) + "'") +
             int_node(std::string(name) + "_b", "Neg", "input: '" + std::string(name) + "_a'") +
             int_node(std::string(name) + "_c", "Neg", "input: '" + std::string(name) + "_b'");
  }
  const ConvertOutcome r = try_convert(text_graph_options(graph, {"out", "out2"}));
  ASSERT_TRUE(r.error.empty()) << r.error;
  ASSERT_TRUE(contains(r.summary, "run-time IF")) << r.summary;
  auto run = [&](float t, int32_t n, int32_t den) {
    return ints_of(run_model(r.model, {{"t", make_f32({}, {t})},
                                       {"n", make_i32({}, {n})}, {"den", make_i32({}, {den})}}));
  };
  EXPECT_EQ(run(1.0f, -7, 2), (std::vector<int32_t>{3, 3}));   // |n| // |den|
  EXPECT_EQ(run(-1.0f, 7, -3), (std::vector<int32_t>{7, 21}));  // (|n|, |n| * |den|)
  EXPECT_EQ(run(1.0f, 9, -3), (std::vector<int32_t>{3, 3}));
}

TEST(RuntimeIf, TakenBranchThatFailsFailsInvoke) {
  const ConvertOutcome r = try_convert(text_graph_options(division_cond_graph(), {"out", "out2"}));
  ASSERT_TRUE(r.error.empty()) << r.error;
  const std::unique_ptr<LoadedModel> loaded = load_model(r.model);
  ASSERT_EQ(loaded->status, Status::kOk) << loaded->model.error().message;
  std::vector<uint8_t> storage(loaded->model.arena_size() + 16);
  uint8_t* base = storage.data() + (16 - reinterpret_cast<uintptr_t>(storage.data()) % 16) % 16;
  Interpreter interpreter(loaded->model, base, loaded->model.arena_size());
  ASSERT_EQ(interpreter.Init(), Status::kOk) << interpreter.error().message;
  *interpreter.input(interpreter.input_index("t")).as<float>() = 1.0f;
  *interpreter.input(interpreter.input_index("n")).as<int32_t>() = 7;
  *interpreter.input(interpreter.input_index("den")).as<int32_t>() = 0;
  EXPECT_NE(interpreter.Invoke(), Status::kOk);  // as TF: the taken branch divides by zero
  *interpreter.input(interpreter.input_index("t")).as<float>() = -1.0f;
  ASSERT_EQ(interpreter.Invoke(), Status::kOk) << interpreter.error().message;
  EXPECT_EQ(*interpreter.output(0).as<int32_t>(), 7);
}

TEST(RuntimeIf, OutOfRangeGatherOnTheUntakenBranch) {
  // tf.cond(t > 0, lambda: tf.gather(x, i), lambda: x[:1] * 2): i is out of range exactly when not taken.
  const std::string graph =
      inputs_and_predicate() + int_placeholder("i") +
      "node { name: 'axis' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
      "tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n" +
      binary("cond/x", "Switch", "x", "pred") + int_node("cond/i", "Switch", "input: 'i' input: 'pred'") +
      "node { name: 'cond/g' op: 'GatherV2' input: 'cond/x:1' input: 'cond/i:1' input: 'axis' attr { key: 'Tparams' "
      "value { type: DT_FLOAT } } attr { key: 'Tindices' value { type: DT_INT32 } } attr { key: 'Taxis' value { "
      "type: DT_INT32 } } }\n" +
      float_const("cond/two", "", "float_val: 2") + binary("cond/x2", "Mul", "cond/x", "cond/two") +
      "node { name: 'cond/first' op: 'Sum' input: 'cond/x2' input: 'axis' attr { key: 'T' value { type: DT_FLOAT } } "
      "attr { key: 'Tidx' value { type: DT_INT32 } } }\n" +
      binary("cond/merge", "Merge", "cond/first", "cond/g", "attr { key: 'N' value { i: 2 } }") +
      unary("out", "Identity", "cond/merge");
  const ConvertOutcome r = try_convert(text_graph_options(graph, {"out"}));
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(contains(r.summary, "run-time IF")) << r.summary;
  auto run = [&](float t, int32_t i) {
    const auto out = run_model(r.model, {{"x", make_f32({2}, {1.5f, -4.0f})}, {"t", make_f32({}, {t})},
                                         {"i", make_i32({}, {i})}});
    return out.size() == 1 ? as_floats(out[0]) : std::vector<float>{};
  };
  EXPECT_EQ(run(1.0f, 1), (std::vector<float>{-4.0f}));
  EXPECT_EQ(run(1.0f, 0), (std::vector<float>{1.5f}));
  EXPECT_EQ(run(-1.0f, 99), (std::vector<float>{-5.0f}));  // (1.5 - 4) * 2, the gather never runs
}

// tf.cond(t > 0, lambda: tf.cond(u > 0, lambda: n // den, lambda: n + n), lambda: n)
std::string nested_division_graph() {
  return inputs_and_predicate() + placeholder("u", "DT_FLOAT", "") + binary("q", "Greater", "u", "zero") +
      int_placeholder("n") + int_placeholder("den") + int_node("o/n", "Switch", "input: 'n' input: 'pred'") +
      int_node("o/den", "Switch", "input: 'den' input: 'pred'") +
      bool_node("o/q", "Switch", "input: 'q' input: 'pred'") +
      int_node("i/n", "Switch", "input: 'o/n:1' input: 'o/q:1'") +
      int_node("i/den", "Switch", "input: 'o/den:1' input: 'o/q:1'") +
      int_node("i/div", "FloorDiv", "input: 'i/n:1' input: 'i/den:1'") +
      int_node("i/twice", "Add", "input: 'i/n' input: 'i/n'") +
      int_node("i/m", "Merge", "input: 'i/twice' input: 'i/div' attr { key: 'N' value { i: 2 } }") +
      int_node("o/m", "Merge", "input: 'o/n' input: 'i/m' attr { key: 'N' value { i: 2 } }") +
      int_node("out", "Identity", "input: 'o/m'");
}

TEST(RuntimeIf, ImpureCondNestedInACondRunsAtRunTimeInsideTheOuterBranch) {
  const std::string graph = nested_division_graph();
  const ConvertOutcome r = try_convert(text_graph_options(graph, {"out"}));
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(contains(r.summary, "cond 'i': run-time IF")) << r.summary;
  EXPECT_TRUE(contains(r.summary, "cond 'o': run-time IF, only the taken branch runs")) << r.summary;
  auto run = [&](float t, float u, int32_t den) {
    return ints_of(run_model(r.model, {{"t", make_f32({}, {t})},
                                       {"u", make_f32({}, {u})}, {"n", make_i32({}, {7})},
                                       {"den", make_i32({}, {den})}}));
  };
  EXPECT_EQ(run(1, 1, 2), (std::vector<int32_t>{3}));
  EXPECT_EQ(run(1, -1, 0), (std::vector<int32_t>{14}));
  EXPECT_EQ(run(-1, 1, 0), (std::vector<int32_t>{7}));
  EXPECT_EQ(run(-1, -1, 0), (std::vector<int32_t>{7}));
}

// Loads `bytes` with the IfOptions of its k-th IF op patched in place (an IF
// has no outputs: the object API would drop its empty output list); the
// refusal's text, "" when it loads.
std::string load_with_if_ranges(const std::vector<uint8_t>& bytes, int k, int32_t then_end, int32_t else_end) {
  std::vector<uint8_t> copy(bytes);
  const conv::schema::Model* model = conv::schema::GetModel(copy.data());
  for (const conv::schema::Operator* op : *model->operators()) {
    if (op->opcode() != conv::schema::OpCode::IF || k-- != 0) continue;
    const conv::schema::IfOptions* options = op->options_as_IfOptions();
    for (const auto& [field, value] : {std::pair{conv::schema::IfOptions::VT_THEN_END, then_end},
                                       std::pair{conv::schema::IfOptions::VT_ELSE_END, else_end}}) {
      const uint8_t* at = reinterpret_cast<const flatbuffers::Table*>(options)->GetAddressOf(field);
      if (at == nullptr) return "field not stored";
      std::memcpy(copy.data() + (at - copy.data()), &value, sizeof value);
    }
  }
  const std::unique_ptr<LoadedModel> l = load_model(copy);
  return l->status == Status::kOk ? "" : l->model.error().message;
}

// The k-th IF op's ranges and the op count.
std::array<int32_t, 3> if_ranges(const std::vector<uint8_t>& bytes, int k) {
  const conv::schema::Model* model = conv::schema::GetModel(bytes.data());
  for (const conv::schema::Operator* op : *model->operators()) {
    if (op->opcode() != conv::schema::OpCode::IF || k-- != 0) continue;
    return {op->options_as_IfOptions()->then_end(), op->options_as_IfOptions()->else_end(),
            static_cast<int32_t>(model->operators()->size())};
  }
  return {-1, -1, -1};
}

TEST(RuntimeIf, LoadRefusesMalformedRanges) {
  const ConvertOutcome r = try_convert(text_graph_options(division_cond_graph(), {"out", "out2"}));
  ASSERT_TRUE(r.error.empty()) << r.error;
  const auto [then_end, else_end, ops] = if_ranges(r.model, 0);
  ASSERT_GT(then_end, 0);
  EXPECT_EQ(load_with_if_ranges(r.model, 0, then_end, else_end), "");
  const std::string outside = "if's op ranges are outside the plan or out of order";
  EXPECT_EQ(load_with_if_ranges(r.model, 0, then_end, ops + 1), outside);
  EXPECT_EQ(load_with_if_ranges(r.model, 0, 0, else_end), outside);
  EXPECT_EQ(load_with_if_ranges(r.model, 0, else_end + 1, else_end), outside);
  // The inner IF of a nested cond whose else range runs past the outer then range.
  const ConvertOutcome nested = try_convert(text_graph_options(nested_division_graph(), {"out"}));
  ASSERT_TRUE(nested.error.empty()) << nested.error;
  const auto outer = if_ranges(nested.model, 0), inner = if_ranges(nested.model, 1);
  ASSERT_GT(inner[0], 0);
  EXPECT_EQ(load_with_if_ranges(nested.model, 1, inner[0], inner[1]), "");
  EXPECT_EQ(load_with_if_ranges(nested.model, 1, inner[0], outer[0] + 1),
            "if's op ranges cross an enclosing loop's or branch's range");
}

TEST(CondToSelect, ValueIndexOfTheMergeIsRefused) {
  const ConvertOutcome r = try_convert(text_graph_options(cond_graph(), {"cond/Merge:1"}));
  EXPECT_TRUE(contains(r.error, "value_index of Merge cond/Merge is fetched")) << r.error;
}

TEST(CondToSelect, NestedCondsAreRewrittenInsideOut) {
  // tf.cond(t > 0, lambda: tf.cond(u > 0, lambda: x + x, lambda: -x), lambda: x * x)
  const std::string graph =
      inputs_and_predicate() + placeholder("u", "DT_FLOAT", "") + binary("q", "Greater", "u", "zero") +
      binary("o/sx", "Switch", "x", "pred") + bool_node("o/sq", "Switch", "input: 'q' input: 'pred'") +
      binary("i/sx", "Switch", "o/sx:1", "o/sq:1") + binary("i/t", "Add", "i/sx:1", "i/sx:1") +
      unary("i/f", "Neg", "i/sx") + binary("i/m", "Merge", "i/f", "i/t", "attr { key: 'N' value { i: 2 } }") +
      unary("o/f", "Square", "o/sx") + binary("o/m", "Merge", "o/f", "i/m", "attr { key: 'N' value { i: 2 } }") +
      unary("out", "Identity", "o/m");
  const ConvertOutcome r = try_convert(text_graph_options(graph, {"out"}));
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_TRUE(contains(r.summary, "2 cond(s) with an input-dependent predicate")) << r.summary;
  auto run = [&](float t, float u) {
    const auto out = run_model(r.model, {{"x", make_f32({2}, {1.0f, 3.0f})}, {"t", make_f32({}, {t})},
                                         {"u", make_f32({}, {u})}});
    return out.size() == 1 ? as_floats(out[0]) : std::vector<float>{};
  };
  EXPECT_EQ(run(1, 1), (std::vector<float>{2.0f, 6.0f}));
  EXPECT_EQ(run(1, -1), (std::vector<float>{-1.0f, -3.0f}));
  EXPECT_EQ(run(-1, 1), (std::vector<float>{1.0f, 9.0f}));
}

}  // namespace
}  // namespace floe::testing
