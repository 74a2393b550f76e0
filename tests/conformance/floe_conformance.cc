// SPDX-License-Identifier: Apache-2.0
// floe-conformance: runs every dl4j_tf_graphs case through floe and compares
// with the values TensorFlow computed. Per case: convert frozen_model.pb
// in-process with the `in_<k>` Const nodes and the Placeholders as inputs (TF
// may feed any tensor), feed the values they hold / the *.placeholder.csv
// values, run the model in the interpreter, compare every *.prediction.csv
// with a per-dtype tolerance. Prints a table by family and every failure,
// refusal and skip with its reason; on a failure, the run is repeated with an
// observer to name the first op whose output diverges from TF's intermediate
// values (*.prediction_inbw.csv). See --help.
//
// An in_<k> Const that floe needs at conversion time (a shape, axis or size:
// floe models are fully static) is kept constant and listed in the report; every
// other input is fed at run time, so the kernels really run in the runtime.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "converter/ir/attrs.h"
#include "converter/frontend/graphdef/graph_loader.h"
#include "converter/ir/tensor_proto.h"
#include "converter/ir/error.h"
#include "converter/ir/graph.h"
#include "converter/pipeline/convert.h"
#include "runtime/core/interpreter.h"
#include "runtime/kernels/reference/half.h"
#include "runtime/tools/input_conversion.h"
#include "runtime/tools/model_file.h"
#include "converter/eval/run_lowered.h"
#include "runtime/tools/npy.h"
#include "schemas/floe_generated.h"
#include "tests/conformance/corpus_case.h"
#include "tests/support/arena_floor.h"

namespace floe::conformance {
namespace {

namespace fs = std::filesystem;
using conv::HostTensor;

enum class Verdict { kPassed, kFailed, kRefused, kSkipped };

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kPassed: return "passed";
    case Verdict::kFailed: return "failed";
    case Verdict::kRefused: return "refused";
    case Verdict::kSkipped: return "skipped";
  }
  return "?";
}

struct Outcome {
  Verdict verdict = Verdict::kFailed;
  std::string reason;  // one line
  std::string note;    // e.g. inputs kept constant
  std::vector<std::string> kept_constant = {};  // case inputs floe needed at conversion time
  // The converted model's arena against its floor (tests/support/arena_floor.h);
  // converted = false when conversion did not get that far.
  struct Arena {
    bool converted = false;
    uint64_t bytes = 0, floor = 0;
    bool chain = false;
    double ratio() const { return floor == 0 ? (bytes == 0 ? 1.0 : INFINITY) : double(bytes) / double(floor); }
  } arena = {};
};

// ---- tolerances ------------------------------------------------------------

struct Tolerance {
  double rel = 0.0;
  double abs = 0.0;
  const char* label = "exact";
};

// float32 (and float64, which floe computes in float32): 1e-5 relative plus an
// absolute floor of 1e-6 x the tensor's scale (max(1, max |expected|)): float
// sums err relative to the size of their terms, not of the result, so an element
// that cancels to near zero inside a tensor of magnitude 1e4 legitimately
// carries ~1e-3 absolute error (seen in conv_4). float16 has 11 significant bits
// (eps 9.8e-4): 2e-3 relative + 1e-3 x scale. bfloat16 has 8 (eps 7.8e-3):
// 1.6e-2 relative + 1e-2 x scale. Integers and bools: exact.
Tolerance tolerance_for(const std::string& dtype) {
  if (dtype == "float32" || dtype == "float" || dtype == "float64" || dtype == "double") {
    return {1e-5, 1e-6, "float32: 1e-5 rel + 1e-6 x scale"};
  }
  if (dtype == "float16" || dtype == "half") return {2e-3, 1e-3, "float16: 2e-3 rel + 1e-3 x scale"};
  if (dtype == "bfloat16") return {1.6e-2, 1e-2, "bfloat16: 1.6e-2 rel + 1e-2 x scale"};
  return {0.0, 0.0, "exact"};
}

std::string dtype_label(DType t) {
  switch (t) {
    case DType::kFloat32: return "float32";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat64: return "float64";
    case DType::kBool: return "bool";
    default: return dtype_name(t);
  }
}

// `scale` = max(1, max |expected| over the tensor).
bool close_enough(double expected, double got, const Tolerance& tol, double scale) {
  if (std::isnan(expected)) return std::isnan(got);
  if (std::isinf(expected)) return got == expected;
  if (tol.rel == 0.0 && tol.abs == 0.0) return expected == got;
  return std::fabs(expected - got) <= tol.abs * scale + tol.rel * std::fabs(expected);
}

