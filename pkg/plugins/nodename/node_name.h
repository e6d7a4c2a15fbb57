#pragma once
// NodeName: a pod that names a node in spec.nodeName fits only that node.

#include "pkg/framework/runtime/framework.h"

namespace berth::plugins::nodename {

inline constexpr std::string_view kErrReason = "node(s) didn't match the requested node name";

util::Result<framework::PluginPtr> newNodeName(const framework::Handle&);

}  // namespace berth::plugins::nodename
