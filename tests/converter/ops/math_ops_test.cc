// SPDX-License-Identifier: Apache-2.0
// TF math ops with a kernel of their own, converted and run through the
// runtime with their inputs fed at run time. Cross (tf.linalg.cross): the
// right-handed basis identities and worked products, integers wrapping as TF's
// kernel computes them in the input dtype, and the shapes TF refuses.
#include <gtest/gtest.h>

#include <climits>

#include "tests/converter/ops/convert_graph.h"
#include "tests/converter/support/tf_graph_text.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

using G = TfGraphText;

std::vector<int32_t> as_ints(const HostTensor& t) {
  return std::vector<int32_t>(t.as<int32_t>(), t.as<int32_t>() + t.num_elements());
}

G cross_graph(const char* dtype, std::vector<int64_t> a_shape, std::vector<int64_t> b_shape) {
  G g;
  g.placeholder("a", dtype, a_shape);
  g.placeholder("b", dtype, b_shape);
  g.node("c", "Cross", {"a", "b"}, {G::type("T", dtype)});
  return g;
}

// x × y = z, y × z = x, z × x = y, y × x = -z, and (1, 2, 3) × (4, 5, 6) =
// (2·6 − 3·5, 3·4 − 1·6, 1·5 − 2·4) = (−3, 6, −3), batched as [5, 3].
TEST(MathOps, CrossOfFloatVectors) {
  const auto out = run_model(convert_graph(cross_graph("DT_FLOAT", {5, 3}, {5, 3}), "cross", {"c"}).model,
                             {{"a", make_f32({5, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 1, 2, 3})},
                              {"b", make_f32({5, 3}, {0, 1, 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 4, 5, 6})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(as_floats(out[0]), (std::vector<float>{0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, -1, -3, 6, -3}));
}

// int32 over a [2, 1, 3] batch: a worked product, and one whose products
// overflow int32 and wrap (TF's kernel computes in the input dtype):
// (INT_MAX, 2, 0) × (0, 2, 1): x = 2·1 − 0·2 = 2, y = 0·0 − INT_MAX·1,
// z = INT_MAX·2 − 2·0, which wraps to −2.
TEST(MathOps, CrossOfInt32VectorsWraps) {
  const auto out = run_model(convert_graph(cross_graph("DT_INT32", {2, 1, 3}, {2, 1, 3}), "cross_i32", {"c"}).model,
                             {{"a", make_i32({2, 1, 3}, {3, -1, 2, INT_MAX, 2, 0})},
                              {"b", make_i32({2, 1, 3}, {1, 4, -5, 0, 2, 1})}});
  ASSERT_EQ(out.size(), 1u);
  // (3, −1, 2) × (1, 4, −5) = (−1·−5 − 2·4, 2·1 − 3·−5, 3·4 − −1·1) = (−3, 17, 13).
  EXPECT_EQ(as_ints(out[0]), (std::vector<int32_t>{-3, 17, 13, 2, -INT_MAX, -2}));
}

TEST(MathOps, CrossRefusesShapesTfRefuses) {
  EXPECT_NE(conversion_error(cross_graph("DT_FLOAT", {2, 3}, {1, 3}), "broadcast", {"c"}).find("differ in shape"),
            std::string::npos);
  EXPECT_NE(conversion_error(cross_graph("DT_FLOAT", {4, 2}, {4, 2}), "two", {"c"}).find("last dimension must be 3"),
            std::string::npos);
}

}  // namespace
}  // namespace floe::testing