// ---- tensors <-> doubles ----------------------------------------------------

double element(const void* data, DType t, size_t i) {
  switch (t) {
    case DType::kFloat32: return static_cast<const float*>(data)[i];
    case DType::kFloat64: return static_cast<const double*>(data)[i];
    case DType::kFloat16: return ref::half_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::kBFloat16: return ref::bfloat16_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::kInt8: return static_cast<const int8_t*>(data)[i];
    case DType::kInt16: return static_cast<const int16_t*>(data)[i];
    case DType::kInt32: return static_cast<const int32_t*>(data)[i];
    case DType::kInt64: return static_cast<double>(static_cast<const int64_t*>(data)[i]);
    case DType::kUInt8: return static_cast<const uint8_t*>(data)[i];
    case DType::kUInt16: return static_cast<const uint16_t*>(data)[i];
    case DType::kUInt32: return static_cast<const uint32_t*>(data)[i];
    case DType::kUInt64: return static_cast<double>(static_cast<const uint64_t*>(data)[i]);
    case DType::kBool: return static_cast<const uint8_t*>(data)[i] != 0 ? 1.0 : 0.0;
    case DType::kInvalid: break;
  }
  return NAN;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string number(double v) {
  std::ostringstream s;
  s << std::setprecision(9) << v;
  return s.str();
}

// First index where `got` leaves the tolerance of `expected`; -1 when none.
struct Mismatch {
  int64_t index = -1;
  double expected = 0, got = 0;
};
Mismatch first_mismatch(const std::vector<double>& expected, const void* got, DType got_dtype,
                        const Tolerance& tol) {
  double scale = 1.0;
  for (double e : expected) {
    if (std::isfinite(e)) scale = std::max(scale, std::fabs(e));
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    const double g = element(got, got_dtype, i);
    if (!close_enough(expected[i], g, tol, scale)) return {static_cast<int64_t>(i), expected[i], g};
  }
  return {};
}

// ---- one case ---------------------------------------------------------------

struct Config {
  std::string examples_dir;
  std::string failure_dir;  // when set: model + inputs of failing cases, for floe-run
  std::vector<std::string> disabled_passes;  // converter optimization passes to skip
  bool verbose = false;
  bool convert_only = false;  // stop after conversion (arena checks need no run)
  std::string model_dir;      // when set: every converted model, for outside tools (arena_bound.py)
  conv::LoopMode loops = conv::LoopMode::kAuto;  // floe-convert --loops
  bool fail_on_mismatch = false;  // a case whose values differ from TF's fails the run (refusals do not)
};

struct Expected {
  std::string stem;         // file stem relative to the case dir
  std::string tensor;       // "node:k"
  std::string tf_dtype;     // from `dtypes`, "" when not listed
};

std::string tensor_for_stem(const conv::Graph& graph, const std::string& stem) {
  if (graph.find(stem) >= 0) return stem + ":0";
  const size_t dot = stem.rfind('.');
  if (dot != std::string::npos && dot + 1 < stem.size() &&
      stem.find_first_not_of("0123456789", dot + 1) == std::string::npos &&
      graph.find(stem.substr(0, dot)) >= 0) {
    return stem.substr(0, dot) + ":" + stem.substr(dot + 1);
  }
  throw std::runtime_error("expected output '" + stem + "' names no node of the graph");
}

// Splits "node:k" into ("node", k).
std::pair<std::string, int> split_tensor(const std::string& name) {
  const size_t colon = name.rfind(':');
  if (colon == std::string::npos) return {name, 0};
  return {name.substr(0, colon), std::stoi(name.substr(colon + 1))};
}

// A refusal's reason from the error's fields: "<reason>: Op, Op; <reason>: Op".
std::string refusal_reason(const conv::ConvertError& e) {
  std::string out;
  for (const conv::Refusal& r : e.refusals()) {
    std::string ops;
    for (const auto& [op, nodes] : r.nodes_by_op) ops += (ops.empty() ? "" : ", ") + op;
    out += (out.empty() ? "" : "; ") + r.reason + (ops.empty() ? "" : ": " + ops);
  }
  return out.empty() ? std::string(e.what()).substr(0, std::string(e.what()).find('\n')) : out;
}

// The fed case input ("in_<k>") the error says conversion needs: its tensor
// field names that input, its read-through Identity, or the input itself.
std::string conversion_time_input(const conv::ConvertError& e, const std::set<std::string>& feeds) {
  if (e.category() != conv::ErrorCategory::kNeedsConstant || e.tensor().empty()) return "";
  std::string name = e.tensor().substr(0, e.tensor().rfind(':'));
  for (const std::string& suffix : {std::string("/read"), std::string("")}) {
    if (suffix.empty() || (name.size() > suffix.size() &&
                           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)) {
      const std::string base = name.substr(0, name.size() - suffix.size());
      if (feeds.count(base)) return base;
    }
  }
  return "";
}

struct RunResult {
  std::vector<HostTensor> outputs;
  std::vector<std::string> output_names;
  std::string error;
};

// Per-op outputs captured during Invoke (for divergence reports).
struct Capture {
  const Model* model = nullptr;
  const Interpreter* interpreter = nullptr;
  struct Item {
    size_t op = 0;
    std::string op_name;
    std::string tensor;
    HostTensor value;
  };
  std::vector<Item> items;
};

void capture_op(void* user, size_t op_index, const char* op_name) {
  auto* c = static_cast<Capture*>(user);
  const auto* op = c->model->schema()->operators()->Get(static_cast<uint32_t>(op_index));
  for (int32_t t : *op->outputs()) {
    const TensorView v = c->interpreter->tensor(static_cast<size_t>(t));
    Capture::Item item;
    item.op = op_index;
    item.op_name = op_name;
    item.tensor = v.name;
    item.value.dtype = v.dtype;
    item.value.shape.assign(v.shape.dims, v.shape.dims + v.shape.rank);
    const auto* p = static_cast<const uint8_t*>(v.data);
    item.value.data.assign(p, p + v.bytes);
    c->items.push_back(std::move(item));
  }
}

RunResult run_model(const std::vector<uint8_t>& bytes, const std::map<std::string, HostTensor>& inputs,
                    Capture* capture) {
  RunResult r;
  tools::AlignedBytes buffer = tools::aligned_bytes(bytes.size());
  std::memcpy(buffer.get(), bytes.data(), bytes.size());
  Model model;
  if (model.Load(buffer.get(), bytes.size()) != Status::kOk) {
    r.error = std::string("Model::Load: ") + model.error().message;
    return r;
  }
  const size_t arena_size = static_cast<size_t>(model.arena_size());
  tools::AlignedBytes arena = tools::aligned_bytes(arena_size);
  Interpreter interpreter(model, arena.get(), arena_size);
  if (interpreter.Init() != Status::kOk) {
    const Error& e = interpreter.error();
    std::string op_name;
    if (e.op >= 0) {
      const auto* op = model.schema()->operators()->Get(static_cast<uint32_t>(e.op));
      op_name = std::string(schema::EnumNameOpCode(op->opcode())) + " '" +
                (op->name() ? op->name()->str() : "") + "'";
    }
    r.error = std::string("Init: ") + e.message + (op_name.empty() ? "" : " (op " + op_name + ")");
    return r;
  }
  for (const auto& [name, value] : inputs) {
    const int index = interpreter.input_index(name.c_str());
    if (index < 0) continue;  // pruned away: the outputs do not need it
    // As floe-run feeds a .npy: the values in the dtype TF held them in,
    // converted only where no value changes.
    const TensorView in = interpreter.input(static_cast<size_t>(index));
    tools::InputTarget target;
    target.name = name;
    target.dtype = in.dtype;
    target.shape.assign(in.shape.dims, in.shape.dims + in.shape.rank);
    target.quantized = interpreter.input_quantization(static_cast<size_t>(index)).quantized();
    target.data = in.data;
    try {
      tools::convert_input(value.data.data(), value.dtype, value.shape, "case input", target);
    } catch (const std::runtime_error& e) {
      r.error = e.what();
      return r;
    }
  }
  if (capture) {
    capture->model = &model;
    capture->interpreter = &interpreter;
    interpreter.set_observer(capture_op, capture);
  }
  if (interpreter.Invoke() != Status::kOk) {
    r.error = std::string("Invoke: ") + interpreter.error().message + " (op " +
              std::to_string(interpreter.error().op) + ")";
    return r;
  }
  for (size_t i = 0; i < interpreter.output_count(); ++i) {
    r.outputs.push_back(conv::host_tensor_of(interpreter.output(i)));
    r.output_names.push_back(interpreter.output(i).name);
  }
  return r;
}

// Names the first op output (in execution order) that leaves TF's intermediate values.
std::string first_divergence(const std::string& case_dir, const std::map<std::string, std::string>& dtypes,
                             const Capture& capture) {
  for (const Capture::Item& item : capture.items) {
    const auto [node, port] = split_tensor(item.tensor);
    std::string stem;
    for (const std::string& prefix : {std::string(""), std::string("import____")}) {
      const std::string s = case_dir + "/" + prefix + escape_node_name(node) + "." + std::to_string(port) +
                            ".prediction_inbw";
      if (fs::exists(s + ".csv")) {
        stem = s;
        break;
      }
    }
    if (stem.empty()) continue;
    CsvTensor expected;
    try {
      expected = read_csv_tensor(stem + ".csv", stem + ".shape");
    } catch (const std::exception&) {
      continue;
    }
    const std::string key = escape_node_name(node) + "." + std::to_string(port);
    const auto dt = dtypes.find(key);
    const Tolerance tol = tolerance_for(dt != dtypes.end() ? dt->second : dtype_label(item.value.dtype));
    std::ostringstream where;
    where << "first diverging node: '" << item.tensor << "' (op #" << item.op << " " << item.op_name << ")";
    if (static_cast<int64_t>(expected.values.size()) != item.value.num_elements()) {
      return where.str() + ": shape " + shape_string(item.value.shape) + ", TF " + shape_string(expected.shape);
    }
    const Mismatch m = first_mismatch(expected.values, item.value.data.data(), item.value.dtype, tol);
    if (m.index >= 0) {
      return where.str() + ": index " + std::to_string(m.index) + " expected " + number(m.expected) +
             " got " + number(m.got);
    }
  }
  return "no intermediate value diverges (or none recorded for floe's ops)";
}

HostTensor tensor_from_csv(const CsvTensor& csv) {
  HostTensor t;
  t.dtype = DType::kFloat64;
  t.shape = csv.shape;
  t.data.resize(csv.values.size() * sizeof(double));
  std::memcpy(t.data.data(), csv.values.data(), t.data.size());
  return t;
}

void save_failure(const Config& config, const std::string& case_name, const std::vector<uint8_t>& model,
                  const std::map<std::string, HostTensor>& inputs) {
  std::string flat = case_name;
  for (char& c : flat) {
    if (c == '/' || c == ',') c = '_';
  }
  const std::string dir = config.failure_dir + "/" + flat;
  fs::create_directories(dir);
  std::ofstream(dir + "/model.floe", std::ios::binary)
      .write(reinterpret_cast<const char*>(model.data()), static_cast<std::streamsize>(model.size()));
  std::string command = "floe-run " + dir + "/model.floe --dump-intermediates " + dir + "/intermediates";
  for (const auto& [name, value] : inputs) {
    if (value.dtype == DType::kBFloat16) continue;
    std::string file = name;
    for (char& c : file) {
      if (c == '/' || c == ':') c = '_';
    }
    tools::write_npy(dir + "/" + file + ".npy", value.dtype, value.shape, value.data.data());
    command += " --input " + name + "=" + dir + "/" + file + ".npy";
  }
  std::ofstream(dir + "/reproduce.sh") << command << "\n";
}

Outcome run_case(const Config& config, const CaseRow& row) {
  Outcome out;
  const std::string case_dir = config.examples_dir + "/" + row.name;
  const std::string graph_path = case_dir + "/frozen_model.pb";
  if (!fs::exists(graph_path)) return {Verdict::kSkipped, "no frozen_model.pb in the corpus", ""};
  if (row.flags.find("MISSING-INPUT-VALUES") != std::string::npos) {
    return {Verdict::kSkipped, "input values are missing from the corpus (CASES.tsv flag)", ""};
  }
  const std::map<std::string, std::string> dtypes = read_dtypes(case_dir + "/dtypes");

  conv::LoadedGraph loaded = conv::load_graph(graph_path);
  const conv::Graph graph(loaded.graph, loaded.path);

  std::vector<Expected> expected;
  for (const std::string& stem : find_prediction_stems(case_dir)) {
    Expected e;
    e.stem = stem;
    e.tensor = tensor_for_stem(graph, stem);
    const auto [node, port] = split_tensor(e.tensor);
    const auto dt = dtypes.find(escape_node_name(node) + "." + std::to_string(port));
    if (dt != dtypes.end()) e.tf_dtype = dt->second;
    expected.push_back(e);
  }
  if (expected.empty()) return {Verdict::kSkipped, "no expected outputs (*.prediction.csv)", ""};

  // Inputs: in_<k> Consts (their own values) and Placeholders (CSV values).
  std::map<std::string, HostTensor> values;
  conv::ConvertOptions options;
  options.graph_path = graph_path;
  options.loops = config.loops;
  for (const std::string& pass : config.disabled_passes) options.optimize.disabled.insert(pass);
  for (const Expected& e : expected) options.outputs.push_back(e.tensor);
  static const std::regex kInputName("in_[0-9]+");
  for (size_t n = 0; n < graph.size(); ++n) {
    const conv::Node& node = graph.node(static_cast<int>(n));
    if (node.op() != "Const" || !std::regex_match(node.name(), kInputName)) continue;
    const auto* attr = conv::find_attr(node.def, "value");
    if (attr == nullptr || !attr->has_tensor()) continue;
    values[node.name()] = conv::tensor_from_proto(attr->tensor(), node.name());
  }
  for (const std::string& name : find_placeholder_names(case_dir)) {
    const CsvTensor csv =
        read_csv_tensor(case_dir + "/" + name + ".placeholder.csv", case_dir + "/" + name + ".placeholder.shape");
    values[name] = tensor_from_csv(csv);
    options.input_shapes[name] = csv.shape;
  }
  std::set<std::string> feeds;
  for (const auto& [name, value] : values) feeds.insert(name);

  // Convert; inputs floe needs at conversion time stay constants.
  std::vector<uint8_t> model;
  std::vector<std::string> kept_constant;
  for (;;) {
    options.inputs.assign(feeds.begin(), feeds.end());
    try {
      model = conv::convert(options).model;
      break;
    } catch (const conv::ConvertError& e) {
      // Classified by the error's fields (converter/ir/error.h), not its text.
      // No loop bound is passed: a case floe needs one for fails, as it
      // would for a user who passes no option.
      const std::string input = conversion_time_input(e, feeds);
      if (!input.empty() && input.rfind("in_", 0) == 0) {
        feeds.erase(input);
        options.input_shapes.erase(input);
        kept_constant.push_back(input);
        continue;
      }
      // The needed value is computed from inputs (e.g. partition indices derived
      // from ids): keep the integer in_<k> constant (indices, not data) and retry.
      // Likewise a cond predicate: keep the bool in_<k> constant (it is a Const in the graph).
      const bool predicate = e.needs_predicate();
      if (predicate || e.category() == conv::ErrorCategory::kNeedsConstant) {
        bool dropped = false;
        for (auto it = feeds.begin(); it != feeds.end();) {
          const HostTensor& v = values[*it];
          const bool index_like = v.dtype == DType::kInt32 || v.dtype == DType::kInt64;
          if (it->rfind("in_", 0) == 0 && (predicate ? v.dtype == DType::kBool : index_like)) {
            kept_constant.push_back(*it);
            options.input_shapes.erase(*it);
            it = feeds.erase(it);
            dropped = true;
          } else {
            ++it;
          }
        }
        if (dropped) continue;
      }
      if (e.category() == conv::ErrorCategory::kUnsupported) return {Verdict::kRefused, refusal_reason(e), ""};
      // A value floe must know at conversion time (a permutation, a shape) that
      // comes from a fed Placeholder: a static model cannot honour it.
      if (e.category() == conv::ErrorCategory::kNeedsConstant) {
        return {Verdict::kRefused,
                "value needed at conversion time depends on a graph input: node '" + e.where().node + "' (op " +
                    e.where().op + ") needs '" + e.tensor() + "'",
                ""};
      }
      std::string flat = std::string(error_category_name(e.category())) + ": " + e.what();
      for (char& c : flat) {
        if (c == '\n') c = ' ';
      }
      return {Verdict::kFailed, "conversion error: " + flat, ""};
    }
  }
  if (!kept_constant.empty()) {
    out.note = "kept constant (needed at conversion time):";
    for (const std::string& k : kept_constant) out.note += " " + k;
  }
  if (!config.model_dir.empty()) {
    std::string file = row.name;
    for (char& c : file) {
      if (c == '/') c = '_';
    }
    std::ofstream(config.model_dir + "/" + file + ".floe", std::ios::binary)
        .write(reinterpret_cast<const char*>(model.data()), static_cast<std::streamsize>(model.size()));
  }
  Outcome::Arena arena;
  arena.converted = true;
  arena.bytes = schema::GetModel(model.data())->arena_size();
  arena.floor = testing::live_bytes_floor(model);
  arena.chain = testing::is_chain(schema::GetModel(model.data()));
  auto with_kept = [&](Outcome o) {
    o.kept_constant = kept_constant;
    o.arena = arena;
    return o;
  };
  if (config.convert_only) return with_kept({Verdict::kPassed, "", out.note, {}});
  std::map<std::string, HostTensor> inputs;
  for (const std::string& f : feeds) inputs[f] = values[f];

  RunResult result = run_model(model, inputs, nullptr);
  if (!result.error.empty()) return with_kept({Verdict::kFailed, "runtime: " + result.error, out.note, {}});

  std::string failure;
  for (size_t i = 0; i < expected.size() && failure.empty(); ++i) {
    const Expected& e = expected[i];
    const CsvTensor want = read_csv_tensor(case_dir + "/" + e.stem + ".prediction.csv",
                                           case_dir + "/" + e.stem + ".prediction.shape");
    const HostTensor& got = result.outputs[i];
    if (want.shape != got.shape) {
      failure = "output '" + e.tensor + "': shape " + shape_string(got.shape) + ", TF " + shape_string(want.shape);
      break;
    }
    const Tolerance tol = tolerance_for(e.tf_dtype.empty() ? dtype_label(got.dtype) : e.tf_dtype);
    const Mismatch m = first_mismatch(want.values, got.data.data(), got.dtype, tol);
    if (m.index >= 0) {
      failure = "output '" + e.tensor + "' (" + tol.label + "): index " + std::to_string(m.index) +
                " expected " + number(m.expected) + " got " + number(m.got);
    }
  }
  if (failure.empty()) return with_kept({Verdict::kPassed, "", out.note, {}});

  Capture capture;
  run_model(model, inputs, &capture);
  failure += "; " + first_divergence(case_dir, dtypes, capture);
  if (!config.failure_dir.empty()) save_failure(config, row.name, model, inputs);
  return with_kept({Verdict::kFailed, failure, out.note, {}});
}

// ---- the suite ----------------------------------------------------------------

struct FamilyCount {
  int cases = 0, passed = 0, failed = 0, refused = 0, skipped = 0;
};

std::map<std::string, std::string> read_expected_results(const std::string& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    const size_t tab2 = line.find('\t', tab + 1);
    if (tab == std::string::npos) continue;
    out[line.substr(0, tab)] = line.substr(tab + 1, tab2 == std::string::npos ? std::string::npos : tab2 - tab - 1);
  }
  return out;
}

