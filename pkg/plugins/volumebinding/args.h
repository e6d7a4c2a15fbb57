#pragma once
// VolumeBindingArgs: upstream's v1 type, its default (defaults.go) and validation
// (validation_pluginargs.go), decoded from a profile's pluginConfig. A default-constructed value
// holds the defaults. berth scores no volumes (upstream scores only with the
// StorageCapacityScoring gate), so `shape` is not read.

#include <cstdint>
#include <string>

#include "pkg/config/decoder.h"

namespace berth::plugins::volumebinding {

struct VolumeBindingArgs {
  // How long PreBind waits for the claims it wrote to be bound; 0 fails at once if they are not.
  int64_t bindTimeoutSeconds = 600;
};

// Decode `j` (pluginConfig[i].args at `path`) over the defaults in `out`, then validate.
void decodeVolumeBindingArgs(config::Decoder& d, const config::Json& j, const std::string& path,
                             VolumeBindingArgs& out);

}  // namespace berth::plugins::volumebinding
