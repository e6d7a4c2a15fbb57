#include "pkg/api/encode.h"

#include <string>
#include <utility>
#include <vector>

#include "pkg/api/event.h"

namespace berth::api {
namespace {

using nlohmann::json;

// Field presence follows the Go struct tags: `omitempty` fields are left out when empty, the others
// (containers, a container's name and resources, containerPort, a taint's key and effect...)
// always appear.

json encodeResources(const ResourceList& list) {
  json out = json::object();
  for (const auto& [name, q] : list) {
    out[name] = q.toString();
  }
  return out;
}

void putString(json& obj, const char* key, const std::string& value) {
  if (!value.empty()) {
    obj[key] = value;
  }
}

void putMap(json& obj, const char* key, const StringMap& value) {
  if (!value.empty()) {
    obj[key] = value;
  }
}

void putResources(json& obj, const char* key, const ResourceList& value) {
  if (!value.empty()) {
    obj[key] = encodeResources(value);
  }
}

template <typename T, typename F>
void putList(json& obj, const char* key, const std::vector<T>& items, F encode) {
  if (items.empty()) {
    return;
  }
  json arr = json::array();
  for (const T& item : items) {
    arr.push_back(encode(item));
  }
  obj[key] = std::move(arr);
}

json encodeMeta(const ObjectMeta& m) {
  json out = json::object();
  putString(out, "name", m.name);
  putString(out, "namespace", m.namespace_);
  putString(out, "uid", m.uid);
  putString(out, "resourceVersion", m.resourceVersion);
  putMap(out, "labels", m.labels);
  putMap(out, "annotations", m.annotations);
  if (m.creationTimestamp) {
    out["creationTimestamp"] = formatTimestamp(*m.creationTimestamp);
  }
  if (m.deletionTimestamp) {
    out["deletionTimestamp"] = formatTimestamp(*m.deletionTimestamp);
  }
  putList(out, "ownerReferences", m.ownerReferences, [](const OwnerReference& r) {
    json o = {{"apiVersion", r.apiVersion}, {"kind", r.kind}, {"name", r.name}, {"uid", r.uid}};
    if (r.controller) {
      o["controller"] = true;
    }
    return o;
  });
  return out;
}

const char* operatorName(NodeSelectorOperator op) {
  switch (op) {
    case NodeSelectorOperator::In:
      return "In";
    case NodeSelectorOperator::NotIn:
      return "NotIn";
    case NodeSelectorOperator::Exists:
      return "Exists";
    case NodeSelectorOperator::DoesNotExist:
      return "DoesNotExist";
    case NodeSelectorOperator::Gt:
      return "Gt";
    case NodeSelectorOperator::Lt:
      return "Lt";
  }
  return "In";
}

json encodeTerm(const NodeSelectorTerm& term) {
  auto requirement = [](const NodeSelectorRequirement& r) {
    json o = {{"key", r.key}, {"operator", operatorName(r.op)}};
    if (!r.values.empty()) {
      o["values"] = r.values;
    }
    return o;
  };
  json out = json::object();
  putList(out, "matchExpressions", term.matchExpressions, requirement);
  putList(out, "matchFields", term.matchFields, requirement);
  return out;
}

json encodeLabelSelector(const LabelSelector& selector) {
  json out = json::object();
  putMap(out, "matchLabels", selector.matchLabels);
  putList(out, "matchExpressions", selector.matchExpressions,
          [](const LabelSelectorRequirement& r) {
            json o = {{"key", r.key}, {"operator", r.op}};
            if (!r.values.empty()) {
              o["values"] = r.values;
            }
            return o;
          });
  return out;
}

json encodePodAffinityTerm(const PodAffinityTerm& t) {
  json out = {{"topologyKey", t.topologyKey}};
  if (t.labelSelector) {
    out["labelSelector"] = encodeLabelSelector(*t.labelSelector);
  }
  if (!t.namespaces.empty()) {
    out["namespaces"] = t.namespaces;
  }
  if (t.namespaceSelector) {
    out["namespaceSelector"] = encodeLabelSelector(*t.namespaceSelector);
  }
  if (!t.matchLabelKeys.empty()) {
    out["matchLabelKeys"] = t.matchLabelKeys;
  }
  if (!t.mismatchLabelKeys.empty()) {
    out["mismatchLabelKeys"] = t.mismatchLabelKeys;
  }
  return out;
}

json encodePodAffinity(const PodAffinity& a) {
  json out = json::object();
  putList(out, "requiredDuringSchedulingIgnoredDuringExecution",
          a.requiredDuringSchedulingIgnoredDuringExecution, encodePodAffinityTerm);
  putList(out, "preferredDuringSchedulingIgnoredDuringExecution",
          a.preferredDuringSchedulingIgnoredDuringExecution, [](const WeightedPodAffinityTerm& t) {
            return json{{"weight", t.weight},
                        {"podAffinityTerm", encodePodAffinityTerm(t.podAffinityTerm)}};
          });
  return out;
}

json encodeTopologySpreadConstraint(const TopologySpreadConstraint& c) {
  json out = {{"maxSkew", c.maxSkew},
              {"topologyKey", c.topologyKey},
              {"whenUnsatisfiable", c.whenUnsatisfiable}};
  if (c.labelSelector) {
    out["labelSelector"] = encodeLabelSelector(*c.labelSelector);
  }
  if (c.minDomains) {
    out["minDomains"] = *c.minDomains;
  }
  if (c.nodeAffinityPolicy) {
    out["nodeAffinityPolicy"] = *c.nodeAffinityPolicy;
  }
  if (c.nodeTaintsPolicy) {
    out["nodeTaintsPolicy"] = *c.nodeTaintsPolicy;
  }
  if (!c.matchLabelKeys.empty()) {
    out["matchLabelKeys"] = c.matchLabelKeys;
  }
  return out;
}

// The identity field of an in-tree disk source (see Volume::disk).
void putDisk(json& source, const std::string& kind, const std::string& disk) {
  if (kind == "gcePersistentDisk") {
    putString(source, "pdName", disk);
  } else if (kind == "awsElasticBlockStore") {
    putString(source, "volumeID", disk);
  } else if (kind == "iscsi") {
    putString(source, "iqn", disk);
  } else if (kind == "rbd") {
    putString(source, "image", disk);
  }
}

// Only what berth decodes of a volume survives: its name, source kind, claim name, readOnly and
// the disk identity.
json encodeVolume(const Volume& v) {
  json out = {{"name", v.name}};
  if (!v.source.empty()) {
    json source = json::object();
    putString(source, "claimName", v.claimName);
    putString(source, "driver", v.csiDriver);
    putDisk(source, v.source, v.disk);
    putString(source, "pool", v.rbdPool);
    if (!v.rbdMonitors.empty()) {
      source["monitors"] = v.rbdMonitors;
    }
    if (v.readOnly) {
      source["readOnly"] = true;
    }
    out[v.source] = std::move(source);
  }
  return out;
}

json encodeNodeSelector(const NodeSelector& selector) {
  json terms = json::array();
  for (const auto& t : selector.nodeSelectorTerms) {
    terms.push_back(encodeTerm(t));
  }
  return {{"nodeSelectorTerms", std::move(terms)}};
}

json encodeAffinity(const Affinity& a) {
  json out = json::object();
  if (a.podAffinity) {
    out["podAffinity"] = encodePodAffinity(*a.podAffinity);
  }
  if (a.podAntiAffinity) {
    out["podAntiAffinity"] = encodePodAffinity(*a.podAntiAffinity);
  }
  if (a.nodeAffinity) {
    const NodeAffinity& na = *a.nodeAffinity;
    json n = json::object();
    if (na.requiredDuringSchedulingIgnoredDuringExecution) {
      n["requiredDuringSchedulingIgnoredDuringExecution"] =
          encodeNodeSelector(*na.requiredDuringSchedulingIgnoredDuringExecution);
    }
    putList(n, "preferredDuringSchedulingIgnoredDuringExecution",
            na.preferredDuringSchedulingIgnoredDuringExecution,
            [](const PreferredSchedulingTerm& t) {
              return json{{"weight", t.weight}, {"preference", encodeTerm(t.preference)}};
            });
    out["nodeAffinity"] = std::move(n);
  }
  return out;
}

json encodeContainer(const Container& c) {
  json out = {{"name", c.name}};
  putString(out, "image", c.image);
  json resources = json::object();
  putResources(resources, "limits", c.resources.limits);
  putResources(resources, "requests", c.resources.requests);
  out["resources"] = std::move(resources);
  putList(out, "ports", c.ports, [](const ContainerPort& port) {
    json o = {{"containerPort", port.containerPort}};
    putString(o, "name", port.name);
    if (port.hostPort != 0) {
      o["hostPort"] = port.hostPort;
    }
    putString(o, "protocol", port.protocol);
    putString(o, "hostIP", port.hostIP);
    return o;
  });
  putString(out, "restartPolicy", c.restartPolicy);
  return out;
}

json encodeSpec(const PodSpec& s) {
  json out = json::object();
  putList(out, "initContainers", s.initContainers, encodeContainer);
  json containers = json::array();
  for (const Container& c : s.containers) {
    containers.push_back(encodeContainer(c));
  }
  out["containers"] = std::move(containers);
  putMap(out, "nodeSelector", s.nodeSelector);
  putString(out, "nodeName", s.nodeName);
  if (s.hostNetwork) {
    out["hostNetwork"] = true;
  }
  if (s.affinity) {
    out["affinity"] = encodeAffinity(*s.affinity);
  }
  putString(out, "schedulerName", s.schedulerName);
  putList(out, "tolerations", s.tolerations, [](const Toleration& t) {
    json o = json::object();
    putString(o, "key", t.key);
    putString(o, "operator", t.operator_);
    putString(o, "value", t.value);
    putString(o, "effect", t.effect);
    if (t.tolerationSeconds) {
      o["tolerationSeconds"] = *t.tolerationSeconds;
    }
    return o;
  });
  putString(out, "priorityClassName", s.priorityClassName);
  putString(out, "preemptionPolicy", s.preemptionPolicy);
  if (s.priority) {
    out["priority"] = *s.priority;
  }
  putResources(out, "overhead", s.overhead);
  putList(out, "schedulingGates", s.schedulingGates, [](const std::string& name) {
    return json{{"name", name}};
  });
  putList(out, "topologySpreadConstraints", s.topologySpreadConstraints,
          encodeTopologySpreadConstraint);
  putList(out, "volumes", s.volumes, encodeVolume);
  putList(out, "resourceClaims", s.resourceClaims, [](const PodResourceClaim& c) {
    return json{{"name", c.name}};
  });
  if (s.resources) {
    json resources = json::object();
    putResources(resources, "limits", s.resources->limits);
    putResources(resources, "requests", s.resources->requests);
    out["resources"] = std::move(resources);
  }
  return out;
}

json encodeStatus(const PodStatus& s) {
  json out = json::object();
  putString(out, "phase", s.phase);
  putList(out, "conditions", s.conditions, [](const PodCondition& c) {
    json o = {{"type", c.type}, {"status", c.status}};
    if (c.lastTransitionTime) {
      o["lastTransitionTime"] = formatTimestamp(*c.lastTransitionTime);
    }
    putString(o, "reason", c.reason);
    putString(o, "message", c.message);
    return o;
  });
  putString(out, "message", s.message);
  putString(out, "reason", s.reason);
  putString(out, "nominatedNodeName", s.nominatedNodeName);
  if (s.startTime) {
    out["startTime"] = formatTimestamp(*s.startTime);
  }
  return out;
}

}  // namespace

json encodePod(const Pod& pod) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", encodeMeta(pod.metadata)},
          {"spec", encodeSpec(pod.spec)},
          {"status", encodeStatus(pod.status)}};
}

