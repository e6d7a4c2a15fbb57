#pragma once
// InterPodAffinityArgs: upstream's v1 type, its defaults (defaults.go) and validation
// (validation_pluginargs.go), decoded from a profile's pluginConfig. A default-constructed value
// holds the defaults.

#include <cstdint>
#include <string>

#include "pkg/config/decoder.h"

namespace berth::plugins::interpodaffinity {

inline constexpr int32_t kMaxHardPodAffinityWeight = 100;

struct InterPodAffinityArgs {
  // Score added to a node for each existing pod whose required affinity the incoming pod matches.
  int32_t hardPodAffinityWeight = 1;
  // Score only the incoming pod's preferred terms, not those of the existing pods.
  bool ignorePreferredTermsOfExistingPods = false;
};

// Decode `j` (pluginConfig[i].args at `path`) over the defaults in `out`, then validate.
void decodeInterPodAffinityArgs(config::Decoder& d, const config::Json& j, const std::string& path,
                                InterPodAffinityArgs& out);

}  // namespace berth::plugins::interpodaffinity
