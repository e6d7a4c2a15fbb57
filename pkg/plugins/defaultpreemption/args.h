#pragma once
// DefaultPreemptionArgs: upstream's v1 type, its defaults (defaults.go) and validation
// (validation_pluginargs.go), decoded from a profile's pluginConfig. A default-constructed value
// holds the defaults.

#include <cstdint>
#include <string>

#include "pkg/config/decoder.h"

namespace berth::plugins::defaultpreemption {

struct DefaultPreemptionArgs {
  // The dry runs stop once they found at least this share of the nodes as candidates (with at
  // least one that violates no PodDisruptionBudget), or minCandidateNodesAbsolute if that is more.
  int32_t minCandidateNodesPercentage = 10;
  int32_t minCandidateNodesAbsolute = 100;
};

// Decode `j` (pluginConfig[i].args at `path`) over the defaults in `out`, then validate.
void decodeDefaultPreemptionArgs(config::Decoder& d, const config::Json& j, const std::string& path,
                                 DefaultPreemptionArgs& out);

}  // namespace berth::plugins::defaultpreemption
