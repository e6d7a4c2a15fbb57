#include "pkg/informer/log.h"

#include <spdlog/spdlog.h>

namespace berth::informer {

const std::shared_ptr<spdlog::logger>& logger() {
  static const std::shared_ptr<spdlog::logger> kLogger = [] {
    if (auto existing = spdlog::get("informer")) {
      return existing;
    }
    auto created = spdlog::default_logger()->clone("informer");
    spdlog::register_logger(created);
    return created;
  }();
  return kLogger;
}

}  // namespace berth::informer
