#include "pkg/apiserver/patch.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

// Where a strategic merge patch merges a list instead of replacing it: the fields k8s.io/api
// tags with patchStrategy "merge" (core/v1 types.go). A path names fields from the object root;
// list elements add no segment ("spec.containers.ports"). An empty merge key merges a list of
// scalars as a set.
struct ListStrategy {
  std::string_view path;
  std::string_view mergeKey;
};

constexpr ListStrategy kMetadataLists[] = {
    {"metadata.finalizers", ""},
    {"metadata.ownerReferences", "uid"},
};

constexpr ListStrategy kPodLists[] = {
    {"spec.volumes", "name"},  // merge,retainKeys
    {"spec.initContainers", "name"},
    {"spec.initContainers.ports", "containerPort"},
    {"spec.initContainers.env", "name"},
    {"spec.initContainers.volumeMounts", "mountPath"},
    {"spec.initContainers.volumeDevices", "devicePath"},
    {"spec.containers", "name"},
    {"spec.containers.ports", "containerPort"},
    {"spec.containers.env", "name"},
    {"spec.containers.volumeMounts", "mountPath"},
    {"spec.containers.volumeDevices", "devicePath"},
    {"spec.ephemeralContainers", "name"},
    {"spec.ephemeralContainers.ports", "containerPort"},
    {"spec.ephemeralContainers.env", "name"},
    {"spec.ephemeralContainers.volumeMounts", "mountPath"},
    {"spec.ephemeralContainers.volumeDevices", "devicePath"},
    {"spec.imagePullSecrets", "name"},
    {"spec.hostAliases", "ip"},
    {"spec.topologySpreadConstraints", "topologyKey"},
    {"spec.schedulingGates", "name"},
    {"spec.resourceClaims", "name"},  // merge,retainKeys
    {"status.conditions", "type"},
    {"status.podIPs", "ip"},
    {"status.hostIPs", "ip"},
    {"status.resourceClaimStatuses", "name"},  // merge,retainKeys
};

constexpr ListStrategy kNodeLists[] = {
    {"spec.podCIDRs", ""},
    {"status.conditions", "type"},
    {"status.addresses", "type"},
};

constexpr ListStrategy kServiceLists[] = {
    {"spec.ports", "port"},
    {"status.conditions", "type"},
};

// Namespaces, claims and the workloads: their status conditions; a workload's pod template merges
// as a pod's spec does.
constexpr ListStrategy kConditionLists[] = {
    {"status.conditions", "type"},
};

// storage/v1 CSINodeSpec.drivers: patchStrategy merge on the driver's name.
constexpr ListStrategy kCSINodeLists[] = {
    {"spec.drivers", "name"},
};

constexpr std::string_view kTemplatePrefix = "spec.template.";

const ListStrategy* listStrategy(Resource resource, std::string_view path) {
  auto find = [&](const auto& table) -> const ListStrategy* {
    for (const ListStrategy& s : table) {
      if (s.path == path) {
        return &s;
      }
    }
    return nullptr;
  };
  if (const ListStrategy* s = find(kMetadataLists)) {
    return s;
  }
  switch (resource) {
    case Resource::Pods:
      return find(kPodLists);
    case Resource::Nodes:
      return find(kNodeLists);
    case Resource::Services:
      return find(kServiceLists);
    case Resource::Namespaces:
    case Resource::PodDisruptionBudgets:
    case Resource::PersistentVolumeClaims:
      return find(kConditionLists);
    case Resource::CSINodes:
      return find(kCSINodeLists);
    case Resource::ReplicaSets:
    case Resource::StatefulSets:
    case Resource::ReplicationControllers:
      if (path.starts_with(kTemplatePrefix)) {
        // "spec.template.spec.containers" is the pod's "spec.containers".
        const std::string_view inPod = path.substr(kTemplatePrefix.size());
        return listStrategy(inPod.starts_with("spec.") ? Resource::Pods : resource, inPod);
      }
      return find(kConditionLists);
    default:
      return nullptr;
  }
}

// errors.NewGenericServerResponse(422, ...): the detail the patch library gave is dropped.
ApiError unprocessable() {
  return apiError(422, "Invalid", "the server rejected our request due to an error in our request");
}

// An error apimachinery returns without a Status: the apiserver answers 500 with no reason.
ApiError unclassified(std::string message) { return apiError(500, "", std::move(message)); }

// Unwinds the strategic merge recursion to applyPatch, which returns it as a value.
struct PatchFailure {
  ApiError error;
};

