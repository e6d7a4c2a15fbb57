// `berth run` (also plain `berth` with flags): the scheduler daemon, with kube-scheduler's flags.

#include "cmd/berth/run.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "cmd/berth/common.h"
#include "cmd/berth/flags.h"
#include "cmd/berth/leader_gate.h"
#include "cmd/berth/rest_adapters.h"
#include "cmd/berth/serving_auth.h"
#include "cmd/berth/serving_zpages.h"
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

std::string hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

}  // namespace

namespace {

// The /healthz, /livez, /readyz checks of kube-scheduler, /metrics and the z-pages, behind `auth`.
serving::Handler endpoints(const metrics::Metrics& metrics, const scheduler::Scheduler& sched,
                           const leaderelection::LeaderElector* elector,
                           const std::stop_token& stop, serving::DelegatedAuth& auth,
                           const ZPages& pages) {
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
  return [&metrics, &auth, &pages, live,
          ready](const serving::Request& request) -> serving::Response {
    if (auto refused = auth.check(request)) return *refused;
    const std::string_view target = request.target;
    const std::string_view path = target.substr(0, target.find('?'));
    if (path == "/metrics") {
      return serving::Response{200, "text/plain; version=0.0.4; charset=utf-8", metrics.expose()};
    }
    if (auto r = zpageResponse(path, request, pages)) return *r;
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

// kube-scheduler's --write-config-to: the configuration the daemon would run with, then exit.
int writeConfigTo(const RunSettings& settings) {
  std::ofstream out(settings.writeConfigTo, std::ios::binary | std::ios::trunc);
  out << config::encodeConfiguration(settings.config).dump(2) << "\n";
  out.close();
  if (!out) return fail("--write-config-to: cannot write " + settings.writeConfigTo);
  log::info(0, "Wrote configuration", {{"file", settings.writeConfigTo}});
  return 0;
}

}  // namespace

int runDaemon(const RunSettings& settings, client::RestConfig restConfig, std::stop_token stop) {
  for (const std::string& warning : restConfig.warnings) log::warning(warning);
  for (const std::string& warning : settings.warnings) log::warning(warning);
  if (!settings.master.empty()) restConfig.server = settings.master;
  restConfig.qps = static_cast<float>(settings.qps);
  restConfig.burst = settings.burst;
  metrics::Metrics metrics;
  metrics.setExposureOptions(settings.metrics);
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
  options.podMaxInUnschedulablePodsDuration = settings.podMaxInUnschedulablePodsDuration;
  const informer::Store<api::Pod>* podStore = nullptr;
  auto sched = scheduler::Scheduler::create(clusterApi, informerFeeds(**restClient, &podStore),
                                            std::move(options));
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
  ZPages pages;
  pages.configz = configzJson(settings.config);
  pages.flags = settings.flagz;
  pages.pods = [podStore] { return podStore->list(); };
  std::unique_ptr<ServingAuth> servingAuth;
  std::unique_ptr<serving::Server> server;
  if (settings.serving.serve) {
    auto tls = servingTls(settings.serving);
    if (!tls.ok()) return fail(tls.error().message);
    auto made = ServingAuth::create(settings.serving, restConfig, restOptions.onRequest);
    if (!made.ok()) return fail(made.error().message);
    servingAuth = std::move(*made);
    tls->requestClientCertificates = servingAuth->requestsClientCertificates();
    serving::Options serveOptions;
    serveOptions.bindAddress = settings.serving.bindAddress;
    serveOptions.port = settings.serving.port;
    serveOptions.tls = std::move(*tls);
    auto started = serving::Server::start(
        serveOptions, endpoints(metrics, **sched, elector.get(), stop, servingAuth->auth(), pages));
    if (!started.ok()) return fail(started.error().message);
    server = std::move(*started);
    for (const std::string& warning : settings.serving.warnings) log::warning(warning);
    log::info(0, "Serving securely",
              {{"address", settings.serving.bindAddress + ":" + std::to_string(server->port())},
               {"paths",
                "/healthz /livez /readyz /metrics /metrics/resources /configz /flagz /statusz"}});
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
  if (auto r = log::setVModule(settings.vmodule); !r.ok()) {
    return fail("invalid argument \"" + settings.vmodule +
                "\" for \"--vmodule\" flag: " + r.error().message);
  }
  if (!settings.writeConfigTo.empty()) return writeConfigTo(settings);
  // client-go's BuildConfigFromFlags: --master alone is a server without credentials; with a
  // kubeconfig it replaces the kubeconfig's server (runDaemon).
  util::Result<client::RestConfig> restConfig = client::RestConfig{};
  if (settings.master.empty() || !settings.kubeconfig.empty()) {
    restConfig = loadClientConfig(settings.kubeconfig, settings.context);
  }
  if (!restConfig.ok()) return fail(restConfig.error().message);
  return runDaemon(settings, std::move(*restConfig), stop.get_token());
}

}  // namespace berth::cmd
