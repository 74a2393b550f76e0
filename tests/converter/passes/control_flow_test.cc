// SPDX-License-Identifier: Apache-2.0
// TF1 while loops and TensorArrays resolved at conversion (converter/passes/
// control_flow): hand-written graphs for what the corpus lacks (nested loops
// whose inner trip count depends on the outer variable, TensorArrays written in a
// loop, a cond inside a loop, refusals with their reason), then the corpus'
// control-flow families (dynamic_rnn LSTM/GRU/RNN cells, TensorArray ops, plain
// while loops) against the values TensorFlow recorded.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <regex>
#include <sstream>

#include "converter/ir/error.h"
#include "runtime/core/interpreter.h"
#include "tests/support/loaded_model.h"
#include "schemas/floe_generated.h"
#include "tests/converter/support/tf_graph_text.h"
#include "tests/converter/support/tfjs_oracle.h"
#include "tests/support/corpus.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

using G = TfGraphText;

// A counting loop: i from 0 while i < limit; `body` adds nodes reading
// "<p>/Identity" (i) and "<p>/Identity_1" (the carried value) and must define
// "<p>/next" (the carried value's next value). Returns the Exit of the value.
std::string counted_loop(G& g, const std::string& p, const std::string& init, const std::string& limit,
                         const std::string& init_dtype, const std::function<void(G&)>& body,
                         const std::string& frame_parent = "") {
  const std::string frame = frame_parent + p + "/while_context";
  g.constant(p + "/zero", "DT_INT32", {}, {0});
  g.constant(p + "/one", "DT_INT32", {}, {1});
  g.enter(p + "/Enter", p + "/zero", frame, false, "DT_INT32");
  g.enter(p + "/Enter_1", init, frame, false, init_dtype);
  g.enter(p + "/limit", limit, frame, true, "DT_INT32");
  g.enter(p + "/step", p + "/one", frame, true, "DT_INT32");
  g.node(p + "/Merge", "Merge", {p + "/Enter", p + "/NextIteration"}, {G::type("T", "DT_INT32"), G::integer("N", 2)});
  g.node(p + "/Merge_1", "Merge", {p + "/Enter_1", p + "/NextIteration_1"}, {G::type("T", init_dtype), G::integer("N", 2)});
  g.node(p + "/Less", "Less", {p + "/Merge", p + "/limit"}, {G::type("T", "DT_INT32")});
  g.node(p + "/LoopCond", "LoopCond", {p + "/Less"});
  g.node(p + "/Switch", "Switch", {p + "/Merge", p + "/LoopCond"}, {G::type("T", "DT_INT32")});
  g.node(p + "/Switch_1", "Switch", {p + "/Merge_1", p + "/LoopCond"}, {G::type("T", init_dtype)});
  g.node(p + "/Identity", "Identity", {p + "/Switch:1"}, {G::type("T", "DT_INT32")});
  g.node(p + "/Identity_1", "Identity", {p + "/Switch_1:1"}, {G::type("T", init_dtype)});
  g.node(p + "/add", "Add", {p + "/Identity", p + "/step"}, {G::type("T", "DT_INT32")});
  body(g);
  g.node(p + "/NextIteration", "NextIteration", {p + "/add"}, {G::type("T", "DT_INT32")});
  g.node(p + "/NextIteration_1", "NextIteration", {p + "/next"}, {G::type("T", init_dtype)});
  g.node(p + "/Exit_1", "Exit", {p + "/Switch_1"}, {G::type("T", init_dtype)});
  return p + "/Exit_1";
}

conv::ConvertResult convert_graph(const G& g, const std::string& name, std::vector<std::string> outputs,
                                  std::map<std::string, std::string> frozen = {},
                                  conv::LoopMode loops = conv::LoopMode::kAuto) {
  conv::ConvertOptions options;
  options.graph_path = g.write(make_temp_dir() + "/" + name + ".pbtxt");
  options.outputs = std::move(outputs);
  options.frozen_inputs = std::move(frozen);
  options.loops = loops;
  return conv::convert(options);
}

// The ConvertError of converting `g` with --loops=runtime ("" when it converts).
std::string runtime_refusal(const G& g, const std::string& name, std::vector<std::string> outputs) {
  try {
    convert_graph(g, name, std::move(outputs), {}, conv::LoopMode::kRuntime);
  } catch (const conv::ConvertError& e) {
    EXPECT_EQ(e.category(), conv::ErrorCategory::kUnsupported) << e.what();
    return e.what();
  }
  return "";
}

std::vector<float> run1(const conv::ConvertResult& r, const std::vector<float>& x) {
  const std::vector<HostTensor> out = run_model(r.model, {{"x", make_f32({static_cast<int64_t>(x.size())}, x)}});
  return out.empty() ? std::vector<float>{} : as_floats(out[0]);
}

