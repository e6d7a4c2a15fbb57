#include "pkg/api/decode.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace berth::api {
namespace {

using nlohmann::json;

// A pod as `kubectl get pod web-1 -o json` prints it, with fields berth ignores left in.
constexpr std::string_view kPodJson = R"({
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {
    "annotations": {"kubectl.kubernetes.io/restartedAt": "2024-05-01T09:00:00Z"},
    "creationTimestamp": "2024-05-01T10:00:00Z",
    "generateName": "web-",
    "labels": {"app": "web", "pod-template-hash": "5d8f7c6b9"},
    "managedFields": [{"apiVersion": "v1", "fieldsType": "FieldsV1",
                       "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}},
                       "manager": "kube-controller-manager", "operation": "Update",
                       "time": "2024-05-01T10:00:00Z"}],
    "name": "web-1",
    "namespace": "default",
    "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": true, "controller": true,
                         "kind": "ReplicaSet", "name": "web-5d8f7c6b9",
                         "uid": "6f1c0c8e-0000-4000-8000-000000000001"}],
    "resourceVersion": "12345",
    "uid": "0b7c3f4e-0000-4000-8000-000000000002"
  },
  "spec": {
    "affinity": {
      "nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
          {"preference": {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]},
           "weight": 20}
        ],
        "requiredDuringSchedulingIgnoredDuringExecution": {
          "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"]},
                                  {"key": "gpu", "operator": "DoesNotExist"},
                                  {"key": "cores", "operator": "Gt", "values": ["3"]}]},
            {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n9"]}]}
          ]
        }
      },
      "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}
    },
    "containers": [
      {"image": "nginx:1.25", "imagePullPolicy": "IfNotPresent", "name": "nginx",
       "ports": [{"containerPort": 80, "name": "http", "protocol": "TCP"},
                 {"containerPort": 53, "hostPort": 5353, "hostIP": "10.0.0.1", "protocol": "UDP"},
                 {"containerPort": 8080}],
       "resources": {"limits": {"cpu": "500m", "memory": "256Mi"},
                     "requests": {"cpu": "100m", "memory": "128Mi", "example.com/foo": 2}},
       "terminationMessagePath": "/dev/termination-log",
       "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                         "name": "kube-api-access-abcde", "readOnly": true}]}
    ],
    "dnsPolicy": "ClusterFirst",
    "enableServiceLinks": true,
    "initContainers": [
      {"image": "busybox", "name": "init", "resources": {"requests": {"cpu": 0.25}}},
      {"image": "envoy", "name": "proxy", "restartPolicy": "Always", "resources": {}}
    ],
    "nodeName": "",
    "nodeSelector": {"kubernetes.io/os": "linux"},
    "overhead": {"cpu": "10m"},
    "preemptionPolicy": "PreemptLowerPriority",
    "priority": 1000,
    "priorityClassName": "high",
    "restartPolicy": "Always",
    "schedulerName": "berth",
    "schedulingGates": [{"name": "example.com/quota"}],
    "securityContext": {},
    "serviceAccountName": "default",
    "terminationGracePeriodSeconds": 30,
    "tolerations": [
      {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists",
       "tolerationSeconds": 300},
      {"key": "dedicated", "value": "web", "effect": "NoSchedule"},
      {"operator": "Exists"}
    ],
    "volumes": [{"name": "kube-api-access-abcde", "projected": {"defaultMode": 420, "sources": []}}]
  },
  "status": {
    "conditions": [
      {"lastProbeTime": null, "lastTransitionTime": "2024-05-01T10:00:01Z",
       "message": "0/3 nodes are available: 3 Insufficient cpu.", "reason": "Unschedulable",
       "status": "False", "type": "PodScheduled"}
    ],
    "nominatedNodeName": "n2",
    "phase": "Pending",
    "qosClass": "Burstable"
  }
})";

// The same pod as `kubectl get pod web-1 -o yaml` would write it (fewer of the ignored fields).
constexpr std::string_view kPodYaml = R"(apiVersion: v1
kind: Pod
metadata:
  annotations:
    kubectl.kubernetes.io/restartedAt: "2024-05-01T09:00:00Z"
  creationTimestamp: "2024-05-01T10:00:00Z"
  generateName: web-
  labels:
    app: web
    pod-template-hash: 5d8f7c6b9
  name: web-1
  namespace: default
  ownerReferences:
  - apiVersion: apps/v1
    blockOwnerDeletion: true
    controller: true
    kind: ReplicaSet
    name: web-5d8f7c6b9
    uid: 6f1c0c8e-0000-4000-8000-000000000001
  resourceVersion: "12345"
  uid: 0b7c3f4e-0000-4000-8000-000000000002
spec:
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - preference:
          matchExpressions:
          - key: disk
            operator: In
            values:
            - ssd
        weight: 20
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - key: kubernetes.io/arch
            operator: In
            values:
            - amd64
            - arm64
          - key: gpu
            operator: DoesNotExist
          - key: cores
            operator: Gt
            values:
            - "3"
        - matchFields:
          - key: metadata.name
            operator: NotIn
            values:
            - n9
  containers:
  - image: nginx:1.25
    name: nginx
    ports:
    - containerPort: 80
      name: http
      protocol: TCP
    - containerPort: 53
      hostIP: 10.0.0.1
      hostPort: 5353
      protocol: UDP
    - containerPort: 8080
    resources:
      limits:
        cpu: 500m
        memory: 256Mi
      requests:
        cpu: 100m
        example.com/foo: 2
        memory: 128Mi
  initContainers:
  - image: busybox
    name: init
    resources:
      requests:
        cpu: 0.25
  - image: envoy
    name: proxy
    resources: {}
    restartPolicy: Always
  nodeName: ""
  nodeSelector:
    kubernetes.io/os: linux
  overhead:
    cpu: 10m
  priority: 1000
  priorityClassName: high
  schedulerName: berth
  schedulingGates:
  - name: example.com/quota
  tolerations:
  - effect: NoExecute
    key: node.kubernetes.io/not-ready
    operator: Exists
    tolerationSeconds: 300
  - effect: NoSchedule
    key: dedicated
    value: web
  - operator: Exists
status:
  conditions:
  - lastProbeTime: null
    lastTransitionTime: "2024-05-01T10:00:01Z"
    message: '0/3 nodes are available: 3 Insufficient cpu.'
    reason: Unschedulable
    status: "False"
    type: PodScheduled
  nominatedNodeName: n2
  phase: Pending
  qosClass: Burstable
)";

constexpr std::string_view kNodeJson = R"({
  "apiVersion": "v1",
  "kind": "Node",
  "metadata": {
    "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
    "creationTimestamp": "2024-04-01T08:00:00Z",
    "labels": {"kubernetes.io/hostname": "n1", "topology.kubernetes.io/zone": "z1"},
    "name": "n1",
    "resourceVersion": "777",
    "uid": "11111111-0000-4000-8000-000000000003"
  },
  "spec": {
    "podCIDR": "10.244.1.0/24",
    "taints": [
      {"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"},
      {"effect": "PreferNoSchedule", "key": "dedicated", "value": "infra",
       "timeAdded": "2024-04-01T08:00:00Z"}
    ],
    "unschedulable": true
  },
  "status": {
    "addresses": [{"address": "10.0.0.11", "type": "InternalIP"}],
    "allocatable": {"cpu": "3800m", "ephemeral-storage": "95551679124", "memory": "15225176Ki",
                    "pods": "110"},
    "capacity": {"cpu": "4", "ephemeral-storage": "103682364Ki", "memory": "16266932Ki",
                 "pods": 110},
    "conditions": [
      {"lastHeartbeatTime": "2024-05-01T10:00:00Z", "lastTransitionTime": "2024-04-01T08:00:00Z",
       "message": "kubelet is posting ready status", "reason": "KubeletReady", "status": "True",
       "type": "Ready"}
    ],
    "images": [{"names": ["docker.io/library/nginx@sha256:abc", "docker.io/library/nginx:1.25"],
                "sizeBytes": 70520324},
               {"names": ["registry.k8s.io/pause:3.9"]}],
    "nodeInfo": {"kubeletVersion": "v1.30.0"}
  }
})";

resource::Quantity q(std::string_view text) {
  auto parsed = resource::Quantity::parse(text);
  EXPECT_TRUE(parsed.ok()) << text;
  return parsed.ok() ? *parsed : resource::Quantity();
}

