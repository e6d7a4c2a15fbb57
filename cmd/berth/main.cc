// berth: a Kubernetes secondary scheduler. This file wires subcommands to the packages; it is the
// only place that reads files, the environment and the terminal.

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cmd/berth/apiserver.h"
#include "cmd/berth/common.h"
#include "cmd/berth/explain.h"
#include "cmd/berth/flags.h"
#include "cmd/berth/run.h"
#include "cmd/berth/serving_flags.h"
#include "cmd/berth/version.h"
#include "pkg/api/decode.h"
#include "pkg/config/config.h"
#include "pkg/labels/selector.h"
#include "pkg/plugins/registry.h"
#include "pkg/simulate/simulator.h"
#include "pkg/util/parallel.h"

namespace berth::cmd {
namespace {

constexpr const char* kRootHelp =
    R"(berth is a Kubernetes secondary scheduler. Pods opt in with spec.schedulerName: berth;
berth filters and scores the nodes with kube-scheduler's semantics and binds each pod to the best one.

Usage:
  berth [command]

Available Commands:
  apiserver   Serve nodes and pods over the Kubernetes API from memory, for kubectl and tests
  demo        Run berth against an embedded API server with a sample cluster and narrate
  explain     Explain why a pod of the cluster is pending, or where it would go
  run         Run the scheduler daemon (the default when only flags are given)
  simulate    Place the pending pods of a cluster file offline and explain each decision
  version     Print the version of berth
  help        Help about any command

Flags:
  -h, --help                       help for berth
      --version version[=true]     --version, --version=raw prints version information and quits

Use "berth [command] --help" for more information about a command.
)";

int versionCommand(const std::vector<std::string>& args) {
  std::string output;
  FlagSet flags;
  flags.addString("output", &output, "One of 'yaml' or 'json'");
  flags.addShorthand('o', "output");
  const CommandLine cli = flags.parseCommandLine(
      args,
      "Print the version of berth: the release, the git commit and tree state, the build date, "
      "the compiler\nand the platform, as set when it was built.\n\n"
      "Usage:\n  berth version [flags]\n\nFlags:\n",
      /*maxArgs=*/0);
  if (cli.exitCode) return *cli.exitCode;
  const VersionInfo& info = versionInfo();
  if (output == "json") {
    std::cout << versionJson(info).dump(2) << "\n";
  } else if (output == "yaml") {
    std::cout << versionYaml(info);
  } else if (output.empty()) {
    std::cout << versionLine() << " (commit " << info.gitCommit << ", " << info.gitTreeState
              << ", built " << info.buildDate << " with " << info.compiler << ", " << info.platform
              << ")\n";
  } else {
    return fail("--output must be 'yaml' or 'json'");
  }
  return 0;
}

// The objects of every --cluster file, as one cluster: nodes from one export and pods from another
// add up; an object in two files is an error naming both.
util::Result<api::ObjectSet> loadClusters(const std::vector<std::string>& paths) {
  api::ObjectSet all;
  std::map<std::string, std::string> seen;  // "Node n1", "Pod ns/p" -> the file it came from
  auto take = [&seen](auto& into, auto& from, std::string_view kind,
                      const std::string& path) -> util::Result<void> {
    for (auto& item : from) {
      const std::string& ns = item->metadata.namespace_;
      const std::string key =
          std::string(kind) + " " + (ns.empty() ? "" : ns + "/") + item->metadata.name;
      if (auto [it, inserted] = seen.emplace(key, path); !inserted) {
        return util::invalidArgument(key + " is in both " + it->second + " and " + path);
      }
      into.push_back(std::move(item));
    }
    return {};
  };
  for (const std::string& path : paths) {
    auto text = readFile(path);
    if (!text.ok()) return text.error();
    auto objects = api::decodeObjects(*text);
    if (!objects.ok()) return util::invalidArgument(path + ": " + objects.error().message);
    util::Result<void> r = take(all.nodes, objects->nodes, "node", path);
    if (r.ok()) r = take(all.pods, objects->pods, "pod", path);
    if (r.ok()) r = take(all.namespaces, objects->namespaces, "namespace", path);
    if (r.ok()) r = take(all.services, objects->services, "service", path);
    if (r.ok()) r = take(all.replicaSets, objects->replicaSets, "replicaset", path);
    if (r.ok()) r = take(all.statefulSets, objects->statefulSets, "statefulset", path);
    if (r.ok()) {
      r = take(all.replicationControllers, objects->replicationControllers, "replicationcontroller",
               path);
    }
    if (r.ok()) {
      r = take(all.podDisruptionBudgets, objects->podDisruptionBudgets, "poddisruptionbudget",
               path);
    }
    if (!r.ok()) return r.error();
    all.skipped.insert(all.skipped.end(), objects->skipped.begin(), objects->skipped.end());
  }
  return all;
}

// The first object of `kind` in the template file of --add-nodes or --add-pods.
template <typename T>
util::Result<T> loadTemplate(std::string_view flag, const std::string& path,
                             std::vector<std::shared_ptr<const T>> api::ObjectSet::*objects,
                             std::string_view kind) {
  auto text = readFile(path);
  if (!text.ok()) return text.error().wrap("--" + std::string(flag));
  auto set = api::decodeObjects(*text);
  if (!set.ok()) return set.error().wrap("--" + std::string(flag) + ": " + path);
  const auto& items = (*set).*objects;
  if (items.empty()) {
    return util::invalidArgument("--" + std::string(flag) + ": " + path + " holds no " +
                                 std::string(kind));
  }
  return *items.front();
}

util::Result<simulate::WhatIfs> parseWhatIfs(const std::vector<std::string>& drain,
                                             const std::string& drainSelector,
                                             const std::string& addNodes,
                                             const std::string& addPods) {
  simulate::WhatIfs w;
  if (!drain.empty() || !drainSelector.empty()) {
    simulate::DrainRequest request;
    for (const std::string& list : drain) {
      for (std::string& name : splitList(list)) request.nodes.push_back(std::move(name));
    }
    if (!drainSelector.empty()) {
      auto selector = labels::Selector::parse(drainSelector);
      if (!selector.ok()) return selector.error().wrap("--drain-selector");
      request.selector = std::move(*selector);
    }
    w.drain = std::move(request);
  }
  if (!addNodes.empty()) {
    auto arg = simulate::parseTemplateArg("add-nodes", addNodes);
    if (!arg.ok()) return arg.error();
    auto node = loadTemplate<api::Node>("add-nodes", arg->path, &api::ObjectSet::nodes, "Node");
    if (!node.ok()) return node.error();
    w.nodeTemplate = std::move(*node);
    w.nodeCount = arg->count;
  }
  if (!addPods.empty()) {
    auto arg = simulate::parseTemplateArg("add-pods", addPods);
    if (!arg.ok()) return arg.error();
    auto pod = loadTemplate<api::Pod>("add-pods", arg->path, &api::ObjectSet::pods, "Pod");
    if (!pod.ok()) return pod.error();
    w.podTemplate = std::move(*pod);
    w.podCount = arg->count;
  }
  return w;
}

int simulateCommand(const std::vector<std::string>& args) {
  std::vector<std::string> clusters;
  std::string configPath;
  std::string output = "table";
  std::string schedulerName(config::kDefaultSchedulerName);
  bool explain = false;
  bool allFilters = false;
  bool allPending = false;
  bool noPreemption = false;
  uint64_t seed = 0;
  std::vector<std::string> drain;
  std::string drainSelector;
  std::string addNodes;
  std::string addPods;
  FlagSet flags;
  flags.addStringList("cluster", &clusters,
                      "Nodes and pods to schedule against: JSON or YAML as written by "
                      "'kubectl get nodes,pods -A -o json|yaml' (required; repeat it to merge "
                      "files, e.g. nodes from one export and pods from another)");
  flags.addString("config", &configPath,
                  "The path to a KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1)");
  addOutputFlag(flags, &output);
  flags.addBool("explain", &explain,
                "Show, for every pod, each node's verdict: rejection reasons, or plugin scores "
                "(normalized, before weights) and the weighted total");
  flags.addBool("explain-all-filters", &allFilters,
                "With --explain (implied), every filter plugin's verdict on each node, not only "
                "the first that rejected it");
  flags.addString("scheduler-name", &schedulerName,
                  "Place the pending pods whose spec.schedulerName is this name");
  flags.addBool("all-pending", &allPending,
                "Place every pending pod, whatever its spec.schedulerName");
  flags.addUint("seed", &seed,
                "Seed for breaking ties between equally scored nodes and for preemption's first "
                "candidate node");
  flags.addBool("no-preemption", &noPreemption,
                "Do not preempt: a pod that fits nowhere stays pending instead of evicting "
                "lower-priority pods");
  flags.addStringList("drain", &drain,
                      "What if these nodes were drained (NODE[,NODE...], repeatable): cordoned, "
                      "their pods evicted as kubectl drain --ignore-daemonsets --force would, "
                      "and the pods their controllers re-create placed");
  flags.addString("drain-selector", &drainSelector,
                  "Drain the nodes this label selector matches, as --drain");
  flags.addString("add-nodes", &addNodes,
                  "What if copies of the Node in FILE were added (FILE[:COUNT]); without COUNT, "
                  "the fewest copies that place every pending pod that fits one (up to 1000)");
  flags.addString("add-pods", &addPods,
                  "What if copies of the Pod in FILE were created (FILE[:COUNT]); without COUNT, "
                  "how many fit, placed one by one, and why the next does not");
  const CommandLine cli = flags.parseCommandLine(
      args,
      "Place the pending pods of a cluster file offline, in scheduling queue order, each\n"
      "placement assumed before the next, with the same plugins and configuration as the\n"
      "daemon; print where each pod goes or the reason it fits nowhere. A pod that fits\n"
      "nowhere preempts as the daemon would: the lower-priority pods it evicts leave the\n"
      "simulated cluster and it is placed on the node they made room on.\n\n"
      "Usage:\n  berth simulate --cluster FILE [flags]\n\nFlags:\n",
      /*maxArgs=*/0);
  if (cli.exitCode) return *cli.exitCode;
  if (clusters.empty()) return fail("required flag \"cluster\" not set");
  if (auto r = checkOutput(output); !r.ok()) return fail(r.error().message);
  if (allPending && flags.changed("scheduler-name")) {
    return fail("--all-pending and --scheduler-name cannot be used together");
  }

  auto cfg = loadConfiguration(configPath);
  if (!cfg.ok()) return fail(cfg.error().message);
  if (!allPending &&
      std::none_of(cfg->profiles.begin(), cfg->profiles.end(),
                   [&](const config::Profile& p) { return p.schedulerName == schedulerName; })) {
    std::string names;
    for (const config::Profile& p : cfg->profiles) {
      names += (names.empty() ? "\"" : ", \"") + p.schedulerName + "\"";
    }
    return fail((configPath.empty() ? std::string("the default configuration") : configPath) +
                " has no profile for scheduler name \"" + schedulerName + "\": its profiles are " +
                names +
                "; pass --scheduler-name NAME to place the pods of one of them, or --all-pending");
  }
  auto objects = loadClusters(clusters);
  if (!objects.ok()) return fail(objects.error().message);
  if (auto ignored = simulate::ignoredKinds(objects->skipped)) {
    std::cerr << "berth simulate: " << *ignored << "\n";
  }
  if (auto note = simulate::missingClaimsNote(*objects)) {
    std::cerr << "berth simulate: " << *note << "\n";
  }

  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  util::Parallelizer parallelizer(std::min(cfg->parallelism, cores));
  auto whatIfs = parseWhatIfs(drain, drainSelector, addNodes, addPods);
  if (!whatIfs.ok()) return fail(whatIfs.error().message);
  simulate::Options options{.schedulerName = schedulerName,
                            .allPending = allPending,
                            .explain = explain || allFilters,
                            .allFilters = allFilters,
                            .seed = seed,
                            .preemption = !noPreemption};
  auto report = simulate::runWhatIfs(*objects, *whatIfs, *cfg, options, parallelizer);
  if (!report.ok()) return fail(report.error().message);
  if (output == "json") {
    std::cout << simulate::toJson(*report, options.explain).dump(2) << "\n";
  } else {
    std::cout << simulate::toTable(*report, options.explain);
  }
  return 0;
}

int dispatch(std::vector<std::string> args) {
  if (args.empty()) {
    std::cout << kRootHelp;
    return 0;
  }
  const std::string command = args.front();
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "-h" || command == "--help") {
    std::cout << kRootHelp;
    return 0;
  }
  if (command == "help") {
    if (rest.empty()) {
      std::cout << kRootHelp;
      return 0;
    }
    return dispatch({rest.front(), "--help"});
  }
  if (command == "version") return versionCommand(rest);
  if (command == "simulate") return simulateCommand(rest);
  if (command == "apiserver") return apiserverCommand(rest);
  if (command == "run") return runCommand(rest);
  if (command == "demo") return demoCommand(rest);
  if (command == "explain") return explainCommand(rest);
  // Plain `berth --kubeconfig ...` runs the daemon, as kube-scheduler does (and `berth
  // --version` prints the version, as on every command).
  if (command.starts_with("-")) return runCommand(args);
  std::cerr << "Error: unknown command \"" << command << "\" for \"berth\"\n"
            << "Run 'berth --help' for usage.\n";
  return kExitUsage;
}

}  // namespace
}  // namespace berth::cmd

int main(int argc, char** argv) {
  try {
    return berth::cmd::dispatch(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    // Reaching here is a bug: every module reports errors as values.
    std::cerr << "internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "internal error: an exception of unknown type\n";
  }
  return 1;
}
