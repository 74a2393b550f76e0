// SPDX-License-Identifier: Apache-2.0
// Memory-aware op order (see op_schedule.h).
#include "converter/plan/op_schedule.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "converter/ir/error.h"

namespace floe::conv {
namespace {

using Bits = std::vector<uint64_t>;

bool has_bit(const Bits& bits, size_t i) { return (bits[i / 64] >> (i % 64)) & 1u; }
void set_bit(Bits* bits, size_t i) { (*bits)[i / 64] |= uint64_t{1} << (i % 64); }

struct BitsHash {
  size_t operator()(const Bits& bits) const {
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t w : bits) h = (h ^ w) * 0x100000001b3ull;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

// The dependency graph and the byte accounting of running one op after a set.
class OpGraph {
 public:
  // Sizes are counted rounded up to `alignment`, as the planner places them.
  OpGraph(const LoweredModel& model, uint64_t alignment)
      : model_(model), n_(model.ops.size()), alignment_(alignment) {
    const size_t values = model.values.size();
    writer_.assign(values, -1);
    readers_.assign(values, {});
    keep_.assign(values, false);
    for (int v : model.outputs) keep_[static_cast<size_t>(v)] = true;
    for (size_t i = 0; i < n_; ++i) {
      const LoweredOp& op = model.ops[i];
      for (int v : distinct(op.outputs)) {
        if (!arena(v)) continue;
        if (writer_[static_cast<size_t>(v)] >= 0) single_writers_ = false;
        writer_[static_cast<size_t>(v)] = static_cast<int>(i);
      }
      for (int v : distinct(op.inputs)) {
        if (arena(v)) readers_[static_cast<size_t>(v)].push_back(static_cast<int>(i));
      }
    }
    words_ = (n_ + 63) / 64;
    preds_.assign(n_, Bits(words_, 0));
    succs_.assign(n_, {});
    for (size_t i = 0; i < n_; ++i) {
      for (int v : model.ops[i].inputs) {
        if (!arena(v)) continue;
        const int w = writer_[static_cast<size_t>(v)];
        if (w < 0) continue;
        // A read before the write (in the file) would make the order cyclic.
        if (static_cast<size_t>(w) >= i) single_writers_ = false;
        if (static_cast<size_t>(w) != i && !has_bit(preds_[i], static_cast<size_t>(w))) {
          set_bit(&preds_[i], static_cast<size_t>(w));
          succs_[static_cast<size_t>(w)].push_back(static_cast<int>(i));
        }
      }
    }
    op_bytes_.resize(n_);
    for (size_t i = 0; i < n_; ++i) {
      OpBytes& b = op_bytes_[i];
      for (int v : distinct(model.ops[i].outputs)) {
        if (!arena(v) || writer_[static_cast<size_t>(v)] != static_cast<int>(i)) continue;
        b.added += bytes(v);
        if (keep_[static_cast<size_t>(v)] || !readers_[static_cast<size_t>(v)].empty()) b.kept += bytes(v);
      }
      for (int v : distinct(model.ops[i].inputs)) {
        if (arena(v) && !keep_[static_cast<size_t>(v)]) b.releasable.push_back(v);
      }
    }
    // Values no op writes (graph inputs, or anything else read before any
    // write) are live from the start, as the arena plan's lifetimes have it.
    std::vector<bool> graph_input(values, false);
    for (int v : model.inputs) graph_input[static_cast<size_t>(v)] = true;
    for (size_t x = 0; x < values; ++x) {
      const int v = static_cast<int>(x);
      if (!arena(v) || writer_[x] >= 0) continue;
      if (!readers_[x].empty() || keep_[x]) {
        start_live_ += bytes(v);
      } else if (graph_input[x]) {
        unread_inputs_ += bytes(v);  // live at the first op only
      }
    }
  }

  bool schedulable() const { return single_writers_; }
  size_t op_count() const { return n_; }
  size_t words() const { return words_; }
  uint64_t start_live() const { return start_live_; }
  const Bits& preds(size_t op) const { return preds_[op]; }
  int writer(int value) const { return arena(value) ? writer_[static_cast<size_t>(value)] : -1; }
  const std::vector<int>& succs(size_t op) const { return succs_[op]; }

  // Running `op` once the ops in `done` ran with `live` bytes live: the bytes
  // live at that op, and those live after it.
  void step(const Bits& done, size_t op, uint64_t live, uint64_t* at_op, uint64_t* after) const {
    const OpBytes& b = op_bytes_[op];
    uint64_t freed = 0;
    for (int v : b.releasable) {
      bool last_reader = true;
      for (int r : readers_[static_cast<size_t>(v)]) {
        if (static_cast<size_t>(r) != op && !has_bit(done, static_cast<size_t>(r))) {
          last_reader = false;
          break;
        }
      }
      if (last_reader) freed += bytes(v);
    }
    const bool first = std::all_of(done.begin(), done.end(), [](uint64_t w) { return w == 0; });
    *at_op = live + b.added + (first ? unread_inputs_ : 0);
    *after = live + b.kept - freed;
  }

