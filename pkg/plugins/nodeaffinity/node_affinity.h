#pragma once
// NodeAffinity: spec.nodeSelector and required node affinity filter nodes (plus the profile's
// addedAffinity, enforced on every pod); preferred terms add their weights to a node's score.

#include "pkg/framework/runtime/framework.h"
#include "pkg/plugins/nodeaffinity/args.h"

namespace berth::plugins::nodeaffinity {

inline constexpr std::string_view kErrReasonPod =
    "node(s) didn't match Pod's node affinity/selector";
inline constexpr std::string_view kErrReasonEnforced =
    "node(s) didn't match scheduler-enforced node affinity";
inline constexpr std::string_view kErrReasonConflict = "pod affinity terms conflict";

// `args` as decodeNodeAffinityArgs leaves them.
util::Result<framework::PluginPtr> newNodeAffinity(const NodeAffinityArgs& args,
                                                   const framework::Handle&);

}  // namespace berth::plugins::nodeaffinity
