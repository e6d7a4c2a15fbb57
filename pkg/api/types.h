#pragma once
// The Kubernetes objects a scheduler reads, as typed C++ values (the fields of k8s.io/api/core/v1
// that scheduling uses; everything else is ignored on decode). Objects are immutable once decoded
// and are shared as std::shared_ptr<const T>; to change one (e.g. assume a pod onto a node) copy it
// first.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/resource/quantity.h"

namespace berth::api {

// Time as microseconds since the Unix epoch (metav1.Time has seconds, MicroTime microseconds).
struct Timestamp {
  int64_t micros = 0;
  friend auto operator<=>(const Timestamp&, const Timestamp&) = default;
};

using ResourceList = std::map<std::string, resource::Quantity>;
using StringMap = std::map<std::string, std::string>;

struct OwnerReference {
  std::string apiVersion;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
};

struct ObjectMeta {
  std::string name;
  std::string namespace_;  // "namespace" is a keyword
  std::string uid;
  std::string resourceVersion;
  StringMap labels;
  StringMap annotations;
  std::optional<Timestamp> creationTimestamp;
  std::optional<Timestamp> deletionTimestamp;
  std::vector<OwnerReference> ownerReferences;
};

// --- Selectors -----------------------------------------------------------------------------------

struct LabelSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist
  std::vector<std::string> values;
};

struct LabelSelector {
  StringMap matchLabels;
  std::vector<LabelSelectorRequirement> matchExpressions;
};

enum class NodeSelectorOperator { In, NotIn, Exists, DoesNotExist, Gt, Lt };

struct NodeSelectorRequirement {
  std::string key;
  NodeSelectorOperator op = NodeSelectorOperator::In;
  std::vector<std::string> values;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> matchExpressions;  // on node labels
  std::vector<NodeSelectorRequirement> matchFields;       // on node fields (metadata.name only)
};

struct NodeSelector {
  std::vector<NodeSelectorTerm> nodeSelectorTerms;  // ORed
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;  // 1..100
  NodeSelectorTerm preference;
};

struct NodeAffinity {
  std::optional<NodeSelector> requiredDuringSchedulingIgnoredDuringExecution;
  std::vector<PreferredSchedulingTerm> preferredDuringSchedulingIgnoredDuringExecution;
};

// One pod (anti-)affinity term: the pods matched by labelSelector in `namespaces` (or the
// namespaces matched by namespaceSelector; both empty means the pod's own namespace) and the
// topology domain (nodes sharing topologyKey's value) they run in. matchLabelKeys and
// mismatchLabelKeys are already merged into labelSelector by the API server (v1.33+); they are kept
// for messages only.
struct PodAffinityTerm {
  std::optional<LabelSelector> labelSelector;  // absent selects no pod
  std::vector<std::string> namespaces;
  std::string topologyKey;
  std::optional<LabelSelector> namespaceSelector;  // absent: `namespaces` only; empty: all
  std::vector<std::string> matchLabelKeys;
  std::vector<std::string> mismatchLabelKeys;
};

struct WeightedPodAffinityTerm {
  int32_t weight = 0;  // 1..100
  PodAffinityTerm podAffinityTerm;
};

// Used for both podAffinity and podAntiAffinity.
struct PodAffinity {
  std::vector<PodAffinityTerm> requiredDuringSchedulingIgnoredDuringExecution;
  std::vector<WeightedPodAffinityTerm> preferredDuringSchedulingIgnoredDuringExecution;
};

struct Affinity {
  std::optional<NodeAffinity> nodeAffinity;
  std::optional<PodAffinity> podAffinity;
  std::optional<PodAffinity> podAntiAffinity;
};

// spec.topologySpreadConstraints[]. Enum fields stay strings: PodTopologySpread validates them in
// PreFilter, so one bad pod is reported rather than dropped by the decoder.
struct TopologySpreadConstraint {
  int32_t maxSkew = 0;
  std::string topologyKey;
  std::string whenUnsatisfiable;  // DoNotSchedule or ScheduleAnyway
  std::optional<LabelSelector> labelSelector;
  std::optional<int32_t> minDomains;
  std::optional<std::string> nodeAffinityPolicy;  // Honor (default) or Ignore
  std::optional<std::string> nodeTaintsPolicy;    // Ignore (default) or Honor
  std::vector<std::string> matchLabelKeys;
};

// --- Taints and tolerations ----------------------------------------------------------------------

// v1.TaintEffect values.
inline constexpr std::string_view kTaintEffectNoSchedule = "NoSchedule";
inline constexpr std::string_view kTaintEffectPreferNoSchedule = "PreferNoSchedule";
inline constexpr std::string_view kTaintEffectNoExecute = "NoExecute";

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // one of the kTaintEffect values
};

struct Toleration {
  std::string key;                  // empty with operator Exists: tolerates everything
  std::string operator_ = "Equal";  // Equal or Exists; empty means Equal
  std::string value;
  std::string effect;  // empty: all effects
  std::optional<int64_t> tolerationSeconds;
};

// --- Pods ----------------------------------------------------------------------------------------

struct ResourceRequirements {
  ResourceList requests;
  ResourceList limits;
};

struct ContainerPort {
  std::string name;
  int32_t containerPort = 0;
  int32_t hostPort = 0;
  std::string protocol = "TCP";
  std::string hostIP;
};

struct Container {
  std::string name;
  std::string image;
  ResourceRequirements resources;
  std::vector<ContainerPort> ports;
  std::string restartPolicy;  // "Always" on an init container makes it a sidecar
};

