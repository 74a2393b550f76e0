// SPDX-License-Identifier: Apache-2.0
// The conversion summary (see summary.h).
#include "converter/pipeline/summary.h"

#include <cstdio>

#include <cmath>
#include <map>
#include <sstream>

namespace floe::conv {

std::string conversion_summary(const Conversion& c) {
  std::ostringstream s;
  s << "floe-convert: " << c.loaded.path << "\n";
  if (c.signature) s << "  signature " << c.signature->name << "\n";
  auto quantization = [](const Value& value) -> std::string {
    if (value.quantization.empty()) return "";
    std::ostringstream q;
    q << "  scale " << value.quantization.scale[0] << " zero point " << value.quantization.zero_point[0];
    return q.str();
  };
  // A complex tensor as TF sees it: complex64 and its shape without the pair dim.
  auto type_and_shape = [](const Value& value, bool complex) {
    if (!complex) return std::string(dtype_name(value.dtype)) + " " + shape_to_string(value.shape);
    std::vector<int64_t> shape = value.shape;
    shape.pop_back();
    return "complex64 " + shape_to_string(shape) +
           (value.source_dtype == DType::kFloat64 ? " (complex128 in the graph)" : "");
  };
  for (size_t i = 0; i < c.lowered.inputs.size(); ++i) {
    const Value& value = c.lowered.values[static_cast<size_t>(c.lowered.inputs[i])];
    s << "  input   " << value.name << "  " << type_and_shape(value, c.lowered.input_is_complex(i))
      << quantization(value);
    const auto defaulted = c.defaulted_dims.find(value.name);
    if (defaulted != c.defaulted_dims.end()) {
      s << "  (dim " << defaulted->second << ": -1 in the graph, set to 1; --input-shape sets it)";
    }
    s << "\n";
  }
  // A fed tensor that is not a placeholder: what it replaces.
  for (const TensorRef& ref : c.graph ? c.explicit_feeds : std::vector<TensorRef>{}) {
    const Node& node = c.graph->node(ref.node);
    if (node.op() == "Placeholder" || node.op() == "PlaceholderV2" || node.op() == "PlaceholderWithDefault") continue;
    s << "  fed     " << c.graph->tensor_name(ref) << " (output " << ref.port << " of " << node.op()
      << " '" << node.name() << "': what computes it is not converted)\n";
  }
  for (const std::string& fixed : c.fixed_inputs) s << "  fixed   " << fixed << "\n";
  for (size_t i = 0; i < c.lowered.outputs.size(); ++i) {
    const Value& value = c.lowered.values[static_cast<size_t>(c.lowered.outputs[i])];
    s << "  output  " << value.name << "  " << type_and_shape(value, c.lowered.output_is_complex(i))
      << quantization(value) << "\n";
  }
  if (c.from_tflite) {
    s << "  tflite: " << c.tflite_operators << " operators";
    if (c.tflite_called_subgraphs > 0) {
      s << " (+" << c.tflite_called_operators << " in " << c.tflite_called_subgraphs << " subgraph(s) WHILE / IF call)";
    }
    s << ":";
    for (const auto& [name, count] : c.tflite_op_counts) s << " " << name << " " << count;
    s << "\n";
  } else {
    s << "  graph: " << c.graph_nodes << " nodes, " << c.kept_nodes << " needed by the outputs";
    if (!c.pruned.control_only.empty()) {
      s << " (+" << c.pruned.control_only.size() << " reached only by control edges, dropped)";
    }
    s << "\n";
  }
  if (c.post_training) {
    s << "  int8 quantization: ";
    if (c.fake_quant_activations > 0 || c.ptq.weights_from_fake_quant > 0) {
      s << "FakeQuant ranges of " << c.fake_quant_activations << " activation op(s) and "
        << c.ptq.weights_from_fake_quant << " weight tensor(s)" << (c.calibration_samples > 0 ? ", " : "; ");
    }
    if (c.calibration_samples > 0) s << "calibrated on " << c.calibration_samples << " sample(s); ";
    s << c.ptq.int8_ops << " op(s) int8, " << c.ptq.quantize_ops << " QUANTIZE and " << c.ptq.dequantize_ops
      << " DEQUANTIZE inserted\n";
    auto list = [&s](const char* what, const std::set<std::string>& names) {
      if (names.empty()) return;
      s << "    " << names.size() << " range(s) " << what << ":";
      for (const std::string& name : names) s << " " << name;
      s << "\n";
    };
    if (c.fake_quant_activations > 0 || c.ptq.weights_from_fake_quant > 0) {
      list("from FakeQuant", c.ptq.ranges_from_fake_quant);
      list("from calibration", c.ptq.ranges_from_calibration);
      auto ops = [&s](const char* what, const std::vector<std::string>& labels) {
        if (labels.empty()) return;
        s << "    weights " << what << ":";
        for (const std::string& label : labels) s << " " << label;
        s << "\n";
      };
      ops("on their FakeQuant grid", c.ptq.trained_weight_ops);
      ops("without a FakeQuant grid, quantized from their values", c.ptq.untrained_weight_ops);
    }
    for (const std::string& note : c.ptq.notes) s << "    note: " << note << "\n";
    for (const LayerSqnr& layer : c.sqnr) {
      std::ostringstream db;
      db.setf(std::ios::fixed);
      db.precision(1);
      if (std::isinf(layer.sqnr_db)) {
        db << "exact";
      } else {
        db << layer.sqnr_db << " dB";
      }
      s << "    SQNR " << db.str() << "  " << layer.node << " (" << layer.opcode << ")\n";
    }
    if (c.ptq.float_ops.empty()) {
      s << "    no op left float\n";
    } else {
      s << "    left float (no int8 kernel), between DEQUANTIZE and QUANTIZE:";
      for (const std::string& op : c.ptq.float_ops) s << " " << op;
      s << "\n";
    }
  }
  if (c.int8.ops > 0) {
    s << "  int8: " << c.int8.ops << " ops with host-derived requantization";
    if (c.int8.folded_activations > 0) s << ", " << c.int8.folded_activations << " RELU/RELU6 folded into clamp ranges";
    s << "\n";
  }
  if (c.control_flow.switches_resolved > 0) {
    s << "  resolved " << c.control_flow.switches_resolved << " Switch and " << c.control_flow.merges_resolved
      << " Merge node(s) on conversion-time predicates (" << c.control_flow.dead_nodes
      << " node(s) on untaken branches dropped)\n";
  }
  if (c.control_flow.conds_selected > 0) {
    s << "  " << c.control_flow.conds_selected << " cond(s) with an input-dependent predicate: both branches "
      << "pure (no op that can fail on the untaken branch's data), computed, a Select picks (";
    for (size_t i = 0; i < c.control_flow.selected_merges.size(); ++i) {
      s << (i ? ", " : "") << c.control_flow.selected_merges[i];
    }
    s << ")\n";
  }
  for (const std::string& line : c.control_flow.runtime_ifs) s << "  " << line << "\n";
  if (!c.frozen.frozen.empty()) {
    s << "  froze " << c.frozen.frozen.size() << " variable(s) from " << c.checkpoint->prefix() << "\n";
  }
  if (!c.from_tflite) {
    s << "  folded " << c.lower_stats.folded_nodes << " node(s), removed " << c.lower_stats.aliased_nodes
      << " identity-like node(s)\n";
  }
  s << c.unrolled.summary();
  s << c.optimization.summary();
  std::map<std::string, int> histogram;
  for (const LoweredOp& op : c.lowered.ops) histogram[schema::EnumNameOpCode(op.opcode)]++;
  s << "  ops (" << c.lowered.ops.size() << "):";
  for (const auto& [name, count] : histogram) s << " " << name << " x" << count;
  s << "\n";
  s << "  parameters: " << c.stats.parameter_count << " (" << c.stats.constant_bytes
    << " bytes)\n";
  // The plan against the floor of the emitted op order (values counted at
  // their own size; reshapes sharing their input's bytes can go under it).
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.3f",
                c.stats.arena_lower_bound ? static_cast<double>(c.stats.arena_bytes) / c.stats.arena_lower_bound : 1.0);
  char plan_time[32];
  std::snprintf(plan_time, sizeof plan_time, "%.1f", c.stats.plan_milliseconds);
  s << "  arena: " << c.stats.arena_bytes << " bytes (lower bound " << c.stats.arena_lower_bound << ", ratio "
    << ratio << "; " << (c.stats.arena_optimal ? "minimal" : "not proven minimal") << ", "
    << c.stats.aliased_values << " zero-copy reshape" << (c.stats.aliased_values == 1 ? "" : "s")
    << ", planned in " << plan_time << " ms)\n";
  s << "  op order: ";
  if (c.keep_op_order) {
    s << "the file's (--keep-op-order), peak " << c.schedule.file_peak << " bytes\n";
  } else {
    char schedule_time[32];
    std::snprintf(schedule_time, sizeof schedule_time, "%.1f", c.schedule_milliseconds);
    if (c.schedule.reordered) {
      s << "peak " << c.schedule.chosen_peak << " bytes, " << c.schedule.chosen_aligned_peak
        << " in 16-byte slots (the file's order: " << c.schedule.file_peak << ", " << c.schedule.file_aligned_peak
        << " in slots; " << (c.schedule.exact ? "minimal over all orders" : "best found");
    } else {
      s << "the file's, peak " << c.schedule.file_peak << " bytes ("
        << (c.schedule.exact ? "minimal over all orders" : "no better order found");
    }
    s << ", chosen in " << schedule_time << " ms)\n";
    const OrderSearch& joint = c.order_search;
    if (joint.orders_tried > 0) {
      s << "  order searched with the placement: " << joint.orders_tried << " orders tried, arena "
        << joint.start_arena << " bytes (floor " << joint.start_floor << ") -> " << joint.arena << " (floor "
        << joint.floor << ")" << (joint.reordered ? "" : ", order kept") << "\n";
    }
  }
  // The device's arena: activations, XNNPACK's region when it runs ops, and
  // the prepared ops (runtime/core/registry.h) for its pointer width.
  const bool xnnpack = c.backends.target != "reference" && c.backends.xnnpack_ops > 0;
  const uint64_t before = (c.stats.arena_bytes + (xnnpack ? c.stats.xnnpack_arena_bytes : 0) + 15) / 16 * 16;
  s << "  arena on the device: " << c.stats.arena_bytes << " bytes of activations (" << c.stats.naive_bytes
    << " without reuse)";
  if (xnnpack) s << " + XNNPACK budget " << c.stats.xnnpack_arena_bytes;
  s << " + prepared ops " << c.stats.persistent_bytes_ptr32 << " (32-bit) / " << c.stats.persistent_bytes_ptr64
    << " (64-bit): total " << before + c.stats.persistent_bytes_ptr32 << " / "
    << before + c.stats.persistent_bytes_ptr64 << " bytes\n";
  // --memory-regions: each region's planned bytes against its size; the
  // prepared ops (and XNNPACK's region) follow the last region's activations.
  for (size_t r = 0; r < c.stats.regions.size(); ++r) {
    const MemoryRegion& region = c.stats.regions[r];
    const bool last = r + 1 == c.stats.regions.size();
    const uint64_t activations = c.stats.region_sizes.empty() ? c.stats.arena_bytes : c.stats.region_sizes[r];
    s << (r == 0 ? "  memory regions: " : "; ") << region.name << " " << activations << " of "
      << region.capacity << " bytes" << (last ? " (+ prepared ops)" : "");
    if (last) s << "\n";
  }
  if (c.cortexm) {
    s << "  target " << c.target << ": " << c.cortexm_ops << " of " << c.lowered.ops.size()
      << " ops on the Cortex-M kernels\n";
  } else if (c.cortexm_ops > 0) {
    s << "  target " << c.backends.target << ": " << c.cortexm_ops << " of " << c.lowered.ops.size()
      << " integer ops on floe's exact kernels (TFLM's bytes; --int8-rounding fast for XNNPACK's)\n";
  }
  if (c.backends.target != "reference") {
    s << "  target " << c.backends.target << ": " << c.backends.xnnpack_ops << " of " << c.lowered.ops.size()
      << " ops on XNNPACK";
    if (c.backends.single_threaded_ops > 0) {
      s << " (" << c.backends.single_threaded_ops << " too small for a thread pool run on the caller's thread)";
    }
    s << "\n";
  }
  s << "  model: " << c.model_bytes << " bytes";
  if (c.post_training && c.float_model_bytes > 0) {
    s << " (float model " << c.float_model_bytes << " bytes; int8 is "
      << (100.0 * static_cast<double>(c.model_bytes) / static_cast<double>(c.float_model_bytes)) << " %)";
  }
  s << "\n";
  for (const std::string& note : c.notes) s << "  note: " << note << "\n";
  return s.str();
}

