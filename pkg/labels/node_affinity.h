#pragma once
// A pod's node constraints compiled once per scheduling cycle and then matched against thousands of
// nodes: requirement validity (which upstream settles when it parses a term) is decided here, so
// the per-node match is label lookups only.

#include <string_view>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/labels/label_set.h"

namespace berth::labels {

// One node selector term; an invalid or empty term matches nothing (upstream's parse error).
class CompiledTerm {
 public:
  explicit CompiledTerm(const api::NodeSelectorTerm& term);
  bool matches(const LabelSet& labels, std::string_view nodeName) const;

 private:
  const api::NodeSelectorTerm* term_;  // borrowed from the pod or the plugin's arguments
  bool valid_;
};

// spec.nodeSelector AND the required node affinity terms (ORed), as upstream's
// RequiredNodeAffinity.
class RequiredNodeAffinity {
 public:
  // `required` may be null (no required affinity). Both are borrowed and must outlive this object.
  RequiredNodeAffinity(const api::StringMap& nodeSelector, const api::NodeSelector* required);
  bool matches(const LabelSet& labels, std::string_view nodeName) const;

 private:
  const api::StringMap* node_selector_;
  bool has_required_;
  std::vector<CompiledTerm> terms_;
};

// spec.nodeSelector only: every key present with exactly that value.
bool matchesNodeSelector(const api::StringMap& nodeSelector, const LabelSet& labels);

}  // namespace berth::labels
