// SPDX-License-Identifier: Apache-2.0
// The XNNPACK implementation of runtime/core/backend.h. Init: one bump region
// in the arena after the activations holds the backend state (one operator
// handle per op) and everything XNNPACK allocates while floe creates and sets
// up the operators with the planned arena pointers. Invoke: xnn_run_operator
// only. The region's limit is the converter's budget (Model.xnnpack_arena_size),
// not the caller's spare bytes, so an under-budget is caught on every arena.
#include <pthreadpool.h>
#include <xnnpack.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

#include "runtime/core/backend.h"
#include "runtime/core/model.h"
#include "runtime/kernels/xnnpack/arena_allocator.h"
#include "runtime/kernels/xnnpack/operators.h"
#include "schemas/contract/xnnpack_budget.h"
#include "schemas/floe_generated.h"

namespace floe {

struct BackendState {
  uint32_t op_count;
  xnn_operator_t* ops;  // [op_count]; null = the op runs its reference kernel
};

// The converter's replay of this region (schemas/contract/xnnpack_budget.h)
// assumes these sizes.
static_assert(sizeof(BackendState) == xnnpack_budget::state_bytes(sizeof(void*)), "BackendState");
static_assert(sizeof(xnn_operator_t) == sizeof(void*), "operator handle");
static_assert(XNN_EXTRA_BYTES == xnnpack_budget::kExtraBytes, "XNNPACK version");

namespace {

#if defined(__aarch64__)
constexpr const char* kTarget = xnnpack_budget::kTargetAarch64;
#elif defined(__x86_64__)
constexpr const char* kTarget = xnnpack_budget::kTargetX86_64;
#else
constexpr const char* kTarget = "";
#endif

int g_init_state = 0;  // 0 = not tried, 1 = ok, 2 = failed (accessed with __atomic)

bool equal(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}

#if defined(__x86_64__)
// Whether an int8 op of `model` runs on XNNPACK (its QC8 / QS8 operators).
bool has_int8_xnnpack_op(const Model& model) {
  const auto* tensors = model.schema()->tensors();
  for (const schema::Operator* op : *model.schema()->operators()) {
    if (op->backend() != schema::Backend::XNNPACK || op->outputs()->size() == 0) continue;
    if (tensors->Get(static_cast<uint32_t>(op->outputs()->Get(0)))->dtype() == schema::DType::INT8) return true;
  }
  return false;
}
#endif

bool target_matches(const Model& model) {
  const auto* target = model.schema()->target();
  if (kTarget[0] == '\0' || target == nullptr) return false;
  if (equal(target->c_str(), kTarget)) return true;
#if defined(__x86_64__)
  // XNNPACK picks its AVX-512 f32 kernels exactly when the CPU (and the OS)
  // has AVX-512F, the class such a model's budget was computed for; its int8
  // AVX-512 kernels need CD, BW, DQ and VL too (Skylake-X and later), so an
  // int8 model's class is those CPUs.
  if (!equal(target->c_str(), xnnpack_budget::kTargetX86_64Avx512) || !__builtin_cpu_supports("avx512f")) {
    return false;
  }
  return !has_int8_xnnpack_op(model) ||
         (__builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512bw") &&
          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"));
#elif defined(__aarch64__)
  // XNNPACK (cpuinfo) picks its dot-product int8 kernels exactly when Linux
  // reports the extension (HWCAP_ASIMDDP, bit 20).
  constexpr unsigned long kHwcapAsimdDotProduct = 1ul << 20;
  return equal(target->c_str(), xnnpack_budget::kTargetAarch64NoDotprod) &&
         (getauxval(AT_HWCAP) & kHwcapAsimdDotProduct) == 0;
#else
  return false;
#endif
}

Status fail(BackendResult* result, Status status, const char* message, int32_t op) {
  result->error.status = status;
  result->error.message = message;
  result->error.op = op;
  return status;
}

}  // namespace

Status backend_initialize() {
  const int state = __atomic_load_n(&g_init_state, __ATOMIC_ACQUIRE);
  if (state != 0) return state == 1 ? Status::kOk : Status::kKernelError;
  // XNNPACK serializes its own one-time set-up (pthread_once); the first
  // allocator passed in any xnn_initialize() call of the process is kept.
  const bool ok = xnn_initialize(xnnpack::arena_allocator()) == xnn_status_success;
  __atomic_store_n(&g_init_state, ok ? 1 : 2, __ATOMIC_RELEASE);
  return ok ? Status::kOk : Status::kKernelError;
}

const char* backend_description() {
#if defined(__aarch64__)
  return "xnnpack (aarch64)";
#elif defined(__x86_64__)
  return "xnnpack (x86_64)";
#else
  return "xnnpack (no matching target)";
#endif
}

bool backend_active(const Model& model) {
  if (!model.loaded() || !target_matches(model)) return false;
  for (const schema::Operator* op : *model.schema()->operators()) {
    if (op->backend() == schema::Backend::XNNPACK) return true;
  }
  return false;
}

uint64_t backend_arena_bytes(const Model& model) {
  return backend_active(model) ? model.schema()->xnnpack_arena_size() : 0;
}

Status backend_prepare(const Model& model, const BackendInit& init, BackendResult* result) {
  *result = BackendResult();
  if (!backend_active(model)) return Status::kOk;
  if (backend_initialize() != Status::kOk) {
    return fail(result, Status::kKernelError,
                FLOE_MSG("xnn_initialize failed (CPU without the SIMD XNNPACK needs?)"), -1);
  }
  const uintptr_t arena = reinterpret_cast<uintptr_t>(init.arena);
  const uintptr_t activations_end = arena + init.activation_bytes;
  const uintptr_t base = (activations_end + kBackendRegionAlignment - 1) &
                         ~uintptr_t{kBackendRegionAlignment - 1};
  const uint64_t budget = model.schema()->xnnpack_arena_size();
  if (budget < kBackendRegionAlignment || init.arena_bytes < init.activation_bytes ||
      budget > init.arena_bytes - init.activation_bytes) {
    return fail(result, Status::kArenaTooSmall,
                FLOE_MSG("arena lacks room for the XNNPACK region (size it with Model::arena_size())"),
                -1);
  }
  xnnpack::ArenaRegion region;
  region.base = reinterpret_cast<uint8_t*>(base);
  // The budget reserves a whole alignment unit for the gap; what it does not
  // use stays unused, so the region is the same size on every arena address.
  region.limit = static_cast<size_t>(budget - kBackendRegionAlignment);
  xnnpack::RegionScope scope(&region);

  const auto* ops = model.schema()->operators();
  const uint32_t op_count = ops->size();
  auto* state = static_cast<BackendState*>(
      xnnpack::region_allocate(&region, xnnpack_budget::kMinAlignment, sizeof(BackendState)));
  auto* handles = static_cast<xnn_operator_t*>(
      xnnpack::region_allocate(&region, xnnpack_budget::kMinAlignment, sizeof(xnn_operator_t) * (op_count ? op_count : 1)));
  if (state == nullptr || handles == nullptr) {
    return fail(result, Status::kArenaTooSmall,
                FLOE_MSG("XNNPACK region budget is too small for the backend state"), -1);
  }
  state->op_count = op_count;
  state->ops = handles;
  for (uint32_t i = 0; i < op_count; ++i) handles[i] = nullptr;

  for (uint32_t i = 0; i < op_count; ++i) {
    const schema::Operator* op = ops->Get(i);
    if (op->backend() != schema::Backend::XNNPACK) continue;
    const xnnpack::XnnOpContext ctx{op, &model, init.region_arenas};
    // Setup tiles the work for the pool the op will run on (none when single-threaded).
    const xnnpack::CreateArgs args{&ctx, &region, init.arena, init.activation_bytes,
                                   op->single_threaded() ? nullptr : static_cast<pthreadpool_t>(init.thread_pool)};
    const char* why = FLOE_MSG("XNNPACK operator creation failed");
    xnn_operator_t handle = nullptr;
    Status status = xnnpack::create_operator(args, &handle, &why);
    if (status == Status::kOk && handle != nullptr) {
      const uintptr_t h = reinterpret_cast<uintptr_t>(handle);
      if (h < base || h >= base + region.limit) {
        // XNNPACK's allocator is process-global and first-caller-wins: another
        // component initialized XNNPACK first, with the heap. Refuse to run.
        xnn_delete_operator(handle);
        return fail(result, Status::kKernelError,
                    FLOE_MSG("XNNPACK was initialized before floe with another allocator "
                             "(its allocator is process-global): call floe::backend_initialize() "
                             "before any other XNNPACK user"),
                    static_cast<int32_t>(i));
      }
    }
    if (status != Status::kOk && region.exhausted) {
      status = Status::kArenaTooSmall;
      why = FLOE_MSG("XNNPACK needed more arena than the converter budgeted (Model.xnnpack_arena_size)");
    }
    if (status != Status::kOk) return fail(result, status, why, static_cast<int32_t>(i));
    handles[i] = handle;
    ++result->ops_taken;
  }
  result->state = state;
  // What Init touched: the persistent allocations and any Init scratch above them.
  result->bytes_used = kBackendRegionAlignment + (region.peak > region.used ? region.peak : region.used);
  return Status::kOk;
}

bool backend_owns(const BackendState* state, uint32_t op) {
  return state != nullptr && op < state->op_count && state->ops[op] != nullptr;
}

namespace {
void run_on_pthreadpool(void* pool, ParallelTask task, void* context, size_t count) {
  pthreadpool_parallelize_1d(static_cast<pthreadpool_t>(pool), task, context, count, 0);
}
}  // namespace

OpThreads backend_op_threads(void* thread_pool) {
  OpThreads threads;
  const size_t count = pthreadpool_get_threads_count(static_cast<pthreadpool_t>(thread_pool));
  if (count > 1) {
    threads.run = run_on_pthreadpool;
    threads.pool = thread_pool;
    threads.threads = count;
  }
  return threads;
}

Status backend_run(BackendState* state, uint32_t op, void* thread_pool) {
  return xnn_run_operator(state->ops[op], static_cast<pthreadpool_t>(thread_pool)) ==
                 xnn_status_success
             ? Status::kOk
             : Status::kKernelError;
}

}  // namespace floe
