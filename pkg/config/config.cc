#include "pkg/config/config.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>

#include "pkg/api/yaml.h"
#include "pkg/config/decoder.h"
#include "pkg/util/duration.h"
#include "pkg/util/quote.h"

namespace berth::config {
namespace {

constexpr std::string_view kKind = "KubeSchedulerConfiguration";
constexpr std::string_view kJsonContentType = "application/json";
constexpr int64_t kNanosPerMilli = 1000'000;

// Upstream kube-scheduler's in-tree plugins, present and past. Naming one the plugin catalog does
// not have is "not supported by berth"; any other name berth does not know is an "unknown plugin".
constexpr std::string_view kUpstreamPlugins[] = {
    "PrioritySort",       "SchedulingGates",   "NodeUnschedulable",
    "NodeName",           "TaintToleration",   "NodeAffinity",
    "NodePorts",          "NodeResourcesFit",  "NodeResourcesBalancedAllocation",
    "VolumeRestrictions", "NodeVolumeLimits",  "VolumeBinding",
    "VolumeZone",         "PodTopologySpread", "InterPodAffinity",
    "DefaultPreemption",  "ImageLocality",     "DefaultBinder",
    "DynamicResources",   "AzureDiskLimits",   "CinderLimits",
    "EBSLimits",          "GCEPDLimits",       "SelectorSpread",
    "ServiceAffinity",
};

// Fields of upstream's v1 types that berth does not implement.
constexpr std::string_view kUnsupportedTopLevel[] = {"enableProfiling", "enableContentionProfiling",
                                                     "percentageOfPlacementsToScore", "extenders",
                                                     "delayCacheUntilActive"};
constexpr std::string_view kUnsupportedProfile[] = {"percentageOfPlacementsToScore"};
constexpr std::string_view kUnsupportedPoints[] = {"placementGenerate", "placementScore",
                                                   "placementFeasible", "podGroupPostFilter"};

bool isUpstreamPlugin(std::string_view name) {
  return std::find(std::begin(kUpstreamPlugins), std::end(kUpstreamPlugins), name) !=
         std::end(kUpstreamPlugins);
}

// What happens, without the plugin, to the pods that need it.
std::string_view withoutPlugin(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kWithout[] = {
      {"SchedulingGates",
       "berth's queue holds pods with spec.schedulingGates itself, as upstream's plugin does; "
       "leave it out of the profile"},
      {"DynamicResources",
       "pods with spec.resourceClaims are refused (left Pending with a FailedScheduling event)"},
      {"AzureDiskLimits", "kube-scheduler v1.35 has no such plugin either: use NodeVolumeLimits"},
      {"CinderLimits", "kube-scheduler v1.35 has no such plugin either: use NodeVolumeLimits"},
      {"EBSLimits", "kube-scheduler v1.35 has no such plugin either: use NodeVolumeLimits"},
      {"GCEPDLimits", "kube-scheduler v1.35 has no such plugin either: use NodeVolumeLimits"},
      {"SelectorSpread", "kube-scheduler v1.35 has no such plugin either: use PodTopologySpread"},
      {"ServiceAffinity",
       "kube-scheduler v1.35 has no such plugin either: use required pod affinity"},
  };
  for (const auto& [plugin, what] : kWithout) {
    if (plugin == name) return what;
  }
  return {};
}

std::string pluginNameProblem(const std::string& name) {
  if (isUpstreamPlugin(name)) {
    std::string problem = "plugin \"" + name + "\" is not supported by berth";
    if (auto what = withoutPlugin(name); !what.empty()) problem += ": " + std::string(what);
    return problem;
  }
  return "unknown plugin " + util::quoteGo(name);
}

std::string formatMillis(int64_t millis) { return util::formatGoDuration(millis); }

// --- Plugins -------------------------------------------------------------------------------------

PluginRef decodePluginRef(Decoder& d, const Json& j, const std::string& path, bool enabled,
                          const PluginCatalog& catalog) {
  PluginRef ref;
  ref.field = path;
  bool weighted = false;
  d.object(j, path,
           {{"name",
             [&](const Json& v, const std::string& p) {
               if (auto s = d.string(v, p)) {
                 ref.name = *s;
               }
             }},
            {"weight", [&](const Json& v, const std::string& p) {
               if (auto w = d.int32(v, p)) {
                 ref.weight = *w;
                 weighted = true;
               }
             }}});
  if (d.failed()) {
    return ref;
  }
  std::string weightPath = child(path, "weight");
  if (ref.name.empty()) {
    d.fail(child(path, "name"), "required");
  } else if (enabled) {
    if (!catalog.hasPlugin(ref.name)) {
      d.fail(path, pluginNameProblem(ref.name));
    } else if (weighted && ref.weight <= 0) {
      // Upstream turns 0 into 1 and accepts negative weights; berth refuses both (disable instead).
      d.fail(weightPath, "must be positive, got " + std::to_string(ref.weight));
    }
  } else {
    // Disabling an upstream plugin berth lacks states what berth already does, so it is accepted.
    if (ref.name != "*" && !catalog.hasPlugin(ref.name) && !isUpstreamPlugin(ref.name)) {
      d.fail(path, pluginNameProblem(ref.name));
    } else if (weighted) {
      d.fail(weightPath, "has no effect on a disabled plugin");
    }
  }
  return ref;
}

std::vector<PluginRef> decodePluginList(Decoder& d, const Json& j, const std::string& path,
                                        bool enabled, const PluginCatalog& catalog) {
  std::vector<PluginRef> out;
  std::map<std::string, std::string> seen;  // name -> where
  d.list(j, path, [&](const Json& item, const std::string& p) {
    PluginRef ref = decodePluginRef(d, item, p, enabled, catalog);
    if (d.failed()) {
      return;
    }
    auto [it, inserted] = seen.emplace(ref.name, p);
    if (!inserted) {
      d.fail(p, "plugin \"" + ref.name + "\" is listed twice (also " + it->second + ")");
      return;
    }
    out.push_back(std::move(ref));
  });
  return out;
}

Plugins decodePlugins(Decoder& d, const Json& j, const std::string& path,
                      const PluginCatalog& catalog) {
  Plugins plugins;
  std::vector<Decoder::Field> fields;
  for (const ExtensionPoint& point : kExtensionPoints) {
    if (point.set == nullptr) continue;
    fields.push_back(
        {point.field, [&d, &plugins, &catalog, point](const Json& v, const std::string& p) {
           PluginSet& set = plugins.*point.set;
           d.object(v, p,
                    {{"enabled",
                      [&](const Json& ev, const std::string& ep) {
                        set.enabled = decodePluginList(d, ev, ep, true, catalog);
                      }},
                     {"disabled", [&](const Json& dv, const std::string& dp) {
                        set.disabled = decodePluginList(d, dv, dp, false, catalog);
                      }}});
         }});
  }
  d.object(j, path, fields, kUnsupportedPoints);
  return plugins;
}

// Upstream's mergePluginSet: the user's disabled entries (or "*") drop defaults, a user entry with
// a default's name takes that default's place (weight included, even when unset), the remaining
// user entries follow in their order.
PluginSet mergePluginSet(const PluginSet& defaults, const PluginSet& custom) {
  PluginSet out;
  std::set<std::string> disabled;
  for (const PluginSet* set : {&custom, &defaults}) {
    for (const PluginRef& p : set->disabled) {
      out.disabled.push_back(p);
      disabled.insert(p.name);
    }
  }
  std::vector<bool> replaced(custom.enabled.size(), false);
  if (disabled.count("*") == 0) {
    for (const PluginRef& def : defaults.enabled) {
      if (disabled.count(def.name) != 0) {
        continue;
      }
      auto it = std::find_if(custom.enabled.begin(), custom.enabled.end(),
                             [&def](const PluginRef& p) { return p.name == def.name; });
      if (it == custom.enabled.end()) {
        out.enabled.push_back(def);
      } else {
        out.enabled.push_back(*it);
        replaced[it - custom.enabled.begin()] = true;
      }
    }
  }
  for (size_t i = 0; i < custom.enabled.size(); ++i) {
    if (!replaced[i]) {
      out.enabled.push_back(custom.enabled[i]);
    }
  }
  return out;
}

Plugins mergePlugins(const Plugins& custom) {
  Plugins defaults;
  defaults.multiPoint.enabled = defaultMultiPointPlugins();
  Plugins out;
  for (const ExtensionPoint& point : kExtensionPoints) {
    if (point.set == nullptr) continue;
    out.*point.set = mergePluginSet(defaults.*point.set, custom.*point.set);
  }
  return out;
}

// The queue sort plugin a merged profile ends up with ("" for none): queueSort.enabled, else a
// multiPoint plugin that sorts (berth has only PrioritySort) unless queueSort.disabled drops it.
std::string effectiveQueueSort(const Plugins& plugins) {
  if (!plugins.queueSort.enabled.empty()) {
    return plugins.queueSort.enabled.front().name;
  }
  for (const PluginRef& p : plugins.queueSort.disabled) {
    if (p.name == "*" || p.name == "PrioritySort") {
      return "";
    }
  }
  for (const PluginRef& p : plugins.multiPoint.enabled) {
    if (p.name == "PrioritySort") {
      return p.name;
    }
  }
  return "";
}

// --- Profiles ------------------------------------------------------------------------------------

Profile defaultProfile(std::string field) {
  Profile profile;
  profile.plugins.multiPoint.enabled = defaultMultiPointPlugins();
  profile.field = std::move(field);
  return profile;
}

void decodePluginConfig(Decoder& d, const Json& j, const std::string& path,
                        const PluginCatalog& decoder, Profile& profile) {
  std::map<std::string, std::string> seen;
  d.list(j, path, [&](const Json& entry, const std::string& p) {
    std::string namePath = child(p, "name");
    std::string name;
    if (entry.is_object() && entry.contains("name") && !entry["name"].is_null()) {
      name = d.string(entry["name"], namePath).value_or("");
    }
    if (d.failed()) {
      return;
    }
    if (entry.is_object()) {  // anything else is reported by d.object below
      if (name.empty()) {
        d.fail(namePath, "required");
      } else if (auto [it, inserted] = seen.emplace(name, p); !inserted) {
        d.fail(namePath, "duplicate entry for plugin \"" + name + "\" (also " + it->second + ")");
      } else if (!decoder.hasPlugin(name)) {
        d.fail(namePath, pluginNameProblem(name));
      } else if (!decoder.takesArgs(name)) {
        d.fail(namePath, "plugin \"" + name + "\" takes no arguments");
      }
    }
    d.object(entry, p,
             {{"name", [](const Json&, const std::string&) {}},
              {"args", [&](const Json& v, const std::string& ap) {
                 decoder.checkArgs(name, d, v, ap);
                 if (!d.failed()) profile.pluginConfig.push_back({name, v, ap});
               }}});
  });
}

void checkPercentage(Decoder& d, int32_t value, const std::string& path) {
  if (value < 0 || value > 100) {
    d.fail(path, "not in valid range [0-100], got " + std::to_string(value));
  }
}

struct DecodedProfile {
  Profile profile;
  bool named = false;
};

DecodedProfile decodeProfile(Decoder& d, const Json& j, const std::string& path,
                             const PluginCatalog& decoder) {
  DecodedProfile out{defaultProfile(path)};
  Plugins custom;
  d.object(j, path,
           {{"schedulerName",
             [&](const Json& v, const std::string& p) {
               if (auto s = d.string(v, p)) {
                 out.profile.schedulerName = *s;
                 out.named = true;
               }
             }},
            {"percentageOfNodesToScore",
             [&](const Json& v, const std::string& p) {
               if (auto pct = d.int32(v, p)) {
                 checkPercentage(d, *pct, p);
                 out.profile.percentageOfNodesToScore = *pct;
               }
             }},
            {"plugins", [&](const Json& v,
                            const std::string& p) { custom = decodePlugins(d, v, p, decoder); }},
            {"pluginConfig",
             [&](const Json& v, const std::string& p) {
               decodePluginConfig(d, v, p, decoder, out.profile);
             }}},
           kUnsupportedProfile);
  out.profile.plugins = mergePlugins(custom);
  return out;
}

// --- Leader election and client connection -------------------------------------------------------

struct DurationValue {
  int64_t nanos = 0;
  std::string text;
};

Decoder::Handler durationField(Decoder& d, DurationValue& out) {
  return [&d, &out](const Json& v, const std::string& p) {
    std::optional<int64_t> nanos;
    if (v.is_string()) {
      if (auto parsed = util::parseGoDuration(v.get<std::string>()); parsed.ok()) {
        nanos = parsed->count();
      }
    }
    if (!nanos) {
      d.fail(p, "invalid duration " + describe(v) + ", want a Go duration like \"15s\", " +
                    "\"1m30s\" or \"500ms\"");
      return;
    }
    out.nanos = *nanos;
    out.text = v.get<std::string>();
  };
}

void decodeLeaderElection(Decoder& d, const Json& j, const std::string& path, LeaderElection& out) {
  DurationValue lease{out.leaseDurationMillis * kNanosPerMilli,
                      formatMillis(out.leaseDurationMillis)};
  DurationValue renew{out.renewDeadlineMillis * kNanosPerMilli,
                      formatMillis(out.renewDeadlineMillis)};
  DurationValue retry{out.retryPeriodMillis * kNanosPerMilli, formatMillis(out.retryPeriodMillis)};
  auto text = [&d](std::string& field) {
    return [&d, &field](const Json& v, const std::string& p) {
      if (auto s = d.string(v, p); s && !s->empty()) {  // empty means unset, as upstream
        field = *s;
      }
    };
  };
  d.object(j, path,
           {{"leaderElect",
             [&](const Json& v, const std::string& p) {
               if (auto b = d.boolean(v, p)) {
                 out.leaderElect = *b;
               }
             }},
            {"leaseDuration", durationField(d, lease)},
            {"renewDeadline", durationField(d, renew)},
            {"retryPeriod", durationField(d, retry)},
            {"resourceLock", text(out.resourceLock)},
            {"resourceName", text(out.resourceName)},
            {"resourceNamespace", text(out.resourceNamespace)}});
  if (d.failed()) {
    return;
  }
  out.leaseDurationMillis = lease.nanos / kNanosPerMilli;
  out.renewDeadlineMillis = renew.nanos / kNanosPerMilli;
  out.retryPeriodMillis = retry.nanos / kNanosPerMilli;
}

// Upstream's ValidateLeaderElectionConfiguration plus client-go's NewLeaderElector checks, which
// kube-scheduler would only hit at startup. Nothing is checked when leader election is off.
void validateLeaderElection(Decoder& d, const LeaderElection& le, const std::string& path) {
  if (!le.leaderElect) {
    return;
  }
  const std::pair<const char*, int64_t> positive[] = {{"leaseDuration", le.leaseDurationMillis},
                                                      {"renewDeadline", le.renewDeadlineMillis},
                                                      {"retryPeriod", le.retryPeriodMillis}};
  for (const auto& [name, millis] : positive) {
    if (millis <= 0) {
      d.fail(child(path, name), "must be greater than zero, got " + formatMillis(millis));
      return;
    }
  }
  if (le.leaseDurationMillis <= le.renewDeadlineMillis) {
    d.fail(child(path, "leaseDuration"), "must be greater than renewDeadline (" +
                                             formatMillis(le.renewDeadlineMillis) + "), got " +
                                             formatMillis(le.leaseDurationMillis));
    return;
  }
  // client-go's JitterFactor: a renewal must fit retries with jitter.
  if (le.renewDeadlineMillis * 10 <= le.retryPeriodMillis * 12) {
    d.fail(child(path, "renewDeadline"), "must be greater than 1.2 × retryPeriod (" +
                                             formatMillis(le.retryPeriodMillis) + "), got " +
                                             formatMillis(le.renewDeadlineMillis));
    return;
  }
  if (le.resourceLock != "leases") {
    d.fail(child(path, "resourceLock"),
           "must be \"leases\", got " + util::quoteGo(le.resourceLock));
  }
}

void decodeClientConnection(Decoder& d, const Json& j, const std::string& path,
                            ClientConnection& out) {
  auto contentType = [&d](const Json& v, const std::string& p) {
    auto s = d.string(v, p);
    if (s && !s->empty() && *s != kJsonContentType) {
      d.fail(p, util::quoteGo(*s) + " is not supported by berth (berth speaks JSON only: use \"" +
                    std::string(kJsonContentType) + "\")");
    }
  };
  d.object(
      j, path,
      {{"kubeconfig",
        [&](const Json& v, const std::string& p) { out.kubeconfig = d.string(v, p).value_or(""); }},
       {"acceptContentTypes", contentType},
       {"contentType", contentType},
       {"qps",
        [&](const Json& v, const std::string& p) {
          auto qps = d.number(v, p);
          if (qps && *qps < 0) {
            d.fail(p, "must be non-negative, got " + describe(v));
          } else if (qps && *qps > std::numeric_limits<float>::max()) {
            d.fail(p, "too large, got " + describe(v));
          } else if (qps && *qps > 0) {  // 0 means the default, as upstream
            out.qps = static_cast<float>(*qps);
          }
        }},
       {"burst", [&](const Json& v, const std::string& p) {
          auto burst = d.int32(v, p);
          if (burst && *burst < 0) {
            d.fail(p, "must be non-negative, got " + std::to_string(*burst));
          } else if (burst && *burst > 0) {
            out.burst = *burst;
          }
        }}});
}

// --- The whole configuration ---------------------------------------------------------------------

void checkTypeMeta(Decoder& d, const Json& root) {
  const std::string expected = "\"" + std::string(kApiVersion) + "\"";
  auto apiVersion = root.find("apiVersion");
  if (apiVersion == root.end() || apiVersion->is_null()) {
    d.fail("apiVersion", "required, must be " + expected);
    return;
  }
  auto version = d.string(*apiVersion, "apiVersion");
  if (!version) {
    return;
  }
  if (*version != kApiVersion) {
    bool beta = version->rfind("kubescheduler.config.k8s.io/", 0) == 0;
    d.fail("apiVersion",
           "unsupported version " + util::quoteGo(*version) + ", must be " + expected +
               (beta ? " (v1beta* configurations are not supported: convert to v1)" : ""));
    return;
  }
  auto kind = root.find("kind");
  if (kind == root.end() || kind->is_null()) {
    d.fail("kind", "required, must be \"" + std::string(kKind) + "\"");
    return;
  }
  auto k = d.string(*kind, "kind");
  if (k && *k != kKind) {
    d.fail("kind", "must be \"" + std::string(kKind) + "\", got " + util::quoteGo(*k));
  }
}

void validateProfiles(Decoder& d, const std::vector<DecodedProfile>& profiles) {
  std::map<std::string, std::string> names;
  for (const DecodedProfile& p : profiles) {
    std::string path = child(p.profile.field, "schedulerName");
    if (p.profile.schedulerName.empty()) {
      d.fail(path, p.named ? "must not be empty" : "required when there are several profiles");
      return;
    }
    if (auto [it, inserted] = names.emplace(p.profile.schedulerName, p.profile.field); !inserted) {
      d.fail(path, "duplicate scheduler name \"" + p.profile.schedulerName + "\" (also " +
                       it->second + ")");
      return;
    }
  }
  for (const DecodedProfile& p : profiles) {
    if (p.profile.plugins.queueSort.enabled.size() > 1) {
      d.fail(child(p.profile.field, "plugins.queueSort.enabled"),
             "only one queue sort plugin can be enabled");
      return;
    }
  }
  std::string first = effectiveQueueSort(profiles.front().profile.plugins);
  for (size_t i = 1; i < profiles.size(); ++i) {
    std::string sort = effectiveQueueSort(profiles[i].profile.plugins);
    if (sort != first) {
      auto show = [](const std::string& s) { return s.empty() ? "none" : "\"" + s + "\""; };
      d.fail(child(profiles[i].profile.field, "plugins.queueSort"),
             "must be the same for all profiles (" + show(sort) + " here, " + show(first) + " in " +
                 profiles.front().profile.field + ")");
      return;
    }
  }
}

Configuration decodeConfiguration(Decoder& d, const Json& root, const PluginCatalog& decoder) {
  Configuration cfg;
  std::vector<DecodedProfile> profiles;
  std::optional<int64_t> initialBackoff;
  std::optional<int64_t> maxBackoff;
  auto typeMetaField = [](const Json&, const std::string&) {};  // checked by checkTypeMeta
  d.object(root, "",
           {{"apiVersion", typeMetaField},
            {"kind", typeMetaField},
            {"parallelism",
             [&](const Json& v, const std::string& p) {
               if (auto n = d.int32(v, p)) {
                 if (*n <= 0) {
                   d.fail(p, "must be greater than zero, got " + std::to_string(*n));
                 }
                 cfg.parallelism = *n;
               }
             }},
            {"percentageOfNodesToScore",
             [&](const Json& v, const std::string& p) {
               if (auto pct = d.int32(v, p)) {
                 checkPercentage(d, *pct, p);
                 cfg.percentageOfNodesToScore = *pct;
               }
             }},
            {"podInitialBackoffSeconds",
             [&](const Json& v, const std::string& p) {
               initialBackoff = d.int64(v, p);
               if (initialBackoff && *initialBackoff <= 0) {
                 d.fail(p, "must be greater than 0, got " + std::to_string(*initialBackoff));
               }
             }},
            {"podMaxBackoffSeconds",
             [&](const Json& v, const std::string& p) { maxBackoff = d.int64(v, p); }},
            {"profiles",
             [&](const Json& v, const std::string& p) {
               d.list(v, p, [&](const Json& item, const std::string& ip) {
                 profiles.push_back(decodeProfile(d, item, ip, decoder));
               });
             }},
            {"leaderElection",
             [&](const Json& v, const std::string& p) {
               decodeLeaderElection(d, v, p, cfg.leaderElection);
             }},
            {"clientConnection",
             [&](const Json& v, const std::string& p) {
               decodeClientConnection(d, v, p, cfg.clientConnection);
             }}},
           kUnsupportedTopLevel);
  if (d.failed()) {
    return cfg;
  }

  cfg.podInitialBackoffSeconds = initialBackoff.value_or(cfg.podInitialBackoffSeconds);
  cfg.podMaxBackoffSeconds = maxBackoff.value_or(cfg.podMaxBackoffSeconds);
  if (cfg.podMaxBackoffSeconds < cfg.podInitialBackoffSeconds) {
    d.fail("podMaxBackoffSeconds", "must be greater than or equal to podInitialBackoffSeconds (" +
                                       std::to_string(cfg.podInitialBackoffSeconds) + "), got " +
                                       std::to_string(cfg.podMaxBackoffSeconds));
    return cfg;
  }

  // As upstream: no profiles means one default profile; only a lone profile gets a default name.
  if (profiles.empty()) {
    profiles.push_back(DecodedProfile{defaultProfile("profiles[0]")});
  }
  if (profiles.size() == 1 && !profiles[0].named) {
    profiles[0].profile.schedulerName = std::string(kDefaultSchedulerName);
  }
  validateProfiles(d, profiles);
  for (DecodedProfile& p : profiles) {
    cfg.profiles.push_back(std::move(p.profile));
  }

  // berth's lease is named after its scheduler, so it never contends with kube-scheduler's.
  if (cfg.leaderElection.resourceName.empty()) {
    cfg.leaderElection.resourceName = cfg.profiles.front().schedulerName;
  }
  validateLeaderElection(d, cfg.leaderElection, "leaderElection");
  return cfg;
}

util::Result<Configuration> parse(std::string_view text, const std::string& prefix,
                                  const PluginCatalog& decoder) {
  auto doc = api::parseOneDocument(text, {.reject_duplicate_keys = true});
  if (!doc.ok()) {
    return util::invalidArgument(prefix + ": " + doc.error().message);
  }
  Json root = std::move(*doc);
  if (root.is_null()) {
    root = Json::object();  // an empty file: report the missing apiVersion
  }
  if (!root.is_object()) {
    return util::invalidArgument(prefix + ": must be a KubeSchedulerConfiguration mapping, got " +
                                 describe(root));
  }
  Decoder d;
  checkTypeMeta(d, root);
  Configuration cfg;
  if (!d.failed()) {
    cfg = decodeConfiguration(d, root, decoder);
  }
  if (d.failed()) {
    return util::invalidArgument(prefix + ": " + d.error());
  }
  return cfg;
}

}  // namespace

const std::vector<PluginRef>& defaultMultiPointPlugins() {
  static const std::vector<PluginRef> kDefaults = {
      {"PrioritySort", 0, "default"},
      {"NodeUnschedulable", 0, "default"},
      {"NodeName", 0, "default"},
      {"TaintToleration", 3, "default"},
      {"NodeAffinity", 2, "default"},
      {"NodePorts", 0, "default"},
      {"NodeResourcesFit", 1, "default"},
      {"VolumeRestrictions", 0, "default"},
      {"NodeVolumeLimits", 0, "default"},
      // VolumeBinding scores only with upstream's StorageCapacityScoring gate: no weight here.
      {"VolumeBinding", 0, "default"},
      {"VolumeZone", 0, "default"},
      {"PodTopologySpread", 2, "default"},
      {"InterPodAffinity", 2, "default"},
      {"DefaultPreemption", 0, "default"},
      {"NodeResourcesBalancedAllocation", 1, "default"},
      {"ImageLocality", 1, "default"},
      {"DefaultBinder", 0, "default"},
  };
  return kDefaults;
}

const PluginConfig* Profile::pluginConfigFor(std::string_view name) const {
  for (const PluginConfig& c : pluginConfig) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

namespace {

Json encodePluginSet(const PluginSet& set) {
  Json out = Json::object();
  for (const auto& [key, list] :
       {std::pair{"enabled", &set.enabled}, {"disabled", &set.disabled}}) {
    if (list->empty()) continue;
    Json items = Json::array();
    for (const PluginRef& ref : *list) {
      Json item = {{"name", ref.name}};
      if (ref.weight != 0) item["weight"] = ref.weight;
      items.push_back(std::move(item));
    }
    out[key] = std::move(items);
  }
  return out;
}

}  // namespace

Json encodeConfiguration(const Configuration& cfg) {
  Json profiles = Json::array();
  for (const Profile& p : cfg.profiles) {
    Json profile = {{"schedulerName", p.schedulerName}};
    if (p.percentageOfNodesToScore)
      profile["percentageOfNodesToScore"] = *p.percentageOfNodesToScore;
    Json plugins = Json::object();
    for (const ExtensionPoint& point : kExtensionPoints) {
      if (point.set == nullptr) continue;
      Json set = encodePluginSet(p.plugins.*point.set);
      if (!set.empty()) plugins[std::string(point.field)] = std::move(set);
    }
    profile["plugins"] = std::move(plugins);
    Json pluginConfig = Json::array();
    for (const PluginConfig& c : p.pluginConfig) {
      Json entry = {{"name", c.name}};
      if (!c.args.is_null()) entry["args"] = c.args;
      pluginConfig.push_back(std::move(entry));
    }
    if (!pluginConfig.empty()) profile["pluginConfig"] = std::move(pluginConfig);
    profiles.push_back(std::move(profile));
  }
  const LeaderElection& le = cfg.leaderElection;
  return Json{
      {"apiVersion", std::string(kApiVersion)},
      {"kind", "KubeSchedulerConfiguration"},
      {"parallelism", cfg.parallelism},
      {"percentageOfNodesToScore", cfg.percentageOfNodesToScore},
      {"podInitialBackoffSeconds", cfg.podInitialBackoffSeconds},
      {"podMaxBackoffSeconds", cfg.podMaxBackoffSeconds},
      {"leaderElection",
       {{"leaderElect", le.leaderElect},
        {"leaseDuration", formatMillis(le.leaseDurationMillis)},
        {"renewDeadline", formatMillis(le.renewDeadlineMillis)},
        {"retryPeriod", formatMillis(le.retryPeriodMillis)},
        {"resourceLock", le.resourceLock},
        {"resourceName", le.resourceName},
        {"resourceNamespace", le.resourceNamespace}}},
      {"clientConnection",
       {{"kubeconfig", cfg.clientConnection.kubeconfig},
        {"acceptContentTypes", ""},
        {"contentType", std::string(kJsonContentType)},
        {"qps", cfg.clientConnection.qps},
        {"burst", cfg.clientConnection.burst}}},
      {"profiles", std::move(profiles)},
  };
}

Configuration defaultConfiguration() {
  Configuration cfg;
  Profile profile = defaultProfile("profiles[0]");
  profile.schedulerName = std::string(kDefaultSchedulerName);
  cfg.profiles.push_back(std::move(profile));
  cfg.leaderElection.resourceName = std::string(kDefaultSchedulerName);
  return cfg;
}

util::Result<Configuration> parseConfiguration(std::string_view text, std::string_view source,
                                               const PluginCatalog& args) {
  std::string prefix(source);
  try {
    return parse(text, prefix, args);
  } catch (const std::exception& e) {
    // Nothing above should throw; if a library does (e.g. out of memory), it still stays inside.
    return util::Error{util::ErrorCode::Internal, prefix + ": " + e.what()};
  }
}

}  // namespace berth::config
