// SPDX-License-Identifier: Apache-2.0
// Host-only tool code (never built for a device): it may use the heap, the
// standard library and exceptions; the arena-only rule binds runtime/core and kernels.
// floe-bench: how fast a .floe model runs here, and where the time and memory go.
//   floe-bench model.floe [--threads N] [--runs N] [--warmup N] [--profile-runs N]
//              [--input NAME=file.npy ...] [--output NAME=file.npy ...]
// Prints Init time, latency min/median/max over --runs Invoke() calls, arena
// bytes (activations / backend persistent: budget and used / total) and a per-op
// profile (time and share per op, which backend ran it). Inputs not given are
// filled with a fixed ramp (float or int8). Threads > 1 create a pthreadpool (XNNPACK builds).
// Host-only tool (heap, stdio); builds for x86-64 and aarch64 Linux, no CLI11
// so the aarch64 cross build needs nothing beyond the sysroot.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "runtime/core/backend.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "runtime/tools/npy.h"
#include "schemas/floe_generated.h"
#if defined(FLOE_BENCH_WITH_PTHREADPOOL)
#include <pthreadpool.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kUsage =
    "usage: floe-bench model.floe [--threads N] [--runs N] [--warmup N] [--profile-runs N]\n"
    "                  [--no-input-reload]  (instruction counting: inputs copied once only)\n"
    "                  [--input NAME=file.npy ...] [--output NAME=file.npy ...]\n";

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Per-op times of every profiled run; the report takes each op's median, so a
// run preempted by another process does not skew one op's figure.
struct Profile {
  std::vector<std::vector<double>> op_ms;  // [op][run]
  Clock::time_point last;
};

