// SPDX-License-Identifier: Apache-2.0
// Several memory regions (floe-convert --memory-regions): the converter puts
// the most-accessed bytes in the first (fast) region within its size and the
// rest in the last, refuses a model that cannot fit with the region's size and
// the bytes it needs, and the runtime takes one arena per region and computes
// exactly what the one-arena model computes.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "converter/emit/emit.h"
#include "converter/ir/error.h"
#include "converter/pipeline/convert.h"
#include "converter/plan/arena_plan.h"
#include "converter/plan/memory_planner.h"
#include "runtime/core/registry.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "tests/support/edited_model.h"
#include "tests/support/loaded_model.h"
#include "tests/converter/support/optimize_test_util.h"
#include "tests/support/corpus.h"

namespace floe::testing {
namespace {

using schema::OpCode;

struct HotCold {
  ModelBuilder b;
  int x, h, y;
};

// x [1,256] (1 KiB, read once by the MATMUL) -> h [1,16] (64 B, written by
// the MATMUL's 16 KiB of work and read by three more ops) -> ... -> y.
HotCold hot_cold() {
  HotCold m;
  m.x = m.b.input("x", {1, 256});
  const int w = m.b.random_constant("w", {256, 16}, 3);
  schema::MatMulOptionsT matmul;
  m.h = m.b.op(OpCode::MATMUL, {m.x, w}, {1, 16}, ModelBuilder::options(matmul));
  const int a = m.b.op(OpCode::RELU, {m.h}, {1, 16});
  const int s = m.b.op(OpCode::ADD, {a, m.h}, {1, 16});
  const int p = m.b.op(OpCode::MUL, {s, a}, {1, 16});
  m.y = m.b.op(OpCode::ADD, {p, s}, {1, 16});
  m.b.output(m.y);
  return m;
}

std::vector<conv::MemoryRegion> regions(uint64_t fast, uint64_t slow) {
  return {conv::MemoryRegion{"fast", fast}, conv::MemoryRegion{"slow", slow}};
}

// Runs `model` on `input` with one arena per region (or one arena when
// `one_arena`), returning output 0's bytes.
std::vector<uint8_t> run_regions(const Model& model, const HostTensor& input, bool one_arena) {
  std::vector<tools::AlignedBytes> arenas;
  std::vector<void*> bases;
  std::vector<size_t> sizes;
  for (uint32_t r = 0; r < model.region_count(); ++r) {
    const size_t bytes = static_cast<size_t>(model.region_arena_size(r));
    arenas.push_back(tools::aligned_bytes(bytes == 0 ? 1 : bytes));
    bases.push_back(arenas.back().get());
    sizes.push_back(bytes);
  }
  tools::AlignedBytes single = tools::aligned_bytes(static_cast<size_t>(model.arena_size()));
  std::unique_ptr<Interpreter> interpreter =
      one_arena ? std::make_unique<Interpreter>(model, single.get(), static_cast<size_t>(model.arena_size()))
                : std::make_unique<Interpreter>(model, bases.data(), sizes.data(), bases.size());
  if (interpreter->Init() != Status::kOk) {
    ADD_FAILURE() << interpreter->error().message;
    return {};
  }
  std::memcpy(interpreter->input(0).data, input.data.data(), input.data.size());
  if (interpreter->Invoke() != Status::kOk) {
    ADD_FAILURE() << interpreter->error().message;
    return {};
  }
  if (!one_arena) {
    // Every arena tensor lies inside its own region's arena.
    for (size_t t = 0; t < model.tensor_count(); ++t) {
      if (model.is_constant(t)) continue;
      const uint32_t r = model.tensor_region(t);
      const TensorView view = interpreter->tensor(t);
      const auto* begin = static_cast<const uint8_t*>(bases[r]);
      EXPECT_TRUE(view.data >= begin && static_cast<const uint8_t*>(view.data) + view.bytes <= begin + sizes[r])
          << view.name;
    }
  }
  const TensorView out = interpreter->output(0);
  const auto* data = static_cast<const uint8_t*>(out.data);
  return std::vector<uint8_t>(data, data + out.bytes);
}

TEST(MemoryRegions, ParsesNamesAndSizes) {
  const std::vector<conv::MemoryRegion> r = conv::parse_memory_regions("fast=64K,slow=4M,dram=100");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].name, "fast");
  EXPECT_EQ(r[0].capacity, 64u * 1024);
  EXPECT_EQ(r[1].capacity, 4u * 1024 * 1024);
  EXPECT_EQ(r[2].name, "dram");
  EXPECT_EQ(r[2].capacity, 100u);
  for (const char* bad : {"fast", "fast=", "=4K", "fast=4G", "fast=0", "a=1,a=2", "1x=4", "fast=-1",
                          "a=1,b=1,c=1,d=1,e=1"}) {
    EXPECT_THROW(conv::parse_memory_regions(bad), conv::ConvertError) << bad;
  }
}

