// SPDX-License-Identifier: Apache-2.0
// Bad input gets one clear error, never a crash: floe-convert exits 2, names
// the file / node / op / byte offset, and leaves no output file behind.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "runtime/tools/npy.h"
#include "tests/support/corpus.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

struct Failure {
  std::string message;
};

// Runs floe-convert expecting failure; checks exit code 2 and no output file.
Failure expect_refused(const std::string& args) {
  const std::string dir = make_temp_dir();
  const std::string out = dir + "/out.floe";
  const CommandResult r = run_command(tool_path("floe-convert") + " " + args + " -o " + out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_FALSE(file_exists(out)) << "output file left behind";
  const CommandResult leftovers = run_command("ls -A " + dir);
  EXPECT_EQ(leftovers.output, "") << "temporary files left behind";
  return Failure{r.output};
}

TEST(CliErrors, TruncatedGraphDefNamesFileAndOffset) {
  FLOE_REQUIRE_CORPUS("dl4j_tf_graphs/examples/mnist_00/frozen_model.pb");
  const std::string bytes = read_file(corpus_path("dl4j_tf_graphs/examples/mnist_00/frozen_model.pb"));
  const std::string dir = make_temp_dir();
  const std::string truncated = dir + "/truncated.pb";
  write_file(truncated, bytes.substr(0, bytes.size() / 2));
  const Failure f = expect_refused("--graph " + truncated + " --outputs output");
  EXPECT_NE(f.message.find("truncated.pb"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("byte"), std::string::npos) << f.message;
}

TEST(CliErrors, CorruptedCheckpointCrcNamesTensorAndFile) {
  FLOE_REQUIRE_CORPUS("tf2onnx/models/regression/checkpoint/model.index");
  const std::string src = corpus_path("tf2onnx/models/regression/checkpoint/");
  const std::string dir = make_temp_dir();
  for (const char* name : {"model.index", "model.meta", "checkpoint"}) {
    write_file(dir + "/" + name, read_file(src + name));
  }
  std::string data = read_file(src + "model.data-00000-of-00001");
  data[1] = static_cast<char>(data[1] ^ 0x40);
  write_file(dir + "/model.data-00000-of-00001", data);
  const Failure f = expect_refused("--graph " + dir + "/model.meta --checkpoint " + dir +
                                   " --outputs pred --input-shape X=4");
  EXPECT_NE(f.message.find("CRC"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("model.data-00000-of-00001"), std::string::npos) << f.message;
}

TEST(CliErrors, MissingCheckpointKeyNamesVariable) {
  FLOE_REQUIRE_CORPUS("tf2onnx/models/regression/checkpoint/model.meta");
  FLOE_REQUIRE_CORPUS("dl4j_tf_graphs/nd4j_convert/simple_graph/data-all-1000.index");
  // The regression graph's variables (W, b) are not in simple_graph's checkpoint.
  const Failure f = expect_refused(
      "--graph " + corpus_path("tf2onnx/models/regression/checkpoint/model.meta") +
      " --checkpoint " + corpus_path("dl4j_tf_graphs/nd4j_convert/simple_graph/data-all-1000") +
      " --outputs pred --input-shape X=4");
  EXPECT_NE(f.message.find("variable 'W'"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("variable 'b'"), std::string::npos) << f.message;
}

TEST(CliErrors, UnknownOpsAreAllListedWithCounts) {
  const std::string dir = make_temp_dir();
  const std::string graph = dir + "/g.pbtxt";
  write_file(graph, R"(
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "shape" value { shape { dim { size: 2 } } } } }
node { name: "a" op: "FrobnicateV7" input: "x" }
node { name: "b" op: "FrobnicateV7" input: "a" }
node { name: "c" op: "Zorp" input: "b" }
)");
  const Failure f = expect_refused("--graph " + graph + " --outputs c");
  EXPECT_NE(f.message.find("FrobnicateV7 x2: a, b"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("Zorp x1: c"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("g.pbtxt"), std::string::npos) << f.message;
}

TEST(CliErrors, UnknownOutputAndMissingArguments) {
  FLOE_REQUIRE_CORPUS("dl4j_tf_graphs/examples/mnist_00/frozen_model.pb");
  const std::string graph = corpus_path("dl4j_tf_graphs/examples/mnist_00/frozen_model.pb");
  Failure f = expect_refused("--graph " + graph + " --outputs outptu");
  EXPECT_NE(f.message.find("no node named 'outptu'"), std::string::npos) << f.message;
  f = expect_refused("--graph " + graph);
  EXPECT_NE(f.message.find("--outputs is required"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("output"), std::string::npos) << f.message;
  f = expect_refused("--graph /nonexistent/model.pb --outputs y");
  EXPECT_NE(f.message.find("/nonexistent/model.pb"), std::string::npos) << f.message;
}

// --list-ops --all needs no graph and lists every op; --all elsewhere is refused.
TEST(CliErrors, ListAllOpsStandsAlone) {
  const CommandResult all = run_command(tool_path("floe-convert") + " --list-ops --all");
  EXPECT_EQ(all.exit_code, 0) << all.output;
  EXPECT_NE(all.output.find("TensorFlow op names: "), std::string::npos) << all.output;
  EXPECT_NE(all.output.find("  Conv2D "), std::string::npos) << all.output;
  EXPECT_NE(all.output.find("  TensorList*"), std::string::npos) << all.output;
  Failure f = expect_refused("--all");
  EXPECT_NE(f.message.find("--all goes with --list-ops alone"), std::string::npos) << f.message;
  f = expect_refused("--list-ops --all --graph " + make_temp_dir() + "/g.pb");
  EXPECT_NE(f.message.find("--all goes with --list-ops alone"), std::string::npos) << f.message;
}

// A model that does not fit its memory regions: exit 2, nothing written, every
// region's size and the bytes the last one lacks; a malformed list too.
TEST(CliErrors, MemoryRegionsThatCannotHoldTheModel) {
  const std::string dir = std::string(FLOE_SOURCE_DIR) + "/examples/mnist_mlp/model";
  const std::string model = "--graph " + dir + "/mnist_mlp.meta --checkpoint " + dir +
                            " --outputs softmax_linear/add --input-shape images=1,784 --target cortex-m55";
  Failure f = expect_refused(model + " --memory-regions fast=1K,slow=2K");
  EXPECT_NE(f.message.find("region 'slow' is 2048 bytes but needs 3600 (3136 of activations"), std::string::npos)
      << f.message;
  EXPECT_NE(f.message.find("1552 bytes short; region 'fast' is 1024 bytes"), std::string::npos) << f.message;
  f = expect_refused(model + " --memory-regions fast=1K,fast=2K");
  EXPECT_NE(f.message.find("'fast=2K': the name is given twice"), std::string::npos) << f.message;
}

TEST(CliErrors, FloeRunRejectsCorruptModel) {
  const std::string dir = make_temp_dir();
  write_file(dir + "/bad.floe", std::string(64, '\x7f'));
  const CommandResult r = run_command(tool_path("floe-run") + " " + dir + "/bad.floe");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("not a floe model"), std::string::npos) << r.output;
}

// An index fed at run time outside the dimension it addresses: floe-run
// exits 2 naming the op and, in TF's words, the index.
TEST(CliErrors, FloeRunNamesAnOutOfRangeFedIndex) {
  const std::string dir = make_temp_dir();
  write_file(dir + "/gather.pbtxt",
             "node { name: 'params' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } }"
             " attr { key: 'shape' value { shape { dim { size: 5 } } } } }\n"
             "node { name: 'indices' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } }"
             " attr { key: 'shape' value { shape { dim { size: 3 } } } } }\n"
             "node { name: 'axis' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }"
             " attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
             "node { name: 'y' op: 'GatherV2' input: 'params' input: 'indices' input: 'axis'"
             " attr { key: 'Tparams' value { type: DT_FLOAT } } attr { key: 'Tindices' value { type: DT_INT32 } }"
             " attr { key: 'Taxis' value { type: DT_INT32 } } }\n");
  const CommandResult converted = run_command(tool_path("floe-convert") + " -q --graph " + dir +
                                              "/gather.pbtxt --outputs y -o " + dir + "/gather.floe");
  ASSERT_EQ(converted.exit_code, 0) << converted.output;
  const float params[5] = {1, 2, 3, 4, 5};
  const int32_t indices[3] = {4, 0, 7};
  tools::write_npy(dir + "/params.npy", DType::kFloat32, {5}, params);
  tools::write_npy(dir + "/indices.npy", DType::kInt32, {3}, indices);
  const CommandResult r = run_command(tool_path("floe-run") + " " + dir + "/gather.floe -i params=" + dir +
                                      "/params.npy -i indices=" + dir + "/indices.npy");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("index out of range: indices[2] = 7 is not in [0, 5) (op 0, GATHER)"), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace floe::testing
