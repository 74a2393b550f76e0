// SPDX-License-Identifier: Apache-2.0
// The layout builtins the TFLM repository's models use (EXPAND_DIMS, SHAPE,
// PACK, RESIZE_NEAREST_NEIGHBOR, REVERSE_V2) and the
// int32 arithmetic of TFLM's audio preprocessor (CAST, DIV, MINIMUM,
// MAXIMUM), on small hand-built .tflite files against TensorFlow Lite 2.9
// (../shared/tools/peers/tflite_run.js; skipped visibly without node and the
// peers' node_modules): int8 (quantized) and float inputs, every output equal
// on 20 seeded inputs, on the host and reference targets.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "converter/pipeline/convert.h"
#include "tests/converter/support/tfjs_oracle.h"
#include "tests/converter/support/tflite_builder.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

HostTensor seeded(DType dtype, const std::vector<int64_t>& shape, uint32_t seed) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = shape;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  t.data.resize(static_cast<size_t>(n) * dtype_size(dtype));
  uint32_t x = seed * 2654435761u + 7u;
  for (int64_t i = 0; i < n; ++i) {
    x = 1664525u * x + 1013904223u;
    if (dtype == DType::kInt8) {
      t.data[static_cast<size_t>(i)] = static_cast<uint8_t>(x >> 24);
    } else if (dtype == DType::kInt32) {
      const int32_t v = static_cast<int32_t>(x >> 8) - (1 << 23);
      std::memcpy(&t.data[static_cast<size_t>(i) * 4], &v, 4);
    } else {
      const float v = static_cast<float>(static_cast<int32_t>(x >> 8) - (1 << 23)) / 1048576.0f;
      std::memcpy(&t.data[static_cast<size_t>(i) * 4], &v, 4);
    }
  }
  return t;
}

// floe (host and reference targets) equal to TFLite 2.9 on 20 seeded values
// of input "x" (the model's only input).
void expect_equal_to_tflite(const std::string& bytes, DType dtype, const std::vector<int64_t>& input_shape) {
  REQUIRE_TFLITE_ORACLE();
  expect_converted_like_tflite(
      bytes, {"host", "reference"}, [&](uint32_t seed) { return seeded(dtype, input_shape, seed); }, 0.0,
      [](const std::string&, const std::vector<uint8_t>&) {});
}

TflTensor q8(std::vector<int32_t> shape, const std::string& name) {
  return {std::move(shape), kTflInt8, {}, name, {0.05f}, {3}};
}

TflTensor int32_constant(std::vector<int32_t> shape, const std::vector<int32_t>& values, const std::string& name) {
  return {std::move(shape), kTflInt32, raw(values), name};
}

TEST(TfliteLayoutOps, ExpandDimsAtANegativeAxis) {
  TfliteBuilder b;
  const int x = b.tensor(q8({2, 3, 4}, "x"));
  const int axis = b.tensor(int32_constant({1}, {-2}, "axis"));
  const int y = b.tensor(q8({2, 3, 1, 4}, "y"));
  b.op({70, {x, axis}, {y}});
  b.inputs = {x};
  b.outputs = {y};
  expect_equal_to_tflite(b.build(), DType::kInt8, {2, 3, 4});
}

// TFLite 2.9 reverses one axis per op.
TEST(TfliteLayoutOps, ReverseAnInnerAndTheLastAxis) {
  for (int32_t axis : {1, -1}) {
    TfliteBuilder b;
    const int x = b.tensor(q8({2, 3, 4}, "x"));
    const int axes = b.tensor(int32_constant({1}, {axis}, "axes"));
    const int y = b.tensor(q8({2, 3, 4}, "y"));
    b.op({105, {x, axes}, {y}});
    b.inputs = {x};
    b.outputs = {y};
    expect_equal_to_tflite(b.build(), DType::kInt8, {2, 3, 4});
  }
}