json parse(std::string_view text) {
  auto docs = parseDocuments(text);
  EXPECT_TRUE(docs.ok()) << docs.error().message;
  EXPECT_EQ(docs.ok() ? docs->size() : 0u, 1u);
  return docs.ok() && !docs->empty() ? (*docs)[0] : json();
}

void expectWebPod(const Pod& pod) {
  const ObjectMeta& m = pod.metadata;
  EXPECT_EQ(m.name, "web-1");
  EXPECT_EQ(m.namespace_, "default");
  EXPECT_EQ(m.uid, "0b7c3f4e-0000-4000-8000-000000000002");
  EXPECT_EQ(m.resourceVersion, "12345");
  EXPECT_EQ(m.labels, (StringMap{{"app", "web"}, {"pod-template-hash", "5d8f7c6b9"}}));
  EXPECT_EQ(m.annotations,
            (StringMap{{"kubectl.kubernetes.io/restartedAt", "2024-05-01T09:00:00Z"}}));
  ASSERT_TRUE(m.creationTimestamp.has_value());
  EXPECT_EQ(formatTimestamp(*m.creationTimestamp), "2024-05-01T10:00:00Z");
  EXPECT_FALSE(m.deletionTimestamp.has_value());
  ASSERT_EQ(m.ownerReferences.size(), 1u);
  EXPECT_EQ(m.ownerReferences[0].apiVersion, "apps/v1");
  EXPECT_EQ(m.ownerReferences[0].kind, "ReplicaSet");
  EXPECT_EQ(m.ownerReferences[0].name, "web-5d8f7c6b9");
  EXPECT_EQ(m.ownerReferences[0].uid, "6f1c0c8e-0000-4000-8000-000000000001");
  EXPECT_TRUE(m.ownerReferences[0].controller);

  const PodSpec& s = pod.spec;
  EXPECT_EQ(s.schedulerName, "berth");
  EXPECT_EQ(s.nodeName, "");
  EXPECT_EQ(s.nodeSelector, (StringMap{{"kubernetes.io/os", "linux"}}));
  ASSERT_TRUE(s.affinity.has_value());
  ASSERT_TRUE(s.affinity->nodeAffinity.has_value());
  const NodeAffinity& na = *s.affinity->nodeAffinity;
  ASSERT_TRUE(na.requiredDuringSchedulingIgnoredDuringExecution.has_value());
  const auto& terms = na.requiredDuringSchedulingIgnoredDuringExecution->nodeSelectorTerms;
  ASSERT_EQ(terms.size(), 2u);
  ASSERT_EQ(terms[0].matchExpressions.size(), 3u);
  EXPECT_EQ(terms[0].matchExpressions[0].key, "kubernetes.io/arch");
  EXPECT_EQ(terms[0].matchExpressions[0].op, NodeSelectorOperator::In);
  EXPECT_EQ(terms[0].matchExpressions[0].values, (std::vector<std::string>{"amd64", "arm64"}));
  EXPECT_EQ(terms[0].matchExpressions[1].op, NodeSelectorOperator::DoesNotExist);
  EXPECT_TRUE(terms[0].matchExpressions[1].values.empty());
  EXPECT_EQ(terms[0].matchExpressions[2].op, NodeSelectorOperator::Gt);
  EXPECT_EQ(terms[0].matchExpressions[2].values, (std::vector<std::string>{"3"}));
  EXPECT_TRUE(terms[0].matchFields.empty());
  ASSERT_EQ(terms[1].matchFields.size(), 1u);
  EXPECT_EQ(terms[1].matchFields[0].key, "metadata.name");
  EXPECT_EQ(terms[1].matchFields[0].op, NodeSelectorOperator::NotIn);
  ASSERT_EQ(na.preferredDuringSchedulingIgnoredDuringExecution.size(), 1u);
  EXPECT_EQ(na.preferredDuringSchedulingIgnoredDuringExecution[0].weight, 20);
  EXPECT_EQ(
      na.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key,
      "disk");

  ASSERT_EQ(s.tolerations.size(), 3u);
  EXPECT_EQ(s.tolerations[0].key, "node.kubernetes.io/not-ready");
  EXPECT_EQ(s.tolerations[0].operator_, "Exists");
  EXPECT_EQ(s.tolerations[0].effect, "NoExecute");
  EXPECT_EQ(s.tolerations[0].tolerationSeconds, 300);
  EXPECT_EQ(s.tolerations[1].operator_, "Equal");  // omitted operator means Equal
  EXPECT_EQ(s.tolerations[1].value, "web");
  EXPECT_EQ(s.tolerations[1].effect, "NoSchedule");
  EXPECT_FALSE(s.tolerations[1].tolerationSeconds.has_value());
  EXPECT_EQ(s.tolerations[2].key, "");
  EXPECT_EQ(s.tolerations[2].operator_, "Exists");

  EXPECT_EQ(s.priority, 1000);
  EXPECT_EQ(s.priorityClassName, "high");
  EXPECT_FALSE(s.hostNetwork);
  EXPECT_EQ(s.schedulingGates, (std::vector<std::string>{"example.com/quota"}));
  EXPECT_EQ(s.overhead, (ResourceList{{"cpu", q("10m")}}));

  ASSERT_EQ(s.containers.size(), 1u);
  const Container& c = s.containers[0];
  EXPECT_EQ(c.name, "nginx");
  EXPECT_EQ(c.image, "nginx:1.25");
  EXPECT_EQ(
      c.resources.requests,
      (ResourceList{{"cpu", q("100m")}, {"memory", q("128Mi")}, {"example.com/foo", q("2")}}));
  EXPECT_EQ(c.resources.limits, (ResourceList{{"cpu", q("500m")}, {"memory", q("256Mi")}}));
  EXPECT_EQ(c.restartPolicy, "");
  ASSERT_EQ(c.ports.size(), 3u);
  EXPECT_EQ(c.ports[0].name, "http");
  EXPECT_EQ(c.ports[0].containerPort, 80);
  EXPECT_EQ(c.ports[0].hostPort, 0);
  EXPECT_EQ(c.ports[0].protocol, "TCP");
  EXPECT_EQ(c.ports[1].containerPort, 53);
  EXPECT_EQ(c.ports[1].hostPort, 5353);
  EXPECT_EQ(c.ports[1].hostIP, "10.0.0.1");
  EXPECT_EQ(c.ports[1].protocol, "UDP");
  EXPECT_EQ(c.ports[2].protocol, "TCP");  // defaulted as the API server does

  ASSERT_EQ(s.initContainers.size(), 2u);
  EXPECT_EQ(s.initContainers[0].name, "init");
  EXPECT_EQ(s.initContainers[0].resources.requests, (ResourceList{{"cpu", q("0.25")}}));
  EXPECT_EQ(s.initContainers[1].restartPolicy, "Always");

  const PodStatus& st = pod.status;
  EXPECT_EQ(st.phase, "Pending");
  EXPECT_EQ(st.nominatedNodeName, "n2");
  ASSERT_EQ(st.conditions.size(), 1u);
  EXPECT_EQ(st.conditions[0].type, "PodScheduled");
  EXPECT_EQ(st.conditions[0].status, "False");
  EXPECT_EQ(st.conditions[0].reason, "Unschedulable");
  EXPECT_EQ(st.conditions[0].message, "0/3 nodes are available: 3 Insufficient cpu.");
  ASSERT_TRUE(st.conditions[0].lastTransitionTime.has_value());
  EXPECT_EQ(formatTimestamp(*st.conditions[0].lastTransitionTime), "2024-05-01T10:00:01Z");
}

