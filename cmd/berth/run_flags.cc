// `berth run`'s command line: kube-scheduler v1.35's flags in its sections, each accepted with
// upstream's name, default and meaning or refused with why, then the configuration file.

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <set>

#include "cmd/berth/common.h"
#include "cmd/berth/feature_gates.h"
#include "cmd/berth/flags.h"
#include "cmd/berth/run.h"
#include "cmd/berth/serving_flags.h"

namespace berth::cmd {
namespace {

constexpr const char* kRunHelp =
    R"(Run the scheduler daemon: watch pods whose spec.schedulerName is one of berth's profiles and
whose spec.nodeName is empty, place each on the best node, and bind it. Flags and configuration
follow kube-scheduler v1.35's; the flags berth does not have are listed, and refused, with why.

Precedence: with --config, --kubeconfig, --kube-api-qps and --kube-api-burst override the file's
clientConnection fields, with a warning naming each (kube-scheduler ignores these deprecated flags
when --config is given), and the leader election flags override its leaderElection, as upstream.

Usage:
  berth run [flags]
)";

// klog's -vmodule syntax: "pattern=N,..." with N a non-negative integer.
std::optional<std::string> vmoduleProblem(const std::string& value) {
  for (const std::string& item : splitList(value)) {
    const size_t eq = item.find('=');
    int64_t level = -1;
    if (eq != std::string::npos && eq > 0) {
      const char* begin = item.data() + eq + 1;
      const char* end = item.data() + item.size();
      auto [p, ec] = std::from_chars(begin, end, level);
      if (ec != std::errc() || p != end) level = -1;
    }
    if (level < 0) return "syntax error: expect comma-separated list of filename=N";
  }
  return std::nullopt;
}

// component-base's --allow-metric-labels, a pflag stringToString of "METRIC,LABEL=V1,V2" pairs:
// with one "=" the whole value is one pair; with more, the pairs are CSV fields (quote each).
util::Result<std::map<std::pair<std::string, std::string>, std::set<std::string>>>
parseAllowMetricLabels(const std::string& value) {
  std::map<std::pair<std::string, std::string>, std::set<std::string>> out;
  if (value.empty()) return out;
  std::vector<std::string> pairs;
  const auto equals = std::count(value.begin(), value.end(), '=');
  if (equals == 0) {
    return util::invalidArgument("invalid argument \"" + value +
                                 "\" for \"--allow-metric-labels\" flag: " + value +
                                 " must be formatted as key=value");
  }
  if (equals == 1) {
    std::string pair = value;
    if (pair.size() >= 2 && pair.front() == '"' && pair.back() == '"') {
      pair = pair.substr(1, pair.size() - 2);
    }
    pairs.push_back(pair);
  } else {
    std::string field;
    bool quoted = false;
    for (char c : value) {
      if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        pairs.push_back(field);
        field.clear();
      } else {
        field += c;
      }
    }
    pairs.push_back(field);
  }
  for (const std::string& pair : pairs) {
    const size_t eq = pair.find('=');
    const std::string key = pair.substr(0, eq);
    const size_t comma = key.find(',');
    if (eq == std::string::npos || comma == std::string::npos || comma == 0 ||
        comma + 1 == key.size() || key.find(',', comma + 1) != std::string::npos) {
      return util::invalidArgument("--allow-metric-labels: \"" + pair +
                                   "\" must be formatted as METRIC,LABEL=VALUE,VALUE");
    }
    auto& allowed = out[{key.substr(0, comma), key.substr(comma + 1)}];
    for (std::string v : splitList(pair.substr(eq + 1))) {
      while (!v.empty() && (v.front() == ' ' || v.front() == '\'')) v.erase(v.begin());
      while (!v.empty() && (v.back() == ' ' || v.back() == '\'')) v.pop_back();
      allowed.insert(v);
    }
  }
  return out;
}

}  // namespace

