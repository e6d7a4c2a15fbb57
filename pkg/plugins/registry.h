#pragma once
// The in-tree plugins, by name, with the args decoders of those that take args. Adding a plugin is
// one folder under pkg/plugins (its plugin, and its args type and decoder if it takes any) and one
// line here.

#include "pkg/framework/runtime/framework.h"

namespace berth::plugins {

framework::runtime::Registry makeInTreeRegistry();

}  // namespace berth::plugins