void expectNodeN1(const Node& node) {
  EXPECT_EQ(node.metadata.name, "n1");
  EXPECT_EQ(node.metadata.namespace_, "");
  EXPECT_EQ(node.metadata.labels.at("topology.kubernetes.io/zone"), "z1");
  EXPECT_TRUE(node.spec.unschedulable);
  ASSERT_EQ(node.spec.taints.size(), 2u);
  EXPECT_EQ(node.spec.taints[0].key, "node-role.kubernetes.io/control-plane");
  EXPECT_EQ(node.spec.taints[0].value, "");
  EXPECT_EQ(node.spec.taints[0].effect, "NoSchedule");
  EXPECT_EQ(node.spec.taints[1].value, "infra");
  EXPECT_EQ(node.spec.taints[1].effect, "PreferNoSchedule");
  EXPECT_EQ(node.status.capacity.at("cpu"), q("4"));
  EXPECT_EQ(node.status.capacity.at("pods"), q("110"));
  EXPECT_EQ(node.status.capacity.at("memory"), q("16266932Ki"));
  EXPECT_EQ(node.status.allocatable.at("cpu"), q("3800m"));
  EXPECT_EQ(node.status.allocatable.size(), 4u);
  ASSERT_EQ(node.status.conditions.size(), 1u);
  EXPECT_EQ(node.status.conditions[0].type, "Ready");
  EXPECT_EQ(node.status.conditions[0].status, "True");
  EXPECT_EQ(node.status.conditions[0].reason, "KubeletReady");
  EXPECT_EQ(node.status.conditions[0].message, "kubelet is posting ready status");
  ASSERT_EQ(node.status.images.size(), 2u);
  EXPECT_EQ(node.status.images[0].names.size(), 2u);
  EXPECT_EQ(node.status.images[0].sizeBytes, 70520324);
  EXPECT_EQ(node.status.images[1].sizeBytes, 0);
}

TEST(Decode, DecodePodReadsKubectlJson) {
  auto pod = decodePod(parse(kPodJson));
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  expectWebPod(*pod);
}

TEST(Decode, DecodePodReadsKubectlYaml) {
  auto pod = decodePod(parse(kPodYaml));
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  expectWebPod(*pod);
}

TEST(Decode, DecodeNodeReadsKubectlJson) {
  auto node = decodeNode(parse(kNodeJson));
  ASSERT_TRUE(node.ok()) << node.error().message;
  expectNodeN1(*node);
}

TEST(Decode, DecodeNodeReadsKubectlYaml) {
  const char* yaml = R"(apiVersion: v1
kind: Node
metadata:
  annotations:
    node.alpha.kubernetes.io/ttl: "0"
  creationTimestamp: "2024-04-01T08:00:00Z"
  labels:
    kubernetes.io/hostname: n1
    topology.kubernetes.io/zone: z1
  name: n1
  resourceVersion: "777"
  uid: 11111111-0000-4000-8000-000000000003
spec:
  podCIDR: 10.244.1.0/24
  taints:
  - effect: NoSchedule
    key: node-role.kubernetes.io/control-plane
  - effect: PreferNoSchedule
    key: dedicated
    timeAdded: "2024-04-01T08:00:00Z"
    value: infra
  unschedulable: true
status:
  allocatable:
    cpu: 3800m
    ephemeral-storage: "95551679124"
    memory: 15225176Ki
    pods: "110"
  capacity:
    cpu: "4"
    ephemeral-storage: 103682364Ki
    memory: 16266932Ki
    pods: 110
  conditions:
  - lastHeartbeatTime: "2024-05-01T10:00:00Z"
    message: kubelet is posting ready status
    reason: KubeletReady
    status: "True"
    type: Ready
  images:
  - names:
    - docker.io/library/nginx@sha256:abc
    - docker.io/library/nginx:1.25
    sizeBytes: 70520324
  - names:
    - registry.k8s.io/pause:3.9
)";
  auto node = decodeNode(parse(yaml));
  ASSERT_TRUE(node.ok()) << node.error().message;
  expectNodeN1(*node);
}

TEST(Decode, DecodeTreatsNullAsAbsent) {
  const char* text = R"({"metadata": {"name": "p", "namespace": null, "labels": {"a": null},
    "creationTimestamp": null, "ownerReferences": null},
    "spec": {"nodeName": null, "affinity": null, "priority": null, "tolerations": [null],
             "containers": [{"name": "c", "resources": {"requests": {"cpu": null}},
                             "ports": [{"containerPort": 1, "protocol": null}]}, null],
             "hostNetwork": null, "schedulingGates": null, "overhead": null},
    "status": null})";
  auto pod = decodePod(parse(text));
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(pod->metadata.namespace_, "");
  EXPECT_EQ(pod->metadata.labels, (StringMap{{"a", ""}}));  // as Go fills a map entry
  EXPECT_FALSE(pod->metadata.creationTimestamp.has_value());
  EXPECT_FALSE(pod->spec.affinity.has_value());
  EXPECT_FALSE(pod->spec.priority.has_value());
  ASSERT_EQ(pod->spec.tolerations.size(), 1u);
  EXPECT_EQ(pod->spec.tolerations[0].operator_, "Equal");
  ASSERT_EQ(pod->spec.containers.size(), 2u);
  EXPECT_TRUE(pod->spec.containers[0].resources.requests.at("cpu").isZero());
  EXPECT_EQ(pod->spec.containers[0].ports[0].protocol, "TCP");
  EXPECT_EQ(pod->spec.containers[1].name, "");
  EXPECT_EQ(pod->status.phase, "");
}

