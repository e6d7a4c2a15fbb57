// Upstream's eventhandlers.go: feed notifications routed to the cache (assigned pods, nodes) or
// the queue (pending pods of berth's profiles), and the cluster events that may move pods out of
// the unschedulable pool. Runs on the feeds' threads.

#include "pkg/log/log.h"
#include "pkg/scheduler/scheduler.h"

namespace berth::scheduler {

bool Scheduler::responsibleFor(const api::Pod& pod) const {
  return profiles_.contains(pod.spec.schedulerName);
}

Scheduler::Profile* Scheduler::profileFor(const api::Pod& pod) {
  auto it = profiles_.find(pod.spec.schedulerName);
  return it == profiles_.end() ? nullptr : &it->second;
}

void Scheduler::addEventHandlers() {
  using PodPtr = std::shared_ptr<const api::Pod>;
  using NodePtr = std::shared_ptr<const api::Node>;
  auto logIfFailed = [](const util::Result<void>& r, std::string_view what, const api::Pod& pod) {
    if (!r.ok()) {
      log::error(r.error().message, what, {{"pod", log::kobj(pod)}});
    }
  };

  FeedHandlers<api::Pod> podHandlers;
  podHandlers.onAdd = [this, logIfFailed](const PodPtr& pod) {
    if (api::isAssigned(*pod)) {
      logIfFailed(cache_.addPod(pod), "Scheduler cache AddPod failed", *pod);
      queue_->movePodsOnEvent(framework::events::kAssignedPodAdd, {.newPod = pod.get()});
    } else if (responsibleFor(*pod)) {
      queue_->add(pod);
    }
  };
  podHandlers.onUpdate = [this, logIfFailed](const PodPtr& oldPod, const PodPtr& newPod) {
    if (api::isAssigned(*newPod)) {
      // Bound now (by berth or anyone): no longer pending; the cache confirms or counts it.
      const bool added = !api::isAssigned(*oldPod);
      if (added) queue_->remove(*oldPod);
      logIfFailed(cache_.updatePod(newPod), "Scheduler cache UpdatePod failed", *newPod);
      if (added) {
        queue_->movePodsOnEvent(framework::events::kAssignedPodAdd, {.newPod = newPod.get()});
      } else if (oldPod->metadata.labels != newPod->metadata.labels) {
        queue_->movePodsOnEvent(framework::events::kAssignedPodUpdate,
                                {.oldPod = oldPod.get(), .newPod = newPod.get()});
      }
    } else if (responsibleFor(*newPod)) {
      queue_->update(newPod);
    } else if (responsibleFor(*oldPod)) {
      queue_->remove(*oldPod);  // spec.schedulerName cannot change, but be safe
    }
  };
  podHandlers.onDelete = [this, logIfFailed](const PodPtr& pod) {
    if (!api::isAssigned(*pod)) {
      queue_->remove(*pod);
      // A binding cycle waiting for the pod's volumes has nothing left to wait for.
      cancelVolumeWait(*pod);
      return;
    }
    // A pod leaving the informer because it finished: let the cache see how (kubelet rejections).
    if (api::isTerminal(*pod))
      logIfFailed(cache_.updatePod(pod), "Scheduler cache UpdatePod failed", *pod);
    logIfFailed(cache_.removePod(*pod), "Scheduler cache RemovePod failed", *pod);
    {
      std::lock_guard lock(preempting_mu_);
      evicted_.erase(pod->metadata.uid);
    }
    queue_->movePodsOnEvent(framework::events::kAssignedPodDelete, {.oldPod = pod.get()});
  };
  feeds_.pods->addEventHandlers(std::move(podHandlers));

  FeedHandlers<api::Node> nodeHandlers;
  nodeHandlers.onAdd = [this](const NodePtr& node) {
    cache_.addNode(node);
    queue_->movePodsOnEvent(framework::events::kNodeAdd, {.newNode = node.get()});
  };
  nodeHandlers.onUpdate = [this](const NodePtr& oldNode, const NodePtr& newNode) {
    cache_.updateNode(newNode);
    for (const framework::ClusterEvent& event : framework::nodeUpdateEvents(*oldNode, *newNode)) {
      queue_->movePodsOnEvent(event, {.oldNode = oldNode.get(), .newNode = newNode.get()});
    }
  };
  nodeHandlers.onDelete = [this](const NodePtr& node) {
    if (auto r = cache_.removeNode(*node); !r.ok()) {
      log::error(r.error().message, "Scheduler cache RemoveNode failed",
                 {{"node", node->metadata.name}});
    }
  };
  feeds_.nodes->addEventHandlers(std::move(nodeHandlers));

  if (feeds_.objects) {
    feeds_.objects->onNamespaceUpdate(
        [this](const api::NamespacePtr& oldNs, const api::NamespacePtr& newNs) {
          if (oldNs->metadata.labels != newNs->metadata.labels) {
            queue_->movePodsOnEvent(framework::events::kNamespaceUpdate);
          }
        });
    feeds_.objects->onStorageEvent(
        [this](const framework::ClusterEvent& event, const framework::EventObjects& objects) {
          queue_->movePodsOnEvent(event, objects);
        });
  }
}

}  // namespace berth::scheduler
