#pragma once
// AssumeCache: VolumeBinding's overlay over the informers' PersistentVolumes and
// PersistentVolumeClaims (upstream's assume_cache.go). Reserve assumes the objects it is about to
// write (a PV's claimRef, a PVC's selected-node annotation) so that the next cycles' PreFilter and
// Filter see them before the API server has; Unreserve restores the informer's object. An assumed
// object is shadowed once the informer holds a newer resourceVersion than the one it was assumed
// from (the write, or anyone's, has arrived), and an object the informer no longer has is gone.
// Every method may be called from several threads at once.

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/framework/cluster_objects.h"

namespace berth::plugins::volumebinding {

// Whether resourceVersion `candidate` is newer than `base`: numerically when both are integers (the
// API server's etcd revisions), otherwise whenever they differ.
bool newerResourceVersion(std::string_view candidate, std::string_view base);

class AssumeCache {
 public:
  explicit AssumeCache(const framework::ClusterObjects* objects) : objects_(objects) {}

  // The object as the informer has it, or as assumed when the informer's is not newer. Null when
  // absent (or when there are no cluster objects).
  api::PersistentVolumePtr pv(std::string_view name) const;
  api::PersistentVolumeClaimPtr pvc(std::string_view ns, std::string_view name) const;
  // Every PV of the class (its annotation volume.beta.kubernetes.io/storage-class, else
  // spec.storageClassName), overlaid.
  std::vector<api::PersistentVolumePtr> listPVs(std::string_view className) const;

  // Assumes `obj`, whose resourceVersion is the one of the object it was derived from.
  void assume(api::PersistentVolumePtr obj);
  void assume(api::PersistentVolumeClaimPtr obj);
  // Drops the assumption, if any.
  void restorePV(std::string_view name);
  void restorePVC(std::string_view ns, std::string_view name);

 private:
  template <typename T>
  using ByKey =
      std::map<std::tuple<std::string, std::string>, std::shared_ptr<const T>, std::less<>>;
  // Drops assumptions the informer has overtaken or lost; mu_ held.
  void pruneLocked();

  const framework::ClusterObjects* objects_;  // not owned; may be null
  mutable std::mutex mu_;
  ByKey<api::PersistentVolume> pvs_;  // ("", name)
  ByKey<api::PersistentVolumeClaim> pvcs_;
};

}  // namespace berth::plugins::volumebinding