TEST(TfliteLayoutOps, PackThreeInputsAlongTheMiddleAxis) {
  TfliteBuilder b;
  const int x = b.tensor(q8({2, 5}, "x"));
  std::vector<int8_t> c1(10), c2(10);
  for (int i = 0; i < 10; ++i) {
    c1[static_cast<size_t>(i)] = static_cast<int8_t>(i * 11 - 50);
    c2[static_cast<size_t>(i)] = static_cast<int8_t>(90 - i * 7);
  }
  TflTensor k1 = q8({2, 5}, "k1"), k2 = q8({2, 5}, "k2");
  k1.data = raw(c1);
  k2.data = raw(c2);
  const int a = b.tensor(k1), c = b.tensor(k2);
  const int y = b.tensor(q8({2, 3, 5}, "y"));
  b.op({83, {x, a, c}, {y}, tfl::BuiltinOptions::PackOptions,
        [](flatbuffers::FlatBufferBuilder& f) { return tfl::CreatePackOptions(f, 3, 1).Union(); }});
  b.inputs = {x};
  b.outputs = {y};
  expect_equal_to_tflite(b.build(), DType::kInt8, {2, 5});
}

void expect_resize_equal(bool align_corners, bool half_pixel_centers, std::vector<int32_t> size) {
  TfliteBuilder b;
  const int x = b.tensor(q8({1, 5, 7, 3}, "x"));
  const int s = b.tensor(int32_constant({2}, size, "size"));
  const int y = b.tensor(q8({1, size[0], size[1], 3}, "y"));
  b.op({97, {x, s}, {y}, tfl::BuiltinOptions::ResizeNearestNeighborOptions,
        [=](flatbuffers::FlatBufferBuilder& f) {
          return tfl::CreateResizeNearestNeighborOptions(f, align_corners, half_pixel_centers).Union();
        }});
  b.inputs = {x};
  b.outputs = {y};
  expect_equal_to_tflite(b.build(), DType::kInt8, {1, 5, 7, 3});
}

TEST(TfliteLayoutOps, ResizeNearestNeighborUpAndDown) {
  expect_resize_equal(false, false, {11, 4});
  expect_resize_equal(true, false, {9, 13});
  expect_resize_equal(false, true, {3, 16});
}

// SHAPE's output is a constant; here it feeds a RESHAPE's new shape.
TEST(TfliteLayoutOps, ShapeFeedsAReshape) {
  TfliteBuilder b;
  const int x = b.tensor({{3, 4}, kTflFloat32, {}, "x"});
  const int shape = b.tensor({{2}, kTflInt32, {}, "shape"});
  const int y = b.tensor({{4, 3}, kTflFloat32, {}, "y"});
  const int zs = b.tensor(int32_constant({4, 3}, std::vector<int32_t>(12, 1), "ones"));
  b.op({77, {zs}, {shape}, tfl::BuiltinOptions::ShapeOptions,
        [](flatbuffers::FlatBufferBuilder& f) { return tfl::CreateShapeOptions(f, kTflInt32).Union(); }});
  b.op({22, {x, shape}, {y}});
  b.inputs = {x};
  b.outputs = {y};
  expect_equal_to_tflite(b.build(), DType::kFloat32, {3, 4});
}

// TFLM's preprocessor tail: int32 MUL, ADD, DIV (truncating), MINIMUM,
// MAXIMUM by scalar constants, then CAST to int8.
TEST(TfliteLayoutOps, Int32ArithmeticTruncatesLikeTflite) {
  TfliteBuilder b;
  const int x = b.tensor({{40}, kTflInt32, {}, "x"});
  const int k3 = b.tensor(int32_constant({}, {3}, "k3"));
  const int k333 = b.tensor(int32_constant({}, {333}, "k333"));
  const int k666 = b.tensor(int32_constant({}, {-666}, "k666"));
  const int hi = b.tensor(int32_constant({}, {20000}, "hi"));
  const int lo = b.tensor(int32_constant({}, {-20000}, "lo"));
  const int m = b.tensor({{40}, kTflInt32, {}, "m"});
  const int a = b.tensor({{40}, kTflInt32, {}, "a"});
  const int d = b.tensor({{40}, kTflInt32, {}, "d"});
  const int mn = b.tensor({{40}, kTflInt32, {}, "mn"});
  const int mx = b.tensor({{40}, kTflInt32, {}, "mx"});
  const int y = b.tensor({{40}, kTflInt8, {}, "y"});
  b.op({18, {x, k3}, {m}});
  b.op({0, {m, k333}, {a}});
  b.op({42, {a, k666}, {d}});
  b.op({57, {d, hi}, {mn}});
  b.op({55, {mn, lo}, {mx}});
  b.op({53, {mx}, {y}});
  b.inputs = {x};
  b.outputs = {y};
  expect_equal_to_tflite(b.build(), DType::kInt32, {40});
}

}  // namespace
}  // namespace floe::testing