TEST(MemoryRegions, HottestBytesGoToTheFastRegion) {
  HotCold m = hot_cold();
  conv::RegionRequest request;
  request.regions = regions(128, 64 * 1024);
  const conv::ArenaPlan plan = conv::plan_arena(m.b.model, 16, request);
  ASSERT_EQ(plan.region_sizes.size(), 2u);
  EXPECT_LE(plan.region_sizes[0], 128u);
  EXPECT_GT(plan.region_sizes[0], 0u);
  EXPECT_EQ(plan.region[static_cast<size_t>(m.h)], 0);  // small and touched by the most work
  EXPECT_EQ(plan.region[static_cast<size_t>(m.x)], 1);  // 1 KiB cannot fit 128 B
  EXPECT_EQ(plan.arena_size, plan.region_sizes[0] + plan.region_sizes[1]);
  // Each region's plan alone is sound.
  for (uint8_t r = 0; r < 2; ++r) {
    std::vector<conv::BufferRequest> requests;
    conv::MemoryPlan placed;
    for (size_t v = 0; v < m.b.model.values.size(); ++v) {
      if (m.b.model.values[v].is_constant() || plan.region[v] != r) continue;
      requests.push_back({m.b.model.values[v].byte_size(), plan.live_first[v], plan.live_last[v]});
      placed.offsets.push_back(plan.offsets[v]);
    }
    placed.arena_size = plan.region_sizes[r];
    // Values of one alias group share an offset; there are none here.
    EXPECT_EQ(conv::check_plan(requests, placed, 16), "") << int{r};
  }
}

TEST(MemoryRegions, RunsAsTheOneArenaModelDoes) {
  HotCold m = hot_cold();
  conv::EmitStats stats;
  const std::vector<uint8_t> single = conv::plan_and_emit(m.b.model, "test");
  const std::vector<uint8_t> split = conv::plan_and_emit(m.b.model, "test", &stats, regions(128, 64 * 1024));
  std::unique_ptr<LoadedModel> one = load_model(single), two = load_model(split);
  ASSERT_EQ(one->status, Status::kOk) << one->model.error().message;
  ASSERT_EQ(two->status, Status::kOk) << two->model.error().message;
  EXPECT_EQ(one->model.region_count(), 1u);
  ASSERT_EQ(two->model.region_count(), 2u);
  EXPECT_EQ(two->model.persistent_region(), 1u);
  EXPECT_EQ(two->model.schema()->version(), 2u);
  EXPECT_EQ(one->model.schema()->version(), 1u);
  EXPECT_EQ(two->model.region_arena_size(0), stats.region_sizes[0]);
  EXPECT_GT(two->model.region_arena_size(1), stats.region_sizes[1]);  // + the prepared ops
  char name[8];
  two->model.region_name(1, name, sizeof name);
  EXPECT_STREQ(name, "slow");
  const HostTensor x = random_f32({1, 256}, 5);
  const std::vector<uint8_t> expected = run_regions(one->model, x, true);
  ASSERT_EQ(expected.size(), 64u);
  EXPECT_EQ(run_regions(two->model, x, false), expected);
  EXPECT_EQ(run_regions(two->model, x, true), expected);  // the regions back to back in one arena
}

TEST(MemoryRegions, OneRegionIsACapacityCheckOnly) {
  HotCold m = hot_cold();
  const std::vector<uint8_t> plain = conv::plan_and_emit(m.b.model, "test");
  EXPECT_EQ(conv::plan_and_emit(m.b.model, "test", nullptr, {conv::MemoryRegion{"sram", 1 << 20}}), plain);
  try {
    conv::plan_and_emit(m.b.model, "test", nullptr, {conv::MemoryRegion{"sram", 512}});
    ADD_FAILURE() << "a 512-byte region holds a 1 KiB input";
  } catch (const conv::ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("region 'sram' is 512 bytes but needs "), std::string::npos) << e.what();
  }
}

