// SPDX-License-Identifier: Apache-2.0
// run_example(): see example.h. Numbers are printed by a small fixed-point
// formatter of our own: newlib's printf("%f") allocates (dtoa -> malloc),
// which the Cortex-M link forbids.
#include "examples/firmware/common/example.h"

#include "runtime/core/interpreter.h"
#include "runtime/core/model.h"
#include "runtime/kernels/cortexm/isa.h"
#include "runtime/platform.h"
#include "schemas/floe_generated.h"

namespace floe::examples {
namespace {

// Appends to a fixed buffer; silently truncates (log lines are short).
class Line {
 public:
  Line& text(const char* s) {
    while (*s != '\0' && length_ + 1 < sizeof buffer_) buffer_[length_++] = *s++;
    buffer_[length_] = '\0';
    return *this;
  }
  Line& integer(uint64_t v) {
    char digits[24];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    char out[24];
    for (int i = 0; i < n; ++i) out[i] = digits[n - 1 - i];
    out[n] = '\0';
    return text(out);
  }
  // Six decimals; magnitudes >= 1e9 print as ">1e9" (never seen as logits).
  Line& number(float v) {
    if (v != v) return text("nan");
    if (v < 0.0f || (v == 0.0f && 1.0f / v < 0.0f)) {
      text("-");
      v = -v;
    }
    if (v >= 1e9f) return text(">1e9");
    uint64_t whole = static_cast<uint64_t>(v);
    uint64_t frac = static_cast<uint64_t>((v - static_cast<float>(whole)) * 1e6f + 0.5f);
    if (frac >= 1000000u) {
      whole += 1;
      frac -= 1000000u;
    }
    integer(whole).text(".");
    for (uint64_t scale = 100000u; scale > 0; scale /= 10) integer(frac / scale % 10);
    return *this;
  }
  void print() {
    text("\n");
    platform::log(buffer_);
    length_ = 0;
    buffer_[0] = '\0';
  }

