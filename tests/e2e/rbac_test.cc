// berth's RBAC against what the daemon really does. The real `berth run` runs as deploy/ runs it
// (the Deployment's flags, the ConfigMap's configuration, hence its Lease) against the embedded API
// server; every request in the server's log is then authorized the way kube-apiserver's RBAC
// authorizer would authorize it for the service account deploy/ gives berth, with the rules that
// deploy/rbac.yaml binds to that account. Least privilege is checked both ways: every request is
// allowed, and every permission granted was used by at least one request.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "pkg/apiserver/kubelet_stand_in.h"
#include "pkg/apiserver/server.h"
#include "pkg/apiserver/store.h"
#include "pkg/util/result.h"
#include "tests/support/berth_process.h"
#include "tests/support/eventually.h"
#include "tests/support/objects.h"

extern char** environ;

namespace berth {
namespace {

using json = nlohmann::json;
using apiserver::RequestRecord;
using apiserver::Resource;
using test::nodeJson;
using test::podJson;
using namespace std::chrono_literals;
using test::eventually;

// --- kube-apiserver's RBAC authorizer, for the rules in a set of manifests -----------------------

struct PolicyRule {
  std::vector<std::string> apiGroups;
  std::vector<std::string> resources;  // "pods", "pods/status", "*/status", "*"
  std::vector<std::string> resourceNames;
  std::vector<std::string> verbs;
  std::vector<std::string> nonResourceURLs;
};

// A rule that applies to the service account, and where.
struct Grant {
  std::string source;      // "ClusterRole berth (ClusterRoleBinding berth)"
  std::string namespace_;  // empty: everywhere (a ClusterRoleBinding); else only there
  PolicyRule rule;
};

struct ServiceAccount {
  std::string namespace_;
  std::string name;
};

// authorizer.Attributes, as kube-apiserver's RequestInfoFactory derives them from a request.
struct Attributes {
  bool resourceRequest = false;
  std::string verb;
  std::string apiGroup;
  std::string namespace_;
  std::string resource;
  std::string subresource;
  std::string name;
  std::string path;

