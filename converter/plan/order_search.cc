// SPDX-License-Identifier: Apache-2.0
// Op order and arena placement searched together (see order_search.h).
#include "converter/plan/order_search.h"

#include <algorithm>
#include <cstdint>
#include <random>

#include "converter/plan/arena_plan.h"

namespace floe::conv {
namespace {

// Arena first; at equal arenas the higher floor (the smaller ratio).
bool better(uint64_t arena, uint64_t floor, uint64_t than_arena, uint64_t than_floor) {
  return arena < than_arena || (arena == than_arena && floor > than_floor);
}

}  // namespace

OrderSearch search_order_for_arena(const LoweredModel& model, uint64_t alignment, uint64_t finer_alignment) {
  const size_t n = model.ops.size();
  OrderSearch result;
  result.order.resize(n);
  for (size_t i = 0; i < n; ++i) result.order[i] = static_cast<int>(i);
  if (n < 3 || n > kOrderSearchMaxOps) return result;

  // Producers and consumers of each op through arena values; a value written
  // twice leaves the order as it is (as schedule_ops does).
  std::vector<int> writer(model.values.size(), -1);
  for (size_t i = 0; i < n; ++i) {
    for (int v : model.ops[i].outputs) {
      if (v < 0 || model.values[static_cast<size_t>(v)].is_constant()) continue;
      if (writer[static_cast<size_t>(v)] >= 0 && writer[static_cast<size_t>(v)] != static_cast<int>(i)) return result;
      writer[static_cast<size_t>(v)] = static_cast<int>(i);
    }
  }
  std::vector<std::vector<int>> preds(n), succs(n);
  for (size_t i = 0; i < n; ++i) {
    for (int v : model.ops[i].inputs) {
      if (v < 0) continue;
      const int w = writer[static_cast<size_t>(v)];
      if (w < 0 || w == static_cast<int>(i)) continue;
      if (w > static_cast<int>(i)) return result;  // read before its write: keep the file's order
      preds[i].push_back(w);
      succs[static_cast<size_t>(w)].push_back(static_cast<int>(i));
    }
  }

  const ArenaPlan start = plan_model_arena(model, alignment, finer_alignment);
  result.start_arena = result.arena = start.arena_size;
  result.start_floor = result.floor = start.lower_bound;
  if (start.arena_size <= start.lower_bound) return result;  // already at its floor

  LoweredModel work = model;
  auto quick_plan = [&](const std::vector<int>& order) {
    for (size_t k = 0; k < n; ++k) work.ops[k] = model.ops[static_cast<size_t>(order[k])];
    ++result.orders_tried;
    return plan_model_arena(work, alignment, finer_alignment, {}, PlanEffort::kPortfolio);
  };

  std::vector<int> best = result.order;
  // Candidates' quick plans compete with the starting order's full one.
  uint64_t best_arena = start.arena_size, best_floor = start.lower_bound;
  std::mt19937_64 rng(0x243f6a8885a308d3ull);

  // Randomized list schedules near the starting order: each step runs the
  // ready op of smallest (its place in the starting order + noise), noise up
  // to a width that grows round by round (a few places, then the whole graph).
  // The walk below starts from the best quick plan (which may still be
  // above the starting order's full one).
  std::vector<int> seed;
  uint64_t seed_arena = UINT64_MAX, seed_floor = 0;
  std::vector<size_t> missing(n);
  for (int round = 0; round < kOrderSearchOrders / 2 && best_arena > best_floor; ++round) {
    const size_t width = std::max<size_t>(2, std::min<size_t>(n, size_t{2} << (round % 8)));
    std::vector<double> priority(n);
    for (size_t i = 0; i < n; ++i)
      priority[i] = static_cast<double>(i) + static_cast<double>(rng() % (width * 16)) / 16.0;
    for (size_t i = 0; i < n; ++i) missing[i] = preds[i].size();
    std::vector<int> ready, order;
    order.reserve(n);
    for (size_t i = 0; i < n; ++i)
      if (missing[i] == 0) ready.push_back(static_cast<int>(i));
    while (!ready.empty()) {
      size_t pick = 0;
      for (size_t r = 1; r < ready.size(); ++r) {
        const double a = priority[static_cast<size_t>(ready[r])], b = priority[static_cast<size_t>(ready[pick])];
        if (a < b || (a == b && ready[r] < ready[pick])) pick = r;
      }
      const int op = ready[pick];
      ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(pick));
      order.push_back(op);
      for (int s : succs[static_cast<size_t>(op)])
        if (--missing[static_cast<size_t>(s)] == 0) ready.push_back(s);
    }
    const ArenaPlan plan = quick_plan(order);
    if (better(plan.arena_size, plan.lower_bound, best_arena, best_floor)) {
      best = order;
      best_arena = plan.arena_size;
      best_floor = plan.lower_bound;
    }
    if (better(plan.arena_size, plan.lower_bound, seed_arena, seed_floor)) {
      seed = std::move(order);
      seed_arena = plan.arena_size;
      seed_floor = plan.lower_bound;
    }
  }

