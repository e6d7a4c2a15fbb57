#pragma once
// The "informer" logger (one named spdlog logger per concept), sharing the default logger's sinks.

#include <memory>

#include <spdlog/logger.h>

namespace berth::informer {

const std::shared_ptr<spdlog::logger>& logger();

}  // namespace berth::informer
