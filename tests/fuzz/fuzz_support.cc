// SPDX-License-Identifier: Apache-2.0
// Guarded buffers and the model-run check used by every harness (fuzz_support.h).
#include "tests/fuzz/fuzz_support.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sys/stat.h>
#include <unistd.h>

#include <set>

#include "converter/frontend/checkpoint/checkpoint_reader.h"
#include "converter/ir/error.h"
#include "runtime/core/interpreter.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FLOE_FUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FLOE_FUZZ_ASAN 1
#endif
#if defined(FLOE_FUZZ_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace floe::fuzz {
namespace {

constexpr size_t kGuardBytes = 64;

// Touches every byte of a view so ASan checks the view lies in live memory.
uint32_t read_all(const TensorView& view) {
  const auto* p = static_cast<const volatile uint8_t*>(view.data);
  uint32_t sum = 0;
  if (p == nullptr) return 0;
  for (size_t i = 0; i < view.bytes; ++i) sum += p[i];
  return sum;
}

struct ExampleCheckpoint {
  std::string prefix;
  std::set<std::string> keys;
};

const std::vector<ExampleCheckpoint>& example_checkpoints() {
  static const std::vector<ExampleCheckpoint> checkpoints = [] {
    std::vector<ExampleCheckpoint> list;
    for (const char* prefix : {"examples/conv_seed/model/model.ckpt",
                               "examples/mnist_mlp/model/model.ckpt"}) {
      ExampleCheckpoint c;
      c.prefix = source_path(prefix);
      try {
        const auto keys = floe::conv::CheckpointReader::open(c.prefix).keys();
        c.keys.insert(keys.begin(), keys.end());
      } catch (const floe::conv::ConvertError&) {
        continue;  // example absent: those graphs are converted without a checkpoint
      }
      list.push_back(std::move(c));
    }
    return list;
  }();
  return checkpoints;
}

}  // namespace

GuardedBuffer::GuardedBuffer(size_t size, const void* contents) : size_(size) {
  void* p = nullptr;
  if (posix_memalign(&p, 16, size + kGuardBytes) != 0) std::abort();
  data_ = static_cast<uint8_t*>(p);
  std::memset(data_, 0, size + kGuardBytes);
  if (contents != nullptr && size > 0) std::memcpy(data_, contents, size);
#if defined(FLOE_FUZZ_ASAN)
  ASAN_POISON_MEMORY_REGION(data_ + size, kGuardBytes);
#endif
}

GuardedBuffer::~GuardedBuffer() {
#if defined(FLOE_FUZZ_ASAN)
  ASAN_UNPOISON_MEMORY_REGION(data_ + size_, kGuardBytes);
#endif
  std::free(data_);
}

bool run_model_bytes(const uint8_t* data, size_t size) {
  GuardedBuffer buffer(size, data);
  {
    // The checksum path must be as robust as the rest (it runs first).
    Model checked;
    LoadOptions options;
    options.verify_checksum = true;
    (void)checked.Load(buffer.data(), size, options);
  }
  Model model;
  if (model.Load(buffer.data(), size) != Status::kOk) return false;
  if (model.arena_size() > kMaxFuzzArena) return false;
  GuardedBuffer arena(static_cast<size_t>(model.arena_size()));
  Interpreter interpreter(model, arena.data(), arena.size());
  if (interpreter.Init() != Status::kOk) return false;
  // Every view the API hands out must lie inside the arena or the model.
  volatile uint32_t sink = 0;
  for (size_t i = 0; i < interpreter.tensor_count(); ++i) sink = sink + read_all(interpreter.tensor(i));
  (void)interpreter.Invoke();
  (void)interpreter.Invoke();  // a second run must be just as safe
  for (size_t i = 0; i < interpreter.output_count(); ++i) sink = sink + read_all(interpreter.output(i));
  for (size_t i = 0; i < interpreter.input_count(); ++i) sink = sink + read_all(interpreter.input(i));
  return true;
}

