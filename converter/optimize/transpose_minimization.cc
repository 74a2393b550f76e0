// SPDX-License-Identifier: Apache-2.0
// Transpose minimization. NCHW graphs are lowered as NHWC kernels wrapped in
// TRANSPOSE pairs; between two NCHW ops a transpose back to NCHW meets one
// forward to NHWC, usually with elementwise ops (bias add, activation) in
// between. Rewrites, each applied only when it removes a transpose:
//   T(p) -> T(p2)                  => one T(p o p2), none when that is identity
//   T(p) -> unary                  => unary -> T(p)
//   T(p) -> binary(const c)        => binary(T(c, p^-1)) -> T(p)   (c re-laid out
//                                     once, here, by the reference TRANSPOSE kernel)
//   T(p) a, T(p) b -> binary       => binary(a, b) -> T(p)
//   T(p) -> PAD                    => PAD (paddings permuted) -> T(p)
//   T(p) -> reduction(axes)        => reduction(p[axes]) -> T(p') (none when p' = id)
//   T(p) x_i -> CONCAT(axis)       => CONCAT(x_i, p[axis]) -> T(p)
// A transpose moves down only if its path of such ops ends in a cancellation or
// merge, or (same count) at a graph output when it sits right after a
// convolution/matmul, so the NCHW bias add and activation it passes can fuse
// into that op. The count never grows. Every intermediate is read by one op alone.
#include <algorithm>
#include <numeric>
#include <string>

#include "converter/eval/run_lowered.h"
#include "converter/optimize/graph_view.h"
#include "converter/optimize/passes.h"

namespace floe::conv::opt {
namespace {

using Perm = std::vector<int32_t>;

bool is_transpose(const LoweredOp& op) {
  return op.opcode == schema::OpCode::TRANSPOSE && op.inputs.size() == 1 && op.outputs.size() == 1 &&
         op.options.AsTransposeOptions() != nullptr;
}
const Perm& perm_of(const LoweredOp& op) { return op.options.AsTransposeOptions()->perm; }

bool is_identity(const Perm& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<int32_t>(i)) return false;
  }
  return true;
}
Perm inverse(const Perm& p) {
  Perm q(p.size());
  for (size_t i = 0; i < p.size(); ++i) q[static_cast<size_t>(p[i])] = static_cast<int32_t>(i);
  return q;
}
// T(T(x, first), second) = T(x, compose(first, second)).
Perm compose(const Perm& first, const Perm& second) {
  Perm q(second.size());
  for (size_t i = 0; i < second.size(); ++i) q[i] = first[static_cast<size_t>(second[i])];
  return q;
}
std::vector<int64_t> permute(const std::vector<int64_t>& shape, const Perm& p) {
  std::vector<int64_t> out(p.size());
  for (size_t i = 0; i < p.size(); ++i) out[i] = shape[static_cast<size_t>(p[i])];
  return out;
}
bool is_reduction(const LoweredOp& op) {
  return op.options.type == schema::OpOptions::ReduceOptions && op.inputs.size() == 1 && op.outputs.size() == 1;
}
// Whether reduction `op` keeps its reduced dims (as 1s): read from the shapes,
// which every lowering sets, rather than ReduceOptions.keep_dims, which the
// kernels never read and not every lowering fills.
bool keeps_dims(const LoweredModel& m, const LoweredOp& op) {
  return m.values[static_cast<size_t>(op.inputs[0])].shape.size() ==
         m.values[static_cast<size_t>(op.outputs[0])].shape.size();
}

// After T(p) -> reduction(axes, keep_dims): the reduction's axes on T's input,
// and the permutation still to apply to its result.
void reduce_through(const Perm& p, const std::vector<int32_t>& axes, bool keep_dims,
                    std::vector<int32_t>* new_axes, Perm* after) {
  new_axes->clear();
  for (int32_t a : axes) new_axes->push_back(p[static_cast<size_t>(a)]);
  std::sort(new_axes->begin(), new_axes->end());
  if (keep_dims) {
    *after = p;
    return;
  }
  std::vector<int32_t> kept_in_order;  // input dims kept, in output order
  for (size_t i = 0; i < p.size(); ++i) {
    if (std::find(axes.begin(), axes.end(), static_cast<int32_t>(i)) == axes.end()) kept_in_order.push_back(p[i]);
  }
  std::vector<int32_t> sorted = kept_in_order;
  std::sort(sorted.begin(), sorted.end());
  after->clear();
  for (int32_t d : kept_in_order) {
    after->push_back(static_cast<int32_t>(std::lower_bound(sorted.begin(), sorted.end(), d) - sorted.begin()));
  }
}

