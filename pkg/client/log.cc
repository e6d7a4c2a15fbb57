#include "pkg/client/log.h"

#include <spdlog/spdlog.h>

namespace berth::client {

const std::shared_ptr<spdlog::logger>& logger() {
  static const std::shared_ptr<spdlog::logger> kLogger = [] {
    if (auto existing = spdlog::get("client")) {
      return existing;
    }
    auto created = spdlog::default_logger()->clone("client");
    spdlog::register_logger(created);
    return created;
  }();
  return kLogger;
}

}  // namespace berth::client