TEST(ControlFlow, CountedLoopUnrollsAroundANonConstantValue) {
  G g;
  g.placeholder("x", "DT_FLOAT", {2}).constant("n", "DT_INT32", {}, {5}).constant("two", "DT_FLOAT", {}, {2});
  const std::string exit = counted_loop(g, "while", "x", "n", "DT_FLOAT", [](G& b) {
    b.enter("while/two", "two", "while/while_context", true, "DT_FLOAT");
    b.node("while/next", "Mul", {"while/Identity_1", "while/two"}, {G::type("T", "DT_FLOAT")});
  });
  g.node("y", "Identity", {exit}, {G::type("T", "DT_FLOAT")});
  const conv::ConvertResult r = convert_graph(g, "counted", {"y"});
  EXPECT_EQ(run1(r, {1.5f, -3.0f}), (std::vector<float>{48.0f, -96.0f}));
  EXPECT_NE(r.summary.find("while loop 'while/while_context': 5 iteration(s)"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("MUL x5"), std::string::npos) << r.summary;
}

// for i in 0..n-1: for j in 0..i: acc += x  ->  acc = n (n + 1) / 2 x, with n
// a graph input (when negative) or a constant.
G nested_loop_on_the_outer_variable(int32_t n) {
  G g;
  g.placeholder("x", "DT_FLOAT", {2}).constant("zeros", "DT_FLOAT", {2}, {0, 0});
  if (n < 0) {
    g.placeholder("n", "DT_INT32", {});
  } else {
    g.constant("n", "DT_INT32", {}, {static_cast<double>(n)});
  }
  const std::string exit = counted_loop(g, "outer", "zeros", "n", "DT_FLOAT", [](G& b) {
    // inner limit = i + 1, computed inside the outer body
    b.node("outer/limit_inner", "Add", {"outer/Identity", "outer/step"}, {G::type("T", "DT_INT32")});
    b.enter("outer/x", "x", "outer/while_context", true, "DT_FLOAT");
    const std::string inner = counted_loop(
        b, "outer/inner", "outer/Identity_1", "outer/limit_inner", "DT_FLOAT",
        [](G& c) {
          c.enter("outer/inner/x", "outer/x", "outer/outer/inner/while_context", true, "DT_FLOAT");
          c.node("outer/inner/next", "Add", {"outer/inner/Identity_1", "outer/inner/x"}, {G::type("T", "DT_FLOAT")});
        },
        "outer/");
    b.node("outer/next", "Identity", {inner}, {G::type("T", "DT_FLOAT")});
  });
  g.node("y", "Identity", {exit}, {G::type("T", "DT_FLOAT")});
  return g;
}

// for i in 0..2: for j in 0..i: acc += x  ->  acc = (1 + 2 + 3) x
TEST(ControlFlow, NestedLoopWhoseInnerTripCountDependsOnTheOuterVariable) {
  const G g = nested_loop_on_the_outer_variable(3);
  const conv::ConvertResult r = convert_graph(g, "nested", {"y"});
  EXPECT_EQ(run1(r, {1.0f, -0.5f}), (std::vector<float>{6.0f, -3.0f}));
  // 1 outer instance + 3 inner instances; 3 + (1 + 2 + 3) iterations.
  EXPECT_NE(r.summary.find("unrolled 4 while loop instance(s) (9 iteration(s)"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("loop 'outer': unrolled 3x ("), std::string::npos) << r.summary;
  // At run time: the inner loop is a WHILE inside the outer WHILE's body, its
  // trip count (i + 1) computed there; bounded by the most it ran (3).
  const conv::ConvertResult nested = convert_graph(g, "nested_runtime", {"y"}, {}, conv::LoopMode::kRuntime);
  EXPECT_NE(nested.summary.find("loop 'outer/inner': run-time WHILE, 3 iterations (nested in loop 'outer')"),
            std::string::npos)
      << nested.summary;
  EXPECT_NE(nested.summary.find("loop 'outer': run-time WHILE, 3 iterations (--loops=runtime)"), std::string::npos)
      << nested.summary;
  EXPECT_NE(nested.summary.find("WHILE x2"), std::string::npos) << nested.summary;
  EXPECT_EQ(run1(nested, {1.0f, -0.5f}), (std::vector<float>{6.0f, -3.0f}));
}

// for i in 0..n-1: for j in 0..m-1: acc += x  ->  acc = n * m * x, with n and
// m graph inputs (when negative) or constants.
G nested_adding_loops(int32_t n, int m) {
  G g;
  g.placeholder("x", "DT_FLOAT", {2});
  if (n < 0) {
    g.placeholder("n", "DT_INT32", {});
  } else {
    g.constant("n", "DT_INT32", {}, {static_cast<double>(n)});
  }
  g.constant("zeros", "DT_FLOAT", {2}, {0, 0});
  if (m < 0) {
    g.placeholder("m", "DT_INT32", {});
  } else {
    g.constant("m", "DT_INT32", {}, {static_cast<double>(m)});
  }
  const std::string exit = counted_loop(g, "outer", "zeros", "n", "DT_FLOAT", [](G& b) {
    b.enter("outer/x", "x", "outer/while_context", true, "DT_FLOAT");
    b.enter("outer/m", "m", "outer/while_context", true, "DT_INT32");
    const std::string inner = counted_loop(
        b, "outer/inner", "outer/Identity_1", "outer/m", "DT_FLOAT",
        [](G& c) {
          c.enter("outer/inner/x", "outer/x", "outer/outer/inner/while_context", true, "DT_FLOAT");
          c.node("outer/inner/next", "Add", {"outer/inner/Identity_1", "outer/inner/x"}, {G::type("T", "DT_FLOAT")});
        },
        "outer/");
    b.node("outer/next", "Identity", {inner}, {G::type("T", "DT_FLOAT")});
  });
  g.node("y", "Identity", {exit}, {G::type("T", "DT_FLOAT")});
  return g;
}

TEST(NestedRuntimeLoop, InnerLoopOnAGraphInputRunsInsideTheOuterWhile) {
  conv::ConvertOptions options;
  options.graph_path = nested_adding_loops(3, -1).write(make_temp_dir() + "/nested_input.pbtxt");
  options.outputs = {"y"};
  options.max_loop_iterations = 10;
  const conv::ConvertResult r = conv::convert(options);
  EXPECT_NE(r.summary.find("loop 'outer/inner': run-time WHILE, bound 10 (--max-loop-iterations)"), std::string::npos)
      << r.summary;
  EXPECT_NE(r.summary.find("loop 'outer': run-time WHILE, 3 iterations (it holds the run-time loop 'outer/inner')"),
            std::string::npos)
      << r.summary;
  for (int32_t m : {0, 1, 4, 10}) {
    const std::vector<HostTensor> out =
        run_model(r.model, {{"x", make_f32({2}, {1.0f, -0.5f})}, {"m", make_i32({}, {m})}});
    ASSERT_EQ(out.size(), 1u) << m;
    EXPECT_EQ(as_floats(out[0]), (std::vector<float>{3.0f * m, -1.5f * m})) << m;
  }
}

// Both trip counts from graph inputs: the outer loop is a WHILE because of its
// own condition, the inner one a WHILE in its body.
TEST(NestedRuntimeLoop, OuterAndInnerLoopsOnGraphInputsAreNestedWhileOps) {
  conv::ConvertOptions options;
  options.graph_path = nested_adding_loops(-1, -1).write(make_temp_dir() + "/nested_inputs.pbtxt");
  options.outputs = {"y"};
  options.max_loop_iterations = 6;
  const conv::ConvertResult r = conv::convert(options);
  EXPECT_NE(r.summary.find("loop 'outer': run-time WHILE, bound 6 (--max-loop-iterations)"), std::string::npos)
      << r.summary;
  EXPECT_NE(r.summary.find("loop 'outer/inner': run-time WHILE, bound 6 (--max-loop-iterations)"), std::string::npos)
      << r.summary;
  EXPECT_NE(r.summary.find("WHILE x2"), std::string::npos) << r.summary;
  for (const auto& [n, m] : std::vector<std::pair<int32_t, int32_t>>{{0, 3}, {1, 0}, {2, 5}, {6, 6}, {4, 1}}) {
    const std::map<std::string, HostTensor> inputs = {
        {"x", make_f32({2}, {1.0f, -0.5f})}, {"n", make_i32({}, {n})}, {"m", make_i32({}, {m})}};
    const std::vector<HostTensor> out = run_model(r.model, inputs);
    ASSERT_EQ(out.size(), 1u) << n << " " << m;
    EXPECT_EQ(as_floats(out[0]), (std::vector<float>{1.0f * n * m, -0.5f * n * m})) << n << " " << m;
  }
}

// The same with n a graph input: the outer loop is a WHILE for its own
// condition, and the inner one, whose trip count comes from the outer variable,
// a WHILE in its body. (The TF.js oracle stops without computing y on these
// nested graphs written by counted_loop: the values are checked by hand.)
TEST(NestedRuntimeLoop, InnerLoopOnTheVariableOfAnOuterLoopOnAGraphInput) {
  const G g = nested_loop_on_the_outer_variable(-1);
  conv::ConvertOptions options;
  options.graph_path = g.write(make_temp_dir() + "/nested_on_outer.pbtxt");
  options.outputs = {"y"};
  options.max_loop_iterations = 8;
  const conv::ConvertResult r = conv::convert(options);
  EXPECT_NE(r.summary.find("loop 'outer': run-time WHILE, bound 8 (--max-loop-iterations)"), std::string::npos)
      << r.summary;
  EXPECT_NE(r.summary.find("WHILE x2"), std::string::npos) << r.summary;
  for (int32_t n : {0, 1, 3, 8}) {
    const std::map<std::string, HostTensor> inputs = {{"x", make_f32({2}, {1.0f, -0.5f})}, {"n", make_i32({}, {n})}};
    const std::vector<HostTensor> out = run_model(r.model, inputs);
    ASSERT_EQ(out.size(), 1u) << n;
    const float sum = static_cast<float>(n * (n + 1) / 2);
    EXPECT_EQ(as_floats(out[0]), (std::vector<float>{sum, -0.5f * sum})) << n;
  }
}

// for i in 0..1: for j in 0..1: for k in 0..m-1: acc += x  ->  acc = 4 m x: the
// innermost loop, two loops deep, on a graph input; the loops around it run at
// run time too (three nested WHILE ops).
TEST(NestedRuntimeLoop, LoopOnAGraphInputTwoLoopsDeepRunsInsideTwoWhileOps) {
  G g;
  g.placeholder("x", "DT_FLOAT", {2}).placeholder("m", "DT_INT32", {});
  g.constant("two", "DT_INT32", {}, {2}).constant("zeros", "DT_FLOAT", {2}, {0, 0});
  const std::string exit = counted_loop(g, "outer", "zeros", "two", "DT_FLOAT", [](G& b) {
    const std::string outer_ctx = "outer/while_context", mid_ctx = "outer/outer/mid/while_context";
    b.enter("outer/x", "x", outer_ctx, true, "DT_FLOAT").enter("outer/m", "m", outer_ctx, true, "DT_INT32");
    b.enter("outer/two", "two", outer_ctx, true, "DT_INT32");
    const std::string mid = counted_loop(
        b, "outer/mid", "outer/Identity_1", "outer/two", "DT_FLOAT",
        [&mid_ctx](G& c) {
          c.enter("outer/mid/x", "outer/x", mid_ctx, true, "DT_FLOAT");
          c.enter("outer/mid/m", "outer/m", mid_ctx, true, "DT_INT32");
          const std::string inner = counted_loop(
              c, "outer/mid/inner", "outer/mid/Identity_1", "outer/mid/m", "DT_FLOAT",
              [](G& d) {
                d.enter("outer/mid/inner/x", "outer/mid/x", "outer/mid/outer/mid/inner/while_context", true,
                        "DT_FLOAT");
                d.node("outer/mid/inner/next", "Add", {"outer/mid/inner/Identity_1", "outer/mid/inner/x"},
                       {G::type("T", "DT_FLOAT")});
              },
              "outer/mid/");
          c.node("outer/mid/next", "Identity", {inner}, {G::type("T", "DT_FLOAT")});
        },
        "outer/");
    b.node("outer/next", "Identity", {mid}, {G::type("T", "DT_FLOAT")});
  });
  g.node("y", "Identity", {exit}, {G::type("T", "DT_FLOAT")});
  conv::ConvertOptions options;
  options.graph_path = g.write(make_temp_dir() + "/two_deep.pbtxt");
  options.outputs = {"y"};
  options.max_loop_iterations = 5;
  const conv::ConvertResult r = conv::convert(options);
  EXPECT_NE(r.summary.find("loop 'outer/mid/inner': run-time WHILE, bound 5 (--max-loop-iterations)"),
            std::string::npos)
      << r.summary;
  EXPECT_NE(r.summary.find("WHILE x3"), std::string::npos) << r.summary;
  for (int32_t m : {0, 1, 5}) {
    const std::vector<HostTensor> out =
        run_model(r.model, {{"x", make_f32({2}, {1.0f, -0.5f})}, {"m", make_i32({}, {m})}});
    ASSERT_EQ(out.size(), 1u) << m;
    EXPECT_EQ(as_floats(out[0]), (std::vector<float>{4.0f * m, -2.0f * m})) << m;
  }
}

TEST(NestedRuntimeLoop, LongOuterLoopWithAShortInnerLoopBecomesNestedWhileOps) {
  const conv::ConvertResult r = convert_graph(nested_adding_loops(200, 3), "nested_long", {"y"});
  EXPECT_NE(r.summary.find("loop 'outer/inner': run-time WHILE, 3 iterations (nested in loop 'outer')"),
            std::string::npos)
      << r.summary;
  EXPECT_NE(r.summary.find("loop 'outer': run-time WHILE, 200 iterations (unrolled would be 600 ops"),
            std::string::npos)
      << r.summary;
  EXPECT_NE(r.summary.find("WHILE x2"), std::string::npos) << r.summary;
  EXPECT_EQ(run1(r, {1.0f, -0.5f}), (std::vector<float>{600.0f, -300.0f}));
}

// ta[i] = x * (i + 1) for i in 0..2, then stack: [x, 2x, 3x].
TEST(ControlFlow, TensorArrayWrittenInALoopThenStacked) {
  G g;
  g.placeholder("x", "DT_FLOAT", {2}).constant("n", "DT_INT32", {}, {3}).constant("f0", "DT_FLOAT", {}, {1});
  g.node("ta", "TensorArrayV3", {"n"},
         {G::type("dtype", "DT_FLOAT"), G::boolean("dynamic_size", false), G::boolean("clear_after_read", true),
          G::boolean("identical_element_shapes", true), G::str("tensor_array_name", "")});
  // Loop variables: the counter (via counted_loop), f (float multiplier) and the TensorArray flow.
  const std::string f = "while";
  g.enter(f + "/Enter_2", "ta:1", "while/while_context", false, "DT_FLOAT");
  g.node(f + "/Merge_2", "Merge", {f + "/Enter_2", f + "/NextIteration_2"}, {G::type("T", "DT_FLOAT"), G::integer("N", 2)});
  g.node(f + "/Switch_2", "Switch", {f + "/Merge_2", f + "/LoopCond"}, {G::type("T", "DT_FLOAT")});
  g.node(f + "/Identity_2", "Identity", {f + "/Switch_2:1"}, {G::type("T", "DT_FLOAT")});
  const std::string exit = counted_loop(g, "while", "f0", "n", "DT_FLOAT", [](G& b) {
    b.enter("while/x", "x", "while/while_context", true, "DT_FLOAT");
    b.enter("while/ta", "ta", "while/while_context", true, "DT_RESOURCE");
    b.enter("while/fone", "f0", "while/while_context", true, "DT_FLOAT");
    b.node("while/value", "Mul", {"while/x", "while/Identity_1"}, {G::type("T", "DT_FLOAT")});
    b.node("while/write", "TensorArrayWriteV3", {"while/ta", "while/Identity", "while/value", "while/Identity_2"},
           {G::type("T", "DT_FLOAT")});
    b.node("while/next", "Add", {"while/Identity_1", "while/fone"}, {G::type("T", "DT_FLOAT")});
  });
  g.node(f + "/NextIteration_2", "NextIteration", {f + "/write"}, {G::type("T", "DT_FLOAT")});
  g.node(f + "/Exit_2", "Exit", {f + "/Switch_2"}, {G::type("T", "DT_FLOAT")});
  g.constant("indices", "DT_INT32", {3}, {0, 1, 2});
  g.node("stacked", "TensorArrayGatherV3", {"ta", "indices", f + "/Exit_2"},
         {G::type("dtype", "DT_FLOAT"), G::shape("element_shape", {2})});
  g.node("size", "TensorArraySizeV3", {"ta", f + "/Exit_2"});
  (void)exit;
  const conv::ConvertResult r = convert_graph(g, "tensor_array", {"stacked", "size"});
  const std::vector<HostTensor> out = run_model(r.model, {{"x", make_f32({2}, {1.0f, -2.0f})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(as_floats(out[0]), (std::vector<float>{1, -2, 2, -4, 3, -6}));
  ASSERT_EQ(out[1].dtype, DType::kInt32);
  EXPECT_EQ(out[1].as<int32_t>()[0], 3);
  EXPECT_NE(r.summary.find("resolved 1 TensorArray(s)"), std::string::npos) << r.summary;
  // Sent to run time, the TensorArray is a [3, 2] buffer the WHILE writes row by row.
  const conv::ConvertResult runtime =
      convert_graph(g, "tensor_array_runtime", {"stacked", "size"}, {}, conv::LoopMode::kRuntime);
  EXPECT_NE(runtime.summary.find("loop 'while': run-time WHILE, 3 iterations (--loops=runtime), 1 TensorArray(s) "
                                 "as dense buffers"),
            std::string::npos)
      << runtime.summary;
  const std::vector<HostTensor> at_run_time = run_model(runtime.model, {{"x", make_f32({2}, {1.0f, -2.0f})}});
  ASSERT_EQ(at_run_time.size(), 2u);
  EXPECT_EQ(at_run_time[0].shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(as_floats(at_run_time[0]), (std::vector<float>{1, -2, 2, -4, 3, -6}));
  EXPECT_EQ(at_run_time[1].as<int32_t>()[0], 3);
}

// y = 0; for i in 0..2: y = (i < 2) ? y + x : y * x  ->  2x^2
TEST(ControlFlow, CondInsideALoopFollowsEachIterationsPredicate) {
  G g;
  g.placeholder("x", "DT_FLOAT", {2}).constant("n", "DT_INT32", {}, {3}).constant("zeros", "DT_FLOAT", {2}, {0, 0});
  g.constant("two_i", "DT_INT32", {}, {2});
  const std::string exit = counted_loop(g, "while", "zeros", "n", "DT_FLOAT", [](G& b) {
    const std::string fr = "while/while_context";
    b.enter("while/x", "x", fr, true, "DT_FLOAT");
    b.enter("while/two", "two_i", fr, true, "DT_INT32");
    b.node("while/cond/pred", "Less", {"while/Identity", "while/two"}, {G::type("T", "DT_INT32")});
    b.node("while/cond/Switch", "Switch", {"while/Identity_1", "while/cond/pred"}, {G::type("T", "DT_FLOAT")});
    b.node("while/cond/add", "Add", {"while/cond/Switch:1", "while/x"}, {G::type("T", "DT_FLOAT")});
    b.node("while/cond/mul", "Mul", {"while/cond/Switch", "while/x"}, {G::type("T", "DT_FLOAT")});
    b.node("while/cond/Merge", "Merge", {"while/cond/mul", "while/cond/add"}, {G::type("T", "DT_FLOAT"), G::integer("N", 2)});
    b.node("while/next", "Identity", {"while/cond/Merge"}, {G::type("T", "DT_FLOAT")});
  });
  g.node("y", "Identity", {exit}, {G::type("T", "DT_FLOAT")});
  const conv::ConvertResult r = convert_graph(g, "cond_in_loop", {"y"});
  EXPECT_EQ(run1(r, {3.0f, -1.0f}), (std::vector<float>{18.0f, 2.0f}));
}

G placeholder_limit_loop() {
  G g;
  g.placeholder("x", "DT_FLOAT", {2}).placeholder("n", "DT_INT32", {}).constant("two", "DT_FLOAT", {}, {2});
  const std::string exit = counted_loop(g, "while", "x", "n", "DT_FLOAT", [](G& b) {
    b.enter("while/two", "two", "while/while_context", true, "DT_FLOAT");
    b.node("while/next", "Mul", {"while/Identity_1", "while/two"}, {G::type("T", "DT_FLOAT")});
  });
  g.node("y", "Identity", {exit}, {G::type("T", "DT_FLOAT")});
  return g;
}

// TF runs a loop on a graph input until its condition is false, with no bound:
// so does floe when the loop's variables have fixed shapes (its memory does
// not grow with the trip count).
TEST(ControlFlow, LoopOnAGraphInputWithoutABoundRunsUntilItsCondition) {
  const G g = placeholder_limit_loop();
  const conv::ConvertResult r = convert_graph(g, "dynamic_limit", {"y"});
  EXPECT_NE(r.summary.find("loop 'while': run-time WHILE, no bound: its variables have fixed shapes"),
            std::string::npos)
      << r.summary;
  for (int32_t n : {0, 3, 120}) {  // x * 2^n, past the bounds other tests give
    const std::vector<HostTensor> out =
        run_model(r.model, {{"x", make_f32({2}, {1.0f, -0.5f})}, {"n", make_i32({}, {n})}});
    ASSERT_EQ(out.size(), 1u) << n;
    const float scale = std::ldexp(1.0f, n);
    EXPECT_EQ(as_floats(out[0]), (std::vector<float>{scale, -0.5f * scale})) << n;
  }
  // Frozen, it unrolls as before.
  const conv::ConvertResult frozen = convert_graph(g, "frozen_limit", {"y"}, {{"n", "3"}});
  EXPECT_EQ(run1(frozen, {1.0f, 2.0f}), (std::vector<float>{8.0f, 16.0f}));
  EXPECT_NE(frozen.summary.find("loop 'while': unrolled 3x"), std::string::npos) << frozen.summary;
}

conv::ConvertResult convert_bounded(const G& g, const std::string& name, uint32_t bound,
                                    const std::string& target = "reference") {
  conv::ConvertOptions options;
  options.graph_path = g.write(make_temp_dir() + "/" + name + ".pbtxt");
  options.outputs = {"y"};
  options.max_loop_iterations = bound;
  options.target = target;
  return conv::convert(options);
}

std::vector<HostTensor> run_loop_model(const std::vector<uint8_t>& model, const std::vector<float>& x, int32_t n) {
  return run_model(model, {{"x", make_f32({static_cast<int64_t>(x.size())}, x)}, {"n", make_i32({}, {n})}});
}

TEST(RuntimeLoop, TripCountFromAnInputRunsInTheRuntime) {
  const conv::ConvertResult r = convert_bounded(placeholder_limit_loop(), "runtime_limit", 20);
  EXPECT_NE(r.summary.find("loop 'while': run-time WHILE, bound 20 (--max-loop-iterations)"), std::string::npos)
      << r.summary;
  // One model, any trip count up to the bound: x * 2^n.
  for (int32_t n : {0, 1, 3, 7, 20}) {
    const std::vector<HostTensor> out = run_loop_model(r.model, {1.0f, -0.5f}, n);
    ASSERT_EQ(out.size(), 1u) << n;
    const float scale = std::ldexp(1.0f, n);
    EXPECT_EQ(as_floats(out[0]), (std::vector<float>{scale, -0.5f * scale})) << n;
  }
}

// while i < n: h = tf.cond(i < 2, lambda: tf.gather(h, [1, 0]) (or -h), lambda: h * 2)
// on a run-time loop: the cond in the body becomes an IF there (a Select when
// its branches are pure).
// `trips` >= 0: n is that constant instead of an input.
G cond_in_loop(bool gather, int32_t trips = -1) {
  G g;
  g.placeholder("x", "DT_FLOAT", {2}).constant("two", "DT_FLOAT", {}, {2});
  if (trips < 0) {
    g.placeholder("n", "DT_INT32", {});
  } else {
    g.constant("n", "DT_INT32", {}, {static_cast<double>(trips)});
  }
  g.constant("k", "DT_INT32", {}, {2});
  const std::string exit = counted_loop(g, "while", "x", "n", "DT_FLOAT", [gather](G& b) {
    const std::string ctx = "while/while_context";
    b.enter("while/k", "k", ctx, true, "DT_INT32").enter("while/two", "two", ctx, true, "DT_FLOAT");
    b.node("while/cond/pred", "Less", {"while/Identity", "while/k"}, {G::type("T", "DT_INT32")});
    // The pivot: the branch's constants hang off it, as TF1 builds them.
    b.node("while/cond/Switch", "Switch", {"while/cond/pred", "while/cond/pred"}, {G::type("T", "DT_BOOL")});
    b.node("while/cond/switch_t", "Identity", {"while/cond/Switch:1"}, {G::type("T", "DT_BOOL")});
    b.node("while/cond/idx", "Const", {"^while/cond/switch_t"},
           {G::type("dtype", "DT_INT32"), G::tensor("DT_INT32", {2}, {1, 0})});
    b.node("while/cond/axis", "Const", {"^while/cond/switch_t"},
           {G::type("dtype", "DT_INT32"), G::tensor("DT_INT32", {}, {0})});
    b.node("while/cond/h", "Switch", {"while/Identity_1", "while/cond/pred"}, {G::type("T", "DT_FLOAT")});
    b.node("while/cond/two", "Switch", {"while/two", "while/cond/pred"}, {G::type("T", "DT_FLOAT")});
    if (gather) {
      b.node("while/cond/then", "GatherV2", {"while/cond/h:1", "while/cond/idx", "while/cond/axis"},
             {G::type("Tparams", "DT_FLOAT"), G::type("Tindices", "DT_INT32"), G::type("Taxis", "DT_INT32"),
              G::integer("batch_dims", 0)});
    } else {
      b.node("while/cond/then", "Neg", {"while/cond/h:1"}, {G::type("T", "DT_FLOAT")});
    }
    b.node("while/cond/else", "Mul", {"while/cond/h", "while/cond/two"}, {G::type("T", "DT_FLOAT")});
    b.node("while/cond/Merge", "Merge", {"while/cond/else", "while/cond/then"},
           {G::type("T", "DT_FLOAT"), G::integer("N", 2)});
    b.node("while/next", "Identity", {"while/cond/Merge"}, {G::type("T", "DT_FLOAT")});
  });
  g.node("y", "Identity", {exit}, {G::type("T", "DT_FLOAT")});
  return g;
}

TEST(RuntimeLoop, CondInTheBodyBecomesAnIfOrASelectInTheBody) {
  for (const bool gather : {true, false}) {
    const conv::ConvertResult r = convert_bounded(cond_in_loop(gather), gather ? "if_in_loop" : "select_in_loop", 8);
    EXPECT_NE(r.summary.find("loop 'while': run-time WHILE, bound 8"), std::string::npos) << r.summary;
    EXPECT_EQ(r.summary.find("cond 'while/cond': run-time IF") != std::string::npos, gather) << r.summary;
    EXPECT_EQ(r.summary.find("1 cond(s) with an input-dependent predicate") != std::string::npos, !gather)
        << r.summary;
    for (int32_t n : {0, 1, 2, 3, 5}) {
      std::vector<float> h = {1.0f, -0.5f};
      for (int32_t i = 0; i < n; ++i) {
        if (i >= 2) {
          h = {2 * h[0], 2 * h[1]};
        } else {
          h = gather ? std::vector<float>{h[1], h[0]} : std::vector<float>{-h[0], -h[1]};
        }
      }
      const std::vector<HostTensor> out = run_loop_model(r.model, {1.0f, -0.5f}, n);
      ASSERT_EQ(out.size(), 1u) << n;
      EXPECT_EQ(as_floats(out[0]), h) << "n " << n << (gather ? " (IF)" : " (Select)");
    }
  }
}

// The same loop with a constant trip count, sent to run time: its body's cond
// becomes an IF (or a Select) there instead of keeping the loop unrolled.
TEST(RuntimeLoop, ConstantTripLoopWithACondRunsAtRunTimeWhenAsked) {
  for (const bool gather : {true, false}) {
    const conv::ConvertResult r = convert_graph(cond_in_loop(gather, 5), gather ? "const_if_in_loop" : "const_select_in_loop",
                                                {"y"}, {}, conv::LoopMode::kRuntime);
    EXPECT_NE(r.summary.find("loop 'while': run-time WHILE, 5 iterations"), std::string::npos) << r.summary;
    EXPECT_EQ(r.summary.find("cond 'while/cond': run-time IF") != std::string::npos, gather) << r.summary;
    const std::vector<HostTensor> out = run_model(r.model, {{"x", make_f32({2}, {1.0f, -0.5f})}});
    ASSERT_EQ(out.size(), 1u);
    // Two swaps (or negations), then three doublings.
    EXPECT_EQ(as_floats(out[0]), (std::vector<float>{8.0f, -4.0f}));
  }
}

// An arena between two guard bands, to check that nothing writes outside it.
struct GuardedArena {
  static constexpr size_t kGuard = 256;
  explicit GuardedArena(size_t bytes) : size(bytes), storage(kGuard + bytes + kGuard + 16, 0xA5) {
    base = storage.data() + kGuard;
    base += (16 - reinterpret_cast<uintptr_t>(base) % 16) % 16;
    before = storage;
  }
  // The first byte outside the arena that changed, or -1.
  int64_t first_written_outside() const {
    for (size_t i = 0; i < storage.size(); ++i) {
      const bool inside = storage.data() + i >= base && storage.data() + i < base + size;
      if (!inside && storage[i] != before[i]) return static_cast<int64_t>(i);
    }
    return -1;
  }
  size_t size;
  std::vector<uint8_t> storage, before;
  uint8_t* base = nullptr;
};

TEST(RuntimeLoop, ExceedingTheBoundFailsInvokeCleanlyInsideTheArena) {
  const conv::ConvertResult r = convert_bounded(placeholder_limit_loop(), "bounded", 3);
  const std::unique_ptr<LoadedModel> loaded = load_model(r.model);
  ASSERT_EQ(loaded->status, Status::kOk) << loaded->model.error().message;
  const Model& model = loaded->model;
  int32_t while_op = -1;
  for (uint32_t i = 0; i < model.schema()->operators()->size(); ++i) {
    if (model.schema()->operators()->Get(i)->opcode() == schema::OpCode::WHILE) while_op = static_cast<int32_t>(i);
  }
  ASSERT_GE(while_op, 0);
  GuardedArena arena(model.arena_size());
  Interpreter interpreter(model, arena.base, arena.size);
  ASSERT_EQ(interpreter.Init(), Status::kOk) << interpreter.error().message;
  const float x[2] = {1.0f, 2.0f};
  std::memcpy(interpreter.input(interpreter.input_index("x")).data, x, sizeof x);
  for (int32_t n : {3, 4, 1000}) {
    *interpreter.input(interpreter.input_index("n")).as<int32_t>() = n;
    const Status status = interpreter.Invoke();
    if (n == 3) {
      ASSERT_EQ(status, Status::kOk) << interpreter.error().message;
      EXPECT_EQ(interpreter.output(0).as<float>()[1], 16.0f);
      continue;
    }
    EXPECT_EQ(status, Status::kLoopBoundExceeded) << n;
    EXPECT_EQ(interpreter.error().op, while_op);
    EXPECT_STREQ(status_name(status), "loop bound exceeded");
  }
  EXPECT_EQ(arena.first_written_outside(), -1) << "a byte outside the arena was written";
}

// dynamic_rnn's shape on an input-dependent trip count: x [6, 2] unstacked into
// one TensorArray; for i < n: h = tanh(0.5 h + x[i]), written at i into a second
// TensorArray of `out_size` rows (element shape unknown until the write), stacked
// after the loop. n is a graph input: the loop runs at run time.
// `concat`: y is the TensorArray concatenated ([rows * 2]) instead of stacked.
G array_loop(int out_size, bool dynamic_out, bool concat = false) {
  G g;
  g.placeholder("x", "DT_FLOAT", {6, 2}).placeholder("n", "DT_INT32", {});
  g.constant("size_in", "DT_INT32", {}, {6}).constant("size_out", "DT_INT32", {}, {static_cast<double>(out_size)});
  g.constant("h0", "DT_FLOAT", {2}, {0.25, -0.5}).constant("half", "DT_FLOAT", {}, {0.5});
  g.constant("in_indices", "DT_INT32", {6}, {0, 1, 2, 3, 4, 5});
  const std::string unknown = "attr { key: \"element_shape\" value { shape { unknown_rank: true } } }";
  g.node("ta_in", "TensorArrayV3", {"size_in"},
         {G::type("dtype", "DT_FLOAT"), G::boolean("dynamic_size", false), G::boolean("clear_after_read", true),
          G::boolean("identical_element_shapes", true), G::str("tensor_array_name", "input"), unknown});
  g.node("ta_in/scatter", "TensorArrayScatterV3", {"ta_in", "in_indices", "x", "ta_in:1"}, {G::type("T", "DT_FLOAT")});
  g.node("ta_out", "TensorArrayV3", {"size_out"},
         {G::type("dtype", "DT_FLOAT"), G::boolean("dynamic_size", dynamic_out), G::boolean("clear_after_read", true),
          G::boolean("identical_element_shapes", true), G::str("tensor_array_name", "output"), unknown});
  const std::string ctx = "while/while_context";
  g.enter("while/Enter_2", "ta_out:1", ctx, false, "DT_FLOAT");
  g.node("while/Merge_2", "Merge", {"while/Enter_2", "while/NextIteration_2"},
         {G::type("T", "DT_FLOAT"), G::integer("N", 2)});
  g.node("while/Switch_2", "Switch", {"while/Merge_2", "while/LoopCond"}, {G::type("T", "DT_FLOAT")});
  g.node("while/Identity_2", "Identity", {"while/Switch_2:1"}, {G::type("T", "DT_FLOAT")});
  counted_loop(g, "while", "h0", "n", "DT_FLOAT", [&ctx](G& b) {
    b.enter("while/ta_in", "ta_in", ctx, true, "DT_RESOURCE");
    b.enter("while/ta_in_flow", "ta_in/scatter", ctx, true, "DT_FLOAT");
    b.enter("while/ta_out", "ta_out", ctx, true, "DT_RESOURCE");
    b.enter("while/half", "half", ctx, true, "DT_FLOAT");
    b.node("while/read", "TensorArrayReadV3", {"while/ta_in", "while/Identity", "while/ta_in_flow"},
           {G::type("dtype", "DT_FLOAT")});
    b.node("while/decay", "Mul", {"while/Identity_1", "while/half"}, {G::type("T", "DT_FLOAT")});
    b.node("while/sum", "Add", {"while/decay", "while/read"}, {G::type("T", "DT_FLOAT")});
    b.node("while/next", "Tanh", {"while/sum"}, {G::type("T", "DT_FLOAT")});
    b.node("while/write", "TensorArrayWriteV3", {"while/ta_out", "while/Identity", "while/next", "while/Identity_2"},
           {G::type("T", "DT_FLOAT")});
  });
  g.node("while/NextIteration_2", "NextIteration", {"while/write"}, {G::type("T", "DT_FLOAT")});
  g.node("while/Exit_2", "Exit", {"while/Switch_2"}, {G::type("T", "DT_FLOAT")});
  g.node("stack/size", "TensorArraySizeV3", {"ta_out", "while/Exit_2"});
  g.constant("stack/start", "DT_INT32", {}, {0}).constant("stack/delta", "DT_INT32", {}, {1});
  g.node("stack/range", "Range", {"stack/start", "stack/size", "stack/delta"}, {G::type("Tidx", "DT_INT32")});
  if (concat) {
    g.node("y", "TensorArrayConcatV3", {"ta_out", "while/Exit_2"},
           {G::type("dtype", "DT_FLOAT"), G::shape("element_shape_except0", {})});
  } else {
    g.node("y", "TensorArrayGatherV3", {"ta_out", "stack/range", "while/Exit_2"},
           {G::type("dtype", "DT_FLOAT"), G::shape("element_shape", {2})});
  }
  return g;
}

std::map<std::string, HostTensor> array_loop_inputs(int32_t n) {
  return {{"x", random_f32({6, 2}, 11, -1.5f, 1.5f)}, {"n", make_i32({}, {n})}};
}

TEST(RuntimeLoop, TensorArraysOfAnInputDependentLoopMatchTfjs) {
  FLOE_REQUIRE_TFJS_ORACLE();
  const G g = array_loop(6, false);
  const conv::ConvertResult r = convert_bounded(g, "array_loop", 6);
  EXPECT_NE(r.summary.find("loop 'while': run-time WHILE, bound 6 (--max-loop-iterations), 2 TensorArray(s) as "
                           "dense buffers"),
            std::string::npos)
      << r.summary;
  // TF.js stacks what was written: the full array when the loop writes all 6 rows.
  const std::vector<HostTensor> want = run_tfjs_oracle(OracleGraph{g, array_loop_inputs(6), {"y"}});
  ASSERT_EQ(want.size(), 1u);
  ASSERT_EQ(want[0].shape, (std::vector<int64_t>{6, 2}));
  const std::vector<float> oracle = as_floats(want[0]);
  for (int32_t n : {6, 4, 1, 0}) {
    const std::vector<HostTensor> got = run_model(r.model, array_loop_inputs(n));
    ASSERT_EQ(got.size(), 1u) << n;
    ASSERT_EQ(got[0].shape, (std::vector<int64_t>{6, 2})) << n;
    const std::vector<float> values = as_floats(got[0]);
    // Rows the loop wrote match the oracle; rows never written are zeros, as TF
    // stacks them when the element shape is known.
    for (size_t i = 0; i < values.size(); ++i) {
      const float expected = static_cast<int32_t>(i / 2) < n ? oracle[i] : 0.0f;
      EXPECT_NEAR(values[i], expected, 1e-6f) << "n " << n << " element " << i;
    }
  }
}

// The same loop with no bound: its TensorArrays become buffers sized by the
// trip count, so a bound is needed there, and the refusal says why.
TEST(RuntimeLoop, AnInputDependentLoopWritingTensorArraysNeedsABoundAndSaysWhy) {
  try {
    convert_graph(array_loop(6, false), "array_loop_unbounded", {"y"});
    ADD_FAILURE() << "expected a refusal";
  } catch (const conv::ConvertError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("while loop 'while' runs at run time (its condition depends on a graph input), has no "
                     "maximum_iterations and writes TensorArrays, whose buffers grow with its trip count: pass "
                     "--max-loop-iterations N to size them"),
              std::string::npos)
        << m;
    EXPECT_TRUE(e.needs_loop_bound());
  }
}

// Concatenated instead of stacked: the buffer's rows end to end, [12].
TEST(RuntimeLoop, TensorArrayConcatenatedAfterAnInputDependentLoopMatchesTfjs) {
  FLOE_REQUIRE_TFJS_ORACLE();
  const G g = array_loop(6, false, true);
  const conv::ConvertResult r = convert_bounded(g, "array_concat", 6);
  const std::vector<HostTensor> want = run_tfjs_oracle(OracleGraph{g, array_loop_inputs(6), {"y"}});
  const std::vector<HostTensor> got = run_model(r.model, array_loop_inputs(6));
  ASSERT_EQ(want.size(), 1u);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].shape, (std::vector<int64_t>{12}));
  EXPECT_EQ(got[0].shape, want[0].shape);
  const std::vector<float> values = as_floats(got[0]), oracle = as_floats(want[0]);
  ASSERT_EQ(values.size(), oracle.size());
  for (size_t i = 0; i < values.size(); ++i) EXPECT_NEAR(values[i], oracle[i], 1e-6f) << i;
}

TEST(RuntimeLoop, TensorArrayWritePastItsSizeFailsInvokeInsideTheArena) {
  // 4 rows, but the loop may run 6 times: the fifth write is past the buffer.
  const conv::ConvertResult r = convert_bounded(array_loop(4, false), "array_overflow", 6);
  const std::unique_ptr<LoadedModel> loaded = load_model(r.model);
  ASSERT_EQ(loaded->status, Status::kOk) << loaded->model.error().message;
  const Model& model = loaded->model;
  GuardedArena arena(model.arena_size());
  Interpreter interpreter(model, arena.base, arena.size);
  ASSERT_EQ(interpreter.Init(), Status::kOk) << interpreter.error().message;
  const HostTensor x = random_f32({6, 2}, 11, -1.5f, 1.5f);
  std::memcpy(interpreter.input(interpreter.input_index("x")).data, x.data.data(), x.data.size());
  for (int32_t n : {4, 5, 6, 2}) {
    *interpreter.input(interpreter.input_index("n")).as<int32_t>() = n;
    const Status status = interpreter.Invoke();
    if (n <= 4) {
      EXPECT_EQ(status, Status::kOk) << n << ": " << interpreter.error().message;
    } else {  // the fifth row's write: index 4 of 4 rows
      EXPECT_EQ(status, Status::kIndexOutOfRange) << n;
      EXPECT_EQ(interpreter.index_fault().value, 4) << n;
      EXPECT_EQ(interpreter.index_fault().bound, 4) << n;
    }
  }
  EXPECT_EQ(arena.first_written_outside(), -1) << "a byte outside the arena was written";
}

TEST(RuntimeLoop, StackOfADynamicSizeTensorArrayIsRefused) {
  try {
    convert_bounded(array_loop(0, true), "dynamic_array", 6);
    FAIL() << "a dynamic_size TensorArray stacked after a run-time loop converted";
  } catch (const conv::ConvertError& e) {
    EXPECT_EQ(e.category(), conv::ErrorCategory::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("node 'stack/size' (op TensorArraySizeV3): it reads the whole of a "
                                         "dynamic_size TensorArray, whose length depends on the trip count"),
              std::string::npos)
        << e.what();
  }
}

// h <- tanh(h W + b) n times: the body's MATMUL runs on XNNPACK for the host.
G matmul_loop() {
  G g;
  g.placeholder("x", "DT_FLOAT", {1, 4}).placeholder("n", "DT_INT32", {});
  std::vector<double> w(16), b(4);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.25 * std::sin(1.0 + static_cast<double>(i));
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.1 * static_cast<double>(i) - 0.15;
  g.constant("w", "DT_FLOAT", {4, 4}, w).constant("b", "DT_FLOAT", {4}, b);
  const std::string exit = counted_loop(g, "while", "x", "n", "DT_FLOAT", [](G& body) {
    body.enter("while/w", "w", "while/while_context", true, "DT_FLOAT");
    body.enter("while/b", "b", "while/while_context", true, "DT_FLOAT");
    body.node("while/MatMul", "MatMul", {"while/Identity_1", "while/w"}, {G::type("T", "DT_FLOAT")});
    body.node("while/BiasAdd", "BiasAdd", {"while/MatMul", "while/b"}, {G::type("T", "DT_FLOAT")});
    body.node("while/next", "Tanh", {"while/BiasAdd"}, {G::type("T", "DT_FLOAT")});
  });
  g.node("y", "Identity", {exit}, {G::type("T", "DT_FLOAT")});
  return g;
}

TEST(RuntimeLoop, BodyOnXnnpackMatchesTheReferenceKernels) {
  const G g = matmul_loop();
  const conv::ConvertResult host = convert_bounded(g, "xnnpack_body", 50, "host");
  const conv::ConvertResult reference = convert_bounded(g, "reference_body", 50, "reference");
  const std::unique_ptr<LoadedModel> loaded = load_model(host.model);
  ASSERT_EQ(loaded->status, Status::kOk);
  const Model& model = loaded->model;
  int xnnpack_in_body = 0;
  for (const schema::Operator* op : *model.schema()->operators()) {
    xnnpack_in_body += op->backend() == schema::Backend::XNNPACK;
  }
  EXPECT_GT(xnnpack_in_body, 0) << host.summary;
  const std::vector<float> x = {0.5f, -1.0f, 0.25f, 2.0f};
  for (int32_t n : {0, 1, 7, 50}) {
    std::map<std::string, HostTensor> in = {{"x", make_f32({1, 4}, x)}, {"n", make_i32({}, {n})}};
    const std::vector<HostTensor> a = run_model(host.model, in), b = run_model(reference.model, in);
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(b.size(), 1u);
    const std::vector<float> fa = as_floats(a[0]), fb = as_floats(b[0]);
    for (size_t i = 0; i < fb.size(); ++i) EXPECT_NEAR(fa[i], fb[i], 1e-5f + 1e-4f * std::fabs(fb[i])) << n;
    if (n == 0) EXPECT_EQ(fb, x);
  }
}

// Rewrites one converted model (object API) and loads it; the refusal's text.
std::string load_edited(const std::vector<uint8_t>& bytes, const std::function<void(conv::schema::ModelT&)>& edit) {
  std::unique_ptr<conv::schema::ModelT> model(conv::schema::GetModel(bytes.data())->UnPack());
  edit(*model);
  flatbuffers::FlatBufferBuilder fbb;
  conv::schema::FinishModelBuffer(fbb, conv::schema::Model::Pack(fbb, model.get()));
  const std::unique_ptr<LoadedModel> l =
      load_model(std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()));
  return l->status == Status::kOk ? "" : l->model.error().message;
}

TEST(RuntimeLoop, LoadRefusesLoopRangesOutsideThePlanAndLifetimesEndingInsideTheLoop) {
  const conv::ConvertResult r = convert_bounded(placeholder_limit_loop(), "tampered", 5);
  EXPECT_EQ(load_edited(r.model, [](conv::schema::ModelT&) {}), "");
  auto while_options = [](conv::schema::ModelT& m) {
    for (auto& op : m.operators) {
      if (op->opcode == conv::schema::OpCode::WHILE) return op->options.AsWhileOptions();
    }
    return static_cast<conv::schema::WhileOptionsT*>(nullptr);
  };
  const std::string outside = "while's op ranges are outside the plan or out of order";
  EXPECT_EQ(load_edited(r.model, [&](conv::schema::ModelT& m) {
              while_options(m)->body_end = static_cast<int32_t>(m.operators.size()) + 1;
            }),
            outside);
  EXPECT_EQ(load_edited(r.model, [&](conv::schema::ModelT& m) { while_options(m)->cond_end = 0; }), outside);
  EXPECT_EQ(load_edited(r.model, [&](conv::schema::ModelT& m) {
              while_options(m)->cond_end = while_options(m)->body_end + 1;
            }),
            outside);
  // The limit 'n' is read by the condition only: its bytes must stay until
  // the loop's last op, or the body could overwrite them before the next test.
  EXPECT_EQ(load_edited(r.model, [&](conv::schema::ModelT& m) {
              int32_t n = -1;
              for (size_t t = 0; t < m.tensors.size(); ++t) {
                if (m.tensors[t]->name == "n:0" || m.tensors[t]->name == "n") n = static_cast<int32_t>(t);
              }
              int32_t last_use = 0;
              for (size_t i = 0; i < m.operators.size(); ++i) {
                for (int32_t in : m.operators[i]->inputs) {
                  if (in == n) last_use = static_cast<int32_t>(i);
                }
              }
              m.tensors[static_cast<size_t>(n)]->live_last_op = last_use;
            }),
            "a tensor a loop reads across iterations dies inside the loop");
}

TEST(RuntimeLoop, MaximumIterationsCounterGivesTheBound) {
  // TF1's while_loop(..., maximum_iterations=m): a counter from 0 by 1 and
  // Less(counter, m) ANDed into the condition.
  G g;
  g.placeholder("x", "DT_FLOAT", {2}).placeholder("n", "DT_INT32", {}).constant("m", "DT_INT32", {}, {6});
  g.constant("two", "DT_FLOAT", {}, {2});
  const std::string f = "while/while_context";
  g.constant("while/zero", "DT_INT32", {}, {0}).constant("while/zero_x", "DT_INT32", {}, {0});
  g.constant("while/one", "DT_INT32", {}, {1});
  g.enter("while/Enter", "while/zero", f, false, "DT_INT32");
  g.enter("while/Enter_1", "while/zero_x", f, false, "DT_INT32");
  g.enter("while/Enter_2", "x", f, false, "DT_FLOAT");
  g.enter("while/max", "m", f, true, "DT_INT32").enter("while/n", "n", f, true, "DT_INT32");
  g.enter("while/step", "while/one", f, true, "DT_INT32").enter("while/two", "two", f, true, "DT_FLOAT");
  for (const char* k : {"", "_1"}) {
    g.node(std::string("while/Merge") + k, "Merge",
           {std::string("while/Enter") + k, std::string("while/NextIteration") + k},
           {G::type("T", "DT_INT32"), G::integer("N", 2)});
  }
  g.node("while/Merge_2", "Merge", {"while/Enter_2", "while/NextIteration_2"},
         {G::type("T", "DT_FLOAT"), G::integer("N", 2)});
  g.node("while/Less", "Less", {"while/Merge", "while/max"}, {G::type("T", "DT_INT32")});
  g.node("while/Less_1", "Less", {"while/Merge_1", "while/n"}, {G::type("T", "DT_INT32")});
  g.node("while/LogicalAnd", "LogicalAnd", {"while/Less", "while/Less_1"});
  g.node("while/LoopCond", "LoopCond", {"while/LogicalAnd"});
  const char* types[] = {"DT_INT32", "DT_INT32", "DT_FLOAT"};
  for (int k = 0; k < 3; ++k) {
    const std::string s = k == 0 ? "" : "_" + std::to_string(k);
    g.node("while/Switch" + s, "Switch", {"while/Merge" + s, "while/LoopCond"}, {G::type("T", types[k])});
    g.node("while/Identity" + s, "Identity", {"while/Switch" + s + ":1"}, {G::type("T", types[k])});
  }
  g.node("while/add", "Add", {"while/Identity", "while/step"}, {G::type("T", "DT_INT32")});
  g.node("while/add_1", "Add", {"while/Identity_1", "while/step"}, {G::type("T", "DT_INT32")});
  g.node("while/mul", "Mul", {"while/Identity_2", "while/two"}, {G::type("T", "DT_FLOAT")});
  g.node("while/NextIteration", "NextIteration", {"while/add"}, {G::type("T", "DT_INT32")});
  g.node("while/NextIteration_1", "NextIteration", {"while/add_1"}, {G::type("T", "DT_INT32")});
  g.node("while/NextIteration_2", "NextIteration", {"while/mul"}, {G::type("T", "DT_FLOAT")});
  g.node("while/Exit_2", "Exit", {"while/Switch_2"}, {G::type("T", "DT_FLOAT")});
  g.node("y", "Identity", {"while/Exit_2"}, {G::type("T", "DT_FLOAT")});
  const conv::ConvertResult r = convert_graph(g, "maximum_iterations", {"y"});
  EXPECT_NE(r.summary.find("loop 'while': run-time WHILE, bound 6 (maximum_iterations)"), std::string::npos)
      << r.summary;
  EXPECT_EQ(as_floats(run_loop_model(r.model, {1.0f, 3.0f}, 2).at(0)), (std::vector<float>{4.0f, 12.0f}));
  // The graph's own counter stops at 6 before the bound is reached.
  EXPECT_EQ(as_floats(run_loop_model(r.model, {1.0f, 3.0f}, 100).at(0)), (std::vector<float>{64.0f, 192.0f}));
}

// ---- unroll or loop: the choice for a loop with a conversion-time trip count ----

// y = x + n (one Add per iteration; the counter and condition fold away).
G adding_loop(int32_t n) {
  G g;
  g.placeholder("x", "DT_FLOAT", {2}).constant("n", "DT_INT32", {}, {static_cast<double>(n)}).constant("one_f", "DT_FLOAT", {}, {1});
  const std::string exit = counted_loop(g, "while", "x", "n", "DT_FLOAT", [](G& b) {
    b.enter("while/one_f", "one_f", "while/while_context", true, "DT_FLOAT");
    b.node("while/next", "Add", {"while/Identity_1", "while/one_f"}, {G::type("T", "DT_FLOAT")});
  });
  g.node("y", "Identity", {exit}, {G::type("T", "DT_FLOAT")});
  return g;
}

TEST(LoopChoice, ShortLoopStaysUnrolled) {
  const conv::ConvertResult r = convert_graph(adding_loop(5), "short_loop", {"y"});
  EXPECT_EQ(run1(r, {1.5f, -3.0f}), (std::vector<float>{6.5f, 2.0f}));
  // 5 Adds unrolled; a WHILE would hold Less, the counter's Add and the body's Add.
  EXPECT_NE(r.summary.find("loop 'while': unrolled 5x (5 ops, a run-time WHILE 4)"), std::string::npos) << r.summary;
  EXPECT_EQ(r.summary.find("WHILE x"), std::string::npos) << r.summary;
  // Forced to run at run time: one WHILE, same values.
  const conv::ConvertResult forced = convert_graph(adding_loop(5), "short_runtime", {"y"}, {}, conv::LoopMode::kRuntime);
  EXPECT_NE(forced.summary.find("loop 'while': run-time WHILE, 5 iterations (--loops=runtime)"), std::string::npos)
      << forced.summary;
  EXPECT_EQ(run1(forced, {1.5f, -3.0f}), (std::vector<float>{6.5f, 2.0f}));
}

TEST(LoopChoice, LongLoopRunsAsAWhileOp) {
  const conv::ConvertResult r = convert_graph(adding_loop(1000), "long_loop", {"y"});
  EXPECT_NE(r.summary.find("loop 'while': run-time WHILE, 1000 iterations (unrolled would be "), std::string::npos)
      << r.summary;
  EXPECT_NE(r.summary.find("WHILE x1"), std::string::npos) << r.summary;
  EXPECT_EQ(run1(r, {1.5f, -3.0f}), (std::vector<float>{1001.5f, 997.0f}));
  // --loops=unroll keeps the old behaviour: 1000 Adds, same values, a larger model.
  const conv::ConvertResult unrolled = convert_graph(adding_loop(1000), "long_unrolled", {"y"}, {}, conv::LoopMode::kUnroll);
  EXPECT_NE(unrolled.summary.find("loop 'while': unrolled 1000x (--loops=unroll)"), std::string::npos)
      << unrolled.summary;
  EXPECT_EQ(run1(unrolled, {1.5f, -3.0f}), (std::vector<float>{1001.5f, 997.0f}));
  EXPECT_GT(unrolled.model.size(), 10 * r.model.size());
}

// y = (x + 300) + 200: two loops one after the other, each a WHILE; rewriting
// the first must leave the second's Exits alone.
TEST(LoopChoice, TwoLongLoopsInSequenceAreTwoWhileOps) {
  G g;
  g.placeholder("x", "DT_FLOAT", {2}).constant("na", "DT_INT32", {}, {300}).constant("nb", "DT_INT32", {}, {200});
  g.constant("one_f", "DT_FLOAT", {}, {1});
  const std::string a = counted_loop(g, "a", "x", "na", "DT_FLOAT", [](G& b) {
    b.enter("a/one_f", "one_f", "a/while_context", true, "DT_FLOAT");
    b.node("a/next", "Add", {"a/Identity_1", "a/one_f"}, {G::type("T", "DT_FLOAT")});
  });
  const std::string b = counted_loop(g, "b", a, "nb", "DT_FLOAT", [](G& c) {
    c.enter("b/one_f", "one_f", "b/while_context", true, "DT_FLOAT");
    c.node("b/next", "Add", {"b/Identity_1", "b/one_f"}, {G::type("T", "DT_FLOAT")});
  });
  g.node("y", "Identity", {b}, {G::type("T", "DT_FLOAT")});
  const conv::ConvertResult r = convert_graph(g, "two_loops", {"y"});
  EXPECT_NE(r.summary.find("loop 'a': run-time WHILE, 300 iterations"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("loop 'b': run-time WHILE, 200 iterations"), std::string::npos) << r.summary;
  EXPECT_EQ(run1(r, {0.5f, -1.0f}), (std::vector<float>{500.5f, 499.0f}));
}

// acc = x; for i in 0..99: acc += sum(range(i)): range(i) needs i at
// conversion (its length), so the WHILE the cost rule picks fails to lower and
// the loop is unrolled instead (every range folds): y = x + C(100, 3).
TEST(LoopChoice, LoopWhoseWhileCannotLowerFallsBackToUnrolling) {
  G g;
  g.placeholder("x", "DT_FLOAT", {1}).constant("n", "DT_INT32", {}, {100});
  const std::string exit = counted_loop(g, "while", "x", "n", "DT_FLOAT", [](G& b) {
    b.enter("while/zero_i", "while/zero", "while/while_context", true, "DT_INT32");
    b.node("while/range", "Range", {"while/zero_i", "while/Identity", "while/step"}, {G::type("Tidx", "DT_INT32")});
    b.node("while/sum", "Sum", {"while/range", "while/zero_i"},
           {G::type("T", "DT_INT32"), G::type("Tidx", "DT_INT32"), G::boolean("keep_dims", false)});
    b.node("while/cast", "Cast", {"while/sum"}, {G::type("SrcT", "DT_INT32"), G::type("DstT", "DT_FLOAT")});
    b.node("while/next", "Add", {"while/Identity_1", "while/cast"}, {G::type("T", "DT_FLOAT")});
  });
  g.node("y", "Identity", {exit}, {G::type("T", "DT_FLOAT")});
  const conv::ConvertResult r = convert_graph(g, "fallback", {"y"});
  EXPECT_NE(r.summary.find("loop 'while': unrolled 100x (its run-time WHILE failed: "), std::string::npos) << r.summary;
  EXPECT_EQ(run1(r, {0.5f}), (std::vector<float>{161700.5f}));
  // Forced to run at run time, the conversion fails naming the op.
  try {
    convert_graph(g, "fallback_runtime", {"y"}, {}, conv::LoopMode::kRuntime);
    ADD_FAILURE() << "expected an error";
  } catch (const conv::ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'while/range' (op Range)"), std::string::npos) << e.what();
  }
}

TEST(LoopChoice, LoopAtTheUnrollCapConvertsFast) {
  const auto start = std::chrono::steady_clock::now();
  const conv::ConvertResult r = convert_graph(adding_loop(10000), "cap_loop", {"y"});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(r.summary.find("loop 'while': run-time WHILE, 10000 iterations"), std::string::npos) << r.summary;
  EXPECT_EQ(run1(r, {0.5f, -1.0f}), (std::vector<float>{10000.5f, 9999.0f}));
  EXPECT_LT(seconds, 5.0);
}

// acc = x; for i in 0..n-1: acc = acc * 1 + i: a loop variable that grows
// (Concat) cannot be a WHILE variable, so the loop is unrolled, saying why.
TEST(LoopChoice, LoopWhoseVariableChangesShapeIsUnrolled) {
  G g;
  g.placeholder("x", "DT_FLOAT", {1}).constant("n", "DT_INT32", {}, {80}).constant("axis", "DT_INT32", {}, {0});
  const std::string exit = counted_loop(g, "while", "x", "n", "DT_FLOAT", [](G& b) {
    b.enter("while/x", "x", "while/while_context", true, "DT_FLOAT");
    b.enter("while/axis", "axis", "while/while_context", true, "DT_INT32");
    b.node("while/twice", "Add", {"while/x", "while/x"}, {G::type("T", "DT_FLOAT")});
    b.node("while/next", "ConcatV2", {"while/Identity_1", "while/twice", "while/axis"},
           {G::type("T", "DT_FLOAT"), G::integer("N", 2), G::type("Tidx", "DT_INT32")});
  });
  g.node("y", "Identity", {exit}, {G::type("T", "DT_FLOAT")});
  const conv::ConvertResult r = convert_graph(g, "growing", {"y"});
  EXPECT_NE(r.summary.find("loop 'while': unrolled 80x (its variable 'while/Merge_1' changes shape between "
                           "iterations)"),
            std::string::npos)
      << r.summary;
  const std::vector<float> out = run1(r, {3.0f});
  ASSERT_EQ(out.size(), 81u);
  EXPECT_EQ(out.back(), 6.0f);
  EXPECT_NE(runtime_refusal(g, "growing_runtime", {"y"}).find("changes shape between iterations"), std::string::npos);
}

TEST(ControlFlow, EndlessLoopIsRefused) {
  G g;
  g.placeholder("x", "DT_FLOAT", {2}).constant("n", "DT_INT32", {}, {1}).constant("zero_step", "DT_INT32", {}, {0});
  // The counter never moves: i stays 0 < 1.
  const std::string frame = "while/while_context";
  g.constant("while/zero", "DT_INT32", {}, {0});
  g.enter("while/Enter", "while/zero", frame, false, "DT_INT32");
  g.enter("while/limit", "n", frame, true, "DT_INT32");
  g.node("while/Merge", "Merge", {"while/Enter", "while/NextIteration"}, {G::type("T", "DT_INT32"), G::integer("N", 2)});
  g.node("while/Less", "Less", {"while/Merge", "while/limit"}, {G::type("T", "DT_INT32")});
  g.node("while/LoopCond", "LoopCond", {"while/Less"});
  g.node("while/Switch", "Switch", {"while/Merge", "while/LoopCond"}, {G::type("T", "DT_INT32")});
  g.node("while/Identity", "Identity", {"while/Switch:1"}, {G::type("T", "DT_INT32")});
  g.node("while/NextIteration", "NextIteration", {"while/Identity"}, {G::type("T", "DT_INT32")});
  g.node("while/Exit", "Exit", {"while/Switch"}, {G::type("T", "DT_INT32")});
  try {
    convert_graph(g, "endless", {"while/Exit"});
    ADD_FAILURE() << "expected a refusal";
  } catch (const conv::ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("it is still running after 10000 iterations"), std::string::npos) << e.what();
  }
}

// A loop whose nodes lack the inputs the unrolling reads by position (an Enter
// without its input, an Exit reading something other than a Switch) is
// refused with the node, never read past its inputs.
TEST(ControlFlow, MalformedLoopNodesAreRefusedNamingTheNode) {
  const auto refusal = [](bool enter_without_input) {
    G g;
    g.placeholder("x", "DT_FLOAT", {2});
    const std::string frame = "while/while_context";
    g.constant("while/zero", "DT_INT32", {}, {0}).constant("n", "DT_INT32", {}, {3}).constant("one", "DT_INT32", {}, {1});
    if (enter_without_input) {
      g.node("while/Enter", "Enter", {},
             {G::type("T", "DT_INT32"), G::str("frame_name", frame), G::boolean("is_constant", false)});
    } else {
      g.enter("while/Enter", "while/zero", frame, false, "DT_INT32");
    }
    g.enter("while/limit", "n", frame, true, "DT_INT32").enter("while/step", "one", frame, true, "DT_INT32");
    g.node("while/Merge", "Merge", {"while/Enter", "while/NextIteration"}, {G::type("T", "DT_INT32"), G::integer("N", 2)});
    g.node("while/Less", "Less", {"while/Merge", "while/limit"}, {G::type("T", "DT_INT32")});
    g.node("while/LoopCond", "LoopCond", {"while/Less"});
    g.node("while/Switch", "Switch", {"while/Merge", "while/LoopCond"}, {G::type("T", "DT_INT32")});
    g.node("while/Identity", "Identity", {"while/Switch:1"}, {G::type("T", "DT_INT32")});
    g.node("while/add", "Add", {"while/Identity", "while/step"}, {G::type("T", "DT_INT32")});
    g.node("while/NextIteration", "NextIteration", {"while/add"}, {G::type("T", "DT_INT32")});
    // The Exit of the well-formed variant reads the Switch's predicate input's source instead.
    g.node("while/Exit", "Exit", {enter_without_input ? "while/Switch" : "while/Less"}, {G::type("T", "DT_BOOL")});
    try {
      convert_graph(g, enter_without_input ? "enter_without_input" : "exit_without_switch", {"while/Exit"});
    } catch (const conv::ConvertError& e) {
      return std::string(e.what());
    }
    return std::string("converted");
  };
  const std::string no_input = refusal(true);
  EXPECT_NE(no_input.find("while/Enter"), std::string::npos) << no_input;
  EXPECT_NE(no_input.find("has 0 data input(s) where Enter needs 1"), std::string::npos) << no_input;
  const std::string no_switch = refusal(false);
  EXPECT_NE(no_switch.find("while/Exit"), std::string::npos) << no_switch;
  EXPECT_NE(no_switch.find("does not read a loop variable's Switch"), std::string::npos) << no_switch;
}

TEST(ControlFlow, TensorArrayReadBeforeWriteIsRefused) {
  G g;
  g.placeholder("x", "DT_FLOAT", {2}).constant("n", "DT_INT32", {}, {2}).constant("i1", "DT_INT32", {}, {1});
  g.constant("i0", "DT_INT32", {}, {0});
  g.node("ta", "TensorArrayV3", {"n"}, {G::type("dtype", "DT_FLOAT")});
  g.node("write", "TensorArrayWriteV3", {"ta", "i0", "x", "ta:1"}, {G::type("T", "DT_FLOAT")});
  g.node("read", "TensorArrayReadV3", {"ta", "i1", "write"}, {G::type("dtype", "DT_FLOAT")});
  try {
    convert_graph(g, "read_unwritten", {"read"});
    ADD_FAILURE() << "expected a refusal";
  } catch (const conv::ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'read' (op TensorArrayReadV3): floe refuses to resolve this TensorArray "
                                         "op statically: reads index 1 of a TensorArray before it was written"),
              std::string::npos)
        << e.what();
  }
}

