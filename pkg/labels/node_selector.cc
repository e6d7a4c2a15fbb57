#include <string_view>

#include "pkg/labels/internal/match.h"
#include "pkg/labels/selector.h"
#include "pkg/labels/validation.h"

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
  if (!checkLabelKey(req.key)) {
    return false;
  }
  switch (req.op) {
    case api::NodeSelectorOperator::In:
    case api::NodeSelectorOperator::NotIn:
      if (req.values.empty()) {
        return false;
      }
      break;
    case api::NodeSelectorOperator::Exists:
    case api::NodeSelectorOperator::DoesNotExist:
      if (!req.values.empty()) {
        return false;
      }
      break;
    case api::NodeSelectorOperator::Gt:
    case api::NodeSelectorOperator::Lt:
      if (req.values.size() != 1 || !parseInt64(req.values.front())) {
        return false;
      }
      break;
  }
  for (const std::string& value : req.values) {
    if (!checkLabelValue(value)) {
      return false;
    }
  }
  return true;
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

bool matchesTerm(const api::NodeSelectorTerm& term, const api::Node& node) {
  if (term.matchExpressions.empty() && term.matchFields.empty()) {
    return false;
  }
  for (const api::NodeSelectorRequirement& req : term.matchFields) {
    if (!isValidFieldRequirement(req)) {
      return false;
    }
  }
  for (const api::NodeSelectorRequirement& req : term.matchExpressions) {
    if (!matchesRequirement(req, node.metadata.labels)) {
      return false;
    }
  }
  // Upstream only consults matchFields when the node has fields, i.e. a non-empty name.
  const std::string& name = node.metadata.name;
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

bool matchesNodeSelectorTerms(const api::NodeSelector& selector, const api::Node& node) {
  for (const api::NodeSelectorTerm& term : selector.nodeSelectorTerms) {
    if (matchesTerm(term, node)) {
      return true;
    }
  }
  return false;
}

}  // namespace berth::labels
