#pragma once
// The daemon's ObjectsFeed: informers on every namespace, service, replica set, stateful set,
// replication controller and (for preemption) PodDisruptionBudget, kept in a
// framework::ClusterObjectStore (kube-scheduler's informer factory listers for the same kinds).

#include <memory>

#include "pkg/client/rest.h"
#include "pkg/scheduler/feeds.h"

namespace berth::cmd {

std::unique_ptr<scheduler::ObjectsFeed> objectInformers(client::RestClient& client);

}  // namespace berth::cmd