schema::OpOptionsUnion transpose_options(Perm perm) {
  schema::TransposeOptionsT o;
  o.perm = std::move(perm);
  schema::OpOptionsUnion u;
  u.Set(std::move(o));
  return u;
}

class Rewriter {
 public:
  Rewriter(LoweredModel& model, PassLog& log) : model_(model), view_(model), log_(log) {}

  // One rewrite of the transpose at op index t; true when the model changed.
  bool rewrite(size_t t) {
    const int y = model_.ops[t].outputs[0];
    const Perm p = perm_of(model_.ops[t]);
    if (is_identity(p)) return drop_identity(t);
    for (const Use& use : view_.uses(y)) {
      if (is_transpose(model_.ops[static_cast<size_t>(use.op)])) return merge(t, static_cast<size_t>(use.op));
    }
    if (!pays_off(y, p, 0, after_weights(model_.ops[t].inputs[0]))) return false;
    const size_t c = static_cast<size_t>(view_.sole_consumer(y));
    const LoweredOp& u = model_.ops[c];
    if (is_unary_elementwise(u.opcode)) return push_unary(t, c);
    if (is_binary_elementwise(u.opcode)) return push_binary(t, c);
    if (u.opcode == schema::OpCode::PAD) return push_pad(t, c);
    if (is_reduction(u)) return push_reduction(t, c);
    if (u.opcode == schema::OpCode::CONCAT) return push_concat(c);
    return false;
  }

 private:
  // Whether `v` comes from a convolution/matmul through elementwise ops with
  // constant operands only (so those ops can still fuse into it).
  bool after_weights(int v) const {
    for (int depth = 0; depth < 64; ++depth) {
      const int p = view_.producer(v);
      if (p < 0) return false;
      const LoweredOp& op = model_.ops[static_cast<size_t>(p)];
      if (has_weights(op.opcode)) return true;
      if (is_unary_elementwise(op.opcode) && op.inputs.size() == 1) {
        v = op.inputs[0];
      } else if (is_binary_elementwise(op.opcode) && op.inputs.size() == 2 &&
                 model_.values[static_cast<size_t>(op.inputs[1])].is_constant()) {
        v = op.inputs[0];
      } else if (is_binary_elementwise(op.opcode) && op.inputs.size() == 2 &&
                 model_.values[static_cast<size_t>(op.inputs[0])].is_constant()) {
        v = op.inputs[1];
      } else {
        return false;
      }
    }
    return false;
  }

  // The other operand of binary op `u` reading `y`: -1 if none qualifies.
  // Sets *transposed when it is another T(p) read by `u` alone.
  int binary_partner(const LoweredOp& u, int y, const Perm& p, bool* transposed) const {
    const int slot = input_slot(u, y);
    if (slot < 0 || u.inputs.size() != 2) return -1;
    const int other = u.inputs[static_cast<size_t>(1 - slot)];
    const Value& o = model_.values[static_cast<size_t>(other)];
    *transposed = false;
    if (o.is_constant()) return o.shape.size() <= p.size() ? other : -1;
    const int producer = view_.producer(other);
    if (producer >= 0 && is_transpose(model_.ops[static_cast<size_t>(producer)]) &&
        perm_of(model_.ops[static_cast<size_t>(producer)]) == p &&
        view_.sole_consumer(other) == view_.sole_consumer(y)) {
      *transposed = true;
      return other;
    }
    return -1;
  }