  std::string describe() const {
    if (!resourceRequest) return "\"" + verb + "\" nonResourceURL \"" + path + "\"";
    std::string out = "\"" + verb + "\" resource \"" + resource;
    if (!apiGroup.empty()) out += "." + apiGroup;
    if (!subresource.empty()) out += "/" + subresource;
    out += "\"";
    if (!name.empty()) out += " named \"" + name + "\"";
    out += namespace_.empty() ? " cluster-wide" : " in namespace \"" + namespace_ + "\"";
    return out;
  }
};

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> out;
  while (!text.empty()) {
    size_t at = text.find(separator);
    std::string_view part = text.substr(0, at);
    if (!part.empty()) out.emplace_back(part);
    if (at == std::string_view::npos) break;
    text.remove_prefix(at + 1);
  }
  return out;
}

std::string lower(std::string_view text) {
  std::string out;
  for (char c : text) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The first value of `key` in a query ("a=1&b=2"), nullopt when absent.
std::optional<std::string> queryValue(std::string_view query, std::string_view key) {
  for (const std::string& pair : split(query, '&')) {
    size_t eq = pair.find('=');
    if (std::string_view(pair).substr(0, eq) == key) {
      return eq == std::string::npos ? "" : pair.substr(eq + 1);
    }
  }
  return std::nullopt;
}

// What kube-apiserver authorizes a request as (RequestInfoFactory.NewRequestInfo).
Attributes attributesOf(std::string_view method, std::string_view path, std::string_view query) {
  Attributes a;
  a.path = std::string(path);
  a.verb = lower(method);  // what a non-resource request is authorized with
  std::vector<std::string> parts = split(path, '/');
  size_t at = 0;
  if (parts.size() >= 3 && parts[0] == "api") {
    at = 2;
  } else if (parts.size() >= 4 && parts[0] == "apis") {
    a.apiGroup = parts[1];
    at = 3;
  } else {
    return a;  // discovery (/api, /api/v1, /apis/GROUP/VERSION), /version, /healthz...
  }
  a.resourceRequest = true;
  if ((parts[at] == "watch" || parts[at] == "proxy") && parts.size() > at + 1) {
    a.verb = parts[at++];  // the deprecated /watch/ and /proxy/ path prefixes
  } else {
    static const std::map<std::string, std::string, std::less<>> kVerbByMethod = {
        {"POST", "create"}, {"GET", "get"},     {"HEAD", "get"},
        {"PUT", "update"},  {"PATCH", "patch"}, {"DELETE", "delete"}};
    auto verb = kVerbByMethod.find(method);
    a.verb = verb == kVerbByMethod.end() ? "" : verb->second;
  }
  if (parts[at] == "namespaces" && parts.size() > at + 1) {
    a.namespace_ = parts[at + 1];
    // namespaces/NAME/status and /finalize are subresources of the namespace itself.
    if (parts.size() > at + 2 && parts[at + 2] != "status" && parts[at + 2] != "finalize") at += 2;
  }
  a.resource = parts[at];
  if (parts.size() > at + 1) a.name = parts[at + 1];
  if (parts.size() > at + 2 && a.verb != "proxy") a.subresource = parts[at + 2];

  if (a.name.empty() && a.verb == "get") {
    // Any ?watch= value but "false" and "0" is a watch (Convert_Slice_string_To_bool).
    std::optional<std::string> watch = queryValue(query, "watch");
    a.verb = watch && lower(*watch) != "false" && *watch != "0" ? "watch" : "list";
    // A list or watch of one object by fieldSelector=metadata.name=NAME is authorized as that
    // object, so resourceNames rules can allow it.
    for (const std::string& term : split(queryValue(query, "fieldSelector").value_or(""), ',')) {
      for (std::string_view prefix : {"metadata.name==", "metadata.name="}) {
        if (term.starts_with(prefix) && term.size() > prefix.size()) {
          a.name = term.substr(prefix.size());
          break;
        }
      }
      if (!a.name.empty()) break;
    }
  }
  if (a.name.empty() && a.verb == "delete") a.verb = "deletecollection";
  return a;
}

bool contains(const std::vector<std::string>& values, std::string_view value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

bool ruleAllows(const Attributes& a, const PolicyRule& rule) {
  const bool verb = contains(rule.verbs, "*") || contains(rule.verbs, a.verb);
  if (!a.resourceRequest) {
    return verb && std::any_of(rule.nonResourceURLs.begin(), rule.nonResourceURLs.end(),
                               [&](const std::string& url) {
                                 if (url == "*" || url == a.path) return true;
                                 return url.ends_with('*') &&
                                        a.path.starts_with(url.substr(0, url.size() - 1));
                               });
  }
  const std::string combined =
      a.subresource.empty() ? a.resource : a.resource + "/" + a.subresource;
  const bool resource =
      std::any_of(rule.resources.begin(), rule.resources.end(), [&](const std::string& r) {
        return r == "*" || r == combined || (!a.subresource.empty() && r == "*/" + a.subresource);
      });
  const bool group = contains(rule.apiGroups, "*") || contains(rule.apiGroups, a.apiGroup);
  const bool name = rule.resourceNames.empty() || contains(rule.resourceNames, a.name);
  return verb && group && resource && name;
}

// A Role's rules apply in its RoleBinding's namespace; a ClusterRoleBinding's everywhere.
bool inScope(const Grant& grant, const Attributes& a) {
  return grant.namespace_.empty() || grant.namespace_ == a.namespace_;
}

const Grant* allowingGrant(const std::vector<Grant>& grants, const Attributes& a) {
  for (const Grant& grant : grants) {
    if (inScope(grant, a) && ruleAllows(a, grant.rule)) return &grant;
  }
  return nullptr;
}

// In a real cluster every authenticated user may read these through the default ClusterRoles
// system:discovery and system:public-info-viewer (bound to system:authenticated), so berth's own
// rules need not grant them (system:basic-user adds only self-subject reviews, which berth never
// makes). berth reads /apis/events.k8s.io/v1 to find whether that events API is served.
bool defaultRolesAllow(const Attributes& a) {
  static const PolicyRule kDiscovery{
      .apiGroups = {},
      .resources = {},
      .resourceNames = {},
      .verbs = {"get"},
      .nonResourceURLs = {"/livez", "/readyz", "/healthz", "/version", "/version/", "/openapi",
                          "/openapi/*", "/api", "/api/*", "/apis", "/apis/*"}};
  return !a.resourceRequest && ruleAllows(a, kDiscovery);
}

// A missing field reads as empty, as Go's zero values.
std::vector<std::string> stringList(const YAML::Node& node) {
  std::vector<std::string> out;
  if (node.IsDefined() && node.IsSequence()) {
    for (const YAML::Node& item : node) out.push_back(item.as<std::string>());
  }
  return out;
}

std::string scalar(const YAML::Node& node) {
  return node.IsDefined() && node.IsScalar() ? node.as<std::string>() : "";
}

bool subjectIs(const YAML::Node& subject, const std::string& bindingNamespace,
               const ServiceAccount& account) {
  const std::string kind = scalar(subject["kind"]);
  const std::string name = scalar(subject["name"]);
  if (kind == "ServiceAccount") {
    const std::string ns = scalar(subject["namespace"]);
    return name == account.name && (ns.empty() ? bindingNamespace : ns) == account.namespace_;
  }
  if (kind == "User") {
    return name == "system:serviceaccount:" + account.namespace_ + ":" + account.name;
  }
  if (kind == "Group") {
    return name == "system:serviceaccounts" ||
           name == "system:serviceaccounts:" + account.namespace_ || name == "system:authenticated";
  }
  return false;
}

// The rules `documents` (Kubernetes objects, any kinds) grant to `account`: the rules of each Role
// and ClusterRole a binding there binds it to. A binding to a role the documents do not define is
// an error: it would grant nothing, which is never what a manifest means.
util::Result<std::vector<Grant>> grantsFor(const std::vector<YAML::Node>& documents,
                                           const ServiceAccount& account) {
  using Rules = std::vector<PolicyRule>;
  std::map<std::string, Rules> clusterRoles;
  std::map<std::pair<std::string, std::string>, Rules> roles;  // (namespace, name)
  try {
    for (const YAML::Node& doc : documents) {
      const std::string kind = scalar(doc["kind"]);
      if (kind != "Role" && kind != "ClusterRole") continue;
      Rules rules;
      for (const YAML::Node& r : doc["rules"]) {
        rules.push_back(PolicyRule{stringList(r["apiGroups"]), stringList(r["resources"]),
                                   stringList(r["resourceNames"]), stringList(r["verbs"]),
                                   stringList(r["nonResourceURLs"])});
      }
      const std::string name = scalar(doc["metadata"]["name"]);
      if (kind == "ClusterRole") {
        clusterRoles[name] = std::move(rules);
      } else {
        roles[{scalar(doc["metadata"]["namespace"]), name}] = std::move(rules);
      }
    }
    std::vector<Grant> grants;
    for (const YAML::Node& doc : documents) {
      const std::string kind = scalar(doc["kind"]);
      if (kind != "RoleBinding" && kind != "ClusterRoleBinding") continue;
      const std::string ns = kind == "RoleBinding" ? scalar(doc["metadata"]["namespace"]) : "";
      const YAML::Node& subjects = doc["subjects"];
      if (!std::any_of(subjects.begin(), subjects.end(),
                       [&](const YAML::Node& s) { return subjectIs(s, ns, account); })) {
        continue;
      }
      const std::string roleKind = scalar(doc["roleRef"]["kind"]);
      const std::string roleName = scalar(doc["roleRef"]["name"]);
      const std::string binding = kind + " " + scalar(doc["metadata"]["name"]);
      const Rules* rules = nullptr;
      if (roleKind == "ClusterRole" && clusterRoles.contains(roleName)) {
        rules = &clusterRoles[roleName];
      } else if (roleKind == "Role" && kind == "RoleBinding" && roles.contains({ns, roleName})) {
        rules = &roles[{ns, roleName}];
      }
      if (rules == nullptr) {
        return util::invalidArgument(binding + ": roleRef " + roleKind + " " + roleName +
                                     " is not defined");
      }
      for (const PolicyRule& rule : *rules) {
        grants.push_back(Grant{roleKind + " " + roleName + " (" + binding + ")", ns, rule});
      }
    }
    return grants;
  } catch (const YAML::Exception& e) {
    return util::invalidArgument(std::string("malformed RBAC object: ") + e.what());
  }
}

util::Result<std::vector<YAML::Node>> loadDocuments(const std::string& text,
                                                    const std::string& what) {
  try {
    std::vector<YAML::Node> docs;
    for (const YAML::Node& doc : YAML::LoadAll(text)) {
      if (doc.IsMap()) docs.push_back(doc);
    }
    return docs;
  } catch (const YAML::Exception& e) {
    return util::invalidArgument(what + ": " + e.what());
  }
}

// --- deploy/ -----------------------------------------------------------------------------------

std::string sourceDir() {
#ifdef BERTH_SOURCE_DIR
  return BERTH_SOURCE_DIR;
#else
  return ".";  // ctest runs the e2e tests in the source directory
#endif
}

util::Result<std::string> readText(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return util::invalidArgument(path +
                                 ": cannot be read (run the test from the source directory)");
  }
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

util::Result<std::vector<YAML::Node>> loadManifest(const std::string& relative) {
  auto text = readText(sourceDir() + "/" + relative);
  if (!text.ok()) return text.error();
  return loadDocuments(*text, relative);
}

// berth as deploy/ runs it.
struct Deployment {
  ServiceAccount serviceAccount;
  std::vector<std::string> args;  // the container's, with --config pointing at `config`
  std::string config;             // the ConfigMap's KubeSchedulerConfiguration
  std::string leaseNamespace;
  std::string leaseName;
  std::string schedulerName;  // its first profile's
  std::vector<Grant> grants;  // deploy/rbac.yaml's rules bound to serviceAccount
};

util::Result<Deployment> loadDeployment() {
  auto deployments = loadManifest("deploy/deployment.yaml");
  if (!deployments.ok()) return deployments.error();
  auto configMaps = loadManifest("deploy/configmap.yaml");
  if (!configMaps.ok()) return configMaps.error();
  auto rbac = loadManifest("deploy/rbac.yaml");
  if (!rbac.ok()) return rbac.error();
  try {
    if (deployments->size() != 1) {
      return util::invalidArgument("deploy/deployment.yaml: want one Deployment");
    }
    const YAML::Node& deployment = deployments->front();
    const YAML::Node& pod = deployment["spec"]["template"]["spec"];
    Deployment d;
    d.serviceAccount = {scalar(deployment["metadata"]["namespace"]),
                        scalar(pod["serviceAccountName"])};
    const YAML::Node& container = pod["containers"][0];
    d.args = stringList(container["args"]);

    // --config names a file in a ConfigMap volume: find which ConfigMap and key.
    auto configArg = std::find_if(d.args.begin(), d.args.end(),
                                  [](const std::string& a) { return a.starts_with("--config="); });
    if (configArg == d.args.end()) {
      return util::invalidArgument("deploy/deployment.yaml: no --config= argument");
    }
    const std::string configPath = configArg->substr(std::string_view("--config=").size());
    std::string configMapName;
    std::string key;
    for (const YAML::Node& mount : container["volumeMounts"]) {
      const std::string dir = scalar(mount["mountPath"]) + "/";
      if (!configPath.starts_with(dir)) continue;
      key = configPath.substr(dir.size());
      for (const YAML::Node& volume : pod["volumes"]) {
        if (scalar(volume["name"]) == scalar(mount["name"])) {
          configMapName = scalar(volume["configMap"]["name"]);
        }
      }
    }
    for (const YAML::Node& cm : *configMaps) {
      if (scalar(cm["kind"]) == "ConfigMap" && scalar(cm["metadata"]["name"]) == configMapName) {
        d.config = scalar(cm["data"][key]);
      }
    }
    if (d.config.empty()) {
      return util::invalidArgument("deploy/configmap.yaml: no ConfigMap \"" + configMapName +
                                   "\" with key \"" + key + "\" for --config=" + configPath);
    }
    const YAML::Node config = YAML::Load(d.config);
    d.leaseNamespace = scalar(config["leaderElection"]["resourceNamespace"]);
    d.leaseName = scalar(config["leaderElection"]["resourceName"]);
    d.schedulerName = scalar(config["profiles"][0]["schedulerName"]);
    if (scalar(config["leaderElection"]["leaderElect"]) != "true" || d.leaseNamespace.empty() ||
        d.leaseName.empty()) {
      return util::invalidArgument(
          "deploy/configmap.yaml: want leaderElection with leaderElect, resourceNamespace and "
          "resourceName set");
    }
    // The bootstrap Role deploy/rbac.yaml binds in kube-system (rbac/bootstrappolicy's
    // NamespaceRoles), as every cluster defines it.
    auto bootstrap = loadDocuments(R"(
kind: Role
metadata: {name: extension-apiserver-authentication-reader, namespace: kube-system}
rules:
- apiGroups: [""]
  resources: [configmaps]
  resourceNames: [extension-apiserver-authentication]
  verbs: [get, list, watch]
)",
                                   "bootstrap");
    if (!bootstrap.ok()) return bootstrap.error();
    rbac->insert(rbac->end(), bootstrap->begin(), bootstrap->end());
    auto grants = grantsFor(*rbac, d.serviceAccount);
    if (!grants.ok()) return grants.error().wrap("deploy/rbac.yaml");
    d.grants = std::move(*grants);
    return d;
  } catch (const YAML::Exception& e) {
    return util::invalidArgument(std::string("deploy/: ") + e.what());
  }
}

// --- the authorizer itself ----------------------------------------------------------------------

constexpr const char* kPolicyForTests = R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
rules:
  - apiGroups: [""]
    resources: ["pods", "pods/status"]
    verbs: ["get", "list", "watch"]
  - apiGroups: ["apps"]
    resources: ["*/scale"]
    verbs: ["patch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reader}
subjects: [{kind: ServiceAccount, name: sched, namespace: kube-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: lock, namespace: team-a}
rules:
  - apiGroups: ["coordination.k8s.io"]
    resources: ["leases"]
    resourceNames: ["lock"]
    verbs: ["get", "update", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: lock, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: lock}
subjects: [{kind: ServiceAccount, name: sched, namespace: kube-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: writer}
rules:
  - apiGroups: [""]
    resources: ["pods"]
    verbs: ["create", "delete"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: writer, namespace: team-b}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: writer}
subjects: [{kind: Group, name: system:serviceaccounts:kube-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: someone-else}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: writer}
subjects: [{kind: ServiceAccount, name: other, namespace: kube-system}]
)";

TEST(RbacAuthorizer, DerivesVerbsAndResourcesAsKubeApiserver) {
  struct Want {
    bool resourceRequest;
    std::string_view verb, apiGroup, namespace_, resource, subresource, name;
  };
  struct Case {
    std::string_view method, path, query;
    Want want;
  };
  const Case cases[] = {
      {"GET", "/api/v1/pods", "", {true, "list", "", "", "pods", "", ""}},
      {"GET",
       "/api/v1/pods",
       "watch=true&resourceVersion=5",
       {true, "watch", "", "", "pods", "", ""}},
      {"GET", "/api/v1/pods", "watch=0", {true, "list", "", "", "pods", "", ""}},
      {"GET", "/api/v1/watch/namespaces/a/pods", "", {true, "watch", "", "a", "pods", "", ""}},
      {"GET", "/api/v1/namespaces/a/pods/p", "", {true, "get", "", "a", "pods", "", "p"}},
      {"GET",
       "/api/v1/namespaces/a/pods",
       "fieldSelector=metadata.name=p",
       {true, "list", "", "a", "pods", "", "p"}},
      {"POST",
       "/api/v1/namespaces/a/pods/p/binding",
       "",
       {true, "create", "", "a", "pods", "binding", "p"}},
      {"PATCH",
       "/api/v1/namespaces/a/pods/p/status",
       "",
       {true, "patch", "", "a", "pods", "status", "p"}},
      {"PUT",
       "/apis/coordination.k8s.io/v1/namespaces/a/leases/l",
       "",
       {true, "update", "coordination.k8s.io", "a", "leases", "", "l"}},
      {"DELETE",
       "/api/v1/namespaces/a/events",
       "",
       {true, "deletecollection", "", "a", "events", "", ""}},
      {"DELETE", "/api/v1/namespaces/a", "", {true, "delete", "", "a", "namespaces", "", "a"}},
      {"GET", "/apis/events.k8s.io/v1", "", {false, "get", "", "", "", "", ""}},
      {"GET", "/version", "", {false, "get", "", "", "", "", ""}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.method) + " " + std::string(c.path) + "?" + std::string(c.query));
    Attributes got = attributesOf(c.method, c.path, c.query);
    EXPECT_EQ(got.resourceRequest, c.want.resourceRequest);
    EXPECT_EQ(got.verb, c.want.verb);
    EXPECT_EQ(got.apiGroup, c.want.apiGroup);
    EXPECT_EQ(got.namespace_, c.want.namespace_);
    EXPECT_EQ(got.resource, c.want.resource);
    EXPECT_EQ(got.subresource, c.want.subresource);
    EXPECT_EQ(got.name, c.want.name);
  }
}

TEST(RbacAuthorizer, AllowsOnlyWhatRulesBoundToTheAccountGrant) {
  auto docs = loadDocuments(kPolicyForTests, "test policy");
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  auto grants = grantsFor(*docs, ServiceAccount{"kube-system", "sched"});
  ASSERT_TRUE(grants.ok()) << grants.error().message;
  struct Case {
    std::string_view why, method, path, query;
    bool allowed;
  };
  const Case cases[] = {
      {"a ClusterRoleBinding applies in every namespace", "GET", "/api/v1/namespaces/x/pods", "",
       true},
      {"and cluster-wide", "GET", "/api/v1/pods", "watch=1", true},
      {"a verb the rule lists", "GET", "/api/v1/namespaces/x/pods/p/status", "", true},
      {"a verb it does not", "PATCH", "/api/v1/namespaces/x/pods/p/status", "", false},
      {"pods does not grant its subresources", "POST", "/api/v1/namespaces/x/pods/p/binding", "",
       false},
      {"*/scale matches any resource's scale", "PATCH",
       "/apis/apps/v1/namespaces/x/deployments/d/scale", "", true},
      {"but not the resource", "PATCH", "/apis/apps/v1/namespaces/x/deployments/d", "", false},
      {"the group must match", "PATCH", "/apis/extensions/v1/namespaces/x/deployments/d/scale", "",
       false},
      {"a Role applies in its namespace", "PUT",
       "/apis/coordination.k8s.io/v1/namespaces/team-a/leases/lock", "", true},
      {"only there", "PUT", "/apis/coordination.k8s.io/v1/namespaces/team-b/leases/lock", "",
       false},
      {"to the names it lists", "PUT",
       "/apis/coordination.k8s.io/v1/namespaces/team-a/leases/other", "", false},
      {"and no unnamed request", "POST", "/apis/coordination.k8s.io/v1/namespaces/team-a/leases",
       "", false},
      {"a watch by metadata.name is by name", "GET",
       "/apis/coordination.k8s.io/v1/namespaces/team-a/leases",
       "fieldSelector=metadata.name=lock&watch=true", true},
      {"a watch of every lease is not", "GET",
       "/apis/coordination.k8s.io/v1/namespaces/team-a/leases", "watch=true", false},
      {"a ClusterRole bound by a RoleBinding of a group", "DELETE",
       "/api/v1/namespaces/team-b/pods/p", "", true},
      {"applies in the binding's namespace only", "DELETE", "/api/v1/namespaces/team-a/pods/p", "",
       false},
      {"a binding of another account grants nothing", "DELETE", "/api/v1/pods/p", "", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.why) + ": " + std::string(c.method) + " " + std::string(c.path));
    Attributes a = attributesOf(c.method, c.path, c.query);
    EXPECT_EQ(allowingGrant(*grants, a) != nullptr, c.allowed) << a.describe();
  }
  EXPECT_TRUE(defaultRolesAllow(attributesOf("GET", "/apis/events.k8s.io/v1", "")));
  EXPECT_TRUE(defaultRolesAllow(attributesOf("GET", "/version", "")));
  EXPECT_FALSE(defaultRolesAllow(attributesOf("POST", "/apis/events.k8s.io/v1", "")));
  EXPECT_FALSE(defaultRolesAllow(attributesOf("GET", "/metrics", "")));
  EXPECT_FALSE(defaultRolesAllow(attributesOf("GET", "/api/v1/pods", "")));

  auto dangling = loadDocuments(R"(
kind: ClusterRoleBinding
metadata: {name: b}
roleRef: {kind: ClusterRole, name: missing}
subjects: [{kind: ServiceAccount, name: sched, namespace: kube-system}]
)",
                                "dangling");
  ASSERT_TRUE(dangling.ok());
  auto unresolved = grantsFor(*dangling, ServiceAccount{"kube-system", "sched"});
  ASSERT_FALSE(unresolved.ok());
  EXPECT_EQ(unresolved.error().message,
            "ClusterRoleBinding b: roleRef ClusterRole missing is not defined");
}

