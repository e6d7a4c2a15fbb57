#pragma once
// PodTopologySpreadArgs: upstream's v1 type, its defaults and its validation
// (validation_pluginargs.go), decoded from a profile's pluginConfig.

#include <string>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/config/decoder.h"

namespace berth::plugins::podtopologyspread {

inline constexpr std::string_view kSystemDefaulting = "System";
inline constexpr std::string_view kListDefaulting = "List";

struct PodTopologySpreadArgs {
  // For pods without constraints of their own; only with defaultingType List. Their selector is
  // deduced per pod.
  std::vector<api::TopologySpreadConstraint> defaultConstraints;
  std::string defaultingType = std::string(kSystemDefaulting);
};

// Decode `j` (pluginConfig[i].args at `path`) into `out`, then validate.
void decodePodTopologySpreadArgs(config::Decoder& d, const config::Json& j, const std::string& path,
                                 PodTopologySpreadArgs& out);

}  // namespace berth::plugins::podtopologyspread