json encodeNode(const Node& node) {
  json spec = json::object();
  if (node.spec.unschedulable) {
    spec["unschedulable"] = true;
  }
  putList(spec, "taints", node.spec.taints, [](const Taint& t) {
    json o = {{"key", t.key}, {"effect", t.effect}};
    putString(o, "value", t.value);
    return o;
  });
  json status = json::object();
  putResources(status, "capacity", node.status.capacity);
  putResources(status, "allocatable", node.status.allocatable);
  putList(status, "conditions", node.status.conditions, [](const NodeCondition& c) {
    json o = {{"type", c.type}, {"status", c.status}};
    putString(o, "reason", c.reason);
    putString(o, "message", c.message);
    return o;
  });
  putList(status, "images", node.status.images, [](const ContainerImage& image) {
    json o = {{"names", image.names}};
    if (image.sizeBytes != 0) {
      o["sizeBytes"] = image.sizeBytes;
    }
    return o;
  });
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", encodeMeta(node.metadata)},
          {"spec", std::move(spec)},
          {"status", std::move(status)}};
}

json encodeNamespace(const Namespace& ns) {
  return {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", encodeMeta(ns.metadata)}};
}

json encodeService(const Service& service) {
  json spec = json::object();
  putMap(spec, "selector", service.selector);
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", encodeMeta(service.metadata)},
          {"spec", std::move(spec)}};
}