  // Whether moving T(p) (producing y) down ends in a cancellation or a merge, or
  // (`to_output`) reaches a graph output through elementwise ops.
  bool pays_off(int y, Perm p, int depth, bool to_output) const {
    if (depth > 64) return false;
    if (to_output && depth > 0 && view_.is_graph_output(y) && view_.uses(y).empty()) return true;
    const int c = view_.sole_consumer(y);
    if (c < 0) return false;
    const LoweredOp& u = model_.ops[static_cast<size_t>(c)];
    if (u.outputs.size() != 1) return false;
    const int z = u.outputs[0];
    if (is_transpose(u)) return true;
    if (is_unary_elementwise(u.opcode)) return pays_off(z, p, depth + 1, to_output);
    if (is_binary_elementwise(u.opcode)) {
      bool transposed = false;
      if (binary_partner(u, y, p, &transposed) < 0) return false;
      return transposed || pays_off(z, p, depth + 1, to_output);
    }
    if (u.opcode == schema::OpCode::PAD) return input_slot(u, y) == 0 && pays_off(z, p, depth + 1, false);
    if (is_reduction(u)) {
      std::vector<int32_t> axes;
      Perm after;
      const schema::ReduceOptionsT* o = u.options.AsReduceOptions();
      reduce_through(p, o->axes, keeps_dims(model_, u), &axes, &after);
      return is_identity(after) || pays_off(z, after, depth + 1, false);
    }
    if (u.opcode == schema::OpCode::CONCAT) return concat_inputs_transposed(u, p);
    return false;
  }

  bool concat_inputs_transposed(const LoweredOp& u, const Perm& p) const {
    if (u.inputs.size() < 2) return false;
    const int c = view_.producer(u.outputs[0]);
    for (int v : u.inputs) {
      const int producer = v < 0 ? -1 : view_.producer(v);
      if (producer < 0 || !is_transpose(model_.ops[static_cast<size_t>(producer)]) ||
          perm_of(model_.ops[static_cast<size_t>(producer)]) != p || view_.sole_consumer(v) != c) {
        return false;
      }
    }
    return true;
  }

  int new_value(int like, std::vector<int64_t> shape, const std::string& suffix) {
    Value v;
    v.name = model_.values[static_cast<size_t>(like)].name + suffix;
    v.dtype = model_.values[static_cast<size_t>(like)].dtype;
    v.shape = std::move(shape);
    return model_.add_value(std::move(v));
  }

  LoweredOp make_transpose(int in, int out, Perm perm, const std::string& node) {
    LoweredOp op;
    op.opcode = schema::OpCode::TRANSPOSE;
    op.options = transpose_options(std::move(perm));
    op.inputs = {in};
    op.outputs = {out};
    op.node_name = node;
    return op;
  }

  // A new constant: `constant` ranked up to perm's rank and transposed by perm^-1,
  // computed by running the reference TRANSPOSE kernel once.
  int relayout(int constant, const Perm& perm, const std::string& node) {
    LoweredModel scratch;
    Value ranked = model_.values[static_cast<size_t>(constant)];
    ranked.shape.insert(ranked.shape.begin(), perm.size() - ranked.shape.size(), 1);
    Value out;
    out.name = ranked.name + "/relaid";
    out.dtype = ranked.dtype;
    out.shape = permute(ranked.shape, inverse(perm));
    const int in_id = scratch.add_value(ranked);
    const int out_id = scratch.add_value(out);
    scratch.ops.push_back(make_transpose(in_id, out_id, inverse(perm), node));
    scratch.outputs = {out_id};
    std::vector<HostTensor> result = run_lowered(scratch, "re-laying out a constant of '" + node + "'");
    out.constant = std::make_shared<const HostTensor>(std::move(result[0]));
    return model_.add_value(std::move(out));
  }

  bool drop_identity(size_t t) {
    LoweredOp& op = model_.ops[t];
    const int x = op.inputs[0], y = op.outputs[0];
    if (view_.is_graph_output(y)) {  // keep the output tensor; a copy is cheaper
      op.opcode = schema::OpCode::RESHAPE;
      op.options = schema::OpOptionsUnion();
    } else {
      replace_uses(model_, y, x);
      model_.ops.erase(model_.ops.begin() + static_cast<long>(t));
    }
    log_.push_back("removed identity TRANSPOSE '" + model_.values[static_cast<size_t>(y)].name + "'");
    return true;
  }

  bool merge(size_t t, size_t t2) {
    const LoweredOp& first = model_.ops[t];
    LoweredOp& second = model_.ops[t2];
    const Perm q = compose(perm_of(first), perm_of(second));
    const std::string names = "'" + first.node_name + "' and '" + second.node_name + "'";
    const int y = first.outputs[0];
    second.inputs[0] = first.inputs[0];
    second.options = transpose_options(q);
    bool first_dead = !view_.is_graph_output(y);
    for (const Use& use : view_.uses(y)) first_dead = first_dead && static_cast<size_t>(use.op) == t2;
    if (first_dead) model_.ops.erase(model_.ops.begin() + static_cast<long>(t));
    log_.push_back(std::string(is_identity(q) ? "cancelled" : "merged") + " TRANSPOSE " + names);
    return true;
  }

