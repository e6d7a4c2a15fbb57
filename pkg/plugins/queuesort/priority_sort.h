#pragma once
// PrioritySort: higher spec.priority first, then the pod queued earlier.

#include "pkg/framework/runtime/framework.h"

namespace berth::plugins::queuesort {

util::Result<framework::PluginPtr> newPrioritySort(const framework::Handle&);

}  // namespace berth::plugins::queuesort
