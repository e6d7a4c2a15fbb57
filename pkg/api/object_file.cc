#include "pkg/api/object_file.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pkg/api/decode.h"

namespace berth::api {
namespace {

using nlohmann::json;

std::string stringField(const json& obj, std::string_view key) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

template <typename T>
util::Result<void> appendDecoded(util::Result<T> decoded,
                                 std::vector<std::shared_ptr<const T>>& to) {
  if (!decoded.ok()) {
    return decoded.error();
  }
  to.push_back(std::make_shared<const T>(std::move(decoded).value()));
  return {};
}

// Decodes one object (a document or a list item) into `out`. `default_kind` is the item kind of a
// typed list (PodList items from the API carry no kind of their own).
util::Result<void> decodeInto(const json& obj, std::string_view where,
                              std::string_view default_kind, ObjectSet& out) {
  auto located = [&](const std::string& message) {
    return util::invalidArgument(where.empty() ? message : std::string(where) + ": " + message);
  };
  if (!obj.is_object()) {
    return located("expected object, got " + std::string(obj.type_name()));
  }
  std::string kind(default_kind);
  if (const auto k = obj.find("kind"); k != obj.end() && !k->is_null()) {
    if (!k->is_string()) {
      return located("kind: expected string, got " + std::string(k->type_name()));
    }
    if (!k->get_ref<const std::string&>().empty()) {
      kind = k->get<std::string>();
    }
  }
  if (kind.empty()) {
    return located("object has no kind");
  }
  std::string api_version = "v1";
  if (const auto v = obj.find("apiVersion");
      v != obj.end() && v->is_string() && !v->get_ref<const std::string&>().empty()) {
    api_version = v->get<std::string>();
  }
  if (api_version == "v1" && kind == "Pod") {
    return appendDecoded(decodePod(obj), out.pods);
  }
  if (api_version == "v1" && kind == "Node") {
    return appendDecoded(decodeNode(obj), out.nodes);
  }
  if (api_version == "v1" && kind == "Namespace") {
    return appendDecoded(decodeNamespace(obj), out.namespaces);
  }
  if (api_version == "v1" && kind == "Service") {
    return appendDecoded(decodeService(obj), out.services);
  }
  if (api_version == "v1" && kind == "ReplicationController") {
    return appendDecoded(decodeReplicationController(obj), out.replicationControllers);
  }
  if (api_version == "apps/v1" && kind == "ReplicaSet") {
    return appendDecoded(decodeReplicaSet(obj), out.replicaSets);
  }
  if (api_version == "apps/v1" && kind == "StatefulSet") {
    return appendDecoded(decodeStatefulSet(obj), out.statefulSets);
  }
  if (api_version == "policy/v1" && kind == "PodDisruptionBudget") {
    return appendDecoded(decodePodDisruptionBudget(obj), out.podDisruptionBudgets);
  }
  if (api_version == "v1" && kind == "PersistentVolumeClaim") {
    return appendDecoded(decodePersistentVolumeClaim(obj), out.persistentVolumeClaims);
  }
  if (api_version == "v1" && kind == "PersistentVolume") {
    return appendDecoded(decodePersistentVolume(obj), out.persistentVolumes);
  }
  if (api_version == "storage.k8s.io/v1" && kind == "StorageClass") {
    return appendDecoded(decodeStorageClass(obj), out.storageClasses);
  }
  if (api_version == "storage.k8s.io/v1" && kind == "CSINode") {
    return appendDecoded(decodeCSINode(obj), out.csiNodes);
  }
  if (api_version == "storage.k8s.io/v1" && kind == "CSIDriver") {
    return appendDecoded(decodeCSIDriver(obj), out.csiDrivers);
  }
  if (api_version == "storage.k8s.io/v1" && kind == "CSIStorageCapacity") {
    return appendDecoded(decodeCSIStorageCapacity(obj), out.csiStorageCapacities);
  }
  // A kind of another API group is another type that happens to share the name.
  const std::string type = api_version == "v1" ? kind : kind + "." + api_version;
  out.skipped.push_back(type + " " + objectKey(obj));
  return {};
}

bool isList(const json& doc) {
  if (!doc.is_object()) {
    return false;
  }
  const std::string kind = stringField(doc, "kind");
  if (kind == "List") {
    return true;
  }
  return kind.size() > 4 && kind.ends_with("List") && doc.contains("items");
}

}  // namespace

util::Result<ObjectSet> decodeObjects(std::string_view text) {
  auto docs = parseDocuments(text);
  if (!docs.ok()) {
    return docs.error();
  }
  ObjectSet out;
  // Structural errors name the document (counting non-empty ones) and item; errors inside a pod or
  // node name the object instead, which is easier to find in a large file.
  const bool many = docs->size() > 1;
  for (size_t d = 0; d < docs->size(); ++d) {
    const json& doc = (*docs)[d];
    const std::string where = many ? "document " + std::to_string(d + 1) : "";
    if (doc.is_null()) {
      continue;
    }
    if (!isList(doc) && !doc.is_array()) {
      if (auto r = decodeInto(doc, where, "", out); !r.ok()) {
        return r.error();
      }
      continue;
    }
    // A List, a typed list (PodList, NodeList...) or a bare JSON array of objects.
    const json* items = &doc;
    std::string item_kind;
    std::string items_where = where;
    if (!doc.is_array()) {
      const std::string kind = stringField(doc, "kind");
      if (kind != "List") {
        item_kind = kind.substr(0, kind.size() - 4);
      }
      const auto it = doc.find("items");
      if (it == doc.end() || it->is_null()) {
        continue;
      }
      if (!it->is_array()) {
        return util::invalidArgument((where.empty() ? "" : where + ": ") +
                                     "items: expected array, got " + it->type_name());
      }
      items = &*it;
      items_where = (where.empty() ? "" : where + ": ") + "items";
    }
    for (size_t i = 0; i < items->size(); ++i) {
      const json& item = (*items)[i];
      if (item.is_null()) {
        continue;
      }
      const std::string item_where = items_where + "[" + std::to_string(i) + "]";
      if (auto r = decodeInto(item, item_where, item_kind, out); !r.ok()) {
        return r.error();
      }
    }
  }
  return out;
}

}  // namespace berth::api