// Every converted case's arena against its floor: each over `max_ratio`, and
// each chain over it (a chain's floor is always reachable; zero-copy reshapes
// go under it), is listed and fails the run; the worst few are printed
// either way. Returns the number of violations.
int report_arenas(const std::vector<std::pair<std::string, Outcome>>& outcomes, double max_ratio) {
  std::vector<std::pair<std::string, Outcome::Arena>> arenas;
  for (const auto& [name, o] : outcomes) {
    if (o.arena.converted) arenas.emplace_back(name, o.arena);
  }
  std::stable_sort(arenas.begin(), arenas.end(),
                   [](const auto& a, const auto& b) { return a.second.ratio() > b.second.ratio(); });
  int over = 0, chains = 0;
  for (const auto& [name, a] : arenas) {
    chains += a.chain ? 1 : 0;
    const bool chain_off = a.chain && a.bytes > a.floor;
    if (a.ratio() <= max_ratio && !chain_off) continue;
    ++over;
    std::cout << "ARENA " << name << ": " << a.bytes << " B, floor " << a.floor << " B, ratio " << std::fixed
              << std::setprecision(4) << a.ratio() << (a.chain ? " (a chain: must be at its floor)" : "") << "\n";
  }
  std::cout << "arena: " << arenas.size() << " conversions (" << chains << " chains), " << over
            << " over the limit (ratio " << std::fixed << std::setprecision(4) << max_ratio << ", chains 1.0000)";
  if (!arenas.empty()) std::cout << "; worst " << arenas.front().first << " " << arenas.front().second.ratio();
  std::cout << "\n";
  const size_t shown = std::min<size_t>(arenas.size(), 5);
  for (size_t i = 0; i < shown; ++i) {
    const Outcome::Arena& a = arenas[i].second;
    std::cout << "  " << std::left << std::setw(48) << arenas[i].first << std::right << std::setw(10) << a.bytes
              << " B, floor " << std::setw(10) << a.floor << " B, ratio " << std::setprecision(4) << a.ratio()
              << "\n";
  }
  return over;
}