  // The elementwise/pad/reduction/concat op at `c` now runs in T's input layout:
  // it writes `s` instead of `z`, and T(s, perm) -> z follows it.
  void retarget(size_t c, int s, Perm perm) {
    const int z = model_.ops[c].outputs[0];
    const std::string node = model_.ops[c].node_name;
    model_.ops[c].outputs[0] = s;
    model_.ops.insert(model_.ops.begin() + static_cast<long>(c) + 1, make_transpose(s, z, std::move(perm), node));
  }

  bool push_unary(size_t t, size_t c) {
    const int x = model_.ops[t].inputs[0], y = model_.ops[t].outputs[0];
    const Perm p = perm_of(model_.ops[t]);
    const int z = model_.ops[c].outputs[0];
    model_.ops[c].inputs[static_cast<size_t>(input_slot(model_.ops[c], y))] = x;
    retarget(c, new_value(z, model_.values[static_cast<size_t>(x)].shape, "/pre_transpose"), p);
    log_.push_back("moved TRANSPOSE '" + model_.ops[t].node_name + "' below " +
                   schema::EnumNameOpCode(model_.ops[c].opcode) + " '" + model_.ops[c].node_name + "'");
    model_.ops.erase(model_.ops.begin() + static_cast<long>(t));
    return true;
  }

  bool push_binary(size_t t, size_t c) {
    const int x = model_.ops[t].inputs[0], y = model_.ops[t].outputs[0];
    const Perm p = perm_of(model_.ops[t]);
    bool transposed = false;
    const int other = binary_partner(model_.ops[c], y, p, &transposed);
    const int slot = input_slot(model_.ops[c], y);
    const int z = model_.ops[c].outputs[0];
    const std::string node = model_.ops[c].node_name;
    std::vector<bool> remove(model_.ops.size() + 2, false);
    int partner = -1;
    std::vector<int64_t> other_shape;
    if (transposed) {
      partner = view_.producer(other);
      model_.ops[c].inputs[static_cast<size_t>(1 - slot)] = model_.ops[static_cast<size_t>(partner)].inputs[0];
      other_shape = model_.values[static_cast<size_t>(model_.ops[static_cast<size_t>(partner)].inputs[0])].shape;
    } else {
      // The constant, ranked up to T's rank (same bytes), re-laid out by T(p^-1).
      const int relaid = relayout(other, p, node);
      other_shape = model_.values[static_cast<size_t>(relaid)].shape;
      model_.ops[static_cast<size_t>(c)].inputs[static_cast<size_t>(1 - slot)] = relaid;
    }
    model_.ops[c].inputs[static_cast<size_t>(slot)] = x;
    // Result shape in T's input layout: the broadcast of the new operands.
    const std::vector<int64_t>& xs = model_.values[static_cast<size_t>(x)].shape;
    std::vector<int64_t> s_shape(xs.size());
    for (size_t d = 0; d < xs.size(); ++d) s_shape[d] = std::max(xs[d], other_shape[d]);
    retarget(c, new_value(z, s_shape, "/pre_transpose"), p);
    log_.push_back("moved TRANSPOSE '" + model_.ops[t].node_name + "' below " +
                   schema::EnumNameOpCode(model_.ops[c].opcode) + " '" + node + "'" +
                   (transposed ? " (merged with '" + model_.ops[static_cast<size_t>(partner)].node_name + "')" : ""));
    remove[t] = true;
    if (partner >= 0) remove[static_cast<size_t>(partner)] = true;
    remove.resize(model_.ops.size());
    erase_ops(model_, remove);
    return true;
  }

