// SPDX-License-Identifier: Apache-2.0
// Tests for the arena memory planner: hand-checked layouts, the checker's own
// ability to catch bad plans, and a seeded randomized property test. The
// property test relies on check_plan being independent of plan_memory.
#include "converter/plan/memory_planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <random>

#include "converter/ir/error.h"

namespace floe::conv {
namespace {

uint64_t round_up(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// max over time of the sum of sizes live at that time: no valid plan can be
// smaller than this.
uint64_t live_size_lower_bound(const std::vector<BufferRequest>& requests) {
  std::map<int32_t, int64_t> delta;  // op index -> change in live bytes
  for (const BufferRequest& r : requests) {
    delta[r.first_op] += static_cast<int64_t>(r.size);
    delta[r.last_op + 1] -= static_cast<int64_t>(r.size);
  }
  int64_t live = 0, peak = 0;
  for (const auto& [op, change] : delta) {
    live += change;
    peak = std::max(peak, live);
  }
  return static_cast<uint64_t>(peak);
}

uint64_t high_water_mark(const std::vector<BufferRequest>& requests, const MemoryPlan& plan) {
  uint64_t high = 0;
  for (size_t i = 0; i < requests.size(); ++i)
    if (requests[i].size > 0) high = std::max(high, plan.offsets[i] + requests[i].size);
  return high;
}

TEST(MemoryPlanner, EmptyInputGivesEmptyArena) {
  const MemoryPlan plan = plan_memory({});
  EXPECT_TRUE(plan.offsets.empty());
  EXPECT_EQ(plan.arena_size, 0u);
  EXPECT_EQ(check_plan({}, plan), "");
}

TEST(MemoryPlanner, ChainReusesMemory) {
  // a (graph input) -> op0 -> b -> op1 -> c (graph output, alive to op count 2).
  const std::vector<BufferRequest> requests = {
      {96, -1, 0},   // a
      {160, 0, 1},   // b
      {64, 1, 2},    // c
  };
  const MemoryPlan plan = plan_memory(requests);
  EXPECT_EQ(check_plan(requests, plan), "");
  // a and c are never live together, so they share bytes; the arena is the
  // larger consecutive pair.
  EXPECT_EQ(plan.arena_size, std::max(96u + 160u, 160u + 64u));
  EXPECT_EQ(plan.offsets[1], 0u);    // largest first, at the bottom
  EXPECT_EQ(plan.offsets[0], 160u);  // a and c both sit right above b
  EXPECT_EQ(plan.offsets[2], 160u);
}

TEST(MemoryPlanner, LongChainNeedsOnlyTwoSlots) {
  std::vector<BufferRequest> requests;
  for (int32_t op = 0; op < 50; ++op) requests.push_back({256, op - 1, op});
  const MemoryPlan plan = plan_memory(requests);
  EXPECT_EQ(check_plan(requests, plan), "");
  EXPECT_EQ(plan.arena_size, 512u);
}

TEST(MemoryPlanner, AllLiveBuffersAreStacked) {
  const std::vector<BufferRequest> requests = {{32, 0, 5}, {48, 1, 4}, {16, 2, 3}, {64, 0, 5}};
  const MemoryPlan plan = plan_memory(requests);
  EXPECT_EQ(check_plan(requests, plan), "");
  EXPECT_EQ(plan.arena_size, 32u + 48u + 16u + 64u);
  // Largest first, ties by index: 64 at 0, 48 at 64, 32 at 112, 16 at 144.
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{112, 64, 144, 0}));
}

TEST(MemoryPlanner, ZeroSizeBuffersOccupyNothing) {
  const std::vector<BufferRequest> requests = {{0, 0, 3}, {100, 0, 3}, {0, 1, 1}, {50, 1, 2}};
  const MemoryPlan plan = plan_memory(requests);
  EXPECT_EQ(check_plan(requests, plan), "");
  EXPECT_EQ(plan.offsets[0], 0u);
  EXPECT_EQ(plan.offsets[2], 0u);
  EXPECT_EQ(plan.offsets[1], 0u);
  EXPECT_EQ(plan.offsets[3], 112u);  // 100 rounded up to 16
  EXPECT_EQ(plan.arena_size, 112u + 50u + 14u);  // 162 rounded up to 176

  const std::vector<BufferRequest> only_empty = {{0, 0, 1}, {0, 0, 1}};
  const MemoryPlan empty_plan = plan_memory(only_empty);
  EXPECT_EQ(empty_plan.arena_size, 0u);
  EXPECT_EQ(check_plan(only_empty, empty_plan), "");
}

TEST(MemoryPlanner, OddSizesAreRoundedToAlignment) {
  const std::vector<BufferRequest> requests = {{1, 0, 1}, {17, 0, 1}, {33, 0, 1}};
  for (uint64_t alignment : {1u, 4u, 16u, 64u, 24u}) {
    SCOPED_TRACE("alignment " + std::to_string(alignment));
    const MemoryPlan plan = plan_memory(requests, alignment);
    EXPECT_EQ(check_plan(requests, plan, alignment), "");
    for (uint64_t offset : plan.offsets) EXPECT_EQ(offset % alignment, 0u);
    EXPECT_EQ(plan.arena_size % alignment, 0u);
    EXPECT_EQ(plan.arena_size,
              round_up(33, alignment) + round_up(17, alignment) + round_up(1, alignment));
  }
  // Alignment 1 means no padding at all.
  EXPECT_EQ(plan_memory(requests, 1).arena_size, 51u);
}

// Greedy by size (largest first) needs 192 bytes on this chain; the planner
// reaches the lower bound, 176.
TEST(MemoryPlanner, ReachesTheBoundWhereGreedyBySizeDoesNot) {
  const std::vector<BufferRequest> requests = {{112, -1, 0}, {16, 0, 1}, {64, 1, 2}, {112, 2, 3}};
  PlanSearch search;
  const MemoryPlan plan = plan_memory(requests, 16, &search);
  EXPECT_EQ(check_plan(requests, plan), "");
  EXPECT_EQ(live_size_lower_bound(requests), 176u);
  EXPECT_EQ(search.lower_bound, 176u);
  EXPECT_TRUE(search.at_lower_bound);
  EXPECT_EQ(plan.arena_size, 176u);
  // What greedy by size does (a and d at 0, c above d, b above c) is valid but larger.
  EXPECT_EQ(check_plan(requests, MemoryPlan{{0, 176, 112, 0}, 192}), "");
}

TEST(MemoryPlanner, FillsHoleLeftByDeadBuffer) {
  // The 64-byte buffer dies at op 1; the 32-byte one that starts at op 2 should
  // reuse its bytes rather than go above the long-lived 128-byte buffer.
  const std::vector<BufferRequest> requests = {{128, 0, 4}, {64, 0, 1}, {32, 2, 4}};
  const MemoryPlan plan = plan_memory(requests);
  EXPECT_EQ(check_plan(requests, plan), "");
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{0, 128, 128}));
  EXPECT_EQ(plan.arena_size, 192u);
}