json encodeReplicaSet(const ReplicaSet& rs) {
  json spec = json::object();
  if (rs.selector) {
    spec["selector"] = encodeLabelSelector(*rs.selector);
  }
  return {{"apiVersion", "apps/v1"},
          {"kind", "ReplicaSet"},
          {"metadata", encodeMeta(rs.metadata)},
          {"spec", std::move(spec)}};
}

json encodeStatefulSet(const StatefulSet& ss) {
  json spec = json::object();
  if (ss.selector) {
    spec["selector"] = encodeLabelSelector(*ss.selector);
  }
  return {{"apiVersion", "apps/v1"},
          {"kind", "StatefulSet"},
          {"metadata", encodeMeta(ss.metadata)},
          {"spec", std::move(spec)}};
}

json encodeReplicationController(const ReplicationController& rc) {
  json spec = json::object();
  putMap(spec, "selector", rc.selector);
  return {{"apiVersion", "v1"},
          {"kind", "ReplicationController"},
          {"metadata", encodeMeta(rc.metadata)},
          {"spec", std::move(spec)}};
}

json encodePodDisruptionBudget(const PodDisruptionBudget& pdb) {
  json spec = json::object();
  if (pdb.selector) {
    spec["selector"] = encodeLabelSelector(*pdb.selector);
  }
  json status = {{"disruptionsAllowed", pdb.disruptionsAllowed}};
  putMap(status, "disruptedPods", pdb.disruptedPods);
  return {{"apiVersion", "policy/v1"},
          {"kind", "PodDisruptionBudget"},
          {"metadata", encodeMeta(pdb.metadata)},
          {"spec", std::move(spec)},
          {"status", std::move(status)}};
}

