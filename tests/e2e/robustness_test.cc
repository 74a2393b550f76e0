// SPDX-License-Identifier: Apache-2.0
// Corrupted models and inputs:
//  - every single-byte change of a converted example model is caught at load
//    when the checksum is verified, and never crashes Load/Init/Invoke when it
//    is not (run under ASan+UBSan in the asan preset: any stray access fails);
//  - truncated and bit-flipped graphs and checkpoints make floe-convert exit 2
//    with a message (or, for a flip the format cannot notice, convert to a
//    model that validates), never die by a signal, never leave a file behind;
//  - the output is written atomically: a failing write or a SIGTERM mid-write
//    leaves neither the output nor a temporary file, and keeps an old output.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <csignal>
#include <random>

#include "converter/pipeline/convert.h"
#include "runtime/core/interpreter.h"
#include "schemas/contract/checksum.h"
#include "runtime/tools/model_file.h"
#include "schemas/floe_generated.h"
#include "tests/support/corpus.h"
#include "converter/tools/atomic_write.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

const std::string kExamples = std::string(FLOE_SOURCE_DIR) + "/examples/";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::vector<uint8_t> convert_conv_seed() {
  conv::ConvertOptions options;
  options.graph_path = kExamples + "conv_seed/model/conv_seed.meta";
  options.checkpoint_path = kExamples + "conv_seed/model";
  options.outputs = {"conv"};
  return conv::convert(options).model;
}

// Load -> Init -> Invoke; the model and arena are exactly sized heap copies,
// so ASan flags any access past either.
Status load_and_run(const std::vector<uint8_t>& bytes, bool verify_checksum) {
  tools::AlignedBytes buffer = tools::aligned_bytes(bytes.size());
  std::memcpy(buffer.get(), bytes.data(), bytes.size());
  Model model;
  LoadOptions options;
  options.verify_checksum = verify_checksum;
  const Status load = model.Load(buffer.get(), bytes.size(), options);
  if (load != Status::kOk) return load;
  if (model.arena_size() > (64u << 20)) return Status::kArenaTooSmall;  // not worth allocating
  const size_t arena_size = static_cast<size_t>(model.arena_size());
  tools::AlignedBytes arena = tools::aligned_bytes(arena_size);
  Interpreter interpreter(model, arena.get(), arena_size);
  const Status init = interpreter.Init();
  if (init != Status::kOk) return init;
  return interpreter.Invoke();
}

TEST(ModelIntegrity, ConvertedModelCarriesAValidChecksum) {
  const std::vector<uint8_t> model = convert_conv_seed();
  EXPECT_EQ(load_and_run(model, /*verify_checksum=*/true), Status::kOk);
  // The field is where the runtime looks for it, and the CRC covers the rest.
  tools::AlignedBytes buffer = tools::aligned_bytes(model.size());
  std::memcpy(buffer.get(), model.data(), model.size());
  size_t field = 0;
  ASSERT_TRUE(find_model_checksum_field(buffer.get(), &field));
  EXPECT_EQ(compute_model_checksum(buffer.get(), model.size(), field),
            stored_model_checksum(buffer.get(), field));
  // An appended byte is a different file.
  std::vector<uint8_t> longer = model;
  longer.push_back(0);
  EXPECT_EQ(load_and_run(longer, true), Status::kChecksumMismatch);
  EXPECT_EQ(load_and_run(longer, false), Status::kOk);
}

TEST(ModelIntegrity, EveryFlippedByteIsCaughtWithChecksumAndHarmlessWithout) {
  const std::vector<uint8_t> model = convert_conv_seed();
  ASSERT_LT(model.size(), 4096u) << "keep this test fast: use a small model";
  size_t still_valid_without_checksum = 0;
  for (size_t i = 0; i < model.size(); ++i) {
    for (const uint8_t mask : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xFF}}) {
      std::vector<uint8_t> corrupted = model;
      corrupted[i] ^= mask;
      EXPECT_NE(load_and_run(corrupted, /*verify_checksum=*/true), Status::kOk)
          << "byte " << i << " ^ " << int{mask} << " went unnoticed with the checksum on";
      // Off: any status is fine, a crash or sanitizer report is not.
      if (load_and_run(corrupted, /*verify_checksum=*/false) == Status::kOk) {
        ++still_valid_without_checksum;
      }
    }
  }
  // Sanity: without the checksum, some flips (weights, names) do validate:
  // exactly the corruption only the checksum can catch.
  EXPECT_GT(still_valid_without_checksum, 0u);
  std::printf("%zu of %zu byte flips still load and run with the checksum off\n",
              still_valid_without_checksum, model.size() * 3);
}

