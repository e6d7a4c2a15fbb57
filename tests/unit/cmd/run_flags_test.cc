// `berth run`'s command line against kube-scheduler v1.35's: every upstream flag is accepted with
// its default, or refused with why; pflag's syntax; the --help sections; feature gates; version.

#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "cmd/berth/feature_gates.h"
#include "cmd/berth/flags.h"
#include "cmd/berth/run.h"
#include "cmd/berth/version.h"

namespace berth::cmd {
namespace {

util::Result<RunSettings> run(std::vector<std::string> args) {
  auto parsed = parseRunFlags(args);
  if (!parsed.ok()) return parsed.error();
  if (parsed->exitCode) return util::invalidArgument("exit " + std::to_string(*parsed->exitCode));
  return std::move(parsed->settings);
}

// The refusal a flag error reports (parseCommandLine prints it; parse returns it).
std::string flagError(const std::vector<std::string>& args) {
  testing::internal::CaptureStderr();
  auto parsed = parseRunFlags(args);
  std::string err = testing::internal::GetCapturedStderr();
  if (!parsed.ok()) return parsed.error().message;
  return err;
}

// kube-scheduler v1.35's flags (cmd/kube-scheduler/app/options and component-base), each given
// once with a value upstream accepts: berth takes it as the same setting.
struct Accepted {
  std::vector<std::string> args;
};

TEST(RunFlags, EveryUpstreamFlagBerthHasTakesUpstreamsSyntax) {
  const std::vector<Accepted> cases = {
      {{"--master=https://10.0.0.1:6443"}},
      {{"--write-config-to=/tmp/berth-unused.yaml"}},
      {{"--bind-address=127.0.0.1"}},
      {{"--secure-port=10259"}},
      {{"--cert-dir=/tmp"}},
      {{"--tls-cert-file=/a.crt", "--tls-private-key-file=/a.key"}},
      {{"--tls-min-version=VersionTLS13"}},
      {{"--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}},
      {{"--http2-max-streams-per-connection=0"}},
      {{"--permit-address-sharing"}},
      {{"--permit-port-sharing=false"}},
      {{"--authentication-kubeconfig=/k"}},
      {{"--authentication-skip-lookup"}},
      {{"--authentication-token-webhook-cache-ttl=30s"}},
      {{"--authentication-tolerate-lookup-failure=false"}},
      {{"--client-ca-file=/ca.crt"}},
      {{"--authorization-always-allow-paths=/healthz,/livez"}},
      {{"--authorization-kubeconfig=/k"}},
      {{"--authorization-webhook-cache-authorized-ttl=5s"}},
      {{"--authorization-webhook-cache-unauthorized-ttl=5s"}},
      {{"--contention-profiling=false"}},
      {{"--profiling=false"}},
      {{"--kubeconfig=/k"}},
      {{"--kube-api-burst=200"}},
      {{"--kube-api-content-type=application/json"}},
      {{"--kube-api-qps=20"}},
      {{"--pod-max-in-unschedulable-pods-duration=1m"}},
      {{"--leader-elect=false"}},
      {{"--leader-elect-lease-duration=20s"}},
      {{"--leader-elect-renew-deadline=15s"}},
      {{"--leader-elect-resource-lock=leases"}},
      {{"--leader-elect-resource-name=berth-a"}},
      {{"--leader-elect-resource-namespace=berth"}},
      {{"--leader-elect-retry-period=3s"}},
      {{"--feature-gates=SchedulerQueueingHints=true,kube:SchedulerAsyncPreemption=true"}},
      {{"--allow-metric-labels=scheduler_schedule_attempts_total,result=scheduled"}},
      {{"--disabled-metrics=scheduler_goroutines"}},
      {{"--show-hidden-metrics-for-version=1.34"}},
      {{"--log-flush-frequency=1s"}},
      {{"--log-json-split-stream=false", "--log-text-split-stream=false"}},
      {{"--log-json-info-buffer-size=0", "--log-text-info-buffer-size=0"}},
      {{"--logging-format=json"}},
      {{"-v=4"}},
      {{"--vmodule=schedule_one=5,queue*=3"}},
  };
  for (const Accepted& c : cases) {
    SCOPED_TRACE(c.args.front());
    auto s = run(c.args);
    EXPECT_TRUE(s.ok()) << s.error().message;
  }
}

// Refused whatever the value: the message says why and what to use.
TEST(RunFlags, UpstreamFlagsBerthDoesNotHaveAreRefusedWithWhy) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--tls-sni-cert-key=a.crt,a.key"},
       "--tls-sni-cert-key is not supported by berth: berth serves one certificate: use "
       "--tls-cert-file and --tls-private-key-file"},
      {{"--requestheader-client-ca-file=/ca"},
       "--requestheader-client-ca-file is not supported by berth: berth takes an authenticating "
       "proxy's settings only from the requestheader-* keys of the "
       "kube-system/extension-apiserver-authentication ConfigMap"},
      {{"--requestheader-allowed-names=front-proxy"}, "--requestheader-allowed-names is not"},
      {{"--requestheader-extra-headers-prefix=x-remote-extra-"},
       "--requestheader-extra-headers-prefix is not"},
      {{"--requestheader-group-headers=x-remote-group"}, "--requestheader-group-headers is not"},
      {{"--requestheader-uid-headers=x-remote-uid"}, "--requestheader-uid-headers is not"},
      {{"--requestheader-username-headers=x-remote-user"},
       "--requestheader-username-headers is not"},
      {{"--emulated-version=kube=1.34"},
       "--emulated-version is not supported by berth: berth implements kube-scheduler v1.35's "
       "behaviour only and cannot emulate another version"},
      {{"--allow-metric-labels-manifest=/m.yaml"}, "--allow-metric-labels-manifest is not"},
      {{"--log-json-split-stream"},
       "invalid argument \"true\" for \"--log-json-split-stream\" flag: berth writes every log "
       "line to stderr"},
      {{"--log-text-split-stream=true"}, "for \"--log-text-split-stream\" flag"},
      {{"--log-json-info-buffer-size=1Mi"},
       "invalid argument \"1Mi\" for \"--log-json-info-buffer-size\" flag: berth writes every "
       "log line at once and has no info buffer"},
      {{"--log-text-info-buffer-size", "1Mi"}, "for \"--log-text-info-buffer-size\" flag"},
      {{"--profiling"},
       "invalid argument \"true\" for \"--profiling\" flag: berth has no /debug/pprof endpoints "
       "(it is not a Go program); profile it with perf"},
      {{"--contention-profiling=true"}, "for \"--contention-profiling\" flag"},
      {{"--kube-api-content-type=application/vnd.kubernetes.protobuf"},
       "invalid argument \"application/vnd.kubernetes.protobuf\" for \"--kube-api-content-type\" "
       "flag: berth speaks JSON to the API server and has no protobuf codec: use "
       "application/json"},
      {{"--http2-max-streams-per-connection=100"},
       "berth serves HTTP/1.1 only, so there are no HTTP/2 streams to limit"},
      {{"--permit-port-sharing"}, "berth binds without SO_REUSEPORT"},
      {{"--show-hidden-metrics-for-version=1.30"},
       "--show-hidden-metrics-for-version must be omitted or have the value '1.34'. Only the "
       "previous minor version is allowed"},
      {{"--vmodule=schedule_one"}, "syntax error: expect comma-separated list of filename=N"},
      {{"--logging-format=logfmt"}, "logfmt"},
  };
  for (const auto& [args, message] : cases) {
    SCOPED_TRACE(args.front());
    EXPECT_NE(flagError(args).find(message), std::string::npos) << flagError(args);
  }
}

TEST(RunFlags, DefaultsAreKubeSchedulersWhereBerthSharesThem) {
  auto s = run({});
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->qps, 50);
  EXPECT_EQ(s->burst, 100);
  EXPECT_EQ(s->verbosity, 0);
  EXPECT_EQ(s->logFormat, log::Format::Text);
  EXPECT_EQ(s->podMaxInUnschedulablePodsDuration, std::chrono::minutes(5));
  EXPECT_TRUE(s->config.leaderElection.leaderElect);
  EXPECT_EQ(s->config.leaderElection.leaseDurationMillis, 15000);
  EXPECT_EQ(s->config.leaderElection.renewDeadlineMillis, 10000);
  EXPECT_EQ(s->config.leaderElection.retryPeriodMillis, 2000);
  EXPECT_EQ(s->config.leaderElection.resourceLock, "leases");
  EXPECT_EQ(s->config.leaderElection.resourceNamespace, "kube-system");
  // berth's lease is named after its scheduler, not "kube-scheduler".
  EXPECT_EQ(s->config.leaderElection.resourceName, "berth");
  EXPECT_EQ(s->serving.port, 10259);
  EXPECT_EQ(s->serving.bindAddress, "0.0.0.0");
  EXPECT_TRUE(s->featureGates.empty());
  EXPECT_TRUE(s->metrics.disabled.empty());
  EXPECT_TRUE(s->warnings.empty());
}