// Quantity.UnmarshalJSON trims a string with strings.TrimSpace (every Unicode space) before
// ParseQuantity, which itself refuses "1 "; a JSON number is parsed from its text.
TEST(Decode, QuantitiesAreTrimmedOfUnicodeSpacesAsUnmarshalJsonDoes) {
  const struct {
    std::string_view literal;  // the JSON value of spec.overhead.cpu
    int64_t milli;             // -1: refused
  } cases[] = {
      {R"("1 ")", 1000},
      {R"(" 500m")", 500},
      {R"("\t2\n")", 2000},
      {R"("1\u00a0")", 1000},
      {R"("\u3000250m")", 250},
      {R"("1\u2009")", 1000},
      {R"("\u0085 3\u202f")", 3000},
      {R"("1\u205f")", 1000},
      {R"("1\u1680")", 1000},
      {"2", 2000},
      {"0.5", 500},
      {R"("1 m")", -1},
      {R"("1\u200b")", -1},  // a zero-width space is not a space to Go
      {R"("   ")", -1},
      {R"("1\u00a0Gi")", -1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.literal);
    const std::string text = R"({"metadata": {"name": "p", "namespace": "d"},
      "spec": {"overhead": {"cpu": )" +
                             std::string(c.literal) + "}}}";
    auto pod = decodePod(json::parse(text));
    if (c.milli < 0) {
      ASSERT_FALSE(pod.ok());
      EXPECT_NE(pod.error().message.find("pod d/p: spec.overhead.cpu: invalid quantity"),
                std::string::npos)
          << pod.error().message;
      continue;
    }
    ASSERT_TRUE(pod.ok()) << pod.error().message;
    EXPECT_EQ(pod->spec.overhead.at("cpu").milliValue(), c.milli);
  }
}

// kube-apiserver cannot store a pod over etcd's 1.5 MiB: one past what that allows is kept as a
// skeleton that names the field, and is never decoded whole.
TEST(Decode, APodLargerThanEtcdCanStoreIsKeptAsASkeletonNamingTheField) {
  auto pod = [](const std::string& field, size_t n, const json& element) {
    json j = {{"metadata",
               {{"name", "big"},
                {"namespace", "ns"},
                {"uid", "u"},
                {"resourceVersion", "7"},
                {"labels", {{"app", "x"}}}}},
              {"spec", {{"schedulerName", "berth"}, {"nodeName", "n1"}, {"priority", 5}}},
              {"status", {{"phase", "Pending"}}}};
    json list = json::array();
    for (size_t i = 0; i < n; ++i) list.push_back(element);
    if (field == "labels") {
      for (size_t i = 0; i < n; ++i) j["metadata"]["labels"]["k" + std::to_string(i)] = "";
    } else {
      j["spec"][field] = std::move(list);
    }
    return j;
  };
  // 65,536 containers fit (each takes at least 24 bytes of the 1.5 MiB); one more does not.
  auto fits = decodePod(pod("containers", 65536, json::object()));
  ASSERT_TRUE(fits.ok()) << fits.error().message;
  EXPECT_EQ(fits->sizeRefusal, "");
  EXPECT_EQ(fits->spec.containers.size(), 65536u);

  auto huge = decodePod(pod("containers", 1'000'000, json::object()));
  ASSERT_TRUE(huge.ok()) << huge.error().message;
  EXPECT_EQ(huge->sizeRefusal,
            "pod ns/big: spec.containers: 1000000 containers, more than the 65536 an object "
            "within etcd's 1.5 MiB limit can hold");
  EXPECT_TRUE(huge->spec.containers.empty());
  EXPECT_TRUE(huge->metadata.labels.empty());
  EXPECT_EQ(huge->metadata.name, "big");
  EXPECT_EQ(huge->metadata.namespace_, "ns");
  EXPECT_EQ(huge->metadata.uid, "u");
  EXPECT_EQ(huge->metadata.resourceVersion, "7");
  EXPECT_EQ(huge->spec.schedulerName, "berth");
  EXPECT_EQ(huge->spec.nodeName, "n1");
  EXPECT_EQ(huge->spec.priority, 5);
  EXPECT_EQ(huge->status.phase, "Pending");

  auto init = decodePod(pod("initContainers", 70000, json::object()));
  ASSERT_TRUE(init.ok());
  EXPECT_TRUE(init->sizeRefusal.starts_with("pod ns/big: spec.initContainers: 70000 containers"))
      << init->sizeRefusal;

  // 100,000 labels fit in etcd (about 13 bytes each), so the pod is kept whole.
  auto labels = decodePod(pod("labels", 100000, json()));
  ASSERT_TRUE(labels.ok());
  EXPECT_EQ(labels->sizeRefusal, "");
  EXPECT_EQ(labels->metadata.labels.size(), 100001u);

  // Past 786,432 values (two bytes of protobuf each) the heaviest field is named.
  auto tolerations = decodePod(pod("tolerations", 800000, json::object()));
  ASSERT_TRUE(tolerations.ok());
  EXPECT_EQ(tolerations->sizeRefusal,
            "pod ns/big: spec.tolerations: 800001 of the pod's 800015 values, more than the "
            "786432 an object within etcd's 1.5 MiB limit can hold");
  EXPECT_TRUE(tolerations->spec.tolerations.empty());

  // And past 1.5 MiB of strings.
  auto strings = decodePod(pod("schedulingGates", 2, {{"name", std::string(900 * 1024, 'g')}}));
  ASSERT_TRUE(strings.ok());
  EXPECT_TRUE(
      strings->sizeRefusal.starts_with("pod ns/big: spec.schedulingGates: 1843208 of the "
                                       "pod's "))
      << strings->sizeRefusal;
  EXPECT_TRUE(strings->spec.schedulingGates.empty());
}

TEST(Decode, DecodeRejectsMalformedObjectsNamingObjectAndField) {
  struct Case {
    std::string_view name;
    std::string_view text;  // JSON or YAML
    bool node;
    std::string_view message;
  };
  const Case cases[] = {
      {"bad quantity",
       R"({"metadata": {"name": "web-1", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "abc"}}}]}})",
       false,
       R"(pod default/web-1: spec.containers[0].resources.requests.cpu: invalid quantity "abc")"},
      {"bad quantity in YAML",
       "metadata: {name: web-1, namespace: default}\nspec:\n  containers:\n  - name: c\n"
       "    resources: {limits: {cpu: abc}}\n",
       false,
       R"(pod default/web-1: spec.containers[0].resources.limits.cpu: invalid quantity "abc")"},
      {"quantity of the wrong type",
       R"({"metadata": {"name": "x", "namespace": "default"},
           "spec": {"overhead": {"cpu": true}}})",
       false,
       "pod default/x: spec.overhead.cpu: expected quantity (string or number), got boolean"},
      {"label value is a number",
       R"({"metadata": {"name": "x", "namespace": "default", "labels": {"zone": 1}}})", false,
       "pod default/x: metadata.labels.zone: expected string, got number"},
      {"unquoted YAML boolean label",
       "metadata:\n  name: x\n  namespace: default\n  labels:\n    enabled: yes\n", false,
       "pod default/x: metadata.labels.enabled: expected string, got boolean"},
      {"labels not a map", R"({"metadata": {"name": "x", "namespace": "ns", "labels": ["a"]}})",
       false, "pod ns/x: metadata.labels: expected object, got array"},
      {"name not a string", R"({"metadata": {"name": 7, "namespace": "default"}})", false,
       "pod <unknown>: metadata.name: expected string, got number"},
      {"metadata not an object", R"({"metadata": "x"})", false,
       "pod <unknown>: metadata: expected object, got string"},
      {"pod not an object", "[1]", false, "pod <unknown>: expected object, got array"},
      {"pod without namespace", R"({"metadata": {"name": "x"}, "spec": {"hostNetwork": "yes"}})",
       false, "pod x: spec.hostNetwork: expected boolean, got string"},
      {"bad creation timestamp",
       R"({"metadata": {"name": "x", "namespace": "default", "creationTimestamp": "yesterday"}})",
       false,
       R"(pod default/x: metadata.creationTimestamp: invalid RFC 3339 time "yesterday": want the form 2006-01-02T15:04:05Z07:00)"},
      {"timestamp not a string",
       R"({"metadata": {"name": "x", "namespace": "d", "deletionTimestamp": 1714557600}})", false,
       "pod d/x: metadata.deletionTimestamp: expected string, got number"},
      {"condition timestamp",
       R"({"metadata": {"name": "x", "namespace": "d"},
           "status": {"conditions": [{"type": "Ready"}, {"lastTransitionTime": "2024-02-30T00:00:00Z"}]}})",
       false,
       R"(pod d/x: status.conditions[1].lastTransitionTime: invalid RFC 3339 time "2024-02-30T00:00:00Z": day out of range)"},
      {"unknown node selector operator",
       R"({"metadata": {"name": "x", "namespace": "d"}, "spec": {"affinity": {"nodeAffinity": {
           "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
             {"matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]},
                                   {"key": "a", "operator": "Matches"}]}]}}}}})",
       false,
       R"(pod d/x: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1].operator: Invalid value: "Matches": not a valid selector operator)"},
      {"missing node selector operator",
       R"({"metadata": {"name": "x", "namespace": "d"}, "spec": {"affinity": {"nodeAffinity": {
           "preferredDuringSchedulingIgnoredDuringExecution": [
             {"weight": 1, "preference": {"matchFields": [{"key": "metadata.name"}]}}]}}}})",
       false,
       R"(pod d/x: spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchFields[0].operator: Invalid value: "": not a valid selector operator)"},
      {"weight is a float",
       R"({"metadata": {"name": "x", "namespace": "d"}, "spec": {"affinity": {"nodeAffinity": {
           "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1.5}]}}}})",
       false,
       "pod d/x: "
       "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
       "expected int32, got number 1.5"},
      {"port out of int32 range",
       R"({"metadata": {"name": "x", "namespace": "d"},
           "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 4294967296}]}]}})",
       false,
       "pod d/x: spec.containers[0].ports[0].containerPort: expected int32, got number 4294967296"},
      {"port given as a string",
       R"({"metadata": {"name": "x", "namespace": "d"},
           "spec": {"initContainers": [{"name": "c", "ports": [{"containerPort": "80"}]}]}})",
       false, "pod d/x: spec.initContainers[0].ports[0].containerPort: expected int32, got string"},
      {"integral float is still not an int",
       R"({"metadata": {"name": "x", "namespace": "d"}, "spec": {"priority": 10.0}})", false,
       "pod d/x: spec.priority: expected int32, got number 10.0"},
      {"toleration seconds",
       R"({"metadata": {"name": "x", "namespace": "d"},
           "spec": {"tolerations": [{"operator": "Exists", "tolerationSeconds": "300"}]}})",
       false, "pod d/x: spec.tolerations[0].tolerationSeconds: expected int64, got string"},
      {"toleration operator",
       R"({"metadata": {"name": "x", "namespace": "d"},
           "spec": {"tolerations": [{"key": "k", "operator": "Equals"}]}})",
       false,
       R"(pod d/x: spec.tolerations[0].operator: Unsupported value: "Equals": supported values: "Equal", "Exists")"},
      {"toleration effect",
       R"({"metadata": {"name": "x", "namespace": "d"},
           "spec": {"tolerations": [{"key": "k", "effect": "NoScheduleNow"}]}})",
       false,
       R"(pod d/x: spec.tolerations[0].effect: Unsupported value: "NoScheduleNow": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute")"},
      {"containers not a list",
       R"({"metadata": {"name": "x", "namespace": "d"}, "spec": {"containers": {"name": "c"}}})",
       false, "pod d/x: spec.containers: expected array, got object"},
      {"scheduling gate",
       R"({"metadata": {"name": "x", "namespace": "d"}, "spec": {"schedulingGates": ["g"]}})",
       false, "pod d/x: spec.schedulingGates[0]: expected object, got string"},
      {"owner reference controller",
       R"({"metadata": {"name": "x", "namespace": "d", "ownerReferences": [{"controller": "true"}]}})",
       false, "pod d/x: metadata.ownerReferences[0].controller: expected boolean, got string"},
      {"node taint effect",
       R"({"metadata": {"name": "n1"}, "spec": {"taints": [
           {"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "NoExecute"},
           {"key": "c", "effect": "Sometimes"}]}})",
       true,
       R"(node n1: spec.taints[2].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute")"},
      {"node taint without effect",
       R"({"metadata": {"name": "n1"}, "spec": {"taints": [{"key": "a"}]}})", true,
       "node n1: spec.taints[0].effect: Required value"},
      {"node capacity",
       R"({"metadata": {"name": "n1"}, "status": {"capacity": {"memory": "1Gb"}}})", true,
       R"(node n1: status.capacity.memory: invalid quantity "1Gb")"},
      {"node image size",
       R"({"metadata": {"name": "n1"}, "status": {"images": [{"sizeBytes": -1.5}]}})", true,
       "node n1: status.images[0].sizeBytes: expected int64, got number -1.5"},
      {"node image names",
       R"({"metadata": {"name": "n1"}, "status": {"images": [{"names": [1]}]}})", true,
       "node n1: status.images[0].names[0]: expected string, got number"},
      {"node unschedulable", "metadata:\n  name: n1\nspec:\n  unschedulable: 1\n", true,
       "node n1: spec.unschedulable: expected boolean, got number"},
      {"node without a name", R"({"spec": {"unschedulable": "no"}})", true,
       "node <unknown>: spec.unschedulable: expected boolean, got string"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const json j = parse(c.text);
    const util::Error err = c.node ? decodeNode(j).error() : decodePod(j).error();
    EXPECT_EQ(err.message, c.message);
    EXPECT_EQ(err.code, util::ErrorCode::InvalidArgument);
  }
}

