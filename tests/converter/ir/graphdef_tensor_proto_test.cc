// SPDX-License-Identifier: Apache-2.0
// TensorProto -> HostTensor rules (tf-formats §3) on hand-built protos: the
// "repeat the last value" fill, tensor_content precedence, half/bfloat16 bit
// patterns, narrow ints from int_val, bool, scalars without a shape, N == 0,
// and precise errors for what floe cannot hold.
#include <gtest/gtest.h>

#include <cstring>

#include "converter/ir/tf_dtype.h"
#include "converter/ir/tensor_proto.h"
#include "converter/ir/error.h"

namespace floe::conv {
namespace {

namespace tfp = floe::tfproto;

tfp::TensorProto make_proto(tfp::DataType dtype, std::vector<int64_t> dims) {
  tfp::TensorProto proto;
  proto.set_dtype(dtype);
  for (int64_t d : dims) proto.mutable_tensor_shape()->add_dim()->set_size(d);
  return proto;
}

template <typename T>
std::vector<T> values(const HostTensor& t) {
  std::vector<T> out(static_cast<size_t>(t.num_elements()));
  EXPECT_EQ(t.data.size(), out.size() * sizeof(T));
  std::memcpy(out.data(), t.data.data(), t.data.size());
  return out;
}

TEST(TensorProto, FewerValuesThanElementsRepeatTheLastValue) {
  // Grappler-compressed constant: 3 values for 6 elements.
  tfp::TensorProto proto = make_proto(tfp::DT_FLOAT, {2, 3});
  for (float v : {1.5f, -2.0f, 7.25f}) proto.add_float_val(v);
  const HostTensor t = tensor_from_proto(proto, "test");
  EXPECT_EQ(t.dtype, DType::kFloat32);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(t), (std::vector<float>{1.5f, -2.0f, 7.25f, 7.25f, 7.25f, 7.25f}));
}

TEST(TensorProto, SingleValueBroadcastsAndNoValueMeansZeros) {
  tfp::TensorProto one = make_proto(tfp::DT_INT32, {4});
  one.add_int_val(9);
  EXPECT_EQ(values<int32_t>(tensor_from_proto(one, "test")), (std::vector<int32_t>{9, 9, 9, 9}));

  const tfp::TensorProto none = make_proto(tfp::DT_DOUBLE, {3});
  EXPECT_EQ(values<double>(tensor_from_proto(none, "test")), (std::vector<double>{0, 0, 0}));
}

TEST(TensorProto, MoreValuesThanElementsTakesTheFirst) {
  tfp::TensorProto proto = make_proto(tfp::DT_INT64, {2});
  for (int64_t v : {int64_t{1} << 40, int64_t{-3}, int64_t{5}}) proto.add_int64_val(v);
  EXPECT_EQ(values<int64_t>(tensor_from_proto(proto, "test")),
            (std::vector<int64_t>{int64_t{1} << 40, -3}));
}

TEST(TensorProto, TensorContentWinsOverTypedValues) {
  tfp::TensorProto proto = make_proto(tfp::DT_FLOAT, {2});
  const float raw[2] = {1.0f, 2.0f};
  proto.set_tensor_content(std::string(reinterpret_cast<const char*>(raw), sizeof(raw)));
  proto.add_float_val(99.0f);  // must be ignored
  EXPECT_EQ(values<float>(tensor_from_proto(proto, "test")), (std::vector<float>{1.0f, 2.0f}));
}

TEST(TensorProto, TensorContentOfTheWrongSizeIsAnError) {
  tfp::TensorProto proto = make_proto(tfp::DT_FLOAT, {3});
  proto.set_tensor_content(std::string(8, '\0'));
  try {
    tensor_from_proto(proto, "node 'w' attr 'value'");
    FAIL() << "expected ConvertError";
  } catch (const ConvertError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'w' attr 'value'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("8 bytes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("needs 12"), std::string::npos) << e.what();
  }
}

TEST(TensorProto, HalfAndBfloat16AreBitPatterns) {
  tfp::TensorProto half = make_proto(tfp::DT_HALF, {3});
  for (int v : {0x3C00, 0xC000, 0x7BFF}) half.add_half_val(v);  // 1.0, -2.0, 65504
  EXPECT_EQ(values<uint16_t>(tensor_from_proto(half, "test")),
            (std::vector<uint16_t>{0x3C00, 0xC000, 0x7BFF}));
  EXPECT_EQ(tensor_from_proto(half, "test").dtype, DType::kFloat16);

  tfp::TensorProto bf16 = make_proto(tfp::DT_BFLOAT16, {2});
  bf16.add_half_val(0x3F80);  // 1.0, repeated
  EXPECT_EQ(values<uint16_t>(tensor_from_proto(bf16, "test")), (std::vector<uint16_t>{0x3F80, 0x3F80}));

  // Very old writers stored bfloat16 patterns in int_val.
  tfp::TensorProto old_bf16 = make_proto(tfp::DT_BFLOAT16, {1});
  old_bf16.add_int_val(0xC040);
  EXPECT_EQ(values<uint16_t>(tensor_from_proto(old_bf16, "test")), (std::vector<uint16_t>{0xC040}));
}

TEST(TensorProto, NarrowIntegersComeFromIntVal) {
  tfp::TensorProto i8 = make_proto(tfp::DT_INT8, {3});
  for (int v : {-128, -1, 127}) i8.add_int_val(v);
  EXPECT_EQ(values<int8_t>(tensor_from_proto(i8, "test")), (std::vector<int8_t>{-128, -1, 127}));

  tfp::TensorProto u8 = make_proto(tfp::DT_UINT8, {2});
  for (int v : {0, 255}) u8.add_int_val(v);
  EXPECT_EQ(values<uint8_t>(tensor_from_proto(u8, "test")), (std::vector<uint8_t>{0, 255}));

  tfp::TensorProto i16 = make_proto(tfp::DT_INT16, {2});
  for (int v : {-32768, 1234}) i16.add_int_val(v);
  EXPECT_EQ(values<int16_t>(tensor_from_proto(i16, "test")), (std::vector<int16_t>{-32768, 1234}));

  tfp::TensorProto u16 = make_proto(tfp::DT_UINT16, {1});
  u16.add_int_val(65535);
  EXPECT_EQ(values<uint16_t>(tensor_from_proto(u16, "test")), (std::vector<uint16_t>{65535}));
}

TEST(TensorProto, NegativeInt8SurvivesTheWire) {
  // Negative int32s are 10-byte varints on the wire; round-trip through bytes.
  tfp::TensorProto proto = make_proto(tfp::DT_INT8, {2});
  proto.add_int_val(-5);
  proto.add_int_val(-100);
  tfp::TensorProto reparsed;
  ASSERT_TRUE(reparsed.ParseFromString(proto.SerializeAsString()));
  EXPECT_EQ(values<int8_t>(tensor_from_proto(reparsed, "test")), (std::vector<int8_t>{-5, -100}));
}

TEST(TensorProto, BoolValuesAndBoolContent) {
  tfp::TensorProto proto = make_proto(tfp::DT_BOOL, {3});
  proto.add_bool_val(true);
  proto.add_bool_val(false);
  EXPECT_EQ(values<uint8_t>(tensor_from_proto(proto, "test")), (std::vector<uint8_t>{1, 0, 0}));

  tfp::TensorProto content = make_proto(tfp::DT_BOOL, {2});
  content.set_tensor_content(std::string("\x01\x02", 2));
  EXPECT_THROW(tensor_from_proto(content, "test"), ConvertError);  // 2 is not a bool
}

TEST(TensorProto, AbsentShapeIsAScalar) {
  tfp::TensorProto proto;
  proto.set_dtype(tfp::DT_FLOAT);
  proto.add_float_val(3.5f);
  const HostTensor t = tensor_from_proto(proto, "test");
  EXPECT_TRUE(t.shape.empty());
  EXPECT_EQ(values<float>(t), (std::vector<float>{3.5f}));
}

TEST(TensorProto, ZeroElementsGiveAnEmptyTensorAndIgnoreThePayload) {
  tfp::TensorProto proto = make_proto(tfp::DT_FLOAT, {0, 4});
  proto.add_float_val(1.0f);
  proto.set_tensor_content("garbage");
  const HostTensor t = tensor_from_proto(proto, "test");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(t.num_elements(), 0);
  EXPECT_TRUE(t.data.empty());
}

TEST(TensorProto, RefDtypeIsNormalised) {
  tfp::TensorProto proto = make_proto(tfp::DT_FLOAT_REF, {1});
  proto.add_float_val(2.0f);
  EXPECT_EQ(tensor_from_proto(proto, "test").dtype, DType::kFloat32);
}

TEST(TensorProto, UnsupportedDtypesAreNamed) {
  for (auto dtype : {tfp::DT_STRING, tfp::DT_COMPLEX64, tfp::DT_RESOURCE, tfp::DT_VARIANT,
                     tfp::DT_QINT8, tfp::DT_UINT32}) {
    tfp::TensorProto proto = make_proto(dtype, {1});
    try {
      tensor_from_proto(proto, "node 'c'");
      FAIL() << "expected ConvertError for " << tf_dtype_name(dtype);
    } catch (const ConvertError& e) {
      EXPECT_NE(std::string(e.what()).find(tf_dtype_name(dtype)), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("node 'c'"), std::string::npos) << e.what();
    }
  }
}

TEST(TensorProto, UnknownOrNegativeDimsAreErrors) {
  EXPECT_THROW(tensor_from_proto(make_proto(tfp::DT_FLOAT, {-1, 3}), "test"), ConvertError);
  tfp::TensorProto unknown_rank;
  unknown_rank.set_dtype(tfp::DT_FLOAT);
  unknown_rank.mutable_tensor_shape()->set_unknown_rank(true);
  EXPECT_THROW(tensor_from_proto(unknown_rank, "test"), ConvertError);
  // A broadcast fill with an absurd shape must not try to allocate it.
  tfp::TensorProto huge = make_proto(tfp::DT_FLOAT, {1 << 20, 1 << 20});
  huge.add_float_val(0.0f);
  EXPECT_THROW(tensor_from_proto(huge, "test"), ConvertError);
}

TEST(TensorProto, DtypeNames) {
  EXPECT_EQ(tf_dtype_name(1), "DT_FLOAT");
  EXPECT_EQ(tf_dtype_name(101), "DT_FLOAT_REF");
  EXPECT_EQ(tf_dtype_name(77), "DataType(77)");
  EXPECT_EQ(tf_dtype_base(119), 19);
  EXPECT_EQ(tf_dtype_base(19), 19);
}

}  // namespace
}  // namespace floe::conv
