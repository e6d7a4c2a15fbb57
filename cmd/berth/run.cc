// `berth run` (also plain `berth` with flags): the scheduler daemon, with kube-scheduler's flags.

#include "cmd/berth/run.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>

#include "cmd/berth/common.h"
#include "cmd/berth/flags.h"
#include "cmd/berth/leader_gate.h"
#include "cmd/berth/rest_adapters.h"
#include "cmd/berth/serving_auth.h"
#include "pkg/client/rest.h"
#include "pkg/leaderelection/leader_elector.h"
#include "pkg/log/log.h"
#include "pkg/metrics/metrics.h"
#include "pkg/plugins/registry.h"
#include "pkg/scheduler/scheduler.h"
#include "pkg/serving/health.h"
#include "pkg/serving/server.h"

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

util::Result<RunFlags> parseRunFlags(const std::vector<std::string>& args) {
  RunSettings s;
  std::string logFormat = "text";
  int64_t burst = 100;
  FlagSet flags;
  addClientFlags(flags, &s.kubeconfig, &s.context);
  flags.addString("config", &s.configPath,
                  "The path to the configuration file (KubeSchedulerConfiguration, "
                  "kubescheduler.config.k8s.io/v1)");
  flags.addString("scheduler-name", &s.schedulerName,
                  "Without --config: schedule the pods whose spec.schedulerName is this name");
  flags.addFloat("kube-api-qps", &s.qps, "QPS to use while talking with kubernetes apiserver");
  flags.addInt("kube-api-burst", &burst, "Burst to use while talking with kubernetes apiserver");
  flags.addInt("v", &s.verbosity, "number for the log level verbosity");
  flags.addString("log-format", &logFormat,
                  "Sets the log format. Permitted formats: \"json\", \"text\"");
  addServingFlags(flags, &s.serving);
  // Parsed into flag-local values, then laid over the configuration file's leaderElection.
  bool leaderElect = true;
  std::string lockKind = "leases";
  std::string leaseNamespace;
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
                  "election (default \"kube-system\")");
  flags.addString("leader-elect-resource-name", &leaseName,
                  "The name of resource object that is used for locking during leader election "
                  "(default: the scheduler name)");
  flags.addDuration(
      "leader-elect-lease-duration", &leaseDuration,
      "The duration that non-leader candidates will wait after observing a leadership "
      "renewal until attempting to acquire leadership of a led but unrenewed leader slot");
  flags.addDuration("leader-elect-renew-deadline", &renewDeadline,
                    "The interval between attempts by the acting master to renew a leadership slot "
                    "before it stops leading. Must be less than the lease duration");
  flags.addDuration("leader-elect-retry-period", &retryPeriod,
                    "The duration the clients should wait between attempting acquisition and "
                    "renewal of a leadership");
  const CommandLine cli = flags.parseCommandLine(args, kRunHelp, /*maxArgs=*/0);
  if (cli.exitCode) return RunFlags{cli.exitCode, std::move(s)};
  auto format = log::parseFormat(logFormat);
  if (!format.ok()) return format.error();
  s.logFormat = *format;
  if (burst < 1 || burst > INT32_MAX) {
    return util::invalidArgument("--kube-api-burst: must be a positive 32-bit integer");
  }
  s.burst = static_cast<int>(burst);
  if (s.qps < 0) return util::invalidArgument("--kube-api-qps: must not be negative");
  if (auto serving = resolveServingFlags(flags, s.serving); !serving.ok()) return serving.error();

  auto cfg = loadConfiguration(s.configPath);
  if (!cfg.ok()) return cfg.error();
  s.config = std::move(*cfg);
  if (!s.configPath.empty()) {
    if (flags.changed("scheduler-name")) {
      return util::invalidArgument(
          "--scheduler-name cannot be combined with --config: set profiles[].schedulerName");
    }
  } else {
    s.config.profiles.front().schedulerName = s.schedulerName;
    s.config.leaderElection.resourceName = s.schedulerName;  // the Lease is named after it
  }
  // Flags override the file's clientConnection block, as kube-scheduler's deprecated flags do.
  if (s.kubeconfig.empty()) s.kubeconfig = s.config.clientConnection.kubeconfig;
  if (!flags.changed("kube-api-qps")) s.qps = s.config.clientConnection.qps;
  if (!flags.changed("kube-api-burst")) s.burst = s.config.clientConnection.burst;

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