TEST(RunFlags, PflagSyntaxInFull) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"-v=4"}, {"-v", "4"}, {"-v4"}, {"--v=4"}, {"--v", "4"}}) {
    SCOPED_TRACE(args.front());
    auto s = run(args);
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(s->verbosity, 4);
  }
  auto bools = run({"--leader-elect=false", "--authentication-skip-lookup"});
  ASSERT_TRUE(bools.ok()) << bools.error().message;
  EXPECT_FALSE(bools->config.leaderElection.leaderElect);
  EXPECT_TRUE(bools->serving.authenticationSkipLookup);
  // A boolean takes no separate value: "false" is then a positional argument, which run refuses.
  EXPECT_NE(flagError({"--leader-elect", "false"}).find("unexpected argument \"false\""),
            std::string::npos);
  EXPECT_EQ(flagError({"-x"}), "Error: unknown shorthand flag: 'x' in -x\n");
  EXPECT_EQ(flagError({"--v"}), "Error: flag needs an argument: --v\n");
  EXPECT_EQ(flagError({"-v"}), "Error: flag needs an argument: 'v' in -v\n");
  EXPECT_EQ(flagError({"-v=x"}),
            "Error: invalid argument \"x\" for \"--v\" flag: not an integer\n");
}

// What /flagz lists: every flag with its value as pflag's Value.String() prints it.
TEST(RunFlags, FlagzHoldsEveryFlagsParsedValueAsPflagPrintsIt) {
  auto s = run({"--v=4", "--leader-elect=false", "--kube-api-qps=12.5",
                "--authentication-token-webhook-cache-ttl=90s", "--bind-address=127.0.0.1"});
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->flagz.at("v"), "4");
  EXPECT_EQ(s->flagz.at("leader-elect"), "false");
  EXPECT_EQ(s->flagz.at("kube-api-qps"), "12.5");
  EXPECT_EQ(s->flagz.at("authentication-token-webhook-cache-ttl"), "1m30s");
  EXPECT_EQ(s->flagz.at("bind-address"), "127.0.0.1");
  EXPECT_EQ(s->flagz.at("secure-port"), "10259") << "defaults are listed too";
  EXPECT_EQ(s->flagz.count("requestheader-client-ca-file"), 0U) << "refused flags have no value";
}

