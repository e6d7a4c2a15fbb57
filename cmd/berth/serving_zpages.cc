#include "cmd/berth/serving_zpages.h"

#include "pkg/metrics/pod_resources.h"
#include "pkg/serving/zpages.h"

namespace berth::cmd {
std::string configzJson(const config::Configuration& cfg) {
  return config::encodeConfiguration(cfg).dump();
}

const std::vector<std::string>& zpagePaths() {
  static const std::vector<std::string> kPaths{"/configz", "/flagz", "/metrics/resources",
                                               "/statusz"};
  return kPaths;
}

std::optional<serving::Response> zpageResponse(std::string_view path,
                                               const serving::Request& request,
                                               const ZPages& pages) {
  if (path == "/configz") return serving::configzResponse("componentconfig", pages.configz);
  if (path == "/flagz") {
    if (!serving::acceptsPlainText(request.accept)) return serving::notAcceptable();
    return serving::flagzResponse("berth", pages.flags, serving::zpageDelimiter());
  }
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
    info.paths = {"/configz",           "/flagz",  "/healthz", "/livez", "/metrics",
                  "/metrics/resources", "/readyz", "/statusz"};
    return serving::statuszResponse("berth", info, serving::zpageDelimiter());
  }
  return std::nullopt;
}

}  // namespace berth::cmd