// --- berth end to end ---------------------------------------------------------------------------

// One embedded API server and one berth daemon talking to it, run as deploy/ runs berth.
class Cluster {
 public:
  explicit Cluster(std::string name) : name_(std::move(name)) {}
  ~Cluster() {
    if (pid_ > 0) stopBerth();
    if (server_) server_->stop();
    for (const std::string& file : {kubeconfig_, config_, log_}) {
      if (!file.empty()) std::remove(file.c_str());
    }
  }
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  util::Result<void> startServer() {
    auto started = apiserver::Server::start(store_, {});
    if (!started.ok()) return started.error();
    server_ = std::move(*started);
    return {};
  }

  // The Deployment's arguments, with the ConfigMap's file at --config; health and metrics on a
  // free loopback port instead of the container's.
  util::Result<void> startBerth(const Deployment& deployment) {
    const std::string prefix =
        testing::TempDir() + "berth-rbac-" + name_ + "-" + std::to_string(getpid());
    kubeconfig_ = prefix + ".kubeconfig";
    config_ = prefix + "-config.yaml";
    log_ = prefix + ".log";
    std::ofstream(kubeconfig_) << json{
        {"apiVersion", "v1"},
        {"kind", "Config"},
        {"clusters", {{{"name", "e2e"}, {"cluster", {{"server", server_->url()}}}}}},
        {"users", {{{"name", "e2e"}, {"user", json::object()}}}},
        {"contexts", {{{"name", "e2e"}, {"context", {{"cluster", "e2e"}, {"user", "e2e"}}}}}},
        {"current-context", "e2e"}}.dump();
    std::ofstream(config_) << deployment.config;
    std::vector<std::string> args = {BERTH_BINARY};
    for (const std::string& a : deployment.args) {
      if (a.starts_with("--config=")) {
        args.push_back("--config=" + config_);
      } else if (a.starts_with("--port=") || a.starts_with("--secure-port=")) {
        args.push_back("--port=0");  // also the deprecated alias of --secure-port
      } else if (a.starts_with("--bind-address=")) {
        args.push_back("--bind-address=127.0.0.1");
      } else {
        args.push_back(a);
      }
    }
    args.push_back("--kubeconfig=" + kubeconfig_);  // in a pod: the service account's token
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    int spawned = posix_spawn(&pid_, BERTH_BINARY, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) {
      pid_ = -1;
      return util::invalidArgument(std::string("cannot start ") + BERTH_BINARY + ": " +
                                   strerror(spawned));
    }
    return {};
  }

