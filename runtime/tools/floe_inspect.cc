// SPDX-License-Identifier: Apache-2.0
// Host-only tool code (never built for a device): it may use the heap, the
// standard library and exceptions; the arena-only rule binds runtime/core and kernels.
// floe-inspect: what a .floe model holds, as text and as two pictures.
//   floe-inspect model.floe|model.tflite [--target T] [--plan plan.svg]
//                [--graph graph.svg|graph.png] [--no-verify-checksum]
// A .tflite is converted first, in memory, as `floe-convert --graph m.tflite
// --target T` would (default host), and what that gives is shown.
// The text lists the target, the arena and its regions, every op in run order
// (backend, kernel, operands, parameters, int8 requantization) and every tensor
// (dtype, shape, quantization, place in the arena or the constants, lifetime).
// --plan draws the memory plan: x = op index, y = arena offset, one box per
// arena tensor (named) over its lifetime, coloured by the kind of op that
// writes it (the legend), the step with the most live bytes marked.
// --graph draws ops and the tensors between them, laid out by Graphviz's dot
// (edges routed around the boxes; an op's scratch tensors are listed in its
// box); without dot an .svg falls back to a plain layered drawing.
// The model goes through Model::Load first (the runtime's own validation and,
// by default, the file checksum), so a damaged file is refused, never drawn.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "converter/ir/error.h"
#include "converter/pipeline/convert.h"
#include "flatbuffers/minireflect.h"
#include "runtime/core/model.h"
#include "runtime/tools/model_file.h"
#include "schemas/contract/dtype.h"
#include "schemas/contract/selftest.h"
#include "schemas/floe_generated.h"
#include "schemas/floe_reflect_generated.h"

