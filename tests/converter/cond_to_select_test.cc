// SPDX-License-Identifier: Apache-2.0
// Conds whose predicate depends on a model input: both branches become plain
// ops and a Select picks, so both sides must give TF's answer on device; conds
// whose untaken branch could fail or escape the cond stay refused, with why.
#include <gtest/gtest.h>

#include "tests/converter/tf1_test_util.h"

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

TEST(CondToSelect, BranchThatCanFailWhenNotTakenIsRefused) {
  // An integer FloorDiv by a value that is 0 exactly when the branch is not taken.
  const std::string graph =
      inputs_and_predicate() + placeholder("n", "DT_INT32", "") +
      "node { name: 'den' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'shape' "
      "value { shape { } } } }\n"
      "node { name: 'cond/n' op: 'Switch' input: 'n' input: 'pred' attr { key: 'T' value { type: DT_INT32 } } }\n"
      "node { name: 'cond/den' op: 'Switch' input: 'den' input: 'pred' attr { key: 'T' value { type: DT_INT32 } } }\n"
      "node { name: 'cond/div' op: 'FloorDiv' input: 'cond/n:1' input: 'cond/den:1' attr { key: 'T' value { type: "
      "DT_INT32 } } }\n"
      "node { name: 'cond/merge' op: 'Merge' input: 'cond/n' input: 'cond/div' attr { key: 'T' value { type: "
      "DT_INT32 } } attr { key: 'N' value { i: 2 } } }\n";
  const ConvertOutcome r = try_convert(text_graph_options(graph, {"cond/merge"}));
  EXPECT_TRUE(contains(r.error, "branch node cond/div (FloorDiv) is an integer division")) << r.error;
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
