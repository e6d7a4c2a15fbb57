// Damaged input must never crash the decoder: every truncation and a few thousand byte mutations
// of valid files either decode or fail with a message.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "pkg/api/decode.h"

namespace berth::api {
namespace {

constexpr std::string_view kPodJson = R"({"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "web-1", "namespace": "default", "labels": {"app": "web"},
               "creationTimestamp": "2024-05-01T10:00:00.5+02:00",
               "ownerReferences": [{"kind": "ReplicaSet", "name": "web", "controller": true}]},
  "spec": {"schedulerName": "berth", "priority": 10, "hostNetwork": false,
           "nodeSelector": {"disk": "ssd"},
           "affinity": {"nodeAffinity": {
             "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
               {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}],
                "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n9"]}]}]},
             "preferredDuringSchedulingIgnoredDuringExecution": [
               {"weight": 5, "preference": {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}}]}},
           "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}],
           "initContainers": [{"name": "i", "restartPolicy": "Always", "resources": {"requests": {"cpu": 0.5}}}],
           "containers": [{"name": "c", "image": "nginx",
                           "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}, "limits": {"cpu": 2}},
                           "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "UDP"}]}],
           "overhead": {"cpu": "10m"}, "schedulingGates": [{"name": "g"}]},
  "status": {"phase": "Pending", "nominatedNodeName": "n1",
             "conditions": [{"type": "PodScheduled", "status": "False",
                             "lastTransitionTime": "2024-05-01T10:00:01Z"}]}},
 {"apiVersion": "v1", "kind": "Node",
  "metadata": {"name": "n1"},
  "spec": {"unschedulable": true, "taints": [{"key": "a", "value": "b", "effect": "NoSchedule"}]},
  "status": {"capacity": {"cpu": "4", "pods": 110}, "allocatable": {"memory": "16Gi"},
             "conditions": [{"type": "Ready", "status": "True"}],
             "images": [{"names": ["nginx"], "sizeBytes": 1000}]}}]}
)";

constexpr std::string_view kPodYaml = R"(apiVersion: v1
kind: Pod
metadata:
  name: web-1
  namespace: default
  labels: {app: web, "tier": 'front'}
  creationTimestamp: "2024-05-01T10:00:00Z"
  annotations:
    note: |
      multi
      line
spec:
  schedulerName: berth
  priority: 10
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: zone, operator: In, values: [a, b]}
  tolerations:
  - key: k
    operator: Exists
    effect: NoExecute
    tolerationSeconds: 30
  containers:
  - name: c
    image: nginx
    resources:
      requests: &req
        cpu: 100m
        memory: 1Gi
      limits: *req
    ports:
    - containerPort: 80
      hostPort: 8080
status:
  phase: Pending
---
apiVersion: v1
kind: Node
metadata:
  name: n1
spec:
  taints:
  - key: a
    effect: NoSchedule
status:
  capacity:
    cpu: 4
    pods: "110"
)";

// Runs the whole file pipeline; the only requirement is an answer, and a message with a failure.
void expectAnswer(std::string_view text) {
  auto set = decodeObjects(text);
  if (!set.ok()) {
    ASSERT_FALSE(set.error().message.empty()) << text;
  }
}

TEST(DecodeRobustness, SamplesUsedForRobustnessDecode) {
  for (std::string_view text : {kPodJson, kPodYaml}) {
    auto set = decodeObjects(text);
    ASSERT_TRUE(set.ok()) << set.error().message;
    EXPECT_EQ(set->pods.size(), 1u);
    EXPECT_EQ(set->nodes.size(), 1u);
  }
}

TEST(DecodeRobustness, EveryTruncationDecodesOrFails) {
  for (std::string_view text : {kPodJson, kPodYaml}) {
    for (size_t n = 0; n <= text.size(); ++n) {
      expectAnswer(text.substr(0, n));
      if (::testing::Test::HasFatalFailure()) {
        return;
      }
    }
  }
}

// xorshift64*: deterministic, so a failure reproduces.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 2685821657736338717ULL;
  }
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }

 private:
  uint64_t state_;
};

TEST(DecodeRobustness, RandomByteMutationsDecodeOrFail) {
  // Bytes that matter to the grammars, plus arbitrary ones.
  constexpr std::string_view kInteresting =
      "{}[]\":,-.0123456789eE+ \n\t#&*!|>'~\\nulltruefalse\x80\xff";
  Rng rng(0x5eed1234abcdULL);
  for (std::string_view sample : {kPodJson, kPodYaml}) {
    for (int round = 0; round < 2000; ++round) {
      std::string text(sample);
      const int edits = 1 + static_cast<int>(rng.below(4));
      for (int e = 0; e < edits && !text.empty(); ++e) {
        const size_t at = rng.below(text.size());
        const char byte = rng.below(2) == 0 ? kInteresting[rng.below(kInteresting.size())]
                                            : static_cast<char>(rng.below(256));
        switch (rng.below(3)) {
          case 0:
            text[at] = byte;
            break;
          case 1:
            text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), byte);
            break;
          default:
            text.erase(at, 1 + rng.below(8));
            break;
        }
      }
      SCOPED_TRACE(round);
      expectAnswer(text);
      if (::testing::Test::HasFatalFailure()) {
        return;
      }
    }
  }
}

}  // namespace
}  // namespace berth::api
