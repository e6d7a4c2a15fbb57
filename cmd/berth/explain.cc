// `berth explain [NAMESPACE/]POD [-n NAMESPACE]`: reads the nodes and pods of the live cluster,
// runs one pod through the simulate pipeline (the daemon's framework and plugins, nothing bound)
// and prints each node's verdict. Only reads: it never writes to the API server.

#include "cmd/berth/explain.h"

#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cmd/berth/common.h"
#include "cmd/berth/flags.h"
#include "pkg/api/decode.h"
#include "pkg/client/rest.h"
#include "pkg/config/config.h"
#include "pkg/plugins/registry.h"
#include "pkg/simulate/simulator.h"
#include "pkg/util/parallel.h"

namespace berth::cmd {
namespace {

constexpr const char* kExplainHelp =
    R"(Explain why a pod is pending, or where it would go: read the nodes and the pods bound to them
from the cluster, run the pod through the same filters and scores as the daemon (and
'berth simulate --explain'), and print each node's verdict: the plugin that rejects it and why,
or each plugin's score. A pod that fits nowhere also gets the message the daemon records on it
("0/N nodes are available: ..."), and, as the daemon would preempt, whom it would preempt and
where, or for each node why preemption cannot help (no lower-priority pods, still does not fit
without them, or evicting pods does not lift the rejection). Nothing is written to the cluster.

The pod's spec.schedulerName picks the profile from --config, as in the daemon. When no profile has
that name, berth never schedules the pod (it is left to the scheduler of that name); explain says
so first, then shows how berth's first profile would place it. A pod already bound (spec.nodeName
set) is reported as bound to its node and not scheduled again.

The cluster is found as kubectl finds it: --kubeconfig, else the files of $KUBECONFIG (merged as
kubectl merges them), else ~/.kube/config, else the pod's service account. Exec credential plugins
(aws eks get-token, gke-gcloud-auth-plugin, kubelogin) run as kubectl runs them. The pod's
namespace is -n/--namespace, or the NAMESPACE/ prefix, or the context's namespace, or "default".

Usage:
  berth explain [NAMESPACE/]POD [-n NAMESPACE] [flags]

Examples:
  berth explain web -n default
  berth explain default/web --kubeconfig ~/.kube/config
  berth explain shop/postgres-0 --config scheduler.yaml --output json

The exit status is 0 when the pod was read (pending or bound), 2 when it was not (no such pod, API
server unreachable, bad flags).

Flags:
)";

struct PodRef {
  std::string ns;
  std::string name;
};

// NAMESPACE/POD or POD; a bare name leaves the namespace empty for the caller to choose.
util::Result<PodRef> parsePodRef(const std::string& arg) {
  const size_t slash = arg.find('/');
  if (slash == std::string::npos && !arg.empty()) return PodRef{"", arg};
  if (slash == std::string::npos || slash == 0 || slash + 1 == arg.size() ||
      arg.find('/', slash + 1) != std::string::npos) {
    return util::invalidArgument("argument \"" + arg +
                                 "\": want POD or NAMESPACE/POD, for example web or default/web");
  }
  return PodRef{arg.substr(0, slash), arg.substr(slash + 1)};
}

// Every object of a kind plugins read besides pods and nodes. Without them the plugins see fewer
// objects, not a broken cluster: a list that fails is a warning. With `noneWhenNotServed`, a server
// that does not serve the kind at all (404) simply has none.
template <typename T>
void readObjects(client::RestClient& client, const client::Resource& resource,
                 util::Result<T> (*decode)(const nlohmann::json&),
                 std::vector<std::shared_ptr<const T>>& out, std::vector<std::string>& warnings,
                 bool noneWhenNotServed = false) {
  auto listed = client.listAll(resource, "");
  if (!listed.ok()) {
    if (noneWhenNotServed && listed.error().isNotFound()) return;
    warnings.push_back("could not list " + std::string(resource.name) + ": " +
                       listed.error().toString());
    return;
  }
  for (const nlohmann::json& item : listed->items) {
    auto decoded = decode(item);
    if (!decoded.ok()) {
      warnings.push_back("skipped " + decoded.error().message);
      continue;
    }
    out.push_back(std::make_shared<const T>(std::move(*decoded)));
  }
}