namespace {

namespace fs = floe::schema;

constexpr const char* kUsage =
    "usage: floe-inspect model.floe|model.tflite [--target T] [--plan plan.svg] [--graph graph.svg|graph.png]\n"
    "                    [--no-verify-checksum]\n";

std::string shape_text(const flatbuffers::Vector<int32_t>* shape) {
  std::string s = "[";
  if (shape != nullptr) {
    for (uint32_t i = 0; i < shape->size(); ++i) s += (i ? "," : "") + std::to_string(shape->Get(i));
  }
  return s + "]";
}

std::string name_of(const fs::Tensor* t) { return t->name() ? t->name()->str() : std::string(); }
std::string name_of(const fs::Operator* op) { return op->name() ? op->name()->str() : std::string(); }

const char* backend_name(fs::Backend b) {
  switch (b) {
    case fs::Backend::REFERENCE: return "reference";
    case fs::Backend::XNNPACK: return "xnnpack";
    case fs::Backend::CORTEX_M: return "cortex-m";
  }
  return "?";
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string shorten(const std::string& s, size_t n) { return s.size() <= n ? s : "…" + s.substr(s.size() - (n - 1)); }

// One table printed through the schema's type table (absent fields are at
// their schema defaults and not printed).
std::string table_text(const void* table, const flatbuffers::TypeTable* type) {
  flatbuffers::ToStringVisitor visitor(" ", false, "", false);
  flatbuffers::IterateObject(static_cast<const uint8_t*>(table), type, &visitor);
  return visitor.s == "{  }" ? "(schema defaults)" : visitor.s;
}

struct Interval {
  int first = 0, last = 0;  // closed, in op steps [0, op count]
};

struct Inspection {
  const fs::Model* m = nullptr;
  size_t ops = 0;
  std::vector<Interval> life;        // arena tensors: stored lifetime (or the whole run)
  std::vector<bool> in_arena;        // tensors an op or the graph touches, not constant
  std::vector<int> producer;         // op writing each tensor, -1 = none
  std::vector<uint64_t> live_bytes;  // per step, from the op list (as the converter's bound)
  uint64_t lower_bound = 0;
  size_t peak_step = 0;
};

Inspection analyse(const fs::Model* m) {
  Inspection in;
  in.m = m;
  in.ops = m->operators()->size();
  const size_t nt = m->tensors()->size();
  in.producer.assign(nt, -1);
  in.in_arena.assign(nt, false);
  in.life.assign(nt, Interval{});
  // Liveness from the op list alone (first writer or 0 for inputs, last reader
  // or the end for outputs): the floor floe-convert reports as "lower bound".
  std::vector<int> first(nt, -1), last(nt, -1);
  for (int32_t t : *m->inputs()) first[t] = 0;
  for (size_t k = 0; k < in.ops; ++k) {
    const fs::Operator* op = m->operators()->Get(static_cast<uint32_t>(k));
    for (int32_t t : *op->outputs()) {
      if (first[t] < 0) first[t] = static_cast<int>(k);
      last[t] = std::max(last[t], static_cast<int>(k));
      if (in.producer[t] < 0) in.producer[t] = static_cast<int>(k);
    }
    if (op->inputs() != nullptr) {
      for (int32_t t : *op->inputs()) {
        if (t >= 0) last[t] = std::max(last[t], static_cast<int>(k));
      }
    }
  }
  for (int32_t t : *m->outputs()) last[t] = static_cast<int>(in.ops);
  in.live_bytes.assign(in.ops + 1, 0);
  for (size_t t = 0; t < nt; ++t) {
    const fs::Tensor* ten = m->tensors()->Get(static_cast<uint32_t>(t));
    if (ten->is_constant() || first[t] < 0) continue;
    in.in_arena[t] = true;
    const int a = first[t], b = std::max(first[t], last[t]);
    for (int s = a; s <= b; ++s) in.live_bytes[s] += ten->size();
    if (ten->live_first_op() >= 0 && ten->live_last_op() >= 0) {
      in.life[t] = Interval{ten->live_first_op(), ten->live_last_op()};
    } else {
      in.life[t] = Interval{0, static_cast<int>(in.ops)};  // absent: live for the whole run
    }
  }
  for (size_t s = 0; s < in.live_bytes.size(); ++s) {
    if (in.live_bytes[s] > in.lower_bound) {
      in.lower_bound = in.live_bytes[s];
      in.peak_step = s;
    }
  }
  return in;
}

std::string quantization_text(const fs::Tensor* t) {
  const fs::TensorQuantization* q = t->quantization();
  if (q == nullptr || q->scale() == nullptr || q->scale()->size() == 0) return "";
  std::ostringstream s;
  if (q->scale()->size() == 1) {
    s << "scale " << q->scale()->Get(0) << " zp "
      << (q->zero_point() && q->zero_point()->size() ? q->zero_point()->Get(0) : 0);
  } else {
    s << q->scale()->size() << " channels (axis " << q->quantized_dimension() << "), scale[0] "
      << q->scale()->Get(0) << " zp[0] " << (q->zero_point() && q->zero_point()->size() ? q->zero_point()->Get(0) : 0);
  }
  return s.str();
}

void print_text(const std::string& path, size_t file_size, bool checksum_checked, const floe::Model& model,
                const Inspection& in) {
  const fs::Model* m = in.m;
  const size_t nt = m->tensors()->size();
  std::printf("floe-inspect: %s\n", path.c_str());
  std::printf("  file: %zu B, format version %u, producer %s, checksum %s\n", file_size, m->version(),
              m->producer() ? m->producer()->c_str() : "(none)",
              checksum_checked ? "verified" : "not checked (--no-verify-checksum)");
  std::printf("  target: %s\n", m->target() && m->target()->size() ? m->target()->c_str() : "reference");
  std::map<std::string, int> per_backend;
  for (const fs::Operator* op : *m->operators()) per_backend[backend_name(op->backend())]++;
  std::string backends;
  for (const auto& [name, count] : per_backend) backends += (backends.empty() ? "" : ", ") + name + " " + std::to_string(count);
  size_t constant_tensors = 0, arena_tensors = 0, selftest_tensors = 0;
  const std::string selftest_prefix = floe::selftest::kPrefix;
  for (size_t t = 0; t < nt; ++t) {
    const fs::Tensor* ten = m->tensors()->Get(static_cast<uint32_t>(t));
    constant_tensors += ten->is_constant() ? 1 : 0;
    arena_tensors += in.in_arena[t] ? 1 : 0;
    selftest_tensors += name_of(ten).compare(0, selftest_prefix.size(), selftest_prefix) == 0 ? 1 : 0;
  }
  std::printf("  ops: %zu (%s)\n", in.ops, backends.c_str());
  std::printf("  tensors: %zu (%zu in the arena, %zu constant: %u B of constants)\n", nt, arena_tensors,
              constant_tensors, m->constants() ? m->constants()->size() : 0u);
  const uint64_t activations = m->arena_size();
  std::printf("  arena: activations %llu B (lower bound %llu B at op %zu, ratio %.4f)\n",
              static_cast<unsigned long long>(activations), static_cast<unsigned long long>(in.lower_bound),
              in.peak_step, in.lower_bound ? static_cast<double>(activations) / in.lower_bound : 1.0);
  // The regions Interpreter::Init() lays out after the activations
  // (runtime/core/interpreter.h): XNNPACK's, when the runtime runs the model's
  // XNNPACK ops, then the prepared ops, whose size depends on the pointer width.
  std::printf("  regions: activations %llu B, xnnpack budget %llu B, prepared ops %llu B (32-bit) / %llu B (64-bit)\n",
              static_cast<unsigned long long>(activations),
              static_cast<unsigned long long>(m->xnnpack_arena_size()),
              static_cast<unsigned long long>(m->persistent_size_ptr32()),
              static_cast<unsigned long long>(m->persistent_size_ptr64()));
  std::printf("  this runtime build: activations [0, %llu), prepared ops [%llu, %llu): arena_size() %llu B\n",
              static_cast<unsigned long long>(activations),
              static_cast<unsigned long long>(model.persistent_offset()),
              static_cast<unsigned long long>(model.persistent_offset() + model.persistent_size()),
              static_cast<unsigned long long>(model.arena_size()));
  auto io = [&](const char* what, const flatbuffers::Vector<int32_t>* list) {
    std::printf("  %s:", what);
    for (int32_t t : *list) {
      const fs::Tensor* ten = m->tensors()->Get(static_cast<uint32_t>(t));
      // A complex one is its float32 pairs (Tensor.complex).
      std::printf(" t%d %s %s%s %s", t, name_of(ten).c_str(),
                  floe::dtype_name(static_cast<floe::DType>(ten->dtype())), ten->complex() ? " (complex64 pairs)" : "",
                  shape_text(ten->shape()).c_str());
    }
    std::printf("\n");
  };
  io("inputs", m->inputs());
  io("outputs", m->outputs());
  std::printf("  self-test: %s\n", selftest_tensors ? ("embedded (" + std::to_string(selftest_tensors) +
                                                        " constant tensors; floe-run --selftest)").c_str()
                                                     : "none");

  std::printf("ops (run order):\n");
  for (size_t k = 0; k < in.ops; ++k) {
    const fs::Operator* op = m->operators()->Get(static_cast<uint32_t>(k));
    std::printf("  #%zu %s  backend %s", k, fs::EnumNameOpCode(op->opcode()), backend_name(op->backend()));
    if (op->cortexm_kernel() != fs::CortexMKernel::NONE) std::printf(" kernel %s", fs::EnumNameCortexMKernel(op->cortexm_kernel()));
    if (op->single_threaded()) std::printf(" single-threaded");
    std::printf("  node %s\n", name_of(op).c_str());
    auto operands = [&](const char* what, const flatbuffers::Vector<int32_t>* list) {
      if (list == nullptr) return;
      std::printf("      %s:", what);
      for (int32_t t : *list) {
        if (t < 0) {
          std::printf(" (absent)");
          continue;
        }
        const fs::Tensor* ten = m->tensors()->Get(static_cast<uint32_t>(t));
        std::printf(" t%d%s %s", t, ten->is_constant() ? "(const)" : "", shape_text(ten->shape()).c_str());
      }
      std::printf("\n");
    };
    operands("in", op->inputs());
    operands("out", op->outputs());
    if (op->options() != nullptr && op->options_type() != fs::OpOptions::NONE) {
      const flatbuffers::TypeTable* options_type =
          floe::schema_reflect::OpOptionsTypeTable()->type_refs[static_cast<int>(op->options_type()) - 1]();
      std::printf("      params %s %s\n", fs::EnumNameOpOptions(op->options_type()),
                  table_text(op->options(), options_type).c_str());
    }
    if (op->requantization() != nullptr) {
      std::printf("      requantization %s\n",
                  table_text(op->requantization(), floe::schema_reflect::RequantizationTypeTable()).c_str());
    }
  }

  std::printf("tensors:\n");
  std::printf("  %5s %-8s %-16s %-9s %10s %10s %-9s %s\n", "#", "dtype", "shape", "place", "offset", "bytes",
              "live", "name / quantization");
  for (size_t t = 0; t < nt; ++t) {
    const fs::Tensor* ten = m->tensors()->Get(static_cast<uint32_t>(t));
    const char* place = ten->is_constant() ? "constant" : in.in_arena[t] ? "arena" : "unused";
    std::string live = "-";
    if (in.in_arena[t]) live = std::to_string(in.life[t].first) + ".." + std::to_string(in.life[t].last);
    const std::string q = quantization_text(ten);
    std::printf("  %5zu %-8s %-16s %-9s %10llu %10llu %-9s %s%s%s\n", t,
                floe::dtype_name(static_cast<floe::DType>(ten->dtype())), shape_text(ten->shape()).c_str(), place,
                static_cast<unsigned long long>(ten->offset()), static_cast<unsigned long long>(ten->size()),
                live.c_str(), name_of(ten).c_str(), q.empty() ? "" : "  ", q.c_str());
  }
}

void write_file(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out || !(out << text) || !out.flush()) throw std::runtime_error(path + ": cannot write");
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    throw std::runtime_error(path + ": cannot write");
  }
}

