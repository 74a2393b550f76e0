// SPDX-License-Identifier: Apache-2.0
// The arena planner (lower bound, portfolio of placement orders, exhaustive or
// local search) and its independent checker; see the header for the algorithm.
// Invariant the planner relies on: every placed buffer occupies
// [offset, offset + round_up(size)), with offset aligned, so every candidate
// offset the gap scans produce is aligned too.
#include "converter/plan/memory_planner.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <utility>

#include "converter/ir/error.h"

namespace floe::conv {
namespace {

constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();

// Rounds `value` up to a multiple of `alignment` (> 0). Returns false instead
// of wrapping around when the result does not fit in 64 bits.
bool round_up_checked(uint64_t value, uint64_t alignment, uint64_t* rounded) {
  const uint64_t remainder = value % alignment;
  if (remainder == 0) {
    *rounded = value;
    return true;
  }
  const uint64_t padding = alignment - remainder;
  if (value > kMaxU64 - padding) return false;
  *rounded = value + padding;
  return true;
}

std::string describe(size_t index, const BufferRequest& r) {
  std::ostringstream out;
  out << "buffer " << index << " (size " << r.size << ", ops [" << r.first_op << ", " << r.last_op
      << "])";
  return out.str();
}


// Largest sum of occupied bytes live at one op (saturating at 2^64 - 1).
uint64_t aligned_live_bound(const std::vector<BufferRequest>& requests,
                            const std::vector<uint64_t>& occupied) {
  std::vector<std::pair<int64_t, size_t>> starts, stops;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].size == 0) continue;
    starts.emplace_back(requests[i].first_op, i);
    stops.emplace_back(int64_t{requests[i].last_op} + 1, i);
  }
  std::sort(starts.begin(), starts.end());
  std::sort(stops.begin(), stops.end());
  uint64_t live = 0, peak = 0;
  size_t s = 0, e = 0;
  while (s < starts.size()) {
    const int64_t op = starts[s].first;
    while (e < stops.size() && stops[e].first <= op) live -= occupied[stops[e++].second];
    while (s < starts.size() && starts[s].first == op) {
      const uint64_t add = occupied[starts[s++].second];
      live = live > kMaxU64 - add ? kMaxU64 : live + add;
    }
    peak = std::max(peak, live);
  }
  return peak;
}

// Where each buffer of an order goes among the placed ones it is live with.
enum class Fit : uint8_t {
  kFirst,     // the lowest offset that holds it
  kBest,      // the smallest hole that holds it (the top if none does)
  kTwoSided,  // under the target arena: at the bottom or the top, opposite to
              // the latest-starting placed buffer it meets (so on a chain the
              // buffers alternate between the two ends, which meets the bound)
};
constexpr Fit kFits[] = {Fit::kFirst, Fit::kBest, Fit::kTwoSided};

struct Candidate {
  std::vector<uint32_t> order;  // item positions in placement order
  Fit fit = Fit::kFirst;
  uint64_t high = kMaxU64;      // arena it needs (kMaxU64: none yet, or it overflows)
};

// The buffers that occupy bytes ("items"), who is live with whom, and the
// placement of an order of them.
class Placer {
 public:
  Placer(const std::vector<BufferRequest>& requests, const std::vector<uint64_t>& occupied, uint64_t target)
      : requests_(requests), target_(target) {
    for (size_t i = 0; i < requests.size(); ++i) {
      if (requests[i].size == 0) continue;
      request_of_.push_back(i);
      size_.push_back(occupied[i]);
    }
    const size_t n = request_of_.size();
    conflicts_.resize(n);
    // Sweep by start: each item meets the earlier-starting items still live.
    std::vector<uint32_t> by_start(n);
    for (uint32_t k = 0; k < n; ++k) by_start[k] = k;
    std::sort(by_start.begin(), by_start.end(), [&](uint32_t a, uint32_t b) {
      return std::make_pair(req(a).first_op, a) < std::make_pair(req(b).first_op, b);
    });
    std::vector<uint32_t> active;
    for (uint32_t k : by_start) {
      size_t kept = 0;
      for (uint32_t other : active) {
        if (req(other).last_op < req(k).first_op) continue;
        active[kept++] = other;
        conflicts_[k].push_back(other);
        conflicts_[other].push_back(k);
      }
      active.resize(kept);
      active.push_back(k);
    }
    work_per_placement_ = n;
    for (const auto& c : conflicts_) work_per_placement_ += c.size();
  }

