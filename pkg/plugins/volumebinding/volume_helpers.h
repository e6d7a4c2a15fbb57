#pragma once
// The storage helpers VolumeBinding decides with (upstream's
// k8s.io/component-helpers/storage/volume pv_helpers.go and helpers.go, and the ephemeral-volume
// helpers): a claim's and a volume's class, a PV's node affinity against node labels, the static
// matching of a claim to the smallest fitting available PV, and the claimRef a binding writes.

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/labels/label_set.h"
#include "pkg/labels/selector.h"

namespace berth::plugins::volumebinding {

inline constexpr std::string_view kAnnSelectedNode = "volume.kubernetes.io/selected-node";
inline constexpr std::string_view kAnnBindCompleted = "pv.kubernetes.io/bind-completed";
inline constexpr std::string_view kAnnBoundByController = "pv.kubernetes.io/bound-by-controller";
inline constexpr std::string_view kAnnBetaStorageClass = "volume.beta.kubernetes.io/storage-class";
// A StorageClass provisioner that provisions nothing (local volumes).
inline constexpr std::string_view kNotSupportedProvisioner = "kubernetes.io/no-provisioner";
inline constexpr std::string_view kLabelHostname = "kubernetes.io/hostname";

// The claim's class: the beta annotation, else spec.storageClassName, else "".
std::string claimClass(const api::PersistentVolumeClaim& claim);
// The volume's class: the beta annotation, else spec.storageClassName.
std::string persistentVolumeClass(const api::PersistentVolume& pv);
// Bound: spec.volumeName set and the PV controller's bind-completed annotation present.
bool claimFullyBound(const api::PersistentVolumeClaim& claim);
// The PV's claimRef names the claim (and its uid, when the claimRef has one).
bool volumeBoundToClaim(const api::PersistentVolume& pv, const api::PersistentVolumeClaim& claim);
// spec.nodeAffinity.required matches a node with these labels (no affinity matches every node).
// As upstream's CheckNodeAffinity, only the labels count: matchFields see no node name.
bool nodeAffinityMatches(const api::PersistentVolume& pv, const labels::LabelSet& nodeLabels);
// The first requirement of the PV's node affinity that does not parse (upstream's
// CheckNodeAffinity then fails on the term, which matches no node), as its field path
// "spec.nodeAffinity.required.nodeSelectorTerms[i].matchExpressions[j]"; nullopt when all parse.
std::optional<std::string> invalidNodeAffinityField(const api::PersistentVolume& pv);
// The hostnames a local PV's node affinity pins it to (upstream's
// GetLocalPersistentVolumeNodeNames: per term the intersection of its hostname In values, the union
// over terms); empty when it pins none.
std::set<std::string> localVolumeNodeNames(const api::PersistentVolume& pv);
// A StorageClass's allowedTopologies against node labels; none allows every node.
bool topologyAllows(const std::vector<api::TopologySelectorTerm>& terms,
                    const labels::LabelSet& nodeLabels);
// The storage the claim requests (zero when it names none).
resource::Quantity requestedStorage(const api::PersistentVolumeClaim& claim);

// Upstream's FindMatchingVolume on the scheduler's path (delayed binding, a node given): a PV
// pre-bound to the claim if its node affinity allows the node, else the smallest Available PV of
// the claim's class with enough capacity, the claim's volume mode, access modes and volume
// attributes class, labels its selector selects and node affinity the node satisfies, that is not
// in `excluded` nor being deleted nor claimed by another claim. Null when none. `selector` is the
// claim's compiled spec.selector (nullopt: none).
api::PersistentVolumePtr findMatchingVolume(const api::PersistentVolumeClaim& claim,
                                            const std::optional<labels::Selector>& selector,
                                            const std::vector<api::PersistentVolumePtr>& volumes,
                                            const labels::LabelSet& nodeLabels,
                                            const std::set<std::string>& excluded);

// The PV as binding it to the claim writes it (upstream's GetBindVolumeToClaim): claimRef set to
// the claim (with its uid and resourceVersion) and pv.kubernetes.io/bound-by-controller "yes" when
// the PV was not already pre-bound to the claim. Null when nothing changes.
api::PersistentVolumePtr bindVolumeToClaim(const api::PersistentVolume& pv,
                                           const api::PersistentVolumeClaim& claim);

// The name of a generic ephemeral volume's claim: "<pod>-<volume>".
std::string ephemeralClaimName(const api::Pod& pod, const api::Volume& volume);
// The claim is controlled by the pod (ownerReference with controller true and the pod's uid).
bool claimControlledByPod(const api::PersistentVolumeClaim& claim, const api::Pod& pod);

}  // namespace berth::plugins::volumebinding