  // SIGTERM, then the exit code; -1 when berth did not exit within 10 s (it is then killed).
  int stopBerth() {
    kill(pid_, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + 10s;
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(20ms);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return -1;
  }

  // GETs `path` from berth's secure port (read from its log) with `authorization`; the HTTP
  // code, 0 when it could not be reached.
  int scrape(const std::string& path, const std::string& authorization) {
    std::optional<uint16_t> port;
    eventually([&] {
      std::ifstream in(log_);
      for (std::string line; std::getline(in, line);) {
        if (line.find("Serving securely") == std::string::npos) continue;
        const std::string address = test::logField(line, "address").value_or("");
        port = static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
      }
      return port.has_value();
    });
    if (!port) return 0;
    auto reply = test::httpsGet(*port, path, authorization);
    return reply.ok() ? reply->code : 0;
  }

  std::string logTail() const {
    auto text = readText(log_);
    if (!text.ok()) return "";
    return text->size() > 4000 ? "..." + text->substr(text->size() - 4000) : *text;
  }

  util::Result<void> create(Resource resource, const json& object) {
    auto r = store_.create(resource, object["metadata"].value("namespace", ""), object);
    if (!r.ok()) return util::invalidArgument(r.error().status.message);
    return {};
  }

  std::string nodeOf(const std::string& podName) const {
    auto p = store_.get(Resource::Pods, "default", podName);
    return p.ok() ? p->value("spec", json::object()).value("nodeName", "") : "";
  }

  bool podUnschedulable(const std::string& podName) const {
    auto p = store_.get(Resource::Pods, "default", podName);
    if (!p.ok()) return false;
    for (const json& c : p->value("status", json::object()).value("conditions", json::array())) {
      if (c["type"] == "PodScheduled" && c["status"] == "False") return true;
    }
    return false;
  }

  // The highest count of `reason` events about `podName` in either events API: 1 once created,
  // 2 once berth patched its series.
  int64_t eventCount(Resource api, const std::string& reason, const std::string& podName) const {
    auto events = store_.list(api, "default");
    int64_t count = 0;
    if (!events.ok()) return 0;
    for (const json& e : events->items) {
      const bool v1 = api == Resource::EventsV1;
      const json& about = e.value(v1 ? "regarding" : "involvedObject", json::object());
      if (e.value("reason", "") != reason || about.value("name", "") != podName) continue;
      int64_t n = v1 ? e.value("series", json::object()).value("count", int64_t{1})
                     : e.value("count", int64_t{1});
      count = std::max(count, n);
    }
    return count;
  }

  // Deletes a pod bound to `nodeName`: a cluster event that sends pods NodeResourcesFit rejected
  // back to the scheduling queue without changing why they do not fit. (A node label change does
  // not: as upstream, Fit registered none.)
  void touchNode(const std::string& nodeName) {
    json pod = podJson("touch-" + std::to_string(++touches_), "100m", "someone-else");
    pod["spec"]["nodeName"] = nodeName;
    if (store_.create(Resource::Pods, "default", pod).ok()) {
      // Grace period 0: a bound pod is otherwise deleted gracefully and stays, with no kubelet.
      (void)store_.remove(Resource::Pods, "default", pod["metadata"]["name"].get<std::string>(), {},
                          0);
    }
  }

  // Retries the unschedulable `podName` until berth has written its FailedScheduling event twice,
  // which makes a series: the event is created once, then patched. (Each failure patches the pod's
  // status, and the event key holds the pod's resourceVersion as client-go's does, so it takes a
  // third failure with an unchanged message for the key to repeat.)
  bool repeatFailedScheduling(Resource api, const std::string& podName,
                              const std::string& nodeName) {
    return eventually(
        [&] {
          if (eventCount(api, "FailedScheduling", podName) >= 2) return true;
          touchNode(nodeName);
          std::this_thread::sleep_for(200ms);
          return false;
        },
        20s);
  }

  bool anyRequest(const std::function<bool(const RequestRecord&)>& match) const {
    auto log = server_->requestLog();
    return std::any_of(log.begin(), log.end(), match);
  }

  apiserver::Store& store() { return store_; }
  apiserver::Server& server() { return *server_; }

 private:
  std::string name_;
  apiserver::Store store_;
  // Finalizes graceful pod deletions (preemption's victims), as kubelets would.
  apiserver::KubeletStandIn kubelets_{store_, std::chrono::milliseconds(200)};
  std::unique_ptr<apiserver::Server> server_;
  std::string kubeconfig_;
  std::string config_;
  std::string log_;
  pid_t pid_ = -1;
  int touches_ = 0;
};

class DeployRbac : public testing::Test {
 protected:
  void SetUp() override {
    auto loaded = loadDeployment();
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    deployment_ = std::move(*loaded);
  }

