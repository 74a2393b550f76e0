// SPDX-License-Identifier: Apache-2.0
// Converter harness for floe-convert's options on a fixed valid graph
// (graphs/options_graph.pbtxt: placeholders with a -1 dim, a scalar and int32
// indices; MatMul, BiasAdd, Relu, Mul, Transpose, Sum, GatherV2, Softmax).
// The input is one option per line, written as on the command line:
//   --outputs relu,g:0      --inputs mm:0       --input-shape x=2,4
//   --freeze-input ids=1,0  --target cortex-m4  --disable-pass transposes
//   --no-optimize           --keep-op-order     --signature s
// Every run must end in a ConvertError or in a model the runtime accepts with
// its checksum, inits and runs; anything else is a bug.
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "converter/ir/split.h"
#include "converter/ir/error.h"
#include "converter/pipeline/convert.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

// "NAME=d0,d1" as floe-convert parses --input-shape; false when malformed.
bool parse_shape(const std::string& spec, std::string* name, std::vector<int64_t>* dims) {
  const size_t eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0) return false;
  *name = spec.substr(0, eq);
  for (const std::string& d : floe::conv::split_nonempty(spec.substr(eq + 1), ',')) {
    char* end = nullptr;
    const long long v = std::strtoll(d.c_str(), &end, 10);
    if (end == d.c_str() || *end != '\0' || v < 0) return false;
    dims->push_back(v);
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  floe::conv::ConvertOptions options;
  options.graph_path = floe::fuzz::source_path("tests/fuzz/graphs/options_graph.pbtxt");
  options.target = "host";
  std::stringstream lines(std::string(reinterpret_cast<const char*>(data), size));
  std::string line;
  int count = 0;
  while (std::getline(lines, line) && ++count <= 32) {
    const size_t space = line.find(' ');
    const std::string flag = line.substr(0, space);
    const std::string value = space == std::string::npos ? std::string() : line.substr(space + 1);
    if (flag == "--outputs") {
      for (const std::string& o : floe::conv::split_nonempty(value, ',')) options.outputs.push_back(o);
    } else if (flag == "--inputs") {
      for (const std::string& i : floe::conv::split_nonempty(value, ',')) options.inputs.push_back(i);
    } else if (flag == "--input-shape") {
      std::string name;
      std::vector<int64_t> dims;
      if (!parse_shape(value, &name, &dims)) return 0;  // floe-convert refuses it before converting
      options.input_shapes[name] = dims;
    } else if (flag == "--freeze-input") {
      const size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0) return 0;
      options.frozen_inputs[value.substr(0, eq)] = value.substr(eq + 1);
    } else if (flag == "--target") {
      options.target = value;
    } else if (flag == "--disable-pass") {
      for (const std::string& p : floe::conv::split_nonempty(value, ',')) options.optimize.disabled.insert(p);
    } else if (flag == "--no-optimize") {
      options.optimize.enabled = false;
    } else if (flag == "--keep-op-order") {
      options.keep_op_order = true;
    } else if (flag == "--signature") {
      options.signature = value;
    }
  }
  if (options.outputs.empty()) options.outputs = {"soft"};
  floe::conv::ConvertResult result;
  try {
    result = floe::conv::convert(options);
  } catch (const floe::conv::ConvertError&) {
    return 0;
  }
  floe::fuzz::require_valid_converted_model(result.model);
  return 0;
}
