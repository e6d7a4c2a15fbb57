#pragma once
// The rules of one selector requirement, as upstream's labels.NewRequirement: the key's syntax,
// how many values each operator takes, Gt/Lt values that are integers, each value's syntax.
// Selectors, pods' node affinity and NodeAffinityArgs all judge a requirement here; each words
// the broken rule in its own messages.

#include <cstddef>
#include <optional>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/labels/selector.h"

namespace berth::labels {

struct RequirementProblem {
  enum class Rule {
    BadKey,            // not a label key
    ValuesRequired,    // In/NotIn without values
    ValuesForbidden,   // Exists/DoesNotExist with values
    OneValueRequired,  // Equals/NotEquals/Gt/Lt without exactly one value
    NotAnInteger,      // a Gt/Lt value that is not an int64
    BadValue,          // not a label value
  };
  Rule rule;
  size_t value = 0;  // the offending value, for NotAnInteger and BadValue
};

// Every broken rule, in upstream's order: key, value count, Gt/Lt integers, value syntax.
std::vector<RequirementProblem> requirementProblems(const Selector::Requirement& requirement);

// The first broken rule of a node selector requirement (matchExpressions); never allocates, as
// the scheduling hot loop asks it.
std::optional<RequirementProblem> firstRequirementProblem(
    const api::NodeSelectorRequirement& requirement);

}  // namespace berth::labels