  void TearDown() override {
    if (!HasFailure()) return;
    for (const auto& [name, cluster] : clusters_) {
      std::cerr << "--- berth log, " << name << " run (tail) ---\n" << cluster->logTail() << "\n";
    }
  }

  Cluster& newCluster(const std::string& name) {
    auto& slot = clusters_[name];
    slot = std::make_unique<Cluster>(name);
    return *slot;
  }

  // Everything berth does with events.k8s.io/v1 served: binds a pod; reports an unschedulable one
  // (FailedScheduling event, PodScheduled=False status patch) until the event is a series (event
  // patch); reads a pod back after its binding was refused because someone else bound it; holds
  // the Lease of deploy/'s configuration and hands it back on SIGTERM.
  void runWithEventsV1(Cluster& c) {
    ASSERT_TRUE(c.startServer().ok());
    ASSERT_TRUE(c.create(Resource::Nodes, nodeJson("n1", "2")).ok());
    ASSERT_TRUE(c.create(Resource::Nodes, nodeJson("n2", "2")).ok());
    ASSERT_TRUE(c.create(Resource::Pods, podJson("fits", "500m", schedulerName())).ok());
    ASSERT_TRUE(c.create(Resource::Pods, podJson("huge", "16", schedulerName())).ok());
    auto started = c.startBerth(deployment_);
    ASSERT_TRUE(started.ok()) << started.error().message;

    ASSERT_TRUE(eventually([&] { return !c.nodeOf("fits").empty(); })) << "berth bound no pod";
    ASSERT_TRUE(
        eventually([&] { return c.eventCount(Resource::EventsV1, "Scheduled", "fits") == 1; }));
    ASSERT_TRUE(eventually([&] {
      return c.podUnschedulable("huge") &&
             c.eventCount(Resource::EventsV1, "FailedScheduling", "huge") >= 1;
    }));
    ASSERT_TRUE(c.repeatFailedScheduling(Resource::EventsV1, "huge", "n1"))
        << "berth never patched the FailedScheduling event into a series";

    // Someone else binds "contested" while berth's Binding is held up: berth's answer is 409 and
    // it reads the pod back instead of binding again.
    c.server().delayBindings(1500ms);
    ASSERT_TRUE(c.create(Resource::Pods, podJson("contested", "100m", schedulerName())).ok());
    std::this_thread::sleep_for(500ms);
    json binding = {{"apiVersion", "v1"},
                    {"kind", "Binding"},
                    {"metadata", {{"name", "contested"}, {"namespace", "default"}}},
                    {"target", {{"kind", "Node"}, {"name", "n2"}}}};
    ASSERT_TRUE(c.store().bind("default", "contested", binding).ok());
    EXPECT_TRUE(eventually([&] {
      return c.anyRequest([](const RequestRecord& r) {
        return r.method == "GET" && r.resource == "pods" && r.name == "contested";
      });
    })) << "berth's Binding of contested was not refused, or it did not read the pod back";
    c.server().delayBindings(0ms);

    auto holder = [&] {
      auto lease =
          c.store().get(Resource::Leases, deployment_.leaseNamespace, deployment_.leaseName);
      return lease.ok() ? (*lease)["spec"].value("holderIdentity", "") : "(no lease)";
    };
    // Scrapes make berth review a token (TokenReview) and the anonymous caller's access to
    // /metrics (SubjectAccessReview); the embedded server knows neither.
    EXPECT_EQ(c.scrape("/metrics", ""), 403);
    EXPECT_EQ(c.scrape("/metrics", "Bearer unknown"), 401);

    EXPECT_NE(holder(), "") << "berth schedules without holding its lease";
    EXPECT_NE(holder(), "(no lease)")
        << "berth holds no Lease " << deployment_.leaseNamespace << "/" << deployment_.leaseName;
    EXPECT_EQ(c.stopBerth(), 0);
    EXPECT_EQ(holder(), "") << "berth did not release its lease";
  }