// The cluster as the daemon's cache and informers hold it: every node, the unfinished pods bound
// to them, and the namespaces, services and controllers. An object that does not decode is
// skipped with a warning naming it, as the daemon's informers do.
util::Result<api::ObjectSet> readCluster(client::RestClient& client, const api::Pod& explained,
                                         std::vector<std::string>& warnings) {
  api::ObjectSet cluster;
  auto nodes = client.listAll(client::kNodes, "");
  if (!nodes.ok()) return nodes.error().toError().wrap("list nodes");
  for (const nlohmann::json& item : nodes->items) {
    auto node = api::decodeNode(item);
    if (!node.ok()) {
      warnings.push_back("skipped " + node.error().message);
      continue;
    }
    cluster.nodes.push_back(std::make_shared<const api::Node>(std::move(*node)));
  }
  client::ListOptions options;
  options.fieldSelector = api::kNonTerminalPodsSelector;
  auto pods = client.listAll(client::kPods, "", options);
  if (!pods.ok()) return pods.error().toError().wrap("list pods");
  for (const nlohmann::json& item : pods->items) {
    auto pod = api::decodePod(item);
    if (!pod.ok()) {
      warnings.push_back("skipped " + pod.error().message);
      continue;
    }
    // Pending pods hold nothing; the explained pod is added as read, even if the list saw it bound.
    if (!api::isAssigned(*pod) || api::isTerminal(*pod)) continue;
    if (pod->metadata.namespace_ == explained.metadata.namespace_ &&
        pod->metadata.name == explained.metadata.name) {
      continue;
    }
    cluster.pods.push_back(std::make_shared<const api::Pod>(std::move(*pod)));
  }
  readObjects(client, client::kNamespaces, api::decodeNamespace, cluster.namespaces, warnings);
  readObjects(client, client::kServices, api::decodeService, cluster.services, warnings);
  readObjects(client, client::kReplicaSets, api::decodeReplicaSet, cluster.replicaSets, warnings);
  readObjects(client, client::kStatefulSets, api::decodeStatefulSet, cluster.statefulSets,
              warnings);
  readObjects(client, client::kReplicationControllers, api::decodeReplicationController,
              cluster.replicationControllers, warnings);
  // Preemption avoids disrupting what a budget protects; an API server without policy/v1 (berth's
  // embedded one) has no budgets.
  readObjects(client, api::kPodDisruptionBudgets, api::decodePodDisruptionBudget,
              cluster.podDisruptionBudgets, warnings, /*noneWhenNotServed=*/true);
  // What the volume plugins read: the claims and volumes, their classes and the CSI objects.
  readObjects(client, client::kPersistentVolumeClaims, api::decodePersistentVolumeClaim,
              cluster.persistentVolumeClaims, warnings);
  readObjects(client, client::kPersistentVolumes, api::decodePersistentVolume,
              cluster.persistentVolumes, warnings);
  readObjects(client, client::kStorageClasses, api::decodeStorageClass, cluster.storageClasses,
              warnings);
  readObjects(client, client::kCSINodes, api::decodeCSINode, cluster.csiNodes, warnings);
  readObjects(client, client::kCSIDrivers, api::decodeCSIDriver, cluster.csiDrivers, warnings);
  readObjects(client, client::kCSIStorageCapacities, api::decodeCSIStorageCapacity,
              cluster.csiStorageCapacities, warnings);
  return cluster;
}

// Columns padded to their widest cell, three spaces apart, as kubectl prints.
std::string formatColumns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      out += row[i];
      if (i + 1 < row.size()) out.append(widths[i] - row[i].size() + 3, ' ');
    }
    out += "\n";
  }
  return out;
}

std::string inQuotes(const std::string& s) { return "\"" + s + "\""; }

std::string joinQuoted(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + inQuotes(n);
  return out;
}

