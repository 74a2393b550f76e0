// SPDX-License-Identifier: Apache-2.0
// floe-convert: TF1 GraphDef/MetaGraphDef (+ checkpoint) -> .floe model.
// Exit 0 on success; on any error exit 2 with one message naming the file /
// node / op, and leave no output file behind (the model is written to a
// temporary file and renamed into place only when complete).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <unistd.h>

#include "converter/ir/error.h"
#include "converter/pipeline/convert.h"

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = s.find(sep, start);
    const std::string item = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!item.empty()) out.push_back(item);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

// "name=1,28,28,1"
std::pair<std::string, std::vector<int64_t>> parse_input_shape(const std::string& spec) {
  const size_t eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0) {
    throw floe::conv::ConvertError("--input-shape '" + spec + "': expected NAME=d0,d1,...");
  }
  std::vector<int64_t> dims;
  for (const std::string& d : split(spec.substr(eq + 1), ',')) {
    char* end = nullptr;
    const long long v = std::strtoll(d.c_str(), &end, 10);
    if (end == d.c_str() || *end != '\0' || v < 0) {
      throw floe::conv::ConvertError("--input-shape '" + spec + "': '" + d +
                                     "' is not a non-negative integer");
    }
    dims.push_back(v);
  }
  return {spec.substr(0, eq), dims};
}

void write_atomically(const std::string& path, const std::vector<uint8_t>& bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      throw floe::conv::ConvertError(path + ": cannot write the output file");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw floe::conv::ConvertError(path + ": cannot rename the output file into place");
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"floe-convert: TensorFlow 1.x graph (+ checkpoint) -> floe model"};
  floe::conv::ConvertOptions options;
  std::string outputs, inputs, output_path;
  std::vector<std::string> shapes;
  bool quiet = false;
  app.add_option("--graph,-g", options.graph_path,
                 "GraphDef (.pb/.pbtxt), MetaGraphDef (.meta) or SavedModel directory")
      ->required();
  app.add_option("--checkpoint,-c", options.checkpoint_path,
                 "checkpoint prefix, or a directory with a 'checkpoint' file");
  app.add_option("--outputs", outputs, "comma-separated output nodes or tensors (node:k)");
  app.add_option("--inputs", inputs,
                 "comma-separated tensors to feed (default: the Placeholders the outputs need)");
  app.add_option("--input-shape", shapes, "NAME=d0,d1,... fixes an input's shape (repeatable)");
  app.add_option("-o,--output", output_path, "output .floe file")->required();
  app.add_flag("-q,--quiet", quiet, "print nothing on success");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    options.outputs = split(outputs, ',');
    options.inputs = split(inputs, ',');
    for (const std::string& spec : shapes) options.input_shapes.insert(parse_input_shape(spec));
    const floe::conv::ConvertResult result = floe::conv::convert(options);
    write_atomically(output_path, result.model);
    if (!quiet) std::cout << result.summary << "  wrote " << output_path << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "floe-convert: error: " << e.what() << "\n";
    return 2;
  }
}
