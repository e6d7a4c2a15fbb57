#pragma once
// TaintToleration: NoSchedule and NoExecute taints a pod does not tolerate exclude the node; each
// untolerated PreferNoSchedule taint lowers the node's score.

#include "pkg/framework/runtime/framework.h"

namespace berth::plugins::tainttoleration {

util::Result<framework::PluginPtr> newTaintToleration(const framework::Handle&);

}  // namespace berth::plugins::tainttoleration
