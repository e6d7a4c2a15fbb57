#include "pkg/labels/requirement.h"

#include <string>
#include <string_view>

#include "pkg/labels/validation.h"

namespace berth::labels {
namespace {

using Op = Selector::Op;
using Rule = RequirementProblem::Rule;

Op selectorOp(api::NodeSelectorOperator op) {
  switch (op) {
    case api::NodeSelectorOperator::In:
      return Op::In;
    case api::NodeSelectorOperator::NotIn:
      return Op::NotIn;
    case api::NodeSelectorOperator::Exists:
      return Op::Exists;
    case api::NodeSelectorOperator::DoesNotExist:
      return Op::DoesNotExist;
    case api::NodeSelectorOperator::Gt:
      return Op::Gt;
    case api::NodeSelectorOperator::Lt:
      return Op::Lt;
  }
  return Op::In;
}

// Calls `report` with each broken rule in upstream's order until it returns false.
template <typename Report>
void forEachProblem(std::string_view key, Op op, const std::vector<std::string>& values,
                    Report&& report) {
  if (!checkLabelKey(key) && !report(RequirementProblem{Rule::BadKey})) {
    return;
  }
  std::optional<Rule> countRule;
  switch (op) {
    case Op::In:
    case Op::NotIn:
      if (values.empty()) {
        countRule = Rule::ValuesRequired;
      }
      break;
    case Op::Exists:
    case Op::DoesNotExist:
      if (!values.empty()) {
        countRule = Rule::ValuesForbidden;
      }
      break;
    case Op::Equals:
    case Op::NotEquals:
    case Op::Gt:
    case Op::Lt:
      if (values.size() != 1) {
        countRule = Rule::OneValueRequired;
      }
      break;
  }
  if (countRule && !report(RequirementProblem{*countRule})) {
    return;
  }
  if (op == Op::Gt || op == Op::Lt) {
    for (size_t i = 0; i < values.size(); ++i) {
      if (!parseInt64(values[i]) && !report(RequirementProblem{Rule::NotAnInteger, i})) {
        return;
      }
    }
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (!checkLabelValue(values[i]) && !report(RequirementProblem{Rule::BadValue, i})) {
      return;
    }
  }
}

}  // namespace

std::vector<RequirementProblem> requirementProblems(const Selector::Requirement& requirement) {
  std::vector<RequirementProblem> problems;
  forEachProblem(requirement.key, requirement.op, requirement.values,
                 [&problems](RequirementProblem p) {
                   problems.push_back(p);
                   return true;
                 });
  return problems;
}

std::optional<RequirementProblem> firstRequirementProblem(
    const api::NodeSelectorRequirement& requirement) {
  std::optional<RequirementProblem> first;
  forEachProblem(requirement.key, selectorOp(requirement.op), requirement.values,
                 [&first](RequirementProblem p) {
                   first = p;
                   return false;
                 });
  return first;
}

}  // namespace berth::labels
