// SPDX-License-Identifier: Apache-2.0
// The limits of converter/README.md "Limits" (converter/ir/limits.h), each fed an input
// generated just over it: floe-convert must exit 2 with the limit's reason,
// write nothing, and stay under 10 s and 1 GB of peak RSS (wait4's rusage).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "converter/ir/limits.h"
#include "tests/converter/support/tf_graph_text.h"
#include "tests/support/model_runner.h"

extern char** environ;

namespace floe::conv {
namespace {

using floe::testing::file_exists;
using floe::testing::make_temp_dir;
using floe::testing::tool_path;

constexpr double kMaxSeconds = 10.0;
constexpr long kMaxRssKb = 1024L * 1024L;  // 1 GB

struct ConvertRun {
  int exit_code = -1;
  double seconds = 0;
  long max_rss_kb = 0;
  std::string output;
};

// floe-convert with `args`, its stderr captured to a file, measured alone.
ConvertRun run_convert(const std::vector<std::string>& args, const std::string& dir) {
  const std::string log = dir + "/stderr.txt";
  std::vector<std::string> argv_strings = {tool_path("floe-convert")};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  ConvertRun run;
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
    ADD_FAILURE() << "cannot start " << argv[0];
    return run;
  }
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) ADD_FAILURE() << "wait4 failed";
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.max_rss_kb = usage.ru_maxrss;
  std::ifstream in(log);
  run.output.assign(std::istreambuf_iterator<char>(in), {});
  return run;
}

void expect_refused_within_bounds(const ConvertRun& run, const std::string& reason, const std::string& output_file) {
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find(reason), std::string::npos) << run.output;
  EXPECT_LT(run.seconds, kMaxSeconds);
  EXPECT_LT(run.max_rss_kb, kMaxRssKb);
  EXPECT_FALSE(file_exists(output_file));
  std::printf("  exit %d in %.2f s, peak RSS %ld KB: %s", run.exit_code, run.seconds, run.max_rss_kb,
              run.output.c_str());
}

// Protobuf wire encoding, enough to write GraphDefs by hand.
void put_varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
void put_bytes(std::string* out, int field, const std::string& bytes) {
  put_varint(out, static_cast<uint64_t>(field) << 3 | 2);
  put_varint(out, bytes.size());
  out->append(bytes);
}

TEST(ResourceLimits, ConstOfTwoToTheFortyElementsIsRefusedBeforeAllocating) {
  const std::string dir = make_temp_dir();
  std::ofstream(dir + "/g.pbtxt") << R"(
node { name: 'huge' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }
       attr { key: 'value' value { tensor { dtype: DT_FLOAT
         tensor_shape { dim { size: 1048576 } dim { size: 1048576 } } float_val: 1 } } } }
node { name: 'out' op: 'Relu' input: 'huge' }
)";
  const ConvertRun run = run_convert({"--graph", dir + "/g.pbtxt", "--outputs", "out", "-o", dir + "/m.floe"}, dir);
  expect_refused_within_bounds(run, "floe's limit", dir + "/m.floe");
}

TEST(ResourceLimits, OneConstJustOverTheTensorLimitIsRefused) {
  // 2^29 float32 elements = 2 GiB: one byte-per-tensor limit above, under the
  // all-constants limit.
  const std::string dir = make_temp_dir();
  std::ofstream(dir + "/g.pbtxt") << R"(
node { name: 'big' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }
       attr { key: 'value' value { tensor { dtype: DT_FLOAT
         tensor_shape { dim { size: 536870912 } } float_val: 1 } } } }
node { name: 'out' op: 'Relu' input: 'big' }
)";
  const ConvertRun run = run_convert({"--graph", dir + "/g.pbtxt", "--outputs", "out", "-o", dir + "/m.floe"}, dir);
  expect_refused_within_bounds(run, "bytes for one constant", dir + "/m.floe");
}