TEST(MemoryPlanner, IsDeterministic) {
  std::mt19937_64 rng(7);
  std::vector<BufferRequest> requests;
  for (int i = 0; i < 300; ++i) {
    const int32_t first = static_cast<int32_t>(rng() % 40) - 1;
    // Few distinct sizes so ties (broken by first_op, then index) are common.
    requests.push_back({(rng() % 4) * 64, first, first + static_cast<int32_t>(rng() % 5)});
  }
  const MemoryPlan a = plan_memory(requests);
  const MemoryPlan b = plan_memory(requests);
  EXPECT_EQ(a.offsets, b.offsets);
  EXPECT_EQ(a.arena_size, b.arena_size);
}

TEST(MemoryPlanner, RejectsBadInput) {
  EXPECT_THROW(plan_memory({{16, 3, 2}}), ConvertError);  // ends before it starts
  EXPECT_THROW(plan_memory({{16, 0, 1}}, 0), ConvertError);
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  EXPECT_THROW(plan_memory({{max - 3, 0, 1}}), ConvertError);  // rounding overflows
  // Each fits alone; stacking two live ones does not.
  const uint64_t big = (max / 2 + 1) & ~uint64_t{15};
  EXPECT_THROW(plan_memory({{big, 0, 1}, {big, 0, 1}}), ConvertError);
  // ...but the same two are fine when their lifetimes are disjoint.
  const std::vector<BufferRequest> disjoint = {{big, 0, 1}, {big, 2, 3}};
  const MemoryPlan plan = plan_memory(disjoint);
  EXPECT_EQ(plan.arena_size, big);
  EXPECT_EQ(check_plan(disjoint, plan), "");
  try {
    plan_memory({{16, 0, 1}, {16, 5, 4}});
    FAIL() << "expected ConvertError";
  } catch (const ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("buffer 1"), std::string::npos) << e.what();
  }
}

