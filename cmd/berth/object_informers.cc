#include "cmd/berth/object_informers.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <type_traits>
#include <utility>

#include "pkg/api/decode.h"
#include "pkg/informer/informer.h"

namespace berth::cmd {
namespace {

using Clock = std::chrono::steady_clock;

// Starts, stops and waits on the informers of every kind alike.
class InformerGroup {
 public:
  template <typename T>
  informer::Informer<T>& add(std::unique_ptr<informer::Informer<T>> informer) {
    members_.push_back(std::make_unique<Member<T>>(std::move(informer)));
    return *static_cast<Member<T>&>(*members_.back()).informer;
  }
  void start() {
    for (auto& m : members_) m->start();
  }
  void stop() {
    for (auto& m : members_) m->stop();
  }
  bool hasSynced() const {
    return std::all_of(members_.begin(), members_.end(),
                       [](const auto& m) { return m->hasSynced(); });
  }
  bool waitForSync(Clock::duration timeout) const {
    const auto deadline = Clock::now() + timeout;
    return std::all_of(members_.begin(), members_.end(), [&](const auto& m) {
      return m->waitForSync(std::max(Clock::duration::zero(), deadline - Clock::now()));
    });
  }

 private:
  struct Erased {
    virtual ~Erased() = default;
    virtual void start() = 0;
    virtual void stop() = 0;
    virtual bool hasSynced() const = 0;
    virtual bool waitForSync(Clock::duration timeout) const = 0;
  };
  template <typename T>
  struct Member final : Erased {
    explicit Member(std::unique_ptr<informer::Informer<T>> i) : informer(std::move(i)) {}
    void start() override { informer->start(); }
    void stop() override { informer->stop(); }
    bool hasSynced() const override { return informer->hasSynced(); }
    bool waitForSync(Clock::duration timeout) const override {
      return informer->waitForSync(timeout);
    }
    std::unique_ptr<informer::Informer<T>> informer;
  };
  std::vector<std::unique_ptr<Erased>> members_;
};

class InformerObjectsFeed final : public scheduler::ObjectsFeed {
 public:
  explicit InformerObjectsFeed(client::RestClient& client) {
    auto& namespaces = watch<api::Namespace>(
        client, client::kNamespaces, api::decodeNamespace,
        [this](std::string_view, std::string_view name) { return store_.removeNamespace(name); });
    // After the store holds the new namespace, so that a pod the event requeues sees it.
    namespaces.addEventHandlers(
        {.onAdd = {},
         .onUpdate =
             [this](const api::NamespacePtr& oldNs, const api::NamespacePtr& newNs) {
               if (on_namespace_update_) on_namespace_update_(oldNs, newNs);
             },
         .onDelete = {}});
    watch<api::Service>(client, client::kServices, api::decodeService,
                        [this](std::string_view ns, std::string_view name) {
                          return store_.removeService(ns, name);
                        });
    watch<api::ReplicaSet>(client, client::kReplicaSets, api::decodeReplicaSet,
                           [this](std::string_view ns, std::string_view name) {
                             return store_.removeReplicaSet(ns, name);
                           });
    watch<api::StatefulSet>(client, client::kStatefulSets, api::decodeStatefulSet,
                            [this](std::string_view ns, std::string_view name) {
                              return store_.removeStatefulSet(ns, name);
                            });
    watch<api::ReplicationController>(client, client::kReplicationControllers,
                                      api::decodeReplicationController,
                                      [this](std::string_view ns, std::string_view name) {
                                        return store_.removeReplicationController(ns, name);
                                      });
    watch<api::PodDisruptionBudget>(client, client::kPodDisruptionBudgets,
                                    api::decodePodDisruptionBudget,
                                    [this](std::string_view ns, std::string_view name) {
                                      return store_.removePodDisruptionBudget(ns, name);
                                    });
    // The storage kinds the volume plugins read: each add or change is a ClusterEvent.
    watchStorage<api::PersistentVolumeClaim>(
        client, client::kPersistentVolumeClaims, api::decodePersistentVolumeClaim,
        [this](std::string_view ns, std::string_view name) {
          return store_.removePersistentVolumeClaim(ns, name);
        },
        framework::events::kPersistentVolumeClaimAdd,
        framework::events::kPersistentVolumeClaimUpdate);
    watchStorage<api::PersistentVolume>(
        client, client::kPersistentVolumes, api::decodePersistentVolume,
        [this](std::string_view, std::string_view name) {
          return store_.removePersistentVolume(name);
        },
        framework::events::kPersistentVolumeAdd, framework::events::kPersistentVolumeUpdate);
    watchStorage<api::StorageClass>(
        client, client::kStorageClasses, api::decodeStorageClass,
        [this](std::string_view, std::string_view name) { return store_.removeStorageClass(name); },
        framework::events::kStorageClassAdd, framework::events::kStorageClassUpdate);
    watchStorage<api::CSINode>(
        client, client::kCSINodes, api::decodeCSINode,
        [this](std::string_view, std::string_view name) { return store_.removeCSINode(name); },
        framework::events::kCSINodeAdd, framework::events::kCSINodeUpdate);
    watchStorage<api::CSIDriver>(
        client, client::kCSIDrivers, api::decodeCSIDriver,
        [this](std::string_view, std::string_view name) { return store_.removeCSIDriver(name); },
        framework::events::kCSIDriverAdd, framework::events::kCSIDriverUpdate);
    watchStorage<api::CSIStorageCapacity>(
        client, client::kCSIStorageCapacities, api::decodeCSIStorageCapacity,
        [this](std::string_view ns, std::string_view name) {
          return store_.removeCSIStorageCapacity(ns, name);
        },
        framework::events::kCSIStorageCapacityAdd, framework::events::kCSIStorageCapacityUpdate);
  }