std::string renderTable(const simulate::Report& report, const simulate::PodResult& result,
                        const std::string& profileNote) {
  std::ostringstream out;
  if (!profileNote.empty()) out << "Note: " << profileNote << "\n\n";

  std::vector<const simulate::NodeExplanation*> feasible;
  std::vector<const simulate::NodeExplanation*> rejected;
  std::vector<std::string> notEvaluated;
  for (const auto& n : result.nodes) {
    if (n.feasible) {
      feasible.push_back(&n);
    } else if (n.evaluated) {
      rejected.push_back(&n);
    } else {
      notEvaluated.push_back(n.name);
    }
  }
  // Best first; among equal totals the chosen node leads, so the first row is the answer.
  const std::string chosen = result.node.value_or("");
  std::stable_sort(feasible.begin(), feasible.end(), [&](const auto* a, const auto* b) {
    if (a->total != b->total) return a->total > b->total;
    return a->name == chosen && b->name != chosen;
  });

  if (!result.nominatedNode.empty()) {
    std::string victims;
    for (const auto& v : result.victims) victims += (victims.empty() ? "" : ", ") + v;
    out << "Pod " << result.pod << " is pending and fits no node as the cluster is; berth would "
        << "preempt " << victims << " on node " << inQuotes(result.nominatedNode)
        << " to make room for it (profile " << inQuotes(result.profile) << "):\n"
        << result.message << "\n";
  } else if (result.node) {
    out << "Pod " << result.pod << " is pending; it fits " << feasible.size() << " of "
        << report.numNodes << " nodes and berth would bind it to node " << inQuotes(*result.node)
        << " (profile " << inQuotes(result.profile) << ").\n";
    std::vector<std::string> tied;
    for (const auto* n : feasible) {
      if (n->name != *result.node && !n->scores.empty() && n->total == feasible.front()->total) {
        tied.push_back(n->name);
      }
    }
    if (!tied.empty()) {
      out << "Tied at the best total (" << feasible.front()->total << ") with " << joinQuoted(tied)
          << ": the daemon picks one of the tied nodes at random.\n";
    }
  } else {
    out << "Pod " << result.pod << " is pending (profile " << inQuotes(result.profile) << "):\n"
        << result.message << "\n";
  }

  if (!feasible.empty()) {
    std::vector<std::vector<std::string>> rows;
    if (feasible.front()->scores.empty()) {
      out << "\nFeasible nodes (not scored: only one node fits):\n";
      rows.push_back({"NODE"});
      for (const auto* n : feasible) rows.push_back({n->name});
    } else {
      out << "\nFeasible nodes, best first (each plugin's score is 0-100 before its weight; TOTAL "
             "is the weighted sum):\n";
      std::vector<std::string> header = {"NODE", "TOTAL"};
      for (const auto& [plugin, score] : feasible.front()->scores) header.push_back(plugin);
      rows.push_back(std::move(header));
      for (const auto* n : feasible) {
        std::vector<std::string> row = {n->name, std::to_string(n->total)};
        for (const auto& [plugin, score] : n->scores) row.push_back(std::to_string(score));
        rows.push_back(std::move(row));
      }
    }
    out << formatColumns(rows);
  }
  if (!rejected.empty()) {
    out << "\nRejected nodes:\n";
    // Preemption's verdict per node, when the pod fits nowhere and may preempt.
    const bool preemption = std::any_of(rejected.begin(), rejected.end(),
                                        [](const auto* n) { return !n->preemption.empty(); });
    std::vector<std::vector<std::string>> rows = {{"NODE", "PLUGIN", "REASON"}};
    if (preemption) rows.front().push_back("PREEMPTION");
    for (const auto* n : rejected) {
      std::string reasons;
      for (const auto& r : n->reasons) reasons += (reasons.empty() ? "" : ", ") + r;
      rows.push_back({n->name, n->plugin.empty() ? "-" : n->plugin, reasons});
      if (preemption) rows.back().push_back(n->preemption.empty() ? "-" : n->preemption);
    }
    out << formatColumns(rows);
  }
  if (!notEvaluated.empty()) {
    out << "\nNot evaluated (percentageOfNodesToScore ended the search once enough nodes fit): ";
    for (size_t i = 0; i < notEvaluated.size(); ++i) out << (i ? ", " : "") << notEvaluated[i];
    out << "\n";
  }
  if (!report.warnings.empty()) out << "\n";
  for (const auto& w : report.warnings) out << "warning: " << w << "\n";
  return out.str();
}

// The answer when there is nothing to schedule: the pod is bound, or finished.
int printWithoutScheduling(const api::Pod& pod, const std::string& output) {
  const std::string key = api::podKey(pod);
  const bool bound = !pod.spec.nodeName.empty();
  const std::string message =
      bound ? "Pod " + key + " is bound to node " + inQuotes(pod.spec.nodeName) +
                  ": it is no longer pending, so there is nothing to explain."
            : "Pod " + key + " has finished (phase " + pod.status.phase +
                  "): finished pods are not scheduled.";
  if (output == "json") {
    nlohmann::json result = {{"pod", key}};
    result["node"] = bound ? nlohmann::json(pod.spec.nodeName) : nlohmann::json(nullptr);
    result["bound"] = bound;
    if (!bound) result["message"] = message;
    std::cout << nlohmann::json{{"results", nlohmann::json::array({result})}}.dump(2) << "\n";
  } else {
    std::cout << message << "\n";
  }
  return 0;
}

}  // namespace

