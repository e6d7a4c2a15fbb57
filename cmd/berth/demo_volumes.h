#pragma once
// `berth demo`'s volume scenario: a StatefulSet-like pod whose WaitForFirstConsumer claim berth
// annotates with the node it chose, the demo playing the provisioner (a PV in that node's zone,
// then the claim bound), and a pod whose claim is bound to a zonal PV landing in that PV's zone.

#include <functional>
#include <stop_token>
#include <string>

#include "pkg/apiserver/store.h"

namespace berth::cmd {

// The scenario's StorageClass, claims and the zonal volume, created before the daemon starts (as a
// StatefulSet's claims exist before its pods, and so that berth's informers list them); false
// when one could not be created (said on stdout).
bool createVolumes(apiserver::Store& store);

// Creates the scenario's pods for `schedulerName`, plays the provisioner, prints what happens, and
// waits through `waitForBound` ("namespace/name", false on timeout) for each pod.
void showVolumes(apiserver::Store& store, const std::string& schedulerName,
                 const std::function<bool(const std::string& pod)>& waitForBound,
                 const std::stop_token& stop);

}  // namespace berth::cmd
