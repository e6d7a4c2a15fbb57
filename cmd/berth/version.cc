#include "cmd/berth/version.h"

#include <string_view>

// CMake defines these for this file only, so that a new commit recompiles nothing else.
#ifndef BERTH_GIT_COMMIT
#define BERTH_GIT_COMMIT "unknown"
#endif
#ifndef BERTH_GIT_TREE_STATE
#define BERTH_GIT_TREE_STATE "unknown"
#endif
#ifndef BERTH_BUILD_DATE
#define BERTH_BUILD_DATE "1970-01-01T00:00:00Z"
#endif

namespace berth::cmd {
namespace {

std::string compilerName() {
#if defined(__clang__)
  return "clang " +
         std::string(__clang_version__).substr(0, std::string_view(__clang_version__).find(' '));
#elif defined(__GNUC__)
  return "g++ " __VERSION__;
#else
  return "unknown";
#endif
}

std::string platformName() {
#if defined(__linux__)
  std::string os = "linux";
#elif defined(__APPLE__)
  std::string os = "darwin";
#else
  std::string os = "unknown";
#endif
#if defined(__x86_64__)
  return os + "/amd64";
#elif defined(__aarch64__)
  return os + "/arm64";
#else
  return os + "/unknown";
#endif
}

VersionInfo build() {
  VersionInfo v;
  const std::string version = BERTH_VERSION;  // "0.1.0"
  const size_t dot = version.find('.');
  v.major = version.substr(0, dot);
  v.minor =
      dot == std::string::npos ? "" : version.substr(dot + 1, version.find('.', dot + 1) - dot - 1);
  v.gitVersion = "v" + version;
  v.gitCommit = BERTH_GIT_COMMIT;
  v.gitTreeState = BERTH_GIT_TREE_STATE;
  v.buildDate = BERTH_BUILD_DATE;
  v.compiler = compilerName();
  v.platform = platformName();
  return v;
}

}  // namespace

const VersionInfo& versionInfo() {
  static const VersionInfo kInfo = build();
  return kInfo;
}

std::string versionLine() { return "berth " + versionInfo().gitVersion; }

nlohmann::ordered_json versionJson(const VersionInfo& info) {
  // Ordered as version.Info's fields.
  return nlohmann::ordered_json{{"major", info.major},
                                {"minor", info.minor},
                                {"gitVersion", info.gitVersion},
                                {"gitCommit", info.gitCommit},
                                {"gitTreeState", info.gitTreeState},
                                {"buildDate", info.buildDate},
                                {"compiler", info.compiler},
                                {"platform", info.platform}};
}

std::string versionYaml(const VersionInfo& info) {
  std::string out;
  // JSON strings are YAML scalars, so every value round-trips whatever characters it has.
  for (const auto& [key, value] : {std::pair{"major", &info.major},
                                   {"minor", &info.minor},
                                   {"gitVersion", &info.gitVersion},
                                   {"gitCommit", &info.gitCommit},
                                   {"gitTreeState", &info.gitTreeState},
                                   {"buildDate", &info.buildDate},
                                   {"compiler", &info.compiler},
                                   {"platform", &info.platform}}) {
    out += std::string(key) + ": " + nlohmann::json(*value).dump() + "\n";
  }
  return out;
}

}  // namespace berth::cmd
