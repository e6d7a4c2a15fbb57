#include "pkg/plugins/volumebinding/volume_helpers.h"

#include <algorithm>
#include <string>

#include "pkg/labels/node_affinity.h"
#include "pkg/labels/requirement.h"

namespace berth::plugins::volumebinding {
namespace {

std::string_view volumeModeOrDefault(const std::string& mode) {
  return mode.empty() ? std::string_view("Filesystem") : std::string_view(mode);
}

bool accessModesContained(const std::vector<std::string>& wanted,
                          const std::vector<std::string>& offered) {
  return std::all_of(wanted.begin(), wanted.end(), [&](const std::string& m) {
    return std::find(offered.begin(), offered.end(), m) != offered.end();
  });
}

}  // namespace

std::string claimClass(const api::PersistentVolumeClaim& claim) {
  if (auto it = claim.metadata.annotations.find(std::string(kAnnBetaStorageClass));
      it != claim.metadata.annotations.end()) {
    return it->second;
  }
  return claim.spec.storageClassName.value_or("");
}

std::string persistentVolumeClass(const api::PersistentVolume& pv) {
  if (auto it = pv.metadata.annotations.find(std::string(kAnnBetaStorageClass));
      it != pv.metadata.annotations.end()) {
    return it->second;
  }
  return pv.spec.storageClassName;
}

bool claimFullyBound(const api::PersistentVolumeClaim& claim) {
  return !claim.spec.volumeName.empty() &&
         claim.metadata.annotations.contains(std::string(kAnnBindCompleted));
}

bool volumeBoundToClaim(const api::PersistentVolume& pv, const api::PersistentVolumeClaim& claim) {
  if (!pv.spec.claimRef) return false;
  const api::ObjectReference& ref = *pv.spec.claimRef;
  return ref.name == claim.metadata.name && ref.namespace_ == claim.metadata.namespace_ &&
         (ref.uid.empty() || ref.uid == claim.metadata.uid);
}

bool nodeAffinityMatches(const api::PersistentVolume& pv, const labels::LabelSet& nodeLabels) {
  if (!pv.spec.nodeAffinity) return true;
  for (const api::NodeSelectorTerm& term : pv.spec.nodeAffinity->nodeSelectorTerms) {
    if (labels::CompiledTerm(term).matches(nodeLabels, "")) return true;
  }
  return false;
}

std::optional<std::string> invalidNodeAffinityField(const api::PersistentVolume& pv) {
  if (!pv.spec.nodeAffinity) return std::nullopt;
  const auto& terms = pv.spec.nodeAffinity->nodeSelectorTerms;
  for (size_t i = 0; i < terms.size(); ++i) {
    for (size_t j = 0; j < terms[i].matchExpressions.size(); ++j) {
      if (labels::firstRequirementProblem(terms[i].matchExpressions[j])) {
        return "spec.nodeAffinity.required.nodeSelectorTerms[" + std::to_string(i) +
               "].matchExpressions[" + std::to_string(j) + "]";
      }
    }
  }
  return std::nullopt;
}

std::set<std::string> localVolumeNodeNames(const api::PersistentVolume& pv) {
  std::set<std::string> result;
  if (!pv.spec.nodeAffinity) return result;
  for (const api::NodeSelectorTerm& term : pv.spec.nodeAffinity->nodeSelectorTerms) {
    std::optional<std::set<std::string>> nodes;
    for (const api::NodeSelectorRequirement& req : term.matchExpressions) {
      if (req.key != kLabelHostname || req.op != api::NodeSelectorOperator::In) continue;
      std::set<std::string> values(req.values.begin(), req.values.end());
      if (!nodes) {
        nodes = std::move(values);
      } else {
        std::erase_if(*nodes, [&](const std::string& n) { return !values.contains(n); });
      }
    }
    if (nodes) result.insert(nodes->begin(), nodes->end());
  }
  return result;
}

bool topologyAllows(const std::vector<api::TopologySelectorTerm>& terms,
                    const labels::LabelSet& nodeLabels) {
  if (terms.empty()) return true;
  for (const api::TopologySelectorTerm& term : terms) {
    const bool all =
        std::all_of(term.matchLabelExpressions.begin(), term.matchLabelExpressions.end(),
                    [&](const api::TopologySelectorLabelRequirement& req) {
                      auto value = nodeLabels.find(req.key);
                      return value && std::find(req.values.begin(), req.values.end(), *value) !=
                                          req.values.end();
                    });
    if (all) return true;
  }
  return false;
}

resource::Quantity requestedStorage(const api::PersistentVolumeClaim& claim) {
  auto it = claim.spec.resources.requests.find("storage");
  return it == claim.spec.resources.requests.end() ? resource::Quantity() : it->second;
}

api::PersistentVolumePtr findMatchingVolume(const api::PersistentVolumeClaim& claim,
                                            const std::optional<labels::Selector>& selector,
                                            const std::vector<api::PersistentVolumePtr>& volumes,
                                            const labels::LabelSet& nodeLabels,
                                            const std::set<std::string>& excluded) {
  const resource::Quantity requested = requestedStorage(claim);
  const std::string requestedClass = claimClass(claim);
  const std::string_view claimMode = volumeModeOrDefault(claim.spec.volumeMode);
  api::PersistentVolumePtr smallest;
  resource::Quantity smallestSize;
  for (const api::PersistentVolumePtr& pv : volumes) {
    if (excluded.contains(pv->metadata.name)) continue;
    const bool boundToClaim = volumeBoundToClaim(*pv, claim);
    if (pv->spec.claimRef && !boundToClaim) continue;
    auto cap = pv->spec.capacity.find("storage");
    const resource::Quantity size =
        cap == pv->spec.capacity.end() ? resource::Quantity() : cap->second;
    if (size.cmp(requested) < 0) continue;
    if (volumeModeOrDefault(pv->spec.volumeMode) != claimMode) continue;
    if (pv->metadata.deletionTimestamp) continue;
    const bool affinityOk = nodeAffinityMatches(*pv, nodeLabels);
    // A PV pre-bound to the claim is the only candidate: it fits this node or nothing does.
    if (boundToClaim) return affinityOk ? pv : nullptr;
    if (pv->status.phase != "Available") continue;
    if (selector && !selector->matches(pv->metadata.labels)) continue;
    if (persistentVolumeClass(*pv) != requestedClass) continue;
    if (!affinityOk) continue;
    if (!accessModesContained(claim.spec.accessModes, pv->spec.accessModes)) continue;
    if (claim.spec.volumeAttributesClassName.value_or("") !=
        pv->spec.volumeAttributesClassName.value_or("")) {
      continue;
    }
    if (smallest == nullptr || smallestSize.cmp(size) > 0) {
      smallest = pv;
      smallestSize = size;
    }
  }
  return smallest;
}

api::PersistentVolumePtr bindVolumeToClaim(const api::PersistentVolume& pv,
                                           const api::PersistentVolumeClaim& claim) {
  const bool setBoundByController = !volumeBoundToClaim(pv, claim);
  auto clone = std::make_shared<api::PersistentVolume>(pv);
  bool dirty = false;
  if (!pv.spec.claimRef || pv.spec.claimRef->name != claim.metadata.name ||
      pv.spec.claimRef->namespace_ != claim.metadata.namespace_ ||
      pv.spec.claimRef->uid != claim.metadata.uid) {
    clone->spec.claimRef = api::ObjectReference{.kind = "PersistentVolumeClaim",
                                                .apiVersion = "v1",
                                                .namespace_ = claim.metadata.namespace_,
                                                .name = claim.metadata.name,
                                                .uid = claim.metadata.uid,
                                                .resourceVersion = claim.metadata.resourceVersion};
    dirty = true;
  }
  if (setBoundByController &&
      !clone->metadata.annotations.contains(std::string(kAnnBoundByController))) {
    clone->metadata.annotations[std::string(kAnnBoundByController)] = "yes";
    dirty = true;
  }
  return dirty ? clone : nullptr;
}

std::string ephemeralClaimName(const api::Pod& pod, const api::Volume& volume) {
  return pod.metadata.name + "-" + volume.name;
}

bool claimControlledByPod(const api::PersistentVolumeClaim& claim, const api::Pod& pod) {
  return std::any_of(claim.metadata.ownerReferences.begin(), claim.metadata.ownerReferences.end(),
                     [&](const api::OwnerReference& ref) {
                       return ref.controller && ref.uid == pod.metadata.uid;
                     });
}

}  // namespace berth::plugins::volumebinding