json encodePersistentVolumeClaim(const PersistentVolumeClaim& pvc) {
  json spec = json::object();
  if (!pvc.spec.accessModes.empty()) {
    spec["accessModes"] = pvc.spec.accessModes;
  }
  if (pvc.spec.selector) {
    spec["selector"] = encodeLabelSelector(*pvc.spec.selector);
  }
  json resources = json::object();
  putResources(resources, "requests", pvc.spec.resources.requests);
  putResources(resources, "limits", pvc.spec.resources.limits);
  spec["resources"] = std::move(resources);
  putString(spec, "volumeName", pvc.spec.volumeName);
  if (pvc.spec.storageClassName) {
    spec["storageClassName"] = *pvc.spec.storageClassName;
  }
  putString(spec, "volumeMode", pvc.spec.volumeMode);
  if (pvc.spec.volumeAttributesClassName) {
    spec["volumeAttributesClassName"] = *pvc.spec.volumeAttributesClassName;
  }
  json status = json::object();
  putString(status, "phase", pvc.status.phase);
  if (!pvc.status.accessModes.empty()) {
    status["accessModes"] = pvc.status.accessModes;
  }
  putResources(status, "capacity", pvc.status.capacity);
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata", encodeMeta(pvc.metadata)},
          {"spec", std::move(spec)},
          {"status", std::move(status)}};
}

