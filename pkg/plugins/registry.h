#pragma once
// The in-tree plugins, by name. Adding a plugin is one folder under pkg/plugins and one line here.

#include "pkg/framework/runtime/framework.h"

namespace berth::plugins {

framework::runtime::Registry makeInTreeRegistry();

}  // namespace berth::plugins