// A soft colour per op kind, so tensors written by the same kind of op match.
std::string colour(size_t key) {
  static const char* kPalette[] = {"#8ecae6", "#ffb703", "#90be6d", "#f28482", "#b8b8ff",
                                   "#f6bd60", "#84a59d", "#cdb4db", "#a3c4f3", "#ffcad4"};
  return kPalette[key % (sizeof kPalette / sizeof kPalette[0])];
}

std::string svg_head(double width, double height) {
  std::ostringstream s;
  s << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << width << " " << height << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
    << "<rect x=\"0\" y=\"0\" width=\"" << width << "\" height=\"" << height << "\" fill=\"white\"/>\n";
  return s.str();
}

// Plan box colour: the writing op's kind, model inputs grey.
constexpr int kModelInput = -1;
std::string plan_colour(int kind) { return kind == kModelInput ? "#d9d9d9" : colour(static_cast<size_t>(kind)); }

// The memory plan: x = op step, y = arena offset (0 at the top), one box per
// arena tensor from its first to its last step, named and coloured by the
// kind of op that writes it; a legend names the colours and the peak mark.
std::string plan_svg(const std::string& title, const Inspection& in) {
  const fs::Model* m = in.m;
  std::map<int, std::string> kinds;  // opcode (or kModelInput) -> legend text
  for (size_t t = 0; t < m->tensors()->size(); ++t) {
    if (!in.in_arena[t] || m->tensors()->Get(static_cast<uint32_t>(t))->size() == 0) continue;
    if (in.producer[t] < 0) {
      kinds[kModelInput] = "model input";
    } else {
      const fs::OpCode code = m->operators()->Get(static_cast<uint32_t>(in.producer[t]))->opcode();
      kinds[static_cast<int>(code)] = std::string("written by ") + fs::EnumNameOpCode(code);
    }
  }
  const size_t legend_columns = 4;
  const size_t legend_rows = (kinds.size() + 1 + legend_columns - 1) / legend_columns;  // + the peak mark
  const double left = 90, top = 50, right = 30, bottom = 70 + 18.0 * static_cast<double>(legend_rows);
  const size_t steps = in.ops + 1;
  const double step_w = std::max(6.0, std::min(60.0, 900.0 / static_cast<double>(steps)));
  const double plot_w = std::max(720.0, step_w * static_cast<double>(steps)), plot_h = 480;
  const double width = left + plot_w + right, height = top + plot_h + bottom;
  const uint64_t arena = std::max<uint64_t>(1, m->arena_size());
  auto y_of = [&](uint64_t offset) { return top + plot_h * static_cast<double>(offset) / static_cast<double>(arena); };
  std::ostringstream s;
  s << svg_head(width, height);
  s << "<text x=\"" << left << "\" y=\"20\" font-size=\"14\" font-weight=\"bold\">" << xml_escape(title)
    << ": memory plan, " << m->arena_size() << " B of activations (lower bound " << in.lower_bound
    << " B)</text>\n";
  s << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\"" << plot_h
    << "\" fill=\"#f7f7f7\" stroke=\"#333\"/>\n";
  for (size_t t = 0; t < m->tensors()->size(); ++t) {
    if (!in.in_arena[t]) continue;
    const fs::Tensor* ten = m->tensors()->Get(static_cast<uint32_t>(t));
    if (ten->size() == 0) continue;
    const double x = left + step_w * in.life[t].first;
    const double w = step_w * (in.life[t].last - in.life[t].first + 1);
    const double y = y_of(ten->offset());
    const double h = std::max(1.0, y_of(ten->offset() + ten->size()) - y);
    const int kind = in.producer[t] >= 0
                         ? static_cast<int>(m->operators()->Get(static_cast<uint32_t>(in.producer[t]))->opcode())
                         : kModelInput;
    s << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << w << "\" height=\"" << h << "\" fill=\""
      << plan_colour(kind) << "\" fill-opacity=\"0.85\" stroke=\"#222\" stroke-width=\"0.6\"><title>t" << t << " "
      << xml_escape(name_of(ten)) << ": offset " << ten->offset() << ", " << ten->size() << " B, ops "
      << in.life[t].first << ".." << in.life[t].last << "</title></rect>\n";
    if (h >= 12 && w >= 30) {
      // Size on the first line, then as much of the name as the box holds,
      // wrapped; a long name keeps its tail, which tells layers apart.
      const size_t fits = static_cast<size_t>((w - 6) / 5.0);
      const size_t lines = static_cast<size_t>((std::min(h, 120.0) - 3) / 10);
      std::vector<std::string> label = {std::to_string(ten->size()) + " B"};
      std::string name = name_of(ten).empty() ? "t" + std::to_string(t) : name_of(ten);
      if (fits >= 4 && lines >= 2) {
        const size_t room = fits * (lines - 1);
        if (name.size() > room) name = "…" + name.substr(name.size() - (room - 1));
        for (size_t at = 0; at < name.size(); at += fits) label.push_back(name.substr(at, fits));
      }
      for (size_t i = 0; i < label.size(); ++i) {
        s << "<text x=\"" << x + 3 << "\" y=\"" << y + 10 + 10.0 * static_cast<double>(i) << "\" font-size=\"8.5\">"
          << xml_escape(label[i]) << "</text>\n";
      }
    }
  }
  // The peak, over the boxes: the step with the most live bytes.
  const double peak_x = left + step_w * static_cast<double>(in.peak_step);
  s << "<rect x=\"" << peak_x << "\" y=\"" << top << "\" width=\"" << step_w << "\" height=\"" << plot_h
    << "\" fill=\"#ff0000\" fill-opacity=\"0.12\" stroke=\"#d00\" stroke-width=\"1.5\" stroke-dasharray=\"4,2\"/>\n";
  s << "<text x=\"" << peak_x + step_w / 2 << "\" y=\"" << top - 6 << "\" text-anchor=\"middle\" fill=\"#d00\">peak: op "
    << in.peak_step << ", " << in.live_bytes[in.peak_step] << " B live</text>\n";
  // Axes: op steps along x, arena offsets along y.
  const size_t x_tick = std::max<size_t>(1, steps / 20);
  for (size_t k = 0; k < steps; k += x_tick) {
    const double x = left + step_w * (static_cast<double>(k) + 0.5);
    s << "<line x1=\"" << x << "\" y1=\"" << top + plot_h << "\" x2=\"" << x << "\" y2=\"" << top + plot_h + 5
      << "\" stroke=\"#333\"/><text x=\"" << x << "\" y=\"" << top + plot_h + 17 << "\" text-anchor=\"middle\">" << k
      << "</text>\n";
  }
  for (int i = 0; i <= 8; ++i) {
    const uint64_t offset = arena * static_cast<uint64_t>(i) / 8;
    const double y = y_of(offset);
    s << "<line x1=\"" << left - 5 << "\" y1=\"" << y << "\" x2=\"" << left << "\" y2=\"" << y
      << "\" stroke=\"#333\"/><text x=\"" << left - 8 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">" << offset
      << "</text>\n";
  }
  s << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << top + plot_h + 36
    << "\" text-anchor=\"middle\" font-size=\"12\">op index (run order); a box spans the ops its tensor is live "
       "for</text>\n";
  s << "<text x=\"16\" y=\"" << top + plot_h / 2 << "\" text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 16 "
    << top + plot_h / 2 << ")\">arena offset (bytes)</text>\n";
  // Legend: one swatch per kind of writer, then the peak mark.
  const double legend_top = top + plot_h + 52, column_w = plot_w / static_cast<double>(legend_columns);
  size_t slot = 0;
  auto swatch = [&](const std::string& fill, const std::string& extra, const std::string& text) {
    const double x = left + column_w * static_cast<double>(slot % legend_columns);
    const double y = legend_top + 18.0 * static_cast<double>(slot / legend_columns);
    s << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"14\" height=\"11\" fill=\"" << fill << "\" " << extra
      << "/><text x=\"" << x + 19 << "\" y=\"" << y + 10 << "\">" << xml_escape(text) << "</text>\n";
    ++slot;
  };
  for (const auto& [kind, text] : kinds) swatch(plan_colour(kind), "stroke=\"#222\" stroke-width=\"0.6\"", text);
  swatch("#ff0000", "fill-opacity=\"0.12\" stroke=\"#d00\" stroke-dasharray=\"4,2\"", "peak: most live bytes");
  s << "</svg>\n";
  return s.str();
}

