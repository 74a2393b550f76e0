// SPDX-License-Identifier: Apache-2.0
// The compact structure check (runtime/core/verify_buffer.h) against the
// FlatBuffers-generated verifier it replaces, on the example models, the
// committed fuzz seeds and past fuzz findings: every single-byte change,
// every truncation and seeded multi-byte corruptions. Whenever ours accepts,
// flatbuffers::Verifier must accept too (so the generated accessors stay in
// bounds); the two are expected to agree exactly. A second test compares the
// descriptors with the schema itself (floe.bfbs from flatc), so a field
// appended to schemas/floe.fbs cannot go unverified.
#include "runtime/core/verify_buffer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "converter/pipeline/convert.h"
#include "flatbuffers/reflection_generated.h"
#include "runtime/tools/model_file.h"
#include "schemas/floe_generated.h"

namespace floe {
namespace {

namespace fs = std::filesystem;

bool flatbuffers_accepts(const uint8_t* data, size_t size) {
  // The settings Model::Load used with the generated verifier.
  flatbuffers::Verifier verifier(data, size, /*max_depth=*/16, kMaxVerifiedTables);
  return schema::VerifyModelBuffer(verifier);
}

struct NamedModel {
  std::string name;
  std::vector<uint8_t> bytes;
};

std::vector<NamedModel> models() {
  std::vector<NamedModel> out;
  const std::string examples = std::string(FLOE_SOURCE_DIR) + "/examples/";
  const struct {
    const char* name;
    const char* graph;
    const char* checkpoint;
    const char* output;
  } converted[] = {
      {"conv_seed", "conv_seed/model/conv_seed.meta", "conv_seed/model", "conv"},
      {"mnist_mlp", "mnist_mlp/model/mnist_mlp.meta", "mnist_mlp/model", "softmax_linear/add"},
  };
  for (const auto& c : converted) {
    conv::ConvertOptions options;
    options.graph_path = examples + c.graph;
    options.checkpoint_path = examples + c.checkpoint;
    options.outputs = {c.output};
    out.push_back({c.name, conv::convert(options).model});
  }
  for (const char* dir : {"/tests/fuzz/corpus/fuzz_model", "/tests/fuzz/regress/fuzz_model"}) {
    for (const auto& entry : fs::directory_iterator(std::string(FLOE_SOURCE_DIR) + dir)) {
      if (!entry.is_regular_file() || entry.path().filename().string()[0] == '.') continue;
      std::ifstream in(entry.path(), std::ios::binary);
      out.push_back({entry.path().filename().string(),
                     std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {})});
    }
  }
  return out;
}

struct Tally {
  size_t cases = 0, accepted = 0, ours_only = 0, flatbuffers_only = 0;
};

// Compares both verifiers on buffer[0, size) (16-byte aligned, as Load requires).
void compare(const uint8_t* buffer, size_t size, Tally* tally, const std::string& what) {
  // Model::Load checks the file identifier itself, then the structure.
  const bool ours =
      size >= 8 && schema::ModelBufferHasIdentifier(buffer) && verify_model_buffer(buffer, size);
  const bool theirs = flatbuffers_accepts(buffer, size);
  ++tally->cases;
  tally->accepted += ours;
  if (ours && !theirs) {
    if (++tally->ours_only <= 5) ADD_FAILURE() << what << ": accepted here, refused by FlatBuffers";
  }
  if (!ours && theirs) {
    if (++tally->flatbuffers_only <= 5)
      ADD_FAILURE() << what << ": refused here, FlatBuffers accepts";
  }
}

TEST(VerifyBuffer, AgreesWithFlatBuffersOnEveryCorruption) {
  const std::vector<NamedModel> all = models();
  ASSERT_GE(all.size(), 8u);
  for (const NamedModel& m : all) {
    SCOPED_TRACE(m.name);
    const size_t size = m.bytes.size();
    tools::AlignedBytes copy = tools::aligned_bytes(size);
    uint8_t* buf = copy.get();
    std::memcpy(buf, m.bytes.data(), size);
    Tally tally;
    compare(buf, size, &tally, m.name + " unchanged");
    // Every truncation.
    for (size_t n = 0; n < size; ++n)
      compare(buf, n, &tally, m.name + " cut at " + std::to_string(n));
    // Every byte position: four changes each (low bit, high bit, all bits, zero).
    for (size_t i = 0; i < size; ++i) {
      const uint8_t original = buf[i];
      for (const uint8_t value : {uint8_t(original ^ 0x01), uint8_t(original ^ 0x80),
                                  uint8_t(original ^ 0xFF), uint8_t(0)}) {
        if (value == original) continue;
        buf[i] = value;
        compare(buf, size, &tally, m.name + " byte " + std::to_string(i));
      }
      buf[i] = original;
    }
    // Offsets, lengths and vtable entries set to boundary values at every
    // 2-byte position of the structure (the constants, when large, hold no
    // structure: only the first and last 4 KB are visited).
    const uint32_t words[] = {0u,
                              1u,
                              2u,
                              3u,
                              4u,
                              0x7FFFu,
                              0x8000u,
                              0xFFFFu,
                              0x7FFFFFFFu,
                              0x80000000u,
                              0xFFFFFFFCu,
                              0xFFFFFFFFu,
                              static_cast<uint32_t>(size),
                              static_cast<uint32_t>(size - 4)};
    for (size_t i = 0; i + 4 <= size; i += 2) {
      if (i >= 4096 && i + 4096 < size) continue;
      uint8_t original[4];
      std::memcpy(original, buf + i, 4);
      for (const uint32_t w : words) {
        for (int k = 0; k < 4; ++k) buf[i + k] = static_cast<uint8_t>(w >> (8 * k));
        compare(buf, size, &tally, m.name + " word at " + std::to_string(i));
        buf[i] = static_cast<uint8_t>(w);  // 16-bit write (vtable entries)
        buf[i + 1] = static_cast<uint8_t>(w >> 8);
        std::memcpy(buf + i + 2, original + 2, 2);
        compare(buf, size, &tally, m.name + " short at " + std::to_string(i));
        std::memcpy(buf + i, original, 4);
      }
    }
    // Seeded multi-byte corruptions: 1-8 random bytes in the first 4 KB.
    std::mt19937 rng(12345);
    const size_t span = std::min<size_t>(size, 4096);
    for (int round = 0; round < 20000; ++round) {
      const int count = 1 + static_cast<int>(rng() % 8);
      size_t at[8];
      uint8_t saved[8];
      for (int k = 0; k < count; ++k) {
        at[k] = rng() % span;
        saved[k] = buf[at[k]];
        buf[at[k]] = static_cast<uint8_t>(rng());
      }
      compare(buf, size, &tally, m.name + " random round " + std::to_string(round));
      for (int k = count - 1; k >= 0; --k) buf[at[k]] = saved[k];
    }
    EXPECT_EQ(tally.ours_only, 0u);
    EXPECT_EQ(tally.flatbuffers_only, 0u);
    std::printf("%-28s %9zu cases, %8zu accepted\n", m.name.c_str(), tally.cases, tally.accepted);
  }
}

TEST(VerifyBuffer, RefusesWhatLoadMustNeverSee) {
  alignas(16) uint8_t small[16] = {};
  EXPECT_FALSE(verify_model_buffer(nullptr, 64));
  EXPECT_FALSE(verify_model_buffer(small, 0));
  EXPECT_FALSE(verify_model_buffer(small, sizeof(small)));  // root offset 0
}

// ---- descriptors vs the schema ---------------------------------------------

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

uint8_t scalar_code(reflection::BaseType t) {
  using reflection::BaseType;
  switch (t) {
    case BaseType::Bool:
    case BaseType::Byte:
    case BaseType::UByte:
      return verify_layout::kScalar | 1;
    case BaseType::Short:
    case BaseType::UShort:
      return verify_layout::kScalar | 2;
    case BaseType::Int:
    case BaseType::UInt:
    case BaseType::Float:
      return verify_layout::kScalar | 4;
    case BaseType::Long:
    case BaseType::ULong:
    case BaseType::Double:
      return verify_layout::kScalar | 8;
    default:
      return 0xFF;  // not a scalar
  }
}

TEST(VerifyBuffer, DescriptorsMatchTheSchema) {
  const std::vector<uint8_t> bfbs = read_bytes(FLOE_SCHEMA_BFBS);
  ASSERT_FALSE(bfbs.empty()) << FLOE_SCHEMA_BFBS;
  flatbuffers::Verifier verifier(bfbs.data(), bfbs.size());
  ASSERT_TRUE(reflection::VerifySchemaBuffer(verifier));
  const reflection::Schema* schema = reflection::GetSchema(bfbs.data());

  // Table ids: Model, Tensor, Operator, the OpOptions members in order, then
  // the tables reached through a single-table field.
  std::map<std::string, uint32_t> table_id = {{"floe.schema.Model", 0},
                                              {"floe.schema.Tensor", 1},
                                              {"floe.schema.Operator", 2},
                                              {"floe.schema.TensorQuantization", verify_layout::kFirstFieldTable},
                                              {"floe.schema.Requantization", verify_layout::kFirstFieldTable + 1}};
  const reflection::Enum* options = schema->enums()->LookupByKey("floe.schema.OpOptions");
  ASSERT_NE(options, nullptr);
  for (const reflection::EnumVal* v : *options->values()) {
    if (v->value() == 0) continue;  // NONE
    table_id[v->union_type()->index() >= 0
                 ? schema->objects()
                       ->Get(static_cast<uint32_t>(v->union_type()->index()))
                       ->name()
                       ->str()
                 : v->name()->str()] = static_cast<uint32_t>(2 + v->value());
  }
  EXPECT_EQ(table_id.size(), verify_layout::kTableCount);
  EXPECT_EQ(options->values()->size() - 1, verify_layout::kUnionMembers);

  uint32_t tables_seen = 0;
  for (const reflection::Object* object : *schema->objects()) {
    const std::string name = object->name()->str();
    ASSERT_FALSE(object->is_struct()) << name << ": structs need a descriptor kind";
    ASSERT_TRUE(table_id.count(name)) << name << " has no descriptor (verify_buffer.cc)";
    ++tables_seen;
    const uint8_t* codes;
    const uint32_t slots = verify_layout::table_slots(table_id[name], &codes);
    std::vector<uint8_t> expected(object->fields()->size(), 0xFF);
    for (const reflection::Field* field : *object->fields()) {
      const reflection::Type* type = field->type();
      uint8_t code = scalar_code(type->base_type());
      switch (type->base_type()) {
        case reflection::BaseType::UType:
          code = verify_layout::kUnionType;
          break;
        case reflection::BaseType::Union:
          code = verify_layout::kUnionValue;
          break;
        case reflection::BaseType::String:
          code = verify_layout::kString;
          break;
        case reflection::BaseType::Obj: {
          const std::string element =
              schema->objects()->Get(static_cast<uint32_t>(type->index()))->name()->str();
          const uint32_t id = table_id.at(element);
          if (id >= verify_layout::kFirstFieldTable) {
            code = static_cast<uint8_t>(verify_layout::kTable | (id - verify_layout::kFirstFieldTable));
          }
          break;
        }
        case reflection::BaseType::Vector:
          if (type->element() == reflection::BaseType::Obj) {
            const std::string element =
                schema->objects()->Get(static_cast<uint32_t>(type->index()))->name()->str();
            code = static_cast<uint8_t>(verify_layout::kTableVector | table_id.at(element));
          } else if (scalar_code(type->element()) != 0xFF) {
            code = static_cast<uint8_t>(verify_layout::kVector |
                                        (scalar_code(type->element()) & 0x0F));
          }
          break;
        default:
          break;
      }
      ASSERT_NE(code, 0xFF) << name << "." << field->name()->str()
                            << ": no descriptor kind for its type";
      ASSERT_LT(field->id(), expected.size());
      expected[field->id()] = code;
    }
    ASSERT_EQ(slots, expected.size()) << name << ": slot count";
    for (uint32_t i = 0; i < slots; ++i) {
      EXPECT_EQ(codes[i], expected[i]) << name << " slot " << i;
    }
  }
  EXPECT_EQ(tables_seen, verify_layout::kTableCount);
}

}  // namespace
}  // namespace floe
