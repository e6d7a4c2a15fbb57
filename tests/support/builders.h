#pragma once
// Test builders in the style of upstream's pkg/scheduler/testing/wrappers.go, and a small harness
// that runs a profile's plugins through the real runtime over a real Snapshot:
//
//   auto pod = MakePod().name("web").req({{"cpu", "100m"}}).toleration("gpu", "Exists", "", "")
//                  .obj();
//   auto node = MakeNode().name("n1").label("zone", "a").allocatable({{"cpu", "4"}}).obj();
//
// A quantity literal that does not parse throws std::invalid_argument naming it, which GoogleTest
// reports as a failure of the running test.

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/config/config.h"
#include "pkg/framework/cycle_state.h"
#include "pkg/framework/handle.h"
#include "pkg/framework/pod_info.h"
#include "pkg/framework/runtime/framework.h"
#include "pkg/framework/snapshot.h"
#include "pkg/framework/status.h"

namespace berth::test {

// Resource name -> quantity literal, e.g. {{"cpu", "100m"}, {"memory", "1Gi"}}.
using Quantities = std::vector<std::pair<std::string, std::string>>;

resource::Quantity quantity(std::string_view text);
api::ResourceList resourceList(const Quantities& quantities);

class PodWrapper {
 public:
  PodWrapper();

  PodWrapper& name(std::string name);
  PodWrapper& ns(std::string ns);
  PodWrapper& uid(std::string uid);
  PodWrapper& resourceVersion(std::string rv);
  PodWrapper& label(std::string key, std::string value);
  PodWrapper& schedulerName(std::string name);
  PodWrapper& priority(int32_t priority);
  // Adds a regular container with these requests.
  PodWrapper& req(const Quantities& requests);
  // Adds a regular (run-to-completion) init container with these requests.
  PodWrapper& initReq(const Quantities& requests);
  // Adds a sidecar: an init container with restartPolicy Always.
  PodWrapper& sidecarReq(const Quantities& requests);
  PodWrapper& overhead(const Quantities& overhead);
  PodWrapper& nodeSelector(api::StringMap selector);
  PodWrapper& toleration(std::string key, std::string op, std::string value, std::string effect);
  // Required node affinity: requirements are added to the current term (ANDed); orTerm() starts a
  // new term (terms are ORed).
  PodWrapper& requiredNodeAffinity(std::string key, api::NodeSelectorOperator op,
                                   std::vector<std::string> values);
  PodWrapper& requiredNodeAffinityIn(std::string key, std::vector<std::string> values);
  // matchFields metadata.name In names, on the current term (the API allows exactly one name).
  PodWrapper& matchFieldsName(std::vector<std::string> names);
  PodWrapper& orTerm();
  // Appends a whole required term (ORed with the others).
  PodWrapper& requiredTerm(api::NodeSelectorTerm term);
  // A required affinity with no terms at all (which matches no node).
  PodWrapper& requiredNodeAffinityNoTerms();
  PodWrapper& preferredNodeAffinity(int32_t weight, std::string key, api::NodeSelectorOperator op,
                                    std::vector<std::string> values);
  // A host port on the last regular container (one is added if there is none).
  PodWrapper& hostPort(int32_t port, std::string protocol = "TCP", std::string ip = "");
  // A host port on a new init container: a sidecar if `sidecar`, else a run-to-completion one.
  PodWrapper& initHostPort(bool sidecar, int32_t port, std::string protocol = "TCP",
                           std::string ip = "");
  PodWrapper& node(std::string nodeName);
  PodWrapper& nominatedNode(std::string nodeName);
  PodWrapper& phase(std::string phase);
  // Creation time in microseconds since the epoch.
  PodWrapper& created(int64_t micros);

  // Escape hatch for fields without a setter.
  PodWrapper& mutate(const std::function<void(api::Pod&)>& fn);

