#include "pkg/apiserver/discovery.h"

#include <algorithm>
#include <string>
#include <vector>

#include "pkg/apiserver/store.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

// The verbs every served resource supports (deletecollection is not served).
const std::vector<std::string> kObjectVerbs = {"create", "delete", "get",  "list",
                                               "patch",  "update", "watch"};
const std::vector<std::string> kStatusVerbs = {"get", "patch", "update"};

struct Entry {
  std::string_view group;
  std::string_view name;  // "pods", "pods/status"
  std::string_view singular;
  bool namespaced;
  std::string_view kind;
  std::vector<std::string> verbs;
  std::vector<std::string> shortNames{};
  std::vector<std::string> categories{};
};

const std::vector<Entry>& entries() {
  static const std::vector<Entry> kEntries = {
      {"", "bindings", "binding", true, "Binding", {"create"}},
      {"", "configmaps", "configmap", true, "ConfigMap", kObjectVerbs, {"cm"}},
      {"", "events", "event", true, "Event", kObjectVerbs, {"ev"}},
      {"", "namespaces", "namespace", false, "Namespace", kObjectVerbs, {"ns"}},
      {"", "namespaces/status", "", false, "Namespace", kStatusVerbs},
      {"", "nodes", "node", false, "Node", kObjectVerbs, {"no"}},
      {"", "nodes/status", "", false, "Node", kStatusVerbs},
      {"",
       "persistentvolumeclaims",
       "persistentvolumeclaim",
       true,
       "PersistentVolumeClaim",
       kObjectVerbs,
       {"pvc"}},
      {"", "persistentvolumeclaims/status", "", true, "PersistentVolumeClaim", kStatusVerbs},
      {"",
       "persistentvolumes",
       "persistentvolume",
       false,
       "PersistentVolume",
       kObjectVerbs,
       {"pv"}},
      {"", "persistentvolumes/status", "", false, "PersistentVolume", kStatusVerbs},
      {"", "pods", "pod", true, "Pod", kObjectVerbs, {"po"}, {"all"}},
      {"", "pods/binding", "", true, "Binding", {"create"}},
      {"", "pods/status", "", true, "Pod", kStatusVerbs},
      {"",
       "replicationcontrollers",
       "replicationcontroller",
       true,
       "ReplicationController",
       kObjectVerbs,
       {"rc"},
       {"all"}},
      {"", "replicationcontrollers/status", "", true, "ReplicationController", kStatusVerbs},
      {"", "services", "service", true, "Service", kObjectVerbs, {"svc"}, {"all"}},
      {"", "services/status", "", true, "Service", kStatusVerbs},
      {"apps", "replicasets", "replicaset", true, "ReplicaSet", kObjectVerbs, {"rs"}, {"all"}},
      {"apps", "replicasets/status", "", true, "ReplicaSet", kStatusVerbs},
      {"apps", "statefulsets", "statefulset", true, "StatefulSet", kObjectVerbs, {"sts"}, {"all"}},
      {"apps", "statefulsets/status", "", true, "StatefulSet", kStatusVerbs},
      {"coordination.k8s.io", "leases", "lease", true, "Lease", kObjectVerbs},
      {"events.k8s.io", "events", "event", true, "Event", kObjectVerbs, {"ev"}},
      {"policy",
       "poddisruptionbudgets",
       "poddisruptionbudget",
       true,
       "PodDisruptionBudget",
       kObjectVerbs,
       {"pdb"}},
      {"policy", "poddisruptionbudgets/status", "", true, "PodDisruptionBudget", kStatusVerbs},
      {"storage.k8s.io", "csidrivers", "csidriver", false, "CSIDriver", kObjectVerbs},
      {"storage.k8s.io", "csinodes", "csinode", false, "CSINode", kObjectVerbs},
      {"storage.k8s.io", "csistoragecapacities", "csistoragecapacity", true, "CSIStorageCapacity",
       kObjectVerbs},
      {"storage.k8s.io",
       "storageclasses",
       "storageclass",
       false,
       "StorageClass",
       kObjectVerbs,
       {"sc"}},
  };
  return kEntries;
}

// In kube-apiserver's order of preference (apps before the others).
constexpr std::string_view kGroups[] = {"apps", "coordination.k8s.io", "events.k8s.io", "policy",
                                        "storage.k8s.io"};

json groupVersion(std::string_view group) {
  return {{"groupVersion", std::string(group) + "/v1"}, {"version", "v1"}};
}

json groupJson(std::string_view group) {
  return {{"name", group},
          {"versions", json::array({groupVersion(group)})},
          {"preferredVersion", groupVersion(group)}};
}

constexpr std::string_view platform() {
#if defined(__x86_64__)
  return "linux/amd64";
#elif defined(__aarch64__)
  return "linux/arm64";
#else
  return "linux/unknown";
#endif
}

}  // namespace

