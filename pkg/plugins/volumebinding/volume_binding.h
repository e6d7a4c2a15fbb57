#pragma once
// VolumeBinding: a pod's PersistentVolumeClaims (and generic ephemeral volumes' claims) must be
// bindable on the node (upstream's volumebinding plugin). PreFilter sorts the claims into bound,
// delayed (WaitForFirstConsumer, unbound) and immediate-unbound ones, rejects the pod while an
// immediate claim is unbound or a claim is missing, lost or being deleted, and narrows the nodes
// to those local bound PVs pin. Filter checks the bound PVs' node affinity, then finds each delayed
// claim the smallest fitting available PV, or provisioning through its class on that node
// (allowedTopologies, CSIStorageCapacity). Reserve assumes the PV claimRefs and PVC selected-node
// annotations in an overlay the next cycles read; Unreserve reverts them. PreBind writes them
// (Handle::volumes: PVs first, then PVCs) and waits, polling every second up to
// bindTimeoutSeconds, until the PV controller has bound every claim.

#include <string_view>

#include "pkg/framework/runtime/framework.h"
#include "pkg/plugins/volumebinding/args.h"

namespace berth::plugins::volumebinding {

// Filter's reasons, appended in this order.
inline constexpr std::string_view kErrReasonNodeConflict =
    "node(s) didn't match PersistentVolume's node affinity";
inline constexpr std::string_view kErrReasonBindConflict =
    "node(s) didn't find available persistent volumes to bind";
inline constexpr std::string_view kErrReasonNotEnoughSpace =
    "node(s) did not have enough free storage";
inline constexpr std::string_view kErrReasonPVNotExist =
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";
// PreFilter's, while the PV controller has not bound an Immediate claim.
inline constexpr std::string_view kErrReasonUnboundImmediate =
    "pod has unbound immediate PersistentVolumeClaims";

util::Result<framework::PluginPtr> newVolumeBinding(const VolumeBindingArgs& args,
                                                    const framework::Handle& handle);

}  // namespace berth::plugins::volumebinding
