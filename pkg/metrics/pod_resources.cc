#include "pkg/metrics/pod_resources.h"

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <cstdint>
#include <limits>
#include <string_view>

namespace berth::metrics {
namespace {

using api::ResourceList;

void addInto(ResourceList& into, const ResourceList& more) {
  for (const auto& [name, q] : more) into[name].add(q);
}

void maxInto(ResourceList& into, const ResourceList& other) {
  for (const auto& [name, q] : other) {
    auto [it, inserted] = into.try_emplace(name, q);
    if (!inserted && q.cmp(it->second) > 0) it->second = q;
  }
}

// Upstream's aggregation over the containers of `pod`, for requests or for limits.
ResourceList aggregate(const api::Pod& pod, ResourceList api::ResourceRequirements::*which) {
  ResourceList total;
  for (const api::Container& c : pod.spec.containers) addInto(total, c.resources.*which);
  // Sidecars run next to everything started after them; a regular init step needs its own
  // amount plus the sidecars before it. The pod needs the larger of the steady state and the
  // largest step.
  ResourceList sidecars;
  ResourceList initMax;
  for (const api::Container& c : pod.spec.initContainers) {
    if (c.restartPolicy == "Always") {
      addInto(total, c.resources.*which);
      addInto(sidecars, c.resources.*which);
      maxInto(initMax, sidecars);
    } else {
      ResourceList step = c.resources.*which;
      addInto(step, sidecars);
      maxInto(initMax, step);
    }
  }
  maxInto(total, initMax);
  return total;
}

// IsSupportedPodLevelResource: cpu, memory and hugepages.
bool podLevelResource(std::string_view name) {
  return name == "cpu" || name == "memory" || name.starts_with("hugepages-");
}

// spec.resources, where set for a supported resource, replaces the containers' aggregate.
void applyPodLevel(ResourceList& total, const ResourceList& podLevel) {
  for (const auto& [name, q] : podLevel) {
    if (podLevelResource(name)) total[name] = q;
  }
}

std::string unitOf(std::string_view resource) {
  if (resource == "cpu") return "cores";
  if (resource == "memory" || resource == "storage" || resource == "ephemeral-storage" ||
      resource.starts_with("hugepages-")) {
    return "bytes";
  }
  if (resource.starts_with("attachable-volumes-")) return "integer";
  return "";
}

// Quantity.AsApproximateFloat64: milli precision where it fits, whole units beyond.
double approximate(const resource::Quantity& q) {
  const int64_t milli = q.milliValue();
  if (milli == std::numeric_limits<int64_t>::max() ||
      milli == std::numeric_limits<int64_t>::min()) {
    return static_cast<double>(q.value());
  }
  return static_cast<double>(milli) / 1000.0;
}

prometheus::MetricFamily family(std::string name, std::string help) {
  prometheus::MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = prometheus::MetricType::Gauge;
  return f;
}

}  // namespace

PodResources podRequestsAndLimits(const api::Pod& pod) {
  PodResources out{aggregate(pod, &api::ResourceRequirements::requests),
                   aggregate(pod, &api::ResourceRequirements::limits)};
  if (pod.spec.resources) {
    applyPodLevel(out.requests, pod.spec.resources->requests);
    applyPodLevel(out.limits, pod.spec.resources->limits);
  }
  // Overhead adds to every request, but only to the limits that are set.
  addInto(out.requests, pod.spec.overhead);
  for (const auto& [name, q] : pod.spec.overhead) {
    if (auto it = out.limits.find(name); it != out.limits.end()) it->second.add(q);
  }
  return out;
}

std::string exposePodResources(const std::vector<api::PodPtr>& pods) {
  constexpr std::string_view kHelpTail =
      " on the cluster, broken down by pod. This shows the resource usage the scheduler and "
      "kubelet expect per pod for resources along with the unit for the resource if any.";
  // Families in name order, as client_golang gathers them.
  std::vector<prometheus::MetricFamily> families{
      family("kube_pod_resource_limit",
             "[STABLE] Resources limit for workloads" + std::string(kHelpTail)),
      family("kube_pod_resource_request",
             "[STABLE] Resources requested by workloads" + std::string(kHelpTail))};
  for (const api::PodPtr& pod : pods) {
    const bool terminal = !pod->spec.nodeName.empty() && (pod->status.phase == api::kPodSucceeded ||
                                                          pod->status.phase == api::kPodFailed);
    if (terminal) continue;
    const PodResources amounts = podRequestsAndLimits(*pod);
    const std::string priority =
        pod->spec.priority ? std::to_string(*pod->spec.priority) : std::string();
    for (auto [f, list] :
         {std::pair{&families[0], &amounts.limits}, {&families[1], &amounts.requests}}) {
      for (const auto& [name, q] : *list) {
        if (q.isZero()) continue;
        prometheus::ClientMetric m;
        // Labels in name order, as the text format writes them.
        m.label = {{"namespace", pod->metadata.namespace_},
                   {"node", pod->spec.nodeName},
                   {"pod", pod->metadata.name},
                   {"priority", priority},
                   {"resource", name},
                   {"scheduler", pod->spec.schedulerName},
                   {"unit", unitOf(name)}};
        m.gauge.value = approximate(q);
        f->metric.push_back(std::move(m));
      }
    }
  }
  // client_golang writes no family without series.
  std::erase_if(families, [](const prometheus::MetricFamily& f) { return f.metric.empty(); });
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace berth::metrics