json versionInfo() {
  return {{"major", "1"},
          {"minor", "35"},
          {"emulationMajor", "1"},
          {"emulationMinor", "35"},
          {"minCompatibilityMajor", "1"},
          {"minCompatibilityMinor", "34"},
          {"gitVersion", kKubernetesVersion},
          {"gitCommit", ""},
          {"gitTreeState", ""},
          {"buildDate", ""},
          {"goVersion", ""},
          {"compiler", "berth " BERTH_VERSION},
          {"platform", platform()}};
}

json apiVersions(std::string_view serverAddress) {
  return {{"kind", "APIVersions"},
          {"versions", json::array({"v1"})},
          {"serverAddressByClientCIDRs",
           json::array({{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", serverAddress}}})}};
}

json apiGroupList() {
  json groups = json::array();
  for (std::string_view group : kGroups) {
    groups.push_back(groupJson(group));
  }
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", std::move(groups)}};
}

std::optional<json> apiGroup(std::string_view group) {
  for (std::string_view served : kGroups) {
    if (served == group) {
      json out = groupJson(group);
      out["kind"] = "APIGroup";
      out["apiVersion"] = "v1";
      return out;
    }
  }
  return std::nullopt;
}

std::optional<json> apiResourceList(std::string_view group, std::string_view version) {
  if (version != "v1") {
    return std::nullopt;
  }
  json resources = json::array();
  for (const Entry& e : entries()) {
    if (e.group != group) {
      continue;
    }
    json r = {{"name", e.name},
              {"singularName", e.singular},
              {"namespaced", e.namespaced},
              {"kind", e.kind},
              {"verbs", e.verbs}};
    if (!e.shortNames.empty()) {
      r["shortNames"] = e.shortNames;
    }
    if (!e.categories.empty()) {
      r["categories"] = e.categories;
    }
    resources.push_back(std::move(r));
  }
  if (resources.empty()) {
    return std::nullopt;
  }
  json out = {{"kind", "APIResourceList"}};
  if (!group.empty()) {
    out["apiVersion"] = "v1";  // as upstream: the core list has none
  }
  out["groupVersion"] = group.empty() ? std::string("v1") : std::string(group) + "/v1";
  out["resources"] = std::move(resources);
  return out;
}

json openApiV3Root() {
  json paths = {{"api/v1", {{"serverRelativeURL", "/openapi/v3/api/v1"}}}};
  for (std::string_view group : kGroups) {
    std::string path = "apis/" + std::string(group) + "/v1";
    paths[path] = {{"serverRelativeURL", "/openapi/v3/" + path}};
  }
  return {{"paths", std::move(paths)}};
}

std::optional<json> openApiV3Document(std::string_view groupVersionPath) {
  std::string_view group;
  if (groupVersionPath == "api/v1") {
    group = "";
  } else if (groupVersionPath.starts_with("apis/") && groupVersionPath.ends_with("/v1")) {
    group = groupVersionPath.substr(5, groupVersionPath.size() - 8);
    if (!apiGroup(group)) {
      return std::nullopt;
    }
  } else {
    return std::nullopt;
  }
  const std::string prefix = "/" + std::string(groupVersionPath) + "/";
  json paths = json::object();
  for (const Entry& e : entries()) {
    if (e.group != group || std::find(e.verbs.begin(), e.verbs.end(), "patch") == e.verbs.end()) {
      continue;
    }
    std::string_view resource = e.name;
    std::string_view subresource;
    if (size_t slash = resource.find('/'); slash != std::string_view::npos) {
      subresource = resource.substr(slash + 1);
      resource = resource.substr(0, slash);
    }
    std::string path = prefix + (e.namespaced ? "namespaces/{namespace}/" : "") +
                       std::string(resource) + "/{name}" +
                       (subresource.empty() ? "" : "/" + std::string(subresource));
    paths[path] = {
        {"patch",
         {{"x-kubernetes-action", "patch"},
          {"x-kubernetes-group-version-kind",
           {{"group", group}, {"version", "v1"}, {"kind", e.kind}}},
          {"parameters",
           json::array(
               {{{"name", "fieldValidation"}, {"in", "query"}, {"schema", {{"type", "string"}}}},
                {{"name", "fieldManager"}, {"in", "query"}, {"schema", {{"type", "string"}}}}})},
          {"responses", {{"200", {{"description", "OK"}}}}}}}};
  }
  return json{{"openapi", "3.0.0"},
              {"info", {{"title", "Kubernetes"}, {"version", kKubernetesVersion}}},
              {"paths", std::move(paths)},
              {"components", {{"schemas", json::object()}}}};
}

}  // namespace berth::apiserver
