#pragma once
// AffinityTerm: one pod (anti-)affinity term compiled once per pod (upstream's fwk.AffinityTerm),
// so that matching it against thousands of pods never re-parses a selector.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/labels/selector.h"

namespace berth::framework {

struct AffinityTerm {
  // Namespaces the term selects by name, sorted and unique. With neither `namespaces` nor a
  // namespaceSelector in the term, the owning pod's namespace.
  std::vector<std::string> namespaces;
  // Nullopt selects nothing (an absent selector); an empty Selector selects everything.
  std::optional<labels::Selector> selector;
  std::optional<labels::Selector> namespaceSelector;
  std::string topologyKey;

  bool inNamespaces(const std::string& ns) const;
  // Whether `pod` is selected: in one of the namespaces or in a namespace whose labels
  // (`nsLabels`, null for none) the namespaceSelector selects, and carrying matching labels.
  bool matches(const api::Pod& pod, const api::StringMap* nsLabels) const;
};

struct WeightedAffinityTerm {
  AffinityTerm term;
  int32_t weight = 0;
};

// A pod's four term lists, compiled. `error` names the first field that does not compile (a bad
// selector, an empty topologyKey) as "spec.affinity...: problem"; the list holding it is left
// empty, as upstream leaves it for a pod already bound.
struct PodAffinityTerms {
  std::vector<AffinityTerm> requiredAffinity;
  std::vector<AffinityTerm> requiredAntiAffinity;
  std::vector<WeightedAffinityTerm> preferredAffinity;
  std::vector<WeightedAffinityTerm> preferredAntiAffinity;
  std::string error;

  static PodAffinityTerms compile(const api::Pod& pod);
};

// Every term matches `pod` (namespace labels not consulted); false for no terms.
bool matchesAllTerms(const std::vector<AffinityTerm>& terms, const api::Pod& pod);
// Some term matches `pod` (namespace labels not consulted).
bool matchesAnyTerm(const std::vector<AffinityTerm>& terms, const api::Pod& pod);

}  // namespace berth::framework