  // The same failures where the API server does not serve events.k8s.io/v1 (before Kubernetes
  // 1.19): berth falls back to core/v1 events. The embedded server always serves the group, so its
  // discovery document is answered 404 for berth's first request, which is that discovery.
  void runWithCoreEventsOnly(Cluster& c) {
    ASSERT_TRUE(c.startServer().ok());
    ASSERT_TRUE(c.create(Resource::Nodes, nodeJson("n1", "2")).ok());
    ASSERT_TRUE(c.create(Resource::Pods, podJson("huge", "16", schedulerName())).ok());
    c.server().failNextRequests(1, 404);
    auto started = c.startBerth(deployment_);
    ASSERT_TRUE(started.ok()) << started.error().message;

    ASSERT_TRUE(eventually([&] {
      return c.podUnschedulable("huge") &&
             c.eventCount(Resource::Events, "FailedScheduling", "huge") >= 1;
    })) << "berth wrote no core/v1 FailedScheduling event";
    const std::vector<RequestRecord> log = c.server().requestLog();
    ASSERT_FALSE(log.empty());
    ASSERT_EQ(log.front().path, "/apis/events.k8s.io/v1")
        << "berth's first request is not its events API discovery, so the 404 went elsewhere";
    ASSERT_EQ(log.front().code, 404);
    ASSERT_TRUE(c.repeatFailedScheduling(Resource::Events, "huge", "n1"))
        << "berth never patched the core/v1 FailedScheduling event into a series";
    EXPECT_EQ(c.stopBerth(), 0);
    EXPECT_FALSE(c.anyRequest([](const RequestRecord& r) {
      return r.path.starts_with("/apis/events.k8s.io/v1/");
    })) << "berth wrote events.k8s.io events although the group is not served";
  }

