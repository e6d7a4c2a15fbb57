#pragma once
// NodeVolumeLimits: the CSI volumes a node can attach are limited per driver, by its CSINode's
// spec.drivers[].allocatable.count (or a legacy attachable-volumes-* node allocatable). A pod
// fits only if the distinct volumes its claims add, next to those the node's pods already use,
// stay within every limit. In-tree gcePersistentDisk and awsElasticBlockStore volumes count
// against their CSI drivers' limits where the CSINode says the plugin is migrated, under the
// volume handles upstream's translation gives them; PVs of the other migratable in-tree kinds
// (azureDisk, cinder, portworxVolume) count once per PV.

#include <string_view>

#include "pkg/framework/runtime/framework.h"

namespace berth::plugins::nodevolumelimits {

inline constexpr std::string_view kErrReasonMaxVolumeCountExceeded =
    "node(s) exceed max volume count";

util::Result<framework::PluginPtr> newNodeVolumeLimits(const framework::Handle&);

}  // namespace berth::plugins::nodevolumelimits