TEST(Decode, QuantitiesMayBeJsonNumbers) {
  struct Case {
    std::string_view json_value;
    std::string_view same_as;
  };
  const Case cases[] = {
      {"2", "2"}, {"0.5", "500m"}, {"\" 100m \"", "100m"}, {"1e3", "1e3"}, {"-1", "-1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json_value);
    const json j = json::parse(R"({"metadata": {"name": "n"}, "status": {"capacity": {"cpu": )" +
                               std::string(c.json_value) + "}}}");
    auto node = decodeNode(j);
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_EQ(node->status.capacity.at("cpu"), q(c.same_as));
  }
}

TEST(Decode, EncodeWritesWhatTheApiServerWrites) {
  auto pod = decodePod(parse(kPodJson));
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  const json j = encodePod(*pod);
  EXPECT_EQ(j["apiVersion"], "v1");
  EXPECT_EQ(j["kind"], "Pod");
  EXPECT_EQ(j["metadata"]["creationTimestamp"], "2024-05-01T10:00:00Z");
  EXPECT_FALSE(j["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ(j["spec"]["containers"][0]["resources"]["requests"]["cpu"], q("100m").toString());
  EXPECT_FALSE(j["spec"].contains("nodeName"));  // empty strings are omitted
  EXPECT_FALSE(j["spec"].contains("hostNetwork"));
  EXPECT_EQ(j["spec"]["initContainers"][1]["resources"], json::object());  // always written
  EXPECT_EQ(j["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
             ["nodeSelectorTerms"][0]["matchExpressions"][1],
            (json{{"key", "gpu"}, {"operator", "DoesNotExist"}}));
  EXPECT_EQ(j["spec"]["schedulingGates"], (json::array({{{"name", "example.com/quota"}}})));
  EXPECT_EQ(j["spec"]["tolerations"][0]["tolerationSeconds"], 300);
  EXPECT_EQ(j["spec"]["containers"][0]["ports"][2],
            (json{{"containerPort", 8080}, {"protocol", "TCP"}}));
  EXPECT_EQ(j["status"]["conditions"][0]["lastTransitionTime"], "2024-05-01T10:00:01Z");

  const json empty = encodePod(Pod{});
  EXPECT_EQ(empty, (json{{"apiVersion", "v1"},
                         {"kind", "Pod"},
                         {"metadata", json::object()},
                         {"spec", {{"containers", json::array()}}},
                         {"status", json::object()}}));
  EXPECT_EQ(encodeNode(Node{}), (json{{"apiVersion", "v1"},
                                      {"kind", "Node"},
                                      {"metadata", json::object()},
                                      {"spec", json::object()},
                                      {"status", json::object()}}));
}

TEST(Decode, EncodeDecodeRoundTrips) {
  auto pod = decodePod(parse(kPodJson));
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  const json once = encodePod(*pod);
  auto again = decodePod(once);
  ASSERT_TRUE(again.ok()) << again.error().message;
  expectWebPod(*again);
  EXPECT_EQ(encodePod(*again), once);
  // Through text too, as a file written by berth would be read back.
  auto from_text = decodePod(parse(once.dump(2)));
  ASSERT_TRUE(from_text.ok()) << from_text.error().message;
  EXPECT_EQ(encodePod(*from_text), once);

  auto node = decodeNode(parse(kNodeJson));
  ASSERT_TRUE(node.ok()) << node.error().message;
  const json node_once = encodeNode(*node);
  auto node_again = decodeNode(node_once);
  ASSERT_TRUE(node_again.ok()) << node_again.error().message;
  expectNodeN1(*node_again);
  EXPECT_EQ(encodeNode(*node_again), node_once);

  // Values the realistic pod does not exercise.
  Pod p;
  p.metadata.name = "p";
  p.metadata.deletionTimestamp = Timestamp{1714557600'000'000};
  p.spec.hostNetwork = true;
  p.spec.priority = -5;
  p.spec.affinity = Affinity{};
  p.spec.affinity->nodeAffinity = NodeAffinity{};
  p.spec.affinity->nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution = NodeSelector{};
  Container c;
  c.name = "c";
  p.spec.containers.push_back(c);
  Toleration everything;
  everything.operator_ = "Exists";
  p.spec.tolerations.push_back(everything);
  p.status.reason = "OutOfcpu";
  p.status.message = "Node didn't have enough resource: cpu";
  const json pj = encodePod(p);
  auto back = decodePod(pj);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(encodePod(*back), pj);
  EXPECT_EQ(back->metadata.deletionTimestamp, p.metadata.deletionTimestamp);
  EXPECT_TRUE(back->spec.hostNetwork);
  EXPECT_EQ(back->spec.priority, -5);
  ASSERT_TRUE(back->spec.affinity->nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution);
  EXPECT_TRUE(back->spec.affinity->nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution
                  ->nodeSelectorTerms.empty());
  EXPECT_EQ(back->status.reason, "OutOfcpu");
}

// --- decodeObjects -------------------------------------------------------------------------------

std::vector<std::string> podKeys(const ObjectSet& set) {
  std::vector<std::string> keys;
  for (const PodPtr& p : set.pods) {
    keys.push_back(podKey(*p));
  }
  return keys;
}

std::vector<std::string> nodeNames(const ObjectSet& set) {
  std::vector<std::string> names;
  for (const NodePtr& n : set.nodes) {
    names.push_back(n->metadata.name);
  }
  return names;
}

TEST(Decode, DecodeObjectsReadsListsStreamsAndSingleObjects) {
  struct Case {
    std::string_view name;
    std::string text;
    std::vector<std::string> nodes;
    std::vector<std::string> pods;
    std::vector<std::string> skipped;
  };
  const std::string pod_a =
      R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "default"}})";
  const std::string node_1 = R"({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})";
  const Case cases[] = {
      {"single pod JSON", std::string(kPodJson), {}, {"default/web-1"}, {}},
      {"single pod YAML", std::string(kPodYaml), {}, {"default/web-1"}, {}},
      {"single node", std::string(kNodeJson), {"n1"}, {}, {}},
      {"kind List",
       R"({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": [)" +
           node_1 + "," + pod_a +
           R"(, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "default"}},
              {"apiVersion": "example.com/v1", "kind": "Pod", "metadata": {"name": "fake", "namespace": "x"}},
              null]})",
       {"n1"},
       {"default/a"},
       {"Pod.example.com/v1 x/fake"}},
      {"PodList items without kind",
       R"({"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": [
           {"metadata": {"name": "a", "namespace": "ns1"}},
           {"metadata": {"name": "b", "namespace": "ns2"}}]})",
       {},
       {"ns1/a", "ns2/b"},
       {}},
      {"NodeList items without kind",
       R"({"kind": "NodeList", "items": [{"metadata": {"name": "n1"}}, {"metadata": {"name": "n2"}}]})",
       {"n1", "n2"},
       {},
       {}},
      {"empty List", R"({"kind": "List", "items": []})", {}, {}, {}},
      {"List with null items", R"({"kind": "List", "items": null})", {}, {}, {}},
      {"YAML stream with a List inside",
       "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n---\n---\n"
       "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n"
       "    name: a\n    namespace: default\n- kind: ConfigMap\n  metadata:\n    name: cm\n"
       "    namespace: kube-system\n---\nkind: Namespace\nmetadata:\n  name: prod\n",
       {"n1"},
       {"default/a"},
       {"ConfigMap kube-system/cm"}},
      {"JSON array of objects", "[" + pod_a + "," + node_1 + "]", {"n1"}, {"default/a"}, {}},
      {"nothing", "", {}, {}, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto set = decodeObjects(c.text);
    ASSERT_TRUE(set.ok()) << set.error().message;
    EXPECT_EQ(nodeNames(*set), c.nodes);
    EXPECT_EQ(podKeys(*set), c.pods);
    EXPECT_EQ(set->skipped, c.skipped);
  }
}

