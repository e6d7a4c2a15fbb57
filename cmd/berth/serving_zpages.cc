#include "cmd/berth/serving_zpages.h"

#include <nlohmann/json.hpp>

#include "pkg/config/extension_points.h"
#include "pkg/metrics/pod_resources.h"
#include "pkg/serving/zpages.h"

namespace berth::cmd {
namespace {

using Json = nlohmann::ordered_json;

Json pluginSetJson(const config::PluginSet& set) {
  Json out = Json::object();
  for (const auto& [key, list] :
       {std::pair{"enabled", &set.enabled}, std::pair{"disabled", &set.disabled}}) {
    Json items = Json::array();
    for (const config::PluginRef& ref : *list) {
      Json item = {{"name", ref.name}};
      if (ref.weight != 0) item["weight"] = ref.weight;
      items.push_back(std::move(item));
    }
    if (!items.empty()) out[key] = std::move(items);
  }
  return out;
}

Json profileJson(const config::Profile& p) {
  Json plugins = Json::object();
  for (const config::ExtensionPoint& point : config::kExtensionPoints) {
    if (point.set == nullptr) continue;
    Json set = pluginSetJson(p.plugins.*point.set);
    if (!set.empty()) plugins[std::string(point.field)] = std::move(set);
  }
  Json profile = {{"schedulerName", p.schedulerName}};
  if (p.percentageOfNodesToScore) profile["percentageOfNodesToScore"] = *p.percentageOfNodesToScore;
  profile["plugins"] = std::move(plugins);
  Json pluginConfig = Json::array();
  for (const config::PluginConfig& c : p.pluginConfig) {
    Json entry = {{"name", c.name}};
    if (!c.args.is_null()) entry["args"] = c.args;
    pluginConfig.push_back(std::move(entry));
  }
  if (!pluginConfig.empty()) profile["pluginConfig"] = std::move(pluginConfig);
  return profile;
}

}  // namespace

std::string goDuration(int64_t millis) {
  if (millis == 0) return "0s";
  std::string sign = millis < 0 ? "-" : "";
  const uint64_t ms = millis < 0 ? -static_cast<uint64_t>(millis) : static_cast<uint64_t>(millis);
  if (ms < 1000) return sign + std::to_string(ms) + "ms";
  std::string out = sign;
  const uint64_t hours = ms / 3'600'000;
  const uint64_t minutes = ms / 60'000 % 60;
  if (hours > 0) out += std::to_string(hours) + "h";
  if (hours > 0 || minutes > 0) out += std::to_string(minutes) + "m";
  out += std::to_string(ms / 1000 % 60);
  if (uint64_t frac = ms % 1000; frac != 0) {
    std::string digits = std::to_string(frac + 1000).substr(1);  // three digits
    while (digits.back() == '0') digits.pop_back();
    out += "." + digits;
  }
  return out + "s";
}

std::string configzJson(const config::Configuration& cfg) {
  Json profiles = Json::array();
  for (const config::Profile& p : cfg.profiles) profiles.push_back(profileJson(p));
  const config::LeaderElection& le = cfg.leaderElection;
  const Json doc = {
      {"kind", "KubeSchedulerConfiguration"},
      {"apiVersion", "kubescheduler.config.k8s.io/v1"},
      {"parallelism", cfg.parallelism},
      {"leaderElection",
       {{"leaderElect", le.leaderElect},
        {"leaseDuration", goDuration(le.leaseDurationMillis)},
        {"renewDeadline", goDuration(le.renewDeadlineMillis)},
        {"retryPeriod", goDuration(le.retryPeriodMillis)},
        {"resourceLock", le.resourceLock},
        {"resourceName", le.resourceName},
        {"resourceNamespace", le.resourceNamespace}}},
      {"clientConnection",
       {{"kubeconfig", cfg.clientConnection.kubeconfig},
        {"acceptContentTypes", ""},
        {"contentType", "application/json"},
        {"qps", cfg.clientConnection.qps},
        {"burst", cfg.clientConnection.burst}}},
      {"percentageOfNodesToScore", cfg.percentageOfNodesToScore},
      {"podInitialBackoffSeconds", cfg.podInitialBackoffSeconds},
      {"podMaxBackoffSeconds", cfg.podMaxBackoffSeconds},
      {"profiles", std::move(profiles)},
  };
  return doc.dump();
}

const std::vector<std::string>& zpagePaths() {
  static const std::vector<std::string> kPaths{"/configz", "/metrics/resources", "/statusz"};
  return kPaths;
}

std::optional<serving::Response> zpageResponse(std::string_view path,
                                               const serving::Request& request,
                                               const ZPages& pages) {
  if (path == "/configz") return serving::configzResponse("componentconfig", pages.configz);
  if (path == "/metrics/resources") {
    return serving::Response{
        200, "text/plain; version=0.0.4; charset=utf-8",
        metrics::exposePodResources(pages.pods ? pages.pods() : std::vector<api::PodPtr>{})};
  }
  if (path == "/statusz") {
    if (!serving::acceptsPlainText(request.accept)) return serving::notAcceptable();
    serving::StatuszInfo info;
    info.started = pages.started;
    info.now = std::chrono::system_clock::now();
#if defined(__clang__)
    info.compiler = "clang " __clang_version__;
#else
    info.compiler = "g++ " __VERSION__;
#endif
    info.binaryVersion = std::string("v") + BERTH_VERSION;
    info.paths = {"/configz",           "/healthz", "/livez",  "/metrics",
                  "/metrics/resources", "/readyz",  "/statusz"};
    return serving::statuszResponse("berth", info, serving::zpageDelimiter());
  }
  return std::nullopt;
}

}  // namespace berth::cmd
