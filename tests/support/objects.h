#pragma once
// API objects as the embedded API server stores them, for the tests that drive berth over HTTP.

#include <nlohmann/json.hpp>
#include <string>

namespace berth::test {

// A Node labelled with its hostname, with `cpu` allocatable (and capacity), 32Gi and 110 pods.
nlohmann::json nodeJson(const std::string& name, const std::string& cpu = "4",
                        nlohmann::json labels = nlohmann::json::object());

// A pending pod in namespace default for `scheduler`, one container requesting `cpu`.
nlohmann::json podJson(const std::string& name, const std::string& cpu = "100m",
                       const std::string& scheduler = "berth");

// The whole file, or "" when it cannot be read.
std::string readFile(const std::string& path);

}  // namespace berth::test
