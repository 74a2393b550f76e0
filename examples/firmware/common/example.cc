// SPDX-License-Identifier: Apache-2.0
// run_example(): see example.h. Numbers are printed by a small fixed-point
// formatter of our own: newlib's printf("%f") allocates (dtoa -> malloc),
// which the Cortex-M link forbids.
#include "examples/firmware/common/example.h"

#include "runtime/core/interpreter.h"
#include "runtime/core/model.h"
#include "runtime/core/selftest.h"
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
  // Pads with spaces to `column` characters (no-op when already past it).
  Line& pad(size_t column) {
    while (length_ < column && length_ + 1 < sizeof buffer_) buffer_[length_++] = ' ';
    buffer_[length_] = '\0';
    return *this;
  }
  Line& right(uint64_t v, size_t width) {  // v right-aligned in `width` characters
    Line digits;
    digits.integer(v);
    return pad(length_ + (digits.length_ < width ? width - digits.length_ : 0)).text(digits.buffer_);
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

// The value of "key=N" in the command line (N decimal, may be negative), or
// `absent` when the key is not there.
int64_t argument(const char* key, int64_t absent) {
  const char* line = platform::command_line();
  for (const char* s = line; *s != '\0'; ++s) {
    if (s != line && s[-1] != ' ') continue;  // keys start a word
    size_t k = 0;
    while (key[k] != '\0' && s[k] == key[k]) ++k;
    if (key[k] != '\0' || s[k] != '=') continue;
    s += k + 1;
    const bool negative = *s == '-';
    s += negative ? 1 : 0;
    int64_t n = 0;
    for (; *s >= '0' && *s <= '9'; ++s) n = n * 10 + (*s - '0');
    return negative ? -n : n;
  }
  return absent;
}

// Per-op profile of one inference (the "profile=1" command line): the ticks
// between consecutive observer calls, i.e. each op's kernel and the
// interpreter's step to it. Cores with DWT count cycles; see print_profile.
constexpr size_t kMaxProfiledOps = 256;
struct OpProfile {
  uint64_t last = 0;
  uint64_t ticks[kMaxProfiledOps] = {};
};
OpProfile g_profile;

void record_op(void* user, size_t op_index, const char*) {
  OpProfile* profile = static_cast<OpProfile*>(user);
  const uint64_t now = platform::ticks();
  if (op_index < kMaxProfiledOps) profile->ticks[op_index] = now - profile->last;
  profile->last = now;
}

// "stop_after_op=K": the process ends as op K finishes, so that an external
// instruction counter (QEMU's, which the guest cannot read) gives op K's
// instructions as count(K) - count(K - 1) (ports/cortex-m/tools/bench.cmake).
void stop_after_op(void* user, size_t op_index, const char*) {
  if (static_cast<int64_t>(op_index) == *static_cast<const int64_t*>(user)) platform::exit(0);
}

const char* backend_name(schema::Backend backend) {
  switch (backend) {
    case schema::Backend::XNNPACK: return "xnnpack";
    case schema::Backend::CORTEX_M: return "cortex-m";
    default: return "reference";
  }
}

template <typename T>
size_t argmax(const T* v, size_t n) {
  size_t best = 0;
  for (size_t i = 1; i < n; ++i) best = v[i] > v[best] ? i : best;
  return best;
}

bool supported(DType t) { return t == DType::kFloat32 || t == DType::kInt8; }
// An integer audio front end takes int16 samples.
bool supported_input(DType t) { return supported(t) || t == DType::kInt16; }

int fail(const char* what, const Error& error) {
  Line line;
  line.text("FAIL: ").text(what).text(": ").text(status_name(error.status)).text(": ").text(error.message);
  if (error.op >= 0) line.text(" (op ").integer(static_cast<uint64_t>(error.op)).text(")");
  line.print();
  return 2;
}

// The per-op table, in floe-bench's layout: one row per op with its count and
// share of the sum over ops. With `counts` null (no cycle counter: QEMU
// emulates no DWT) the rows carry no count; floe_bench fills in instructions.
void print_profile(const Model& model, const uint64_t* counts, const char* unit) {
  const size_t ops = model.operator_count();
  uint64_t total = 0;
  for (size_t i = 0; counts != nullptr && i < ops && i < kMaxProfiledOps; ++i) total += counts[i];
  Line line;
  if (counts != nullptr) {
    line.text("per-op profile (").text(unit).text(", one inference; share of the sum over ops):");
  } else {
    line.text("per-op profile: no cycle counter on this core (QEMU emulates no DWT); ops:");
  }
  line.print();
  line.text("    #  op").pad(28).text("backend");
  if (counts != nullptr) {
    size_t unit_length = 0;
    while (unit[unit_length] != '\0') ++unit_length;
    line.pad(50 - unit_length).text(unit).text("  share");
  }
  line.pad(60).text("node");
  line.print();
  for (size_t i = 0; i < ops; ++i) {
    const schema::Operator* op = model.schema()->operators()->Get(static_cast<uint32_t>(i));
    // Each column keeps a space before the next even when a long op name (the
    // SIGNAL_FILTER_BANK_* ops) runs past its width: scripts split on it.
    line.text("  ").right(i, 3).text("  ").text(schema::EnumNameOpCode(op->opcode())).text(" ").pad(28)
        .text(backend_name(op->backend())).text(" ").pad(38);
    if (counts != nullptr && i < kMaxProfiledOps) {
      const uint64_t permille = total == 0 ? 0 : (counts[i] * 1000 + total / 2) / total;
      line.right(counts[i], 12).text(" ").right(permille / 10, 3).text(".").integer(permille % 10).text("%");
    }
    line.text("  ").pad(60).text(op->name() != nullptr ? op->name()->c_str() : "");
    line.print();
  }
  if (counts != nullptr) {
    line.text("  sum over ops: ").integer(total).text(" ").text(unit);
    line.print();
  }
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

  // At boot, before the model serves: its embedded self-test (the host's input
  // and per-op digests) on this device's kernels, in the same arena.
  const SelfTestResult self_test = SelfTest(model, ex.arena, ex.arena_size);
  if (self_test.status == Status::kOk) {
    line.text("self-test: PASS, ").integer(self_test.ops_checked).text(" ops match the host's");
    line.print();
  } else if (self_test.status == Status::kNotFound) {
    line.text("self-test: none in this model");
    line.print();
  } else {
    line.text("FAIL: self-test: ").text(status_name(self_test.status));
    if (self_test.op >= 0) {
      line.text(" at op ").integer(static_cast<uint64_t>(self_test.op)).text(" (").text(self_test.op_name).text(")");
    }
    line.text(": ").text(self_test.message);
    line.print();
    return 1;
  }

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
  if (!supported_input(in.dtype) || static_cast<size_t>(in.shape.num_elements()) != ex.input_elements ||
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

  const int64_t stop_op = argument("stop_after_op", -2);
  if (stop_op >= -1) {  // one more inference, cut short after op stop_op (-1: before its first op)
    for (size_t i = 0; i < in.bytes; ++i) static_cast<uint8_t*>(in.data)[i] = source[i];
    if (stop_op == -1) platform::exit(0);
    static int64_t stop_at;
    stop_at = stop_op;
    interpreter.set_observer(stop_after_op, &stop_at);
    if (interpreter.Invoke() != Status::kOk) return fail("Interpreter::Invoke", interpreter.error());
    line.text("FAIL: stop_after_op=").integer(static_cast<uint64_t>(stop_op)).text(": the model has ")
        .integer(model.operator_count()).text(" ops");
    line.print();
    return 2;
  }
  if (argument("profile", 0) != 0) {
    const bool counted = platform::ticks_per_second() != 0;
    for (size_t i = 0; i < in.bytes; ++i) static_cast<uint8_t*>(in.data)[i] = source[i];
    if (counted) {
      interpreter.set_observer(record_op, &g_profile);
      g_profile.last = platform::ticks();
    }
    if (interpreter.Invoke() != Status::kOk) return fail("Interpreter::Invoke", interpreter.error());
    interpreter.set_observer(nullptr, nullptr);
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
    print_profile(model, counted ? g_profile.ticks : nullptr, "cycles");  // DWT CYCCNT
#else
    print_profile(model, counted ? g_profile.ticks : nullptr, "ns");  // the host port's clock
#endif
  }

  const uint32_t reps = static_cast<uint32_t>(argument("reps", 0));
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
