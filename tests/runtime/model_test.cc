// SPDX-License-Identifier: Apache-2.0
// Model::Load is the trust boundary: malformed models get a status, never a
// crash; the interpreter checks the caller's arena and stays inside it.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "runtime/core/registry.h"
#include "runtime/core/interpreter.h"
#include "runtime/tools/model_file.h"
#include "schemas/floe_generated.h"

namespace floe {
namespace {

struct TensorSpec {
  std::vector<int32_t> shape;
  bool constant = false;
  uint64_t offset = 0;
  int64_t size = -1;  // -1: derived from the shape
  int32_t live_first = -1, live_last = -1;  // -1: the whole run
};

// A tiny model y = relu(x) + c, built by hand so each test can break one field.
struct ModelSpec {
  uint32_t version = 1;
  std::vector<TensorSpec> tensors = {{{4}, false, 0}, {{4}, false, 16}, {{4}, true, 0}, {{4}, false, 32}};
  schema::OpCode first_op = schema::OpCode::RELU;
  std::vector<int32_t> relu_inputs = {0};
  std::vector<int32_t> first_op_outputs = {1};
  std::vector<int32_t> inputs = {0}, outputs = {3};
  uint64_t arena_size = 48;
  schema::DType input_source_dtype = schema::DType::INVALID;  // Tensor.source_dtype of tensor 0
  bool input_complex = false;                                 // Tensor.complex of tensor 0
};

std::vector<uint8_t> build(const ModelSpec& spec) {
  flatbuffers::FlatBufferBuilder b;
  const float c[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  std::vector<uint8_t> constants(16);
  std::memcpy(constants.data(), c, 16);
  b.ForceVectorAlignment(constants.size(), 1, 16);
  auto constants_fb = b.CreateVector(constants);
  std::vector<flatbuffers::Offset<schema::Tensor>> tensors;
  const char* names[] = {"x:0", "r:0", "c:0", "y:0"};
  for (size_t i = 0; i < spec.tensors.size(); ++i) {
    const TensorSpec& t = spec.tensors[i];
    int64_t size = 4;  // wraps for the deliberately overflowing shapes (the test wants a mismatch)
    for (int32_t d : t.shape) size = static_cast<int64_t>(static_cast<uint64_t>(size) * static_cast<uint64_t>(d));
    tensors.push_back(schema::CreateTensor(b, b.CreateString(names[i % 4]), schema::DType::FLOAT32,
                                           b.CreateVector(t.shape), t.constant, t.offset,
                                           static_cast<uint64_t>(t.size >= 0 ? t.size : size), t.live_first, t.live_last,
                                           /*quantization=*/0, /*region=*/0, i == 0 ? spec.input_source_dtype : schema::DType::INVALID,
                                           i == 0 && spec.input_complex));
  }
  std::vector<flatbuffers::Offset<schema::Operator>> ops = {
      schema::CreateOperator(b, spec.first_op, b.CreateVector(spec.relu_inputs),
                             b.CreateVector(spec.first_op_outputs)),
      schema::CreateOperator(b, schema::OpCode::ADD, b.CreateVector(std::vector<int32_t>{1, 2}),
                             b.CreateVector(std::vector<int32_t>{3}))};
  // The prepared ops' region as the converter sizes it (runtime/core/registry.h).
  uint64_t persistent[2];
  for (int wide = 0; wide < 2; ++wide) {
    PersistentLayout layout(wide ? 8 : 4, 2);
    layout.add_op(spec.relu_inputs.size() + spec.first_op_outputs.size(), op_params_bytes(spec.first_op));
    layout.add_op(3, op_params_bytes(schema::OpCode::ADD));
    persistent[wide] = layout.total;
  }
  auto model = schema::CreateModel(b, spec.version, b.CreateVector(tensors), b.CreateVector(ops),
                                   b.CreateVector(spec.inputs), b.CreateVector(spec.outputs),
                                   spec.arena_size, constants_fb, b.CreateString("test"),
                                   /*payload_crc32c=*/0, /*target=*/0, /*xnnpack_arena_size=*/0,
                                   persistent[0], persistent[1]);
  schema::FinishModelBuffer(b, model);
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

struct Loaded {
  tools::AlignedBytes buffer;
  Model model;
  Status status;
};

Loaded load(const std::vector<uint8_t>& bytes, size_t offset = 0) {
  Loaded l{tools::aligned_bytes(bytes.size() + 16), Model(), Status::kOk};
  if (!bytes.empty()) std::memcpy(l.buffer.get() + offset, bytes.data(), bytes.size());
  l.status = l.model.Load(l.buffer.get() + offset, bytes.size());
  return l;
}

// RESHAPE's kernel copies with memcpy: the plan check lets its output share
// its input's bytes only exactly (the converter's zero-copy alias, where the
// input dies at the reshape), never in part.
TEST(Model, ReshapeOutputMayAliasItsInputExactlyButNotInPart) {
  for (const uint64_t offset : {uint64_t{0}, uint64_t{4}}) {
    ModelSpec spec;
    spec.first_op = schema::OpCode::RESHAPE;
    spec.tensors = {{{4}, false, 0, -1, 0, 0}, {{4}, false, offset, -1, 0, 1}, {{4}, true, 0},
                    {{4}, false, 32, -1, 1, 2}};
    Loaded l = load(build(spec));
    if (offset == 0) {
      EXPECT_EQ(l.status, Status::kOk) << l.model.error().message;
    } else {
      EXPECT_EQ(l.status, Status::kInvalidModel);
      EXPECT_STREQ(l.model.error().message, "two simultaneously live tensors share arena bytes");
    }
  }
}

// An input's source dtype (the TF graph's, e.g. float64 computed in float32)
// is read back as written; one outside the DType enum is refused at Load.
TEST(Model, InputSourceDtypeIsValidated) {
  ModelSpec spec;
  spec.input_source_dtype = schema::DType::FLOAT64;
  Loaded ok = load(build(spec));
  ASSERT_EQ(ok.status, Status::kOk) << ok.model.error().message;
  EXPECT_EQ(ok.model.schema()->tensors()->Get(0)->source_dtype(), schema::DType::FLOAT64);
  spec.input_source_dtype = static_cast<schema::DType>(200);
  Loaded bad = load(build(spec));
  EXPECT_EQ(bad.status, Status::kInvalidModel);
  EXPECT_STREQ(bad.model.error().message, "tensor has an invalid source dtype");
}

// A complex input is float32 pairs in a last dim of 2 (source dtype absent,
// or float64 for complex128); the view says so. Anything else is refused.
TEST(Model, ComplexTensorsAreFloat32PairsInTheLastDim) {
  ModelSpec spec;
  spec.tensors = {{{2, 2}, false, 0}, {{2, 2}, false, 16}, {{2, 2}, true, 0}, {{2, 2}, false, 32}};
  spec.input_complex = true;
  Loaded ok = load(build(spec));
  ASSERT_EQ(ok.status, Status::kOk) << ok.model.error().message;
  EXPECT_TRUE(ok.model.tensor(0).complex);
  EXPECT_FALSE(ok.model.tensor(3).complex);
  spec.input_source_dtype = schema::DType::FLOAT64;  // complex128 in the graph
  Loaded wide = load(build(spec));
  EXPECT_EQ(wide.status, Status::kOk) << wide.model.error().message;
  spec.input_source_dtype = schema::DType::INT32;
  Loaded int_source = load(build(spec));
  EXPECT_EQ(int_source.status, Status::kInvalidModel);
  EXPECT_STREQ(int_source.model.error().message, "complex tensor is not float32 pairs in a last dim of 2");
  spec.input_source_dtype = schema::DType::INVALID;
  spec.tensors = ModelSpec().tensors;  // [4]: no pair dim
  Loaded unpaired = load(build(spec));
  EXPECT_EQ(unpaired.status, Status::kInvalidModel);
  EXPECT_STREQ(unpaired.model.error().message, "complex tensor is not float32 pairs in a last dim of 2");
}

TEST(Model, ValidModelRuns) {
  Loaded l = load(build(ModelSpec()));
  ASSERT_EQ(l.status, Status::kOk) << l.model.error().message;
  const size_t size = static_cast<size_t>(l.model.arena_size());
  // 48 bytes of activations, then the prepared ops of RELU and ADD.
  EXPECT_EQ(l.model.persistent_offset(), 48u);
  EXPECT_EQ(size, 48 + l.model.persistent_size());
  alignas(16) uint8_t arena[512];
  ASSERT_LE(size + 64, sizeof(arena));
  std::memset(arena, 0xA5, sizeof(arena));  // canary past the planned size
  Interpreter interp(l.model, arena, size);
  ASSERT_EQ(interp.Init(), Status::kOk);
  EXPECT_EQ(interp.arena_used(), size);
  const float x[4] = {-1.0f, 0.5f, -2.0f, 3.0f};
  std::memcpy(interp.input(0).data, x, sizeof(x));
  ASSERT_EQ(interp.Invoke(), Status::kOk);
  const float* y = interp.output(0).as<float>();
  EXPECT_FLOAT_EQ(y[0], 1.0f);
  EXPECT_FLOAT_EQ(y[1], 2.5f);
  EXPECT_FLOAT_EQ(y[2], 3.0f);
  EXPECT_FLOAT_EQ(y[3], 7.0f);
  for (size_t i = size; i < sizeof(arena); ++i) ASSERT_EQ(arena[i], 0xA5) << "wrote past the arena at " << i;
  EXPECT_EQ(interp.input_index("x"), 0);
  EXPECT_EQ(interp.input_index("x:0"), 0);
  EXPECT_EQ(interp.input_index("x:1"), -1);
  EXPECT_EQ(interp.output_index("y"), 0);
  EXPECT_EQ(interp.output_index("nope"), -1);
}

TEST(Model, RejectsBadBuffers) {
  const std::vector<uint8_t> good = build(ModelSpec());
  EXPECT_EQ(load({}).status, Status::kInvalidModel);
  EXPECT_EQ(load(std::vector<uint8_t>(good.begin(), good.begin() + 4)).status, Status::kInvalidModel);
  // Misaligned base address.
  EXPECT_EQ(load(good, 4).status, Status::kMisalignedModel);
  // Wrong file identifier.
  std::vector<uint8_t> bad_id = good;
  bad_id[4] = 'X';
  EXPECT_EQ(load(bad_id).status, Status::kInvalidModel);
  // Every truncation is caught by the verifier.
  for (size_t n = 8; n < good.size(); n += 7) {
    EXPECT_NE(load(std::vector<uint8_t>(good.begin(), good.begin() + n)).status, Status::kOk) << n;
  }
}

TEST(Model, RejectsBadSemantics) {
  auto status_of = [](const std::function<void(ModelSpec&)>& mutate) {
    ModelSpec spec;
    mutate(spec);
    return load(build(spec)).status;
  };
  EXPECT_EQ(status_of([](ModelSpec& s) { s.version = 99; }), Status::kUnsupportedVersion);
  EXPECT_EQ(status_of([](ModelSpec& s) { s.tensors[1].offset = 48; }), Status::kInvalidModel);
  EXPECT_EQ(status_of([](ModelSpec& s) { s.tensors[3].offset = 34; }), Status::kInvalidModel);  // not a word
  // A word-aligned activation offset off the 16-byte grid is valid: the
  // converter packs graphs of a few scalars in 4-byte slots.
  EXPECT_EQ(status_of([](ModelSpec& s) {
              s.tensors[3].offset = 36;
              s.arena_size = 52;
            }),
            Status::kOk);
  EXPECT_EQ(status_of([](ModelSpec& s) { s.tensors[2].offset = 16; }), Status::kInvalidModel);  // past constants
  EXPECT_EQ(status_of([](ModelSpec& s) { s.tensors[0].size = 12; }), Status::kInvalidModel);
  EXPECT_EQ(status_of([](ModelSpec& s) { s.tensors[0].shape = {-4}; }), Status::kInvalidModel);
  EXPECT_EQ(status_of([](ModelSpec& s) { s.tensors[0].shape = {1 << 30, 1 << 30, 16}; }),
            Status::kInvalidModel);  // overflowing byte size
  EXPECT_EQ(status_of([](ModelSpec& s) { s.relu_inputs = {7}; }), Status::kInvalidModel);
  EXPECT_EQ(status_of([](ModelSpec& s) { s.outputs = {-1}; }), Status::kInvalidModel);
  EXPECT_EQ(status_of([](ModelSpec& s) { s.inputs = {2}; }), Status::kInvalidModel);  // constant input
  EXPECT_EQ(status_of([](ModelSpec& s) { s.first_op = static_cast<schema::OpCode>(999); }),
            Status::kUnsupportedOp);
  // Options of the wrong type for the opcode.
  EXPECT_EQ(status_of([](ModelSpec& s) { s.first_op = schema::OpCode::CONV2D; }), Status::kInvalidModel);
}

TEST(Interpreter, ChecksTheArenaAndOpShapes) {
  Loaded l = load(build(ModelSpec()));
  ASSERT_EQ(l.status, Status::kOk);
  const size_t size = static_cast<size_t>(l.model.arena_size());
  alignas(16) uint8_t arena[512];
  ASSERT_LE(size + 16, sizeof(arena));
  Interpreter small(l.model, arena, size - 1);
  EXPECT_EQ(small.Init(), Status::kArenaTooSmall);
  Interpreter misaligned(l.model, arena + 4, size);
  EXPECT_EQ(misaligned.Init(), Status::kMisalignedArena);
  Interpreter not_init(l.model, arena, size);
  EXPECT_EQ(not_init.Invoke(), Status::kNotInitialized);

  // Relu whose output shape differs from its input: rejected at Init, not run.
  ModelSpec spec;
  spec.tensors[1].shape = {2};
  Loaded bad = load(build(spec));
  ASSERT_EQ(bad.status, Status::kOk);
  Interpreter interp(bad.model, arena, static_cast<size_t>(bad.model.arena_size()));
  EXPECT_EQ(interp.Init(), Status::kInvalidModel);
  EXPECT_EQ(interp.error().op, 0);
}

// Every op of the op list with no outputs (and one or three inputs) is
// refused at Load or Init with a status: no prepare may read an operand the op
// does not have (e.g. a SCATTER_ND_ADD's output 0 before checking it exists).
TEST(Interpreter, EveryOpWithoutOutputsIsRefusedCleanly) {
  alignas(16) uint8_t arena[512];
  int initialized = 0;
  for (int c = 0; c <= static_cast<int>(schema::OpCode::MAX); ++c) {
    for (const std::vector<int32_t>& inputs : {std::vector<int32_t>{0}, std::vector<int32_t>{0, 2, 0}}) {
      ModelSpec spec;
      spec.first_op = static_cast<schema::OpCode>(c);
      spec.relu_inputs = inputs;
      spec.first_op_outputs = {};
      Loaded l = load(build(spec));
      if (l.status != Status::kOk) continue;
      Interpreter interpreter(l.model, arena, static_cast<size_t>(l.model.arena_size()));
      EXPECT_NE(interpreter.Init(), Status::kOk) << schema::EnumNameOpCode(spec.first_op);
      ++initialized;
    }
  }
  EXPECT_GT(initialized, 50);  // most ops take no options and reach their prepare
}

// The contract the test above relies on, checked without a sanitizer: an
// operand index past the op's operands is an empty view, never a tensor read
// from beyond the op's operand vector.
TEST(OpContext, OperandsPastTheOpsOwnAreEmptyViews) {
  ModelSpec spec;
  spec.first_op_outputs = {};
  Loaded l = load(build(spec));
  ASSERT_EQ(l.status, Status::kOk);
  alignas(16) uint8_t arena[512];
  uint8_t* const arenas[] = {arena};
  const schema::Operator* op = l.model.schema()->operators()->Get(0);
  std::vector<TensorView> operands;
  for (const int32_t t : *op->inputs()) operands.push_back(bind_tensor(l.model, arenas, t));
  PreparedOp record{};
  record.operands = operands.data();
  record.inputs = static_cast<uint16_t>(operands.size());
  record.outputs = 0;
  const OpContext context{op, &record, l.model.schema()->tensors()};
  ASSERT_EQ(context.output_count(), 0);
  for (int i : {0, 1, 7}) {
    EXPECT_EQ(context.output(i).data, nullptr) << "output " << i;
    EXPECT_EQ(context.input(context.input_count() + i).data, nullptr) << "input past the last, +" << i;
  }
  EXPECT_EQ(context.output(-1).data, nullptr);
  EXPECT_EQ(context.input(-1).data, nullptr);
  EXPECT_FALSE(context.has_input(-1));
  EXPECT_NE(context.input(0).data, nullptr);
}

// status_name walks a packed string table (runtime/core/status.cc): each code
// keeps its own name.
TEST(StatusName, EveryCodeHasItsName) {
  EXPECT_STREQ(status_name(Status::kOk), "ok");
  EXPECT_STREQ(status_name(Status::kInvalidModel), "invalid model");
  EXPECT_STREQ(status_name(Status::kUnsupportedVersion), "unsupported model version");
  EXPECT_STREQ(status_name(Status::kUnsupportedOp), "unsupported op");
  EXPECT_STREQ(status_name(Status::kMisalignedModel), "model buffer not 16-byte aligned");
  EXPECT_STREQ(status_name(Status::kChecksumMismatch), "model checksum mismatch");
  EXPECT_STREQ(status_name(Status::kArenaTooSmall), "arena too small");
  EXPECT_STREQ(status_name(Status::kMisalignedArena), "arena not 16-byte aligned");
  EXPECT_STREQ(status_name(Status::kInvalidArgument), "invalid argument");
  EXPECT_STREQ(status_name(Status::kNotFound), "not found");
  EXPECT_STREQ(status_name(Status::kNotInitialized), "not initialized");
  EXPECT_STREQ(status_name(Status::kKernelError), "kernel error");
  EXPECT_STREQ(status_name(Status::kIndexOutOfRange), "index out of range");
  EXPECT_STREQ(status_name(static_cast<Status>(99)), "unknown status");
}

}  // namespace
}  // namespace floe