// ---- the corpus' control-flow families ----------------------------------

struct CorpusCase {
  std::string name;
  std::vector<std::string> outputs;
};

std::vector<CorpusCase> control_flow_cases() {
  std::vector<CorpusCase> out;
  std::ifstream tsv(corpus_path("dl4j_tf_graphs/CASES.tsv"));
  const std::regex family("^(rnn/.*|tensor_array/.*|primitive_gru_dynamic|simple_while|simplewhile_[01]|while[12]/.*)$");
  std::string line;
  std::getline(tsv, line);  // header
  while (std::getline(tsv, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, '\t');) cols.push_back(c);
    if (cols.size() < 5 || !std::regex_match(cols[0], family)) continue;
    if (!path_exists(corpus_path("dl4j_tf_graphs/examples/" + cols[0] + "/frozen_model.pb"))) continue;
    CorpusCase c;
    c.name = cols[0];
    std::stringstream outs(cols[4]);
    for (std::string o; outs >> o;) c.outputs.push_back(o.substr(0, o.find(':')));  // "node" or "node.k"
    out.push_back(c);
  }
  return out;
}

std::vector<double> values_of(const HostTensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    switch (t.dtype) {
      case DType::kFloat32: v.push_back(t.as<float>()[i]); break;
      case DType::kInt32: v.push_back(t.as<int32_t>()[i]); break;
      case DType::kInt64: v.push_back(static_cast<double>(t.as<int64_t>()[i])); break;
      case DType::kBool: v.push_back(t.as<uint8_t>()[i]); break;
      default: v.push_back(NAN);
    }
  }
  return v;
}