TEST(MemoryRegions, RefusesWithTheRegionsSizesAndTheShortfall) {
  HotCold m = hot_cold();
  try {
    conv::plan_and_emit(m.b.model, "test", nullptr, regions(128, 600));
    ADD_FAILURE() << "1 KiB of input fits neither region";
  } catch (const conv::ConvertError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("region 'slow' is 600 bytes but needs "), std::string::npos) << what;
    EXPECT_NE(what.find("bytes short"), std::string::npos) << what;
    EXPECT_NE(what.find("region 'fast' is 128 bytes"), std::string::npos) << what;
    // The shortfall is exactly what the region lacks.
    const size_t needs = what.find("needs ") + 6;
    const uint64_t need = std::stoull(what.substr(needs));
    const size_t paren = what.find("), ");
    ASSERT_NE(paren, std::string::npos) << what;
    EXPECT_EQ(std::stoull(what.substr(paren + 3)), need - 600) << what;
  }
}

TEST(MemoryRegions, InterpreterChecksEachArena) {
  HotCold m = hot_cold();
  std::unique_ptr<LoadedModel> l = load_model(conv::plan_and_emit(m.b.model, "test", nullptr, regions(128, 64 * 1024)));
  ASSERT_EQ(l->status, Status::kOk) << l->model.error().message;
  const size_t fast = static_cast<size_t>(l->model.region_arena_size(0));
  const size_t slow = static_cast<size_t>(l->model.region_arena_size(1));
  tools::AlignedBytes a = tools::aligned_bytes(fast + 16), b = tools::aligned_bytes(slow + 16);
  {
    void* arenas[] = {a.get()};
    size_t sizes[] = {fast};
    Interpreter interpreter(l->model, arenas, sizes, 1);
    EXPECT_EQ(interpreter.Init(), Status::kInvalidArgument);
  }
  {
    void* arenas[] = {a.get(), b.get()};
    size_t sizes[] = {fast - 16, slow};
    Interpreter interpreter(l->model, arenas, sizes, 2);
    EXPECT_EQ(interpreter.Init(), Status::kArenaTooSmall);
  }
  {
    void* arenas[] = {a.get(), b.get()};
    size_t sizes[] = {fast, slow - 1};
    Interpreter interpreter(l->model, arenas, sizes, 2);
    EXPECT_EQ(interpreter.Init(), Status::kArenaTooSmall);
  }
  {
    void* arenas[] = {a.get(), b.get() + 8};
    size_t sizes[] = {fast, slow};
    Interpreter interpreter(l->model, arenas, sizes, 2);
    EXPECT_EQ(interpreter.Init(), Status::kMisalignedArena);
  }
  {
    void* arenas[] = {a.get(), b.get()};
    size_t sizes[] = {fast, slow};
    Interpreter interpreter(l->model, arenas, sizes, 2);
    EXPECT_EQ(interpreter.Init(), Status::kOk) << interpreter.error().message;
  }
}

// Rewrites one emitted model (object API) and loads it.
Status load_edited(const std::vector<uint8_t>& bytes, const std::function<void(conv::schema::ModelT&)>& edit,
                   std::string* why) {
  std::unique_ptr<LoadedModel> l = load_model(edited_model(bytes.data(), edit));
  *why = l->model.error().message ? l->model.error().message : "";
  return l->status;
}

