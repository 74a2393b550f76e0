// SPDX-License-Identifier: Apache-2.0
// Partitioned variables: `emb/part_0`, `emb/part_1` are frozen from the full
// tensor the checkpoint reader reassembles from its OrderedCode slice entries,
// located through the Saver's RestoreV2 shape_and_slices or, without a Saver,
// through the MetaGraphDef's VariableDef.save_slice_info_def.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "converter/frontend/checkpoint/slice_key.h"
#include "converter/ir/tf_dtype.h"
#include "converter/passes/freeze.h"
#include "tests/converter/support/checkpoint_test_util.h"
#include "tests/converter/support/tf1_test_util.h"

namespace floe::testing {
namespace {

std::string float_bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// Checkpoint with "emb": float [4,3] = 0.5, 1.5, ... stored as rows [0,2) and [2,4).
std::string write_partitioned_checkpoint(const std::string& dir) {
  std::map<std::string, std::string> sorted{{"", single_shard_header()}};
  std::string data, full_entry;
  put_tag(full_entry, 1, 0);
  put_varint(full_entry, conv::kTfFloat);
  put_len_field(full_entry, 2, shape_proto({4, 3}));
  for (int part = 0; part < 2; ++part) {
    std::string extent0, slice;
    if (part == 1) {
      put_tag(extent0, 1, 0);
      put_varint(extent0, 2);
    }
    put_tag(extent0, 2, 0);
    put_varint(extent0, 2);
    put_len_field(slice, 1, extent0);
    put_len_field(slice, 1, "");
    put_len_field(full_entry, 7, slice);
    std::vector<float> values;
    for (int i = 0; i < 6; ++i) values.push_back(float(part * 6 + i) + 0.5f);
    const std::string bytes = float_bytes(values);
    sorted[conv::ckpt::encode_slice_key("emb", {{part * 2, 2}, {0, -1}})] =
        entry_proto(conv::kTfFloat, {2, 3}, 0, data.size(), bytes);
    data += bytes;
  }
  sorted["emb"] = full_entry;
  write_file_bytes(dir + "/p.index", build_table({sorted.begin(), sorted.end()}));
  write_file_bytes(dir + "/p.data-00000-of-00001", data);
  return dir + "/p";
}

std::string part_nodes() {
  std::string g;
  for (const char* part : {"emb/part_0", "emb/part_1"}) {
    g += "node { name: '" + std::string(part) +
         "' op: 'VariableV2' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' value { shape { "
         "dim { size: 2 } dim { size: 3 } } } } }\n" +
         unary(std::string(part) + "/read", "Identity", part);
  }
  g += "node { name: 'axis' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' "
       "value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
       "node { name: 'emb/concat' op: 'ConcatV2' input: 'emb/part_0/read' input: 'emb/part_1/read' input: "
       "'axis' attr { key: 'N' value { i: 2 } } attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'Tidx' "
       "value { type: DT_INT32 } } }\n";
  return g;
}

std::string string_const(const std::string& name, const std::vector<std::string>& values) {
  std::string vals;
  for (const auto& v : values) vals += " string_val: '" + v + "'";
  return "node { name: '" + name + "' op: 'Const' attr { key: 'dtype' value { type: DT_STRING } } attr { key: "
         "'value' value { tensor { dtype: DT_STRING tensor_shape { dim { size: " + std::to_string(values.size()) +
         " } }" + vals + " } } } }\n";
}

void expect_full_table(const ConvertOutcome& r) {
  ASSERT_TRUE(r.error.empty()) << r.error;
  const auto out = run_model(r.model, {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{4, 3}));
  std::vector<float> want;
  for (int i = 0; i < 12; ++i) want.push_back(float(i) + 0.5f);
  EXPECT_EQ(as_floats(out[0]), want);
}

TEST(FreezePartitioned, SaverSliceSpecsReassembleTheParts) {
  const std::string dir = make_temp_dir();
  const std::string prefix = write_partitioned_checkpoint(dir);
  const std::string graph =
      part_nodes() + string_const("save/Const", {"model"}) + string_const("save/RestoreV2/tensor_names", {"emb", "emb"}) +
      string_const("save/RestoreV2/shape_and_slices", {"4 3 0,2:0,3", "4 3 2,2:-"}) +
      "node { name: 'save/RestoreV2' op: 'RestoreV2' input: 'save/Const' input: 'save/RestoreV2/tensor_names' "
      "input: 'save/RestoreV2/shape_and_slices' attr { key: 'dtypes' value { list { type: DT_FLOAT type: "
      "DT_FLOAT } } } }\n"
      "node { name: 'save/Assign' op: 'Assign' input: 'emb/part_0' input: 'save/RestoreV2' }\n"
      "node { name: 'save/Assign_1' op: 'Assign' input: 'emb/part_1' input: 'save/RestoreV2:1' }\n";
  conv::ConvertOptions options = text_graph_options(graph, {"emb/concat"});
  options.checkpoint_path = prefix;
  const ConvertOutcome r = try_convert(options);
  expect_full_table(r);
  EXPECT_TRUE(contains(r.summary, "froze 2 variable(s)")) << r.summary;
}

TEST(FreezePartitioned, CollectionSliceInfoWorksWithoutASaver) {
  const std::string dir = make_temp_dir();
  const std::string prefix = write_partitioned_checkpoint(dir);
  tfproto::MetaGraphDef meta;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(part_nodes(), meta.mutable_graph_def()));
  auto* variables = meta.mutable_collection_def()->operator[]("variables").mutable_bytes_list();
  for (int part = 0; part < 2; ++part) {
    tfproto::VariableDef def;
    def.set_variable_name("emb/part_" + std::to_string(part) + ":0");
    auto* info = def.mutable_save_slice_info_def();
    info->set_full_name("emb");
    for (int64_t d : {4, 3}) info->add_full_shape(d);
    info->add_var_offset(part * 2);
    info->add_var_offset(0);
    info->add_var_shape(2);
    info->add_var_shape(3);
    variables->add_value(def.SerializeAsString());
  }
  const std::string meta_path = dir + "/m.meta";
  std::ofstream(meta_path, std::ios::binary) << meta.SerializeAsString();
  conv::ConvertOptions options;
  options.graph_path = meta_path;
  options.checkpoint_path = prefix;
  options.outputs = {"emb/concat"};
  expect_full_table(try_convert(options));
}

TEST(FreezePartitioned, ExtractSliceCutsAnyBox) {
  conv::HostTensor full;
  full.dtype = DType::kFloat32;
  full.shape = {3, 4};
  full.data.resize(12 * sizeof(float));
  for (int i = 0; i < 12; ++i) full.as<float>()[i] = float(i);
  const conv::HostTensor part = conv::extract_slice(full, "3 4 1,2:1,3", "test");
  EXPECT_EQ(part.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(as_floats(part), (std::vector<float>{5, 6, 7, 9, 10, 11}));
  const std::string error = convert_error_of([&] { conv::extract_slice(full, "3 5 0,1:-", "var 'w'"); });
  EXPECT_TRUE(contains(error, "var 'w': bad shape-and-slice '3 5 0,1:-'")) << error;
  EXPECT_TRUE(contains(convert_error_of([&] { conv::extract_slice(full, "3 4 2,2:-", "w"); }), "outside dim 0"));
}

}  // namespace
}  // namespace floe::testing
