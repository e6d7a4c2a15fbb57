#pragma once
// /metrics/resources: kube-scheduler's kube_pod_resource_request and kube_pod_resource_limit
// (pkg/scheduler/metrics/resources, STABLE), computed at scrape time from the pods the scheduler
// watches, as upstream's collector reads its pod lister: per pod and resource, what the scheduler
// and the kubelet expect it to use (containers, sidecars and the largest init step, pod-level
// resources where set, plus overhead), labelled namespace, pod, node, scheduler, priority,
// resource and unit. Pods bound to a node and Succeeded or Failed are left out; zero values are
// not reported.

#include <string>
#include <vector>

#include "pkg/api/types.h"

namespace berth::metrics {

// Upstream's PodRequests and PodLimits for one pod.
struct PodResources {
  api::ResourceList requests;
  api::ResourceList limits;
};
PodResources podRequestsAndLimits(const api::Pod& pod);

// The text exposition of the two families over `pods` (nothing else, as upstream's handler).
std::string exposePodResources(const std::vector<api::PodPtr>& pods);

}  // namespace berth::metrics