  size_t item_count() const { return request_of_.size(); }
  size_t request_of(size_t item) const { return request_of_[item]; }

  // The high-water mark of placing `order`; gives up (returns kMaxU64) once it
  // reaches `give_up_at` or would overflow.
  uint64_t place(const std::vector<uint32_t>& order, Fit fit, uint64_t give_up_at) const {
    offset_.assign(size_.size(), kUnplaced);
    on_top_.assign(size_.size(), false);
    uint64_t high = 0;
    for (uint32_t k : order) {
      const uint64_t at = fit_of(k, fit);
      if (at == kMaxU64) return kMaxU64;
      offset_[k] = at;
      high = std::max(high, at + size_[k]);
      if (high >= give_up_at) return kMaxU64;
    }
    return high;
  }

  std::vector<uint64_t> offsets_of(const std::vector<uint32_t>& order, Fit fit) const {
    place(order, fit, kMaxU64);
    return offset_;
  }

  std::vector<std::vector<uint32_t>> portfolio_orders() const {
    const size_t n = size_.size();
    std::vector<uint32_t> identity(n);
    for (uint32_t k = 0; k < n; ++k) identity[k] = k;
    // Bytes live at the busiest op of each item's lifetime.
    std::vector<uint64_t> peak_step(n, 0), neighbour_bytes(n, 0);
    for (uint32_t k = 0; k < n; ++k) {
      neighbour_bytes[k] = size_[k];
      for (uint32_t other : conflicts_[k]) neighbour_bytes[k] += size_[other];
    }
    {
      std::map<int64_t, uint64_t> step_bytes;  // op -> live bytes, only at item starts
      for (uint32_t k = 0; k < n; ++k) step_bytes[req(k).first_op] = 0;
      for (uint32_t k = 0; k < n; ++k) {
        for (auto it = step_bytes.lower_bound(req(k).first_op);
             it != step_bytes.end() && it->first <= req(k).last_op; ++it)
          it->second += size_[k];
      }
      for (uint32_t k = 0; k < n; ++k) {
        for (auto it = step_bytes.lower_bound(req(k).first_op);
             it != step_bytes.end() && it->first <= req(k).last_op; ++it)
          peak_step[k] = std::max(peak_step[k], it->second);
      }
    }
    auto length = [&](uint32_t k) { return int64_t{req(k).last_op} - req(k).first_op + 1; };
    auto sorted = [&](auto key_before) {
      std::vector<uint32_t> order = identity;
      std::stable_sort(order.begin(), order.end(), key_before);
      return order;
    };
    auto tie = [&](uint32_t a, uint32_t b) {  // larger, then earlier, then by index
      if (size_[a] != size_[b]) return size_[a] > size_[b];
      return std::make_pair(req(a).first_op, a) < std::make_pair(req(b).first_op, b);
    };
    std::vector<std::vector<uint32_t>> orders;
    orders.push_back(sorted([&](uint32_t a, uint32_t b) {
      if (req(a).size != req(b).size) return req(a).size > req(b).size;
      return std::make_pair(req(a).first_op, a) < std::make_pair(req(b).first_op, b);
    }));
    orders.push_back(sorted([&](uint32_t a, uint32_t b) {
      return peak_step[a] != peak_step[b] ? peak_step[a] > peak_step[b] : tie(a, b);
    }));
    orders.push_back(sorted([&](uint32_t a, uint32_t b) {
      return length(a) != length(b) ? length(a) > length(b) : tie(a, b);
    }));
    orders.push_back(sorted([&](uint32_t a, uint32_t b) {
      return req(a).first_op != req(b).first_op ? req(a).first_op < req(b).first_op : tie(a, b);
    }));
    orders.push_back(sorted([&](uint32_t a, uint32_t b) {
      const double area_a = static_cast<double>(size_[a]) * static_cast<double>(length(a));
      const double area_b = static_cast<double>(size_[b]) * static_cast<double>(length(b));
      return area_a != area_b ? area_a > area_b : tie(a, b);
    }));
    orders.push_back(sorted([&](uint32_t a, uint32_t b) {
      return neighbour_bytes[a] != neighbour_bytes[b] ? neighbour_bytes[a] > neighbour_bytes[b] : tie(a, b);
    }));
    return orders;
  }