TEST(Decode, DecodeObjectsReadsTheKindsPluginsUse) {
  auto set = decodeObjects(R"({"apiVersion": "v1", "kind": "List", "items": [
      {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}},
      {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "prod"},
       "spec": {"selector": {"app": "web"}}},
      {"apiVersion": "v1", "kind": "ReplicationController",
       "metadata": {"name": "rc", "namespace": "prod"}},
      {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": "prod"}},
      {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "ss", "namespace": "prod"}},
      {"apiVersion": "extensions/v1beta1", "kind": "ReplicaSet",
       "metadata": {"name": "old", "namespace": "prod"}}]})");
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set->namespaces.size(), 1u);
  EXPECT_EQ(set->namespaces[0]->metadata.name, "prod");
  ASSERT_EQ(set->services.size(), 1u);
  EXPECT_EQ(set->services[0]->selector.at("app"), "web");
  ASSERT_EQ(set->replicationControllers.size(), 1u);
  ASSERT_EQ(set->replicaSets.size(), 1u);
  EXPECT_EQ(set->replicaSets[0]->metadata.name, "rs");
  ASSERT_EQ(set->statefulSets.size(), 1u);
  EXPECT_EQ(set->skipped, std::vector<std::string>{"ReplicaSet.extensions/v1beta1 prod/old"});
}

TEST(Decode, DecodeObjectsFailsOnTheFirstBadObject) {
  struct Case {
    std::string_view name;
    std::string_view text;
    std::string_view message;
  };
  const Case cases[] = {
      {"bad pod in a List",
       R"({"kind": "List", "items": [
           {"kind": "Pod", "metadata": {"name": "ok", "namespace": "d"}},
           {"kind": "Pod", "metadata": {"name": "web-1", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "abc"}}}]}}]})",
       R"(pod default/web-1: spec.containers[0].resources.requests.cpu: invalid quantity "abc")"},
      {"bad node in a stream",
       "kind: Node\nmetadata: {name: n0}\n---\nkind: Node\nmetadata: {name: n1}\n"
       "spec:\n  taints:\n  - {key: a, effect: NoSchedule}\n  - {key: b, effect: NoSchedule}\n"
       "  - {key: c, effect: Never}\n",
       R"(node n1: spec.taints[2].effect: Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute")"},
      {"bad service in a List",
       R"({"kind": "List", "items": [{"kind": "Service", "metadata": {"name": "s", "namespace": "d"},
           "spec": {"selector": ["app"]}}]})",
       "service d/s: spec.selector: expected object, got array"},
      {"item without kind", R"({"kind": "List", "items": [{"metadata": {"name": "x"}}]})",
       "items[0]: object has no kind"},
      {"document without kind", "metadata: {name: x}\n---\nkind: Pod\n",
       "document 1: object has no kind"},
      {"kind not a string", R"({"kind": 5})", "kind: expected string, got number"},
      {"item not an object", R"({"kind": "List", "items": [{"kind": "Node"}, "n2"]})",
       "items[1]: expected object, got string"},
      {"items not a list", R"({"kind": "List", "items": {"a": 1}})",
       "items: expected array, got object"},
      {"scalar document", "just text\n", "expected object, got string"},
      {"malformed text", "{\"kind\": \"Pod\",",
       "invalid JSON: parse error at line 1, column 16: "
       "syntax error while parsing object key - unexpected end of input; expected string literal"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto set = decodeObjects(c.text);
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.error().message, c.message);
    EXPECT_EQ(set.error().code, util::ErrorCode::InvalidArgument);
  }
}

// The repository root, found from this file's path so the test runs from any directory.
// Next to this source file; __FILE__ may be relative (ccache's base_dir), and ctest runs the tests
// in the source directory, so that is the fallback.
std::string testdataPath(std::string_view name) {
  std::string file = __FILE__;
  const size_t at = file.rfind("tests/unit/api/");
  const std::string root = at == std::string::npos ? "" : file.substr(0, at);
  std::string path = root + "tests/testdata/" + std::string(name);
  if (!std::ifstream(path)) path = "tests/testdata/" + std::string(name);
  return path;
}

TEST(Decode, DecodeObjectsReadsKubectlGetNodesPodsOutput) {
  std::ifstream in(testdataPath("kubectl-list.json"));
  ASSERT_TRUE(in) << testdataPath("kubectl-list.json");
  std::stringstream buffer;
  buffer << in.rdbuf();
  auto set = decodeObjects(buffer.str());
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(nodeNames(*set),
            (std::vector<std::string>{"kind-control-plane", "kind-worker", "kind-worker2"}));
  // kubectl lists pods by namespace, then name.
  EXPECT_EQ(podKeys(*set),
            (std::vector<std::string>{"default/batch-runner-xk2p9", "default/web-5d8f7c6b9-abcde",
                                      "default/web-5d8f7c6b9-fghij",
                                      "kube-system/coredns-7db6d8ff4d-4zxvq",
                                      "kube-system/kube-proxy-8n2xl"}));
  EXPECT_TRUE(set->skipped.empty());

  const Node& cp = *set->nodes[0];
  ASSERT_EQ(cp.spec.taints.size(), 1u);
  EXPECT_EQ(cp.spec.taints[0].key, "node-role.kubernetes.io/control-plane");
  EXPECT_EQ(cp.status.allocatable.at("cpu"), q("4"));
  EXPECT_EQ(cp.status.allocatable.at("pods"), q("110"));
  const Node& w2 = *set->nodes[2];
  EXPECT_TRUE(w2.spec.unschedulable);
  EXPECT_EQ(w2.status.conditions.size(), 5u);

  const Pod& web = *set->pods[1];
  EXPECT_EQ(web.spec.nodeName, "kind-worker");
  EXPECT_EQ(web.spec.schedulerName, "default-scheduler");
  EXPECT_EQ(web.status.phase, "Running");
  EXPECT_EQ(web.spec.containers[0].resources.requests.at("cpu"), q("100m"));
  EXPECT_EQ(web.spec.tolerations.size(), 2u);
  ASSERT_TRUE(web.metadata.creationTimestamp.has_value());

  const Pod& batch = *set->pods[0];
  EXPECT_EQ(batch.spec.schedulerName, "berth");
  EXPECT_EQ(batch.spec.nodeName, "");
  EXPECT_EQ(batch.status.phase, "Pending");
  EXPECT_EQ(batch.status.nominatedNodeName, "kind-worker2");
  EXPECT_EQ(batch.spec.initContainers.size(), 2u);
  EXPECT_EQ(batch.spec.initContainers[1].restartPolicy, "Always");
  EXPECT_EQ(batch.spec.schedulingGates, (std::vector<std::string>{}));

  const Pod& coredns = *set->pods[3];
  EXPECT_EQ(coredns.spec.priority, 2000000000);
  EXPECT_EQ(coredns.spec.priorityClassName, "system-cluster-critical");

  const Pod& proxy = *set->pods[4];
  EXPECT_TRUE(proxy.spec.hostNetwork);
  const auto& fields =
      proxy.spec.affinity->nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution
          ->nodeSelectorTerms[0]
          .matchFields;
  ASSERT_EQ(fields.size(), 1u);
  EXPECT_EQ(fields[0].values, (std::vector<std::string>{"kind-worker"}));
  ASSERT_TRUE(proxy.metadata.deletionTimestamp.has_value());
  EXPECT_EQ(formatTimestamp(*proxy.metadata.deletionTimestamp), "2024-05-02T08:15:30Z");
}

