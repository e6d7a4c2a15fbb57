#pragma once
// NodeAffinityArgs: upstream's v1 type and its validation (validation_pluginargs.go), decoded from
// a profile's pluginConfig.

#include <optional>
#include <string>

#include "pkg/api/types.h"
#include "pkg/config/decoder.h"

namespace berth::plugins::nodeaffinity {

struct NodeAffinityArgs {
  // Applied to every pod on top of its own node affinity.
  std::optional<api::NodeAffinity> addedAffinity;
};

// Decode `j` (pluginConfig[i].args at `path`) into `out`, then validate.
void decodeNodeAffinityArgs(config::Decoder& d, const config::Json& j, const std::string& path,
                            NodeAffinityArgs& out);

}  // namespace berth::plugins::nodeaffinity
