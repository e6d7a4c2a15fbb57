#pragma once
// DefaultBinder: binds through the Handle's PodBinder (a Binding POSTed to the API server).

#include "pkg/framework/runtime/framework.h"

namespace berth::plugins::defaultbinder {

util::Result<framework::PluginPtr> newDefaultBinder(const framework::Handle& handle);

}  // namespace berth::plugins::defaultbinder
