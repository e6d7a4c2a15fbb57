// `berth apiserver`: serves an in-memory store over HTTP(S) with kube-apiserver's wire behaviour,
// loaded from a cluster file, until SIGINT or SIGTERM. kubectl, client-go and berth itself can
// point at it (--write-kubeconfig writes a kubeconfig that does).

#include "cmd/berth/apiserver.h"

#include <iostream>
#include <nlohmann/json.hpp>
#include <stop_token>

#include "cmd/berth/common.h"
#include "cmd/berth/flags.h"
#include "pkg/api/decode.h"
#include "pkg/api/yaml.h"
#include "pkg/apiserver/kubelet_stand_in.h"
#include "pkg/apiserver/server.h"
#include "pkg/apiserver/token_file.h"
#include "pkg/log/log.h"
#include "pkg/util/base64.h"
#include "pkg/util/private_file.h"
#include "pkg/util/sleep.h"

namespace berth::cmd {
namespace {

using json = nlohmann::json;

// The kinds a cluster file's objects are loaded as: what the scheduler reads.
bool loadable(apiserver::Resource resource) {
  switch (resource) {
    case apiserver::Resource::Nodes:
    case apiserver::Resource::Pods:
    case apiserver::Resource::Namespaces:
    case apiserver::Resource::Services:
    case apiserver::Resource::ReplicationControllers:
    case apiserver::Resource::ReplicaSets:
    case apiserver::Resource::StatefulSets:
    case apiserver::Resource::PersistentVolumeClaims:
    case apiserver::Resource::PersistentVolumes:
    case apiserver::Resource::StorageClasses:
    case apiserver::Resource::CSINodes:
    case apiserver::Resource::CSIDrivers:
    case apiserver::Resource::CSIStorageCapacities:
    case apiserver::Resource::ConfigMaps:
      return true;
    default:
      return false;
  }
}

std::string groupOf(const std::string& apiVersion) {
  const size_t slash = apiVersion.find('/');
  return slash == std::string::npos ? "" : apiVersion.substr(0, slash);
}

// The resource name of an object's kind, among those the server serves ("" otherwise).
std::string pluralOf(const json& object) {
  const std::string kind = object.value("kind", "");
  for (size_t i = 0; i < apiserver::kResourceCount; ++i) {
    const auto& info = apiserver::resourceInfo(static_cast<apiserver::Resource>(i));
    if (info.kind == kind) return std::string(info.name);
  }
  return "";
}

// Creates the file's nodes, pods, namespaces, services, controllers and storage objects in the
// store as they are written (pods and the others keep their status, which a create would reset,
// and pods their spec.nodeName).
util::Result<void> loadCluster(apiserver::Store& store, const std::string& path) {
  auto text = readFile(path);
  if (!text.ok()) {
    return text.error();
  }
  // Decoding validates every node and pod, with errors that name the object and field.
  auto objects = api::decodeObjects(*text);
  if (!objects.ok()) {
    return objects.error().wrap(path);
  }
  auto documents = api::parseDocuments(*text);
  if (!documents.ok()) {
    return documents.error().wrap(path);
  }
  std::vector<json> items;
  for (json& doc : *documents) {
    if (doc.is_object() && doc.contains("items") && doc["items"].is_array()) {
      for (json& item : doc["items"]) {
        items.push_back(std::move(item));
      }
    } else if (doc.is_object()) {
      items.push_back(std::move(doc));
    }
  }
  for (json& item : items) {
    const std::optional<apiserver::Resource> resource =
        apiserver::findResource(groupOf(item.value("apiVersion", "v1")), pluralOf(item));
    if (!resource || !loadable(*resource)) {
      continue;
    }
    json& meta = item["metadata"];
    for (const char* field : {"resourceVersion", "uid", "creationTimestamp", "generation"}) {
      meta.erase(field);
    }
    const std::string name = meta.value("name", "");
    const bool namespaced = apiserver::resourceInfo(*resource).namespaced;
    const std::string ns = namespaced ? meta.value("namespace", "default") : "";
    const std::string what = std::string(apiserver::resourceInfo(*resource).kind) + " " +
                             (ns.empty() ? name : ns + "/" + name);
    json status = item.value("status", json::object());
    auto created = store.create(*resource, ns, item);
    if (!created.ok()) {
      // The system namespaces exist already; a file from a real cluster lists them too.
      if (*resource == apiserver::Resource::Namespaces && created.error().status.code == 409) {
        continue;
      }
      return util::invalidArgument(path + ": " + what + ": " + created.error().status.message);
    }
    // Nodes keep what the create wrote; the others their status as the file has it.
    if (*resource != apiserver::Resource::Nodes && !status.empty()) {
      json withStatus = *created;
      withStatus["status"] = std::move(status);
      auto updated = store.updateStatus(*resource, ns, name, withStatus);
      if (!updated.ok()) {
        return util::invalidArgument(path + ": " + what + ": " + updated.error().status.message);
      }
    }
  }
  return {};
}

// A kubeconfig with one cluster, user and context named "berth".
std::string kubeconfig(const std::string& url, const std::string& caPem, const std::string& token) {
  std::string out =
      "apiVersion: v1\nkind: Config\nclusters:\n- name: berth\n  cluster:\n    server: " + url +
      "\n";
  if (!caPem.empty()) {
    out += "    certificate-authority-data: " + util::encodeBase64(caPem) + "\n";
  }
  out += "contexts:\n- name: berth\n  context:\n    cluster: berth\n    user: berth\n";
  out += "current-context: berth\nusers:\n- name: berth\n  user:";
  out += token.empty() ? " {}\n" : "\n    token: " + token + "\n";
  return out;
}

}  // namespace

int apiserverCommand(const std::vector<std::string>& args) {
  std::string bindAddress = "127.0.0.1";
  int64_t port = 0;
  std::string cluster;
  std::string certFile;
  std::string keyFile;
  std::string clientCaFile;
  std::string token;
  std::string tokenFile;
  std::string kubeconfigPath;
  std::chrono::milliseconds deletionBound{0};
  std::string reviewsFile;
  FlagSet flags;
  flags.addString("bind-address", &bindAddress, "The IP address on which to listen");
  flags.addInt("port", &port, "The port on which to serve; 0 picks a free port");
  flags.addString("cluster", &cluster,
                  "Nodes, pods, namespaces, services and controllers to load: JSON or YAML as "
                  "written by 'kubectl get nodes,pods,namespaces,services,replicasets,"
                  "statefulsets,replicationcontrollers -A -o json|yaml'");
  flags.addString("tls-cert-file", &certFile,
                  "File containing the x509 certificate (chain) for HTTPS; with "
                  "--tls-private-key-file");
  flags.addString("tls-private-key-file", &keyFile,
                  "File containing the x509 private key matching --tls-cert-file");
  flags.addString("client-ca-file", &clientCaFile,
                  "If set, any request presenting a client certificate signed by one of the "
                  "authorities in this file is authenticated");
  flags.addString("token", &token,
                  "If set, requests must carry 'Authorization: Bearer TOKEN' (or a client "
                  "certificate). Every local user can read it in ps; prefer --token-auth-file");
  flags.addString("token-auth-file", &tokenFile,
                  "If set, the file that will be used to secure the API server via token "
                  "authentication: kube-apiserver's CSV, one token,user,uid[,\"group1,group2\"] a "
                  "line");
  flags.addString("review-file", &reviewsFile,
                  "JSON or YAML file with the tokens TokenReviews authenticate (tokens: [{token, "
                  "user, uid, groups}]) and the non-resource rules SubjectAccessReviews allow "
                  "(allow: [{user or group, verbs, nonResourceURLs}])");
  flags.addString("write-kubeconfig", &kubeconfigPath,
                  "Write a kubeconfig that reaches this server to this path");
  flags.addDuration("pod-deletion-bound", &deletionBound,
                    "Running pods deleted gracefully are removed when their grace period ends, "
                    "as their kubelet would; if set, at most this long after the DELETE");
  const CommandLine cli = flags.parseCommandLine(
      args,
      "Serve nodes, pods, namespaces, services, replication controllers, replica sets, stateful "
      "sets,\nevents and leases over the Kubernetes API (HTTP/1.1, JSON) from memory, with "
      "kube-apiserver's\npaths, status codes, watches and discovery, until SIGINT or "
      "SIGTERM.\n\nUsage:\n  berth apiserver [flags]\n\nFlags:\n",
      /*maxArgs=*/0);
  if (cli.exitCode) return *cli.exitCode;
  if (port < 0 || port > 65535) return fail("--port: must be between 0 and 65535");
  if (certFile.empty() != keyFile.empty()) {
    return fail("--tls-cert-file and --tls-private-key-file must be set together");
  }
  if (!clientCaFile.empty() && certFile.empty()) {
    return fail("--client-ca-file requires --tls-cert-file and --tls-private-key-file");
  }

  apiserver::ServerOptions options;
  options.bindAddress = bindAddress;
  options.port = static_cast<uint16_t>(port);
  options.token = token;
  if (!tokenFile.empty()) {
    auto text = readFile(tokenFile);
    if (!text.ok()) return fail(text.error().message);
    auto tokens = apiserver::parseTokenFile(*text, tokenFile);
    if (!tokens.ok()) return fail(tokens.error().message);
    if (tokens->empty()) return fail("--token-auth-file: " + tokenFile + " holds no token");
    for (apiserver::StaticToken& t : *tokens) options.tokens.push_back(std::move(t.token));
  }
  std::string certPem;
  if (!certFile.empty()) {
    auto cert = readFile(certFile);
    if (!cert.ok()) return fail(cert.error().message);
    auto key = readFile(keyFile);
    if (!key.ok()) return fail(key.error().message);
    apiserver::TlsOptions tls{*cert, *key, ""};
    if (!clientCaFile.empty()) {
      auto ca = readFile(clientCaFile);
      if (!ca.ok()) return fail(ca.error().message);
      tls.clientCaPem = *ca;
    }
    certPem = *cert;
    options.tls = std::move(tls);
  }

  if (!reviewsFile.empty()) {
    auto text = readFile(reviewsFile);
    if (!text.ok()) return fail(text.error().message);
    auto documents = api::parseDocuments(*text);
    if (!documents.ok()) return fail(documents.error().wrap(reviewsFile).message);
    if (documents->size() != 1) return fail(reviewsFile + ": must hold one document");
    auto reviews = apiserver::decodeReviewConfig(documents->front());
    if (!reviews.ok()) return fail(reviews.error().wrap(reviewsFile).message);
    options.reviews = std::move(*reviews);
  }

  apiserver::Store store;
  store.createSystemNamespaces();  // as kube-apiserver does at startup
  if (!cluster.empty()) {
    if (auto loaded = loadCluster(store, cluster); !loaded.ok()) {
      return fail(loaded.error().message);
    }
  }
  std::stop_source stop = stopOnSignals();  // before any thread starts
  // No kubelets here: graceful pod deletions are finalized by this stand-in.
  apiserver::KubeletStandIn kubelets(store, deletionBound.count() > 0
                                                ? std::optional<util::Duration>(deletionBound)
                                                : std::nullopt);
  auto server = apiserver::Server::start(store, options);
  if (!server.ok()) return fail(server.error().message);
  const std::string url = (*server)->url();
  if (!kubeconfigPath.empty()) {
    // The serving certificate (chain) is what clients must trust: Go accepts a trusted leaf.
    const std::string& kubeconfigToken =
        token.empty() && !options.tokens.empty() ? options.tokens.front() : token;
    if (auto written =
            util::writePrivateFile(kubeconfigPath, kubeconfig(url, certPem, kubeconfigToken));
        !written.ok()) {
      return fail(written.error().message);
    }
  }
  log::info(0, "Serving the Kubernetes API",
            {{"url", url}, {"resourceVersion", store.resourceVersion()}});

  util::waitForStop(stop.get_token());
  log::info(0, "Shutting down the Kubernetes API server");
  (*server)->stop();
  return 0;
}

}  // namespace berth::cmd