  // Preemption (DefaultPreemption, in deploy/'s profile): n1 is full of a low-priority pod, and a
  // high-priority pod needs the room. berth marks the victim (pods/status patch), deletes it,
  // writes a Preempted event and the preemptor's nomination, then binds the preemptor there.
  void runPreemption(Cluster& c) {
    ASSERT_TRUE(c.startServer().ok());
    ASSERT_TRUE(c.create(Resource::Nodes, nodeJson("n1", "2")).ok());
    json low = podJson("low", "2", "someone-else");
    low["spec"]["nodeName"] = "n1";
    low["spec"]["priority"] = 1;
    ASSERT_TRUE(c.create(Resource::Pods, low).ok());
    json high = podJson("high", "2", schedulerName());
    high["spec"]["priority"] = 1000;
    ASSERT_TRUE(c.create(Resource::Pods, high).ok());
    auto started = c.startBerth(deployment_);
    ASSERT_TRUE(started.ok()) << started.error().message;

    ASSERT_TRUE(eventually([&] { return c.nodeOf("high") == "n1"; }, 30s))
        << "berth did not preempt for the high-priority pod";
    EXPECT_FALSE(c.store().get(Resource::Pods, "default", "low").ok())
        << "the victim is still there";
    EXPECT_EQ(c.eventCount(Resource::EventsV1, "Preempted", "low"), 1);
    EXPECT_TRUE(c.anyRequest([](const RequestRecord& r) {
      return r.method == "DELETE" && r.resource == "pods" && r.name == "low";
    }));
    EXPECT_EQ(c.stopBerth(), 0);
  }

