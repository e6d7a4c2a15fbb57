#pragma once
// The serving port's pages beyond health and /metrics, behind the same authorization:
// /configz (the effective KubeSchedulerConfiguration, kubescheduler.config.k8s.io/v1 after
// defaulting, under "componentconfig" as kube-scheduler registers it), /flagz (every flag of
// `berth run` with its parsed value, as component-base's flagz reads the flag sets), /statusz and
// /metrics/resources (the pods' requests and limits, from the pod informer at scrape time).

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/config/config.h"
#include "pkg/serving/server.h"

namespace berth::cmd {

// `cfg` as the v1 document /configz shows: every field berth implements with its value, the
// profiles' plugin sets merged with the defaults, pluginConfig args as given.
std::string configzJson(const config::Configuration& cfg);

struct ZPages {
  std::string configz;                       // configzJson of the running configuration
  std::map<std::string, std::string> flags;  // FlagSet::values() of the command line
  std::chrono::system_clock::time_point started = std::chrono::system_clock::now();
  // Every pod the scheduler watches, at the time of the call.
  std::function<std::vector<api::PodPtr>()> pods;
};

// The paths ZPages answers, for logs and /statusz.
const std::vector<std::string>& zpagePaths();

// The answer for `path` (without query) when it is one of zpagePaths(), else nullopt. The caller
// has authorized the request.
std::optional<serving::Response> zpageResponse(std::string_view path,
                                               const serving::Request& request,
                                               const ZPages& pages);

}  // namespace berth::cmd
