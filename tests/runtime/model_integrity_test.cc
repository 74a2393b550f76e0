// SPDX-License-Identifier: Apache-2.0
// Load-time integrity checks: the CRC32C primitive, the model
// checksum option, and the memory-plan proof (verify_plan.h) on hand-built
// models whose arena tensors share bytes soundly or unsoundly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/core/registry.h"
#include "runtime/core/model.h"
#include "schemas/contract/checksum.h"
#include "runtime/tools/model_file.h"
#include "schemas/floe_generated.h"

namespace floe {
namespace {

TEST(Crc32c, KnownAnswers) {
  EXPECT_EQ(crc32c("", 0), 0u);
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);  // the CRC-32C check value
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xFF);
  EXPECT_EQ(crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);  // RFC 3720 B.4
  EXPECT_EQ(crc32c(ones.data(), ones.size()), 0x62A8AB43u);
  // Extending equals hashing the concatenation.
  EXPECT_EQ(crc32c_extend(crc32c("1234", 4), "56789", 5), 0xE3069283u);
}

struct T {
  uint64_t offset;
  int32_t first = -1, last = -1;  // lifetime; -1 = absent
  int32_t elements = 4;           // float32 [elements]
};

// x -> relu -> r -> relu -> y: three arena tensors of 16 bytes, two ops.
std::vector<uint8_t> chain(const T& x, const T& r, const T& y, bool with_checksum = false,
                           uint64_t arena = 48) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<schema::Tensor>> tensors;
  const char* names[] = {"x:0", "r:0", "y:0"};
  const T specs[] = {x, r, y};
  for (int i = 0; i < 3; ++i) {
    tensors.push_back(schema::CreateTensor(b, b.CreateString(names[i]), schema::DType::FLOAT32,
                                           b.CreateVector(std::vector<int32_t>{specs[i].elements}),
                                           false, specs[i].offset, 4u * specs[i].elements,
                                           specs[i].first, specs[i].last));
  }
  std::vector<flatbuffers::Offset<schema::Operator>> ops = {
      schema::CreateOperator(b, schema::OpCode::RELU, b.CreateVector(std::vector<int32_t>{0}),
                             b.CreateVector(std::vector<int32_t>{1})),
      schema::CreateOperator(b, schema::OpCode::RELU, b.CreateVector(std::vector<int32_t>{1}),
                             b.CreateVector(std::vector<int32_t>{2}))};
  // Two RELUs of one input and one output each (runtime/core/registry.h).
  PersistentLayout narrow(4, 2), wide(8, 2);
  for (PersistentLayout* layout : {&narrow, &wide}) {
    for (int i = 0; i < 2; ++i) layout->add_op(2, op_params_bytes(schema::OpCode::RELU));
  }
  auto model = schema::CreateModel(b, 1, b.CreateVector(tensors), b.CreateVector(ops),
                                   b.CreateVector(std::vector<int32_t>{0}),
                                   b.CreateVector(std::vector<int32_t>{2}), arena, 0,
                                   b.CreateString("test"), with_checksum ? 0xFFFFFFFFu : 0u,
                                   /*target=*/0, /*xnnpack_arena_size=*/0, narrow.total, wide.total);
  schema::FinishModelBuffer(b, model);
  std::vector<uint8_t> bytes(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  if (with_checksum) {
    tools::AlignedBytes copy = tools::aligned_bytes(bytes.size());
    std::memcpy(copy.get(), bytes.data(), bytes.size());
    size_t field = 0;
    EXPECT_TRUE(find_model_checksum_field(copy.get(), &field));
    const uint32_t crc = compute_model_checksum(copy.get(), bytes.size(), field);
    for (int i = 0; i < 4; ++i) bytes[field + i] = static_cast<uint8_t>(crc >> (8 * i));
  }
  return bytes;
}

struct Result {
  Status status;
  std::string message;
};

Result load(const std::vector<uint8_t>& bytes, bool verify = false) {
  tools::AlignedBytes buffer = tools::aligned_bytes(bytes.size());
  std::memcpy(buffer.get(), bytes.data(), bytes.size());
  Model model;
  LoadOptions options;
  options.verify_checksum = verify;
  const Status s = model.Load(buffer.get(), bytes.size(), options);
  return {s, model.error().message};
}