// Converts `dir`'s graph feeding its placeholders (CSV values) and its in_<k>
// Consts (their own values), keeping an in_<k> constant when the converter says
// it must be known at conversion time (a loop bound); runs it; compares with
// TensorFlow's values. Returns "" or what went wrong.
std::string check_case(const CorpusCase& c, const std::map<std::string, std::string>& frozen = {},
                       uint32_t max_loop_iterations = 0) {
  const std::string dir = corpus_path("dl4j_tf_graphs/examples/" + c.name);
  std::map<std::string, HostTensor> feeds;
  conv::ConvertOptions options;
  options.graph_path = dir + "/frozen_model.pb";
  for (const std::string& o : c.outputs) {  // "node.k" (CASES.tsv) is TF's "node:k"
    const size_t dot = o.rfind('.');
    const bool port = dot != std::string::npos && dot + 1 < o.size() &&
                      o.find_first_not_of("0123456789", dot + 1) == std::string::npos;
    options.outputs.push_back(port ? o.substr(0, dot) + ":" + o.substr(dot + 1) : o);
  }
  options.frozen_inputs = frozen;
  options.max_loop_iterations = max_loop_iterations;
  DIR* d = opendir(dir.c_str());
  for (dirent* e; d != nullptr && (e = readdir(d)) != nullptr;) {
    const std::string f = e->d_name;
    const std::string suffix = ".placeholder.csv";
    if (f.size() <= suffix.size() || f.compare(f.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const std::string name = f.substr(0, f.size() - suffix.size());
    if (frozen.count(name)) continue;
    feeds[name] = read_csv_tensor(dir + "/" + f, dir + "/" + name + ".placeholder.shape");
    options.input_shapes[name] = feeds[name].shape;
  }
  if (d != nullptr) closedir(d);
  std::set<std::string> in_consts;
  for (int k = 0; k < 8; ++k) {
    if (path_exists(dir + "/frozen_graph.pbtxt")) {
      std::ifstream pb(dir + "/frozen_graph.pbtxt");
      const std::string text((std::istreambuf_iterator<char>(pb)), std::istreambuf_iterator<char>());
      if (text.find("name: \"in_" + std::to_string(k) + "\"") != std::string::npos) in_consts.insert("in_" + std::to_string(k));
    }
  }
  conv::ConvertResult result;
  for (int attempt = 0;; ++attempt) {
    options.inputs.clear();
    for (const auto& [name, t] : feeds) options.inputs.push_back(name);
    for (const std::string& name : in_consts) options.inputs.push_back(name);
    try {
      result = conv::convert(options);
      break;
    } catch (const conv::ConvertError& e) {
      const std::string m = e.what();
      // A loop whose trip count depends on a fed input runs in the runtime,
      // bounded as a user bounds it (--max-loop-iterations).
      if (e.needs_loop_bound() && options.max_loop_iterations == 0 && max_loop_iterations == 0) {
        options.max_loop_iterations = 1000;
        continue;
      }
      std::smatch match;
      if (attempt < 8 && std::regex_search(m, match, std::regex("'(in_[0-9]+)',? which must be known at conversion")) &&
          in_consts.erase(match[1].str())) {
        continue;
      }
      return "conversion: " + m;
    }
  }
  // in_<k> values come from the graph's own Consts: read them back from a model
  // that outputs them (all constant, so nothing runs).
  std::map<std::string, HostTensor> inputs = feeds;
  if (!in_consts.empty()) {
    conv::ConvertOptions consts;
    consts.graph_path = options.graph_path;
    consts.outputs.assign(in_consts.begin(), in_consts.end());
    const std::vector<HostTensor> values = run_model(conv::convert(consts).model, {});
    size_t i = 0;
    for (const std::string& name : in_consts) inputs[name] = values.at(i++);
  }
  const std::vector<HostTensor> out = run_model(result.model, inputs);
  if (out.size() != c.outputs.size()) return "run failed";
  for (size_t i = 0; i < out.size(); ++i) {
    const std::string stem = dir + "/" + c.outputs[i] + ".prediction";
    const HostTensor expected = read_csv_tensor(stem + ".csv", stem + ".shape");
    const std::vector<double> a = values_of(out[i]), e = values_of(expected);
    if (a.size() != e.size()) return c.outputs[i] + ": " + std::to_string(a.size()) + " values, TF has " + std::to_string(e.size());
    for (size_t k = 0; k < a.size(); ++k) {
      if (!(std::fabs(a[k] - e[k]) <= 1e-4 + 1e-4 * std::fabs(e[k]))) {
        return c.outputs[i] + "[" + std::to_string(k) + "] = " + std::to_string(a[k]) + ", TF: " + std::to_string(e[k]);
      }
    }
  }
  return "";
}

TEST(ControlFlowCorpus, EveryLoopAndTensorArrayCaseMatchesTensorFlow) {
  FLOE_REQUIRE_CORPUS("dl4j_tf_graphs/CASES.tsv");
  std::map<std::string, std::pair<int, int>> families;  // passed, total
  for (const CorpusCase& c : control_flow_cases()) {
    const std::string family = c.name.substr(0, c.name.find('/'));
    ++families[family].second;
    std::string problem = check_case(c);
    if (family == "simplewhile_0" || family == "simplewhile_1" || family == "while1" || family == "while2") {
      // Their trip count depends on fed inputs: run in the runtime (above, with
      // the fed CSV values), and as exactly unrolled once the placeholders are
      // fixed at conversion time.
      EXPECT_EQ(problem, "") << c.name << " as a run-time loop";
      std::map<std::string, std::string> fixed;
      for (const char* name : {"input_0", "input_1"}) {
        const std::string stem = corpus_path("dl4j_tf_graphs/examples/" + c.name + "/" + name + ".placeholder");
        if (!path_exists(stem + ".csv")) continue;
        for (float v : as_floats(read_csv_tensor(stem + ".csv", stem + ".shape"))) {
          std::ostringstream text;
          text << v;
          fixed[name] += (fixed[name].empty() ? "" : ",") + text.str();
        }
      }
      if (!fixed.empty()) problem = check_case(c, fixed);
    }
    EXPECT_EQ(problem, "") << c.name;
    if (problem.empty()) ++families[family].first;
  }
  std::string table;
  int passed = 0, total = 0;
  for (const auto& [family, counts] : families) {
    table += "  " + family + ": " + std::to_string(counts.first) + "/" + std::to_string(counts.second) + "\n";
    passed += counts.first;
    total += counts.second;
  }
  std::cout << "control-flow corpus cases passed:\n" << table << "  total: " << passed << "/" << total << "\n";
  EXPECT_GE(total, 80);  // rnn 53, tensor_array 23, while*/simple* 7, primitive_gru_dynamic
}

}  // namespace
}  // namespace floe::testing