int run_suite(const std::string& corpus_dir, const std::string& filter, const std::string& expected_path,
              const std::string& results_path, double min_pass_rate, double max_arena_ratio,
              const Config& base_config) {
  const std::string cases_tsv = corpus_dir + "/dl4j_tf_graphs/CASES.tsv";
  if (!fs::exists(cases_tsv)) {
    std::cout << "SKIPPED: corpus not available (" << cases_tsv << ")\n";
    return 77;
  }
  Config config = base_config;
  config.examples_dir = corpus_dir + "/dl4j_tf_graphs/examples";
  std::vector<CaseRow> rows = read_cases_tsv(cases_tsv);

  // Cases present on disk but missing from CASES.tsv are run too (and said so).
  std::set<std::string> listed;
  for (const CaseRow& r : rows) listed.insert(r.name);
  int on_disk = 0;
  for (const auto& entry : fs::recursive_directory_iterator(config.examples_dir)) {
    if (entry.path().filename() != "frozen_model.pb") continue;
    ++on_disk;
    const std::string name = fs::relative(entry.path().parent_path(), config.examples_dir).generic_string();
    if (!listed.count(name)) {
      std::cout << "note: case " << name << " is on disk but not in CASES.tsv\n";
      rows.push_back({name, name.substr(0, name.find('/')), ""});
    }
  }

  std::map<std::string, FamilyCount> families;
  std::vector<std::pair<std::string, Outcome>> outcomes;
  const auto start = std::chrono::steady_clock::now();
  const std::regex filter_re(filter.empty() ? ".*" : filter);
  for (const CaseRow& row : rows) {
    if (!std::regex_search(row.name, filter_re)) continue;
    Outcome o;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      o = run_case(config, row);
    } catch (const std::exception& e) {
      o = {Verdict::kFailed, std::string("error: ") + e.what(), ""};
      for (char& c : o.reason) {
        if (c == '\n') c = ' ';
      }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (config.verbose) {
      std::cout << std::left << std::setw(8) << verdict_name(o.verdict) << " " << row.name << " ("
                << std::fixed << std::setprecision(2) << secs << " s) " << o.reason << "\n";
    }
    FamilyCount& f = families[row.family];
    ++f.cases;
    switch (o.verdict) {
      case Verdict::kPassed: ++f.passed; break;
      case Verdict::kFailed: ++f.failed; break;
      case Verdict::kRefused: ++f.refused; break;
      case Verdict::kSkipped: ++f.skipped; break;
    }
    outcomes.emplace_back(row.name, o);
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  FamilyCount total;
  std::cout << "\nfloe conformance: dl4j_tf_graphs (" << on_disk << " cases on disk, "
            << outcomes.size() << " run" << (config.convert_only ? ", converted only: passed = converted" : "")
            << ")\n\n";
  std::cout << std::left << std::setw(26) << "family" << std::right << std::setw(7) << "cases"
            << std::setw(8) << "passed" << std::setw(8) << "failed" << std::setw(9) << "refused"
            << std::setw(9) << "skipped" << "\n";
  for (const auto& [name, f] : families) {
    std::cout << std::left << std::setw(26) << name << std::right << std::setw(7) << f.cases << std::setw(8)
              << f.passed << std::setw(8) << f.failed << std::setw(9) << f.refused << std::setw(9) << f.skipped
              << "\n";
    total.cases += f.cases;
    total.passed += f.passed;
    total.failed += f.failed;
    total.refused += f.refused;
    total.skipped += f.skipped;
  }
  std::cout << std::left << std::setw(26) << "TOTAL" << std::right << std::setw(7) << total.cases << std::setw(8)
            << total.passed << std::setw(8) << total.failed << std::setw(9) << total.refused << std::setw(9)
            << total.skipped << "\n";
  const int evaluated = total.cases - total.skipped;
  const double rate = evaluated > 0 ? static_cast<double>(total.passed) / evaluated : 0.0;
  std::cout << "\npassed " << total.passed << " of " << evaluated << " evaluated cases = " << std::fixed
            << std::setprecision(2) << 100.0 * rate << " % (skipped cases have no input values; "
            << std::setprecision(1) << elapsed << " s)\n\n";

  for (Verdict v : {Verdict::kFailed, Verdict::kRefused, Verdict::kSkipped}) {
    for (const auto& [name, o] : outcomes) {
      if (o.verdict != v) continue;
      std::string upper = verdict_name(v);
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      std::cout << std::left << std::setw(8) << upper << " " << name << ": " << o.reason << "\n";
    }
  }
  int noted = 0;
  for (const auto& [name, o] : outcomes) {
    if (!o.note.empty() && o.verdict == Verdict::kPassed) ++noted;
  }
  if (noted > 0) std::cout << "\n" << noted << " passed case(s) kept some in_<k> input constant (shape/axis arguments)\n";

  if (!results_path.empty()) {
    std::ofstream res(results_path);
    res << "# case\tverdict\treason\tinputs kept constant (needed at conversion time) "
           "(written by floe-conformance --write-results)\n";
    for (const auto& [name, o] : outcomes) {
      std::string reason = o.reason;
      for (char& c : reason) {
        if (c == '\t') c = ' ';
      }
      std::string kept;
      for (const std::string& k : o.kept_constant) kept += (kept.empty() ? "" : ",") + k;
      res << name << "\t" << verdict_name(o.verdict) << "\t" << reason << "\t" << kept << "\n";
    }
  }

  int exit_code = 0;
  if (config.fail_on_mismatch) {
    for (const auto& [name, o] : outcomes) {
      if (o.verdict == Verdict::kFailed) exit_code = 1;
    }
  }
  if (max_arena_ratio > 0 && report_arenas(outcomes, max_arena_ratio) > 0) {
    exit_code = 1;
  }
  if (config.convert_only) return exit_code;  // verdicts without a run compare with nothing
  if (!expected_path.empty()) {
    const auto expected = read_expected_results(expected_path);
    int regressions = 0, improvements = 0;
    for (const auto& [name, o] : outcomes) {
      const auto it = expected.find(name);
      const std::string now = verdict_name(o.verdict);
      if (it == expected.end()) continue;
      if (it->second == "passed" && now != "passed") {
        std::cout << "REGRESSION " << name << ": expected passed, now " << now << ": " << o.reason << "\n";
        ++regressions;
      } else if (it->second != "passed" && now == "passed") {
        ++improvements;
      }
    }
    if (improvements > 0) {
      std::cout << improvements << " case(s) pass that " << expected_path
                << " does not expect to: update it with --write-results\n";
    }
    if (regressions > 0) exit_code = 1;
  }
  if (filter.empty() && rate < min_pass_rate) {
    std::cout << "FAIL: pass rate " << 100.0 * rate << " % is below the required " << 100.0 * min_pass_rate << " %\n";
    exit_code = 1;
  }
  return exit_code;
}

}  // namespace
}  // namespace floe::conformance