 private:
  static std::vector<int> distinct(std::vector<int> ids) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
  }
  bool arena(int v) const { return v >= 0 && !model_.values[static_cast<size_t>(v)].is_constant(); }
  uint64_t bytes(int v) const {
    const uint64_t size = model_.values[static_cast<size_t>(v)].byte_size();
    return (size + alignment_ - 1) / alignment_ * alignment_;
  }

  const LoweredModel& model_;
  size_t n_, words_ = 0;
  uint64_t alignment_;
  std::vector<int> writer_;
  std::vector<std::vector<int>> readers_;
  std::vector<bool> keep_;  // graph outputs: never freed
  // Per op: bytes of the values it writes, of those that outlive it, and the
  // inputs it may be the last reader of.
  struct OpBytes {
    uint64_t added = 0, kept = 0;
    std::vector<int> releasable;
  };
  std::vector<OpBytes> op_bytes_;
  std::vector<Bits> preds_;
  std::vector<std::vector<int>> succs_;
  uint64_t start_live_ = 0, unread_inputs_ = 0;
  bool single_writers_ = true;
};

uint64_t peak_of(const OpGraph& graph, const std::vector<int>& order) {
  Bits done(graph.words(), 0);
  uint64_t live = graph.start_live(), peak = 0;
  for (int op : order) {
    uint64_t at_op = 0, after = 0;
    graph.step(done, static_cast<size_t>(op), live, &at_op, &after);
    peak = std::max(peak, at_op);
    live = after;
    set_bit(&done, static_cast<size_t>(op));
  }
  return peak;
}

// Each op as late as its consumers allow: depth first from the graph outputs,
// an op right after the producers of its inputs, the producer with the
// longest chain of ops behind it first. A value computed long before its use,
// such as each time step's slice of an input to an unrolled RNN, is then
// computed just before it (the recurrent state's long chain runs first).
std::vector<int> as_late_as_possible(const LoweredModel& model, const OpGraph& graph) {
  const size_t n = model.ops.size();
  std::vector<size_t> height(n, 0);  // longest chain of producers; the file's order is topological
  for (size_t i = 0; i < n; ++i) {
    for (int v : model.ops[i].inputs) {
      const int producer = graph.writer(v);
      if (producer >= 0 && static_cast<size_t>(producer) < i)
        height[i] = std::max(height[i], height[static_cast<size_t>(producer)] + 1);
    }
  }
  std::vector<uint8_t> state(n, 0);  // 0 new, 1 on the stack, 2 emitted
  std::vector<int> order;
  order.reserve(n);
  auto producers_tallest_first = [&](int op) {
    std::vector<int> producers;
    for (int v : model.ops[static_cast<size_t>(op)].inputs) {
      const int producer = graph.writer(v);
      if (producer >= 0 && producer != op) producers.push_back(producer);
    }
    std::stable_sort(producers.begin(), producers.end(), [&](int a, int b) {
      return height[static_cast<size_t>(a)] > height[static_cast<size_t>(b)];
    });
    return producers;
  };
  auto visit = [&](int root) {
    if (root < 0 || state[static_cast<size_t>(root)] != 0) return;
    // (op, its producers, next producer to visit)
    std::vector<std::tuple<int, std::vector<int>, size_t>> stack;
    stack.emplace_back(root, producers_tallest_first(root), 0);
    state[static_cast<size_t>(root)] = 1;
    while (!stack.empty()) {
      auto& [op, producers, next] = stack.back();
      if (next < producers.size()) {
        const int producer = producers[next++];
        if (state[static_cast<size_t>(producer)] == 0) {
          state[static_cast<size_t>(producer)] = 1;
          stack.emplace_back(producer, producers_tallest_first(producer), 0);
        }
        continue;
      }
      state[static_cast<size_t>(op)] = 2;
      order.push_back(op);
      stack.pop_back();
    }
  };
  for (int v : model.outputs) visit(graph.writer(v));
  for (size_t i = 0; i < n; ++i) visit(static_cast<int>(i));
  return order;
}

// One downward-closed set of ops already run, reached with the smallest peak.
struct State {
  Bits done;
  std::vector<int> ready;  // ops whose producers all ran, ascending
  uint64_t peak = 0, live = 0;
  int parent = -1;         // index in the previous layer
  int op = -1;             // the op run last
};

}  // namespace

uint64_t order_peak_bytes(const LoweredModel& model, const std::vector<int>& order) {
  return peak_of(OpGraph(model, 1), order);
}

uint64_t order_aligned_peak_bytes(const LoweredModel& model, const std::vector<int>& order, uint64_t alignment) {
  return peak_of(OpGraph(model, alignment), order);
}

OpSchedule schedule_ops(const LoweredModel& model, uint64_t alignment) {
  if (alignment == 0) throw ConvertError("internal error: op scheduling needs an alignment > 0");
  const OpGraph graph(model, alignment);
  const size_t n = graph.op_count();
  OpSchedule result;
  result.order.resize(n);
  for (size_t i = 0; i < n; ++i) result.order[i] = static_cast<int>(i);
  result.file_peak = result.chosen_peak = order_peak_bytes(model, result.order);
  result.file_aligned_peak = result.chosen_aligned_peak = peak_of(graph, result.order);
  result.exact = n < 2;  // nothing to choose
  if (!graph.schedulable() || n < 2) return result;  // keep the file's order, measured as written

  // States per layer: the full beam for small graphs, fewer as the graph grows
  // so that the work (layers x states) stays bounded.
  const size_t beam = std::clamp<size_t>(kScheduleWork / std::max<size_t>(n, 1), 64, kScheduleStates);
  bool truncated = false;
  std::vector<std::vector<std::pair<int, int>>> trail;  // per layer: (parent, op)
  std::vector<State> layer(1);
  layer[0].done.assign(graph.words(), 0);
  layer[0].live = graph.start_live();
  for (size_t i = 0; i < n; ++i)
    if (std::all_of(graph.preds(i).begin(), graph.preds(i).end(), [](uint64_t w) { return w == 0; }))
      layer[0].ready.push_back(static_cast<int>(i));

  for (size_t depth = 0; depth < n; ++depth) {
    std::vector<State> next;
    std::unordered_map<Bits, size_t, BitsHash> index;
    for (size_t s = 0; s < layer.size(); ++s) {
      const State& from = layer[s];
      for (int op : from.ready) {
        uint64_t at_op = 0, after = 0;
        graph.step(from.done, static_cast<size_t>(op), from.live, &at_op, &after);
        const uint64_t peak = std::max(from.peak, at_op);
        Bits done = from.done;
        set_bit(&done, static_cast<size_t>(op));
        const auto found = index.find(done);
        if (found != index.end()) {
          State& seen = next[found->second];
          if (peak < seen.peak) {
            seen.peak = peak;
            seen.parent = static_cast<int>(s);
            seen.op = op;
          }
          continue;
        }
        State to;
        to.done = done;
        to.peak = peak;
        to.live = after;
        to.parent = static_cast<int>(s);
        to.op = op;
        for (int r : from.ready)
          if (r != op) to.ready.push_back(r);
        for (int succ : graph.succs(static_cast<size_t>(op))) {
          const Bits& need = graph.preds(static_cast<size_t>(succ));
          bool all = true;
          for (size_t w = 0; w < need.size() && all; ++w) all = (need[w] & ~done[w]) == 0;
          if (all) to.ready.push_back(succ);
        }
        std::sort(to.ready.begin(), to.ready.end());
        index.emplace(std::move(done), next.size());
        next.push_back(std::move(to));
      }
    }
    if (next.empty()) {  // a cycle: cannot happen with single writers read after their write
      throw ConvertError("internal error: op scheduling found no runnable op");
    }
    if (next.size() > beam) {
      truncated = true;
      std::vector<size_t> keep(next.size());
      for (size_t k = 0; k < keep.size(); ++k) keep[k] = k;
      std::stable_sort(keep.begin(), keep.end(), [&](size_t a, size_t b) {
        return std::make_pair(next[a].peak, next[a].live) < std::make_pair(next[b].peak, next[b].live);
      });
      keep.resize(beam);
      std::sort(keep.begin(), keep.end());  // keep discovery order for stable ties
      std::vector<State> kept;
      kept.reserve(beam);
      for (size_t k : keep) kept.push_back(std::move(next[k]));
      next = std::move(kept);
    }
    std::vector<std::pair<int, int>> links;
    links.reserve(next.size());
    for (State& st : next) links.emplace_back(st.parent, st.op);
    trail.push_back(std::move(links));
    layer = std::move(next);
  }

  // The last layer holds the one full set; walk its parents back.
  std::vector<int> order(n);
  int at = 0;
  for (size_t depth = n; depth-- > 0;) {
    order[depth] = trail[depth][static_cast<size_t>(at)].second;
    at = trail[depth][static_cast<size_t>(at)].first;
  }
  result.exact = !truncated;
  uint64_t aligned_peak = n == 0 ? 0 : layer[0].peak;
  if (truncated) {  // the beam may have missed what running each op late finds
    std::vector<int> late = as_late_as_possible(model, graph);
    const uint64_t late_peak = peak_of(graph, late);
    if (late_peak < aligned_peak) {
      order = std::move(late);
      aligned_peak = late_peak;
    }
  }
  if (aligned_peak < result.file_aligned_peak) {
    result.order = std::move(order);
    result.chosen_aligned_peak = aligned_peak;
    result.chosen_peak = order_peak_bytes(model, result.order);
    result.reordered = true;
  }
  return result;
}

void apply_op_order(LoweredModel* model, const std::vector<int>& order) {
  if (order.size() != model->ops.size()) throw ConvertError("internal error: op order of the wrong length");
  std::vector<LoweredOp> ops;
  ops.reserve(order.size());
  std::vector<bool> taken(order.size(), false);
  for (int i : order) {
    if (i < 0 || static_cast<size_t>(i) >= order.size() || taken[static_cast<size_t>(i)])
      throw ConvertError("internal error: op order is not a permutation");
    taken[static_cast<size_t>(i)] = true;
    ops.push_back(std::move(model->ops[static_cast<size_t>(i)]));
  }
  model->ops = std::move(ops);
}

}  // namespace floe::conv
