// `berth run` (also plain `berth` with flags): the scheduler daemon, with kube-scheduler's flags.

#include "cmd/berth/run.h"

#include <unistd.h>

#include <iostream>

#include "cmd/berth/common.h"
#include "cmd/berth/flags.h"
#include "pkg/client/rest.h"
#include "pkg/log/log.h"
#include "pkg/scheduler/scheduler.h"

namespace berth::cmd {
namespace {

constexpr const char* kRunHelp =
    R"(Run the scheduler daemon: watch pods whose spec.schedulerName is one of berth's profiles and
whose spec.nodeName is empty, place each on the best node, and bind it. Flags and configuration
follow kube-scheduler's.

Usage:
  berth run [flags]

Flags:
)";

std::string hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

}  // namespace

util::Result<RunSettings> parseRunFlags(const std::vector<std::string>& args, bool* help,
                                        std::string* usage) {
  RunSettings s;
  std::string logFormat = "text";
  int64_t burst = 100;
  FlagSet flags;
  flags.addString("kubeconfig", &s.kubeconfig,
                  "Path to a kubeconfig file; without it berth uses the pod's service account "
                  "(in-cluster configuration)");
  flags.addString("context", &s.context, "The kubeconfig context to use (default: current-context)");
  flags.addString("config", &s.configPath,
                  "The path to the configuration file (KubeSchedulerConfiguration, "
                  "kubescheduler.config.k8s.io/v1)");
  flags.addString("scheduler-name", &s.schedulerName,
                  "Without --config: schedule the pods whose spec.schedulerName is this name");
  flags.addFloat("kube-api-qps", &s.qps, "QPS to use while talking with kubernetes apiserver");
  flags.addInt("kube-api-burst", &burst, "Burst to use while talking with kubernetes apiserver");
  flags.addInt("v", &s.verbosity, "number for the log level verbosity");
  flags.addString("log-format", &logFormat, "Sets the log format. Permitted formats: \"json\", \"text\"");
  flags.addString("bind-address", &s.bindAddress,
                  "The IP address on which to serve /healthz, /readyz, /livez and /metrics");
  flags.addInt("port", &s.port, "The port on which to serve health and metrics; 0 picks a free one");
  auto parsed = flags.parse(args);
  *help = flags.helpRequested();
  *usage = std::string(kRunHelp) + flags.usages();
  if (*help) return s;
  if (!parsed.ok()) return parsed.error();
  if (!parsed->empty()) return util::invalidArgument("unexpected argument \"" + parsed->front() + "\"");
  auto format = log::parseFormat(logFormat);
  if (!format.ok()) return format.error();
  s.logFormat = *format;
  if (burst < 1 || burst > INT32_MAX) {
    return util::invalidArgument("--kube-api-burst: must be a positive 32-bit integer");
  }
  s.burst = static_cast<int>(burst);
  if (s.qps < 0) return util::invalidArgument("--kube-api-qps: must not be negative");
  if (s.port < 0 || s.port > 65535) return util::invalidArgument("--port: must be 0..65535");

  s.config = config::defaultConfiguration();
  if (!s.configPath.empty()) {
    auto text = readFile(s.configPath);
    if (!text.ok()) return text.error();
    auto cfg = config::parseConfiguration(*text, s.configPath);
    if (!cfg.ok()) return cfg.error();
    s.config = std::move(*cfg);
    if (flags.changed("scheduler-name")) {
      return util::invalidArgument(
          "--scheduler-name cannot be combined with --config: set profiles[].schedulerName");
    }
  } else {
    s.config.profiles.front().schedulerName = s.schedulerName;
  }
  // Flags override the file's clientConnection block, as kube-scheduler's deprecated flags do.
  if (s.kubeconfig.empty()) s.kubeconfig = s.config.clientConnection.kubeconfig;
  if (!flags.changed("kube-api-qps")) s.qps = s.config.clientConnection.qps;
  if (!flags.changed("kube-api-burst")) s.burst = s.config.clientConnection.burst;
  return s;
}

int runDaemon(const RunSettings& settings, client::RestConfig restConfig, std::stop_token stop) {
  for (const std::string& warning : restConfig.warnings) log::warning(warning);
  restConfig.qps = static_cast<float>(settings.qps);
  restConfig.burst = settings.burst;
  client::initializeClientThreads(2);
  auto restClient = client::RestClient::create(restConfig);
  if (!restClient.ok()) return fail(restClient.error().message);

  scheduler::SchedulerOptions options;
  options.config = settings.config;
  options.hostname = hostname();
  options.observer = settings.observer;
  auto sched = scheduler::Scheduler::create(**restClient, std::move(options));
  if (!sched.ok()) return fail(sched.error().message);
  log::info(0, "Starting berth", {{"version", BERTH_VERSION}, {"server", (*restClient)->server()}});
  (*sched)->startInformers();
  (*sched)->run(stop);
  (*sched)->stopInformers();
  log::info(0, "Scheduler stopped");
  return 0;
}

int runCommand(const std::vector<std::string>& args) {
  std::stop_source stop = stopOnSignals();
  bool help = false;
  std::string usage;
  auto settings = parseRunFlags(args, &help, &usage);
  if (help) {
    std::cout << usage;
    return 0;
  }
  if (!settings.ok()) return fail(settings.error().message);
  log::configure(settings->logFormat, static_cast<int>(settings->verbosity));
  auto restConfig = loadClientConfig(settings->kubeconfig, settings->context);
  if (!restConfig.ok()) return fail(restConfig.error().message);
  return runDaemon(*settings, std::move(*restConfig), stop.get_token());
}

}  // namespace berth::cmd