// TF fills a shape from a shorter value list with the last value: one int8
// value claiming 1.5 GB (under one tensor's limit) made the converter hold
// ~20 GB (the constant widened to int32 for folding, then copied on its way
// to the model). Fills over kMaxExpandedConstantBytes together are refused
// before any constant is decoded; two 40 MB fills pass each alone.
TEST(ResourceLimits, ConstantsFilledFromOneValueAreRefusedOverTheExpansionLimit) {
  const std::string dir = make_temp_dir();
  std::ofstream(dir + "/g.pbtxt") << R"(
node { name: 'splat' op: 'Const' attr { key: 'dtype' value { type: DT_INT8 } }
       attr { key: 'value' value { tensor { dtype: DT_INT8
         tensor_shape { dim { size: 1500000000 } } int_val: 1 } } } }
node { name: 'out' op: 'Neg' input: 'splat' attr { key: 'T' value { type: DT_INT8 } } }
)";
  const ConvertRun run = run_convert({"--graph", dir + "/g.pbtxt", "--outputs", "out", "-o", dir + "/m.floe"}, dir);
  expect_refused_within_bounds(run, "by repeating a last value, floe's limit", dir + "/m.floe");

  std::ofstream(dir + "/two.pbtxt") << R"(
node { name: 'a' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }
       attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 10000000 } } float_val: 1 } } } }
node { name: 'b' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }
       attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 10000000 } } float_val: 2 } } } }
node { name: 'out' op: 'Add' input: 'a' input: 'b' attr { key: 'T' value { type: DT_FLOAT } } }
)";
  static_assert(uint64_t{40000000} <= kMaxExpandedConstantBytes && uint64_t{80000000} > kMaxExpandedConstantBytes,
                "one fill under the limit, two over it");
  const ConvertRun two =
      run_convert({"--graph", dir + "/two.pbtxt", "--outputs", "out", "-o", dir + "/two.floe"}, dir);
  expect_refused_within_bounds(two, "node 'b' (op Const): 40000000 bytes from 1 listed values", dir + "/two.floe");
}

using G = floe::testing::TfGraphText;

// 'big': a constant image of ones, shape `image`, resized by `op` to height x width.
G resize_graph(const std::string& op, const std::vector<int64_t>& image, int64_t height, int64_t width) {
  G g;
  g.constant("image", "DT_FLOAT", image, {1});
  g.constant("size", "DT_INT32", {2}, {static_cast<double>(height), static_cast<double>(width)});
  g.node("big", op, {"image", "size"}, {G::type("T", "DT_FLOAT")});
  return g;
}

// A 10-element constant resized to [2, 16384008, 7, 5] floats (4.6 GB): no
// tensor, folded or computed at run time, may exceed one constant's limit;
// refused from the inferred shape before anything is allocated.
TEST(ResourceLimits, AnOutputOverTheTensorLimitIsRefusedBeforeAllocating) {
  const std::string dir = make_temp_dir();
  G g = resize_graph("ResizeNearestNeighbor", {2, 1, 1, 5}, 16384008, 7);
  g.node("out", "Relu", {"big"}, {G::type("T", "DT_FLOAT")}).write(dir + "/g.pbtxt");
  const ConvertRun run = run_convert({"--graph", dir + "/g.pbtxt", "--outputs", "out", "-o", dir + "/m.floe"}, dir);
  expect_refused_within_bounds(run, "node 'big' (op ResizeNearestNeighbor): output 0 [2,16384008,7,5] would take "
                                    "4587522240 bytes, over the 2147483647-byte limit of one tensor",
                               dir + "/m.floe");
}

// A claimed size past 2^64 bytes is named as such (the byte count is checked
// as a double first: converting it to a 64-bit count would be undefined).
TEST(ResourceLimits, AnOutputClaimingMoreThan2To64BytesIsRefusedSayingSo) {
  const std::string dir = make_temp_dir();
  resize_graph("ResizeBilinear", {1, 1, 1, 4}, 2147483647, 2147483647).write(dir + "/g.pbtxt");
  const ConvertRun run = run_convert({"--graph", dir + "/g.pbtxt", "--outputs", "big", "-o", dir + "/m.floe"}, dir);
  expect_refused_within_bounds(run, "node 'big' (op ResizeBilinear): output 0 [1,2147483647,2147483647,4] would take "
                                    "over 2^64 bytes, over the 2147483647-byte limit of one tensor",
                               dir + "/m.floe");
}