util::Result<RunFlags> parseRunFlags(const std::vector<std::string>& args) {
  RunSettings s;
  std::string logFormat = "text";
  int64_t burst = 100;
  FlagSet flags;

  flags.section("misc");
  flags.addString("config", &s.configPath,
                  "The path to the configuration file (KubeSchedulerConfiguration, "
                  "kubescheduler.config.k8s.io/v1)");
  flags.addString("write-config-to", &s.writeConfigTo,
                  "If set, write the configuration values to this file and exit");
  flags.addString("master", &s.master,
                  "The address of the Kubernetes API server (overrides any value in kubeconfig)");
  flags.addString("context", &s.context,
                  "berth only: the kubeconfig context to use (default: current-context)");
  flags.addString("scheduler-name", &s.schedulerName,
                  "berth only: without --config, schedule the pods whose spec.schedulerName is "
                  "this name");

  addServingFlags(flags, &s.serving);  // secure serving, authentication, authorization

  flags.section("deprecated");
  bool profiling = false;
  bool contentionProfiling = false;
  std::string contentType = "application/json";
  std::chrono::milliseconds podMaxInUnschedulable = s.podMaxInUnschedulablePodsDuration;
  flags.addBool("profiling", &profiling,
                "DEPRECATED: enable profiling via web interface host:port/debug/pprof/. berth has "
                "no profiling endpoints (it is not a Go program): only false is accepted; profile "
                "it with perf");
  flags.restrict("profiling", onlyFalse("berth has no /debug/pprof endpoints (it is not a Go "
                                        "program); profile it with perf"));
  flags.addBool("contention-profiling", &contentionProfiling,
                "DEPRECATED: enable lock contention profiling, if profiling is enabled. Only false "
                "is accepted, as for --profiling");
  flags.restrict("contention-profiling",
                 onlyFalse("berth has no lock contention profiling; profile it with perf"));
  flags.addString("kubeconfig", &s.kubeconfig,
                  "DEPRECATED: path to kubeconfig file with authorization and master location "
                  "information. Overrides clientConnection.kubeconfig of --config");
  flags.addFloat("kube-api-qps", &s.qps,
                 "DEPRECATED: QPS to use while talking with kubernetes apiserver. Overrides "
                 "clientConnection.qps of --config");
  flags.addInt("kube-api-burst", &burst,
               "DEPRECATED: burst to use while talking with kubernetes apiserver. Overrides "
               "clientConnection.burst of --config");
  flags.setTypeName("kube-api-burst", "int32");
  flags.addString("kube-api-content-type", &contentType,
                  "DEPRECATED: content type of requests sent to apiserver. berth speaks JSON: "
                  "application/json is the only value (kube-scheduler's default is protobuf)");
  flags.restrict("kube-api-content-type", [](const std::string& v) -> std::optional<std::string> {
    if (v == "application/json") return std::nullopt;
    if (v == "application/vnd.kubernetes.protobuf") {
      return "berth speaks JSON to the API server and has no protobuf codec: use "
             "application/json";
    }
    return "berth speaks JSON to the API server: use application/json";
  });
  flags.addDuration(
      "pod-max-in-unschedulable-pods-duration", &podMaxInUnschedulable,
      "DEPRECATED: the maximum time a pod can stay in unschedulablePods. If a pod stays in "
      "unschedulablePods for longer than this value, the pod will be moved from "
      "unschedulablePods to backoffQ or activeQ. This flag is deprecated and will be removed in "
      "a future version");

  // Parsed into flag-local values, then laid over the configuration file's leaderElection.
  flags.section("leader election");
  bool leaderElect = true;
  std::string lockKind = "leases";
  std::string leaseNamespace = "kube-system";
  std::string leaseName;
  std::chrono::milliseconds leaseDuration{15000};
  std::chrono::milliseconds renewDeadline{10000};
  std::chrono::milliseconds retryPeriod{2000};
  flags.addBool("leader-elect", &leaderElect,
                "Start a leader election client and gain leadership before executing the main "
                "loop. Enable this when running replicated components for high availability");
  flags.addString("leader-elect-resource-lock", &lockKind,
                  "The type of resource object that is used for locking during leader election. "
                  "Supported options are 'leases'");
  flags.addString("leader-elect-resource-namespace", &leaseNamespace,
                  "The namespace of resource object that is used for locking during leader "
                  "election");
  flags.addString("leader-elect-resource-name", &leaseName,
                  "The name of resource object that is used for locking during leader election "
                  "(berth's default is the first profile's scheduler name, so that it never "
                  "contends with kube-scheduler's lease)");
  flags.setDefaultText("leader-elect-resource-name", "\"berth\"");
  flags.addDuration(
      "leader-elect-lease-duration", &leaseDuration,
      "The duration that non-leader candidates will wait after observing a leadership renewal "
      "until attempting to acquire leadership of a led but unrenewed leader slot. This is "
      "effectively the maximum duration that a leader can be stopped before it is replaced by "
      "another candidate. This is only applicable if leader election is enabled");
  flags.addDuration("leader-elect-renew-deadline", &renewDeadline,
                    "The interval between attempts by the acting master to renew a leadership "
                    "slot before it stops leading. This must be less than or equal to the lease "
                    "duration. This is only applicable if leader election is enabled");
  flags.addDuration("leader-elect-retry-period", &retryPeriod,
                    "The duration the clients should wait between attempting acquisition and "
                    "renewal of a leadership. This is only applicable if leader election is "
                    "enabled");

  flags.section("feature gate");
  std::string featureGates;
  flags.addString("feature-gates", &featureGates, featureGatesHelp());
  flags.setTypeName("feature-gates", "colonSeparatedMultimapStringString");
  flags.restrict("feature-gates", [](const std::string& v) -> std::optional<std::string> {
    auto parsed = parseFeatureGates(v);
    if (!parsed.ok()) return parsed.error().message;
    return std::nullopt;
  });
  flags.addRefused("emulated-version", "strings",
                   "berth implements kube-scheduler v1.35's behaviour only and cannot emulate "
                   "another version");

  flags.section("metrics");
  std::string allowMetricLabels;
  std::string disabledMetrics;
  flags.addString("allow-metric-labels", &allowMetricLabels,
                  "The map from metric-label to value allow-list of this label. The key's format "
                  "is <MetricName>,<LabelName>. The value's format is "
                  "<allowed_value>,<allowed_value>...e.g. metric1,label1='v1,v2,v3', "
                  "metric1,label2='v1,v2,v3' metric2,label1='v1,v2,v3'. A value not in its list "
                  "is exposed as \"unexpected\"");
  flags.setTypeName("allow-metric-labels", "stringToString");
  flags.setDefaultText("allow-metric-labels", "[]");
  flags.addRefused("allow-metric-labels-manifest", "string",
                   "berth reads the allow-list from --allow-metric-labels only");
  flags.addString("disabled-metrics", &disabledMetrics,
                  "This flag provides an escape hatch for misbehaving metrics. You must provide "
                  "the fully qualified metric name in order to disable it. Disclaimer: disabling "
                  "metrics is higher in precedence than showing hidden metrics");
  flags.setTypeName("disabled-metrics", "strings");
  flags.addString("show-hidden-metrics-for-version", &s.showHiddenMetricsForVersion,
                  "The previous version for which you want to show hidden metrics. Only the "
                  "previous minor version is meaningful, other values will not be allowed. The "
                  "format is <major>.<minor>, e.g.: '1.16'. berth mirrors kube-scheduler v1.35's "
                  "metrics and has no hidden ones, so 1.34 shows nothing more");
  flags.restrict("show-hidden-metrics-for-version",
                 [](const std::string& v) -> std::optional<std::string> {
                   if (v.empty() || v == "1.34") return std::nullopt;
                   return "--show-hidden-metrics-for-version must be omitted or have the value "
                          "'1.34'. Only the previous minor version is allowed";
                 });

  flags.section("logs");
  std::chrono::milliseconds flushFrequency{5000};
  flags.addDuration("log-flush-frequency", &flushFrequency,
                    "Maximum number of seconds between log flushes (berth writes every line at "
                    "once, so its lines are never older than this)");
  bool splitStream = false;
  std::string infoBufferSize = "0";
  for (const char* format : {"json", "text"}) {
    const std::string name = std::string("log-") + format;
    flags.addBool(name + "-split-stream", &splitStream,
                  std::string("[Alpha] In ") + format +
                      " format, write error messages to stderr and info messages to stdout. "
                      "Only false is accepted: berth writes every line to stderr");
    flags.restrict(name + "-split-stream",
                   onlyFalse("berth writes every log line to stderr; split the stream in the log "
                             "pipeline by the severity letter or \"v\""));
    flags.addString(name + "-info-buffer-size", &infoBufferSize,
                    std::string("[Alpha] In ") + format +
                        " format with split output streams, the info messages can be buffered for "
                        "a while to increase performance. Only 0 is accepted: berth writes every "
                        "line at once");
    flags.setTypeName(name + "-info-buffer-size", "quantity");
    flags.restrict(name + "-info-buffer-size",
                   onlyValue("0", "berth writes every log line at once and has no info buffer"));
  }
  flags.addString("logging-format", &logFormat,
                  "Sets the log format. Permitted formats: \"json\", \"text\"");
  flags.addAlias("log-format", "logging-format");
  flags.addInt("v", &s.verbosity, "number for the log level verbosity");
  flags.addShorthand('v', "v");
  flags.setTypeName("v", "Level");
  flags.addString("vmodule", &s.vmodule,
                  "comma-separated list of pattern=N settings for file-filtered logging (only "
                  "works for text log format)");
  flags.setTypeName("vmodule", "pattern=N,...");
  flags.restrict("vmodule", [](const std::string& v) { return vmoduleProblem(v); });

  const CommandLine cli = flags.parseCommandLine(args, kRunHelp, /*maxArgs=*/0);
  if (cli.exitCode) return RunFlags{cli.exitCode, std::move(s)};
  s.flagz = flags.values();  // now: some targets are locals of this function
  auto format = log::parseFormat(logFormat);
  if (!format.ok()) return format.error();
  s.logFormat = *format;
  if (s.verbosity < 0 || s.verbosity > INT32_MAX) {
    return util::invalidArgument("invalid argument \"" + std::to_string(s.verbosity) +
                                 "\" for \"-v, --v\" flag: must be a non-negative 32-bit integer");
  }
  if (burst < 1 || burst > INT32_MAX) {
    return util::invalidArgument("--kube-api-burst: must be a positive 32-bit integer");
  }
  s.burst = static_cast<int>(burst);
  if (s.qps < 0) return util::invalidArgument("--kube-api-qps: must not be negative");
  if (auto serving = resolveServingFlags(flags, s.serving); !serving.ok()) return serving.error();
  if (auto gates = parseFeatureGates(featureGates); gates.ok()) s.featureGates = std::move(*gates);
  auto allow = parseAllowMetricLabels(allowMetricLabels);
  if (!allow.ok()) return allow.error();
  s.metrics.allowLabels = std::move(*allow);
  for (std::string& name : splitList(disabledMetrics)) s.metrics.disabled.insert(std::move(name));
  s.podMaxInUnschedulablePodsDuration = podMaxInUnschedulable;

  auto cfg = loadConfiguration(s.configPath);
  if (!cfg.ok()) return cfg.error();
  s.config = std::move(*cfg);
  const bool withFile = !s.configPath.empty();
  if (withFile) {
    if (flags.changed("scheduler-name")) {
      return util::invalidArgument(
          "--scheduler-name cannot be combined with --config: set profiles[].schedulerName");
    }
  } else {
    s.config.profiles.front().schedulerName = s.schedulerName;
    s.config.leaderElection.resourceName = s.schedulerName;  // the Lease is named after it
  }
  // berth's precedence: a flag given overrides the file's field (kube-scheduler ignores the
  // deprecated flags when --config is given); each override is logged once started.
  auto overrides = [&](const char* flag, const char* field) {
    if (withFile && flags.changed(flag)) {
      s.warnings.push_back(std::string("Flag --") + flag + " overrides " + field + " of --config");
    }
  };
  overrides("kubeconfig", "clientConnection.kubeconfig");
  overrides("kube-api-qps", "clientConnection.qps");
  overrides("kube-api-burst", "clientConnection.burst");
  if (s.kubeconfig.empty()) s.kubeconfig = s.config.clientConnection.kubeconfig;
  s.config.clientConnection.kubeconfig = s.kubeconfig;
  if (!flags.changed("kube-api-qps")) s.qps = s.config.clientConnection.qps;
  if (!flags.changed("kube-api-burst")) s.burst = s.config.clientConnection.burst;
  s.config.clientConnection.qps = static_cast<float>(s.qps);
  s.config.clientConnection.burst = s.burst;

  config::LeaderElection& le = s.config.leaderElection;
  if (flags.changed("leader-elect")) le.leaderElect = leaderElect;
  if (flags.changed("leader-elect-resource-lock")) le.resourceLock = lockKind;
  if (flags.changed("leader-elect-resource-namespace")) le.resourceNamespace = leaseNamespace;
  if (flags.changed("leader-elect-resource-name")) le.resourceName = leaseName;
  if (flags.changed("leader-elect-lease-duration")) le.leaseDurationMillis = leaseDuration.count();
  if (flags.changed("leader-elect-renew-deadline")) le.renewDeadlineMillis = renewDeadline.count();
  if (flags.changed("leader-elect-retry-period")) le.retryPeriodMillis = retryPeriod.count();
  if (le.resourceLock != "leases") {
    return util::invalidArgument("--leader-elect-resource-lock: \"" + le.resourceLock +
                                 "\" is not supported: berth locks with \"leases\"");
  }
  return RunFlags{std::nullopt, std::move(s)};
}

}  // namespace berth::cmd