TEST(RunFlags, LogFormatIsAnAliasOfLoggingFormat) {
  auto a = run({"--log-format=json"});
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->logFormat, log::Format::Json);
  auto b = run({"--logging-format", "json"});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->logFormat, log::Format::Json);
}

TEST(RunFlags, FlagsOverrideTheConfigFileAndSaySo) {
  const std::string path = testing::TempDir() + "run_flags_config.yaml";
  std::ofstream(path) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                         "kind: KubeSchedulerConfiguration\n"
                         "clientConnection: {kubeconfig: /from-file, qps: 5, burst: 7}\n";
  auto fileOnly = run({"--config=" + path});
  ASSERT_TRUE(fileOnly.ok()) << fileOnly.error().message;
  EXPECT_EQ(fileOnly->kubeconfig, "/from-file");
  EXPECT_EQ(fileOnly->qps, 5);
  EXPECT_EQ(fileOnly->burst, 7);
  EXPECT_TRUE(fileOnly->warnings.empty());

  auto both = run({"--config=" + path, "--kubeconfig=/from-flag", "--kube-api-qps=9"});
  ASSERT_TRUE(both.ok()) << both.error().message;
  EXPECT_EQ(both->kubeconfig, "/from-flag");
  EXPECT_EQ(both->config.clientConnection.kubeconfig, "/from-flag");
  EXPECT_EQ(both->qps, 9);
  EXPECT_EQ(both->burst, 7);
  EXPECT_EQ(both->warnings,
            (std::vector<std::string>{
                "Flag --kubeconfig overrides clientConnection.kubeconfig of --config",
                "Flag --kube-api-qps overrides clientConnection.qps of --config"}));
}