// One float resized to [1, 4096, 8192, 1] (128 MiB): a large expansion of
// small constants is not folded into the model (folding a 917 MB one would
// break the 1 GB bound) but stays a run-time op, converted in bounded memory.
TEST(ResourceLimits, ALargeExpansionOfSmallConstantsStaysARunTimeOp) {
  const std::string dir = make_temp_dir();
  resize_graph("ResizeNearestNeighbor", {1, 1, 1, 1}, 4096, 8192).write(dir + "/g.pbtxt");
  const std::string model = dir + "/m.floe";
  const ConvertRun run = run_convert({"--graph", dir + "/g.pbtxt", "--outputs", "big", "-o", model}, dir);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_LT(run.seconds, kMaxSeconds);
  EXPECT_LT(run.max_rss_kb, kMaxRssKb);
  std::ifstream in(model, std::ios::binary | std::ios::ate);
  ASSERT_TRUE(in.good());
  EXPECT_LT(static_cast<uint64_t>(in.tellg()), uint64_t{1} << 16);  // the op, not 128 MiB of its result
}

// The same rule inside a loop the converter unrolls: each iteration Fills
// 1 GiB from two small constants (max-reduced into the carried value). The
// unrolling keeps the Fill symbolic instead of computing 2 GiB at conversion.
TEST(ResourceLimits, ALargeExpansionInAnUnrolledLoopIsNotComputedAtConversion) {
  G g;
  const std::string frame = "while/while_context";
  g.placeholder("x", "DT_FLOAT", {1}).constant("n", "DT_INT32", {}, {2}).constant("zero", "DT_INT32", {}, {0});
  g.constant("one", "DT_INT32", {}, {1}).constant("dims", "DT_INT32", {2}, {16384, 16384});
  g.constant("fill_value", "DT_FLOAT", {}, {1.5}).constant("axes", "DT_INT32", {2}, {0, 1});
  g.enter("while/Enter", "zero", frame, false, "DT_INT32").enter("while/Enter_1", "x", frame, false, "DT_FLOAT");
  for (const char* c : {"n", "one", "dims", "axes"}) g.enter(std::string("while/") + c, c, frame, true, "DT_INT32");
  g.enter("while/fill_value", "fill_value", frame, true, "DT_FLOAT");
  g.node("while/Merge", "Merge", {"while/Enter", "while/NextIteration"}, {G::type("T", "DT_INT32"), G::integer("N", 2)});
  g.node("while/Merge_1", "Merge", {"while/Enter_1", "while/NextIteration_1"}, {G::type("T", "DT_FLOAT"), G::integer("N", 2)});
  g.node("while/Less", "Less", {"while/Merge", "while/n"}, {G::type("T", "DT_INT32")});
  g.node("while/LoopCond", "LoopCond", {"while/Less"});
  g.node("while/Switch", "Switch", {"while/Merge", "while/LoopCond"}, {G::type("T", "DT_INT32")});
  g.node("while/Switch_1", "Switch", {"while/Merge_1", "while/LoopCond"}, {G::type("T", "DT_FLOAT")});
  g.node("while/i", "Identity", {"while/Switch:1"}, {G::type("T", "DT_INT32")});
  g.node("while/acc", "Identity", {"while/Switch_1:1"}, {G::type("T", "DT_FLOAT")});
  g.node("while/add", "Add", {"while/i", "while/one"}, {G::type("T", "DT_INT32")});
  g.node("while/big", "Fill", {"while/dims", "while/fill_value"}, {G::type("T", "DT_FLOAT"), G::type("index_type", "DT_INT32")});
  g.node("while/max", "Max", {"while/big", "while/axes"}, {G::type("T", "DT_FLOAT"), G::type("Tidx", "DT_INT32")});
  g.node("while/next", "Add", {"while/acc", "while/max"}, {G::type("T", "DT_FLOAT")});
  g.node("while/NextIteration", "NextIteration", {"while/add"}, {G::type("T", "DT_INT32")});
  g.node("while/NextIteration_1", "NextIteration", {"while/next"}, {G::type("T", "DT_FLOAT")});
  g.node("while/Exit_1", "Exit", {"while/Switch_1"}, {G::type("T", "DT_FLOAT")});
  const std::string dir = make_temp_dir();
  const std::string model = dir + "/m.floe";
  const ConvertRun run = run_convert({"--graph", g.write(dir + "/g.pbtxt"), "--outputs", "while/Exit_1", "-o", model}, dir);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_LT(run.seconds, kMaxSeconds);
  EXPECT_LT(run.max_rss_kb, kMaxRssKb);
  std::ifstream in(model, std::ios::binary | std::ios::ate);
  ASSERT_TRUE(in.good());
  EXPECT_LT(static_cast<uint64_t>(in.tellg()), uint64_t{1} << 16);  // two run-time Fills, not their values
}