// A pod with every field the inter-pod, spread, volume and claim rules read.
constexpr std::string_view kConstrainedPodJson = R"({
    "metadata": {"name": "w", "namespace": "default"},
    "spec": {
      "affinity": {
        "podAntiAffinity": {
          "requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Bogus", "values": ["x"]}]},
            "namespaces": ["a"], "topologyKey": "kubernetes.io/hostname",
            "namespaceSelector": {}, "matchLabelKeys": ["pod-template-hash"]}],
          "preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 7, "podAffinityTerm": {"topologyKey": "zone"}}]},
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "z"}]}},
      "topologySpreadConstraints": [{"maxSkew": 2, "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "w"}},
        "minDomains": 3, "nodeTaintsPolicy": "Honor", "matchLabelKeys": ["h"]}],
      "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "c", "readOnly": true}},
                  {"name": "tmp", "emptyDir": {}}, {"name": "none"}],
      "resourceClaims": [{"name": "gpu", "resourceClaimName": "g"}],
      "resources": {"requests": {"cpu": "1"}},
      "containers": [{"name": "c"}]}})";

TEST(Decode, DecodePodReadsInterPodTermsSpreadVolumesAndClaims) {
  auto pod = decodePod(json::parse(kConstrainedPodJson));
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  const PodSpec& s = pod->spec;
  ASSERT_TRUE(s.affinity && s.affinity->podAntiAffinity && s.affinity->podAffinity);
  const PodAffinityTerm& t =
      s.affinity->podAntiAffinity->requiredDuringSchedulingIgnoredDuringExecution.at(0);
  ASSERT_TRUE(t.labelSelector.has_value());
  EXPECT_EQ(t.labelSelector->matchExpressions.at(0).op, "Bogus");  // left for PreFilter to report
  EXPECT_EQ(t.namespaces, std::vector<std::string>{"a"});
  EXPECT_EQ(t.topologyKey, "kubernetes.io/hostname");
  ASSERT_TRUE(t.namespaceSelector.has_value());
  EXPECT_TRUE(t.namespaceSelector->matchLabels.empty());
  EXPECT_EQ(t.matchLabelKeys, std::vector<std::string>{"pod-template-hash"});
  const auto& pref =
      s.affinity->podAntiAffinity->preferredDuringSchedulingIgnoredDuringExecution.at(0);
  EXPECT_EQ(pref.weight, 7);
  EXPECT_FALSE(pref.podAffinityTerm.labelSelector.has_value());
  EXPECT_EQ(
      s.affinity->podAffinity->requiredDuringSchedulingIgnoredDuringExecution.at(0).topologyKey,
      "z");
  const TopologySpreadConstraint& c = s.topologySpreadConstraints.at(0);
  EXPECT_EQ(c.maxSkew, 2);
  EXPECT_EQ(c.whenUnsatisfiable, "DoNotSchedule");
  EXPECT_EQ(c.minDomains, 3);
  EXPECT_FALSE(c.nodeAffinityPolicy.has_value());
  EXPECT_EQ(c.nodeTaintsPolicy, "Honor");
  ASSERT_EQ(s.volumes.size(), 3u);
  EXPECT_EQ(s.volumes[0].source, "persistentVolumeClaim");
  EXPECT_EQ(s.volumes[0].claimName, "c");
  EXPECT_TRUE(s.volumes[0].readOnly);
  EXPECT_EQ(s.volumes[1].source, "emptyDir");
  EXPECT_EQ(s.volumes[2].source, "");
  EXPECT_EQ(s.resourceClaims.at(0).name, "gpu");
  ASSERT_TRUE(s.resources.has_value());
  EXPECT_EQ(s.resources->requests.count("cpu"), 1u);
}

TEST(Decode, DecodeControllersReadTheirSelectorsAndNameTheFieldOnError) {
  auto rs = decodeReplicaSet(json::parse(
      R"({"metadata": {"name": "web", "namespace": "d"}, "spec": {"selector": {"matchLabels": {"app": "web"}}}})"));
  ASSERT_TRUE(rs.ok());
  EXPECT_EQ(rs->selector->matchLabels.at("app"), "web");
  auto svc = decodeService(json::parse(
      R"({"metadata": {"name": "s", "namespace": "d"}, "spec": {"selector": {"app": "web"}}})"));
  ASSERT_TRUE(svc.ok());
  EXPECT_EQ(svc->selector.at("app"), "web");
  auto rc = decodeReplicationController(json::parse(
      R"({"metadata": {"name": "r", "namespace": "d"}, "spec": {"selector": {"app": 3}}})"));
  ASSERT_FALSE(rc.ok());
  EXPECT_EQ(rc.error().message,
            "replicationcontroller d/r: spec.selector.app: expected string, got number");
  auto pdb = decodePodDisruptionBudget(json::parse(
      R"({"metadata": {"name": "p", "namespace": "d"}, "status": {"disruptionsAllowed": "1"}})"));
  ASSERT_FALSE(pdb.ok());
  EXPECT_EQ(pdb.error().message,
            "poddisruptionbudget d/p: status.disruptionsAllowed: expected int32, got string");
  auto ns =
      decodeNamespace(json::parse(R"({"metadata": {"name": "prod", "labels": {"team": "a"}}})"));
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ(ns->metadata.labels.at("team"), "a");
}

TEST(Decode, EncodeKeepsInterPodTermsSpreadVolumesAndClaims) {
  auto pod = decodePod(json::parse(kConstrainedPodJson));
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  const json once = encodePod(*pod);
  const json& spec = once["spec"];
  EXPECT_EQ(spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
                ["labelSelector"]["matchExpressions"][0]["operator"],
            "Bogus");
  EXPECT_EQ(spec["topologySpreadConstraints"][0]["minDomains"], 3);
  EXPECT_EQ(spec["volumes"][0],
            (json{{"name", "data"},
                  {"persistentVolumeClaim", {{"claimName", "c"}, {"readOnly", true}}}}));
  EXPECT_EQ(spec["resourceClaims"], (json::array({{{"name", "gpu"}}})));
  EXPECT_EQ(spec["resources"]["requests"]["cpu"], "1");
  auto again = decodePod(once);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(encodePod(*again), once);
}

}  // namespace
// `berth demo` loads these into the embedded API server through the encoders.
TEST(Decode, WorkloadObjectsRoundTripThroughEncode) {
  const json rs = parse(R"({"apiVersion": "apps/v1", "kind": "ReplicaSet",
    "metadata": {"name": "web", "namespace": "shop", "uid": "u1", "labels": {"app": "web"}},
    "spec": {"selector": {"matchLabels": {"app": "web"},
             "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}]}}})");
  auto decoded_rs = decodeReplicaSet(rs);
  ASSERT_TRUE(decoded_rs.ok()) << decoded_rs.error().message;
  EXPECT_EQ(encodeReplicaSet(*decoded_rs), rs);

  const json ss = parse(R"({"apiVersion": "apps/v1", "kind": "StatefulSet",
    "metadata": {"name": "db", "namespace": "shop"},
    "spec": {"selector": {"matchLabels": {"app": "db"}}}})");
  auto decoded_ss = decodeStatefulSet(ss);
  ASSERT_TRUE(decoded_ss.ok()) << decoded_ss.error().message;
  EXPECT_EQ(encodeStatefulSet(*decoded_ss), ss);

  const json svc = parse(R"({"apiVersion": "v1", "kind": "Service",
    "metadata": {"name": "web", "namespace": "shop"}, "spec": {"selector": {"app": "web"}}})");
  auto decoded_svc = decodeService(svc);
  ASSERT_TRUE(decoded_svc.ok()) << decoded_svc.error().message;
  EXPECT_EQ(encodeService(*decoded_svc), svc);

  const json rc = parse(R"({"apiVersion": "v1", "kind": "ReplicationController",
    "metadata": {"name": "old", "namespace": "shop"}, "spec": {"selector": {"app": "old"}}})");
  auto decoded_rc = decodeReplicationController(rc);
  ASSERT_TRUE(decoded_rc.ok()) << decoded_rc.error().message;
  EXPECT_EQ(encodeReplicationController(*decoded_rc), rc);

  const json pdb = parse(R"({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
    "metadata": {"name": "web", "namespace": "shop"},
    "spec": {"selector": {"matchLabels": {"app": "web"}}},
    "status": {"disruptionsAllowed": 1, "disruptedPods": {"web-1": "2026-12-01T10:00:00Z"}}})");
  auto decoded_pdb = decodePodDisruptionBudget(pdb);
  ASSERT_TRUE(decoded_pdb.ok()) << decoded_pdb.error().message;
  EXPECT_EQ(decoded_pdb->disruptionsAllowed, 1);
  EXPECT_EQ(decoded_pdb->disruptedPods.count("web-1"), 1u);
  EXPECT_EQ(encodePodDisruptionBudget(*decoded_pdb), pdb);

  const json ns = parse(R"({"apiVersion": "v1", "kind": "Namespace",
    "metadata": {"name": "shop", "labels": {"team": "shop"}}})");
  auto decoded_ns = decodeNamespace(ns);
  ASSERT_TRUE(decoded_ns.ok()) << decoded_ns.error().message;
  EXPECT_EQ(encodeNamespace(*decoded_ns), ns);
}