  // Depth-first over every order with first fit, pruned as soon as a partial
  // placement reaches the best arena found. Only for few items (n! orders).
  void search_all_orders(std::vector<uint32_t>* order, std::vector<bool>* used,
                         std::vector<uint64_t>* offsets, uint64_t high, uint64_t target,
                         Candidate* best, int* tried) const {
    if (best->high <= target) return;
    const size_t n = size_.size();
    if (order->size() == n) {
      ++*tried;
      if (high < best->high) *best = Candidate{*order, Fit::kFirst, high};
      return;
    }
    for (uint32_t k = 0; k < n; ++k) {
      if ((*used)[k]) continue;
      uint64_t at = 0;
      // First fit against the placed items in `order` (offsets of this branch).
      std::vector<std::pair<uint64_t, uint64_t>> taken;
      for (uint32_t other : conflicts_[k])
        if ((*used)[other]) taken.emplace_back((*offsets)[other], (*offsets)[other] + size_[other]);
      std::sort(taken.begin(), taken.end());
      for (const auto& [begin, end] : taken) {
        if (at + size_[k] <= begin) break;
        at = std::max(at, end);
      }
      if (at > kMaxU64 - size_[k]) continue;
      const uint64_t next_high = std::max(high, at + size_[k]);
      if (next_high >= best->high) continue;
      (*used)[k] = true;
      (*offsets)[k] = at;
      order->push_back(k);
      search_all_orders(order, used, offsets, next_high, target, best, tried);
      order->pop_back();
      (*used)[k] = false;
    }
  }

  // Seeded perturbations of the best order; keeps any that does not grow the
  // arena (so it can walk across plateaus), stops at the bound, after 10
  // steps per buffer (at least 1,500) without a smaller arena, or at the
  // work budget.
  void local_search(uint64_t target, Candidate* best, int* tried) const {
    const size_t n = size_.size();
    if (n < 2) return;
    constexpr uint64_t kWorkBudget = uint64_t{40} << 20;  // conflict visits
    constexpr uint64_t kLocalSearchSteps = 20000;
    const uint64_t stagnant_steps = std::clamp<uint64_t>(10 * n, 1500, kLocalSearchSteps);
    const uint64_t iterations =
        std::min<uint64_t>(kLocalSearchSteps, kWorkBudget / work_per_placement_);  // 0 for huge sets
    uint64_t last_gain = 0;
    std::mt19937_64 rng(0x9e3779b97f4a7c15ull);
    Candidate current = *best;
    place(current.order, current.fit, kMaxU64);
    std::vector<uint64_t> current_offsets = offset_;
    std::vector<uint32_t> peak_items;
    for (uint64_t step = 0; step < iterations && best->high > target && step - last_gain < stagnant_steps; ++step) {
      std::vector<uint32_t> order = current.order;
      const size_t from_pos = static_cast<size_t>(rng() % n);
      if (rng() % 2 == 0) {
        // Move an item that reaches the high-water mark to an earlier place.
        peak_items.clear();
        for (size_t pos = 0; pos < n; ++pos) {
          const uint32_t k = order[pos];
          if (current_offsets[k] + size_[k] == current.high) peak_items.push_back(static_cast<uint32_t>(pos));
        }
        const size_t pos = peak_items.empty() ? from_pos : peak_items[rng() % peak_items.size()];
        const size_t to = pos == 0 ? 0 : static_cast<size_t>(rng() % pos);
        std::rotate(order.begin() + static_cast<std::ptrdiff_t>(to),
                    order.begin() + static_cast<std::ptrdiff_t>(pos),
                    order.begin() + static_cast<std::ptrdiff_t>(pos) + 1);
      } else {
        std::swap(order[from_pos], order[static_cast<size_t>(rng() % n)]);
      }
      const Fit fit = (rng() % 4 == 0) ? kFits[rng() % 3] : current.fit;
      ++*tried;
      // Early on, accept an arena up to 1 % larger (decaying to none), so the
      // walk can leave a local minimum.
      const uint64_t slack = current.high / 100 * (iterations - step) / iterations;
      const uint64_t high = place(order, fit, current.high + slack + 1);
      if (high == kMaxU64) continue;
      current = Candidate{std::move(order), fit, high};
      current_offsets = offset_;
      if (high < best->high) {
        *best = current;
        last_gain = step;
      }
    }
  }

 private:
  static constexpr uint64_t kUnplaced = kMaxU64;