 private:
  char buffer_[160] = {};
  size_t length_ = 0;
};

// "reps=N" anywhere in the command line; 0 when absent.
uint32_t repeat_count() {
  const char* s = platform::command_line();
  for (; *s != '\0'; ++s) {
    if (s[0] == 'r' && s[1] == 'e' && s[2] == 'p' && s[3] == 's' && s[4] == '=') {
      uint32_t n = 0;
      for (s += 5; *s >= '0' && *s <= '9'; ++s) n = n * 10 + static_cast<uint32_t>(*s - '0');
      return n;
    }
  }
  return 0;
}

template <typename T>
size_t argmax(const T* v, size_t n) {
  size_t best = 0;
  for (size_t i = 1; i < n; ++i) best = v[i] > v[best] ? i : best;
  return best;
}

bool supported(DType t) { return t == DType::kFloat32 || t == DType::kInt8; }

int fail(const char* what, const Error& error) {
  Line line;
  line.text("FAIL: ").text(what).text(": ").text(status_name(error.status)).text(": ").text(error.message);
  if (error.op >= 0) line.text(" (op ").integer(static_cast<uint64_t>(error.op)).text(")");
  line.print();
  return 2;
}

}  // namespace

int run_example(const Example& ex) {
  Model model;
  if (model.Load(ex.model, ex.model_size) != Status::kOk) return fail("Model::Load", model.error());
  // The converter's kernel choice, as recorded in the model.
  uint64_t cortexm_ops = 0;
  for (const schema::Operator* op : *model.schema()->operators()) {
    cortexm_ops += op->backend() == schema::Backend::CORTEX_M ? 1 : 0;
  }
  Line line;
  line.text(ex.name).text(": model ").integer(ex.model_size).text(" B, arena ").integer(ex.arena_size)
      .text(" B, ").integer(cortexm_ops).text(" of ").integer(model.operator_count())
      .text(" ops on the Cortex-M kernels (").text(cortexm::kIsaName).text(" variant)");
  line.print();

  Interpreter interpreter(model, ex.arena, ex.arena_size);
  if (interpreter.Init() != Status::kOk) return fail("Interpreter::Init", interpreter.error());
  // The converter's arena size (floe_add_model's _ARENA_SIZE for this pointer
  // width) is exactly what Init() used: activations + prepared ops (XNNPACK's
  // part, on hosts, is an upper bound).
  const bool exact = interpreter.backend_op_count() == 0;
  if (model.arena_size() != ex.arena_size ||
      (exact ? interpreter.arena_used() != ex.arena_size : interpreter.arena_used() > ex.arena_size)) {
    line.text("FAIL: arena ").integer(ex.arena_size).text(" B stated, Init() used ")
        .integer(interpreter.arena_used()).text(" B");
    line.print();
    return 2;
  }
  line.text("arena used by Init(): ").integer(interpreter.arena_used()).text(" B (")
      .integer(interpreter.persistent_bytes_used()).text(" B of prepared ops)");
  line.print();
  const TensorView in = interpreter.input(ex.input_index);
  const TensorView out = interpreter.output(ex.output_index);
  if (!supported(in.dtype) || static_cast<size_t>(in.shape.num_elements()) != ex.input_elements ||
      !supported(out.dtype) || static_cast<size_t>(out.shape.num_elements()) != ex.output_elements) {
    line.text("FAIL: the embedded reference does not match the model's input/output");
    line.print();
    return 2;
  }
  const uint8_t* source = static_cast<const uint8_t*>(ex.input);
  for (size_t i = 0; i < in.bytes; ++i) static_cast<uint8_t*>(in.data)[i] = source[i];

  const uint64_t start = platform::ticks();
  if (interpreter.Invoke() != Status::kOk) return fail("Interpreter::Invoke", interpreter.error());
  const uint64_t ticks = platform::ticks() - start;

  line.text("  ").text(out.name).text(":");
  line.print();
  line.text("   ");
  bool ok = true;
  if (out.dtype == DType::kInt8) {
    const int8_t* y = out.as<int8_t>();
    const int8_t* host = static_cast<const int8_t*>(ex.expected);
    size_t differing = 0;
    for (size_t i = 0; i < ex.output_elements; ++i) {
      line.text(y[i] < 0 ? " -" : " ").integer(static_cast<uint64_t>(y[i] < 0 ? -y[i] : y[i]));
      if (i % 16 == 15 || i + 1 == ex.output_elements) {
        line.print();
        line.text("   ");
      }
      differing += y[i] != host[i] ? 1 : 0;
    }
    ok = differing == 0;
    line = Line();
    line.text("  argmax ").integer(argmax(y, ex.output_elements)).text(" (host ")
        .integer(argmax(host, ex.output_elements)).text("), ").integer(differing)
        .text(" int8 outputs differ from the host's (must be 0)");
    line.print();
  } else {
    const float* y = out.as<float>();
    const float* expected = static_cast<const float*>(ex.expected);
    float worst = 0.0f;
    size_t worst_index = 0;
    for (size_t i = 0; i < ex.output_elements; ++i) {
      line.text(" ").number(y[i]);
      if (i % 8 == 7 || i + 1 == ex.output_elements) {
        line.print();
        line.text("   ");
      }
      const float host = expected[i];
      const float diff = y[i] > host ? y[i] - host : host - y[i];
      const float scale = host > 1.0f ? host : (host < -1.0f ? -host : 1.0f);
      if (!(diff <= kTolerance * scale)) ok = false;  // NaN fails too
      if (diff > worst || diff != diff) {
        worst = diff;
        worst_index = i;
      }
    }
    line = Line();
    line.text("  argmax ").integer(argmax(y, ex.output_elements)).text(" (host ")
        .integer(argmax(expected, ex.output_elements)).text("), max |device - host| = ").number(worst)
        .text(" at ").integer(worst_index).text(", tolerance 1e-4 x max(1, |host|)");
    line.print();
    if (ex.labels != nullptr) {
      const size_t top = argmax(y, ex.output_elements), host_top = argmax(expected, ex.output_elements);
      line.text("  label: ").text(ex.labels[top]).text(" ").number(y[top]).text(" (host: ")
          .text(ex.labels[host_top]).text(" ").number(expected[host_top]).text(")");
      line.print();
    }
  }
  if (platform::ticks_per_second() != 0) {
    line.text("  inference: ").integer(ticks).text(" ticks at ").integer(platform::ticks_per_second())
        .text(" per second");
    line.print();
  }

  const uint32_t reps = repeat_count();
  for (uint32_t r = 0; r < reps; ++r) {
    if (interpreter.Invoke() != Status::kOk) return fail("Interpreter::Invoke", interpreter.error());
  }
  if (reps > 0) {
    line.text("  ran ").integer(reps).text(" more inference(s)");
    line.print();
  }
  line.text(ok ? "PASS " : "FAIL ").text(ex.name);
  line.print();
  return ok ? 0 : 1;
}

}  // namespace floe::examples
