#include "pkg/plugins/podtopologyspread/constraints.h"

#include <set>
#include <utility>

#include "pkg/labels/validation.h"
#include "pkg/util/quote.h"

namespace berth::plugins::podtopologyspread {
namespace {

const api::NodeSelector* podRequiredAffinity(const api::Pod& pod) {
  const auto& a = pod.spec.affinity;
  if (!a || !a->nodeAffinity || !a->nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution) {
    return nullptr;
  }
  return &*a->nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution;
}

util::Error fieldError(const std::string& path, const std::string& body) {
  return util::invalidArgument(path + ": " + body);
}

std::optional<util::Error> policyProblem(const std::optional<std::string>& policy,
                                         const std::string& path) {
  if (!policy || *policy == "Honor" || *policy == "Ignore") return std::nullopt;
  return fieldError(path, "Unsupported value: " + util::quoteGo(*policy) +
                              ": supported values: \"Honor\", \"Ignore\"");
}

// One pod or default constraint, compiled; the selector is left as given (nothing when absent).
util::Result<Constraint> compile(const api::TopologySpreadConstraint& c,
                                 const api::StringMap& podLabels) {
  Constraint out;
  out.maxSkew = c.maxSkew;
  out.topologyKey = c.topologyKey;
  out.minDomains = c.minDomains.value_or(1);
  out.honorNodeAffinity = c.nodeAffinityPolicy.value_or("Honor") == "Honor";
  out.honorNodeTaints = c.nodeTaintsPolicy.value_or("Ignore") == "Honor";
  if (!c.labelSelector) return out;
  auto selector = labels::Selector::fromLabelSelector(*c.labelSelector);
  if (!selector.ok()) return selector.error();
  out.selector = SpreadSelector::of(std::move(*selector));
  // matchLabelKeys: the pod's values of those keys, ANDed with the selector (the API server of
  // v1.34+ has merged them already; merging twice is harmless).
  api::StringMap own;
  for (const std::string& key : c.matchLabelKeys) {
    if (auto it = podLabels.find(key); it != podLabels.end()) own.emplace(key, it->second);
  }
  if (!own.empty()) out.selector.add(labels::Selector::fromSet(own));
  return out;
}

template <typename Ptr>
const api::LabelSelector* controllerSelector(const Ptr& obj) {
  return obj && obj->selector ? &*obj->selector : nullptr;
}

}  // namespace

util::Result<void> validatePodConstraints(const api::Pod& pod) {
  const auto& constraints = pod.spec.topologySpreadConstraints;
  std::set<std::pair<std::string_view, std::string_view>> seen;
  for (size_t i = 0; i < constraints.size(); ++i) {
    const api::TopologySpreadConstraint& c = constraints[i];
    const std::string path = "spec.topologySpreadConstraints[" + std::to_string(i) + "]";
    if (c.maxSkew <= 0) {
      return fieldError(path + ".maxSkew", "Invalid value: " + std::to_string(c.maxSkew) +
                                               ": must be greater than zero");
    }
    if (c.topologyKey.empty()) {
      return fieldError(path + ".topologyKey", "Required value: can not be empty");
    }
    if (std::vector<std::string> errors; !labels::checkLabelKey(c.topologyKey, &errors)) {
      return fieldError(path + ".topologyKey",
                        "Invalid value: " + util::quoteGo(c.topologyKey) + ": " + errors.front());
    }
    if (c.whenUnsatisfiable != kDoNotSchedule && c.whenUnsatisfiable != kScheduleAnyway) {
      return fieldError(path + ".whenUnsatisfiable",
                        "Unsupported value: " + util::quoteGo(c.whenUnsatisfiable) +
                            ": supported values: \"DoNotSchedule\", \"ScheduleAnyway\"");
    }
    if (!seen.emplace(c.topologyKey, c.whenUnsatisfiable).second) {
      return fieldError(
          path, "Duplicate value: \"{" + c.topologyKey + ", " + c.whenUnsatisfiable + "}\"");
    }
    if (c.minDomains) {
      if (*c.minDomains <= 0) {
        return fieldError(path + ".minDomains", "Invalid value: " + std::to_string(*c.minDomains) +
                                                    ": must be greater than zero");
      }
      if (c.whenUnsatisfiable != kDoNotSchedule) {
        return fieldError(path + ".minDomains",
                          "Invalid value: " + std::to_string(*c.minDomains) +
                              ": can only use minDomains if whenUnsatisfiable=DoNotSchedule, not " +
                              c.whenUnsatisfiable);
      }
    }
    if (auto p = policyProblem(c.nodeAffinityPolicy, path + ".nodeAffinityPolicy")) return *p;
    if (auto p = policyProblem(c.nodeTaintsPolicy, path + ".nodeTaintsPolicy")) return *p;
    if (c.labelSelector) {
      if (auto s = labels::Selector::fromLabelSelector(*c.labelSelector); !s.ok()) {
        return fieldError(path + ".labelSelector", s.error().message);
      }
    }
  }
  return {};
}

util::Result<std::vector<Constraint>> constraintsFor(const api::Pod& pod,
                                                     std::string_view whenUnsatisfiable,
                                                     const Defaults& defaults,
                                                     const framework::ClusterObjects* objects) {
  std::vector<Constraint> out;
  const bool own = !pod.spec.topologySpreadConstraints.empty();
  for (const auto& c : own ? pod.spec.topologySpreadConstraints : defaults.constraints) {
    if (c.whenUnsatisfiable != whenUnsatisfiable) continue;
    auto compiled = compile(c, pod.metadata.labels);
    if (!compiled.ok()) return compiled.error();
    out.push_back(std::move(*compiled));
  }
  if (own || out.empty()) return out;
  // Defaults spread the pod among the pods of its Services and controller.
  SpreadSelector selector = defaultSelector(pod, objects);
  if (selector.empty()) return std::vector<Constraint>();
  for (Constraint& c : out) c.selector = selector;
  return out;
}

SpreadSelector defaultSelector(const api::Pod& pod, const framework::ClusterObjects* objects) {
  SpreadSelector out = SpreadSelector::of(labels::Selector());
  if (objects == nullptr) return out;
  const std::string& ns = pod.metadata.namespace_;
  // Services and controllers that select the same pod cannot disagree on a key: merging is safe.
  api::StringMap merged;
  for (const api::ServicePtr& svc : objects->listServices(ns)) {
    if (svc->selector.empty()) continue;  // selects no pod
    if (!labels::Selector::fromSet(svc->selector).matches(pod.metadata.labels)) continue;
    for (const auto& [k, v] : svc->selector) merged.insert_or_assign(k, v);
  }
  const api::OwnerReference* owner = api::controllerOf(pod.metadata);
  const api::LabelSelector* controller = nullptr;
  if (owner != nullptr && owner->apiVersion == "v1" && owner->kind == "ReplicationController") {
    if (auto rc = objects->getReplicationController(ns, owner->name)) {
      for (const auto& [k, v] : rc->selector) merged.insert_or_assign(k, v);
    }
  } else if (owner != nullptr && owner->apiVersion == "apps/v1" && owner->kind == "ReplicaSet") {
    controller = controllerSelector(objects->getReplicaSet(ns, owner->name));
  } else if (owner != nullptr && owner->apiVersion == "apps/v1" && owner->kind == "StatefulSet") {
    controller = controllerSelector(objects->getStatefulSet(ns, owner->name));
  }
  out.add(labels::Selector::fromSet(merged));
  // A controller selector that does not parse adds nothing, as upstream.
  if (controller != nullptr) {
    if (auto s = labels::Selector::fromLabelSelector(*controller); s.ok()) out.add(std::move(*s));
  }
  return out;
}

bool hasAllKeys(const labels::LabelSet& nodeLabels, const std::vector<Constraint>& constraints) {
  for (const Constraint& c : constraints) {
    if (!nodeLabels.find(c.topologyKey)) return false;
  }
  return true;
}

NodeInclusion::NodeInclusion(const api::Pod& pod)
    : pod_(&pod),
      affinity_free_(pod.spec.nodeSelector.empty() && podRequiredAffinity(pod) == nullptr),
      required_(pod.spec.nodeSelector, podRequiredAffinity(pod)) {}

bool NodeInclusion::includes(const Constraint& c, const labels::LabelSet& nodeLabels,
                             std::string_view nodeName, std::span<const api::Taint> taints) const {
  if (c.honorNodeAffinity && !required_.matches(nodeLabels, nodeName)) return false;
  if (c.honorNodeTaints) {
    for (const api::Taint& t : taints) {
      if (t.effect != api::kTaintEffectNoSchedule && t.effect != api::kTaintEffectNoExecute) {
        continue;
      }
      if (!labels::toleratesAny(pod_->spec.tolerations, t)) return false;
    }
  }
  return true;
}

bool countsPod(const api::Pod& pod, const SpreadSelector& selector, std::string_view ns) {
  // Terminating pods are on their way out (kubernetes#87621).
  if (!selector.countsPods() || pod.metadata.deletionTimestamp || pod.metadata.namespace_ != ns) {
    return false;
  }
  return selector.matches(pod.metadata.labels);
}

int64_t countMatchingPods(const std::vector<framework::PodInfoPtr>& pods,
                          const SpreadSelector& selector, std::string_view ns) {
  if (!selector.countsPods()) return 0;
  int64_t n = 0;
  for (const framework::PodInfoPtr& p : pods) {
    if (countsPod(**p, selector, ns)) ++n;
  }
  return n;
}

}  // namespace berth::plugins::podtopologyspread