constexpr std::string_view kDirective = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kSetElementOrder = "$setElementOrder/";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList/";

}  // namespace

std::string_view goJsonKind(const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "bool";
    case json::value_t::null:
      return "null";
    default:
      return "number";
  }
}

namespace {

bool sameKind(const json& a, const json& b) {
  return (a.is_object() && b.is_object()) || (a.is_array() && b.is_array());
}

class StrategicMerge {
 public:
  explicit StrategicMerge(Resource resource) : resource_(resource) {}

  json mergeMap(json original, const json& patch, const std::string& path) const {
    if (auto directive = patch.find(kDirective); directive != patch.end()) {
      if (*directive == "replace") {
        json rest = patch;
        rest.erase(kDirective);
        return mergeMap(json::object(), rest, path);
      }
      if (*directive == "delete") {
        return json::object();
      }
      throw PatchFailure{unclassified("unknown patch type: " + goFormat(*directive) +
                                      " in map: " + goFormat(patch))};
    }
    if (!original.is_object()) {
      original = json::object();
    }
    applyRetainKeys(original, patch);
    for (const auto& [key, value] : patch.items()) {
      std::string_view k = key;
      if (k == kRetainKeys || k.starts_with(kSetElementOrder)) {
        continue;
      }
      if (k.starts_with(kDeleteFromPrimitiveList)) {
        deleteFromPrimitiveList(original, std::string(k.substr(kDeleteFromPrimitiveList.size())),
                                value);
        continue;
      }
      if (value.is_null()) {
        original.erase(key);
        continue;
      }
      const std::string child = path.empty() ? key : path + "." + key;
      auto it = original.find(key);
      if (it == original.end() || !sameKind(*it, value)) {
        original[key] = fresh(value, child, orderFor(patch, key));
      } else if (value.is_object()) {
        *it = mergeMap(std::move(*it), value, child);
      } else if (const ListStrategy* s = listStrategy(resource_, child)) {
        *it = mergeList(*it, value, orderFor(patch, key), *s, child);
      } else {
        *it = value;
      }
    }
    // A $setElementOrder without its list reorders the list as it stands.
    for (const auto& [key, value] : patch.items()) {
      if (!std::string_view(key).starts_with(kSetElementOrder)) {
        continue;
      }
      const std::string field = key.substr(kSetElementOrder.size());
      const std::string child = path.empty() ? field : path + "." + field;
      const json* order = orderFor(patch, field);
      auto it = original.find(field);
      const ListStrategy* s = listStrategy(resource_, child);
      if (!patch.contains(field) && it != original.end() && it->is_array() && s != nullptr) {
        *it = mergeList(*it, json::array(), order, *s, child);
      }
    }
    return original;
  }

 private:
  // A patch value for a field the original lacks: directives and nulls are dropped.
  json fresh(const json& value, const std::string& path, const json* order) const {
    if (value.is_object()) {
      return mergeMap(json::object(), value, path);
    }
    if (value.is_array()) {
      if (const ListStrategy* s = listStrategy(resource_, path)) {
        return mergeList(json::array(), value, order, *s, path);
      }
    }
    return value;
  }

  // The $setElementOrder/<field> list of `patch`, if any.
  static const json* orderFor(const json& patch, const std::string& field) {
    auto it = patch.find(std::string(kSetElementOrder) + field);
    if (it == patch.end()) {
      return nullptr;
    }
    if (!it->is_array()) {
      throw PatchFailure{badRequest("invalid patch format of setElementOrder list")};
    }
    return &*it;
  }

  // $retainKeys: every other field of the original is cleared; the patch may set only those.
  static void applyRetainKeys(json& original, const json& patch) {
    auto it = patch.find(kRetainKeys);
    if (it == patch.end()) {
      return;
    }
    const json& keep = *it;
    if (!keep.is_array()) {
      throw PatchFailure{badRequest("invalid patch format of retainKeys")};
    }
    auto kept = [&](const std::string& key) {
      return std::find(keep.begin(), keep.end(), json(key)) != keep.end();
    };
    for (const auto& [key, value] : patch.items()) {
      std::string_view k = key;
      if (value.is_null() || k == kRetainKeys || k == kDirective ||
          k.starts_with(kDeleteFromPrimitiveList) || k.starts_with(kSetElementOrder)) {
        continue;
      }
      if (!kept(key)) {
        throw PatchFailure{badRequest("invalid patch format of retainKeys")};
      }
    }
    std::vector<std::string> drop;
    for (const auto& [key, value] : original.items()) {
      if (!kept(key)) {
        drop.push_back(key);
      }
    }
    for (const std::string& key : drop) {
      original.erase(key);
    }
  }

