#include "pkg/framework/affinity_term.h"

#include <algorithm>

namespace berth::framework {
namespace {

// Compiles one term of `owner`; false (and `error` set) when it does not compile.
bool compileTerm(const api::Pod& owner, const api::PodAffinityTerm& in, const std::string& path,
                 AffinityTerm& out, std::string& error) {
  if (in.labelSelector) {
    auto s = labels::Selector::fromLabelSelector(*in.labelSelector);
    if (!s.ok()) {
      error = path + ".labelSelector: " + s.error().message;
      return false;
    }
    out.selector = std::move(*s);
  }
  if (in.namespaceSelector) {
    auto s = labels::Selector::fromLabelSelector(*in.namespaceSelector);
    if (!s.ok()) {
      error = path + ".namespaceSelector: " + s.error().message;
      return false;
    }
    out.namespaceSelector = std::move(*s);
  }
  if (in.topologyKey.empty()) {
    error = path + ".topologyKey: must not be empty";
    return false;
  }
  out.topologyKey = in.topologyKey;
  if (in.namespaces.empty() && !in.namespaceSelector) {
    out.namespaces = {owner.metadata.namespace_};
  } else {
    out.namespaces = in.namespaces;
    std::sort(out.namespaces.begin(), out.namespaces.end());
    out.namespaces.erase(std::unique(out.namespaces.begin(), out.namespaces.end()),
                         out.namespaces.end());
  }
  return true;
}

// A list compiles whole or not at all: one bad term empties it.
void compileRequired(const api::Pod& owner, const std::vector<api::PodAffinityTerm>& in,
                     const std::string& path, std::vector<AffinityTerm>& out, std::string& error) {
  for (size_t i = 0; i < in.size(); ++i) {
    AffinityTerm t;
    std::string problem;
    if (!compileTerm(owner, in[i], path + "[" + std::to_string(i) + "]", t, problem)) {
      if (error.empty()) error = std::move(problem);
      out.clear();
      return;
    }
    out.push_back(std::move(t));
  }
}

void compilePreferred(const api::Pod& owner, const std::vector<api::WeightedPodAffinityTerm>& in,
                      const std::string& path, std::vector<WeightedAffinityTerm>& out,
                      std::string& error) {
  for (size_t i = 0; i < in.size(); ++i) {
    WeightedAffinityTerm t;
    t.weight = in[i].weight;
    std::string problem;
    if (!compileTerm(owner, in[i].podAffinityTerm,
                     path + "[" + std::to_string(i) + "].podAffinityTerm", t.term, problem)) {
      if (error.empty()) error = std::move(problem);
      out.clear();
      return;
    }
    out.push_back(std::move(t));
  }
}

}  // namespace

bool AffinityTerm::inNamespaces(const std::string& ns) const {
  return std::binary_search(namespaces.begin(), namespaces.end(), ns);
}

bool AffinityTerm::matches(const api::Pod& pod, const api::StringMap* nsLabels) const {
  static const api::StringMap kNoLabels;
  const bool nsMatch =
      inNamespaces(pod.metadata.namespace_) ||
      (namespaceSelector && namespaceSelector->matches(nsLabels ? *nsLabels : kNoLabels));
  return nsMatch && selector && selector->matches(pod.metadata.labels);
}

PodAffinityTerms PodAffinityTerms::compile(const api::Pod& pod) {
  PodAffinityTerms out;
  const auto& a = pod.spec.affinity;
  if (!a) return out;
  if (a->podAffinity) {
    const std::string path = "spec.affinity.podAffinity.";
    compileRequired(pod, a->podAffinity->requiredDuringSchedulingIgnoredDuringExecution,
                    path + "requiredDuringSchedulingIgnoredDuringExecution", out.requiredAffinity,
                    out.error);
    compilePreferred(pod, a->podAffinity->preferredDuringSchedulingIgnoredDuringExecution,
                     path + "preferredDuringSchedulingIgnoredDuringExecution",
                     out.preferredAffinity, out.error);
  }
  if (a->podAntiAffinity) {
    const std::string path = "spec.affinity.podAntiAffinity.";
    compileRequired(pod, a->podAntiAffinity->requiredDuringSchedulingIgnoredDuringExecution,
                    path + "requiredDuringSchedulingIgnoredDuringExecution",
                    out.requiredAntiAffinity, out.error);
    compilePreferred(pod, a->podAntiAffinity->preferredDuringSchedulingIgnoredDuringExecution,
                     path + "preferredDuringSchedulingIgnoredDuringExecution",
                     out.preferredAntiAffinity, out.error);
  }
  return out;
}

bool matchesAllTerms(const std::vector<AffinityTerm>& terms, const api::Pod& pod) {
  if (terms.empty()) return false;
  return std::all_of(terms.begin(), terms.end(),
                     [&](const AffinityTerm& t) { return t.matches(pod, nullptr); });
}

bool matchesAnyTerm(const std::vector<AffinityTerm>& terms, const api::Pod& pod) {
  return std::any_of(terms.begin(), terms.end(),
                     [&](const AffinityTerm& t) { return t.matches(pod, nullptr); });
}

}  // namespace berth::framework
