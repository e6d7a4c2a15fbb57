#pragma once
// VolumeRestrictions: in-tree disks that two pods of one node may not share (a GCE PD or an iSCSI
// target unless both mount it read-only, an AWS EBS volume always, an RBD image on a shared
// monitor and pool unless both are read-only), and ReadWriteOncePod claims, which one pod of the
// whole cluster may use at a time.

#include <string_view>

#include "pkg/framework/runtime/framework.h"

namespace berth::plugins::volumerestrictions {

inline constexpr std::string_view kErrReasonDiskConflict = "node(s) had no available disk";
inline constexpr std::string_view kErrReasonReadWriteOncePodConflict =
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode";

util::Result<framework::PluginPtr> newVolumeRestrictions(const framework::Handle&);

}  // namespace berth::plugins::volumerestrictions
