#include "pkg/metrics/pod_resources.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace berth::metrics {
namespace {

api::ResourceList list(std::initializer_list<std::pair<const char*, const char*>> items) {
  api::ResourceList out;
  for (const auto& [name, text] : items) out[name] = *resource::Quantity::parse(text);
  return out;
}

api::Container container(api::ResourceList requests, api::ResourceList limits,
                         std::string restartPolicy = "") {
  api::Container c;
  c.name = "c";
  c.resources = {std::move(requests), std::move(limits)};
  c.restartPolicy = std::move(restartPolicy);
  return c;
}

api::PodPtr pod(const std::string& name, const std::string& node, api::PodSpec spec,
                std::string phase = "Running") {
  auto p = std::make_shared<api::Pod>();
  p->metadata.namespace_ = "team";
  p->metadata.name = name;
  p->spec = std::move(spec);
  p->spec.nodeName = node;
  p->spec.schedulerName = "berth";
  p->status.phase = std::move(phase);
  return p;
}

std::string str(const api::ResourceList& l, const std::string& name) {
  auto it = l.find(name);
  return it == l.end() ? "-" : it->second.toString();
}

TEST(PodResources, AddsContainersSidecarsTheLargestInitStepAndOverhead) {
  api::PodSpec spec;
  spec.containers = {container(list({{"cpu", "100m"}, {"memory", "64Mi"}}), list({{"cpu", "1"}})),
                     container(list({{"cpu", "200m"}}), {})};
  spec.initContainers = {container(list({{"cpu", "50m"}}), {}, "Always"),          // a sidecar
                         container(list({{"cpu", "2"}, {"memory", "1Gi"}}), {})};  // init step
  spec.overhead = list({{"cpu", "10m"}, {"memory", "1Mi"}});
  const PodResources r = podRequestsAndLimits(*pod("p", "n1", spec));
  // Steady state 350m; the init step needs 2 + the 50m sidecar started before it.
  EXPECT_EQ(str(r.requests, "cpu"), "2060m");
  EXPECT_EQ(str(r.requests, "memory"), "1025Mi");
  // Overhead adds only to limits that are set.
  EXPECT_EQ(str(r.limits, "cpu"), "1010m");
  EXPECT_EQ(str(r.limits, "memory"), "-");
}

TEST(PodResources, PodLevelResourcesReplaceTheContainersForCpuMemoryAndHugepages) {
  api::PodSpec spec;
  spec.containers = {container(list({{"cpu", "100m"}, {"nvidia.com/gpu", "1"}}), {})};
  spec.resources = api::ResourceRequirements{list({{"cpu", "3"}, {"nvidia.com/gpu", "4"}}), {}};
  const PodResources r = podRequestsAndLimits(*pod("p", "n1", spec));
  EXPECT_EQ(str(r.requests, "cpu"), "3");
  EXPECT_EQ(str(r.requests, "nvidia.com/gpu"), "1");  // not a pod-level resource
}

TEST(PodResources, ExposesUpstreamsSeriesAndSkipsTerminalPodsAndZeroes) {
  api::PodSpec spec;
  spec.priority = 100;
  spec.containers = {container(list({{"cpu", "250m"}, {"memory", "1Gi"}, {"example.com/x", "0"}}),
                               list({{"memory", "2Gi"}, {"hugepages-2Mi", "4Mi"}}))};
  api::PodSpec done;
  done.containers = {container(list({{"cpu", "1"}}), {})};
  api::PodSpec pending;
  pending.containers = {container(list({{"attachable-volumes-csi-x", "2"}}), {})};
  const std::string text = exposePodResources(
      {pod("web", "n1", spec), pod("job", "n1", done, "Succeeded"), pod("new", "", pending)});
  EXPECT_NE(text.find("# TYPE kube_pod_resource_request gauge\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# HELP kube_pod_resource_limit [STABLE] Resources limit for workloads on "
                      "the cluster, broken down by pod."),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(kube_pod_resource_request{namespace="team",node="n1",pod="web",)"
                      R"(priority="100",resource="cpu",scheduler="berth",unit="cores"} 0.25)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(kube_pod_resource_request{namespace="team",node="n1",pod="web",)"
                      R"(priority="100",resource="memory",scheduler="berth",unit="bytes"} )"
                      "1073741824"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(kube_pod_resource_limit{namespace="team",node="n1",pod="web",)"
                      R"(priority="100",resource="hugepages-2Mi",scheduler="berth",unit="bytes"} )"
                      "4194304"),
            std::string::npos)
      << text;
  // An unscheduled pod counts (with an empty node); a terminal bound pod and zeroes do not.
  EXPECT_NE(text.find(R"(kube_pod_resource_request{namespace="team",node="",pod="new",)"
                      R"(priority="",resource="attachable-volumes-csi-x",scheduler="berth",)"
                      R"(unit="integer"} 2)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("pod=\"job\""), std::string::npos) << text;
  EXPECT_EQ(text.find("example.com/x"), std::string::npos) << text;
}

TEST(PodResources, NoPodsMeansNoFamilies) { EXPECT_EQ(exposePodResources({}), ""); }

}  // namespace
}  // namespace berth::metrics
