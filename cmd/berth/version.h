#pragma once
// berth's build identity, as k8s.io/component-base/version.Info reports kube-scheduler's: the
// version, the git commit and tree state, the build date (set by CMake at configure time), the
// compiler and the platform.

#include <nlohmann/json.hpp>
#include <string>

namespace berth::cmd {

struct VersionInfo {
  std::string major;
  std::string minor;
  std::string gitVersion;    // "v0.1.0"
  std::string gitCommit;     // the full hash, or "unknown" without git
  std::string gitTreeState;  // "clean", "dirty" or "unknown"
  std::string buildDate;     // RFC 3339, UTC
  std::string compiler;      // "g++ 12.2.0", "clang 14.0.6"
  std::string platform;      // "linux/amd64"
};

const VersionInfo& versionInfo();

// What --version prints: "berth v0.1.0".
std::string versionLine();
// version.Info's JSON keys (gitVersion, gitCommit, ...), for `berth version -o json` and
// --version=raw.
nlohmann::ordered_json versionJson(const VersionInfo& info);
// The same keys as YAML, for `berth version -o yaml`.
std::string versionYaml(const VersionInfo& info);

}  // namespace berth::cmd