  // Then walks: one op at a time moved to another place, from the best order
  // and from the best quick plan, half the remaining budget each.
  auto walk = [&](std::vector<int> current, uint64_t current_arena, uint64_t current_floor, int until) {
    std::vector<size_t> position(n);
    for (size_t k = 0; k < n; ++k) position[static_cast<size_t>(current[k])] = k;
    int attempts = 0;
    while (best_arena > best_floor && result.orders_tried < until && attempts < 20 * kOrderSearchOrders) {
      ++attempts;
      // Move one op anywhere between its last producer and its first consumer.
      const size_t from = static_cast<size_t>(rng() % n);
      const size_t op = static_cast<size_t>(current[from]);
      size_t lo = 0, hi = n - 1;
      for (int p : preds[op]) lo = std::max(lo, position[static_cast<size_t>(p)] + 1);
      for (int s : succs[op]) hi = std::min(hi, position[static_cast<size_t>(s)] - 1);
      if (hi <= lo) continue;
      const size_t to = lo + static_cast<size_t>(rng() % (hi - lo + 1));
      if (to == from) continue;
      std::vector<int> order = current;
      if (to < from) {
        std::rotate(order.begin() + static_cast<std::ptrdiff_t>(to), order.begin() + static_cast<std::ptrdiff_t>(from),
                    order.begin() + static_cast<std::ptrdiff_t>(from) + 1);
      } else {
        std::rotate(order.begin() + static_cast<std::ptrdiff_t>(from),
                    order.begin() + static_cast<std::ptrdiff_t>(from) + 1,
                    order.begin() + static_cast<std::ptrdiff_t>(to) + 1);
      }
      const ArenaPlan plan = quick_plan(order);
      if (better(current_arena, current_floor, plan.arena_size, plan.lower_bound)) continue;  // worse
      current = std::move(order);
      current_arena = plan.arena_size;
      current_floor = plan.lower_bound;
      for (size_t k = 0; k < n; ++k) position[static_cast<size_t>(current[k])] = k;
      if (better(current_arena, current_floor, best_arena, best_floor)) {
        best = current;
        best_arena = current_arena;
        best_floor = current_floor;
      }
    }
  };
  const int remaining = kOrderSearchOrders - result.orders_tried;
  walk(best, best_arena, best_floor, result.orders_tried + remaining / 2);
  if (!seed.empty()) walk(seed, seed_arena, seed_floor, kOrderSearchOrders);

  if (best == result.order) return result;
  for (size_t k = 0; k < n; ++k) work.ops[k] = model.ops[static_cast<size_t>(best[k])];
  const ArenaPlan chosen = plan_model_arena(work, alignment, finer_alignment);
  if (!better(chosen.arena_size, chosen.lower_bound, start.arena_size, start.lower_bound)) return result;
  result.order = std::move(best);
  result.reordered = true;
  result.arena = chosen.arena_size;
  result.floor = chosen.lower_bound;
  return result;
}

}  // namespace floe::conv