TEST(ResourceLimits, AMillionNodesAreRefusedBeforeParsing) {
  const std::string dir = make_temp_dir();
  std::string graph;
  for (int i = 0; i < 1000000; ++i) {
    std::string node;
    put_bytes(&node, 1, "n" + std::to_string(i));
    put_bytes(&node, 2, "NoOp");
    put_bytes(&graph, 1, node);
  }
  std::ofstream(dir + "/g.pb", std::ios::binary) << graph;
  const ConvertRun run = run_convert({"--graph", dir + "/g.pb", "--outputs", "n0", "-o", dir + "/m.floe"}, dir);
  expect_refused_within_bounds(run, "1000000 nodes, over floe's limit of 500000 nodes per graph", dir + "/m.floe");
}

TEST(ResourceLimits, AGigabyteClaimedTensorContentIsRefusedInBoundedMemory) {
  // A Const whose tensor_content (and every enclosing message) claims 1 GB;
  // the file holds a few bytes of it.
  const std::string dir = make_temp_dir();
  const uint64_t claimed = uint64_t{1} << 30;
  std::string shape_dim, shape;
  put_varint(&shape_dim, 1 << 3 | 0);
  put_varint(&shape_dim, claimed / 4);
  put_bytes(&shape, 2, shape_dim);
  std::string tensor;
  put_varint(&tensor, 1 << 3 | 0);
  put_varint(&tensor, 1);  // DT_FLOAT
  put_bytes(&tensor, 2, shape);
  put_varint(&tensor, 4 << 3 | 2);  // tensor_content
  put_varint(&tensor, claimed);
  tensor += std::string(64, '\0');
  std::string node;
  put_bytes(&node, 1, "c");
  put_bytes(&node, 2, "Const");
  put_varint(&node, 5 << 3 | 2);  // attr map entry, claimed as long as the content
  put_varint(&node, claimed + 64);
  std::string graph;
  put_varint(&graph, 1 << 3 | 2);
  put_varint(&graph, claimed + 128);
  graph += node + tensor;
  std::ofstream(dir + "/g.pb", std::ios::binary) << graph;
  const ConvertRun run = run_convert({"--graph", dir + "/g.pb", "--outputs", "c", "-o", dir + "/m.floe"}, dir);
  expect_refused_within_bounds(run, "truncated or corrupt GraphDef", dir + "/m.floe");
}

TEST(ResourceLimits, GraphFileOverTwoGigabytesIsRefusedBeforeReading) {
  // A sparse file: its size is over the limit, its blocks are not on disk.
  const std::string dir = make_temp_dir();
  const std::string path = dir + "/g.pb";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(kMaxInputFileBytes + 1)), 0);
  ::close(fd);
  const ConvertRun run = run_convert({"--graph", path, "--outputs", "x", "-o", dir + "/m.floe"}, dir);
  expect_refused_within_bounds(run, "bytes for a graph file", dir + "/m.floe");
}

TEST(ResourceLimits, ShapeOfRankOverTheLimitIsRefused) {
  const std::string dir = make_temp_dir();
  std::string dims;
  for (int d = 0; d <= kMaxTensorRank; ++d) dims += "dim { size: 1 } ";
  std::ofstream(dir + "/g.pbtxt") << "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } }"
                                  << " attr { key: 'shape' value { shape { " << dims << "} } } }\n"
                                  << "node { name: 'out' op: 'Relu' input: 'x' }\n";
  const ConvertRun run = run_convert({"--graph", dir + "/g.pbtxt", "--outputs", "out", "-o", dir + "/m.floe"}, dir);
  expect_refused_within_bounds(run, "g.pbtxt: node 'x' (op Placeholder): attr 'shape' has rank 9, over floe's limit of 8",
                               dir + "/m.floe");
}

}  // namespace
}  // namespace floe::conv