TEST(ModelIntegrity, FloeRunVerifiesTheChecksumOfFilesFromDisk) {
  std::vector<uint8_t> model = convert_conv_seed();
  const std::string dir = make_temp_dir();
  // Flip one bit of the last constant byte (a weight): validation cannot notice.
  tools::AlignedBytes buffer = tools::aligned_bytes(model.size());
  std::memcpy(buffer.get(), model.data(), model.size());
  Model loaded;
  ASSERT_EQ(loaded.Load(buffer.get(), model.size()), Status::kOk);
  const auto* constants = loaded.schema()->constants();
  ASSERT_NE(constants, nullptr);
  const size_t weight = static_cast<size_t>(constants->data() - buffer.get()) + constants->size() - 20;
  model[weight] ^= 0x10;
  write_file(dir + "/m.floe", std::string(model.begin(), model.end()));
  const std::string input = " --input image=" + kExamples + "conv_seed/model/input.npy";
  const CommandResult checked = run_command(tool_path("floe-run") + " " + dir + "/m.floe" + input);
  EXPECT_EQ(checked.exit_code, 2) << checked.output;
  EXPECT_NE(checked.output.find("checksum"), std::string::npos) << checked.output;
  const CommandResult trusted =
      run_command(tool_path("floe-run") + " --no-verify-checksum " + dir + "/m.floe" + input);
  EXPECT_EQ(trusted.exit_code, 0) << trusted.output;
}

// ---- floe-convert on corrupted inputs --------------------------------------

struct Case {
  std::string label;
  CommandResult result;
  bool output_left = false;
  bool temporaries_left = false;
  std::string output_path;
};

// Copies `files` (name -> bytes) into a fresh directory and runs floe-convert with
// `args` (where {dir} stands for that directory).
Case run_convert(const std::map<std::string, std::string>& files, std::string args) {
  const std::string dir = make_temp_dir();
  for (const auto& [name, bytes] : files) write_file(dir + "/" + name, bytes);
  for (size_t at; (at = args.find("{dir}")) != std::string::npos;) args.replace(at, 5, dir);
  const std::string out_dir = make_temp_dir();
  Case c;
  c.output_path = out_dir + "/out.floe";
  c.result = run_command(tool_path("floe-convert") + " -q " + args + " -o " + c.output_path);
  c.output_left = file_exists(c.output_path);
  c.temporaries_left = run_command("ls -A " + out_dir + " | grep -v '^out.floe$'").output != "";
  return c;
}

// Exit 2 with a message and no file, or (only when `may_succeed`) exit 0 with
// a model that validates with its checksum. Never a signal.
void expect_clean_outcome(const Case& c, const std::string& label, bool may_succeed) {
  SCOPED_TRACE(label);
  // run_command goes through sh, which reports a signal as 128 + its number.
  ASSERT_TRUE(c.result.exit_code == 0 || c.result.exit_code == 2)
      << "floe-convert exited " << c.result.exit_code << " (>= 128: killed by a signal):\n"
      << c.result.output;
  EXPECT_FALSE(c.temporaries_left) << "temporary file left behind";
  if (c.result.exit_code == 2) {
    EXPECT_NE(c.result.output.find("floe-convert: error: "), std::string::npos) << c.result.output;
    EXPECT_FALSE(c.output_left) << "output written despite the error";
    return;
  }
  ASSERT_TRUE(may_succeed) << "exit " << c.result.exit_code << ":\n" << c.result.output;
  ASSERT_EQ(c.result.exit_code, 0) << c.result.output;
  const std::string bytes = read_file(c.output_path);
  EXPECT_EQ(load_and_run(std::vector<uint8_t>(bytes.begin(), bytes.end()), true), Status::kOk);
}

