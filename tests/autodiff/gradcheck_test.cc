// SPDX-License-Identifier: Apache-2.0
// The gradient checks (gradcheck.h) on every case of the table, one test per case and check:
// GradCheck/Case.<Check>/<case name>. GradCheck.ChecksCatchWrongRules swaps deliberately wrong
// rules into a primitive for a moment to show that each check can fail.
#include <gtest/gtest.h>

#include <cctype>
#include <map>

#include "autodiff/frames.h"
#include "autodiff/gradcheck.h"
#include "autodiff/rules.h"

namespace spore::gradcheck {
namespace {

using namespace ops;

void report(const std::vector<std::string>& fails) {
  for (const auto& f : fails) ADD_FAILURE() << f;
}

class Case : public testing::TestWithParam<size_t> {
 protected:
  const GradCase& c() const { return all_cases()[GetParam()]; }
};

TEST_P(Case, Coverage) { report(check_coverage(c())); }
TEST_P(Case, FirstOrder) { report(check_first_order(c())); }
TEST_P(Case, JvpVjpAgree) { report(check_jvp_vjp_agree(c())); }
TEST_P(Case, SecondOrder) { report(check_second_order(c())); }

// gtest names allow [A-Za-z0-9_]; a repeated name gets a suffix (CaseNamesAreUnique fails).
std::string test_name(const testing::TestParamInfo<size_t>& info) { return case_test_names()[info.param]; }

INSTANTIATE_TEST_SUITE_P(GradCheck, Case, testing::Range<size_t>(0, all_cases().size()), test_name);

TEST(GradCheck, CaseNamesAreUnique) {
  ASSERT_FALSE(all_cases().empty());
  std::map<std::string, int> count;
  for (const auto& c : all_cases()) EXPECT_EQ(++count[c.name], 1) << "two gradient cases are named " << c.name;
}

// ---- the checks can fail -------------------------------------------------------------------

// Replaces a primitive's rules for one scope (a null rule keeps the real one); restores them.
class SwapRules {
 public:
  SwapRules(const char* name, JvpRule jvp, VjpRule vjp) {
    autodiff::install();  // the real rules first, so they are what is restored
    p_ = find_primitive(name);
    jvp_ = p_->jvp;
    vjp_ = p_->vjp;
    autodiff::def_rules(*p_, p_->residuals, jvp ? jvp : jvp_, vjp ? vjp : vjp_);
  }
  ~SwapRules() { autodiff::def_rules(*p_, p_->residuals, jvp_, vjp_); }
  SwapRules(const SwapRules&) = delete;
  SwapRules& operator=(const SwapRules&) = delete;

 private:
  Primitive* p_;
  JvpRule jvp_;
  VjpRule vjp_;
};

// sin's derivative 1e-4 off, or right but built on stop_gradient (so its own derivative is lost).
void sin_jvp_off(const JvpArgs& a, std::span<Tensor> out) { out[0] = a.tangents[0] * cos(a.inputs[0]) * 1.0001; }
void sin_vjp_off(const VjpArgs& a, std::span<Tensor> in) { in[0] = a.cotangents[0] * cos(a.inputs[0]) * 1.0001; }
void sin_jvp_flat(const JvpArgs& a, std::span<Tensor> out) { out[0] = a.tangents[0] * stop_gradient(cos(a.inputs[0])); }
void sin_vjp_flat(const VjpArgs& a, std::span<Tensor> in) { in[0] = a.cotangents[0] * stop_gradient(cos(a.inputs[0])); }

GradCase sin_case() {
  GradCase c;
  c.name = "sin/probe";
  c.prims = {"sin", "mul"};
  c.fn = [](const std::vector<Tensor>& x) { return sin(x[0]) * x[1]; };
  c.inputs = {oracle::rand_tensor({2, 3}, DType::Float64, 1), oracle::rand_tensor({2, 3}, DType::Float64, 2)};
  return c;
}

bool mentions(const std::vector<std::string>& fails, const std::string& what) {
  for (const auto& f : fails)
    if (f.find(what) != std::string::npos) return true;
  return false;
}

TEST(GradCheck, ChecksCatchWrongRules) {
  const GradCase c = sin_case();
  // The correct rules pass every check.
  EXPECT_TRUE(check_coverage(c).empty());
  EXPECT_TRUE(check_first_order(c).empty());
  EXPECT_TRUE(check_jvp_vjp_agree(c).empty());
  EXPECT_TRUE(check_second_order(c).empty());
  {
    SwapRules wrong("sin", nullptr, sin_vjp_off);
    auto first = check_first_order(c);
    EXPECT_TRUE(mentions(first, "reverse mode")) << "a vjp off by 1e-4 passed the finite-difference check";
    EXPECT_FALSE(mentions(first, "forward mode"));
    EXPECT_FALSE(check_jvp_vjp_agree(c).empty()) << "a vjp off by 1e-4 agreed with the jvp";
  }
  {
    SwapRules wrong("sin", sin_jvp_off, nullptr);
    auto first = check_first_order(c);
    EXPECT_TRUE(mentions(first, "forward mode")) << "a jvp off by 1e-4 passed the finite-difference check";
    EXPECT_FALSE(mentions(first, "reverse mode"));
    EXPECT_FALSE(check_jvp_vjp_agree(c).empty()) << "a jvp off by 1e-4 agreed with the vjp";
  }
  {
    SwapRules wrong("sin", nullptr, sin_vjp_flat);
    EXPECT_TRUE(check_first_order(c).empty());
    auto second = check_second_order(c);
    EXPECT_TRUE(mentions(second, "reverse-over-reverse d^T H v")) << "a vjp that is not differentiable passed";
    EXPECT_TRUE(mentions(second, "forward-over-reverse v^T H d"));
    EXPECT_FALSE(mentions(second, "reverse-over-forward d^T H v"));
    EXPECT_FALSE(mentions(second, "forward-over-forward d^T H v"));  // never reads the vjp
  }
  {
    SwapRules wrong("sin", sin_jvp_flat, nullptr);
    EXPECT_TRUE(check_first_order(c).empty());
    auto second = check_second_order(c);
    EXPECT_TRUE(mentions(second, "reverse-over-forward d^T H v")) << "a jvp that is not differentiable passed";
    EXPECT_TRUE(mentions(second, "forward-over-forward d^T H v")) << "jvp of a flat jvp passed";
    EXPECT_FALSE(mentions(second, "reverse-over-reverse d^T H v"));
  }
  // Restored.
  EXPECT_TRUE(check_first_order(c).empty());
  EXPECT_TRUE(check_second_order(c).empty());
  // A primitive the function does not apply to its inputs.
  GradCase missing = c;
  missing.prims.push_back("tanh");
  EXPECT_TRUE(mentions(check_coverage(missing), "'tanh' is not recorded"));
  // A rule that is missing altogether is reported, not thrown.
  {
    SwapRules restore_after("sin", nullptr, nullptr);
    autodiff::def_rules("sin", find_primitive("sin")->residuals, nullptr, nullptr);  // no rules at all
    EXPECT_TRUE(mentions(check_jvp_vjp_agree(c), "no reverse-mode (vjp) rule"));
  }
  EXPECT_NE(find_primitive("sin")->vjp, nullptr);
}

}  // namespace
}  // namespace spore::gradcheck
