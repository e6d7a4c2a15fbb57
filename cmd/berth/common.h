#pragma once
// What every subcommand shares: the usage-error exit, file reading, the configuration file, the
// client and output flags, client configuration from flags, and waiting for SIGINT/SIGTERM.

#include <stop_token>
#include <string>
#include <string_view>

#include "cmd/berth/flags.h"  // kExitUsage
#include "pkg/client/config.h"
#include "pkg/config/config.h"
#include "pkg/util/result.h"

namespace berth::cmd {

// Prints "Error: MESSAGE" to stderr and returns kExitUsage.
int fail(const std::string& message);

util::Result<std::string> readFile(const std::string& path);

// The KubeSchedulerConfiguration file at `path`, or the default configuration when `path` is "".
util::Result<config::Configuration> loadConfiguration(const std::string& path);

// --kubeconfig and --context, as `berth run` and `berth explain` take them.
void addClientFlags(FlagSet& flags, std::string* kubeconfig, std::string* context);
// --output table|json; `helpSuffix` follows "Output format: table or json" in the help.
void addOutputFlag(FlagSet& flags, std::string* output, std::string_view helpSuffix = {});
util::Result<void> checkOutput(const std::string& output);

// The API server connection: the kubeconfig at `path` (its current context, or `context`), else
// the pod's in-cluster configuration; an error that says what to pass when there is neither.
util::Result<client::RestConfig> loadClientConfig(const std::string& kubeconfig,
                                                  const std::string& context);

// What `berth explain` connects with, as kubectl: the kubeconfig at `path` when given, else
// $KUBECONFIG's files merged (or ~/.kube/config), else the pod's in-cluster configuration. Exec
// credential plugins may prompt on the terminal there.
util::Result<client::RestConfig> loadKubectlConfig(const std::string& kubeconfig,
                                                   const std::string& context);

// Blocks SIGINT and SIGTERM in every thread started after this call and returns a stop_source
// whose stop is requested when one arrives (from a dedicated signal thread). Call first in main.
std::stop_source stopOnSignals();

}  // namespace berth::cmd