// The graph: ops (boxes) and the arena tensors between them (rounded boxes),
// top to bottom in layers (each node one layer below the deepest node it reads).
std::string graph_svg(const std::string& title, const Inspection& in) {
  const fs::Model* m = in.m;
  const size_t nt = m->tensors()->size();
  // Nodes: [0, ops) ops, then one per arena tensor.
  std::vector<int> tensor_node(nt, -1);
  std::vector<size_t> node_tensor;
  for (size_t t = 0; t < nt; ++t) {
    if (in.in_arena[t]) {
      tensor_node[t] = static_cast<int>(in.ops + node_tensor.size());
      node_tensor.push_back(t);
    }
  }
  const size_t nodes = in.ops + node_tensor.size();
  std::vector<int> layer(nodes, 0);
  std::vector<std::pair<int, int>> edges;
  for (size_t k = 0; k < in.ops; ++k) {  // ops are in run order: producers come first
    const fs::Operator* op = m->operators()->Get(static_cast<uint32_t>(k));
    int depth = 0;
    if (op->inputs() != nullptr) {
      for (int32_t t : *op->inputs()) {
        if (t < 0 || tensor_node[t] < 0) continue;
        edges.emplace_back(tensor_node[t], static_cast<int>(k));
        depth = std::max(depth, layer[tensor_node[t]] + 1);
      }
    }
    layer[k] = depth;
    for (int32_t t : *op->outputs()) {
      if (tensor_node[t] < 0) continue;
      edges.emplace_back(static_cast<int>(k), tensor_node[t]);
      layer[tensor_node[t]] = std::max(layer[tensor_node[t]], depth + 1);
    }
  }
  int layers = 0;
  for (int l : layer) layers = std::max(layers, l + 1);
  std::vector<std::vector<size_t>> rows(static_cast<size_t>(layers));
  for (size_t n = 0; n < nodes; ++n) rows[static_cast<size_t>(layer[n])].push_back(n);
  const double node_w = 240, node_h = 34, gap_x = 20, gap_y = 26, margin = 20, title_h = 30;
  size_t widest = 1;
  for (const auto& row : rows) widest = std::max(widest, row.size());
  const double width = std::max(480.0, margin * 2 + static_cast<double>(widest) * (node_w + gap_x));
  const double height = title_h + margin * 2 + static_cast<double>(layers) * (node_h + gap_y);
  std::vector<double> cx(nodes), cy(nodes);
  for (size_t l = 0; l < rows.size(); ++l) {
    const double row_w = static_cast<double>(rows[l].size()) * (node_w + gap_x);
    for (size_t i = 0; i < rows[l].size(); ++i) {
      cx[rows[l][i]] = (width - row_w) / 2 + (node_w + gap_x) * (static_cast<double>(i) + 0.5);
      cy[rows[l][i]] = title_h + margin + static_cast<double>(l) * (node_h + gap_y) + node_h / 2;
    }
  }
  std::ostringstream s;
  s << svg_head(width, height);
  s << "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
       "orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/></marker></defs>\n";
  s << "<text x=\"" << margin << "\" y=\"20\" font-size=\"14\" font-weight=\"bold\">" << xml_escape(title) << ": "
    << in.ops << " ops, " << node_tensor.size() << " arena tensors</text>\n";
  for (const auto& [from, to] : edges) {
    s << "<line x1=\"" << cx[from] << "\" y1=\"" << cy[from] + node_h / 2 << "\" x2=\"" << cx[to] << "\" y2=\""
      << cy[to] - node_h / 2 << "\" stroke=\"#555\" stroke-width=\"1\" marker-end=\"url(#arrow)\"/>\n";
  }
  for (size_t n = 0; n < nodes; ++n) {
    const double x = cx[n] - node_w / 2, y = cy[n] - node_h / 2;
    if (n < in.ops) {
      const fs::Operator* op = m->operators()->Get(static_cast<uint32_t>(n));
      size_t constants = 0;
      if (op->inputs() != nullptr) {
        for (int32_t t : *op->inputs()) constants += t >= 0 && m->tensors()->Get(static_cast<uint32_t>(t))->is_constant();
      }
      s << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << node_w << "\" height=\"" << node_h
        << "\" fill=\"" << colour(static_cast<size_t>(op->opcode())) << "\" stroke=\"#222\"><title>op " << n << " "
        << xml_escape(name_of(op)) << "</title></rect>\n";
      s << "<text x=\"" << cx[n] << "\" y=\"" << y + 14 << "\" text-anchor=\"middle\" font-weight=\"bold\">#" << n << " "
        << fs::EnumNameOpCode(op->opcode()) << " (" << backend_name(op->backend()) << ")</text>\n";
      s << "<text x=\"" << cx[n] << "\" y=\"" << y + 27 << "\" text-anchor=\"middle\" font-size=\"9\">"
        << xml_escape(shorten(name_of(op), 36)) << (constants ? " +" + std::to_string(constants) + " const" : "")
        << "</text>\n";
    } else {
      const size_t t = node_tensor[n - in.ops];
      const fs::Tensor* ten = m->tensors()->Get(static_cast<uint32_t>(t));
      s << "<rect x=\"" << x + 15 << "\" y=\"" << y + 3 << "\" width=\"" << node_w - 30 << "\" height=\"" << node_h - 6
        << "\" rx=\"12\" fill=\"#ffffff\" stroke=\"#777\"><title>t" << t << " " << xml_escape(name_of(ten))
        << "</title></rect>\n";
      s << "<text x=\"" << cx[n] << "\" y=\"" << cy[n] + 4 << "\" text-anchor=\"middle\" font-size=\"9\">t" << t << " "
        << floe::dtype_name(static_cast<floe::DType>(ten->dtype())) << " " << shape_text(ten->shape()) << "</text>\n";
    }
  }
  s << "</svg>\n";
  return s.str();
}