TEST(RunFlags, HelpHasKubeSchedulersSections) {
  testing::internal::CaptureStdout();
  auto parsed = parseRunFlags({"--help"});
  const std::string help = testing::internal::GetCapturedStdout();
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->exitCode, 0);
  size_t at = 0;
  for (const char* section :
       {"\nMisc flags:\n", "\nSecure serving flags:\n", "\nAuthentication flags:\n",
        "\nAuthorization flags:\n", "\nDeprecated flags:\n", "\nLeader election flags:\n",
        "\nFeature gate flags:\n", "\nMetrics flags:\n", "\nLogs flags:\n", "\nGlobal flags:\n"}) {
    const size_t next = help.find(section, at);
    EXPECT_NE(next, std::string::npos) << section << " in order in\n" << help;
    if (next != std::string::npos) at = next;
  }
  EXPECT_NE(help.find("  -v, --v Level   "), std::string::npos);
  EXPECT_NE(help.find("--logging-format string"), std::string::npos);
  EXPECT_NE(help.find("(also --log-format)"), std::string::npos);
  EXPECT_NE(help.find("--bind-address ip"), std::string::npos);
  EXPECT_NE(help.find("--pod-max-in-unschedulable-pods-duration duration"), std::string::npos);
  EXPECT_NE(help.find("(default 5m0s)"), std::string::npos);
  EXPECT_NE(help.find("kube:SchedulerQueueingHints=true|false (GA - default=true)"),
            std::string::npos);
  EXPECT_NE(help.find("Precedence:"), std::string::npos);
  EXPECT_NE(help.find("--version version[=true]"), std::string::npos);
}

TEST(RunFlags, VersionOnTheCommandLinePrintsTheVersion) {
  testing::internal::CaptureStdout();
  auto parsed = parseRunFlags({"--version"});
  const std::string out = testing::internal::GetCapturedStdout();
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->exitCode, 0);
  EXPECT_EQ(out, versionLine() + "\n");

  testing::internal::CaptureStdout();
  auto raw = parseRunFlags({"--version=raw"});
  const std::string json = testing::internal::GetCapturedStdout();
  ASSERT_TRUE(raw.ok());
  EXPECT_NE(json.find("\"gitCommit\":"), std::string::npos) << json;

  EXPECT_NE(flagError({"--version=v9.9"}).find("for \"--version\" flag"), std::string::npos);
}