json encodePersistentVolume(const PersistentVolume& pv) {
  const PersistentVolumeSpec& s = pv.spec;
  json spec = json::object();
  putResources(spec, "capacity", s.capacity);
  if (!s.accessModes.empty()) {
    spec["accessModes"] = s.accessModes;
  }
  if (s.claimRef) {
    spec["claimRef"] = encodeObjectReference(*s.claimRef);
  }
  putString(spec, "storageClassName", s.storageClassName);
  if (s.nodeAffinity) {
    spec["nodeAffinity"] = {{"required", encodeNodeSelector(*s.nodeAffinity)}};
  }
  putString(spec, "volumeMode", s.volumeMode);
  putString(spec, "persistentVolumeReclaimPolicy", s.persistentVolumeReclaimPolicy);
  if (s.volumeAttributesClassName) {
    spec["volumeAttributesClassName"] = *s.volumeAttributesClassName;
  }
  if (s.csi) {
    json csi = {{"driver", s.csi->driver}, {"volumeHandle", s.csi->volumeHandle}};
    if (s.csi->readOnly) {
      csi["readOnly"] = true;
    }
    spec["csi"] = std::move(csi);
  } else if (!s.source.empty()) {
    json source = json::object();
    putDisk(source, s.source, s.disk);
    spec[s.source] = std::move(source);
  }
  json status = json::object();
  putString(status, "phase", pv.status.phase);
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolume"},
          {"metadata", encodeMeta(pv.metadata)},
          {"spec", std::move(spec)},
          {"status", std::move(status)}};
}

json encodeStorageClass(const StorageClass& sc) {
  json out = {{"apiVersion", "storage.k8s.io/v1"},
              {"kind", "StorageClass"},
              {"metadata", encodeMeta(sc.metadata)},
              {"provisioner", sc.provisioner}};
  if (sc.volumeBindingMode) {
    out["volumeBindingMode"] = *sc.volumeBindingMode;
  }
  putList(out, "allowedTopologies", sc.allowedTopologies, [](const TopologySelectorTerm& t) {
    json term = json::object();
    putList(term, "matchLabelExpressions", t.matchLabelExpressions,
            [](const TopologySelectorLabelRequirement& r) {
              return json{{"key", r.key}, {"values", r.values}};
            });
    return term;
  });
  putString(out, "reclaimPolicy", sc.reclaimPolicy);
  return out;
}

json encodeCSINode(const CSINode& node) {
  json drivers = json::array();
  for (const CSINodeDriver& d : node.drivers) {
    json o = {{"name", d.name}, {"nodeID", d.nodeID}};
    if (!d.topologyKeys.empty()) {
      o["topologyKeys"] = d.topologyKeys;
    }
    if (d.allocatableCount) {
      o["allocatable"] = {{"count", *d.allocatableCount}};
    }
    drivers.push_back(std::move(o));
  }
  return {{"apiVersion", "storage.k8s.io/v1"},
          {"kind", "CSINode"},
          {"metadata", encodeMeta(node.metadata)},
          {"spec", {{"drivers", std::move(drivers)}}}};
}

json encodeCSIDriver(const CSIDriver& driver) {
  json spec = json::object();
  if (driver.attachRequired) {
    spec["attachRequired"] = *driver.attachRequired;
  }
  if (driver.storageCapacity) {
    spec["storageCapacity"] = *driver.storageCapacity;
  }
  return {{"apiVersion", "storage.k8s.io/v1"},
          {"kind", "CSIDriver"},
          {"metadata", encodeMeta(driver.metadata)},
          {"spec", std::move(spec)}};
}

json encodeCSIStorageCapacity(const CSIStorageCapacity& c) {
  json out = {{"apiVersion", "storage.k8s.io/v1"},
              {"kind", "CSIStorageCapacity"},
              {"metadata", encodeMeta(c.metadata)},
              {"storageClassName", c.storageClassName}};
  if (c.nodeTopology) {
    out["nodeTopology"] = encodeLabelSelector(*c.nodeTopology);
  }
  if (c.capacity) {
    out["capacity"] = c.capacity->toString();
  }
  if (c.maximumVolumeSize) {
    out["maximumVolumeSize"] = c.maximumVolumeSize->toString();
  }
  return out;
}

}  // namespace berth::api