// A chain (each buffer written by one op and read by the next, as in a
// network without branches) always fits in its lower bound: the two live
// buffers of each op can sit at the bottom and the top of the arena in turn.
TEST(MemoryPlanner, ChainsReachTheLowerBound) {
  for (int c = 0; c < 300; ++c) {
    std::mt19937_64 rng(1000 + static_cast<uint64_t>(c));
    const int32_t length = 2 + static_cast<int32_t>(rng() % 150);
    const uint64_t max_size = 1 + rng() % 100000;
    std::vector<BufferRequest> requests;
    for (int32_t op = 0; op < length; ++op) {
      const int32_t last = op + 1 == length ? length : op;  // the graph output lives to the end
      requests.push_back({1 + rng() % max_size, op - 1, last});
    }
    PlanSearch search;
    const MemoryPlan plan = plan_memory(requests, 16, &search);
    ASSERT_EQ(check_plan(requests, plan), "") << "case " << c;
    ASSERT_EQ(plan.arena_size, live_bytes_lower_bound(requests, 16)) << "case " << c;
    ASSERT_TRUE(search.at_lower_bound);
  }
}

// Networks with skip connections (residual blocks, a few long-lived values):
// within 2 % of the lower bound.
TEST(MemoryPlanner, NetworksWithSkipsStayWithinTwoPercentOfTheBound) {
  uint64_t total_arena = 0, total_bound = 0;
  for (int c = 0; c < 300; ++c) {
    std::mt19937_64 rng(5000 + static_cast<uint64_t>(c));
    const int32_t length = 4 + static_cast<int32_t>(rng() % 80);
    std::vector<BufferRequest> requests;
    for (int32_t op = 0; op < length; ++op) {
      int32_t last = op;
      if (rng() % 5 == 0) last = std::min(length, op + 1 + static_cast<int32_t>(rng() % 4));  // a skip
      if (op + 1 == length) last = length;
      requests.push_back({(1 + rng() % 64) * 1024, op - 1, last});
    }
    const MemoryPlan plan = plan_memory(requests, 16);
    ASSERT_EQ(check_plan(requests, plan), "") << "case " << c;
    const uint64_t bound = live_bytes_lower_bound(requests, 16);
    ASSERT_LE(plan.arena_size * 100, bound * 102) << "case " << c;
    total_arena += plan.arena_size;
    total_bound += bound;
  }
  std::printf("skip networks: arena / lower bound %.4f\n", static_cast<double>(total_arena) / total_bound);
}

// Longer skips (up to 40 ops, as a U-Net's or a DenseNet's) over longer
// networks: still within 2 %.
TEST(MemoryPlanner, LongSkipsStayWithinTwoPercentOfTheBound) {
  for (int c = 0; c < 8; ++c) {
    std::mt19937_64 rng(9000 + static_cast<uint64_t>(c));
    const int32_t length = 200 + static_cast<int32_t>(rng() % 800);
    std::vector<BufferRequest> requests;
    for (int32_t op = 0; op < length; ++op) {
      int32_t last = op;
      if (rng() % 5 == 0) last = std::min(length, op + 1 + static_cast<int32_t>(rng() % 40));
      if (op + 1 == length) last = length;
      requests.push_back({(1 + rng() % 64) * 1000, op - 1, last});
    }
    const MemoryPlan plan = plan_memory(requests, 16);
    ASSERT_EQ(check_plan(requests, plan), "") << "case " << c;
    const uint64_t bound = live_bytes_lower_bound(requests, 16);
    EXPECT_LE(plan.arena_size * 100, bound * 102) << "case " << c << ": " << plan.arena_size << " vs " << bound;
  }
}

