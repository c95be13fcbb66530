// The convexity test of quadratic models (lp/convexity.hpp): Hessian eigenvalues per part, the sense of the
// objective and of each row deciding which definiteness is needed, quadratic equalities never convex.
#include <gtest/gtest.h>

#include <string>

#include "lp/convexity.hpp"
#include "lp/lp_format.hpp"

namespace trex::lp {
namespace {

ConvexityVerdict verdict(const std::string& lp) { return check_convexity(read_lp_string(lp, "convexity.lp")); }

TEST(Convexity, HessianEigenvalues) {
  // x^2 - 2xy + y^2 = (x - y)^2: Hessian [[2, -2], [-2, 2]], eigenvalues 0 and 4
  const EigenRange e = hessian_eigen_range({{0, 0, 1.0}, {0, 1, -2.0}, {1, 1, 1.0}});
  EXPECT_NEAR(e.min, 0.0, 1e-12);
  EXPECT_NEAR(e.max, 4.0, 1e-12);
  // xy: Hessian [[0, 1], [1, 0]], eigenvalues -1 and 1
  const EigenRange b = hessian_eigen_range({{3, 7, 1.0}});
  EXPECT_NEAR(b.min, -1.0, 1e-12);
  EXPECT_NEAR(b.max, 1.0, 1e-12);
  const EigenRange none = hessian_eigen_range({});
  EXPECT_EQ(none.min, 0.0);
  EXPECT_EQ(none.max, 0.0);
}

TEST(Convexity, ObjectiveNeedsPsdForMinAndNsdForMax) {
  EXPECT_TRUE(verdict("Minimize\n obj: x + [ 2 x ^2 + 2 y ^2 ] / 2\nSubject To\n c: x + y >= 1\nEnd\n").convex);
  // a perfect square written out has a zero eigenvalue: still convex
  EXPECT_TRUE(verdict("Minimize\n obj: [ 2 x ^2 - 4 x * y + 2 y ^2 ] / 2\nSubject To\n c: x + y >= 1\nEnd\n").convex);
  EXPECT_TRUE(verdict("Maximize\n obj: x + [ - 2 x ^2 ] / 2\nSubject To\n c: x <= 4\nEnd\n").convex);
  const ConvexityVerdict max_convex = verdict("Maximize\n obj: [ 2 x ^2 ] / 2\nSubject To\n c: x <= 4\nEnd\n");
  EXPECT_FALSE(max_convex.convex);
  EXPECT_NE(max_convex.reason.find("objective is not concave"), std::string::npos) << max_convex.reason;
  const ConvexityVerdict bilinear = verdict("Minimize\n obj: [ 2 x * y ] / 2\nSubject To\n c: x + y >= 1\nEnd\n");
  EXPECT_FALSE(bilinear.convex);
  EXPECT_NE(bilinear.reason.find("negative eigenvalue"), std::string::npos) << bilinear.reason;
}

TEST(Convexity, RowsNeedTheirSensesDefiniteness) {
  EXPECT_TRUE(verdict("Minimize\n obj: x\nSubject To\n disk: [ x ^2 + y ^2 ] <= 4\nEnd\n").convex);
  EXPECT_TRUE(verdict("Minimize\n obj: x\nSubject To\n cap: x + [ - x ^2 - y ^2 ] >= -4\nEnd\n").convex);
  const ConvexityVerdict outside = verdict("Minimize\n obj: x\nSubject To\n ring: [ x ^2 + y ^2 ] >= 4\nEnd\n");
  EXPECT_FALSE(outside.convex);
  EXPECT_NE(outside.reason.find("row 'ring'"), std::string::npos) << outside.reason;
  const ConvexityVerdict eq = verdict("Minimize\n obj: x\nSubject To\n comp: [ x * y ] = 0\nEnd\n");
  EXPECT_FALSE(eq.convex);
  EXPECT_NE(eq.reason.find("row 'comp' is a quadratic equality"), std::string::npos) << eq.reason;
  const ConvexityVerdict hyper = verdict("Minimize\n obj: x\nSubject To\n h: [ 0.5 x * y ] <= 3\nEnd\n");
  EXPECT_FALSE(hyper.convex);
  EXPECT_NE(hyper.reason.find("row 'h'"), std::string::npos) << hyper.reason;
}

}  // namespace
}  // namespace trex::lp
