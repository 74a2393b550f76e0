// SPDX-License-Identifier: Apache-2.0
// TF's fused RNN cell ops (contrib.rnn / tf.raw_ops): LSTMBlockCell,
// GRUBlockCell and BlockLSTM (an LSTMBlockCell unrolled over a static number of
// time steps). They are lowered into the existing kernels (CONCAT, MATMUL, ADD,
// STRIDED_SLICE, SIGMOID, TANH, MUL, MINIMUM/MAXIMUM), so their semantics stay
// the reference kernels' (gate order i, ci, f, o; cell clip; peepholes; as TF).
#include "converter/ir/attrs.h"
#include "converter/ops/op_registry.h"

namespace floe::conv {
namespace {

using schema::OpCode;

struct Builder {
  LowerContext& ctx;
  int serial = 0;

  std::string name(const std::string& what) { return what + "_" + std::to_string(serial++); }
  int value(const std::vector<int64_t>& shape, const std::string& what) {
    return ctx.new_value(DType::kFloat32, shape, name(what));
  }
  const std::vector<int64_t>& shape(int v) { return ctx.value_info(v).shape; }

  int binary(OpCode code, int a, int b, const std::string& what, int out = -1) {
    std::vector<int64_t> s = shape(ctx.value_info(a).shape.size() >= shape(b).size() ? a : b);
    if (out < 0) out = value(s, what);
    ctx.add_op(code, {a, b}, {out});
    return out;
  }
  int unary(OpCode code, int a, const std::string& what, int out = -1) {
    if (out < 0) out = value(shape(a), what);
    ctx.add_op(code, {a}, {out});
    return out;
  }
  int scalar(float v, const std::string& what) {
    HostTensor t;
    t.dtype = DType::kFloat32;
    t.data.resize(4);
    *t.as<float>() = v;
    return ctx.constant_value(name(what), std::move(t));
  }
  int concat(const std::vector<int>& parts, int32_t axis, const std::string& what, int out = -1) {
    std::vector<int64_t> s = shape(parts[0]);
    s[static_cast<size_t>(axis)] = 0;
    for (int p : parts) s[static_cast<size_t>(axis)] += shape(p)[static_cast<size_t>(axis)];
    if (out < 0) out = value(s, what);
    schema::ConcatOptionsT o;
    o.axis = axis;
    ctx.add_op(OpCode::CONCAT, parts, {out}, LowerContext::options(o));
    return out;
  }
  // Columns [begin, begin + count) of a 2-D value.
  int columns(int v, int64_t begin, int64_t count, const std::string& what) {
    const std::vector<int64_t> s = shape(v);
    const int out = value({s[0], count}, what);
    schema::StridedSliceOptionsT o;
    o.begin = {0, static_cast<int32_t>(count > 0 ? begin : 0)};
    o.stride = {1, 1};
    ctx.add_op(OpCode::STRIDED_SLICE, {v}, {out}, LowerContext::options(o));
    return out;
  }
  int matmul(int a, int b, const std::string& what) {
    const int out = value({shape(a)[0], shape(b)[1]}, what);
    ctx.add_op(OpCode::MATMUL, {a, b}, {out}, LowerContext::options(schema::MatMulOptionsT()));
    return out;
  }
};

struct LstmParams {
  int w = -1, wci = -1, wcf = -1, wco = -1, b = -1;
  float forget_bias = 1.0f, cell_clip = 3.0f;
  bool peephole = false;
  int64_t cell = 0;
};

// Outputs in TF's order: i, cs, f, o, ci, co, h. `outs` may hold pre-made ids.
std::vector<int> lstm_step(Builder& g, const LstmParams& p, int x, int cs_prev, int h_prev,
                           std::vector<int> outs) {
  const int64_t c = p.cell;
  const int xh = g.concat({x, h_prev}, 1, "xh");
  const int icfo = g.binary(OpCode::ADD, g.matmul(xh, p.w, "gates_raw"), p.b, "gates");
  int i_raw = g.columns(icfo, 0, c, "i_raw");
  const int ci_raw = g.columns(icfo, c, c, "ci_raw");
  int f_raw = g.columns(icfo, 2 * c, c, "f_raw");
  int o_raw = g.columns(icfo, 3 * c, c, "o_raw");
  if (p.peephole) {
    i_raw = g.binary(OpCode::ADD, i_raw, g.binary(OpCode::MUL, cs_prev, p.wci, "peep_i"), "i_peep");
    f_raw = g.binary(OpCode::ADD, f_raw, g.binary(OpCode::MUL, cs_prev, p.wcf, "peep_f"), "f_peep");
  }
  const int i = g.unary(OpCode::SIGMOID, i_raw, "i", outs[0]);
  const int ci = g.unary(OpCode::TANH, ci_raw, "ci", outs[4]);
  const int f = g.unary(OpCode::SIGMOID, g.binary(OpCode::ADD, f_raw, g.scalar(p.forget_bias, "forget_bias"), "f_biased"),
                        "f", outs[2]);
  const bool clip = p.cell_clip > 0.0f;
  int cs = g.binary(OpCode::ADD, g.binary(OpCode::MUL, ci, i, "ci_i"), g.binary(OpCode::MUL, cs_prev, f, "cs_f"),
                    "cs_unclipped", clip ? -1 : outs[1]);
  if (clip) {
    cs = g.binary(OpCode::MAXIMUM, g.binary(OpCode::MINIMUM, cs, g.scalar(p.cell_clip, "clip_hi"), "cs_hi"),
                  g.scalar(-p.cell_clip, "clip_lo"), "cs", outs[1]);
  }
  if (p.peephole) o_raw = g.binary(OpCode::ADD, o_raw, g.binary(OpCode::MUL, cs, p.wco, "peep_o"), "o_peep");
  const int o = g.unary(OpCode::SIGMOID, o_raw, "o", outs[3]);
  const int co = g.unary(OpCode::TANH, cs, "co", outs[5]);
  const int h = g.binary(OpCode::MUL, co, o, "h", outs[6]);
  return {i, cs, f, o, ci, co, h};
}

LstmParams lstm_params(LowerContext& ctx, int first_weight) {
  LstmParams p;
  const auto& def = ctx.node().def;
  p.forget_bias = attr_float(def, "forget_bias", 1.0f);
  p.cell_clip = attr_float(def, "cell_clip", 3.0f);
  p.peephole = attr_bool(def, "use_peephole", false);
  p.w = ctx.input_value(first_weight);
  p.wci = ctx.input_value(first_weight + 1);
  p.wcf = ctx.input_value(first_weight + 2);
  p.wco = ctx.input_value(first_weight + 3);
  p.b = ctx.input_value(first_weight + 4);
  p.cell = ctx.input(first_weight + 4).shape[0] / 4;
  return p;
}

void require_f32_inputs(const NodeContext& ctx) {
  for (int i = 0; i < ctx.input_count(); ++i) {
    const DType t = ctx.input(i).dtype;
    if (t != DType::kFloat32 && !(ctx.node().op() == "BlockLSTM" && i == 0)) {
      ctx.fail("input " + std::to_string(i) + " must be float32 (float64 is narrowed), has " + dtype_name(t));
    }
  }
}

// LSTMBlockCell(x [B,I], cs_prev [B,C], h_prev [B,C], w [I+C,4C], wci, wcf, wco [C], b [4C])
std::vector<TensorInfo> infer_lstm_cell(const NodeContext& ctx) {
  ctx.expect_inputs(8, 8);
  require_f32_inputs(ctx);
  const auto &x = ctx.input(0).shape, &w = ctx.input(3).shape, &b = ctx.input(7).shape;
  if (x.size() != 2 || w.size() != 2 || b.size() != 1 || b[0] % 4 != 0) ctx.fail("unexpected operand ranks");
  const int64_t cell = b[0] / 4;
  if (w[0] != x[1] + cell || w[1] != 4 * cell) ctx.fail("weights must be [input + cell, 4 * cell]");
  return std::vector<TensorInfo>(7, TensorInfo{DType::kFloat32, {x[0], cell}, nullptr});
}

void lower_lstm_cell(LowerContext& ctx) {
  Builder g{ctx};
  const LstmParams p = lstm_params(ctx, 3);
  std::vector<int> outs;
  for (int k = 0; k < 7; ++k) outs.push_back(ctx.output_value(k));
  lstm_step(g, p, ctx.input_value(0), ctx.input_value(1), ctx.input_value(2), outs);
}

// BlockLSTM(seq_len_max, x [T,B,I], cs_prev, h_prev, w, wci, wcf, wco, b): outputs [T,B,C] each.
std::vector<TensorInfo> infer_block_lstm(const NodeContext& ctx) {
  ctx.expect_inputs(9, 9);
  require_f32_inputs(ctx);
  const std::vector<int64_t> seq = ctx.constant_ints(0, "seq_len_max");
  const auto &x = ctx.input(1).shape, &w = ctx.input(4).shape, &b = ctx.input(8).shape;
  if (x.size() != 3 || w.size() != 2 || b.size() != 1 || b[0] % 4 != 0) ctx.fail("unexpected operand ranks");
  if (seq.size() != 1 || seq[0] < x[0]) {
    ctx.fail("seq_len_max shorter than the time dim is not supported (outputs past it would be zero)");
  }
  const int64_t cell = b[0] / 4;
  if (w[0] != x[2] + cell || w[1] != 4 * cell) ctx.fail("weights must be [input + cell, 4 * cell]");
  return std::vector<TensorInfo>(7, TensorInfo{DType::kFloat32, {x[0], x[1], cell}, nullptr});
}

void lower_block_lstm(LowerContext& ctx) {
  Builder g{ctx};
  const LstmParams p = lstm_params(ctx, 4);
  const auto& x = ctx.input(1).shape;
  const int64_t steps = x[0], batch = x[1];
  const int xs = ctx.input_value(1);
  int cs = ctx.input_value(2), h = ctx.input_value(3);
  std::vector<std::vector<int>> per_output(7);
  for (int64_t t = 0; t < steps; ++t) {
    const int step_x3 = g.value({1, batch, x[2]}, "x_t");
    schema::StridedSliceOptionsT o;
    o.begin = {static_cast<int32_t>(t), 0, 0};
    o.stride = {1, 1, 1};
    ctx.add_op(OpCode::STRIDED_SLICE, {xs}, {step_x3}, LowerContext::options(o));
    const int step_x = ctx.reshaped_value(step_x3, {batch, x[2]}, g.name("x_t2"));
    const std::vector<int> r = lstm_step(g, p, step_x, cs, h, std::vector<int>(7, -1));
    cs = r[1];
    h = r[6];
    for (int k = 0; k < 7; ++k) per_output[static_cast<size_t>(k)].push_back(ctx.reshaped_value(r[static_cast<size_t>(k)], {1, batch, p.cell}, g.name("out_t")));
  }
  for (int k = 0; k < 7; ++k) {
    const auto& parts = per_output[static_cast<size_t>(k)];
    if (parts.size() > 64) ctx.fail("more than 64 time steps are not supported yet");
    if (parts.empty()) ctx.fail("zero time steps");
    g.concat(parts, 0, "stacked", ctx.output_value(k));
  }
}

// GRUBlockCell(x [B,I], h_prev [B,C], w_ru [I+C,2C], w_c [I+C,C], b_ru [2C], b_c [C]) -> r, u, c, h
std::vector<TensorInfo> infer_gru_cell(const NodeContext& ctx) {
  ctx.expect_inputs(6, 6);
  require_f32_inputs(ctx);
  const auto &x = ctx.input(0).shape, &h = ctx.input(1).shape;
  if (x.size() != 2 || h.size() != 2 || h[0] != x[0]) ctx.fail("unexpected operand shapes");
  return std::vector<TensorInfo>(4, TensorInfo{DType::kFloat32, h, nullptr});
}

void lower_gru_cell(LowerContext& ctx) {
  Builder g{ctx};
  const int x = ctx.input_value(0), h_prev = ctx.input_value(1);
  const int64_t c = ctx.input(1).shape[1];
  const int ru = g.binary(OpCode::ADD, g.matmul(g.concat({x, h_prev}, 1, "xh"), ctx.input_value(2), "ru_raw"),
                          ctx.input_value(4), "ru_bar");
  const int r = g.unary(OpCode::SIGMOID, g.columns(ru, 0, c, "r_raw"), "r", ctx.output_value(0));
  const int u = g.unary(OpCode::SIGMOID, g.columns(ru, c, c, "u_raw"), "u", ctx.output_value(1));
  const int xhr = g.concat({x, g.binary(OpCode::MUL, h_prev, r, "h_r")}, 1, "xhr");
  const int cc = g.unary(OpCode::TANH,
                         g.binary(OpCode::ADD, g.matmul(xhr, ctx.input_value(3), "c_raw"), ctx.input_value(5), "c_bar"),
                         "c", ctx.output_value(2));
  // h = u * h_prev + (1 - u) * c
  const int one_minus_u = g.binary(OpCode::SUB, g.scalar(1.0f, "one"), u, "one_minus_u");
  g.binary(OpCode::ADD, g.binary(OpCode::MUL, u, h_prev, "u_h"), g.binary(OpCode::MUL, one_minus_u, cc, "c_part"), "h",
           ctx.output_value(3));
}

}  // namespace

const std::vector<OpHandler>& rnn_cell_handlers() {
  static const std::vector<OpHandler> handlers = {
      {"LSTMBlockCell", infer_lstm_cell, lower_lstm_cell},
      {"BlockLSTM", infer_block_lstm, lower_block_lstm},
      {"GRUBlockCell", infer_gru_cell, lower_gru_cell},
  };
  return handlers;
}

}  // namespace floe::conv