// The smallest arena of a few buffers, found without the planner's idea: in
// an optimal plan every buffer can be pushed down until it rests at 0 or on
// the top of a buffer it is live with, so trying those offsets for every
// buffer finds the optimum.
uint64_t brute_force_optimum(const std::vector<BufferRequest>& requests, uint64_t alignment) {
  const size_t n = requests.size();
  std::vector<uint64_t> offsets(n, 0);
  uint64_t best = std::numeric_limits<uint64_t>::max();
  auto live_together = [&](size_t a, size_t b) {
    return !(requests[a].last_op < requests[b].first_op || requests[b].last_op < requests[a].first_op);
  };
  std::function<void(size_t)> assign = [&](size_t i) {
    if (i == n) {
      // Offsets are candidates; keep the assignment only if it is valid.
      uint64_t high = 0;
      for (size_t a = 0; a < n; ++a) {
        if (requests[a].size == 0) continue;
        high = std::max(high, offsets[a] + round_up(requests[a].size, alignment));
        for (size_t b = a + 1; b < n; ++b) {
          if (requests[b].size == 0 || !live_together(a, b)) continue;
          const uint64_t a_end = offsets[a] + round_up(requests[a].size, alignment);
          const uint64_t b_end = offsets[b] + round_up(requests[b].size, alignment);
          if (offsets[a] < b_end && offsets[b] < a_end) return;
        }
      }
      best = std::min(best, high);
      return;
    }
    // Every sum of rounded sizes of other buffers is a possible resting offset.
    std::vector<uint64_t> candidates = {0};
    for (size_t mask = 1; mask < (size_t{1} << n); ++mask) {
      if (mask & (size_t{1} << i)) continue;
      uint64_t sum = 0;
      for (size_t b = 0; b < n; ++b)
        if (mask & (size_t{1} << b)) sum += round_up(requests[b].size, alignment);
      candidates.push_back(sum);
    }
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    for (uint64_t offset : candidates) {
      offsets[i] = offset;
      assign(i + 1);
    }
  };
  assign(0);
  return best;
}

TEST(MemoryPlanner, FewBuffersGetTheOptimalArena) {
  for (int c = 0; c < 150; ++c) {
    std::mt19937_64 rng(77 + static_cast<uint64_t>(c));
    const size_t n = 2 + rng() % 4;
    std::vector<BufferRequest> requests;
    for (size_t i = 0; i < n; ++i) {
      const int32_t first = static_cast<int32_t>(rng() % 6);
      requests.push_back({16 * (1 + rng() % 6), first, first + static_cast<int32_t>(rng() % 4)});
    }
    PlanSearch search;
    const MemoryPlan plan = plan_memory(requests, 16, &search);
    ASSERT_EQ(check_plan(requests, plan), "") << "case " << c;
    ASSERT_TRUE(search.exhaustive) << "case " << c;
    ASSERT_EQ(plan.arena_size, brute_force_optimum(requests, 16)) << "case " << c;
  }
}

// Word-aligned buffers and byte-aligned ones (bools) in one plan: each offset
// is a multiple of its own alignment, and sizes are not rounded to the
// coarser one, so 4 + 1 + 4 live bytes take 9 bytes, not 12.
TEST(MemoryPlanner, MixedAlignmentsMeetTheRawBound) {
  const std::vector<BufferRequest> requests = {
      {4, 0, 1, 4},  // float
      {1, 0, 2, 1},  // bool
      {4, 1, 2, 4},  // float
      {3, 2, 3, 1},  // 3 bools
  };
  PlanSearch search;
  const MemoryPlan plan = plan_memory(requests, 1, &search);
  EXPECT_EQ(check_plan(requests, plan, 1), "");
  EXPECT_EQ(plan.arena_size, 9u);
  EXPECT_EQ(plan.arena_size, live_size_lower_bound(requests));
  EXPECT_EQ(plan.offsets[0] % 4, 0u);
  EXPECT_EQ(plan.offsets[2] % 4, 0u);
  // Uniform word slots cost a whole word per bool.
  std::vector<BufferRequest> words = requests;
  for (BufferRequest& r : words) r.alignment = 0;
  EXPECT_EQ(plan_memory(words, 4).arena_size, 12u);
  // The checker holds each buffer to its own alignment.
  const std::string why = check_plan(requests, MemoryPlan{{0, 8, 5, 4}, 9}, 1);
  EXPECT_NE(why.find("buffer 2 (size 4, ops [1, 2]) at offset 5 is not a multiple of 4"), std::string::npos) << why;
  EXPECT_EQ(check_plan(requests, MemoryPlan{{0, 8, 4, 0}, 9}, 1), "");
}