  const BufferRequest& req(uint32_t item) const { return requests_[request_of_[item]]; }

  uint64_t fit_of(uint32_t k, Fit fit) const {
    taken_.clear();
    int32_t latest_start = std::numeric_limits<int32_t>::min();
    bool latest_on_top = true;
    for (uint32_t other : conflicts_[k]) {
      if (offset_[other] == kUnplaced) continue;
      taken_.emplace_back(offset_[other], offset_[other] + size_[other]);
      if (req(other).first_op > latest_start) {
        latest_start = req(other).first_op;
        latest_on_top = on_top_[other];
      }
    }
    std::sort(taken_.begin(), taken_.end());
    if (fit == Fit::kTwoSided && !latest_on_top) {
      const uint64_t at = highest_fit(k);
      if (at != kMaxU64) {
        on_top_[k] = true;
        return at;
      }
    }
    return lowest_fit(k, fit == Fit::kBest);
  }

  // Lowest free offset among the placed conflicting items (first fit), or the
  // start of the smallest hole that holds the item (best fit; the top if none).
  // Expects taken_ sorted.
  uint64_t lowest_fit(uint32_t k, bool best_fit) const {
    const uint64_t need = size_[k];
    uint64_t at = 0, best_at = kMaxU64, best_hole = kMaxU64;
    for (const auto& [begin, end] : taken_) {
      if (begin > at && begin - at >= need) {
        if (!best_fit) return at;
        if (begin - at < best_hole) {
          best_hole = begin - at;
          best_at = at;
        }
      }
      at = std::max(at, end);
    }
    if (best_at != kMaxU64) return best_at;
    return at > kMaxU64 - need ? kMaxU64 : at;
  }

  // Highest offset at which the item ends at or below the target arena,
  // free of the placed conflicting items (taken_ sorted); kMaxU64 if none.
  uint64_t highest_fit(uint32_t k) const {
    const uint64_t need = size_[k];
    if (need > target_) return kMaxU64;
    uint64_t found = kMaxU64, at = 0;  // `at`: end of what is taken below
    for (const auto& [begin, end] : taken_) {
      const uint64_t hole_end = std::min(begin, target_);
      if (hole_end > at && hole_end - at >= need) found = hole_end - need;
      at = std::max(at, end);
    }
    if (target_ > at && target_ - at >= need) found = target_ - need;
    return found;
  }

  const std::vector<BufferRequest>& requests_;
  std::vector<size_t> request_of_;
  std::vector<uint64_t> size_;  // occupied (aligned) bytes
  std::vector<std::vector<uint32_t>> conflicts_;
  uint64_t work_per_placement_ = 1;
  uint64_t target_ = 0;  // the arena Fit::kTwoSided places under
  mutable std::vector<uint64_t> offset_;
  mutable std::vector<bool> on_top_;
  mutable std::vector<std::pair<uint64_t, uint64_t>> taken_;
};

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, uint64_t alignment,
                       PlanSearch* search) {
  if (alignment == 0) throw ConvertError("memory planner: alignment must be > 0");
  const size_t count = requests.size();
  std::vector<uint64_t> occupied_size(count);  // size rounded up to alignment
  for (size_t i = 0; i < count; ++i) {
    const BufferRequest& r = requests[i];
    if (r.last_op < r.first_op)
      throw ConvertError("memory planner: " + describe(i, r) + " ends before it starts");
    if (!round_up_checked(r.size, alignment, &occupied_size[i]))
      throw ConvertError("memory planner: " + describe(i, r) + " overflows 64 bits when aligned");
  }

  const uint64_t target = aligned_live_bound(requests, occupied_size);
  const Placer placer(requests, occupied_size, target);
  const size_t items = placer.item_count();
  Candidate best;
  int tried = 0;
  auto consider = [&](const std::vector<uint32_t>& order, Fit fit) {
    ++tried;
    Candidate c{order, fit, placer.place(order, fit, kMaxU64)};
    if (c.high < best.high) best = std::move(c);
  };

  bool exhaustive = false;
  // The portfolio first (its first entry is the old greedy, so a plan greedy
  // already had at the bound is kept unchanged).
  for (const std::vector<uint32_t>& order : placer.portfolio_orders()) {
    for (Fit fit : kFits) {
      if (best.high <= target) break;
      consider(order, fit);
    }
  }
  if (best.high > target && items <= kExhaustiveBuffers) {
    exhaustive = true;
    std::vector<uint32_t> order;
    std::vector<bool> used(items, false);
    std::vector<uint64_t> offsets(items, 0);
    placer.search_all_orders(&order, &used, &offsets, 0, target, &best, &tried);
  } else if (best.high > target) {
    placer.local_search(target, &best, &tried);
  }
  if (best.high == kMaxU64) {
    throw ConvertError("memory planner: arena exceeds 64 bits");
  }

  MemoryPlan plan;
  plan.offsets.assign(count, 0);  // zero-size buffers keep offset 0
  const std::vector<uint64_t> offsets = placer.offsets_of(best.order, best.fit);
  for (size_t k = 0; k < items; ++k) plan.offsets[placer.request_of(k)] = offsets[k];
  plan.arena_size = best.high;  // occupied sizes are aligned, so the high-water mark is too
  if (search) {
    search->lower_bound = target;
    search->at_lower_bound = best.high <= target;
    search->exhaustive = exhaustive || best.high <= target;
    search->orders_tried = tried;
  }
  return plan;
}