// Scratch tensors: written by an op, read by no op and not a model output
// (im2col buffers, LSTM gates): part of that op, not an edge of the graph.
std::vector<bool> scratch_tensors(const Inspection& in) {
  const fs::Model* m = in.m;
  std::vector<bool> read(m->tensors()->size(), false), scratch(m->tensors()->size(), false);
  for (const fs::Operator* op : *m->operators()) {
    if (op->inputs() == nullptr) continue;
    for (int32_t t : *op->inputs()) {
      if (t >= 0) read[static_cast<size_t>(t)] = true;
    }
  }
  for (int32_t t : *m->outputs()) read[static_cast<size_t>(t)] = true;
  for (size_t t = 0; t < scratch.size(); ++t) scratch[t] = in.in_arena[t] && in.producer[t] >= 0 && !read[t];
  return scratch;
}

std::string dot_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// The graph for Graphviz: ops as filled boxes (kind, backend, node name,
// constants and scratch inside), arena tensors as rounded boxes between them.
std::string graph_dot(const std::string& title, const Inspection& in) {
  const fs::Model* m = in.m;
  const std::vector<bool> scratch = scratch_tensors(in);
  size_t arena_tensors = 0;
  for (size_t t = 0; t < scratch.size(); ++t) arena_tensors += in.in_arena[t] && !scratch[t];
  std::ostringstream s;
  s << "digraph floe {\n  graph [rankdir=TB, nodesep=0.25, ranksep=0.3, fontname=\"sans-serif\", fontsize=14, "
       "labelloc=t, label=\""
    << dot_escape(title) << ": " << in.ops << " ops, " << arena_tensors << " arena tensors\"];\n"
    << "  node [fontname=\"sans-serif\", fontsize=10, shape=box];\n  edge [color=\"#555555\", arrowsize=0.6];\n";
  auto tensor_label = [&](size_t t) {
    const fs::Tensor* ten = m->tensors()->Get(static_cast<uint32_t>(t));
    return "t" + std::to_string(t) + " " + floe::dtype_name(static_cast<floe::DType>(ten->dtype())) + " " +
           shape_text(ten->shape()) + "\\n" + dot_escape(shorten(name_of(ten), 40));
  };
  for (size_t t = 0; t < scratch.size(); ++t) {
    if (!in.in_arena[t] || scratch[t]) continue;
    s << "  t" << t << " [style=rounded, color=\"#777777\", fontsize=9, label=\"" << tensor_label(t) << "\"];\n";
  }
  for (size_t k = 0; k < in.ops; ++k) {
    const fs::Operator* op = m->operators()->Get(static_cast<uint32_t>(k));
    size_t constants = 0;
    std::string scratch_text;
    if (op->inputs() != nullptr) {
      for (int32_t t : *op->inputs()) constants += t >= 0 && m->tensors()->Get(static_cast<uint32_t>(t))->is_constant();
    }
    for (int32_t t : *op->outputs()) {
      if (t < 0 || !scratch[static_cast<size_t>(t)]) continue;
      const fs::Tensor* ten = m->tensors()->Get(static_cast<uint32_t>(t));
      scratch_text += "\\nscratch t" + std::to_string(t) + " " + std::to_string(ten->size()) + " B";
    }
    s << "  op" << k << " [style=filled, fillcolor=\"" << colour(static_cast<size_t>(op->opcode())) << "\", label=\"#"
      << k << " " << fs::EnumNameOpCode(op->opcode()) << " (" << backend_name(op->backend()) << ")\\n"
      << dot_escape(shorten(name_of(op), 40)) << (constants ? "\\n+" + std::to_string(constants) + " const" : "")
      << scratch_text << "\", tooltip=\"op " << k << " " << dot_escape(name_of(op)) << "\"];\n";
    if (op->inputs() != nullptr) {
      for (int32_t t : *op->inputs()) {
        if (t >= 0 && in.in_arena[static_cast<size_t>(t)] && !scratch[static_cast<size_t>(t)]) {
          s << "  t" << t << " -> op" << k << ";\n";
        }
      }
    }
    for (int32_t t : *op->outputs()) {
      if (t >= 0 && in.in_arena[static_cast<size_t>(t)] && !scratch[static_cast<size_t>(t)]) {
        s << "  op" << k << " -> t" << t << ";\n";
      }
    }
  }
  s << "}\n";
  return s.str();
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// --graph: dot lays the graph out (SVG or PNG by the file's extension); an SVG
// without dot installed gets the plain layered drawing, with a note.
void write_graph(const std::string& path, const std::string& title, const Inspection& in) {
  const bool png = ends_with(path, ".png");
  if (!png && !ends_with(path, ".svg")) throw std::runtime_error(path + ": --graph writes .svg or .png");
  const std::string dot_path = path + ".dot.tmp", temp = path + ".tmp";
  write_file(dot_path, graph_dot(title, in));
  const std::string command = "dot -T" + std::string(png ? "png" : "svg") + " -o " + shell_quote(temp) + " " +
                              shell_quote(dot_path) + " 2>/dev/null";
  const int status = std::system(command.c_str());
  std::remove(dot_path.c_str());
  if (status == 0 && std::rename(temp.c_str(), path.c_str()) == 0) return;
  std::remove(temp.c_str());
  const bool no_dot = std::system("command -v dot >/dev/null 2>&1") != 0;
  if (no_dot && !png) {
    std::fprintf(stderr, "floe-inspect: note: Graphviz's dot is not installed (Debian: graphviz): %s gets a plain "
                         "layered drawing\n", path.c_str());
    write_file(path, graph_svg(title, in));
    return;
  }
  throw std::runtime_error(path + (no_dot ? ": a PNG graph needs Graphviz's dot (Debian: graphviz)"
                                          : ": Graphviz's dot failed to lay out the graph"));
}

bool is_tflite_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  char head[8] = {};
  return file.read(head, sizeof head) && std::memcmp(head + 4, "TFL3", 4) == 0;
}

