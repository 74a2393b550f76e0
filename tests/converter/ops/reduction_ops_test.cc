// SPDX-License-Identifier: Apache-2.0
// Reduction axes as TF checks them (one rule for Sum/Prod/Max/Min/All/Any and
// Mean, converter/ops/op_registry.cc reduction_axes): negative axes count from
// the end, duplicates reduce once, an axis outside [-rank, rank) is an error
// naming the node (so a scalar, rank 0, has no axis 0), and an empty axis list
// is the identity.
#include <gtest/gtest.h>

#include "converter/ir/error.h"
#include "tests/converter/ops/convert_graph.h"
#include "tests/converter/support/tf_graph_text.h"
#include "tests/support/model_runner.h"

namespace floe::testing {
namespace {

using G = TfGraphText;

G reduction(const char* op, std::vector<int64_t> shape, std::vector<int64_t> axes) {
  G g;
  g.placeholder("x", "DT_FLOAT", shape);
  std::vector<double> values(axes.begin(), axes.end());
  g.constant("axes", "DT_INT32", {static_cast<int64_t>(axes.size())}, values);
  g.node("y", op, {"x", "axes"}, {G::type("T", "DT_FLOAT"), G::type("Tidx", "DT_INT32")});
  return g;
}

TEST(ReductionOps, NegativeAndRepeatedAxesForSumAndMean) {
  for (const char* op : {"Sum", "Mean"}) {
    const auto out = run_model(convert_graph(reduction(op, {2, 3}, {-1, 1}), op, {"y"}).model,
                               {{"x", make_f32({2, 3}, {1, 2, 3, 4, 5, 6})}});
    ASSERT_EQ(out.size(), 1u) << op;
    EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2})) << op;
    const float scale = std::string(op) == "Mean" ? 1.0f / 3.0f : 1.0f;
    EXPECT_EQ(as_floats(out[0]), (std::vector<float>{6 * scale, 15 * scale})) << op;
  }
}

TEST(ReductionOps, AScalarHasNoAxisToReduce) {
  // TF: "Invalid reduction dimension (0 for input with 0 dimension(s)".
  for (const char* op : {"Sum", "Prod", "Max", "Min", "Mean"}) {
    for (int64_t axis : {0, -1}) {
      try {
        convert_graph(reduction(op, {}, {axis}), std::string(op) + "_scalar", {"y"});
        ADD_FAILURE() << op << " over axis " << axis << " of a scalar converted";
      } catch (const conv::ConvertError& e) {
        EXPECT_EQ(e.where().node, "y") << e.what();
        EXPECT_NE(std::string(e.what()).find("out of range for rank 0"), std::string::npos) << e.what();
      }
    }
  }
}

TEST(ReductionOps, NoAxesIsTheIdentityOnAScalar) {
  G g;
  g.placeholder("x", "DT_FLOAT", {});
  g.constant("axes", "DT_INT32", {0}, {});
  g.node("y", "Sum", {"x", "axes"}, {G::type("T", "DT_FLOAT"), G::type("Tidx", "DT_INT32")});
  const auto out = run_model(convert_graph(g, "sum_none", {"y"}).model, {{"x", make_f32({}, {2.5f})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(as_floats(out[0]), (std::vector<float>{2.5f}));
}

}  // namespace
}  // namespace floe::testing