namespace {

// The /healthz, /livez, /readyz checks of kube-scheduler, and /metrics, behind `auth`.
serving::Handler endpoints(const metrics::Metrics& metrics, const scheduler::Scheduler& sched,
                           const leaderelection::LeaderElector* elector,
                           const std::stop_token& stop, serving::DelegatedAuth& auth) {
  std::vector<serving::Check> live{serving::pingCheck()};
  if (elector != nullptr) {
    // client-go's HealthzAdaptor: a leader that has not renewed for the lease duration plus 20 s
    // is wedged; kubelet restarts it.
    live.push_back(
        {"leaderElection", [elector] { return elector->check(std::chrono::seconds(20)); }});
  }
  std::vector<serving::Check> ready = live;
  ready.push_back({"shutdown", [stop]() -> util::Result<void> {
                     if (stop.stop_requested())
                       return util::invalidArgument("process is shutting down");
                     return {};
                   }});
  ready.push_back({"sched-handler-sync", [&sched]() -> util::Result<void> {
                     if (!sched.hasSynced()) {
                       return util::invalidArgument("handlers are not fully synchronized");
                     }
                     return {};
                   }});
  return [&metrics, &auth, live, ready](const serving::Request& request) -> serving::Response {
    if (auto refused = auth.check(request)) return *refused;
    const std::string_view target = request.target;
    const std::string_view path = target.substr(0, target.find('?'));
    if (path == "/metrics") {
      return serving::Response{200, "text/plain; version=0.0.4; charset=utf-8", metrics.expose()};
    }
    if (auto r = serving::healthResponse("healthz", target, live)) return *r;
    if (auto r = serving::healthResponse("livez", target, live)) return *r;
    if (auto r = serving::healthResponse("readyz", target, ready)) return *r;
    return serving::Response{404, "text/plain; charset=utf-8", "404 page not found\n"};
  };
}

// The serving certificate: the files given, else a pair in --cert-dir, else one in memory, as
// kube-scheduler's MaybeDefaultWithSelfSignedCerts("localhost", nil, {127.0.0.1}).
util::Result<serving::TlsConfig> servingTls(const ServingSettings& s) {
  serving::TlsConfig tls = s.tls;
  if (!s.tlsCertFile.empty()) {
    tls.files = serving::TlsFiles{s.tlsCertFile, s.tlsKeyFile};
  } else if (!s.certDir.empty()) {
    auto files = serving::selfSignedInDirectory(s.certDir, "berth", "localhost", {"127.0.0.1"});
    if (!files.ok()) return files.error();
    log::info(0, "Using self-signed certificate", {{"certFile", files->certFile}});
    tls.files = std::move(*files);
  } else {
    auto generated = serving::generateSelfSigned("localhost", {"127.0.0.1"});
    if (!generated.ok()) return generated.error();
    log::info(0, "Generated self-signed certificate in memory", {{"host", "localhost"}});
    tls.inMemory = std::move(*generated);
  }
  return tls;
}

leaderelection::Config electionConfig(const config::LeaderElection& le) {
  leaderelection::Config c;
  c.namespace_ = le.resourceNamespace;
  c.name = le.resourceName;
  c.identity = leaderelection::defaultIdentity();
  c.leaseDuration = std::chrono::milliseconds(le.leaseDurationMillis);
  c.renewDeadline = std::chrono::milliseconds(le.renewDeadlineMillis);
  c.retryPeriod = std::chrono::milliseconds(le.retryPeriodMillis);
  c.releaseOnCancel = true;
  return c;
}

}  // namespace

