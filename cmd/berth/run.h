#pragma once
// `berth run`: flags and configuration resolved into RunSettings, then the daemon until a stop.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "cmd/berth/serving_flags.h"
#include "pkg/client/config.h"
#include "pkg/config/config.h"
#include "pkg/log/log.h"
#include "pkg/metrics/metrics.h"
#include "pkg/scheduler/scheduler.h"
#include "pkg/util/result.h"

namespace berth::cmd {

struct RunSettings {
  std::string kubeconfig;
  std::string context;
  std::string configPath;
  std::string schedulerName{config::kDefaultSchedulerName};
  double qps = 50;
  int burst = 100;
  int64_t verbosity = 0;
  log::Format logFormat = log::Format::Text;
  std::string vmodule;  // klog's pattern=N,... (checked), handed to the logger
  std::string master;   // --master: the API server, over the kubeconfig's
  std::string writeConfigTo;
  std::map<std::string, bool> featureGates;  // the gates set (checked: all at berth's values)
  metrics::ExposureOptions metrics;          // --disabled-metrics, --allow-metric-labels
  std::string showHiddenMetricsForVersion;   // "" or the previous minor: berth hides none
  std::chrono::milliseconds podMaxInUnschedulablePodsDuration{std::chrono::minutes(5)};
  std::vector<std::string> warnings;         // to log once started (a flag overriding --config)
  std::map<std::string, std::string> flagz;  // every flag's parsed value, for /flagz
  ServingSettings serving;  // the secure port, its certificate, authentication, authorization
  // The file's, or the default, after the flags (leaderElection and clientConnection included).
  config::Configuration config;
  scheduler::Observer* observer = nullptr;  // berth demo prints placements through it
};

// `berth run`'s command line: the settings to run with, or the exit code when the command line
// ends the command (--help printed, or a flag error reported: FlagSet::parseCommandLine).
struct RunFlags {
  std::optional<int> exitCode;
  RunSettings settings;
};

// Parses `berth run` flags (kube-scheduler's, in its --help sections) and the configuration file.
util::Result<RunFlags> parseRunFlags(const std::vector<std::string>& args);

// Runs the daemon against the API server `restConfig` names until `stop`; returns the exit code.
int runDaemon(const RunSettings& settings, client::RestConfig restConfig, std::stop_token stop);

int runCommand(const std::vector<std::string>& args);
int demoCommand(const std::vector<std::string>& args);

}  // namespace berth::cmd