// Truncations at a spread of lengths and seeded single-bit flips.
std::vector<std::pair<std::string, std::string>> corruptions(const std::string& bytes, uint32_t seed,
                                                             int flips) {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t n : {size_t{0}, size_t{1}, bytes.size() / 7, bytes.size() / 3, bytes.size() / 2,
                   bytes.size() * 4 / 5, bytes.size() - 1}) {
    if (n < bytes.size()) out.emplace_back("truncated to " + std::to_string(n), bytes.substr(0, n));
  }
  std::mt19937 rng(seed);
  for (int i = 0; i < flips; ++i) {
    std::string flipped = bytes;
    const size_t at = rng() % bytes.size();
    const int bit = static_cast<int>(rng() % 8);
    flipped[at] = static_cast<char>(flipped[at] ^ (1 << bit));
    out.emplace_back("bit " + std::to_string(bit) + " of byte " + std::to_string(at) + " flipped",
                     flipped);
  }
  return out;
}

void check_graph_corruptions(const std::string& path, const std::string& outputs, int flips) {
  const std::string bytes = read_file(path);
  ASSERT_FALSE(bytes.empty()) << path;
  for (const auto& [label, corrupted] : corruptions(bytes, 7, flips)) {
    const Case c = run_convert({{"g.pb", corrupted}}, "--graph {dir}/g.pb --outputs " + outputs);
    // A truncation is always an error; a flip in a name or value may convert.
    expect_clean_outcome(c, path + ": " + label, label.rfind("bit", 0) == 0);
    if (label.rfind("truncated", 0) == 0 && label != "truncated to 0") {
      EXPECT_EQ(c.result.exit_code, 2) << path << ": " << label << "\n" << c.result.output;
    }
  }
}

// Checkpoint data shard: the entry CRCs cover every tensor byte, so every
// corruption is an error. Index: block CRCs cover every block, but not the
// footer's zero padding, which readers ignore (TF too): a flip there may convert.
void check_checkpoint_corruptions(const std::string& dir, const std::string& prefix,
                                  const std::string& graph_args, int flips) {
  const std::string index = read_file(dir + prefix + ".index");
  const std::string data = read_file(dir + prefix + ".data-00000-of-00001");
  ASSERT_FALSE(index.empty());
  for (const bool corrupt_index : {true, false}) {
    for (const auto& [label, corrupted] : corruptions(corrupt_index ? index : data, 11, flips)) {
      std::map<std::string, std::string> files = {
          {prefix + ".index", corrupt_index ? corrupted : index},
          {prefix + ".data-00000-of-00001", corrupt_index ? data : corrupted}};
      const Case c = run_convert(files, graph_args + " --checkpoint {dir}/" + prefix);
      const std::string what = dir + prefix + (corrupt_index ? ".index " : ".data ") + label;
      const bool is_flip = label.rfind("bit", 0) == 0;
      expect_clean_outcome(c, what, corrupt_index && is_flip);
      if (!corrupt_index || !is_flip) EXPECT_EQ(c.result.exit_code, 2) << what << "\n" << c.result.output;
    }
  }
}

TEST(CorruptInputs, ExampleGraphsAndCheckpoints) {
  check_graph_corruptions(kExamples + "conv_seed/model/conv_seed.meta", "conv", 12);
  check_graph_corruptions(kExamples + "mnist_mlp/model/mnist_mlp.pbtxt", "softmax_linear/add", 8);
  check_checkpoint_corruptions(kExamples + "conv_seed/model/", "model.ckpt",
                               "--graph " + kExamples + "conv_seed/model/conv_seed.meta --outputs conv", 10);
}

