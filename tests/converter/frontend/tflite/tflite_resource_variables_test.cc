// SPDX-License-Identifier: Apache-2.0
// Resource variables in .tflite files (VAR_HANDLE, READ_VARIABLE,
// ASSIGN_VARIABLE, CALL_ONCE), as TFLite's converter writes them for a
// tf.Variable that a tf.function updates under a tf.cond: the shape of TFLM's
// examples/recipes/resource_variables.tflite (its test's sequence of invokes
// and reset is the first test), then the forms around it against TensorFlow
// Lite 2.9 over streams of invocations (skipped visibly without node and the
// peers' node_modules), the ordering of reads and writes, and refusals.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "converter/ir/error.h"
#include "converter/pipeline/convert.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "schemas/floe_generated.h"
#include "tests/converter/support/tfjs_oracle.h"
#include "tests/converter/support/tflite_builder.h"
#include "tests/support/loaded_model.h"

namespace floe::testing {
namespace {

constexpr int32_t kAdd = 0, kSub = 41, kMul = 18, kIf = 118, kWhile = 119, kCallOnce = 129, kVarHandle = 142,
                  kReadVariable = 143, kAssignVariable = 144;
constexpr int32_t kLength = 100;
const char* const kName = "CompareAndAccumulate/Accumulator";

TflOp var_handle(int32_t out, const std::string& shared_name = kName, const std::string& container = "") {
  return {kVarHandle, {}, {out}, tfl::BuiltinOptions::VarHandleOptions, var_handle_options(container, shared_name)};
}

struct AccumulatorForm {
  std::vector<float> initial = std::vector<float>(kLength, 0.0f);  // what CALL_ONCE's init subgraph assigns
  bool handles_in_branches = false;  // each branch names the variable itself (else the IF passes the handle)
};

// Inputs (accumulate_add bool [1,1], accum_val float [1,100]); output the
// accumulator after the IF: += accum_val when accumulate_add, else -=.
std::string accumulator_model(const AccumulatorForm& form) {
  TfliteBuilder b;
  const int cond = b.tensor({{1, 1}, kTflBool, {}, "accumulate_add"});
  const int x = b.tensor({{1, kLength}, kTflFloat32, {}, "accum_val"});
  const int h = b.tensor({{}, kTflResource, {}, "handle"});
  const int out = b.tensor({{1, kLength}, kTflFloat32, {}, "Identity"});
  b.inputs = {cond, x};
  b.outputs = {out};
  b.op({kCallOnce, {}, {}, tfl::BuiltinOptions::CallOnceOptions, call_once_options(1)});
  b.op(var_handle(h));
  if (form.handles_in_branches) {
    b.op({kIf, {cond, x}, {}, tfl::BuiltinOptions::IfOptions, if_options(2, 3)});
  } else {
    b.op({kIf, {cond, h, x}, {}, tfl::BuiltinOptions::IfOptions, if_options(2, 3)});
  }
  b.op({kReadVariable, {h}, {out}});

  b.next_subgraph();  // 1: the session initializer
  const int ih = b.tensor({{}, kTflResource, {}, "init_handle"});
  const int initial = b.tensor({{1, kLength}, kTflFloat32, raw(form.initial), "initial"});
  b.op(var_handle(ih));
  b.op({kAssignVariable, {ih, initial}, {}});

  for (const int32_t code : {kAdd, kSub}) {  // 2: then, 3: else
    b.next_subgraph();
    // Inputs first, as TFLite's converter writes subgraphs (TFLite 2.9's IF
    // resizes tensor i, not input i, to its input i + 1's shape).
    const int bx_first = form.handles_in_branches ? b.tensor({{1, kLength}, kTflFloat32, {}, "branch_x"}) : -1;
    const int bh = b.tensor({{}, kTflResource, {}, "branch_handle"});
    const int bx = bx_first >= 0 ? bx_first : b.tensor({{1, kLength}, kTflFloat32, {}, "branch_x"});
    const int v = b.tensor({{1, kLength}, kTflFloat32, {}, "read"});
    const int s = b.tensor({{1, kLength}, kTflFloat32, {}, code == kAdd ? "sum" : "difference"});
    if (form.handles_in_branches) {
      b.inputs = {bx};
      b.op(var_handle(bh));
    } else {
      b.inputs = {bh, bx};
    }
    b.op({kReadVariable, {bh}, {v}});
    b.op({code, {v, bx}, {s}});
    b.op({kAssignVariable, {bh, s}, {}});
  }
  return b.build();
}

std::string write_temp(const std::string& bytes) {
  const std::string path = make_temp_dir() + "/m.tflite";
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

conv::ConvertResult convert_for(const std::string& bytes, const std::string& target,
                                uint32_t max_loop_iterations = 0) {
  conv::ConvertOptions options;
  options.graph_path = write_temp(bytes);
  options.target = target;
  options.max_loop_iterations = max_loop_iterations;
  return conv::convert(options);
}

// The accumulator's inputs for one Invoke(); with reset set,
// ResetVariableTensors() is called first.
struct Step {
  bool add = true;
  float value = 0;
  bool reset = false;
};

// A converted model loaded and initialized once, its state carried over Invoke()s.
class RunningModel {
 public:
  explicit RunningModel(const std::vector<uint8_t>& bytes) : loaded_(load_model(bytes)) {
    EXPECT_EQ(loaded_->status, Status::kOk) << loaded_->model.error().message;
    arena_ = tools::aligned_bytes(loaded_->model.arena_size());
    interpreter_ = std::make_unique<Interpreter>(loaded_->model, arena_.get(), loaded_->model.arena_size());
    EXPECT_EQ(interpreter_->Init(), Status::kOk) << interpreter_->error().message;
  }
  Interpreter& interpreter() { return *interpreter_; }
  // The accumulator model: every output's values after one Invoke() with
  // (add, accum_val filled with value).
  std::vector<std::vector<float>> accumulate(const Step& step) {
    if (step.reset) EXPECT_EQ(interpreter_->ResetVariableTensors(), Status::kOk);
    const TensorView cond = interpreter_->input(0);
    const TensorView x = interpreter_->input(1);
    EXPECT_EQ(cond.bytes, 1u);
    EXPECT_EQ(x.bytes, sizeof(float) * kLength);
    *cond.as<bool>() = step.add;
    for (int32_t i = 0; i < kLength; ++i) x.as<float>()[i] = step.value;
    EXPECT_EQ(interpreter_->Invoke(), Status::kOk) << interpreter_->error().message;
    std::vector<std::vector<float>> outputs;
    for (size_t k = 0; k < interpreter_->output_count(); ++k) {
      const TensorView out = interpreter_->output(k);
      outputs.emplace_back(out.as<float>(), out.as<float>() + out.bytes / sizeof(float));
    }
    return outputs;
  }

 private:
  std::unique_ptr<LoadedModel> loaded_;
  tools::AlignedBytes arena_;
  std::unique_ptr<Interpreter> interpreter_;
};

const std::vector<std::string> kTargets = {"host", "reference", "cortex-m4", "cortex-m55"};

// TFLM's resource_variables_test.py: +15, then -9 gives 6; after the reset,
// +5 gives 5 (the accumulator starts from zero again).
TEST(TfliteResourceVariables, TflmRecipeAccumulatesAndResets) {
  for (const bool in_branches : {false, true}) {
    AccumulatorForm form;
    form.handles_in_branches = in_branches;
    for (const std::string& target : kTargets) {
      SCOPED_TRACE(target + (in_branches ? ", handles in the branches" : ", handle passed to the IF"));
      const conv::ConvertResult converted = convert_for(accumulator_model(form), target);
      EXPECT_NE(converted.summary.find("resource variable '" + std::string(kName) + "' float32 [1,100]"),
                std::string::npos)
          << converted.summary;
      RunningModel run(converted.model);
      const float want[] = {15.0f, 6.0f, 5.0f};
      const Step steps[] = {{true, 15.0f}, {false, 9.0f}, {true, 5.0f, true}};
      for (size_t s = 0; s < 3; ++s) {
        const std::vector<std::vector<float>> got = run.accumulate(steps[s]);
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(got[0], std::vector<float>(kLength, want[s])) << "step " << s;
      }
    }
  }
}

// A nonzero initializer is the variable's value at Init() and after every
// ResetVariableTensors(): the file carries it as the constant second input of
// the ASSIGN_VARIABLE ops (which own the variable's reset), not as a CALL_ONCE.
TEST(TfliteResourceVariables, InitializerIsRestoredByReset) {
  AccumulatorForm form;
  for (int32_t i = 0; i < kLength; ++i) form.initial[static_cast<size_t>(i)] = 0.25f * static_cast<float>(i - 50);
  for (const std::string& target : kTargets) {
    SCOPED_TRACE(target);
    const conv::ConvertResult converted = convert_for(accumulator_model(form), target);
    const schema::Model* model = schema::GetModel(converted.model.data());
    int assignments = 0;
    for (const schema::Operator* op : *model->operators()) {
      EXPECT_NE(op->opcode(), schema::OpCode::INVALID);
      if (op->opcode() != schema::OpCode::ASSIGN_VARIABLE) continue;
      ++assignments;
      ASSERT_EQ(op->inputs()->size(), 2u);
      const schema::Tensor* variable = model->tensors()->Get(static_cast<uint32_t>(op->outputs()->Get(0)));
      const schema::Tensor* initial = model->tensors()->Get(static_cast<uint32_t>(op->inputs()->Get(1)));
      EXPECT_TRUE(variable->variable());
      ASSERT_TRUE(initial->is_constant());
      EXPECT_EQ(std::memcmp(model->constants()->data() + initial->offset(), form.initial.data(),
                            sizeof(float) * kLength),
                0);
    }
    EXPECT_EQ(assignments, 2);  // one per branch
    RunningModel run(converted.model);
    for (const bool reset : {false, true, true}) {
      const std::vector<std::vector<float>> got = run.accumulate({false, 2.0f, reset});
      const std::vector<std::vector<float>> again = run.accumulate({true, 0.5f});
      for (int32_t i = 0; i < kLength; ++i) {
        EXPECT_EQ(got[0][static_cast<size_t>(i)], form.initial[static_cast<size_t>(i)] - 2.0f) << i;
        EXPECT_EQ(again[0][static_cast<size_t>(i)], form.initial[static_cast<size_t>(i)] - 2.0f + 0.5f) << i;
      }
    }
  }
}

// The same files on TensorFlow Lite 2.9: 4 streams of 6 steps, each on a
// fresh interpreter (CALL_ONCE runs at its first invoke), with seeded
// conditions and values; floe on every target equal to it.
TEST(TfliteResourceVariables, StreamsLikeTflite29) {
  REQUIRE_TFLITE_ORACLE();
  constexpr size_t kSteps = 6, kStreams = 4;
  for (const bool in_branches : {false, true}) {
    SCOPED_TRACE(in_branches ? "handles in the branches" : "handle passed to the IF");
    AccumulatorForm form;
    form.handles_in_branches = in_branches;
    for (int32_t i = 0; i < kLength; ++i) form.initial[static_cast<size_t>(i)] = 0.125f * static_cast<float>(i % 17);
    const std::string bytes = accumulator_model(form);
    std::vector<Step> steps;
    std::vector<HostTensor> inputs;  // one per step: the bool's byte, then the floats
    uint32_t seed = 7;
    for (size_t k = 0; k < kSteps * kStreams; ++k) {
      seed = 1664525u * seed + 1013904223u;
      Step step{(seed >> 16) % 3 != 0, static_cast<float>(seed % 1000) / 64.0f - 7.0f};
      steps.push_back(step);
      HostTensor t;
      t.dtype = DType::kUInt8;
      t.shape = {1 + 4 * kLength};
      t.data.push_back(step.add ? 1 : 0);
      for (int32_t i = 0; i < kLength; ++i) {
        uint8_t f[4];
        std::memcpy(f, &step.value, 4);
        t.data.insert(t.data.end(), f, f + 4);
      }
      inputs.push_back(std::move(t));
    }
    const std::vector<std::vector<double>> want = run_tflite_stream(bytes, inputs, kSteps);
    ASSERT_EQ(want.size(), steps.size());
    for (const std::string& target : kTargets) {
      SCOPED_TRACE(target);
      const conv::ConvertResult converted = convert_for(bytes, target);
      for (size_t stream = 0; stream < kStreams; ++stream) {
        RunningModel run(converted.model);  // a fresh Init() per stream
        for (size_t k = 0; k < kSteps; ++k) {
          const size_t at = stream * kSteps + k;
          const std::vector<std::vector<float>> got = run.accumulate(steps[at]);
          ASSERT_EQ(got[0].size(), want[at].size());
          for (size_t i = 0; i < got[0].size(); ++i) {
            ASSERT_EQ(static_cast<double>(got[0][i]), want[at][i]) << "stream " << stream << " step " << k << " " << i;
          }
        }
      }
    }
  }
}

// A read is a snapshot: read, assign, read in the main graph gives the old
// and the new value, whatever order a memory-minded scheduler would like;
// an assignment nobody reads in this Invoke() is kept (the next one reads it).
TEST(TfliteResourceVariables, ReadsAreSnapshotsAndWritesAreKept) {
  TfliteBuilder b;
  const int x = b.tensor({{4}, kTflFloat32, {}, "x"});
  const int h = b.tensor({{}, kTflResource, {}, "h"});
  const int before = b.tensor({{4}, kTflFloat32, {}, "before"});
  const int doubled = b.tensor({{4}, kTflFloat32, {}, "doubled"});
  const int after = b.tensor({{4}, kTflFloat32, {}, "after"});
  const int summed = b.tensor({{4}, kTflFloat32, {}, "summed"});
  b.inputs = {x};
  b.outputs = {before, after};
  b.op(var_handle(h, "state"));
  b.op({kReadVariable, {h}, {before}});
  b.op({kMul, {before, x}, {doubled}});
  b.op({kAdd, {doubled, x}, {summed}});
  b.op({kAssignVariable, {h, summed}, {}});   // state = state * x + x
  b.op({kReadVariable, {h}, {after}});
  b.op({kAssignVariable, {h, doubled}, {}});  // then state = old state * x, read by the next Invoke()
  const std::string bytes = b.build();
  for (const std::string& target : kTargets) {
    SCOPED_TRACE(target);
    RunningModel run(convert_for(bytes, target).model);
    Interpreter& interpreter = run.interpreter();
    float state[4] = {0, 0, 0, 0};  // no initializer: zero
    for (int step = 0; step < 4; ++step) {
      const float in[4] = {1.5f, -2.0f, 3.0f, 0.5f * static_cast<float>(step)};
      std::memcpy(interpreter.input(0).data, in, sizeof in);
      ASSERT_EQ(interpreter.Invoke(), Status::kOk) << interpreter.error().message;
      for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(interpreter.output(0).as<float>()[i], state[i]) << "step " << step;
        EXPECT_EQ(interpreter.output(1).as<float>()[i], state[i] * in[i] + in[i]) << "step " << step;
        state[i] = state[i] * in[i];
      }
    }
  }
}

// A tf.while_loop updating a tf.Variable: the handle passes through the WHILE
// (condition, body, output) unchanged. Three iterations add x each; the sum
// carries over Invoke()s, as on TensorFlow Lite 2.9.
TEST(TfliteResourceVariables, HandlesPassThroughWhileLoops) {
  constexpr int32_t kLess = 58;
  TfliteBuilder b;
  const int x = b.tensor({{2}, kTflFloat32, {}, "x"});
  const int h = b.tensor({{}, kTflResource, {}, "h"});
  const int i0 = b.tensor({{1}, kTflInt32, raw(std::vector<int32_t>{0}), "i0"});
  const int i_out = b.tensor({{1}, kTflInt32, {}, "i_out"});
  const int h_out = b.tensor({{}, kTflResource, {}, "h_out"});
  const int x_out = b.tensor({{2}, kTflFloat32, {}, "x_out"});
  const int out = b.tensor({{2}, kTflFloat32, {}, "out"});
  b.inputs = {x};
  b.outputs = {out};
  // TFLite reads no variable before an assignment creates it: zeros first.
  b.op({kCallOnce, {}, {}, tfl::BuiltinOptions::CallOnceOptions, call_once_options(3)});
  b.op(var_handle(h, "sum"));
  b.op({kWhile, {i0, h, x}, {i_out, h_out, x_out}, tfl::BuiltinOptions::WhileOptions, while_options(1, 2)});
  b.op({kReadVariable, {h_out}, {out}});
  b.next_subgraph();  // 1: i < 3 (inputs first, as TFLite writes subgraphs)
  {
    const int i = b.tensor({{1}, kTflInt32, {}, "i"});
    const int ch = b.tensor({{}, kTflResource, {}, "ch"});
    const int cx = b.tensor({{2}, kTflFloat32, {}, "cx"});
    const int limit = b.tensor({{1}, kTflInt32, raw(std::vector<int32_t>{3}), "limit"});
    const int p = b.tensor({{1}, kTflBool, {}, "p"});
    b.inputs = {i, ch, cx};
    b.outputs = {p};
    b.op({kLess, {i, limit}, {p}});
  }
  b.next_subgraph();  // 2: i + 1, sum += x
  {
    const int i = b.tensor({{1}, kTflInt32, {}, "i"});
    const int bh = b.tensor({{}, kTflResource, {}, "bh"});
    const int bx = b.tensor({{2}, kTflFloat32, {}, "bx"});
    const int one = b.tensor({{1}, kTflInt32, raw(std::vector<int32_t>{1}), "one"});
    const int i2 = b.tensor({{1}, kTflInt32, {}, "i2"});
    const int v = b.tensor({{2}, kTflFloat32, {}, "v"});
    const int total = b.tensor({{2}, kTflFloat32, {}, "total"});
    b.inputs = {i, bh, bx};
    b.outputs = {i2, bh, bx};
    b.op({kAdd, {i, one}, {i2}});
    b.op({kReadVariable, {bh}, {v}});
    b.op({kAdd, {v, bx}, {total}});
    b.op({kAssignVariable, {bh, total}, {}});
  }
  b.next_subgraph();  // 3: the initializer
  {
    const int ih = b.tensor({{}, kTflResource, {}, "ih"});
    const int zeros = b.tensor({{2}, kTflFloat32, raw(std::vector<float>{0, 0}), "zeros"});
    b.op(var_handle(ih, "sum"));
    b.op({kAssignVariable, {ih, zeros}, {}});
  }
  const std::string bytes = b.build();
  constexpr size_t kSteps = 4;
  std::vector<HostTensor> inputs;
  for (size_t k = 0; k < kSteps; ++k) {
    inputs.push_back(HostTensor{DType::kFloat32, {2}, raw(std::vector<float>{0.5f * static_cast<float>(k + 1), -1.25f})});
  }
  std::vector<std::vector<double>> want;
  std::vector<double> sum = {0, 0};
  for (const HostTensor& t : inputs) {
    for (size_t i = 0; i < 2; ++i) sum[i] += 3 * element_of(t, i);
    want.push_back(sum);
  }
  if (peer_unavailable("tflite_run.js", "tfjs-tflite-node").empty()) {
    EXPECT_EQ(run_tflite_stream(bytes, inputs, kSteps), want) << "TFLite 2.9";
  } else {
    std::printf("SKIPPED: the TFLite 2.9 comparison (node or the peers' node_modules missing)\n");
  }
  for (const std::string& target : kTargets) {
    SCOPED_TRACE(target);
    RunningModel run(convert_for(bytes, target, 10).model);
    Interpreter& interpreter = run.interpreter();
    for (size_t k = 0; k < kSteps; ++k) {
      std::memcpy(interpreter.input(0).data, inputs[k].data.data(), inputs[k].data.size());
      ASSERT_EQ(interpreter.Invoke(), Status::kOk) << interpreter.error().message;
      for (size_t i = 0; i < 2; ++i) EXPECT_EQ(interpreter.output(0).as<float>()[i], want[k][i]) << k;
    }
  }
}

// A variable nothing assigns at run time reads as a constant: its
// initializer's value, or zero without one.
TEST(TfliteResourceVariables, NeverAssignedVariablesReadAsConstants) {
  for (const bool initialized : {true, false}) {
    TfliteBuilder b;
    const int x = b.tensor({{3}, kTflFloat32, {}, "x"});
    const int h = b.tensor({{}, kTflResource, {}, "h"});
    const int v = b.tensor({{3}, kTflFloat32, {}, "v"});
    const int out = b.tensor({{3}, kTflFloat32, {}, "out"});
    b.inputs = {x};
    b.outputs = {out};
    if (initialized) b.op({kCallOnce, {}, {}, tfl::BuiltinOptions::CallOnceOptions, call_once_options(1)});
    b.op(var_handle(h, "bias"));
    b.op({kReadVariable, {h}, {v}});
    b.op({kAdd, {x, v}, {out}});
    if (initialized) {
      b.next_subgraph();
      const int ih = b.tensor({{}, kTflResource, {}, "ih"});
      const int c = b.tensor({{3}, kTflFloat32, raw(std::vector<float>{0.5f, -1.0f, 2.0f}), "c"});
      b.op(var_handle(ih, "bias"));
      b.op({kAssignVariable, {ih, c}, {}});
    }
    const conv::ConvertResult converted = convert_for(b.build(), "reference");
    EXPECT_NE(converted.summary.find("'bias' is never assigned at run time: read as a constant"), std::string::npos)
        << converted.summary;
    const std::vector<HostTensor> got =
        run_model(converted.model, {{"x", HostTensor{DType::kFloat32, {3}, raw(std::vector<float>{1, 2, 3})}}});
    ASSERT_EQ(got.size(), 1u);
    const std::vector<float> want = initialized ? std::vector<float>{1.5f, 1.0f, 5.0f} : std::vector<float>{1, 2, 3};
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(element_of(got[0], i), want[i]) << i;
  }
}

// An int8 variable starts at its zero point (TFLM's default for a resource
// buffer) and takes what is assigned, on every target.
TEST(TfliteResourceVariables, Int8VariableStartsAtItsZeroPoint) {
  TfliteBuilder b;
  TflTensor q{{4}, kTflInt8, {}, "x", {0.5f}, {-5}};
  const int x = b.tensor(q);
  const int h = b.tensor({{}, kTflResource, {}, "h"});
  q.name = "before";
  const int before = b.tensor(q);
  b.inputs = {x};
  b.outputs = {before};
  b.op(var_handle(h, "q"));
  b.op({kReadVariable, {h}, {before}});
  b.op({kAssignVariable, {h, x}, {}});
  const std::string bytes = b.build();
  for (const std::string& target : kTargets) {
    SCOPED_TRACE(target);
    RunningModel run(convert_for(bytes, target).model);
    Interpreter& interpreter = run.interpreter();
    const int8_t inputs[2][4] = {{1, -2, 3, 127}, {-128, 0, 9, 4}};
    const int8_t* want[3] = {nullptr, inputs[0], inputs[1]};
    for (int step = 0; step < 3; ++step) {
      std::memcpy(interpreter.input(0).data, inputs[step % 2], 4);
      ASSERT_EQ(interpreter.Invoke(), Status::kOk) << interpreter.error().message;
      for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(interpreter.output(0).as<int8_t>()[i], want[step] ? want[step][i] : -5) << "step " << step;
      }
    }
  }
}

conv::ConvertError conversion_error(const std::string& bytes, uint32_t max_loop_iterations = 0) {
  try {
    convert_for(bytes, "host", max_loop_iterations);
  } catch (const conv::ConvertError& e) {
    return e;
  }
  ADD_FAILURE() << "converted";
  return conv::ConvertError("", conv::ErrorCategory::kInternal, {});
}

// What floe does not fold or follow is refused as unsupported, naming the op.
TEST(TfliteResourceVariables, RefusesWhatItCannotFold) {
  {  // an init subgraph that computes
    TfliteBuilder b;
    const int x = b.tensor({{2}, kTflFloat32, {}, "x"});
    const int h = b.tensor({{}, kTflResource, {}, "h"});
    const int out = b.tensor({{2}, kTflFloat32, {}, "out"});
    b.inputs = {x};
    b.outputs = {out};
    b.op({kCallOnce, {}, {}, tfl::BuiltinOptions::CallOnceOptions, call_once_options(1)});
    b.op(var_handle(h, "v"));
    b.op({kReadVariable, {h}, {out}});
    b.next_subgraph();
    const int ih = b.tensor({{}, kTflResource, {}, "ih"});
    const int c = b.tensor({{2}, kTflFloat32, raw(std::vector<float>{1, 2}), "c"});
    const int twice = b.tensor({{2}, kTflFloat32, {}, "twice"});
    b.op(var_handle(ih, "v"));
    b.op({kAdd, {c, c}, {twice}});
    b.op({kAssignVariable, {ih, twice}, {}});
    const conv::ConvertError e = conversion_error(b.build());
    EXPECT_EQ(e.category(), conv::ErrorCategory::kUnsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("init subgraph 1 of a CALL_ONCE"), std::string::npos) << e.what();
    EXPECT_EQ(e.where().op, "ADD") << e.what();
  }
  {  // a body that returns another variable's handle than the one it got
    TfliteBuilder b;
    const int h = b.tensor({{}, kTflResource, {}, "h"});
    const int h2 = b.tensor({{}, kTflResource, {}, "h2"});
    const int out = b.tensor({{2}, kTflFloat32, {}, "out"});
    b.outputs = {out};
    b.op(var_handle(h, "v"));
    b.op({kWhile, {h}, {h2}, tfl::BuiltinOptions::WhileOptions, while_options(1, 2)});
    b.op({kReadVariable, {h}, {out}});
    b.next_subgraph();  // 1: condition, false
    const int ch = b.tensor({{}, kTflResource, {}, "ch"});
    const int no = b.tensor({{1}, kTflBool, {0}, "no"});
    b.inputs = {ch};
    b.outputs = {no};
    b.next_subgraph();  // 2: body, returns w's handle
    const int bh = b.tensor({{}, kTflResource, {}, "bh"});
    const int other = b.tensor({{}, kTflResource, {}, "other"});
    b.op(var_handle(other, "w"));
    b.inputs = {bh};
    b.outputs = {other};
    const conv::ConvertError e = conversion_error(b.build(), 4);
    EXPECT_EQ(e.category(), conv::ErrorCategory::kUnsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("passes a variable's handle through a loop unchanged"), std::string::npos)
        << e.what();
  }
  {  // a variable read with two shapes
    TfliteBuilder b;
    const int x = b.tensor({{2}, kTflFloat32, {}, "x"});
    const int h = b.tensor({{}, kTflResource, {}, "h"});
    const int out = b.tensor({{3}, kTflFloat32, {}, "out"});
    b.inputs = {x};
    b.outputs = {out};
    b.op(var_handle(h, "v"));
    b.op({kAssignVariable, {h, x}, {}});
    b.op({kReadVariable, {h}, {out}});
    const conv::ConvertError e = conversion_error(b.build());
    EXPECT_EQ(e.category(), conv::ErrorCategory::kInvalidInput) << e.what();
    EXPECT_NE(std::string(e.what()).find("resource variable 'v' is float32 [2]"), std::string::npos) << e.what();
    EXPECT_EQ(e.where().op, "READ_VARIABLE") << e.what();
  }
  {  // a handle no VAR_HANDLE wrote
    TfliteBuilder b;
    const int h = b.tensor({{}, kTflResource, {}, "h"});
    const int out = b.tensor({{2}, kTflFloat32, {}, "out"});
    b.outputs = {out};
    b.op({kReadVariable, {h}, {out}});
    const conv::ConvertError e = conversion_error(b.build());
    EXPECT_NE(std::string(e.what()).find("before a VAR_HANDLE writes it"), std::string::npos) << e.what();
  }
}

// Init() refuses an ASSIGN_VARIABLE whose initial value is not a constant of
// the variable's dtype and size, or whose output is no variable tensor (its
// prepare writes the variable): the converted file with operands rewritten in
// place.
TEST(TfliteResourceVariables, InitRefusesABadAssignment) {
  const std::vector<uint8_t> converted = convert_for(accumulator_model(AccumulatorForm{}), "reference").model;
  const schema::Model* original = schema::GetModel(converted.data());
  uint32_t assign = 0;
  int32_t activation = -1, other_constant = -1;
  for (uint32_t i = 0; i < original->operators()->size(); ++i) {
    if (original->operators()->Get(i)->opcode() == schema::OpCode::ASSIGN_VARIABLE) assign = i;
  }
  const int32_t initial = original->operators()->Get(assign)->inputs()->Get(1);
  const int32_t variable = original->operators()->Get(assign)->outputs()->Get(0);
  for (uint32_t i = 0; i < original->tensors()->size(); ++i) {
    const schema::Tensor* t = original->tensors()->Get(i);
    if (!t->is_constant() && !t->variable() && t->size() == original->tensors()->Get(static_cast<uint32_t>(variable))->size()) {
      activation = static_cast<int32_t>(i);
    }
    if (t->is_constant() && t->size() != original->tensors()->Get(static_cast<uint32_t>(initial))->size()) {
      other_constant = static_cast<int32_t>(i);
    }
  }
  ASSERT_GE(activation, 0);
  // Init() of a copy whose assignment reads `from` as its initial value and writes `to`.
  auto init = [&](int32_t from, int32_t to) {
    tools::AlignedBytes buffer = tools::aligned_bytes(converted.size());
    std::memcpy(buffer.get(), converted.data(), converted.size());
    const schema::Operator* op = schema::GetModel(buffer.get())->operators()->Get(assign);
    const_cast<flatbuffers::Vector<int32_t>*>(op->inputs())->Mutate(1, from);
    const_cast<flatbuffers::Vector<int32_t>*>(op->outputs())->Mutate(0, to);
    Model model;
    const Status loaded = model.Load(buffer.get(), converted.size());
    if (loaded != Status::kOk) return loaded;
    tools::AlignedBytes arena = tools::aligned_bytes(model.arena_size());
    Interpreter interpreter(model, arena.get(), model.arena_size());
    return interpreter.Init();
  };
  EXPECT_EQ(init(initial, variable), Status::kOk);
  EXPECT_EQ(init(activation, variable), Status::kInvalidModel);  // not a constant
  if (other_constant >= 0) EXPECT_EQ(init(other_constant, variable), Status::kInvalidModel);  // another size
  EXPECT_EQ(init(initial, activation), Status::kInvalidModel);  // writes no variable
}

// The fuzz seed with resource variables (tests/fuzz/corpus/fuzz_tflite) is
// this model; FLOE_WRITE_TFLITE_SEEDS=1 rewrites it.
TEST(TfliteResourceVariables, FuzzSeedIsThisModel) {
  AccumulatorForm form;
  for (int32_t i = 0; i < kLength; ++i) form.initial[static_cast<size_t>(i)] = static_cast<float>(i % 3);
  const std::string bytes = accumulator_model(form);
  const std::string name = std::string(FLOE_SOURCE_DIR) + "/tests/fuzz/corpus/fuzz_tflite/resource_variables.tflite";
  if (std::getenv("FLOE_WRITE_TFLITE_SEEDS") != nullptr) std::ofstream(name, std::ios::binary) << bytes;
  std::ifstream in(name, std::ios::binary);
  EXPECT_EQ(imported_content(std::string(std::istreambuf_iterator<char>(in), {})), imported_content(bytes));
}

}  // namespace
}  // namespace floe::testing
