#pragma once
// NodePorts: a pod asking for host ports fits only nodes where those ports are free.

#include "pkg/framework/runtime/framework.h"

namespace berth::plugins::nodeports {

inline constexpr std::string_view kErrReason =
    "node(s) didn't have free ports for the requested pod ports";

util::Result<framework::PluginPtr> newNodePorts(const framework::Handle&);

}  // namespace berth::plugins::nodeports