  api::PodPtr obj() const;
  framework::PodInfoPtr info() const;
  // The pod as kube-apiserver writes it (api::encodePod), for tests that talk JSON or HTTP.
  nlohmann::json json() const;
  const api::Pod& pod() const { return pod_; }

 private:
  api::NodeSelectorTerm& currentTerm();

  api::Pod pod_;
  bool new_term_ = false;
};

class NodeWrapper {
 public:
  NodeWrapper& name(std::string name);
  NodeWrapper& label(std::string key, std::string value);
  NodeWrapper& taint(std::string key, std::string value, std::string effect);
  NodeWrapper& unschedulable(bool value = true);
  // Sets status.allocatable (and capacity, as upstream's wrapper does).
  NodeWrapper& allocatable(const Quantities& allocatable);

  api::NodePtr obj() const;
  // The node as kube-apiserver writes it (api::encodeNode).
  nlohmann::json json() const;
  const api::Node& node() const { return node_; }

 private:
  api::Node node_;
};

inline PodWrapper MakePod() { return PodWrapper(); }
inline NodeWrapper MakeNode() { return NodeWrapper(); }

// --- Frameworks and snapshots --------------------------------------------------------------------

// A profile named "test" with PrioritySort and DefaultBinder plus `multiPoint` (in order), each
// expanded to the extension points it implements. Weight 0 leaves the weight unset.
config::Profile profileWith(std::vector<config::PluginRef> multiPoint);
config::PluginRef plugin(std::string_view name, int32_t weight = 0);

// Builds the profile from plugins::makeInTreeRegistry().
util::Result<framework::runtime::FrameworkPtr> makeFramework(
    const config::Profile& profile, framework::PodBinder* binder = nullptr);
// Same, but throws std::invalid_argument with the error message if the profile is invalid.
framework::runtime::FrameworkPtr mustMakeFramework(const config::Profile& profile,
                                                   framework::PodBinder* binder = nullptr);

// Nodes in order, bound pods placed on their spec.nodeName (pods bound elsewhere are dropped).
framework::Snapshot makeSnapshot(const std::vector<api::NodePtr>& nodes,
                                 const std::vector<api::PodPtr>& boundPods = {});

// A PodBinder that records every bind and answers with a fixed status.
class FakeBinder final : public framework::PodBinder {
 public:
  framework::Status bind(const api::Pod& pod, const std::string& node) override;
  std::vector<std::pair<std::string, std::string>> bound;  // (namespace/name, node)
  framework::Code answer = framework::Code::Success;
};

// Runs one profile's PreFilter/Filter and PreScore/Score/NormalizeScore over a snapshot, as the
// scheduling cycle does, without choosing a node.
class Harness {
 public:
  Harness(const config::Profile& profile, const std::vector<api::NodePtr>& nodes,
          const std::vector<api::PodPtr>& boundPods = {});

  struct FilterRun {
    framework::Status preFilter;
    std::optional<std::set<std::string>> preFilterNodes;
    // Filter on every node of the snapshot, in order, whatever PreFilter said (also on nodes it
    // narrowed away or after it rejected the pod, as upstream's plugin tests do).
    std::vector<framework::Status> filter;
    framework::CycleState state;  // after PreFilter: e.g. state.filterSkipped(plugin)
  };
  FilterRun filter(const api::PodPtr& pod) const;

  struct ScoreRun {
    framework::Status status;  // PreScore or Score failure, else Success
    framework::runtime::ScoreTable table;
    // Normalized score of one plugin per node, in snapshot order; empty if that plugin was skipped.
    std::vector<int64_t> of(std::string_view plugin) const;
  };
  // PreScore + Score on every node of the snapshot, as if all were feasible.
  ScoreRun score(const api::PodPtr& pod) const;

  const framework::runtime::Framework& fw() const { return *fw_; }
  const framework::Snapshot& snapshot() const { return snapshot_; }
  framework::Snapshot& snapshot() { return snapshot_; }

 private:
  framework::runtime::FrameworkPtr fw_;
  framework::Snapshot snapshot_;
};

}  // namespace berth::test
