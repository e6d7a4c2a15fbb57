#pragma once
// Label and node selectors with Kubernetes semantics (apimachinery/pkg/labels and
// component-helpers/scheduling/corev1): requirements in a term are ANDed, terms are ORed,
// nodeSelector is an AND of equalities, matchFields supports metadata.name only.

#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/util/result.h"

namespace berth::labels {

// A parsed label selector (the string form "a=b,c!=d,e in (x,y),!f" or a metav1.LabelSelector).
class Selector {
 public:
  enum class Op { Equals, NotEquals, In, NotIn, Exists, DoesNotExist, Gt, Lt };
  // Parsed In/NotIn values are sorted and unique (upstream keeps them in a set); requirements are
  // sorted by key, stably.
  struct Requirement {
    std::string key;
    Op op = Op::Equals;
    std::vector<std::string> values;
  };

  // Selects everything.
  Selector() = default;

  // Parses kube's string syntax, as used by ?labelSelector=; errors name the offending token.
  static util::Result<Selector> parse(std::string_view text);
  // From a metav1.LabelSelector (matchLabels + matchExpressions); an invalid operator is an error.
  static util::Result<Selector> fromLabelSelector(const api::LabelSelector& selector);
  // Every key of `set` equal to its value (labels.SelectorFromValidatedSet: no validation).
  static Selector fromSet(const api::StringMap& set);

  bool matches(const api::StringMap& labels) const;
  bool empty() const { return requirements_.empty(); }
  const std::vector<Requirement>& requirements() const { return requirements_; }
  // Upstream's String(): "a=b,c in (x,y),!d"; "" for an empty selector. `==` prints as `=`.
  std::string toString() const;

 private:
  std::vector<Requirement> requirements_;  // ANDed
};

// spec.nodeSelector: every key present with exactly that value.
bool matchesNodeSelector(const api::StringMap& nodeSelector, const api::StringMap& nodeLabels);

// One requirement against node labels (matchExpressions). Gt/Lt parse both sides as int64; a value
// that does not parse makes the requirement false, as upstream. An invalid requirement (bad key or
// value syntax, In/NotIn without values, Exists/DoesNotExist with values) is false. Never
// allocates.
bool matchesRequirement(const api::NodeSelectorRequirement& req, const api::StringMap& nodeLabels);

// A term matches when all its matchExpressions and matchFields hold. A term with neither matches
// nothing; one with an invalid requirement (as labels.NewRequirement judges) matches nothing.
// matchFields supports only the key metadata.name, with In/NotIn and exactly one value; any other
// field requirement makes the term match nothing. As upstream, matchFields are skipped for a node
// with an empty name.
bool matchesTerm(const api::NodeSelectorTerm& term, const api::Node& node);

// Terms are ORed; no terms matches nothing.
bool matchesNodeSelectorTerms(const api::NodeSelector& selector, const api::Node& node);

// --- Taints and tolerations (component-helpers/scheduling/corev1) --------------------------------

// Whether one toleration tolerates one taint: effects match (empty toleration effect = all), keys
// match (empty key = all keys), and Exists, or Equal/"" with equal values. Any other operator
// (including the alpha Lt/Gt of KEP-5471) tolerates nothing.
bool tolerates(const api::Toleration& toleration, const api::Taint& taint);
bool toleratesAny(const std::vector<api::Toleration>& tolerations, const api::Taint& taint);

}  // namespace berth::labels
