#include "pkg/plugins/registry.h"

#include "pkg/plugins/defaultbinder/default_binder.h"
#include "pkg/plugins/defaultpreemption/default_preemption.h"
#include "pkg/plugins/imagelocality/image_locality.h"
#include "pkg/plugins/interpodaffinity/inter_pod_affinity.h"
#include "pkg/plugins/names.h"
#include "pkg/plugins/nodeaffinity/node_affinity.h"
#include "pkg/plugins/nodename/node_name.h"
#include "pkg/plugins/nodeports/node_ports.h"
#include "pkg/plugins/noderesources/balanced_allocation.h"
#include "pkg/plugins/noderesources/fit.h"
#include "pkg/plugins/nodeunschedulable/node_unschedulable.h"
#include "pkg/plugins/nodevolumelimits/node_volume_limits.h"
#include "pkg/plugins/podtopologyspread/pod_topology_spread.h"
#include "pkg/plugins/queuesort/priority_sort.h"
#include "pkg/plugins/tainttoleration/taint_toleration.h"
#include "pkg/plugins/volumebinding/volume_binding.h"
#include "pkg/plugins/volumerestrictions/volume_restrictions.h"
#include "pkg/plugins/volumezone/volume_zone.h"

namespace berth::plugins {

framework::runtime::Registry makeInTreeRegistry() {
  framework::runtime::Registry r;
  // Names are distinct constants, so add() cannot fail here.
  auto add = [&r](std::string_view name, auto... factoryAndArgs) {
    r.add(std::string(name), factoryAndArgs...).ignore();
  };
  add(names::kPrioritySort, queuesort::newPrioritySort);
  add(names::kNodeUnschedulable, nodeunschedulable::newNodeUnschedulable);
  add(names::kNodeName, nodename::newNodeName);
  add(names::kTaintToleration, tainttoleration::newTaintToleration);
  add(names::kNodeAffinity, nodeaffinity::newNodeAffinity, nodeaffinity::decodeNodeAffinityArgs);
  add(names::kNodePorts, nodeports::newNodePorts);
  add(names::kNodeResourcesFit, noderesources::newFit, noderesources::decodeNodeResourcesFitArgs);
  add(names::kVolumeRestrictions, volumerestrictions::newVolumeRestrictions);
  add(names::kNodeVolumeLimits, nodevolumelimits::newNodeVolumeLimits);
  add(names::kVolumeBinding, volumebinding::newVolumeBinding,
      volumebinding::decodeVolumeBindingArgs);
  add(names::kVolumeZone, volumezone::newVolumeZone);
  add(names::kPodTopologySpread, podtopologyspread::newPodTopologySpread,
      podtopologyspread::decodePodTopologySpreadArgs);
  add(names::kInterPodAffinity, interpodaffinity::newInterPodAffinity,
      interpodaffinity::decodeInterPodAffinityArgs);
  add(names::kDefaultPreemption, defaultpreemption::newDefaultPreemption,
      defaultpreemption::decodeDefaultPreemptionArgs);
  add(names::kNodeResourcesBalancedAllocation, noderesources::newBalancedAllocation,
      noderesources::decodeNodeResourcesBalancedAllocationArgs);
  add(names::kImageLocality, imagelocality::newImageLocality);
  add(names::kDefaultBinder, defaultbinder::newDefaultBinder);
  return r;
}

}  // namespace berth::plugins