std::string fold_summary(const std::string& summary, bool verbose) {
  if (verbose) return summary;
  constexpr size_t kMaxRun = 12, kKeep = 8, kMaxLine = 240;
  std::vector<std::string> lines;
  for (size_t at = 0; at < summary.size();) {
    const size_t end = summary.find('\n', at);
    lines.push_back(summary.substr(at, end == std::string::npos ? std::string::npos : end - at));
    at = end == std::string::npos ? summary.size() : end + 1;
  }
  auto indent = [](const std::string& line) { return line.find_first_not_of(' '); };
  // Lines of one list: the same indent and, above the deepest level (a pass's
  // rewrites), the same first word ("SQNR ...", not "left float ...").
  auto first_word = [&](const std::string& line) {
    const size_t at = indent(line);
    return at == std::string::npos ? std::string() : line.substr(at, line.find(' ', at) - at);
  };
  std::string out;
  for (size_t i = 0; i < lines.size();) {
    const size_t depth = indent(lines[i]);
    size_t run = 1;
    if (depth != std::string::npos && depth >= 4) {
      while (i + run < lines.size() && indent(lines[i + run]) == depth &&
             (depth >= 6 || first_word(lines[i + run]) == first_word(lines[i]))) {
        ++run;
      }
    }
    const size_t shown = run > kMaxRun ? kKeep : run;
    for (size_t k = i; k < i + shown; ++k) {
      std::string line = lines[k];
      if (line.size() > kMaxLine) {
        size_t cut = line.rfind(' ', kMaxLine);
        if (cut == std::string::npos || cut < kMaxLine / 2) cut = kMaxLine;
        const size_t left_out = line.size() - cut;
        line = line.substr(0, cut) + " ... (" + std::to_string(left_out) + " more characters; --verbose shows all)";
      }
      out += line + "\n";
    }
    if (shown < run) {
      out += std::string(depth, ' ') + "... " + std::to_string(run - shown) + " more line(s) like these (--verbose "
             "lists all)\n";
    }
    i += run;
  }
  if (!summary.empty() && summary.back() != '\n' && !out.empty()) out.pop_back();
  return out;
}

}  // namespace floe::conv