int run(int argc, char** argv) {
  std::string path, plan_path, graph_path, target = "host";
  bool verify_checksum = true, target_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value\n" + kUsage);
      return argv[++i];
    };
    if (arg == "--plan") plan_path = value();
    else if (arg == "--graph") graph_path = value();
    else if (arg == "--target") target = value(), target_given = true;
    else if (arg == "--no-verify-checksum") verify_checksum = false;
    else if (arg == "-h" || arg == "--help") {
      std::printf("%s", kUsage);
      return 0;
    } else if (!arg.empty() && arg[0] != '-' && path.empty()) path = arg;
    else throw std::runtime_error("unexpected argument '" + arg + "'\n" + kUsage);
  }
  if (path.empty()) throw std::runtime_error(std::string("no model given\n") + kUsage);

  floe::tools::ModelFile file;
  std::string converted_from;
  if (is_tflite_file(path)) {
    floe::conv::ConvertOptions convert_options;
    convert_options.graph_path = path;
    convert_options.target = target;
    floe::conv::ConvertResult result;
    try {
      result = floe::conv::convert(convert_options);
    } catch (const floe::conv::ConvertError& e) {
      throw std::runtime_error(std::string("cannot convert the .tflite: ") + e.what());
    }
    file.data = floe::tools::aligned_bytes(result.model.size());
    file.size = result.model.size();
    std::memcpy(file.data.get(), result.model.data(), result.model.size());
    converted_from = " (converted from the .tflite for target " + target + ")";
  } else {
    if (target_given) throw std::runtime_error("--target applies to a .tflite (a .floe was converted for its target)");
    file = floe::tools::read_model_file(path);
  }
  floe::Model model;
  floe::LoadOptions options;
  options.verify_checksum = verify_checksum;
  if (model.Load(file.data.get(), file.size, options) != floe::Status::kOk) {
    const floe::Error& e = model.error();
    std::string where;
    if (e.op >= 0) where += ", op " + std::to_string(e.op);
    if (e.tensor >= 0) where += ", tensor " + std::to_string(e.tensor);
    throw std::runtime_error(path + ": not a valid floe model (" + floe::status_name(e.status) + where + "): " +
                             e.message);
  }
  const Inspection in = analyse(model.schema());
  std::string title = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  // Pictures first (each written whole or not at all), then the text.
  if (!plan_path.empty()) write_file(plan_path, plan_svg(title, in));
  if (!graph_path.empty()) write_graph(graph_path, title, in);
  print_text(path + converted_from, file.size, verify_checksum, model, in);
  if (!plan_path.empty()) std::printf("plan: %s\n", plan_path.c_str());
  if (!graph_path.empty()) std::printf("graph: %s\n", graph_path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "floe-inspect: error: %s\n", e.what());
    return 2;
  }
}
