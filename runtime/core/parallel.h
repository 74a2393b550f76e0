// SPDX-License-Identifier: Apache-2.0
// How a kernel splits one op's work across the caller's thread pool
// (Interpreter::set_thread_pool). XNNPACK tiles its own operators; floe's own
// kernels on the host targets (the exact integer path) ask here instead.
//
// While Init()/Invoke() runs an op whose record allows the pool
// (PreparedOp::kUseThreadPool: the converter marks ops too small to repay a
// wake-up single-threaded), the interpreter publishes the pool for the calling
// thread; parallel_for then runs task(context, 0..count-1) on it and returns
// when all are done. Everywhere else (no pool, a build without one, a task
// already on a worker, a kernel called directly by a test) the tasks run in
// order on the caller's thread. Tasks must write disjoint outputs: the results
// are then the same bytes whichever thread runs which task.
//
// Header-only, so the kernel libraries need no link dependency on the core;
// firmware kernels never call it (no pool, and no thread-local storage used).
#pragma once

#include <stddef.h>

namespace floe {

using ParallelTask = void (*)(void* context, size_t task);

// The pool the running op may use: a runner for the build's pool library
// (pthreadpool), the pool, and its thread count (including the caller's).
struct OpThreads {
  void (*run)(void* pool, ParallelTask task, void* context, size_t count) = nullptr;
  void* pool = nullptr;
  size_t threads = 1;
};

// The calling thread's current op's pool: set by the interpreter around each
// op it lets use one, empty otherwise.
inline OpThreads& current_op_threads() {
  static thread_local OpThreads threads;
  return threads;
}

// Threads the running op may split its work across (1: just the caller's).
inline size_t parallel_threads() { return current_op_threads().threads; }

// The caller's thread runs tasks too: while they run, its pool is withdrawn,
// so a task that reaches parallel_for again runs its tasks in order.
inline void parallel_for(size_t count, ParallelTask task, void* context) {
  OpThreads& current = current_op_threads();
  if (current.run != nullptr && count > 1) {
    const OpThreads pool = current;
    current = OpThreads{};
    pool.run(pool.pool, task, context, count);
    current = pool;
    return;
  }
  for (size_t i = 0; i < count; ++i) task(context, i);
}

// Publishes `threads` for the ops the caller runs until it is destroyed.
class OpThreadsScope {
 public:
  explicit OpThreadsScope(const OpThreads& threads) : saved_(current_op_threads()) {
    current_op_threads() = threads;
  }
  ~OpThreadsScope() { current_op_threads() = saved_; }
  OpThreadsScope(const OpThreadsScope&) = delete;
  OpThreadsScope& operator=(const OpThreadsScope&) = delete;

 private:
  OpThreads saved_;
};

}  // namespace floe