// A pod volume: its name and which volume source it uses (the one source field set, e.g.
// "persistentVolumeClaim", "emptyDir", "csi"), with the fields placement depends on.
struct Volume {
  std::string name;
  std::string source;     // "" when no source field is set
  std::string claimName;  // persistentVolumeClaim.claimName
  bool readOnly = false;  // the source's readOnly, where it has one
};

// spec.resourceClaims[] (dynamic resource allocation): only the name matters to berth today.
struct PodResourceClaim {
  std::string name;
};

struct PodSpec {
  std::string schedulerName;  // defaulted by the API server to "default-scheduler"
  std::string nodeName;
  StringMap nodeSelector;
  std::optional<Affinity> affinity;
  std::vector<Toleration> tolerations;
  std::optional<int32_t> priority;
  std::string priorityClassName;
  // "Never" keeps the pod from preempting others; empty or "PreemptLowerPriority" lets it.
  std::string preemptionPolicy;
  std::vector<Container> initContainers;
  std::vector<Container> containers;
  ResourceList overhead;
  bool hostNetwork = false;
  std::vector<std::string> schedulingGates;  // names of spec.schedulingGates
  std::vector<TopologySpreadConstraint> topologySpreadConstraints;
  std::vector<Volume> volumes;
  std::vector<PodResourceClaim> resourceClaims;
  std::optional<ResourceRequirements> resources;  // pod-level resources (PodLevelResources)
};

struct PodCondition {
  std::string type;
  std::string status;
  std::string reason;
  std::string message;
  std::optional<Timestamp> lastTransitionTime;
};

// v1.PodPhase values.
inline constexpr std::string_view kPodPending = "Pending";
inline constexpr std::string_view kPodRunning = "Running";
inline constexpr std::string_view kPodSucceeded = "Succeeded";
inline constexpr std::string_view kPodFailed = "Failed";
inline constexpr std::string_view kPodUnknown = "Unknown";

struct PodStatus {
  std::string phase;  // one of the kPod phase values
  std::vector<PodCondition> conditions;
  std::string nominatedNodeName;
  std::optional<Timestamp> startTime;  // when the kubelet started the pod; preemption's tie-break
  std::string reason;                  // e.g. OutOfcpu when kubelet rejected the pod
  std::string message;
};

struct Pod {
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;
};

// --- Nodes ---------------------------------------------------------------------------------------

struct NodeSpec {
  bool unschedulable = false;
  std::vector<Taint> taints;
};

struct NodeCondition {
  std::string type;
  std::string status;
  std::string reason;
  std::string message;
};

struct ContainerImage {
  std::vector<std::string> names;
  int64_t sizeBytes = 0;
};

struct NodeStatus {
  ResourceList capacity;
  ResourceList allocatable;
  std::vector<NodeCondition> conditions;
  std::vector<ContainerImage> images;
};

struct Node {
  ObjectMeta metadata;
  NodeSpec spec;
  NodeStatus status;
};

// --- Objects PodTopologySpread and InterPodAffinity read ----------------------------------------

struct Namespace {
  ObjectMeta metadata;
};

struct Service {
  ObjectMeta metadata;
  StringMap selector;  // spec.selector; empty selects nothing
};

// ReplicaSets, StatefulSets and ReplicationControllers: only their pod selector matters here.
struct ReplicaSet {
  ObjectMeta metadata;
  std::optional<LabelSelector> selector;  // spec.selector
};

struct StatefulSet {
  ObjectMeta metadata;
  std::optional<LabelSelector> selector;  // spec.selector
};

struct ReplicationController {
  ObjectMeta metadata;
  StringMap selector;  // spec.selector (a plain map for RCs)
};

// policy/v1 PodDisruptionBudget: what preemption reads (upstream uses the status the disruption
// controller maintains, not minAvailable/maxUnavailable).
struct PodDisruptionBudget {
  ObjectMeta metadata;
  std::optional<LabelSelector> selector;  // spec.selector; absent or empty matches no pod here
  int32_t disruptionsAllowed = 0;         // status.disruptionsAllowed
  // status.disruptedPods: names of pods already being disrupted (to their eviction times), which
  // preemption does not count again.
  StringMap disruptedPods;
};

using PodPtr = std::shared_ptr<const Pod>;
using NodePtr = std::shared_ptr<const Node>;
using NamespacePtr = std::shared_ptr<const Namespace>;
using ServicePtr = std::shared_ptr<const Service>;
using ReplicaSetPtr = std::shared_ptr<const ReplicaSet>;
using StatefulSetPtr = std::shared_ptr<const StatefulSet>;
using ReplicationControllerPtr = std::shared_ptr<const ReplicationController>;
using PodDisruptionBudgetPtr = std::shared_ptr<const PodDisruptionBudget>;

// "namespace/name", as kubectl and kube-scheduler name pods in messages.
inline std::string podKey(const Pod& pod) {
  return pod.metadata.namespace_ + "/" + pod.metadata.name;
}

// A pod that has finished (Succeeded or Failed) holds no resources and is never scheduled again.
inline bool isTerminal(const Pod& pod) {
  return pod.status.phase == "Succeeded" || pod.status.phase == "Failed";
}

// A pod with spec.nodeName set (by any scheduler, or by hand) is bound: only the cache counts it.
inline bool isAssigned(const Pod& pod) { return !pod.spec.nodeName.empty(); }

// kube-scheduler's pod informer leaves terminal pods out: their end arrives as a delete.
inline constexpr const char* kNonTerminalPodsSelector =
    "status.phase!=Succeeded,status.phase!=Failed";

}  // namespace berth::api
