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
#include <numeric>
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
  Placer(const std::vector<BufferRequest>& requests, const std::vector<uint64_t>& occupied,
         const std::vector<uint64_t>& alignments, uint64_t target)
      : requests_(requests), target_(target) {
    for (size_t i = 0; i < requests.size(); ++i) {
      if (requests[i].size == 0) continue;
      request_of_.push_back(i);
      size_.push_back(occupied[i]);
      align_.push_back(alignments[i]);
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

  // Branch and bound over the orders placed with first fit (some order gives
  // an optimal plan, see the header), depth first, pruned as soon as a partial
  // placement reaches the best arena found. Two items that are never live
  // together land where they land in either order, so of the orders that differ
  // only by swapping such neighbours only the lexicographically smallest is
  // searched: an item does not follow a smaller one it does not meet. Stops
  // after `budget` conflict visits; returns true when the search finished (the
  // best plan is then optimal).
  bool search_orders(uint64_t target, uint64_t budget, Candidate* best, int* tried) const {
    const size_t n = size_.size();
    ExactSearch s;
    s.target = target;
    s.budget = budget;
    s.best = best;
    s.tried = tried;
    s.used.assign(n, false);
    s.offsets.assign(n, kUnplaced);
    s.meets.assign(n, std::vector<bool>(n, false));
    for (uint32_t k = 0; k < n; ++k) {
      for (uint32_t other : conflicts_[k]) s.meets[k][other] = true;
    }
    // Children in the order of the best plan known, so good plans come first.
    std::vector<uint32_t> rank(n, 0);
    for (size_t pos = 0; pos < best->order.size(); ++pos) rank[best->order[pos]] = static_cast<uint32_t>(pos);
    s.children.resize(n);
    for (uint32_t k = 0; k < n; ++k) s.children[k] = k;
    std::sort(s.children.begin(), s.children.end(), [&](uint32_t a, uint32_t b) { return rank[a] < rank[b]; });
    search_from(&s, 0);
    return !s.out_of_budget;
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

  struct ExactSearch {
    uint64_t target = 0, budget = 0;
    Candidate* best = nullptr;
    int* tried = nullptr;
    std::vector<bool> used;
    std::vector<uint64_t> offsets;
    std::vector<std::vector<bool>> meets;
    std::vector<uint32_t> children, order;
    uint64_t work = 0;
    bool out_of_budget = false;
  };

  void search_from(ExactSearch* s, uint64_t high) const {
    if (s->best->high <= s->target || s->out_of_budget) return;
    const size_t n = size_.size();
    if (s->order.size() == n) {
      ++*s->tried;
      if (high < s->best->high) *s->best = Candidate{s->order, Fit::kFirst, high};
      return;
    }
    const bool first = s->order.empty();
    const uint32_t last = first ? 0 : s->order.back();
    for (uint32_t k : s->children) {
      if (s->used[k] || (!first && k < last && !s->meets[k][last])) continue;
      s->work += conflicts_[k].size() + 1;
      if (s->work > s->budget) {
        s->out_of_budget = true;
        return;
      }
      taken_.clear();
      for (uint32_t other : conflicts_[k]) {
        if (s->used[other]) taken_.emplace_back(s->offsets[other], s->offsets[other] + size_[other]);
      }
      std::sort(taken_.begin(), taken_.end());
      const uint64_t at = lowest_fit(k, false);
      if (at == kMaxU64) continue;
      const uint64_t next_high = std::max(high, at + size_[k]);
      if (next_high >= s->best->high) continue;
      s->used[k] = true;
      s->offsets[k] = at;
      s->order.push_back(k);
      search_from(s, next_high);
      s->order.pop_back();
      s->used[k] = false;
      s->offsets[k] = kUnplaced;
      if (s->best->high <= s->target || s->out_of_budget) return;
    }
  }

  static uint64_t align_up(uint64_t value, uint64_t alignment) {
    const uint64_t r = value % alignment;
    if (r == 0) return value;
    return value > kMaxU64 - (alignment - r) ? kMaxU64 : value + (alignment - r);
  }

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
    const uint64_t need = size_[k], alignment = align_[k];
    uint64_t at = 0, best_at = kMaxU64, best_hole = kMaxU64;
    for (const auto& [begin, end] : taken_) {
      const uint64_t start = align_up(at, alignment);
      if (start != kMaxU64 && begin > start && begin - start >= need) {
        if (!best_fit) return start;
        if (begin - start < best_hole) {
          best_hole = begin - start;
          best_at = start;
        }
      }
      at = std::max(at, end);
    }
    if (best_at != kMaxU64) return best_at;
    at = align_up(at, alignment);
    return at == kMaxU64 || at > kMaxU64 - need ? kMaxU64 : at;
  }

  // Highest offset at which the item ends at or below the target arena,
  // free of the placed conflicting items (taken_ sorted); kMaxU64 if none.
  uint64_t highest_fit(uint32_t k) const {
    const uint64_t need = size_[k], alignment = align_[k];
    if (need > target_) return kMaxU64;
    uint64_t found = kMaxU64, at = 0;  // `at`: end of what is taken below
    auto consider = [&](uint64_t hole_end) {
      if (hole_end < need) return;
      const uint64_t start = (hole_end - need) / alignment * alignment;  // highest aligned start
      if (start >= at) found = start;
    };
    for (const auto& [begin, end] : taken_) {
      consider(std::min(begin, target_));
      at = std::max(at, end);
    }
    consider(target_);
    return found;
  }

  const std::vector<BufferRequest>& requests_;
  std::vector<size_t> request_of_;
  std::vector<uint64_t> size_;  // occupied bytes (rounded up to the finest alignment)
  std::vector<uint64_t> align_;  // what each item's offset must be a multiple of
  std::vector<std::vector<uint32_t>> conflicts_;
  uint64_t work_per_placement_ = 1;
  uint64_t target_ = 0;  // the arena Fit::kTwoSided places under
  mutable std::vector<uint64_t> offset_;
  mutable std::vector<bool> on_top_;
  mutable std::vector<std::pair<uint64_t, uint64_t>> taken_;
};

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, uint64_t alignment,
                       PlanSearch* search, PlanEffort effort) {
  if (alignment == 0) throw ConvertError("memory planner: alignment must be > 0");
  const size_t count = requests.size();
  // Every offset is a multiple of the finest alignment (the greatest common
  // divisor of those asked for), so sizes
  // rounded up to it lose nothing (two such slots that share no real byte
  // share no rounded one either).
  std::vector<uint64_t> alignments(count);
  uint64_t finest = alignment;
  for (size_t i = 0; i < count; ++i) {
    const BufferRequest& r = requests[i];
    if (r.last_op < r.first_op)
      throw ConvertError("memory planner: " + describe(i, r) + " ends before it starts");
    alignments[i] = r.alignment == 0 ? alignment : r.alignment;
    if (r.size > 0) finest = std::gcd(finest, alignments[i]);
  }
  std::vector<uint64_t> occupied_size(count);
  for (size_t i = 0; i < count; ++i) {
    if (!round_up_checked(requests[i].size, finest, &occupied_size[i]))
      throw ConvertError("memory planner: " + describe(i, requests[i]) + " overflows 64 bits when aligned");
  }

  const uint64_t target = aligned_live_bound(requests, occupied_size);
  const Placer placer(requests, occupied_size, alignments, target);
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
  // Small graphs: branch and bound, proven optimal unless out of budget (then
  // its best order, if better, is where the local search starts).
  const bool full = effort == PlanEffort::kFull;
  if (full && best.high > target && items <= kExactSearchMaxBuffers) {
    exhaustive = placer.search_orders(target, kExactSearchWork, &best, &tried);
  }
  if (full && best.high > target && !exhaustive) placer.local_search(target, &best, &tried);
  if (best.high == kMaxU64) {
    throw ConvertError("memory planner: arena exceeds 64 bits");
  }

  MemoryPlan plan;
  plan.offsets.assign(count, 0);  // zero-size buffers keep offset 0
  const std::vector<uint64_t> offsets = placer.offsets_of(best.order, best.fit);
  uint64_t high_water = 0;
  for (size_t k = 0; k < items; ++k) {
    const size_t i = placer.request_of(k);
    plan.offsets[i] = offsets[k];
    high_water = std::max(high_water, offsets[k] + requests[i].size);
  }
  // The real bytes' high-water mark (a word-aligned tensor of odd size ends
  // before its rounded slot does); fits, as the rounded one did.
  if (!round_up_checked(high_water, alignment, &plan.arena_size)) {
    throw ConvertError("memory planner: arena exceeds 64 bits");
  }
  if (search) {
    search->lower_bound = target;
    search->at_lower_bound = plan.arena_size <= target;
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
    const uint64_t own = r.alignment == 0 ? alignment : r.alignment;
    if (offset % own != 0) {
      why << describe(i, r) << " at offset " << offset << " is not a multiple of " << own;
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