int main(int argc, char** argv) {
  CLI::App app{"floe-conformance: the dl4j_tf_graphs conformance suite (TF-computed expectations)"};
  std::string corpus, filter, expected, results;
  double min_rate = 0.0, max_arena_ratio = 0.0;
  floe::conformance::Config config;
  app.add_option("--corpus", corpus, "the shared corpus directory (holds dl4j_tf_graphs/)")->required();
  app.add_option("--filter", filter, "run only cases whose name matches this regex");
  app.add_option("--expected", expected, "committed results (TSV): any case listed as passed must pass");
  app.add_option("--write-results", results, "write this run's results (TSV)");
  app.add_option("--min-pass-rate", min_rate, "fail when passed/evaluated is lower (0..1; full runs only)");
  app.add_option("--failure-dir", config.failure_dir,
                 "save each failing case's model and inputs there, with a floe-run --dump-intermediates command");
  app.add_option("--disable-pass", config.disabled_passes, "converter optimization pass to skip (repeatable)");
  app.add_flag("--verbose,-v", config.verbose, "one line per case as it runs");
  app.add_option("--max-arena-ratio", max_arena_ratio,
                 "fail when a converted case's arena is over this multiple of its live-bytes floor, or a chain's "
                 "is not at it (the floor from the .floe alone, as arena_bound.py)");
  app.add_option("--model-dir", config.model_dir, "write every converted model there (CASE.floe, '/' as '_')");
  app.add_flag("--convert-only", config.convert_only,
               "convert each case without running it (no verdict comparison; for --max-arena-ratio)");
  std::string loops = "auto";
  app.add_option("--loops", loops,
                 "floe-convert --loops for every case: auto, unroll or runtime (with runtime, each loop runs as "
                 "a WHILE op or the case is refused with the reason)")
      ->check(CLI::IsMember({"auto", "unroll", "runtime"}));
  app.add_flag("--fail-on-mismatch", config.fail_on_mismatch,
               "fail the run when any case's values differ from TensorFlow's (refused cases do not fail it)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  config.loops = loops == "unroll"    ? floe::conv::LoopMode::kUnroll
                 : loops == "runtime" ? floe::conv::LoopMode::kRuntime
                                      : floe::conv::LoopMode::kAuto;
  if (config.convert_only && (!expected.empty() || !results.empty())) {
    std::cerr << "floe-conformance: --convert-only gives no verdicts to compare or write (drop --expected, "
                 "--write-results)\n";
    return 2;
  }
  try {
    return floe::conformance::run_suite(corpus, filter, expected, results, min_rate, max_arena_ratio,
                                              config);
  } catch (const std::exception& e) {
    std::cerr << "floe-conformance: error: " << e.what() << "\n";
    return 2;
  }
}