  static void deleteFromPrimitiveList(json& original, const std::string& field,
                                      const json& values) {
    if (!values.is_array()) {
      throw PatchFailure{badRequest("invalid patch format of primitive list")};
    }
    auto it = original.find(field);
    if (it == original.end() || !it->is_array()) {
      return;
    }
    json kept = json::array();
    for (const json& v : *it) {
      if (std::find(values.begin(), values.end(), v) == values.end()) {
        kept.push_back(v);
      }
    }
    *it = std::move(kept);
  }

  static const json* mergeKeyOf(const json& element, std::string_view mergeKey) {
    auto it = element.find(mergeKey);
    if (it == element.end()) {
      throw PatchFailure{
          unclassified("map: " + goFormat(element) +
                       " does not contain declared merge key: " + std::string(mergeKey))};
    }
    return &*it;
  }

  // The position of `element` in `list`, by merge key (maps) or value (scalars); -1 if absent.
  static ptrdiff_t indexIn(const json& list, const json& element, std::string_view mergeKey) {
    for (size_t i = 0; i < list.size(); ++i) {
      const json& e = list[i];
      if (mergeKey.empty() ? e == element
                           : (e.is_object() && e.contains(mergeKey) && element.is_object() &&
                              element.contains(mergeKey) && e[mergeKey] == element[mergeKey])) {
        return static_cast<ptrdiff_t>(i);
      }
    }
    return -1;
  }

  json mergeList(json original, const json& patch, const json* order, const ListStrategy& s,
                 const std::string& path) const {
    auto isList = [](const json& e) { return e.is_array(); };
    if (std::any_of(original.begin(), original.end(), isList) ||
        std::any_of(patch.begin(), patch.end(), isList)) {
      throw PatchFailure{unprocessable()};  // mergepatch.ErrNoListOfLists
    }
    const bool maps = (!patch.empty() && patch[0].is_object()) ||
                      (patch.empty() && !original.empty() && original[0].is_object());
    json items = json::array();  // the patch's elements without directive elements
    json merged;
    std::string_view mergeKey;
    if (!maps) {
      merged = json::array();
      for (const json* list : std::initializer_list<const json*>{&original, &patch}) {
        for (const json& v : *list) {
          if (indexIn(merged, v, "") < 0) {
            merged.push_back(v);
          }
        }
      }
      items = patch;
    } else {
      if (s.mergeKey.empty()) {
        throw PatchFailure{unclassified("cannot merge lists without merge key for " + path)};
      }
      mergeKey = s.mergeKey;
      bool replace = false;
      for (const json& e : patch) {
        auto directive = e.is_object() ? e.find(kDirective) : e.end();
        if (!e.is_object() || directive == e.end()) {
          items.push_back(e);
        } else if (*directive == "delete") {
          const json key = *mergeKeyOf(e, mergeKey);
          json kept = json::array();
          for (const json& o : original) {
            if (!(o.is_object() && o.contains(mergeKey) && o[mergeKey] == key)) {
              kept.push_back(o);
            }
          }
          original = std::move(kept);
        } else if (*directive == "replace") {
          replace = true;
        } else if (*directive == "merge") {
          throw PatchFailure{unclassified("merging lists cannot yet be specified in the patch")};
        } else {
          throw PatchFailure{unclassified("unknown patch type: " + goFormat(*directive) +
                                          " in map: " + goFormat(e))};
        }
      }
      if (replace) {
        original = json::array();
        for (const json& e : items) {
          original.push_back(fresh(e, path, nullptr));
        }
        items = json::array();
      }
      merged = original;
      for (const json& e : items) {
        if (!e.is_object()) {
          throw PatchFailure{unprocessable()};
        }
        mergeKeyOf(e, mergeKey);
        ptrdiff_t at = indexIn(merged, e, mergeKey);
        if (at >= 0) {
          merged[at] = mergeMap(std::move(merged[at]), e, path);
        } else {
          merged.push_back(mergeMap(json::object(), e, path));
        }
      }
    }
    return normalizeOrder(merged, order != nullptr ? *order : items, original, mergeKey);
  }

