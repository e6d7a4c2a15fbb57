#include "pkg/labels/requirement.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth::labels {
namespace {

using SelectorOp = Selector::Op;
using Rule = RequirementProblem::Rule;

std::vector<std::pair<Rule, size_t>> rulesBroken(std::string key, SelectorOp op,
                                                 std::vector<std::string> values) {
  std::vector<std::pair<Rule, size_t>> out;
  for (const RequirementProblem& p : requirementProblems({std::move(key), op, std::move(values)})) {
    out.emplace_back(p.rule, p.value);
  }
  return out;
}

api::NodeSelectorRequirement nodeRequirement(std::string key, api::NodeSelectorOperator op,
                                             std::vector<std::string> values) {
  api::NodeSelectorRequirement req;
  req.key = std::move(key);
  req.op = op;
  req.values = std::move(values);
  return req;
}

TEST(RequirementRules, ValidRequirementsHaveNoProblem) {
  EXPECT_TRUE(rulesBroken("zone", SelectorOp::In, {"a", "b"}).empty());
  EXPECT_TRUE(rulesBroken("example.com/zone", SelectorOp::Equals, {""}).empty());
  EXPECT_TRUE(rulesBroken("zone", SelectorOp::Exists, {}).empty());
  EXPECT_TRUE(rulesBroken("cpus", SelectorOp::Gt, {"12"}).empty());
  EXPECT_FALSE(
      firstRequirementProblem(nodeRequirement("cpus", api::NodeSelectorOperator::Lt, {"3"})));
}

TEST(RequirementRules, EachOperatorTakesItsNumberOfValues) {
  using V = std::vector<std::pair<Rule, size_t>>;
  EXPECT_EQ(rulesBroken("k", SelectorOp::In, {}), (V{{Rule::ValuesRequired, 0}}));
  EXPECT_EQ(rulesBroken("k", SelectorOp::NotIn, {}), (V{{Rule::ValuesRequired, 0}}));
  EXPECT_EQ(rulesBroken("k", SelectorOp::Exists, {"a"}), (V{{Rule::ValuesForbidden, 0}}));
  EXPECT_EQ(rulesBroken("k", SelectorOp::DoesNotExist, {"a"}), (V{{Rule::ValuesForbidden, 0}}));
  EXPECT_EQ(rulesBroken("k", SelectorOp::Equals, {"a", "b"}), (V{{Rule::OneValueRequired, 0}}));
  EXPECT_EQ(rulesBroken("k", SelectorOp::NotEquals, {}), (V{{Rule::OneValueRequired, 0}}));
  EXPECT_EQ(rulesBroken("k", SelectorOp::Lt, {}), (V{{Rule::OneValueRequired, 0}}));
}

TEST(RequirementRules, GtAndLtValuesMustEachBeInt64) {
  using V = std::vector<std::pair<Rule, size_t>>;
  EXPECT_EQ(rulesBroken("k", SelectorOp::Gt, {"x"}), (V{{Rule::NotAnInteger, 0}}));
  EXPECT_EQ(rulesBroken("k", SelectorOp::Gt, {"1", "99999999999999999999"}),
            (V{{Rule::OneValueRequired, 0}, {Rule::NotAnInteger, 1}}));
  // A negative number is an integer but not a label value, as upstream.
  EXPECT_EQ(rulesBroken("k", SelectorOp::Lt, {"-3"}), (V{{Rule::BadValue, 0}}));
  // In does not care whether its values are numbers.
  EXPECT_TRUE(rulesBroken("k", SelectorOp::In, {"x"}).empty());
}

TEST(RequirementRules, ProblemsComeInUpstreamOrderKeyCountIntegersValues) {
  using V = std::vector<std::pair<Rule, size_t>>;
  EXPECT_EQ(rulesBroken("-bad", SelectorOp::Gt, {"a", "-b-", "3"}), (V{{Rule::BadKey, 0},
                                                                       {Rule::OneValueRequired, 0},
                                                                       {Rule::NotAnInteger, 0},
                                                                       {Rule::NotAnInteger, 1},
                                                                       {Rule::BadValue, 1}}));
}

TEST(RequirementRules, FirstNodeRequirementProblemIsTheFirstOfAll) {
  auto first = firstRequirementProblem(nodeRequirement("a/b/c", api::NodeSelectorOperator::In, {}));
  ASSERT_TRUE(first);
  EXPECT_EQ(first->rule, Rule::BadKey);

  first = firstRequirementProblem(
      nodeRequirement("k", api::NodeSelectorOperator::NotIn, {"ok", std::string(64, 'v'), "-"}));
  ASSERT_TRUE(first);
  EXPECT_EQ(first->rule, Rule::BadValue);
  EXPECT_EQ(first->value, 1u);

  first = firstRequirementProblem(nodeRequirement("k", api::NodeSelectorOperator::Gt, {"1.5"}));
  ASSERT_TRUE(first);
  EXPECT_EQ(first->rule, Rule::NotAnInteger);
}

}  // namespace
}  // namespace berth::labels
