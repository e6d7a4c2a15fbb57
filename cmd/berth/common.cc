#include "cmd/berth/common.h"

#include <pthread.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "pkg/plugins/registry.h"

namespace berth::cmd {

int fail(const std::string& message) {
  std::cerr << "Error: " << message << "\n";
  return kExitUsage;
}

util::Result<std::string> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return util::invalidArgument("open " + path + ": no such file or unreadable");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return util::invalidArgument("read " + path + ": I/O error");
  return s.str();
}

util::Result<config::Configuration> loadConfiguration(const std::string& path) {
  if (path.empty()) return config::defaultConfiguration();
  auto text = readFile(path);
  if (!text.ok()) return text.error();
  return config::parseConfiguration(*text, path, plugins::makeInTreeRegistry());
}

void addClientFlags(FlagSet& flags, std::string* kubeconfig, std::string* context) {
  flags.addString("kubeconfig", kubeconfig,
                  "Path to a kubeconfig file; without it berth uses the pod's service account "
                  "(in-cluster configuration)");
  flags.addString("context", context, "The kubeconfig context to use (default: current-context)");
}

void addOutputFlag(FlagSet& flags, std::string* output, std::string_view helpSuffix) {
  flags.addString("output", output, "Output format: table or json" + std::string(helpSuffix));
  flags.addShorthand('o', "output");  // kubectl's -o
}

util::Result<void> checkOutput(const std::string& output) {
  if (output == "table" || output == "json") return {};
  return util::invalidArgument("--output: must be table or json, got \"" + output + "\"");
}

namespace {

std::string environment(const std::string& name) {
  // Read at startup, before any thread starts; berth never sets variables.
  const char* value = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe)
  return std::string(value ? value : "");
}

}  // namespace

util::Result<client::RestConfig> loadKubectlConfig(const std::string& kubeconfig,
                                                   const std::string& context) {
  if (!kubeconfig.empty()) return loadClientConfig(kubeconfig, context);
  auto exists = [](const std::string& path) {
    std::error_code ec;
    return std::filesystem::exists(path, ec);
  };
  auto loaded = client::loadKubeconfigFiles(client::kubeconfigSearchPaths(environment), context,
                                            client::readFileAtMost, exists);
  if (loaded.ok() || loaded.error().code != util::ErrorCode::NotFound) return loaded;
  if (environment("KUBERNETES_SERVICE_HOST").empty()) {
    return util::invalidArgument(loaded.error().message +
                                 ": pass --kubeconfig PATH or set KUBECONFIG, or run berth in a "
                                 "pod, where the service account is used");
  }
  return client::inClusterConfig(environment, client::readFileAtMost);
}

util::Result<client::RestConfig> loadClientConfig(const std::string& kubeconfig,
                                                  const std::string& context) {
  if (!kubeconfig.empty()) {
    auto text = readFile(kubeconfig);
    if (!text.ok()) return text.error().wrap("--kubeconfig");
    return client::loadKubeconfig(*text, kubeconfig, context, client::readFileAtMost);
  }
  auto getenv = environment;
  if (getenv("KUBERNETES_SERVICE_HOST").empty()) {
    return util::invalidArgument(
        "no API server configuration: pass --kubeconfig PATH (or set clientConnection.kubeconfig "
        "in --config), or run berth in a pod, where KUBERNETES_SERVICE_HOST and the service "
        "account token are provided");
  }
  return client::inClusterConfig(getenv, client::readFileAtMost);
}

std::stop_source stopOnSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::stop_source source;
  std::thread([set, source]() mutable {
    int signal = 0;
    sigwait(&set, &signal);
    source.request_stop();
  }).detach();  // lives until exit: a signal may come at any time
  return source;
}

}  // namespace berth::cmd