// The volume plugins read these from informers and cluster files; tests and the demo write them
// through the encoders.
TEST(Decode, StorageObjectsRoundTripThroughEncode) {
  const json pvc = parse(R"({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
    "metadata": {"name": "data-db-0", "namespace": "shop", "uid": "c1",
                 "annotations": {"volume.kubernetes.io/selected-node": "n1"}},
    "spec": {"accessModes": ["ReadWriteOncePod"], "resources": {"requests": {"storage": "10Gi"}},
             "volumeName": "pv-1", "storageClassName": "", "volumeMode": "Filesystem"},
    "status": {"phase": "Bound", "accessModes": ["ReadWriteOncePod"],
               "capacity": {"storage": "10Gi"}}})");
  auto decoded_pvc = decodePersistentVolumeClaim(pvc);
  ASSERT_TRUE(decoded_pvc.ok()) << decoded_pvc.error().message;
  ASSERT_TRUE(decoded_pvc->spec.storageClassName.has_value());
  EXPECT_EQ(*decoded_pvc->spec.storageClassName, "");
  EXPECT_EQ(encodePersistentVolumeClaim(*decoded_pvc), pvc);

  const json pv = parse(R"({"apiVersion": "v1", "kind": "PersistentVolume",
    "metadata": {"name": "pv-1", "labels": {"topology.kubernetes.io/zone": "a"}},
    "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
             "claimRef": {"namespace": "shop", "name": "data-db-0", "uid": "c1"},
             "storageClassName": "fast",
             "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
               {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}]}},
             "persistentVolumeReclaimPolicy": "Delete",
             "csi": {"driver": "pd.csi.storage.gke.io", "volumeHandle": "disk-1"}},
    "status": {"phase": "Bound"}})");
  auto decoded_pv = decodePersistentVolume(pv);
  ASSERT_TRUE(decoded_pv.ok()) << decoded_pv.error().message;
  EXPECT_EQ(decoded_pv->spec.source, "csi");
  ASSERT_TRUE(decoded_pv->spec.nodeAffinity.has_value());
  EXPECT_EQ(encodePersistentVolume(*decoded_pv), pv);

  const json gce = parse(R"({"apiVersion": "v1", "kind": "PersistentVolume",
    "metadata": {"name": "old"}, "spec": {"gcePersistentDisk": {"pdName": "disk-2"}},
    "status": {}})");
  auto decoded_gce = decodePersistentVolume(gce);
  ASSERT_TRUE(decoded_gce.ok()) << decoded_gce.error().message;
  EXPECT_EQ(decoded_gce->spec.source, "gcePersistentDisk");
  EXPECT_EQ(decoded_gce->spec.disk, "disk-2");
  EXPECT_EQ(encodePersistentVolume(*decoded_gce), gce);

  const json sc = parse(R"({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
    "metadata": {"name": "fast"}, "provisioner": "pd.csi.storage.gke.io",
    "volumeBindingMode": "WaitForFirstConsumer",
    "allowedTopologies": [{"matchLabelExpressions": [
      {"key": "topology.kubernetes.io/zone", "values": ["a", "b"]}]}],
    "reclaimPolicy": "Delete"})");
  auto decoded_sc = decodeStorageClass(sc);
  ASSERT_TRUE(decoded_sc.ok()) << decoded_sc.error().message;
  EXPECT_EQ(encodeStorageClass(*decoded_sc), sc);

  const json csinode = parse(R"({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
    "metadata": {"name": "n1"}, "spec": {"drivers": [{"name": "pd.csi.storage.gke.io",
      "nodeID": "n1", "topologyKeys": ["topology.gke.io/zone"], "allocatable": {"count": 15}}]}})");
  auto decoded_csinode = decodeCSINode(csinode);
  ASSERT_TRUE(decoded_csinode.ok()) << decoded_csinode.error().message;
  EXPECT_EQ(decoded_csinode->drivers.at(0).allocatableCount, 15);
  EXPECT_EQ(encodeCSINode(*decoded_csinode), csinode);

  const json driver = parse(R"({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
    "metadata": {"name": "pd.csi.storage.gke.io"},
    "spec": {"attachRequired": true, "storageCapacity": true}})");
  auto decoded_driver = decodeCSIDriver(driver);
  ASSERT_TRUE(decoded_driver.ok()) << decoded_driver.error().message;
  EXPECT_EQ(encodeCSIDriver(*decoded_driver), driver);

  const json capacity = parse(R"({"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
    "metadata": {"name": "cap-a", "namespace": "kube-system"}, "storageClassName": "fast",
    "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "a"}},
    "capacity": "100Gi", "maximumVolumeSize": "50Gi"})");
  auto decoded_capacity = decodeCSIStorageCapacity(capacity);
  ASSERT_TRUE(decoded_capacity.ok()) << decoded_capacity.error().message;
  EXPECT_EQ(encodeCSIStorageCapacity(*decoded_capacity), capacity);
}

TEST(Decode, StorageObjectErrorsNameTheObjectAndField) {
  auto pv = decodePersistentVolume(
      json::parse(R"({"metadata": {"name": "pv-1"}, "spec": {"capacity": {"storage": "ten"}}})"));
  ASSERT_FALSE(pv.ok());
  EXPECT_EQ(pv.error().message.rfind("persistentvolume pv-1: spec.capacity.storage: ", 0), 0u)
      << pv.error().message;
  auto csinode = decodeCSINode(json::parse(
      R"({"metadata": {"name": "n1"}, "spec": {"drivers": [{"name": "d", "allocatable": {"count": "x"}}]}})"));
  ASSERT_FALSE(csinode.ok());
  EXPECT_EQ(csinode.error().message,
            "csinode n1: spec.drivers[0].allocatable.count: expected int32, got string");
}

TEST(Decode, PodVolumesKeepTheDiskIdentity) {
  auto pod = decodePod(json::parse(R"({"metadata": {"name": "p", "namespace": "d"},
    "spec": {"containers": [], "volumes": [
      {"name": "a", "gcePersistentDisk": {"pdName": "disk-1", "readOnly": true}},
      {"name": "b", "rbd": {"image": "img", "pool": "rbd", "monitors": ["m1", "m2"]}},
      {"name": "c", "csi": {"driver": "ebs.csi.aws.com"}}]}})"));
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  const auto& v = pod->spec.volumes;
  EXPECT_EQ(v[0].disk, "disk-1");
  EXPECT_TRUE(v[0].readOnly);
  EXPECT_EQ(v[1].disk, "img");
  EXPECT_EQ(v[1].rbdPool, "rbd");
  EXPECT_EQ(v[1].rbdMonitors, (std::vector<std::string>{"m1", "m2"}));
  EXPECT_EQ(v[2].csiDriver, "ebs.csi.aws.com");
  auto again = decodePod(encodePod(*pod));
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(encodePod(*again), encodePod(*pod));
}

}  // namespace berth::api