void require_valid_converted_model(const std::vector<uint8_t>& bytes) {
  GuardedBuffer buffer(bytes.size(), bytes.data());
  Model model;
  LoadOptions options;
  options.verify_checksum = true;
  if (model.Load(buffer.data(), bytes.size(), options) != Status::kOk) {
    std::fprintf(stderr, "converter emitted a model the runtime rejects: %s (op %d, tensor %d)\n",
                 model.error().message, model.error().op, model.error().tensor);
    std::abort();
  }
  if (model.arena_size() > kMaxFuzzArena) return;
  GuardedBuffer arena(static_cast<size_t>(model.arena_size()));
  Interpreter interpreter(model, arena.data(), arena.size());
  if (interpreter.Init() != Status::kOk) {
    std::fprintf(stderr, "converter emitted a model whose Init fails: %s (op %d)\n",
                 interpreter.error().message, interpreter.error().op);
    std::abort();
  }
  // kKernelError is a data-dependent refusal (an index out of range, an integer
  // division by zero) that zeroed inputs can legitimately provoke, as in TF;
  // kLoopBoundExceeded a run-time loop still running at its bound.
  const Status invoke = interpreter.Invoke();
  if (invoke != Status::kOk && invoke != Status::kKernelError && invoke != Status::kLoopBoundExceeded &&
      invoke != Status::kIndexOutOfRange) {
    std::fprintf(stderr, "converter emitted a model whose Invoke fails: %s (op %d)\n",
                 interpreter.error().message, interpreter.error().op);
    std::abort();
  }
}

namespace {
std::string node_of(const std::string& input) {
  std::string name = input.empty() || input[0] != '^' ? input : input.substr(1);
  const size_t colon = name.find(':');
  return colon == std::string::npos ? name : name.substr(0, colon);
}

}  // namespace

// Unconsumed nodes that compute something, as a user would list --outputs.
std::vector<std::string> pick_outputs(const floe::tfproto::GraphDef& graph) {
  std::set<std::string> consumed;
  for (const auto& node : graph.node()) {
    for (const auto& input : node.input()) consumed.insert(node_of(input));
  }
  static const std::set<std::string> kNotOutputs = {"NoOp", "Assign", "SaveV2", "RestoreV2",
                                                    "Save", "Restore", "MergeV2Checkpoints"};
  std::vector<std::string> outputs;
  for (const auto& node : graph.node()) {
    if (consumed.count(node.name()) || kNotOutputs.count(node.op()) ||
        node.name().rfind("save", 0) == 0) {
      continue;
    }
    outputs.push_back(node.name());
    if (outputs.size() == 3) break;
  }
  if (outputs.empty() && graph.node_size() > 0) outputs.push_back(graph.node(graph.node_size() - 1).name());
  return outputs;
}

std::string matching_checkpoint(const floe::tfproto::GraphDef& graph) {
  for (const ExampleCheckpoint& c : example_checkpoints()) {
    for (const auto& node : graph.node()) {
      if (c.keys.count(node.name())) return c.prefix;
    }
  }
  return "";
}

const std::string& scratch_dir() {
  // Never destroyed, so the exit handler that removes the directory can use it.
  static const std::string* const dir = [] {
    // $TMPDIR first: a harness that writes a file per input is disk-bound on
    // /tmp when another job writes heavily (point it at a tmpfs such as /dev/shm).
    const char* tmp = std::getenv("TMPDIR");
    auto* d = new std::string(std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/floe-fuzz-" +
                              std::to_string(::getpid()));
    if (::mkdir(d->c_str(), 0700) != 0 && errno != EEXIST) std::abort();
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratch_dir(), ignored);
    });
    return d;
  }();
  return *dir;
}

void write_file(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string source_path(const std::string& relative) {
  return std::string(FLOE_SOURCE_DIR) + "/" + relative;
}

}  // namespace floe::fuzz