int runDaemon(const RunSettings& settings, client::RestConfig restConfig, std::stop_token stop) {
  for (const std::string& warning : restConfig.warnings) log::warning(warning);
  restConfig.qps = static_cast<float>(settings.qps);
  restConfig.burst = settings.burst;
  client::initializeClientThreads(2);
  metrics::Metrics metrics;
  client::RestOptions restOptions;
  restOptions.onRequest = [&metrics](const client::RequestDone& r) {
    metrics.restRequest(r.method, r.host, r.code, r.took);
  };
  auto restClient = client::RestClient::create(restConfig, restOptions);
  if (!restClient.ok()) return fail(restClient.error().message);

  RestClusterApi clusterApi(**restClient);
  RestVolumeWriter volumeWriter(**restClient);
  scheduler::SchedulerOptions options;
  options.volumes = &volumeWriter;
  options.config = settings.config;
  options.hostname = hostname();
  options.observer = settings.observer;
  options.metrics = &metrics;
  options.eventsApi = discoverEventsApi(**restClient);
  auto sched =
      scheduler::Scheduler::create(clusterApi, informerFeeds(**restClient), std::move(options));
  if (!sched.ok()) return fail(sched.error().message);

  // Leader election has its own client: renewals must not queue behind scheduling traffic in the
  // rate limiter, and a hung call must fail within the renew deadline rather than be retried.
  const config::LeaderElection& le = settings.config.leaderElection;
  std::unique_ptr<client::RestClient> leaseRest;
  std::unique_ptr<RestLeaseClient> leaseClient;
  util::RealClock clock;
  std::unique_ptr<leaderelection::LeaderElector> elector;
  LeaderGate gate(stop);
  if (le.leaderElect) {
    client::RestOptions leaseOptions = restOptions;
    // client-go's NewFromKubeconfig: half the renew deadline, at least a second, so that an
    // update and the read that follows its failure fit in one renewal round.
    leaseOptions.requestTimeout = std::max<util::Duration>(
        std::chrono::milliseconds(le.renewDeadlineMillis) / 2, std::chrono::seconds(1));
    leaseOptions.retry.maxRetries = 0;  // the elector retries every retryPeriod itself
    auto created = client::RestClient::create(restConfig, leaseOptions);
    if (!created.ok()) return fail(created.error().message);
    leaseRest = std::move(*created);
    leaseClient = std::make_unique<RestLeaseClient>(*leaseRest);
    leaderelection::Callbacks callbacks;
    callbacks.onStartedLeading = [&gate] { gate.startedLeading(); };
    callbacks.onStoppedLeading = [&gate] { gate.stoppedLeading(); };
    auto made = leaderelection::LeaderElector::create(*leaseClient, clock, electionConfig(le),
                                                      std::move(callbacks));
    if (!made.ok()) return fail("leader election: " + made.error().message);
    elector = std::move(*made);
    metrics.setLeaderStatus(le.resourceName, [e = elector.get()] { return e->isLeader(); });
  }

  log::info(0, "Starting berth", {{"version", BERTH_VERSION}, {"server", (*restClient)->server()}});
  std::unique_ptr<ServingAuth> servingAuth;
  std::unique_ptr<serving::Server> server;
  if (settings.serving.serve) {
    auto tls = servingTls(settings.serving);
    if (!tls.ok()) return fail(tls.error().message);
    auto made = ServingAuth::create(settings.serving, restConfig, restOptions.onRequest);
    if (!made.ok()) return fail(made.error().message);
    servingAuth = std::move(*made);
    tls->clientCaPem = servingAuth->clientCaPem();
    serving::Options serveOptions;
    serveOptions.bindAddress = settings.serving.bindAddress;
    serveOptions.port = settings.serving.port;
    serveOptions.tls = std::move(*tls);
    auto started = serving::Server::start(
        serveOptions, endpoints(metrics, **sched, elector.get(), stop, servingAuth->auth()));
    if (!started.ok()) return fail(started.error().message);
    server = std::move(*started);
    for (const std::string& warning : settings.serving.warnings) log::warning(warning);
    log::info(0, "Serving securely",
              {{"address", settings.serving.bindAddress + ":" + std::to_string(server->port())},
               {"paths", "/healthz /livez /readyz /metrics"}});
  }

  (*sched)->startInformers();
  int code = 0;
  if (!elector) {
    (*sched)->run(stop);
  } else {
    log::info(0, "Attempting to acquire leader lease",
              {{"lease", le.resourceNamespace + "/" + le.resourceName},
               {"identity", elector->config().identity}});
    code = gate.run(
        [&](std::stop_token t) { elector->run(t); }, [&](std::stop_token t) { (*sched)->run(t); },
        [] {
          // kube-scheduler exits at once: a replica that may no longer hold the lease
          // must not send one more Binding, and the restart gives it a clean cache.
          log::error("lease not renewed within the renew deadline", "leaderelection lost");
          std::_Exit(1);
        });
  }
  (*sched)->stopInformers();
  if (server) server->stop();
  log::info(0, "Scheduler stopped");
  return code;
}

int runCommand(const std::vector<std::string>& args) {
  std::stop_source stop = stopOnSignals();
  auto parsed = parseRunFlags(args);
  if (!parsed.ok()) return fail(parsed.error().message);
  if (parsed->exitCode) return *parsed->exitCode;
  const RunSettings& settings = parsed->settings;
  log::configure(settings.logFormat, static_cast<int>(settings.verbosity));
  auto restConfig = loadClientConfig(settings.kubeconfig, settings.context);
  if (!restConfig.ok()) return fail(restConfig.error().message);
  return runDaemon(settings, std::move(*restConfig), stop.get_token());
}

}  // namespace berth::cmd