void on_op(void* user, size_t op, const char*) {
  auto* p = static_cast<Profile*>(user);
  const Clock::time_point now = Clock::now();
  p->op_ms[op].push_back(std::chrono::duration<double, std::milli>(now - p->last).count());
  p->last = now;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::pair<std::string, std::string> split_spec(const std::string& spec, const char* flag) {
  const size_t eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0) {
    throw std::runtime_error(std::string(flag) + " '" + spec + "': expected NAME=file.npy");
  }
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

int run(int argc, char** argv) {
  std::string path;
  int threads = 1, runs = 100, warmup = 10, profile_runs = -1;
  bool reload_inputs = true;
  std::vector<std::string> inputs, outputs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--threads") threads = std::stoi(value());
    else if (arg == "--runs") runs = std::stoi(value());
    else if (arg == "--warmup") warmup = std::stoi(value());
    else if (arg == "--profile-runs") profile_runs = std::stoi(value());
    else if (arg == "--no-input-reload") reload_inputs = false;
    else if (arg == "--input") inputs.push_back(value());
    else if (arg == "--output") outputs.push_back(value());
    else if (arg == "-h" || arg == "--help") {
      std::printf("%s", kUsage);
      return 0;
    } else if (!arg.empty() && arg[0] != '-' && path.empty()) path = arg;
    else throw std::runtime_error("unexpected argument '" + arg + "'\n" + kUsage);
  }
  if (path.empty()) throw std::runtime_error(std::string("no model given\n") + kUsage);
  if (threads < 1 || runs < 0 || warmup < 0) throw std::runtime_error("--threads must be >= 1, --runs/--warmup >= 0");
  if (profile_runs < 0) profile_runs = std::max(1, std::min(runs, 50));

  floe::tools::ModelFile file = floe::tools::read_model_file(path);
  if (floe::backend_initialize() != floe::Status::kOk) {
    throw std::runtime_error("backend initialization failed");
  }
  floe::Model model;
  if (model.Load(file.data.get(), file.size) != floe::Status::kOk) {
    throw std::runtime_error(path + ": " + model.error().message);
  }
  const size_t arena_bytes = static_cast<size_t>(model.arena_size());
  // 64-byte (cache line) aligned, as TF Lite aligns its tensors: SIMD loads of
  // 64-aligned tensor offsets then never straddle two lines.
  const size_t arena_alloc = (arena_bytes + 63) / 64 * 64 + 64;
  floe::tools::AlignedBytes arena(static_cast<uint8_t*>(std::aligned_alloc(64, arena_alloc)));
  if (!arena) throw std::runtime_error("cannot allocate the arena");
  floe::Interpreter interpreter(model, arena.get(), arena_bytes);
  void* pool = nullptr;
#if defined(FLOE_BENCH_WITH_PTHREADPOOL)
  if (threads > 1) pool = pthreadpool_create(static_cast<size_t>(threads));
#else
  if (threads > 1) std::fprintf(stderr, "floe-bench: no thread pool in this build; using 1 thread\n");
#endif
  interpreter.set_thread_pool(pool);
  const Clock::time_point init_start = Clock::now();
  const floe::Status init = interpreter.Init();
  const double init_ms = ms_since(init_start);
  if (init != floe::Status::kOk) {
    throw std::runtime_error(std::string("Init failed: ") + interpreter.error().message +
                             " (op " + std::to_string(interpreter.error().op) + ")");
  }
  // The planner may reuse an input's bytes for later activations (as TFLM's
  // does), so inputs are copied in before every Invoke(), outside the timing.
  std::vector<std::vector<uint8_t>> input_bytes(interpreter.input_count());
  for (size_t i = 0; i < interpreter.input_count(); ++i) {
    const floe::TensorView view = interpreter.input(i);
    std::vector<uint8_t>& bytes = input_bytes[i];
    bytes.assign(view.bytes, 0);
    bool given = false;
    for (const std::string& spec : inputs) {
      const auto [name, npy_path] = split_spec(spec, "--input");
      if (interpreter.input_index(name.c_str()) != static_cast<int>(i)) continue;
      const floe::tools::NpyArray a = floe::tools::read_npy(npy_path);
      if (a.data.size() != view.bytes) {
        throw std::runtime_error(npy_path + ": " + std::to_string(a.data.size()) + " bytes, input '" +
                                 view.name + "' needs " + std::to_string(view.bytes));
      }
      bytes = a.data;
      given = true;
    }
    if (!given && view.dtype == floe::DType::kFloat32) {
      for (size_t k = 0; k < view.bytes / 4; ++k) {
        const float f = static_cast<float>(k % 7) / 7.0f;
        std::memcpy(bytes.data() + 4 * k, &f, 4);
      }
    } else if (!given && view.dtype == floe::DType::kInt8) {  // the same ramp over the int8 range
      for (size_t k = 0; k < view.bytes; ++k) bytes[k] = static_cast<uint8_t>(static_cast<int>(k % 7) * 36 - 128);
    }
  }
  bool loaded_once = false;
  auto load_inputs = [&]() {
    if (loaded_once && !reload_inputs) return;
    loaded_once = true;
    for (size_t i = 0; i < input_bytes.size(); ++i) {
      std::memcpy(interpreter.input(i).data, input_bytes[i].data(), input_bytes[i].size());
    }
  };
  for (int i = 0; i < warmup; ++i) {
    load_inputs();
    if (interpreter.Invoke() != floe::Status::kOk) throw std::runtime_error(interpreter.error().message);
  }
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    load_inputs();
    const Clock::time_point start = Clock::now();
    if (interpreter.Invoke() != floe::Status::kOk) throw std::runtime_error(interpreter.error().message);
    times.push_back(ms_since(start));
  }
  std::sort(times.begin(), times.end());
  for (const std::string& spec : outputs) {
    const auto [name, npy_path] = split_spec(spec, "--output");
    const int index = interpreter.output_index(name.c_str());
    if (index < 0) throw std::runtime_error("--output: no output named '" + name + "'");
    const floe::TensorView v = interpreter.output(static_cast<size_t>(index));
    floe::tools::write_npy(npy_path, v.dtype, std::vector<int64_t>(v.shape.dims, v.shape.dims + v.shape.rank),
                           v.data);
  }

  // Per-op profile: separate runs with an observer between ops.
  const size_t op_count = model.operator_count();
  Profile profile{std::vector<std::vector<double>>(op_count), Clock::now()};
  interpreter.set_observer(on_op, &profile);
  for (int i = 0; i < profile_runs; ++i) {
    load_inputs();
    profile.last = Clock::now();
    if (interpreter.Invoke() != floe::Status::kOk) throw std::runtime_error(interpreter.error().message);
  }
  interpreter.set_observer(nullptr, nullptr);

  const uint64_t activations = model.activation_arena_size();
  const uint64_t budget = model.arena_size() - activations;
  std::printf("floe-bench: %s\n", path.c_str());
  std::printf("  backend: %s; %zu of %zu ops on it; threads %d\n", floe::backend_description(),
              interpreter.backend_op_count(), op_count, threads);
  std::printf("  init: %.3f ms\n", init_ms);
  if (runs > 0) {
    std::printf("  latency over %d runs (after %d warm-up): min %.4f ms, median %.4f ms, max %.4f ms\n",
                runs, warmup, times.front(), times[times.size() / 2], times.back());
  }
  std::printf("  arena: activations %llu B, backend persistent %llu B (budget %llu B), total %llu B\n",
              static_cast<unsigned long long>(activations),
              static_cast<unsigned long long>(interpreter.backend_arena_used()),
              static_cast<unsigned long long>(budget),
              static_cast<unsigned long long>(model.arena_size()));
  std::vector<double> op_median(op_count);
  double total = 0;
  for (size_t i = 0; i < op_count; ++i) total += op_median[i] = median(profile.op_ms[i]);
  std::printf("  per-op profile (median of %d runs; share of the sum of op medians):\n", profile_runs);
  std::printf("    %3s  %-18s %-10s %10s %7s  %s\n", "#", "op", "backend", "ms", "share", "node");
  const auto* ops = model.schema()->operators();
  for (size_t i = 0; i < op_count; ++i) {
    const auto* op = ops->Get(static_cast<uint32_t>(i));
    const double ms = op_median[i];
    // "xnnpack/1t": the converter judged the op too small for the thread pool.
    // "integer": floe's own int8/int16 kernels (the Cortex-M backend's; on a
    // host, their SIMD build); "cortex-m": its float kernels.
    const bool cortexm = op->backend() == floe::schema::Backend::CORTEX_M;
    const floe::DType out_dtype =
        op->outputs()->size() == 0
            ? floe::DType::kFloat32
            : static_cast<floe::DType>(model.schema()->tensors()->Get(static_cast<uint32_t>(op->outputs()->Get(0)))->dtype());
    const bool integer = out_dtype == floe::DType::kInt8 || out_dtype == floe::DType::kInt16;
    const char* backend = interpreter.runs_on_backend(i)
                              ? (op->single_threaded() && threads > 1 ? "xnnpack/1t" : "xnnpack")
                          : cortexm ? (integer ? "integer" : "cortex-m")
                                    : "reference";
    std::printf("    %3zu  %-18s %-10s %10.4f %6.1f%%  %s\n", i, floe::schema::EnumNameOpCode(op->opcode()), backend, ms,
                total > 0 ? 100.0 * ms / total : 0.0, op->name() ? op->name()->c_str() : "");
  }
#if defined(FLOE_BENCH_WITH_PTHREADPOOL)
  if (pool != nullptr) pthreadpool_destroy(static_cast<pthreadpool_t>(pool));
#endif
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "floe-bench: error: %s\n", e.what());
    return 2;
  }
}