  // VolumeBinding's PreBind: a WaitForFirstConsumer claim berth annotates with the chosen node
  // (PVC update) and a claim berth binds a local PV to (PV update, its claimRef). No PV controller
  // completes them: berth's waits end when it stops.
  void runVolumes(Cluster& c) {
    ASSERT_TRUE(c.startServer().ok());
    ASSERT_TRUE(c.create(Resource::Nodes, nodeJson("n1", "2")).ok());
    for (const auto& [name, provisioner] :
         {std::pair<std::string, std::string>{"wffc", "csi.example.com"},
          {"local", "kubernetes.io/no-provisioner"}}) {
      ASSERT_TRUE(
          c.create(Resource::StorageClasses, json{{"apiVersion", "storage.k8s.io/v1"},
                                                  {"kind", "StorageClass"},
                                                  {"metadata", {{"name", name}}},
                                                  {"provisioner", provisioner},
                                                  {"volumeBindingMode", "WaitForFirstConsumer"}})
              .ok());
      ASSERT_TRUE(c.create(Resource::PersistentVolumeClaims,
                           json{{"apiVersion", "v1"},
                                {"kind", "PersistentVolumeClaim"},
                                {"metadata", {{"name", name}, {"namespace", "default"}}},
                                {"spec",
                                 {{"accessModes", {"ReadWriteOnce"}},
                                  {"storageClassName", name},
                                  {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}})
                      .ok());
      json pod = podJson("uses-" + name, "100m", schedulerName());
      pod["spec"]["volumes"] = {
          {{"name", "data"}, {"persistentVolumeClaim", {{"claimName", name}}}}};
      ASSERT_TRUE(c.create(Resource::Pods, pod).ok());
    }
    json pv{{"apiVersion", "v1"},
            {"kind", "PersistentVolume"},
            {"metadata", {{"name", "local-n1"}}},
            {"spec",
             {{"accessModes", {"ReadWriteOnce"}},
              {"capacity", {{"storage", "1Gi"}}},
              {"storageClassName", "local"},
              {"local", {{"path", "/mnt/disk"}}},
              {"nodeAffinity",
               {{"required",
                 {{"nodeSelectorTerms",
                   {{{"matchExpressions",
                      {{{"key", "kubernetes.io/hostname"},
                        {"operator", "In"},
                        {"values", {"n1"}}}}}}}}}}}}}}};
    ASSERT_TRUE(c.create(Resource::PersistentVolumes, pv).ok());
    // The PV controller's part: a new volume is Available.
    pv["status"] = {{"phase", "Available"}};
    ASSERT_TRUE(c.store().updateStatus(Resource::PersistentVolumes, "", "local-n1", pv).ok());
    auto started = c.startBerth(deployment_);
    ASSERT_TRUE(started.ok()) << started.error().message;

    EXPECT_TRUE(eventually([&] {
      return c.anyRequest([](const RequestRecord& r) {
        return r.method == "PUT" && r.resource == "persistentvolumeclaims" && r.name == "wffc";
      });
    })) << "berth did not annotate the WaitForFirstConsumer claim";
    EXPECT_TRUE(eventually([&] {
      return c.anyRequest([](const RequestRecord& r) {
        return r.method == "PUT" && r.resource == "persistentvolumes" && r.name == "local-n1";
      });
    })) << "berth did not bind the local volume to its claim";
    EXPECT_EQ(c.stopBerth(), 0);
  }

  const std::string& schedulerName() const { return deployment_.schedulerName; }

  Deployment deployment_;
  std::map<std::string, std::unique_ptr<Cluster>> clusters_;
};

TEST_F(DeployRbac, AllowsEveryRequestBerthMakesAndGrantsNothingItDoesNotUse) {
  runWithEventsV1(newCluster("events.k8s.io"));
  if (HasFatalFailure()) return;
  runWithCoreEventsOnly(newCluster("core-v1-events"));
  if (HasFatalFailure()) return;
  runPreemption(newCluster("preemption"));
  if (HasFatalFailure()) return;
  runVolumes(newCluster("volumes"));
  if (HasFatalFailure()) return;

  std::vector<Attributes> allowed;  // berth's resource requests, for the second check
  // Each denied kind of request once (with the first such request and how many there were).
  std::map<std::string, std::pair<std::string, int>> denied;
  for (const auto& [name, cluster] : clusters_) {
    const std::vector<RequestRecord> log = cluster->server().requestLog();
    ASSERT_LT(log.size(), apiserver::ServerOptions{}.requestLogLimit)
        << "the request log overflowed";
    for (const RequestRecord& r : log) {
      Attributes a = attributesOf(r.method, r.path, r.query);
      const std::string request = r.method + " " + r.path + (r.query.empty() ? "" : "?" + r.query) +
                                  " -> " + std::to_string(r.code) + " (" + name + " run)";
      if (a.resourceRequest) {
        // The server's log classifies verbs as the authorizer does, except that it calls a GET of
        // one object with ?watch=true a watch; berth makes none.
        EXPECT_EQ(a.verb, r.verb) << request;
      }
      if (defaultRolesAllow(a)) continue;
      if (allowingGrant(deployment_.grants, a) == nullptr) {
        auto [it, first] = denied.try_emplace(a.describe(), request, 0);
        ++it->second.second;
      } else {
        allowed.push_back(a);
      }
    }
  }
  // The serving port's client CAs: the ConfigMap is read at start, then listed and watched by
  // name, all through the RoleBinding to extension-apiserver-authentication-reader.
  for (const char* verb : {"get", "list", "watch"}) {
    EXPECT_TRUE(std::any_of(allowed.begin(), allowed.end(),
                            [verb](const Attributes& a) {
                              return a.resource == "configmaps" && a.namespace_ == "kube-system" &&
                                     a.name == "extension-apiserver-authentication" &&
                                     a.verb == verb;
                            }))
        << "berth did not " << verb << " kube-system/extension-apiserver-authentication";
  }
  for (const auto& [what, example] : denied) {
    ADD_FAILURE() << "deploy/rbac.yaml does not allow berth's request: " << what << " ("
                  << example.second << " times), e.g. " << example.first;
  }

  // Each (group, resource, verb[, name]) a rule grants must be what some request needed.
  for (const Grant& grant : deployment_.grants) {
    // A bootstrap role's rules are the cluster's, not berth's to trim.
    if (grant.source.starts_with("Role extension-apiserver-authentication-reader ")) continue;
    const PolicyRule& rule = grant.rule;
    for (const std::vector<std::string>* list : {&rule.apiGroups, &rule.resources, &rule.verbs,
                                                 &rule.resourceNames, &rule.nonResourceURLs}) {
      EXPECT_FALSE(contains(*list, "*")) << grant.source << " grants a wildcard";
    }
    const std::vector<std::string> names =
        rule.resourceNames.empty() ? std::vector<std::string>{""} : rule.resourceNames;
    for (const std::string& group : rule.apiGroups) {
      for (const std::string& resource : rule.resources) {
        for (const std::string& verb : rule.verbs) {
          for (const std::string& name : names) {
            PolicyRule one{
                {group},
                {resource},
                name.empty() ? std::vector<std::string>{} : std::vector<std::string>{name},
                {verb},
                {}};
            const bool used = std::any_of(allowed.begin(), allowed.end(), [&](const Attributes& a) {
              return inScope(grant, a) && ruleAllows(a, one);
            });
            EXPECT_TRUE(used) << grant.source << " grants \"" << verb << "\" on \"" << resource
                              << "\" in group \"" << group << "\""
                              << (name.empty() ? "" : " named \"" + name + "\"")
                              << ", which berth never used";
          }
        }
      }
    }
    for (const std::string& url : rule.nonResourceURLs) {
      ADD_FAILURE() << grant.source << " grants nonResourceURL " << url
                    << ": berth reads only discovery, which every authenticated user may read";
    }
  }
}

}  // namespace
}  // namespace berth