TEST(FeatureGates, LockedGatesUnknownGatesAndGatesBerthHasAtOneValue) {
  auto ok = parseFeatureGates("SchedulerQueueingHints=true,SchedulerPopFromBackoffQ=false");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->size(), 2U);
  auto locked = parseFeatureGates("SchedulerQueueingHints=false");
  ASSERT_FALSE(locked.ok());
  EXPECT_EQ(locked.error().message,
            "cannot set feature gate SchedulerQueueingHints to false, feature is locked to true");
  auto unknown = parseFeatureGates("NoSuchGate=true");
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(unknown.error().message.starts_with("unrecognized feature gate: NoSuchGate"));
  auto other = parseFeatureGates("SchedulerAsyncPreemption=false");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().message,
            "berth implements SchedulerAsyncPreemption=true only: berth always preempts "
            "asynchronously: the victims are deleted off the scheduling loop");
  EXPECT_FALSE(parseFeatureGates("SchedulerQueueingHints").ok());
  EXPECT_FALSE(parseFeatureGates("SchedulerQueueingHints=yes").ok());
  EXPECT_FALSE(parseFeatureGates("other:SchedulerQueueingHints=true").ok());
  // Through the flag: pflag's wording around the gate's message.
  EXPECT_EQ(flagError({"--feature-gates=SchedulerQueueingHints=false"}),
            "Error: invalid argument \"SchedulerQueueingHints=false\" for \"--feature-gates\" "
            "flag: cannot set feature gate SchedulerQueueingHints to false, feature is locked to "
            "true\n");
}

TEST(RunFlags, MetricEscapeHatchesAreParsed) {
  auto s =
      run({"--disabled-metrics=scheduler_goroutines,scheduler_cache_size",
           "--allow-metric-labels=scheduler_schedule_attempts_total,result='scheduled,error'"});
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->metrics.disabled,
            (std::set<std::string>{"scheduler_cache_size", "scheduler_goroutines"}));
  const auto& allowed = s->metrics.allowLabels.at({"scheduler_schedule_attempts_total", "result"});
  EXPECT_EQ(allowed, (std::set<std::string>{"error", "scheduled"}));
  auto two = run({"--allow-metric-labels=\"a,l1=x,y\",\"b,l2=z\""});
  ASSERT_TRUE(two.ok()) << two.error().message;
  EXPECT_EQ(two->metrics.allowLabels.size(), 2U);
  EXPECT_FALSE(run({"--allow-metric-labels=nolabel=x"}).ok());
  EXPECT_FALSE(run({"--allow-metric-labels=x"}).ok());
}

TEST(Version, JsonAndYamlCarryTheBuildIdentity) {
  const VersionInfo& v = versionInfo();
  EXPECT_EQ(v.gitVersion, std::string("v") + BERTH_VERSION);
  EXPECT_FALSE(v.gitCommit.empty());
  EXPECT_FALSE(v.compiler.empty());
  EXPECT_NE(v.platform.find('/'), std::string::npos);
  EXPECT_EQ(v.buildDate.size(), std::string("2026-12-02T01:43:00Z").size());
  auto j = versionJson(v);
  EXPECT_EQ(j.begin().key(), "major");
  EXPECT_EQ(j["gitCommit"], v.gitCommit);
  EXPECT_EQ(j["platform"], v.platform);
  const std::string yaml = versionYaml(v);
  EXPECT_NE(yaml.find("gitVersion: \"" + v.gitVersion + "\"\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("buildDate: \"" + v.buildDate + "\"\n"), std::string::npos);
}

TEST(FormatDuration, AsGoWritesIt) {
  EXPECT_EQ(formatDuration(std::chrono::minutes(5)), "5m0s");
  EXPECT_EQ(formatDuration(std::chrono::hours(1)), "1h0m0s");
  EXPECT_EQ(formatDuration(std::chrono::milliseconds(3605000)), "1h0m5s");
  EXPECT_EQ(formatDuration(std::chrono::seconds(15)), "15s");
  EXPECT_EQ(formatDuration(std::chrono::milliseconds(1500)), "1.5s");
  EXPECT_EQ(formatDuration(std::chrono::milliseconds(250)), "250ms");
  EXPECT_EQ(formatDuration(std::chrono::milliseconds(0)), "0s");
}

}  // namespace
}  // namespace berth::cmd