  // scheduler::ObjectsFeed
  const framework::ClusterObjects& objects() const override { return store_; }
  void onNamespaceUpdate(NamespaceUpdate handler) override {
    on_namespace_update_ = std::move(handler);
  }
  void onStorageEvent(StorageEvent handler) override { on_storage_event_ = std::move(handler); }
  void start() override { informers_.start(); }
  void stop() override { informers_.stop(); }
  bool hasSynced() const override { return informers_.hasSynced(); }
  bool waitForSync(Clock::duration timeout) const override {
    return informers_.waitForSync(timeout);
  }

 private:
  // An informer on every object of `resource` that upserts into the store and removes from it.
  template <typename T, typename Decode, typename Remove>
  informer::Informer<T>& watch(client::RestClient& client, const client::Resource& resource,
                               Decode decode, Remove remove) {
    informer::ReflectorOptions options;
    options.name = std::string(resource.name);
    auto made = std::make_unique<informer::Informer<T>>(
        informer::makeListerWatcher(client, resource), decode, options);
    using Ptr = std::shared_ptr<const T>;
    made->addEventHandlers(
        {.onAdd = [this](const Ptr& obj) { store_.upsert(obj); },
         .onUpdate = [this](const Ptr&, const Ptr& obj) { store_.upsert(obj); },
         .onDelete =
             [remove](const Ptr& obj) { remove(obj->metadata.namespace_, obj->metadata.name); }});
    return informers_.add(std::move(made));
  }

  // watch(), and after the store holds the change, its add or update event (a claim's with the
  // claim before and after).
  template <typename T, typename Decode, typename Remove>
  void watchStorage(client::RestClient& client, const client::Resource& resource, Decode decode,
                    Remove remove, const framework::ClusterEvent& added,
                    const framework::ClusterEvent& updated) {
    using Ptr = std::shared_ptr<const T>;
    auto objects = [](const T* before, const T* after) {
      framework::EventObjects out;
      if constexpr (std::is_same_v<T, api::PersistentVolumeClaim>) {
        out.oldClaim = before;
        out.newClaim = after;
      }
      return out;
    };
    watch<T>(client, resource, decode, remove)
        .addEventHandlers({.onAdd =
                               [this, added, objects](const Ptr& obj) {
                                 if (on_storage_event_) {
                                   on_storage_event_(added, objects(nullptr, obj.get()));
                                 }
                               },
                           .onUpdate =
                               [this, updated, objects](const Ptr& before, const Ptr& after) {
                                 if (on_storage_event_) {
                                   on_storage_event_(updated, objects(before.get(), after.get()));
                                 }
                               },
                           .onDelete = {}});
  }

  framework::ClusterObjectStore store_;
  NamespaceUpdate on_namespace_update_;
  StorageEvent on_storage_event_;
  InformerGroup informers_;  // last: stopped (by its informers' destructors) before the rest goes
};

}  // namespace

std::unique_ptr<scheduler::ObjectsFeed> objectInformers(client::RestClient& client) {
  return std::make_unique<InformerObjectsFeed>(client);
}

}  // namespace berth::cmd
