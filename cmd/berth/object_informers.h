#pragma once
// The daemon's ObjectsFeed: informers on every namespace, service, replica set, stateful set,
// replication controller, (for preemption) PodDisruptionBudget and (for the volume plugins)
// PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode, CSIDriver and
// CSIStorageCapacity, kept in a framework::ClusterObjectStore (kube-scheduler's informer factory
// listers for the same kinds); the storage kinds' adds and changes are reported as ClusterEvents.

#include <memory>

#include "pkg/client/rest.h"
#include "pkg/scheduler/feeds.h"

namespace berth::cmd {

std::unique_ptr<scheduler::ObjectsFeed> objectInformers(client::RestClient& client);

}  // namespace berth::cmd