int explainCommand(const std::vector<std::string>& args) {
  std::string kubeconfig;
  std::string context;
  std::string configPath;
  std::string output = "table";
  std::string ns;
  FlagSet flags;
  addClientFlags(flags, &kubeconfig, &context);
  flags.addString("namespace", &ns,
                  "The pod's namespace (-n; default: the NAMESPACE/ prefix, else the kubeconfig "
                  "context's namespace, else \"default\")");
  flags.addShorthand('n', "namespace");
  flags.addString("config", &configPath,
                  "The path to the configuration file (KubeSchedulerConfiguration, "
                  "kubescheduler.config.k8s.io/v1) whose profiles the daemon runs");
  addOutputFlag(flags, &output, " (as 'berth simulate --explain')");
  const CommandLine cli = flags.parseCommandLine(args, kExplainHelp, /*maxArgs=*/1);
  if (cli.exitCode) return *cli.exitCode;
  if (cli.args.empty()) return fail("requires one argument, POD or NAMESPACE/POD");
  auto ref = parsePodRef(cli.args.front());
  if (!ref.ok()) return fail(ref.error().message);
  if (!ns.empty() && !ref->ns.empty() && ns != ref->ns) {
    return fail("argument \"" + cli.args.front() + "\" names namespace \"" + ref->ns +
                "\" but --namespace is \"" + ns + "\"");
  }
  if (auto r = checkOutput(output); !r.ok()) return fail(r.error().message);

  auto loaded = loadConfiguration(configPath);
  if (!loaded.ok()) return fail(loaded.error().message);
  const config::Configuration& cfg = *loaded;
  // As `berth run`: the flag wins over the file's clientConnection block.
  if (kubeconfig.empty()) kubeconfig = cfg.clientConnection.kubeconfig;
  auto restConfig = loadKubectlConfig(kubeconfig, context);
  if (!restConfig.ok()) return fail(restConfig.error().message);
  if (ref->ns.empty()) ref->ns = !ns.empty() ? ns : restConfig->namespace_;
  if (ref->ns.empty()) ref->ns = "default";
  for (const std::string& warning : restConfig->warnings) {
    std::cerr << "warning: " << warning << "\n";
  }
  restConfig->qps = static_cast<float>(cfg.clientConnection.qps);
  restConfig->burst = cfg.clientConnection.burst;
  client::RestOptions restOptions;
  restOptions.interactiveCredentials = true;  // a person runs explain: a plugin may prompt
  auto restClient = client::RestClient::create(*restConfig, restOptions);
  if (!restClient.ok()) return fail(restClient.error().message);
  client::RestClient& client = **restClient;

  auto object = client.get(client::kPods, ref->ns, ref->name);
  if (!object.ok()) {
    if (object.error().isNotFound()) {
      return fail("pods \"" + ref->name + "\" not found in namespace \"" + ref->ns + "\"");
    }
    return fail("get pod " + ref->ns + "/" + ref->name + ": " + object.error().toString());
  }
  auto pod = api::decodePod(*object);
  if (!pod.ok()) return fail(pod.error().message);
  if (api::isAssigned(*pod) || api::isTerminal(*pod)) return printWithoutScheduling(*pod, output);

  std::string profileNote;
  const bool served = std::any_of(cfg.profiles.begin(), cfg.profiles.end(), [&](const auto& p) {
    return p.schedulerName == pod->spec.schedulerName;
  });
  if (!served) {
    std::string names;
    for (const auto& p : cfg.profiles) {
      names += (names.empty() ? "" : ", ") + inQuotes(p.schedulerName);
    }
    profileNote = "spec.schedulerName " + inQuotes(pod->spec.schedulerName) +
                  " matches no profile of this configuration (" + names +
                  "), so berth will never schedule this pod; shown as profile " +
                  inQuotes(cfg.profiles.front().schedulerName) + " would place it.";
  }

  std::vector<std::string> warnings;
  auto cluster = readCluster(client, *pod, warnings);
  if (!cluster.ok()) return fail(cluster.error().message);
  cluster->pods.push_back(std::make_shared<const api::Pod>(std::move(*pod)));

  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  util::Parallelizer parallelizer(std::min(cfg.parallelism, cores));
  simulate::Options options;
  options.allPending = true;  // only the explained pod is pending; its profile is looked up by name
  options.explain = true;
  auto report = simulate::run(*cluster, cfg, options, parallelizer);
  if (!report.ok()) return fail(report.error().message);
  if (report->results.size() != 1) {
    return fail("pod " + ref->ns + "/" + ref->name + ": the simulation returned no result");
  }
  report->warnings.insert(report->warnings.begin(), warnings.begin(), warnings.end());

  if (output == "json") {
    nlohmann::json j = simulate::toJson(*report, /*explain=*/true);
    j["results"][0]["profile"] = report->results.front().profile;
    if (!profileNote.empty()) {
      if (!j.contains("warnings")) j["warnings"] = nlohmann::json::array();
      j["warnings"].insert(j["warnings"].begin(), profileNote);
    }
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << renderTable(*report, report->results.front(), profileNote);
  }
  return 0;
}

}  // namespace berth::cmd
