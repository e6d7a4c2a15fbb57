#pragma once
// NodeUnschedulable: a cordoned node (spec.unschedulable) takes only pods that tolerate the
// node.kubernetes.io/unschedulable:NoSchedule taint.

#include "pkg/framework/runtime/framework.h"

namespace berth::plugins::nodeunschedulable {

inline constexpr std::string_view kErrReasonUnschedulable = "node(s) were unschedulable";
inline constexpr std::string_view kErrReasonUnknownCondition = "node(s) had unknown conditions";
inline constexpr std::string_view kTaintNodeUnschedulable = "node.kubernetes.io/unschedulable";

util::Result<framework::PluginPtr> newNodeUnschedulable(const framework::Handle&);

}  // namespace berth::plugins::nodeunschedulable