TEST(MemoryRegions, LoadChecksRegionsAndThePlanPerRegion) {
  HotCold m = hot_cold();
  const std::vector<uint8_t> bytes = conv::plan_and_emit(m.b.model, "test", nullptr, regions(128, 64 * 1024));
  std::string why;
  ASSERT_EQ(load_edited(bytes, [](conv::schema::ModelT&) {}, &why), Status::kOk) << why;
  const size_t h = static_cast<size_t>(m.h), x = static_cast<size_t>(m.x);
  EXPECT_EQ(load_edited(bytes, [&](conv::schema::ModelT& model) { model.tensors[h]->region = 2; }, &why),
            Status::kInvalidModel);
  EXPECT_EQ(why, "tensor's memory region does not exist");
  EXPECT_EQ(load_edited(bytes, [](conv::schema::ModelT& model) { model.persistent_region = 2; }, &why),
            Status::kInvalidModel);
  EXPECT_EQ(why, "model's memory regions are inconsistent");
  EXPECT_EQ(load_edited(bytes, [](conv::schema::ModelT& model) { model.region_sizes[1] += 16; }, &why),
            Status::kInvalidModel);
  // x (slow) and h (fast) are both live at the MATMUL; at one offset of
  // different regions they do not meet, in one region they do.
  EXPECT_EQ(load_edited(bytes,
                        [&](conv::schema::ModelT& model) {
                          model.tensors[x]->offset = model.tensors[h]->offset;
                          model.tensors[h]->region = 1;
                        },
                        &why),
            Status::kInvalidModel);
  EXPECT_EQ(why, "two simultaneously live tensors share arena bytes");
}

// The MNIST example for the host (XNNPACK where this build has it) and for
// the reference kernels: bit-identical outputs with the activations split.
TEST(MemoryRegions, MnistExampleSplitRunsBitExact) {
  for (const char* target : {"host", "reference"}) {
    conv::ConvertOptions options;
    const std::string dir = std::string(FLOE_SOURCE_DIR) + "/examples/mnist_mlp/model/";
    options.graph_path = dir + "mnist_mlp.meta";
    options.checkpoint_path = dir;
    options.outputs = {"softmax_linear/add"};
    options.input_shapes = {{"images", {1, 784}}};
    options.target = target;
    const conv::ConvertResult single = conv::convert(options);
    options.memory_regions = regions(1024, 1 << 20);
    const conv::ConvertResult split = conv::convert(options);
    EXPECT_NE(split.summary.find("memory regions: fast "), std::string::npos) << split.summary;
    std::unique_ptr<LoadedModel> one = load_model(single.model), two = load_model(split.model);
    ASSERT_EQ(two->status, Status::kOk) << two->model.error().message;
    ASSERT_EQ(two->model.region_count(), 2u);
    EXPECT_GT(two->model.region_arena_size(0), 0u) << target;
    EXPECT_LE(two->model.region_arena_size(0), 1024u) << target;
    const HostTensor x = random_f32({1, 784}, 7, 0.0f, 1.0f);
    const std::vector<uint8_t> expected = run_regions(one->model, x, true);
    ASSERT_EQ(expected.size(), 40u);
    EXPECT_EQ(run_regions(two->model, x, false), expected) << target;
  }
}

// int8 plans the same way: MLPerf Tiny's KWS (TFLM's model) split 8 KiB /
// 64 KiB loses no byte against its one arena and computes the same bytes.
TEST(MemoryRegions, KwsInt8SplitRunsBitExact) {
  const std::string graph = "int8/mlperf_tiny/kws/kws_ref_model.tflite";
  FLOE_REQUIRE_CORPUS(graph);
  conv::ConvertOptions options;
  options.graph_path = corpus_path(graph);
  options.target = "reference";
  const conv::ConvertResult single = conv::convert(options);
  options.memory_regions = regions(8 * 1024, 64 * 1024);
  const conv::ConvertResult split = conv::convert(options);
  std::unique_ptr<LoadedModel> one = load_model(single.model), two = load_model(split.model);
  ASSERT_EQ(two->status, Status::kOk) << two->model.error().message;
  ASSERT_EQ(split.stats.region_sizes.size(), 2u);
  EXPECT_LE(split.stats.region_sizes[0], 8u * 1024);
  EXPECT_EQ(split.stats.region_sizes[0] + split.stats.region_sizes[1], single.stats.arena_bytes) << split.summary;
  HostTensor x;
  x.dtype = DType::kInt8;
  const TensorView input = one->model.tensor(static_cast<size_t>(one->model.schema()->inputs()->Get(0)));
  x.shape.assign(input.shape.dims, input.shape.dims + input.shape.rank);
  x.data.resize(input.bytes);
  for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = static_cast<uint8_t>((i * 37 + 11) % 256);
  const std::vector<uint8_t> expected = run_regions(one->model, x, true);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(run_regions(two->model, x, false), expected);
}

}  // namespace
}  // namespace floe::testing
