#pragma once
// The "client" logger (one named spdlog logger per concept), sharing the default logger's sinks.

#include <memory>

#include <spdlog/logger.h>

namespace berth::client {

const std::shared_ptr<spdlog::logger>& logger();

}  // namespace berth::client
