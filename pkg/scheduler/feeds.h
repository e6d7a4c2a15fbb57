#pragma once
// Feed: a watched collection of pods or nodes, as the scheduler consumes it; ObjectsFeed: the
// other kinds plugins read. The daemon feeds it
// from informers (cmd/berth/rest_adapters.h); tests add, update and delete objects by hand.

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "pkg/api/types.h"
#include "pkg/framework/cluster_objects.h"
#include "pkg/framework/events.h"

namespace berth::scheduler {

template <typename T>
struct FeedHandlers {
  using Ptr = std::shared_ptr<const T>;
  std::function<void(const Ptr&)> onAdd;
  std::function<void(const Ptr& oldObj, const Ptr& newObj)> onUpdate;
  std::function<void(const Ptr&)> onDelete;
};

template <typename T>
class Feed {
 public:
  using Ptr = std::shared_ptr<const T>;
  virtual ~Feed() = default;

  // Handlers are added before start(); they run on the feed's own thread, one change at a time.
  virtual void addEventHandlers(FeedHandlers<T> handlers) = 0;
  virtual void start() = 0;
  virtual void stop() = 0;
  // True once the first full list was delivered to the handlers.
  virtual bool hasSynced() const = 0;
  virtual bool waitForSync(std::chrono::steady_clock::duration timeout) const = 0;
  // The latest copy of the object with key "namespace/name" (or "name"), or null.
  virtual Ptr get(const std::string& key) const = 0;
};

// The watched namespaces, services, replica sets, stateful sets, replication controllers,
// PodDisruptionBudgets and storage kinds, which plugins read through framework::Handle::objects.
class ObjectsFeed {
 public:
  using NamespaceUpdate =
      std::function<void(const api::NamespacePtr& oldNs, const api::NamespacePtr& newNs)>;
  virtual ~ObjectsFeed() = default;

  // The objects as last seen; the feed keeps them current once started.
  virtual const framework::ClusterObjects& objects() const = 0;
  // Set before start(): called on the feed's thread after a namespace changed in objects().
  virtual void onNamespaceUpdate(NamespaceUpdate handler) = 0;
  // Set before start(): called on the feed's thread after a PersistentVolumeClaim,
  // PersistentVolume, StorageClass, CSINode, CSIDriver or CSIStorageCapacity was added or changed
  // in objects(), with its ClusterEvent (framework::events::kPersistentVolumeClaimAdd...) and, for
  // a claim, the claim before (none on an add) and after.
  using StorageEvent = std::function<void(const framework::ClusterEvent& event,
                                          const framework::EventObjects& objects)>;
  virtual void onStorageEvent(StorageEvent handler) = 0;
  virtual void start() = 0;
  virtual void stop() = 0;
  // True once every kind's first full list is in objects().
  virtual bool hasSynced() const = 0;
  virtual bool waitForSync(std::chrono::steady_clock::duration timeout) const = 0;
};

// The scheduler's inputs: every non-terminal pod and every node, and the other objects plugins
// read (null: there are none).
struct Feeds {
  std::unique_ptr<Feed<api::Pod>> pods;
  std::unique_ptr<Feed<api::Node>> nodes;
  std::unique_ptr<ObjectsFeed> objects{};
};

}  // namespace berth::scheduler