TEST(CheckPlan, CatchesOverlap) {
  const std::vector<BufferRequest> requests = {{64, 0, 2}, {64, 1, 3}};
  MemoryPlan plan = plan_memory(requests);
  ASSERT_EQ(check_plan(requests, plan), "");
  plan.offsets[1] = 48;  // aligned, but overlaps buffer 0's last 16 bytes
  plan.arena_size = 112;
  const std::string why = check_plan(requests, plan);
  EXPECT_NE(why.find("overlaps"), std::string::npos) << why;
  EXPECT_NE(why.find("buffer 0"), std::string::npos) << why;
  EXPECT_NE(why.find("buffer 1"), std::string::npos) << why;
  // Same offsets are fine when the lifetimes do not intersect.
  const std::vector<BufferRequest> disjoint = {{64, 0, 1}, {64, 2, 3}};
  EXPECT_EQ(check_plan(disjoint, MemoryPlan{{0, 0}, 64}), "");
  // Touching at a single op still counts as live together (closed interval).
  const std::vector<BufferRequest> touching = {{64, 0, 1}, {64, 1, 3}};
  EXPECT_NE(check_plan(touching, MemoryPlan{{0, 0}, 64}), "");
}

TEST(CheckPlan, CatchesMisalignmentWrongArenaAndCount) {
  const std::vector<BufferRequest> requests = {{64, 0, 2}, {64, 1, 3}};
  EXPECT_NE(check_plan(requests, MemoryPlan{{0, 72}, 144}).find("not a multiple"),
            std::string::npos);
  EXPECT_NE(check_plan(requests, MemoryPlan{{0, 64}, 256}).find("arena_size"), std::string::npos);
  EXPECT_NE(check_plan(requests, MemoryPlan{{0, 64}, 64}).find("arena_size"), std::string::npos);
  EXPECT_NE(check_plan(requests, MemoryPlan{{0}, 64}), "");
  EXPECT_EQ(check_plan(requests, MemoryPlan{{0, 64}, 128}), "");
  // Overlap only in alignment padding is not an overlap: 40 bytes at 0 and 16
  // bytes at 48 share no real bytes (alignment 16).
  EXPECT_EQ(check_plan({{40, 0, 1}, {16, 0, 1}}, MemoryPlan{{0, 48}, 64}), "");
  EXPECT_NE(check_plan({{16, 0, 1}}, MemoryPlan{{std::numeric_limits<uint64_t>::max() - 15}, 0}),
            "");
}

// Random lifetime sets of several shapes (short-lived chains, long-lived
// skips, many ties, zero sizes); every plan must be valid, tight, and no
// better than physically possible.
TEST(MemoryPlanner, RandomizedProperties) {
  const uint64_t base_seed = 20240601;
  constexpr int kCases = 3000;
  uint64_t total_arena = 0, total_bound = 0;
  for (int c = 0; c < kCases; ++c) {
    const uint64_t seed = base_seed + static_cast<uint64_t>(c);
    std::mt19937_64 rng(seed);
    const int buffer_count = static_cast<int>(rng() % 120);
    const int32_t op_count = 1 + static_cast<int32_t>(rng() % 60);
    const uint64_t alignment = uint64_t{1} << (rng() % 7);  // 1 .. 64
    const uint64_t max_size = 1 + rng() % 5000;
    std::vector<BufferRequest> requests;
    for (int i = 0; i < buffer_count; ++i) {
      BufferRequest r;
      r.size = (rng() % 10 == 0) ? 0 : rng() % max_size;
      r.first_op = static_cast<int32_t>(rng() % (op_count + 1)) - 1;  // -1 .. op_count-1
      const int32_t max_len = (rng() % 4 == 0) ? op_count : 3;
      r.last_op = std::min(op_count, r.first_op + static_cast<int32_t>(rng() % (max_len + 1)));
      requests.push_back(r);
    }
    const MemoryPlan plan = plan_memory(requests, alignment);
    const std::string why = check_plan(requests, plan, alignment);
    ASSERT_EQ(why, "") << "seed " << seed << " (case " << c << ")";
    ASSERT_EQ(plan.arena_size, round_up(high_water_mark(requests, plan), alignment))
        << "seed " << seed;
    const uint64_t bound = live_size_lower_bound(requests);
    ASSERT_GE(plan.arena_size, bound) << "seed " << seed;
    total_arena += plan.arena_size;
    total_bound += bound;
  }
  // Not a correctness requirement, but a sanity signal for regressions in
  // quality: print how far the plans are from the lower bound overall.
  std::printf("planned arena / lower bound over %d cases: %.4f\n", kCases,
              total_bound ? static_cast<double>(total_arena) / total_bound : 1.0);
}

}  // namespace
}  // namespace floe::conv