  // strategicpatch's normalizeElementOrder: the elements named by the patch (or its
  // $setElementOrder) in that order, interleaved with the server-only elements in server order.
  static json normalizeOrder(const json& merged, const json& patchOrder, const json& serverOrder,
                             std::string_view mergeKey) {
    std::vector<json> fromPatch, serverOnly;
    for (const json& e : merged) {
      (indexIn(patchOrder, e, mergeKey) >= 0 ? fromPatch : serverOnly).push_back(e);
    }
    auto byIndexIn = [&](const json& order) {
      return [&order, mergeKey](const json& a, const json& b) {
        ptrdiff_t ia = indexIn(order, a, mergeKey);
        ptrdiff_t ib = indexIn(order, b, mergeKey);
        if (ia < 0 || ib < 0) {
          return ia >= 0 && ib < 0;  // unknown elements keep their place after known ones
        }
        return ia < ib;
      };
    };
    std::stable_sort(fromPatch.begin(), fromPatch.end(), byIndexIn(patchOrder));
    std::stable_sort(serverOnly.begin(), serverOnly.end(), byIndexIn(serverOrder));
    json out = json::array();
    size_t i = 0, j = 0;
    while (i < serverOnly.size() || j < fromPatch.size()) {
      if (j >= fromPatch.size()) {
        out.push_back(std::move(serverOnly[i++]));
      } else if (i >= serverOnly.size()) {
        out.push_back(std::move(fromPatch[j++]));
      } else {
        // A server element goes first only when both are on the server and it comes first there.
        ptrdiff_t li = indexIn(serverOrder, serverOnly[i], mergeKey);
        ptrdiff_t ri = indexIn(serverOrder, fromPatch[j], mergeKey);
        if (li >= 0 && ri >= 0 && li < ri) {
          out.push_back(std::move(serverOnly[i++]));
        } else {
          out.push_back(std::move(fromPatch[j++]));
        }
      }
    }
    return out;
  }

  Resource resource_;
};

ApiResult<json> applyJsonPatch(const json& original, const json& patch) {
  // jsonpatch.DecodePatch only checks the shape; everything else fails when applied.
  if (!patch.is_array()) {
    return badRequest("json: cannot unmarshal " + std::string(goJsonKind(patch)) +
                      " into Go value of type jsonpatch.Patch");
  }
  for (const json& op : patch) {
    if (!op.is_object()) {
      return badRequest("json: cannot unmarshal " + std::string(goJsonKind(op)) +
                        " into Go value of type jsonpatch.Operation");
    }
  }
  try {
    // One operation at a time: nlohmann asserts (rather than throws) on an add under a string or
    // number, which evanphx/json-patch refuses as not applicable.
    json doc = original;
    for (const json& op : patch) {
      const json& kind = op.contains("op") ? op.at("op") : json();
      const bool adds = kind == "add" || kind == "copy" || kind == "move";
      if (adds && op.contains("path") && op.at("path").is_string()) {
        const json::json_pointer target(op.at("path").get<std::string>());
        if (!target.empty() && doc.contains(target.parent_pointer()) &&
            !doc.at(target.parent_pointer()).is_structured()) {
          return unprocessable();
        }
      }
      doc.patch_inplace(json::array({op}));
    }
    return doc;
  } catch (const json::exception&) {
    return unprocessable();
  }
}

}  // namespace

std::string goFormat(const json& value) {
  switch (value.type()) {
    case json::value_t::object: {
      std::string out = "map[";
      bool first = true;
      for (const auto& [k, v] : value.items()) {  // nlohmann keeps keys sorted, as fmt does
        out += first ? "" : " ";
        out += k + ":" + goFormat(v);
        first = false;
      }
      return out + "]";
    }
    case json::value_t::array: {
      std::string out = "[";
      for (size_t i = 0; i < value.size(); ++i) {
        out += (i == 0 ? "" : " ") + goFormat(value[i]);
      }
      return out + "]";
    }
    case json::value_t::string:
      return value.get<std::string>();
    case json::value_t::null:
      return "<nil>";
    default:
      return value.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

ApiResult<json> applyPatch(Resource resource, PatchType type, const json& original,
                           const json& patch) {
  switch (type) {
    case PatchType::Json:
      return applyJsonPatch(original, patch);
    case PatchType::Merge: {
      json out = original;
      out.merge_patch(patch);
      return out;
    }
    case PatchType::StrategicMerge:
      if (!patch.is_object()) {
        return badRequest("json: cannot unmarshal " + std::string(goJsonKind(patch)) +
                          " into Go value of type map[string]interface {}");
      }
      try {
        return StrategicMerge(resource).mergeMap(original, patch, "");
      } catch (const PatchFailure& failure) {
        return failure.error;
      }
  }
  return badRequest("unknown Content-Type header for patch");
}

std::string dumpJson(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace berth::apiserver