  bool push_pad(size_t t, size_t c) {
    const int x = model_.ops[t].inputs[0];
    const Perm p = perm_of(model_.ops[t]);
    const int z = model_.ops[c].outputs[0];
    schema::PadOptionsT* o = model_.ops[c].options.AsPadOptions();
    std::vector<int32_t> paddings(o->paddings.size());
    for (size_t i = 0; i < p.size(); ++i) {  // dim i of y is dim p[i] of x
      paddings[2 * static_cast<size_t>(p[i])] = o->paddings[2 * i];
      paddings[2 * static_cast<size_t>(p[i]) + 1] = o->paddings[2 * i + 1];
    }
    o->paddings = paddings;
    model_.ops[c].inputs[0] = x;
    std::vector<int64_t> shape = model_.values[static_cast<size_t>(x)].shape;
    for (size_t d = 0; d < shape.size(); ++d) shape[d] += paddings[2 * d] + paddings[2 * d + 1];
    retarget(c, new_value(z, shape, "/pre_transpose"), p);
    log_.push_back("moved TRANSPOSE '" + model_.ops[t].node_name + "' below PAD '" + model_.ops[c].node_name + "'");
    model_.ops.erase(model_.ops.begin() + static_cast<long>(t));
    return true;
  }

  bool push_reduction(size_t t, size_t c) {
    const int x = model_.ops[t].inputs[0];
    const Perm p = perm_of(model_.ops[t]);
    const int z = model_.ops[c].outputs[0];
    schema::ReduceOptionsT* o = model_.ops[c].options.AsReduceOptions();
    const bool keep = keeps_dims(model_, model_.ops[c]);
    std::vector<int32_t> axes;
    Perm after;
    reduce_through(p, o->axes, keep, &axes, &after);
    o->axes = axes;
    model_.ops[c].inputs[0] = x;
    if (!is_identity(after)) {
      std::vector<int64_t> shape;
      const std::vector<int64_t>& xs = model_.values[static_cast<size_t>(x)].shape;
      for (size_t d = 0; d < xs.size(); ++d) {
        const bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<int32_t>(d));
        if (!reduced) shape.push_back(xs[d]);
        if (reduced && keep) shape.push_back(1);
      }
      retarget(c, new_value(z, shape, "/pre_transpose"), after);
    }
    log_.push_back("moved TRANSPOSE '" + model_.ops[t].node_name + "' below " +
                   schema::EnumNameOpCode(model_.ops[c].opcode) + " '" + model_.ops[c].node_name + "'" +
                   (is_identity(after) ? " (cancelled)" : ""));
    model_.ops.erase(model_.ops.begin() + static_cast<long>(t));
    return true;
  }

  bool push_concat(size_t c) {
    const Perm p = perm_of(model_.ops[static_cast<size_t>(view_.producer(model_.ops[c].inputs[0]))]);
    const int z = model_.ops[c].outputs[0];
    std::vector<bool> remove(model_.ops.size(), false);
    std::vector<int64_t> shape;
    for (int& v : model_.ops[c].inputs) {
      const int producer = view_.producer(v);
      remove[static_cast<size_t>(producer)] = true;
      v = model_.ops[static_cast<size_t>(producer)].inputs[0];
    }
    schema::ConcatOptionsT* o = model_.ops[c].options.AsConcatOptions();
    const int32_t axis = p[static_cast<size_t>(o->axis)];
    o->axis = axis;
    shape = model_.values[static_cast<size_t>(model_.ops[c].inputs[0])].shape;
    shape[static_cast<size_t>(axis)] = 0;
    for (int v : model_.ops[c].inputs) shape[static_cast<size_t>(axis)] += model_.values[static_cast<size_t>(v)].shape[static_cast<size_t>(axis)];
    log_.push_back("moved " + std::to_string(model_.ops[c].inputs.size()) + " TRANSPOSEs below CONCAT '" +
                   model_.ops[c].node_name + "'");
    retarget(c, new_value(z, shape, "/pre_transpose"), p);
    remove.insert(remove.begin() + static_cast<long>(c) + 1, false);
    erase_ops(model_, remove);
    return true;
  }

  LoweredModel& model_;
  GraphView view_;
  PassLog& log_;
};

}  // namespace

int minimize_transposes(LoweredModel& model, PassLog& log) {
  int rewrites = 0;
  // Each rewrite removes a transpose or moves one down a finite acyclic path, so
  // this terminates; the bound is a guard against a bug, not a limit in practice.
  for (size_t guard = 0; guard < 100000; ++guard) {
    bool changed = false;
    Rewriter rewriter(model, log);
    for (size_t t = 0; t < model.ops.size() && !changed; ++t) {
      if (is_transpose(model.ops[t])) changed = rewriter.rewrite(t);
    }
    if (!changed) break;
    ++rewrites;
  }
  return rewrites;
}

}  // namespace floe::conv::opt