TEST(MemoryPlan, SoundReuseIsAccepted) {
  // x [0,0] and y [1,2] share offset 0; r [0,1] lives apart at 16.
  EXPECT_EQ(load(chain({0, 0, 0}, {16, 0, 1}, {0, 1, 2}, false, 32)).status, Status::kOk);
  // Without lifetimes every tensor is live throughout: disjoint bytes are fine.
  EXPECT_EQ(load(chain({0}, {16}, {32})).status, Status::kOk);
}

TEST(MemoryPlan, EmptyTensorsOwnNoBytes) {
  // r has no elements; its offset points inside x, which is live at the same
  // time: no byte is shared, so the plan is sound.
  EXPECT_EQ(load(chain({0, 0, 0, 8}, {16, 0, 1, 0}, {32, 1, 2})).status, Status::kOk);
  // The same offset with one element does overlap.
  EXPECT_EQ(load(chain({0, 0, 0, 8}, {16, 0, 1, 1}, {32, 1, 2})).status, Status::kInvalidModel);
}

TEST(MemoryPlan, OverlapOfLiveTensorsIsRejected) {
  // r is written by op 0 while x is read by it: they may not share bytes.
  const Result overlap = load(chain({0, 0, 0}, {0, 0, 1}, {16, 1, 2}, false, 32));
  EXPECT_EQ(overlap.status, Status::kInvalidModel);
  EXPECT_NE(overlap.message.find("share arena bytes"), std::string::npos) << overlap.message;
  // Absent lifetimes mean "live throughout": then no two tensors may share bytes.
  EXPECT_EQ(load(chain({0}, {16}, {16})).status, Status::kInvalidModel);
}

TEST(MemoryPlan, LifetimesMustCoverEveryUse) {
  // r claims to die at op 0, but op 1 reads it; that lie would let y reuse r's bytes.
  const Result lie = load(chain({0, 0, 0}, {16, 0, 0}, {16, 1, 2}, false, 32));
  EXPECT_EQ(lie.status, Status::kInvalidModel);
  EXPECT_NE(lie.message.find("outside its lifetime"), std::string::npos) << lie.message;
  // A graph input must be live from op 0, an output until the end.
  EXPECT_EQ(load(chain({0, 1, 1}, {16, 0, 1}, {32, 1, 2})).status, Status::kInvalidModel);
  EXPECT_EQ(load(chain({0, 0, 0}, {16, 0, 1}, {32, 1, 1})).status, Status::kInvalidModel);
  // Out-of-range or inverted lifetimes.
  EXPECT_EQ(load(chain({0, 0, 0}, {16, 0, 9}, {32, 1, 2})).status, Status::kInvalidModel);
  EXPECT_EQ(load(chain({0, 0, 0}, {16, 1, 0}, {32, 1, 2})).status, Status::kInvalidModel);
}

TEST(Checksum, VerifiedOnlyWhenAsked) {
  const std::vector<uint8_t> sealed = chain({0}, {16}, {32}, true);
  EXPECT_EQ(load(sealed, true).status, Status::kOk);
  // No field at all: refused when verification is requested, fine otherwise.
  const std::vector<uint8_t> unsealed = chain({0}, {16}, {32}, false);
  EXPECT_EQ(load(unsealed, true).status, Status::kChecksumMismatch);
  EXPECT_EQ(load(unsealed, false).status, Status::kOk);
  // The producer string is not checked by validation, only by the checksum.
  std::vector<uint8_t> renamed = sealed;
  const auto at = std::search(renamed.begin(), renamed.end(), std::begin("test"), std::end("test") - 1);
  ASSERT_NE(at, renamed.end());
  *at = 'b';
  EXPECT_EQ(load(renamed, false).status, Status::kOk);
  EXPECT_EQ(load(renamed, true).status, Status::kChecksumMismatch);
}

}  // namespace
}  // namespace floe
