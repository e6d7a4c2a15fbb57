#include <algorithm>
#include <string_view>

#include "pkg/labels/internal/match.h"
#include "pkg/labels/node_affinity.h"
#include "pkg/labels/requirement.h"
#include "pkg/labels/selector.h"

// Node selector terms as component-helpers/scheduling/corev1/nodeaffinity evaluates them, without
// building selector objects: these run once per (pod, node) pair in the scheduling hot loop.

namespace berth::labels {
namespace {

constexpr std::string_view kNodeNameField = "metadata.name";

internal::MatchOp toMatchOp(api::NodeSelectorOperator op) {
  switch (op) {
    case api::NodeSelectorOperator::In:
      return internal::MatchOp::In;
    case api::NodeSelectorOperator::NotIn:
      return internal::MatchOp::NotIn;
    case api::NodeSelectorOperator::Exists:
      return internal::MatchOp::Exists;
    case api::NodeSelectorOperator::DoesNotExist:
      return internal::MatchOp::DoesNotExist;
    case api::NodeSelectorOperator::Gt:
      return internal::MatchOp::Gt;
    case api::NodeSelectorOperator::Lt:
      return internal::MatchOp::Lt;
  }
  return internal::MatchOp::In;
}

// What labels.NewRequirement accepts. Upstream turns a term with any invalid requirement into a
// parse error, and a term with a parse error matches no node.
bool isValidRequirement(const api::NodeSelectorRequirement& req) {
  return !firstRequirementProblem(req);
}

// nodeSelectorRequirementsAsFieldSelector accepts In/NotIn with exactly one value; upstream would
// look up any key, but only metadata.name exists on a node, and we reject other keys outright.
bool isValidFieldRequirement(const api::NodeSelectorRequirement& req) {
  const bool opOk =
      req.op == api::NodeSelectorOperator::In || req.op == api::NodeSelectorOperator::NotIn;
  return opOk && req.values.size() == 1 && req.key == kNodeNameField;
}

}  // namespace

bool matchesNodeSelector(const api::StringMap& nodeSelector, const api::StringMap& nodeLabels) {
  for (const auto& [key, value] : nodeSelector) {
    auto it = nodeLabels.find(key);
    if (it == nodeLabels.end() || it->second != value) {
      return false;
    }
  }
  return true;
}

bool matchesRequirement(const api::NodeSelectorRequirement& req, const api::StringMap& nodeLabels) {
  // Match first: it is cheap and usually decides; validity only matters for a would-be match.
  return internal::matchLabels(toMatchOp(req.op), req.key, req.values, nodeLabels) &&
         isValidRequirement(req);
}

namespace {

bool isValidTerm(const api::NodeSelectorTerm& term) {
  if (term.matchExpressions.empty() && term.matchFields.empty()) {
    return false;
  }
  return std::all_of(term.matchFields.begin(), term.matchFields.end(), isValidFieldRequirement) &&
         std::all_of(term.matchExpressions.begin(), term.matchExpressions.end(),
                     isValidRequirement);
}

// A valid term against a node: `lookup(key)` gives the label's value or nullopt.
template <typename Lookup>
bool matchesValidTerm(const api::NodeSelectorTerm& term, Lookup&& lookup, std::string_view name) {
  for (const api::NodeSelectorRequirement& req : term.matchExpressions) {
    if (!internal::matchValue(toMatchOp(req.op), lookup(req.key), req.values)) {
      return false;
    }
  }
  // Upstream only consults matchFields when the node has fields, i.e. a non-empty name.
  if (name.empty()) {
    return true;
  }
  for (const api::NodeSelectorRequirement& req : term.matchFields) {
    const bool equal = name == req.values.front();
    if (equal != (req.op == api::NodeSelectorOperator::In)) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool matchesTerm(const api::NodeSelectorTerm& term, const api::Node& node) {
  const api::StringMap& labels = node.metadata.labels;
  auto lookup = [&labels](const std::string& key) -> std::optional<std::string_view> {
    auto it = labels.find(key);
    return it == labels.end() ? std::nullopt : std::optional<std::string_view>(it->second);
  };
  return isValidTerm(term) && matchesValidTerm(term, lookup, node.metadata.name);
}

bool matchesNodeSelectorTerms(const api::NodeSelector& selector, const api::Node& node) {
  for (const api::NodeSelectorTerm& term : selector.nodeSelectorTerms) {
    if (matchesTerm(term, node)) {
      return true;
    }
  }
  return false;
}

CompiledTerm::CompiledTerm(const api::NodeSelectorTerm& term)
    : term_(&term), valid_(isValidTerm(term)) {}

bool CompiledTerm::matches(const LabelSet& labels, std::string_view nodeName) const {
  auto lookup = [&labels](const std::string& key) { return labels.find(key); };
  return valid_ && matchesValidTerm(*term_, lookup, nodeName);
}

RequiredNodeAffinity::RequiredNodeAffinity(const api::StringMap& nodeSelector,
                                           const api::NodeSelector* required)
    : node_selector_(&nodeSelector), has_required_(required != nullptr) {
  if (required != nullptr) {
    for (const auto& term : required->nodeSelectorTerms) terms_.emplace_back(term);
  }
}

bool RequiredNodeAffinity::matches(const LabelSet& labels, std::string_view nodeName) const {
  if (!matchesNodeSelector(*node_selector_, labels)) {
    return false;
  }
  if (!has_required_) {
    return true;
  }
  return std::any_of(terms_.begin(), terms_.end(),
                     [&](const CompiledTerm& t) { return t.matches(labels, nodeName); });
}

bool matchesNodeSelector(const api::StringMap& nodeSelector, const LabelSet& labels) {
  for (const auto& [key, value] : nodeSelector) {
    auto have = labels.find(key);
    if (!have || *have != value) {
      return false;
    }
  }
  return true;
}

}  // namespace berth::labels