TEST(CorruptInputs, CorpusGraphDefs) {
  FLOE_REQUIRE_CORPUS("dl4j_tf_graphs/examples/mnist_00/frozen_model.pb");
  FLOE_REQUIRE_CORPUS("tf2onnx/models/regression/graphdef/frozen.pb");
  check_graph_corruptions(corpus_path("dl4j_tf_graphs/examples/mnist_00/frozen_model.pb"), "output", 10);
  check_graph_corruptions(corpus_path("tf2onnx/models/regression/graphdef/frozen.pb"), "pred", 10);
}

TEST(CorruptInputs, CorpusCheckpoints) {
  FLOE_REQUIRE_CORPUS("tf2onnx/models/regression/checkpoint/model.index");
  const std::string dir = corpus_path("tf2onnx/models/regression/checkpoint/");
  check_checkpoint_corruptions(dir, "model",
                               "--graph " + dir + "model.meta --outputs pred --input-shape X=4", 8);
}

// ---- atomic output -----------------------------------------------------------

std::string conv_seed_args() {
  return "--graph " + kExamples + "conv_seed/model/conv_seed.meta --checkpoint " + kExamples +
         "conv_seed/model --outputs conv";
}

// A SIGTERM after the first chunk of the write: the process dies by it and the
// half-written temporary file is gone (the writer's signal handler), in a child
// so the test survives.
TEST(AtomicOutput, SignalMidWriteLeavesNothing) {
  const std::string dir = make_temp_dir();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    conv::WriteOptions options;
    options.max_chunk = 4096;
    options.after_chunk = [](size_t) { std::raise(SIGTERM); };
    conv::write_atomically(dir + "/out.floe", std::vector<uint8_t>(1 << 20, 7), options);
    std::_Exit(0);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "expected death by SIGTERM, status " << status;
  EXPECT_EQ(run_command("ls -A " + dir).output, "") << "partial output left behind";
}

// An output that is not a regular file (a pipe here; /dev/null, /dev/stdout)
// is written in place: renaming a temporary file over it would replace it
// (as root, `-o /dev/null` would turn /dev/null into a regular file).
TEST(AtomicOutput, APipeOrDeviceOutputIsWrittenInPlace) {
  const std::string dir = make_temp_dir();
  const std::string fifo = dir + "/out.pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const pid_t reader = ::fork();
  ASSERT_GE(reader, 0);
  if (reader == 0) {
    std::ifstream in(fifo, std::ios::binary);
    const std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::_Exit(got == std::string(100000, '\x07') ? 0 : 1);
  }
  conv::write_atomically(fifo, std::vector<uint8_t>(100000, 7));
  struct stat after;
  ASSERT_EQ(::stat(fifo.c_str(), &after), 0);
  const bool still_a_pipe = S_ISFIFO(after.st_mode);
  EXPECT_TRUE(still_a_pipe) << "the pipe was replaced";
  if (!still_a_pipe) ::kill(reader, SIGKILL);  // its open() would wait for a writer forever
  int status = 0;
  ASSERT_EQ(::waitpid(reader, &status, 0), reader);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the reader did not get the bytes, status " << status;
  EXPECT_EQ(run_command("ls -A " + dir).output, "out.pipe\n") << "a temporary file was left behind";
}

TEST(AtomicOutput, FailedWriteLeavesNothingAndKeepsTheOldFile) {
  const std::string dir = make_temp_dir();
  // A 512-byte file size limit (ulimit -f 1) makes the model write fail part-way.
  const CommandResult r = run_command("ulimit -f 1 && " + tool_path("floe-convert") + " -q " +
                                      conv_seed_args() + " -o " + dir + "/out.floe");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot write the output file"), std::string::npos) << r.output;
  EXPECT_EQ(run_command("ls -A " + dir).output, "") << "partial output left behind";

  // An existing output survives a failed conversion untouched.
  write_file(dir + "/out.floe", "previous model");
  const CommandResult bad = run_command(tool_path("floe-convert") + " -q --graph " + dir +
                                        "/missing.pb --outputs x -o " + dir + "/out.floe");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_EQ(read_file(dir + "/out.floe"), "previous model");
  EXPECT_EQ(run_command("ls -A " + dir).output, "out.floe\n");
}

}  // namespace
}  // namespace floe::testing
