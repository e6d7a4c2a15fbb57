// KubeSchedulerConfiguration parsing: the file named by --config (YAML or JSON), through
// decoding, defaulting and validation.
// Invariant: a configuration that parses has at least one profile, each with a scheduler name.

#include "fuzz/fuzz_check.h"
#include "pkg/config/config.h"
#include "pkg/plugins/registry.h"

namespace config = berth::config;
using berth::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const berth::framework::runtime::Registry kRegistry = berth::plugins::makeInTreeRegistry();
  const auto parsed = config::parseConfiguration(berth::fuzz::asText(data, size),
                                                 "scheduler-config.yaml", kRegistry);
  if (!parsed.ok()) {
    return 0;
  }
  check(!parsed->profiles.empty(), "a valid configuration has a profile");
  for (const config::Profile& profile : parsed->profiles) {
    check(!profile.schedulerName.empty(), "every profile has a scheduler name", profile.field);
  }
  return 0;
}