uint64_t live_bytes_lower_bound(const std::vector<BufferRequest>& requests, uint64_t alignment) {
  if (alignment == 0) throw ConvertError("memory planner: alignment must be > 0");
  std::vector<uint64_t> occupied(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    if (!round_up_checked(requests[i].size, alignment, &occupied[i]))
      throw ConvertError("memory planner: " + describe(i, requests[i]) + " overflows 64 bits when aligned");
  }
  return aligned_live_bound(requests, occupied);
}

std::string check_plan(const std::vector<BufferRequest>& requests, const MemoryPlan& plan,
                       uint64_t alignment) {
  std::ostringstream why;
  if (alignment == 0) return "alignment must be > 0";
  if (plan.offsets.size() != requests.size()) {
    why << "plan has " << plan.offsets.size() << " offsets for " << requests.size() << " buffers";
    return why.str();
  }

  uint64_t high_water = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    const BufferRequest& r = requests[i];
    const uint64_t offset = plan.offsets[i];
    if (r.last_op < r.first_op) return describe(i, r) + " ends before it starts";
    if (offset % alignment != 0) {
      why << describe(i, r) << " at offset " << offset << " is not a multiple of " << alignment;
      return why.str();
    }
    if (offset > kMaxU64 - r.size) {
      why << describe(i, r) << " at offset " << offset << " overflows 64 bits";
      return why.str();
    }
    if (r.size > 0) high_water = std::max(high_water, offset + r.size);
  }

  // Plain pairwise check: slow (O(n^2)) but obviously right, which is the point
  // of a checker.
  for (size_t i = 0; i < requests.size(); ++i) {
    const BufferRequest& a = requests[i];
    if (a.size == 0) continue;
    for (size_t j = i + 1; j < requests.size(); ++j) {
      const BufferRequest& b = requests[j];
      // Closed intervals [first_op, last_op] share an op unless one ends
      // before the other starts (written out here, not shared with the planner).
      const bool live_together = !(a.last_op < b.first_op || b.last_op < a.first_op);
      if (b.size == 0 || !live_together) continue;
      const uint64_t a_begin = plan.offsets[i], a_end = a_begin + a.size;
      const uint64_t b_begin = plan.offsets[j], b_end = b_begin + b.size;
      if (a_begin < b_end && b_begin < a_end) {
        why << describe(i, a) << " at [" << a_begin << ", " << a_end << ") overlaps "
            << describe(j, b) << " at [" << b_begin << ", " << b_end
            << ") while both are live";
        return why.str();
      }
    }
  }

  // Round up by quotient rather than by padding, again independently of the
  // planner: ceil(high_water / alignment) * alignment, checking the product.
  const uint64_t blocks = high_water / alignment + (high_water % alignment != 0 ? 1 : 0);
  if (blocks > kMaxU64 / alignment) {
    why << "high-water mark " << high_water << " overflows 64 bits when aligned";
    return why.str();
  }
  const uint64_t expected_arena = blocks * alignment;
  if (plan.arena_size != expected_arena) {
    why << "arena_size is " << plan.arena_size << " but the high-water mark " << high_water
        << " rounded up to " << alignment << " is " << expected_arena;
    return why.str();
  }
  return "";
}

}  // namespace floe::conv
