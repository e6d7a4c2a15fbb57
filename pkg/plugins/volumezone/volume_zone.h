#pragma once
// VolumeZone: a pod whose claims are bound to PersistentVolumes labelled with a zone or region
// fits only nodes in one of those zones and regions (a node without any zone or region label, as
// in a single-zone cluster, fits). Claims waiting for their first consumer are not bound yet and
// restrict nothing here; VolumeBinding places them.

#include <string_view>

#include "pkg/framework/runtime/framework.h"

namespace berth::plugins::volumezone {

inline constexpr std::string_view kErrReasonConflict = "node(s) had no available volume zone";

util::Result<framework::PluginPtr> newVolumeZone(const framework::Handle&);

}  // namespace berth::plugins::volumezone
