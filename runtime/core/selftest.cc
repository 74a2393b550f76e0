// SPDX-License-Identifier: Apache-2.0
#include "runtime/core/selftest.h"

#include "runtime/core/interpreter.h"
#include "schemas/contract/selftest.h"
#include "schemas/floe_generated.h"

namespace floe {
namespace {

// `name` == prefix followed by a decimal index; the index, else -1.
int32_t indexed(const char* name, const char* prefix) {
  while (*prefix != '\0') {
    if (*name++ != *prefix++) return -1;
  }
  if (*name == '\0') return -1;
  int32_t index = 0;
  for (; *name != '\0'; ++name) {
    if (*name < '0' || *name > '9' || index > 100000) return -1;
    index = index * 10 + (*name - '0');
  }
  return index;
}

bool same(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}

constexpr int32_t kMaxIo = 16;  // model inputs/outputs a self-test may carry

struct Embedded {
  const uint32_t* op_crc32c = nullptr;
  const float* op_sums = nullptr;  // [ops][2]
  float tolerance = 0.0f;
  TensorView inputs[kMaxIo];
  TensorView outputs[kMaxIo];
};

// Finds the self-test tensors; false when the model carries none (or a partial one).
bool find_embedded(const Model& model, Embedded* e) {
  const size_t ops = model.operator_count();
  bool have_tolerance = false;
  for (size_t i = 0; i < model.tensor_count(); ++i) {
    const TensorView t = model.tensor(i);
    if (t.data == nullptr) continue;
    int32_t k;
    if (same(t.name, selftest::kOpCrc32c) && t.dtype == DType::kInt32 && t.bytes == ops * 4) {
      e->op_crc32c = static_cast<const uint32_t*>(t.data);
    } else if (same(t.name, selftest::kOpSums) && t.dtype == DType::kFloat32 && t.bytes == ops * 8) {
      e->op_sums = static_cast<const float*>(t.data);
    } else if (same(t.name, selftest::kTolerance) && t.dtype == DType::kFloat32 && t.bytes == 4) {
      e->tolerance = *static_cast<const float*>(t.data);
      have_tolerance = true;
    } else if ((k = indexed(t.name, selftest::kInputPrefix)) >= 0 && k < kMaxIo) {
      e->inputs[k] = t;
    } else if ((k = indexed(t.name, selftest::kOutputPrefix)) >= 0 && k < kMaxIo) {
      e->outputs[k] = t;
    }
  }
  return e->op_crc32c != nullptr && e->op_sums != nullptr && have_tolerance;
}

struct Check {
  const Model* model;
  const Interpreter* interpreter;
  const Embedded* embedded;
  int32_t first_bad_op = -1;
  size_t ops_checked = 0;
};

// After each op: its outputs' digest against the host's.
void check_op(void* user, size_t op_index, const char*) {
  auto* check = static_cast<Check*>(user);
  const schema::Operator* op = check->model->schema()->operators()->Get(static_cast<uint32_t>(op_index));
  selftest::Digest digest;
  for (const int32_t out : *op->outputs()) {
    if (out < 0) continue;
    const TensorView t = check->interpreter->tensor(static_cast<size_t>(out));
    selftest::add_output(&digest, t.dtype, t.data, t.bytes);
  }
  const Embedded& e = *check->embedded;
  ++check->ops_checked;
  const bool ok =
      selftest::within(digest, e.op_crc32c[op_index], e.op_sums[2 * op_index], e.op_sums[2 * op_index + 1], e.tolerance);
  // An op of a WHILE loop runs once per iteration and the host kept its last
  // run: a mismatch counts unless a later run of the same op matches.
  if (check->first_bad_op < 0 && !ok) {
    check->first_bad_op = static_cast<int32_t>(op_index);
  } else if (ok && check->first_bad_op == static_cast<int32_t>(op_index)) {
    check->first_bad_op = -1;
  }
}

// The final outputs element by element (the digests' sums could hide
// compensating errors).
bool output_matches(const TensorView& device, const TensorView& host, float tolerance) {
  if (device.dtype != host.dtype || device.bytes != host.bytes) return false;
  if (device.dtype != DType::kFloat32) {
    const uint8_t* d = static_cast<const uint8_t*>(device.data);
    const uint8_t* h = static_cast<const uint8_t*>(host.data);
    for (size_t i = 0; i < device.bytes; ++i) {
      if (d[i] != h[i]) return false;
    }
    return true;
  }
  const float* d = static_cast<const float*>(device.data);
  const float* h = static_cast<const float*>(host.data);
  for (size_t i = 0; i < device.bytes / sizeof(float); ++i) {
    const float diff = d[i] > h[i] ? d[i] - h[i] : h[i] - d[i];
    const float scale = h[i] > 1.0f ? h[i] : (h[i] < -1.0f ? -h[i] : 1.0f);
    if (!(diff <= tolerance * scale)) return false;  // NaN fails
  }
  return true;
}

}  // namespace

SelfTestResult SelfTest(const Model& model, void* arena, size_t arena_bytes) {
  SelfTestResult result;
  Embedded embedded;
  if (!model.loaded() || !find_embedded(model, &embedded)) {
    result.status = Status::kNotFound;
    result.message = FLOE_MSG("the model carries no self-test (floe-convert --selftest-input)");
    return result;
  }
  result.tolerance = embedded.tolerance;
  Interpreter interpreter(model, arena, arena_bytes);
  if (interpreter.Init() != Status::kOk) {
    result.status = interpreter.error().status;
    result.message = interpreter.error().message;
    return result;
  }
  if (interpreter.input_count() > static_cast<size_t>(kMaxIo) ||
      interpreter.output_count() > static_cast<size_t>(kMaxIo)) {
    result.status = Status::kInvalidModel;
    result.message = FLOE_MSG("self-test: too many model inputs or outputs");
    return result;
  }
  for (size_t k = 0; k < interpreter.input_count(); ++k) {
    const TensorView in = interpreter.input(k);
    const TensorView& sample = embedded.inputs[k];
    if (sample.data == nullptr || sample.dtype != in.dtype || sample.bytes != in.bytes) {
      result.status = Status::kInvalidModel;
      result.message = FLOE_MSG("self-test: an embedded input does not match the model's input");
      return result;
    }
    const uint8_t* from = static_cast<const uint8_t*>(sample.data);
    for (size_t i = 0; i < in.bytes; ++i) static_cast<uint8_t*>(in.data)[i] = from[i];
  }
  Check check{&model, &interpreter, &embedded};
  interpreter.set_observer(&check_op, &check);
  const Status invoked = interpreter.Invoke();
  interpreter.set_observer(nullptr, nullptr);
  result.ops_checked = check.ops_checked;
  if (invoked != Status::kOk) {
    result.status = invoked;
    result.op = interpreter.error().op;
    result.message = interpreter.error().message;
    return result;
  }
  if (check.first_bad_op >= 0) {
    const schema::Operator* op = model.schema()->operators()->Get(static_cast<uint32_t>(check.first_bad_op));
    result.status = Status::kKernelError;
    result.op = check.first_bad_op;
    result.op_name = op->name() != nullptr ? op->name()->c_str() : "";
    result.message = FLOE_MSG("the op's outputs differ from the host's beyond their tolerance");
    return result;
  }
  for (size_t k = 0; k < interpreter.output_count(); ++k) {
    if (!output_matches(interpreter.output(k), embedded.outputs[k], embedded.tolerance)) {
      result.status = Status::kKernelError;
      result.output = static_cast<int32_t>(k);
      result.message = FLOE_MSG("a model output differs from the host's beyond its tolerance");
      return result;
    }
  }
  return result;
}

}  // namespace floe
