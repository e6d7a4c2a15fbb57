#include "pkg/api/decode.h"

#include <cstdint>
#include <exception>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/util/quote.h"

namespace berth::api {
namespace {

using nlohmann::json;

// --- Field paths and errors ----------------------------------------------------------------------

// A JSON field path built on the stack as decoding descends ("spec.containers[0].name"); the string
// is only assembled when an error needs it. Paths live in the caller's frame and are never stored.
class Path {
 public:
  Path() = default;

  Path child(std::string_view key) const { return Path(this, key); }
  Path index(size_t i) const { return Path(this, i); }

  std::string str() const {
    if (parent_ == nullptr) {
      return "";
    }
    std::string s = parent_->str();
    if (is_index_) {
      s += "[" + std::to_string(index_) + "]";
    } else {
      if (!s.empty()) {
        s += ".";
      }
      s += key_;
    }
    return s;
  }

 private:
  Path(const Path* parent, std::string_view key) : parent_(parent), key_(key) {}
  Path(const Path* parent, size_t i) : parent_(parent), index_(i), is_index_(true) {}

  const Path* parent_ = nullptr;
  std::string_view key_;
  size_t index_ = 0;
  bool is_index_ = false;
};

// Thrown inside this file only; decodePod/decodeNode turn it into a util::Error.
struct FieldError {
  std::string path;
  std::string message;

  std::string text() const { return path.empty() ? message : path + ": " + message; }
};

[[noreturn]] void fail(const Path& p, std::string message) {
  throw FieldError{p.str(), std::move(message)};
}

[[noreturn]] void wrongType(const Path& p, std::string_view want, const json& got) {
  fail(p, "expected " + std::string(want) + ", got " + got.type_name());
}

// field.NotSupported's wording, so messages read like the API server's validation errors.
[[noreturn]] void notSupported(const Path& p, std::string_view value,
                               std::initializer_list<std::string_view> supported) {
  std::string m = "Unsupported value: " + util::quoteGo(value) + ": supported values: ";
  bool first = true;
  for (std::string_view s : supported) {
    if (!first) {
      m += ", ";
    }
    first = false;
    m += util::quoteGo(s);
  }
  fail(p, std::move(m));
}

// --- Readers: one overload per target type -------------------------------------------------------
// Each reads a non-null JSON value into `out`. Null values never reach a reader: like Go's
// encoding/json, null leaves a field at its zero value (absent), and a null list element or map
// value becomes a default-constructed element.

void read(const json& j, const Path& p, std::string& out);
void read(const json& j, const Path& p, bool& out);
void read(const json& j, const Path& p, int32_t& out);
void read(const json& j, const Path& p, int64_t& out);
void read(const json& j, const Path& p, resource::Quantity& out);
void read(const json& j, const Path& p, Timestamp& out);
void read(const json& j, const Path& p, StringMap& out);
void read(const json& j, const Path& p, ResourceList& out);
void read(const json& j, const Path& p, NodeSelectorOperator& out);
void read(const json& j, const Path& p, OwnerReference& out);
void read(const json& j, const Path& p, ObjectMeta& out);
void read(const json& j, const Path& p, NodeSelectorRequirement& out);
void read(const json& j, const Path& p, NodeSelectorTerm& out);
void read(const json& j, const Path& p, NodeSelector& out);
void read(const json& j, const Path& p, PreferredSchedulingTerm& out);
void read(const json& j, const Path& p, NodeAffinity& out);
void read(const json& j, const Path& p, LabelSelectorRequirement& out);
void read(const json& j, const Path& p, LabelSelector& out);
void read(const json& j, const Path& p, PodAffinityTerm& out);
void read(const json& j, const Path& p, WeightedPodAffinityTerm& out);
void read(const json& j, const Path& p, PodAffinity& out);
void read(const json& j, const Path& p, Affinity& out);
void read(const json& j, const Path& p, TopologySpreadConstraint& out);
void read(const json& j, const Path& p, Volume& out);
void read(const json& j, const Path& p, PodResourceClaim& out);
void read(const json& j, const Path& p, Toleration& out);
void read(const json& j, const Path& p, ResourceRequirements& out);
void read(const json& j, const Path& p, ContainerPort& out);
void read(const json& j, const Path& p, Container& out);
void read(const json& j, const Path& p, PodSpec& out);
void read(const json& j, const Path& p, PodCondition& out);
void read(const json& j, const Path& p, PodStatus& out);
void read(const json& j, const Path& p, Pod& out);
void read(const json& j, const Path& p, Taint& out);
void read(const json& j, const Path& p, NodeSpec& out);
void read(const json& j, const Path& p, NodeCondition& out);
void read(const json& j, const Path& p, ContainerImage& out);
void read(const json& j, const Path& p, NodeStatus& out);
void read(const json& j, const Path& p, Node& out);
void read(const json& j, const Path& p, Namespace& out);
void read(const json& j, const Path& p, Service& out);
void read(const json& j, const Path& p, ReplicaSet& out);
void read(const json& j, const Path& p, StatefulSet& out);
void read(const json& j, const Path& p, ReplicationController& out);
void read(const json& j, const Path& p, ObjectReference& out);
void read(const json& j, const Path& p, CSIPersistentVolumeSource& out);
void read(const json& j, const Path& p, TopologySelectorLabelRequirement& out);
void read(const json& j, const Path& p, TopologySelectorTerm& out);
void read(const json& j, const Path& p, CSINodeDriver& out);

template <typename T>
void read(const json& j, const Path& p, std::vector<T>& out) {
  if (!j.is_array()) {
    wrongType(p, "array", j);
  }
  out.clear();
  out.resize(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_null()) {
      read(j[i], p.index(i), out[i]);
    }
  }
}

template <typename T>
void read(const json& j, const Path& p, std::optional<T>& out) {
  T value{};
  read(j, p, value);
  out = std::move(value);
}

template <typename V>
void readMap(const json& j, const Path& p, std::map<std::string, V>& out) {
  if (!j.is_object()) {
    wrongType(p, "object", j);
  }
  out.clear();
  for (const auto& [key, value] : j.items()) {
    V v{};
    if (!value.is_null()) {
      read(value, p.child(key), v);
    }
    out.emplace(key, std::move(v));
  }
}

void expectObject(const json& j, const Path& p) {
  if (!j.is_object()) {
    wrongType(p, "object", j);
  }
}

// Reads obj[key] into out unless the key is missing or null.
template <typename T>
void get(const json& obj, const Path& p, std::string_view key, T& out) {
  const auto it = obj.find(key);
  if (it != obj.end() && !it->is_null()) {
    read(*it, p.child(key), out);
  }
}

void read(const json& j, const Path& p, std::string& out) {
  if (!j.is_string()) {
    wrongType(p, "string", j);
  }
  out = j.get<std::string>();
}

void read(const json& j, const Path& p, bool& out) {
  if (!j.is_boolean()) {
    wrongType(p, "boolean", j);
  }
  out = j.get<bool>();
}

// Go's decoder puts only integer literals in range into an int field: 1.0, 1e3 and 2^31 fail.
template <typename Int>
Int readInteger(const json& j, const Path& p, std::string_view type) {
  constexpr auto kMin = static_cast<int64_t>(std::numeric_limits<Int>::min());
  constexpr auto kMax = static_cast<int64_t>(std::numeric_limits<Int>::max());
  if (j.is_number_unsigned()) {
    const auto v = j.get<uint64_t>();
    if (v <= static_cast<uint64_t>(kMax)) {
      return static_cast<Int>(v);
    }
  } else if (j.is_number_integer()) {
    const auto v = j.get<int64_t>();
    if (v >= kMin && v <= kMax) {
      return static_cast<Int>(v);
    }
  }
  if (j.is_number()) {
    fail(p, "expected " + std::string(type) + ", got number " + j.dump());
  }
  wrongType(p, type, j);
}

void read(const json& j, const Path& p, int32_t& out) { out = readInteger<int32_t>(j, p, "int32"); }

void read(const json& j, const Path& p, int64_t& out) { out = readInteger<int64_t>(j, p, "int64"); }

// The length of the Unicode space (Go's unicode.IsSpace) that `s` starts with (atEnd: ends with),
// 0 if none. UTF-8: U+0085, U+00A0, U+1680, U+2000-200A, U+2028-2029, U+202F, U+205F, U+3000.
size_t goSpaceLength(std::string_view s, bool atEnd) {
  const auto isSpace = [](std::string_view r) {
    if (r.size() == 1) return r[0] == ' ' || (r[0] >= '\t' && r[0] <= '\r');
    if (r == "\xc2\x85" || r == "\xc2\xa0" || r == "\xe1\x9a\x80" || r == "\xe3\x80\x80")
      return true;
    if (r.size() != 3 || r[0] != '\xe2') return false;
    const auto b1 = static_cast<unsigned char>(r[1]);
    const auto b2 = static_cast<unsigned char>(r[2]);
    return (b1 == 0x80 && (b2 <= 0x8a || b2 == 0xa8 || b2 == 0xa9 || b2 == 0xaf)) ||
           (b1 == 0x81 && b2 == 0x9f);
  };
  for (size_t n = 1; n <= 3 && n <= s.size(); ++n) {
    if (isSpace(atEnd ? s.substr(s.size() - n) : s.substr(0, n))) return n;
  }
  return 0;
}

// strings.TrimSpace: Unicode spaces, not only ASCII ones.
std::string_view trimGoSpace(std::string_view s) {
  while (size_t n = goSpaceLength(s, false)) s.remove_prefix(n);
  while (size_t n = goSpaceLength(s, true)) s.remove_suffix(n);
  return s;
}

// Quantity.UnmarshalJSON parses the literal's text, so 2, 0.5 and "500m" are all quantities. It
// trims spaces from a string first (ParseQuantity itself refuses "1 ").
void read(const json& j, const Path& p, resource::Quantity& out) {
  std::string text;
  if (j.is_string()) {
    text = std::string(trimGoSpace(j.get_ref<const std::string&>()));
  } else if (j.is_number_unsigned()) {
    text = std::to_string(j.get<uint64_t>());
  } else if (j.is_number_integer()) {
    text = std::to_string(j.get<int64_t>());
  } else if (j.is_number_float()) {
    text = j.dump();
  } else {
    wrongType(p, "quantity (string or number)", j);
  }
  auto q = resource::Quantity::parse(text);
  if (!q.ok()) {
    fail(p, q.error().message);
  }
  out = std::move(q).value();
}

void read(const json& j, const Path& p, Timestamp& out) {
  if (!j.is_string()) {
    wrongType(p, "string", j);
  }
  auto t = parseTimestamp(j.get_ref<const std::string&>());
  if (!t.ok()) {
    fail(p, t.error().message);
  }
  out = *t;
}

void read(const json& j, const Path& p, StringMap& out) { readMap(j, p, out); }

void read(const json& j, const Path& p, ResourceList& out) { readMap(j, p, out); }

void read(const json& j, const Path& p, NodeSelectorOperator& out) {
  std::string op;
  read(j, p, op);
  static const std::pair<std::string_view, NodeSelectorOperator> kOps[] = {
      {"In", NodeSelectorOperator::In},
      {"NotIn", NodeSelectorOperator::NotIn},
      {"Exists", NodeSelectorOperator::Exists},
      {"DoesNotExist", NodeSelectorOperator::DoesNotExist},
      {"Gt", NodeSelectorOperator::Gt},
      {"Lt", NodeSelectorOperator::Lt},
  };
  for (const auto& [name, value] : kOps) {
    if (op == name) {
      out = value;
      return;
    }
  }
  fail(p, "Invalid value: " + util::quoteGo(op) + ": not a valid selector operator");
}

// --- Metadata ------------------------------------------------------------------------------------

void read(const json& j, const Path& p, OwnerReference& out) {
  expectObject(j, p);
  get(j, p, "apiVersion", out.apiVersion);
  get(j, p, "kind", out.kind);
  get(j, p, "name", out.name);
  get(j, p, "uid", out.uid);
  get(j, p, "controller", out.controller);
}

void read(const json& j, const Path& p, ObjectMeta& out) {
  expectObject(j, p);
  get(j, p, "name", out.name);
  get(j, p, "namespace", out.namespace_);
  get(j, p, "uid", out.uid);
  get(j, p, "resourceVersion", out.resourceVersion);
  get(j, p, "labels", out.labels);
  get(j, p, "annotations", out.annotations);
  get(j, p, "creationTimestamp", out.creationTimestamp);
  get(j, p, "deletionTimestamp", out.deletionTimestamp);
  get(j, p, "ownerReferences", out.ownerReferences);
}

// --- Pod -----------------------------------------------------------------------------------------

void read(const json& j, const Path& p, NodeSelectorRequirement& out) {
  expectObject(j, p);
  get(j, p, "key", out.key);
  const auto op = j.find("operator");
  if (op == j.end() || op->is_null()) {
    fail(p.child("operator"), "Invalid value: \"\": not a valid selector operator");
  }
  read(*op, p.child("operator"), out.op);
  get(j, p, "values", out.values);
}

void read(const json& j, const Path& p, NodeSelectorTerm& out) {
  expectObject(j, p);
  get(j, p, "matchExpressions", out.matchExpressions);
  get(j, p, "matchFields", out.matchFields);
}

void read(const json& j, const Path& p, NodeSelector& out) {
  expectObject(j, p);
  get(j, p, "nodeSelectorTerms", out.nodeSelectorTerms);
}

void read(const json& j, const Path& p, PreferredSchedulingTerm& out) {
  expectObject(j, p);
  get(j, p, "weight", out.weight);
  get(j, p, "preference", out.preference);
}

void read(const json& j, const Path& p, NodeAffinity& out) {
  expectObject(j, p);
  get(j, p, "requiredDuringSchedulingIgnoredDuringExecution",
      out.requiredDuringSchedulingIgnoredDuringExecution);
  get(j, p, "preferredDuringSchedulingIgnoredDuringExecution",
      out.preferredDuringSchedulingIgnoredDuringExecution);
}

// Operators and values are checked by the plugin that compiles the selector (its PreFilter
// reports one bad pod), not here.
void read(const json& j, const Path& p, LabelSelectorRequirement& out) {
  expectObject(j, p);
  get(j, p, "key", out.key);
  get(j, p, "operator", out.op);
  get(j, p, "values", out.values);
}

void read(const json& j, const Path& p, LabelSelector& out) {
  expectObject(j, p);
  get(j, p, "matchLabels", out.matchLabels);
  get(j, p, "matchExpressions", out.matchExpressions);
}

void read(const json& j, const Path& p, PodAffinityTerm& out) {
  expectObject(j, p);
  get(j, p, "labelSelector", out.labelSelector);
  get(j, p, "namespaces", out.namespaces);
  get(j, p, "topologyKey", out.topologyKey);
  get(j, p, "namespaceSelector", out.namespaceSelector);
  get(j, p, "matchLabelKeys", out.matchLabelKeys);
  get(j, p, "mismatchLabelKeys", out.mismatchLabelKeys);
}

void read(const json& j, const Path& p, WeightedPodAffinityTerm& out) {
  expectObject(j, p);
  get(j, p, "weight", out.weight);
  get(j, p, "podAffinityTerm", out.podAffinityTerm);
}

void read(const json& j, const Path& p, PodAffinity& out) {
  expectObject(j, p);
  get(j, p, "requiredDuringSchedulingIgnoredDuringExecution",
      out.requiredDuringSchedulingIgnoredDuringExecution);
  get(j, p, "preferredDuringSchedulingIgnoredDuringExecution",
      out.preferredDuringSchedulingIgnoredDuringExecution);
}

void read(const json& j, const Path& p, Affinity& out) {
  expectObject(j, p);
  get(j, p, "nodeAffinity", out.nodeAffinity);
  get(j, p, "podAffinity", out.podAffinity);
  get(j, p, "podAntiAffinity", out.podAntiAffinity);
}

void read(const json& j, const Path& p, TopologySpreadConstraint& out) {
  expectObject(j, p);
  get(j, p, "maxSkew", out.maxSkew);
  get(j, p, "topologyKey", out.topologyKey);
  get(j, p, "whenUnsatisfiable", out.whenUnsatisfiable);
  get(j, p, "labelSelector", out.labelSelector);
  get(j, p, "minDomains", out.minDomains);
  get(j, p, "nodeAffinityPolicy", out.nodeAffinityPolicy);
  get(j, p, "nodeTaintsPolicy", out.nodeTaintsPolicy);
  get(j, p, "matchLabelKeys", out.matchLabelKeys);
}

// The identity of an in-tree disk source (pod volume or PV) that VolumeRestrictions compares.
void readDisk(const json& source, const Path& p, std::string_view kind, std::string& disk,
              std::string& rbdPool, std::vector<std::string>& rbdMonitors) {
  if (kind == "gcePersistentDisk") {
    get(source, p, "pdName", disk);
  } else if (kind == "awsElasticBlockStore") {
    get(source, p, "volumeID", disk);
  } else if (kind == "iscsi") {
    get(source, p, "iqn", disk);
  } else if (kind == "rbd") {
    get(source, p, "image", disk);
    get(source, p, "pool", rbdPool);
    get(source, p, "monitors", rbdMonitors);
  }
}

// The source is the one non-null field besides the name (validation allows exactly one).
void read(const json& j, const Path& p, Volume& out) {
  expectObject(j, p);
  get(j, p, "name", out.name);
  for (const auto& [key, value] : j.items()) {
    if (key == "name" || value.is_null()) {
      continue;
    }
    out.source = key;
    const Path sp = p.child(key);
    expectObject(value, sp);
    get(value, sp, "readOnly", out.readOnly);
    if (key == "persistentVolumeClaim") {
      get(value, sp, "claimName", out.claimName);
    } else if (key == "csi") {
      get(value, sp, "driver", out.csiDriver);
    } else {
      readDisk(value, sp, key, out.disk, out.rbdPool, out.rbdMonitors);
    }
    break;
  }
}

void read(const json& j, const Path& p, PodResourceClaim& out) {
  expectObject(j, p);
  get(j, p, "name", out.name);
}

// The effects validation accepts (validateTaintEffect), in its order.
void checkTaintEffect(const std::string& effect, const Path& p) {
  if (effect != kTaintEffectNoSchedule && effect != kTaintEffectPreferNoSchedule &&
      effect != kTaintEffectNoExecute) {
    notSupported(p, effect,
                 {kTaintEffectNoSchedule, kTaintEffectPreferNoSchedule, kTaintEffectNoExecute});
  }
}

void read(const json& j, const Path& p, Toleration& out) {
  expectObject(j, p);
  get(j, p, "key", out.key);
  out.operator_.clear();
  get(j, p, "operator", out.operator_);
  if (out.operator_.empty()) {
    out.operator_ = "Equal";  // the API's documented meaning of an empty operator
  } else if (out.operator_ != "Equal" && out.operator_ != "Exists") {
    notSupported(p.child("operator"), out.operator_, {"Equal", "Exists"});
  }
  get(j, p, "value", out.value);
  get(j, p, "effect", out.effect);
  if (!out.effect.empty()) {
    checkTaintEffect(out.effect, p.child("effect"));
  }
  get(j, p, "tolerationSeconds", out.tolerationSeconds);
}

void read(const json& j, const Path& p, ResourceRequirements& out) {
  expectObject(j, p);
  get(j, p, "requests", out.requests);
  get(j, p, "limits", out.limits);
}

void read(const json& j, const Path& p, ContainerPort& out) {
  expectObject(j, p);
  get(j, p, "name", out.name);
  get(j, p, "containerPort", out.containerPort);
  get(j, p, "hostPort", out.hostPort);
  out.protocol.clear();
  get(j, p, "protocol", out.protocol);
  if (out.protocol.empty()) {
    out.protocol = "TCP";  // SetDefaults_ContainerPort
  }
  get(j, p, "hostIP", out.hostIP);
}

void read(const json& j, const Path& p, Container& out) {
  expectObject(j, p);
  get(j, p, "name", out.name);
  get(j, p, "image", out.image);
  get(j, p, "resources", out.resources);
  get(j, p, "ports", out.ports);
  get(j, p, "restartPolicy", out.restartPolicy);
}

void read(const json& j, const Path& p, PodSpec& out) {
  expectObject(j, p);
  get(j, p, "schedulerName", out.schedulerName);
  get(j, p, "nodeName", out.nodeName);
  get(j, p, "nodeSelector", out.nodeSelector);
  get(j, p, "affinity", out.affinity);
  get(j, p, "tolerations", out.tolerations);
  get(j, p, "priority", out.priority);
  get(j, p, "priorityClassName", out.priorityClassName);
  get(j, p, "preemptionPolicy", out.preemptionPolicy);
  get(j, p, "initContainers", out.initContainers);
  get(j, p, "containers", out.containers);
  get(j, p, "overhead", out.overhead);
  get(j, p, "hostNetwork", out.hostNetwork);
  get(j, p, "topologySpreadConstraints", out.topologySpreadConstraints);
  get(j, p, "volumes", out.volumes);
  get(j, p, "resourceClaims", out.resourceClaims);
  get(j, p, "resources", out.resources);
  const auto gates = j.find("schedulingGates");
  if (gates != j.end() && !gates->is_null()) {
    const Path gp = p.child("schedulingGates");
    if (!gates->is_array()) {
      wrongType(gp, "array", *gates);
    }
    for (size_t i = 0; i < gates->size(); ++i) {
      const json& gate = (*gates)[i];
      std::string name;
      if (!gate.is_null()) {
        const Path ip = gp.index(i);
        expectObject(gate, ip);
        get(gate, ip, "name", name);
      }
      out.schedulingGates.push_back(std::move(name));
    }
  }
}

void read(const json& j, const Path& p, PodCondition& out) {
  expectObject(j, p);
  get(j, p, "type", out.type);
  get(j, p, "status", out.status);
  get(j, p, "reason", out.reason);
  get(j, p, "message", out.message);
  get(j, p, "lastTransitionTime", out.lastTransitionTime);
}

void read(const json& j, const Path& p, PodStatus& out) {
  expectObject(j, p);
  get(j, p, "phase", out.phase);
  get(j, p, "conditions", out.conditions);
  get(j, p, "nominatedNodeName", out.nominatedNodeName);
  get(j, p, "startTime", out.startTime);
  get(j, p, "reason", out.reason);
  get(j, p, "message", out.message);
}

void read(const json& j, const Path& p, Pod& out) {
  expectObject(j, p);
  get(j, p, "metadata", out.metadata);
  get(j, p, "spec", out.spec);
  get(j, p, "status", out.status);
}

// --- Node ----------------------------------------------------------------------------------------

void read(const json& j, const Path& p, Taint& out) {
  expectObject(j, p);
  get(j, p, "key", out.key);
  get(j, p, "value", out.value);
  get(j, p, "effect", out.effect);
  if (out.effect.empty()) {
    fail(p.child("effect"), "Required value");
  }
  checkTaintEffect(out.effect, p.child("effect"));
}

void read(const json& j, const Path& p, NodeSpec& out) {
  expectObject(j, p);
  get(j, p, "unschedulable", out.unschedulable);
  get(j, p, "taints", out.taints);
}

void read(const json& j, const Path& p, NodeCondition& out) {
  expectObject(j, p);
  get(j, p, "type", out.type);
  get(j, p, "status", out.status);
  get(j, p, "reason", out.reason);
  get(j, p, "message", out.message);
}

void read(const json& j, const Path& p, ContainerImage& out) {
  expectObject(j, p);
  get(j, p, "names", out.names);
  get(j, p, "sizeBytes", out.sizeBytes);
}

void read(const json& j, const Path& p, NodeStatus& out) {
  expectObject(j, p);
  get(j, p, "capacity", out.capacity);
  get(j, p, "allocatable", out.allocatable);
  get(j, p, "conditions", out.conditions);
  get(j, p, "images", out.images);
}

void read(const json& j, const Path& p, Node& out) {
  expectObject(j, p);
  get(j, p, "metadata", out.metadata);
  get(j, p, "spec", out.spec);
  get(j, p, "status", out.status);
}

// --- Objects PodTopologySpread and InterPodAffinity read ----------------------------------------

// Reads spec.<key> of obj into out when spec and the key are present.
template <typename T>
void getSpec(const json& obj, const Path& p, std::string_view key, T& out) {
  const auto spec = obj.find("spec");
  if (spec == obj.end() || spec->is_null()) {
    return;
  }
  const Path sp = p.child("spec");
  expectObject(*spec, sp);
  get(*spec, sp, key, out);
}

void read(const json& j, const Path& p, Namespace& out) {
  expectObject(j, p);
  get(j, p, "metadata", out.metadata);
}

void read(const json& j, const Path& p, Service& out) {
  expectObject(j, p);
  get(j, p, "metadata", out.metadata);
  getSpec(j, p, "selector", out.selector);
}

void read(const json& j, const Path& p, ReplicaSet& out) {
  expectObject(j, p);
  get(j, p, "metadata", out.metadata);
  getSpec(j, p, "selector", out.selector);
}

void read(const json& j, const Path& p, StatefulSet& out) {
  expectObject(j, p);
  get(j, p, "metadata", out.metadata);
  getSpec(j, p, "selector", out.selector);
}

void read(const json& j, const Path& p, ReplicationController& out) {
  expectObject(j, p);
  get(j, p, "metadata", out.metadata);
  getSpec(j, p, "selector", out.selector);
}

void read(const json& j, const Path& p, PodDisruptionBudget& out) {
  expectObject(j, p);
  get(j, p, "metadata", out.metadata);
  getSpec(j, p, "selector", out.selector);
  const auto status = j.find("status");
  if (status == j.end() || status->is_null()) {
    return;
  }
  const Path sp = p.child("status");
  expectObject(*status, sp);
  get(*status, sp, "disruptionsAllowed", out.disruptionsAllowed);
  get(*status, sp, "disruptedPods", out.disruptedPods);
}

// --- Storage
// --------------------------------------------------------------------------------------

void read(const json& j, const Path& p, ObjectReference& out) {
  expectObject(j, p);
  get(j, p, "apiVersion", out.apiVersion);
  get(j, p, "kind", out.kind);
  get(j, p, "namespace", out.namespace_);
  get(j, p, "name", out.name);
  get(j, p, "uid", out.uid);
  get(j, p, "resourceVersion", out.resourceVersion);
}

void read(const json& j, const Path& p, PersistentVolumeClaimSpec& out) {
  expectObject(j, p);
  get(j, p, "accessModes", out.accessModes);
  get(j, p, "selector", out.selector);
  get(j, p, "resources", out.resources);
  get(j, p, "volumeName", out.volumeName);
  get(j, p, "storageClassName", out.storageClassName);
  get(j, p, "volumeMode", out.volumeMode);
  get(j, p, "volumeAttributesClassName", out.volumeAttributesClassName);
}

void read(const json& j, const Path& p, PersistentVolumeClaimStatus& out) {
  expectObject(j, p);
  get(j, p, "phase", out.phase);
  get(j, p, "accessModes", out.accessModes);
  get(j, p, "capacity", out.capacity);
}

void read(const json& j, const Path& p, PersistentVolumeClaim& out) {
  expectObject(j, p);
  get(j, p, "metadata", out.metadata);
  get(j, p, "spec", out.spec);
  get(j, p, "status", out.status);
}

void read(const json& j, const Path& p, CSIPersistentVolumeSource& out) {
  expectObject(j, p);
  get(j, p, "driver", out.driver);
  get(j, p, "volumeHandle", out.volumeHandle);
  get(j, p, "readOnly", out.readOnly);
}

// The keys of a PersistentVolumeSpec that are not its volume source.
bool isPersistentVolumeSpecField(std::string_view key) {
  static constexpr std::string_view kFields[] = {"capacity",
                                                 "accessModes",
                                                 "claimRef",
                                                 "storageClassName",
                                                 "nodeAffinity",
                                                 "volumeMode",
                                                 "mountOptions",
                                                 "persistentVolumeReclaimPolicy",
                                                 "volumeAttributesClassName"};
  for (std::string_view f : kFields) {
    if (key == f) {
      return true;
    }
  }
  return false;
}

void read(const json& j, const Path& p, PersistentVolumeSpec& out) {
  expectObject(j, p);
  get(j, p, "capacity", out.capacity);
  get(j, p, "accessModes", out.accessModes);
  get(j, p, "claimRef", out.claimRef);
  get(j, p, "storageClassName", out.storageClassName);
  const auto affinity = j.find("nodeAffinity");
  if (affinity != j.end() && !affinity->is_null()) {
    const Path ap = p.child("nodeAffinity");
    expectObject(*affinity, ap);
    get(*affinity, ap, "required", out.nodeAffinity);
  }
  get(j, p, "volumeMode", out.volumeMode);
  get(j, p, "persistentVolumeReclaimPolicy", out.persistentVolumeReclaimPolicy);
  get(j, p, "volumeAttributesClassName", out.volumeAttributesClassName);
  for (const auto& [key, value] : j.items()) {
    if (isPersistentVolumeSpecField(key) || value.is_null()) {
      continue;
    }
    out.source = key;
    const Path sp = p.child(key);
    expectObject(value, sp);
    if (key == "csi") {
      read(value, sp, out.csi);
    } else {
      std::string pool;
      std::vector<std::string> monitors;
      readDisk(value, sp, key, out.disk, pool, monitors);
    }
    break;
  }
}

void read(const json& j, const Path& p, PersistentVolumeStatus& out) {
  expectObject(j, p);
  get(j, p, "phase", out.phase);
}

void read(const json& j, const Path& p, PersistentVolume& out) {
  expectObject(j, p);
  get(j, p, "metadata", out.metadata);
  get(j, p, "spec", out.spec);
  get(j, p, "status", out.status);
}

void read(const json& j, const Path& p, TopologySelectorLabelRequirement& out) {
  expectObject(j, p);
  get(j, p, "key", out.key);
  get(j, p, "values", out.values);
}

void read(const json& j, const Path& p, TopologySelectorTerm& out) {
  expectObject(j, p);
  get(j, p, "matchLabelExpressions", out.matchLabelExpressions);
}

// StorageClass has no spec: its fields are top-level.
void read(const json& j, const Path& p, StorageClass& out) {
  expectObject(j, p);
  get(j, p, "metadata", out.metadata);
  get(j, p, "provisioner", out.provisioner);
  get(j, p, "volumeBindingMode", out.volumeBindingMode);
  get(j, p, "allowedTopologies", out.allowedTopologies);
  get(j, p, "reclaimPolicy", out.reclaimPolicy);
}

void read(const json& j, const Path& p, CSINodeDriver& out) {
  expectObject(j, p);
  get(j, p, "name", out.name);
  get(j, p, "nodeID", out.nodeID);
  get(j, p, "topologyKeys", out.topologyKeys);
  const auto allocatable = j.find("allocatable");
  if (allocatable != j.end() && !allocatable->is_null()) {
    const Path ap = p.child("allocatable");
    expectObject(*allocatable, ap);
    get(*allocatable, ap, "count", out.allocatableCount);
  }
}

void read(const json& j, const Path& p, CSINode& out) {
  expectObject(j, p);
  get(j, p, "metadata", out.metadata);
  getSpec(j, p, "drivers", out.drivers);
}

void read(const json& j, const Path& p, CSIDriver& out) {
  expectObject(j, p);
  get(j, p, "metadata", out.metadata);
  getSpec(j, p, "attachRequired", out.attachRequired);
  getSpec(j, p, "storageCapacity", out.storageCapacity);
}

// CSIStorageCapacity has no spec either.
void read(const json& j, const Path& p, CSIStorageCapacity& out) {
  expectObject(j, p);
  get(j, p, "metadata", out.metadata);
  get(j, p, "nodeTopology", out.nodeTopology);
  get(j, p, "storageClassName", out.storageClassName);
  get(j, p, "capacity", out.capacity);
  get(j, p, "maximumVolumeSize", out.maximumVolumeSize);
}

// --- Object identity for messages ----------------------------------------------------------------

// metadata.<key> when it is a non-empty string, read leniently: the name must be available to
// prefix an error even when the error is elsewhere in metadata.
std::string metaString(const json& obj, std::string_view key) {
  if (!obj.is_object()) {
    return "";
  }
  const auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) {
    return "";
  }
  const auto v = meta->find(key);
  if (v == meta->end() || !v->is_string()) {
    return "";
  }
  return v->get<std::string>();
}

template <typename T>
util::Result<T> decodeObject(const json& j, std::string_view what) {
  try {
    T out;
    read(j, Path(), out);
    return out;
  } catch (const FieldError& e) {
    return util::invalidArgument(std::string(what) + " " + objectKey(j) + ": " + e.text());
  } catch (const std::exception& e) {
    // Not expected (the readers check types first), but no exception may leave the module.
    return util::invalidArgument(std::string(what) + " " + objectKey(j) + ": " + e.what());
  }
}

}  // namespace

std::string objectKey(const json& obj) {
  const std::string name = metaString(obj, "name");
  if (name.empty()) {
    return "<unknown>";
  }
  const std::string ns = metaString(obj, "namespace");
  return ns.empty() ? name : ns + "/" + name;
}

namespace {

// What kube-apiserver can store bounds what berth keeps of one pod. etcd refuses an object over
// 1.5 MiB of protobuf (kube-apiserver's request limit, 3 MiB of JSON, is looser). In protobuf
// every JSON value that is not null takes at least two bytes (a tag and a length or varint), a
// string at least its bytes, and a container at least 24 (its entry, name, image and the
// defaulted terminationMessagePath). A pod past these bounds was never stored: it comes from a
// lying or broken server, and decoding it whole could cost berth a gigabyte.
constexpr size_t kEtcdObjectBytes = 1536 * 1024;
constexpr size_t kMaxPodValues = kEtcdObjectBytes / 2;
constexpr size_t kMaxPodStringBytes = kEtcdObjectBytes;
constexpr size_t kMaxPodContainers = kEtcdObjectBytes / 24;

struct ValueCount {
  size_t values = 0;
  size_t stringBytes = 0;
};

// Counts without recursion (the depth is bounded by parseJson, the breadth is not).
ValueCount countValues(const json& root) {
  ValueCount count;
  std::vector<const json*> pending{&root};
  while (!pending.empty()) {
    const json* v = pending.back();
    pending.pop_back();
    if (v->is_null()) continue;
    ++count.values;
    if (v->is_string()) {
      count.stringBytes += v->get_ref<const json::string_t&>().size();
    } else if (v->is_object()) {
      for (const auto& [key, child] : v->items()) {
        count.stringBytes += key.size();
        pending.push_back(&child);
      }
    } else if (v->is_array()) {
      for (const json& child : *v) pending.push_back(&child);
    }
  }
  return count;
}

// Why the pod cannot have been stored, naming the field that makes it so; "" when it can.
std::string podSizeRefusal(const json& j) {
  const auto spec = j.find("spec");
  if (spec != j.end() && spec->is_object()) {
    size_t containers = 0;
    std::string largest;
    size_t largestCount = 0;
    for (const char* field : {"containers", "initContainers", "ephemeralContainers"}) {
      const auto list = spec->find(field);
      if (list == spec->end() || !list->is_array()) continue;
      containers += list->size();
      if (list->size() > largestCount) {
        largestCount = list->size();
        largest = field;
      }
    }
    if (containers > kMaxPodContainers) {
      return "spec." + largest + ": " + std::to_string(containers) + " containers, more than the " +
             std::to_string(kMaxPodContainers) + " an object within etcd's 1.5 MiB limit can hold";
    }
  }
  const ValueCount total = countValues(j);
  if (total.values <= kMaxPodValues && total.stringBytes <= kMaxPodStringBytes) return "";
  // Name the field, two levels down ("metadata.labels", "spec.tolerations"), that weighs most.
  std::string field;
  ValueCount heaviest;
  for (const char* top : {"metadata", "spec", "status"}) {
    const auto part = j.find(top);
    if (part == j.end() || !part->is_object()) continue;
    for (const auto& [key, child] : part->items()) {
      const ValueCount c = countValues(child);
      if (c.values + c.stringBytes > heaviest.values + heaviest.stringBytes) {
        heaviest = c;
        field = std::string(top) + "." + key;
      }
    }
  }
  if (field.empty()) field = "the object";
  if (total.values > kMaxPodValues) {
    return field + ": " + std::to_string(heaviest.values) + " of the pod's " +
           std::to_string(total.values) + " values, more than the " +
           std::to_string(kMaxPodValues) + " an object within etcd's 1.5 MiB limit can hold";
  }
  return field + ": " + std::to_string(heaviest.stringBytes) + " of the pod's " +
         std::to_string(total.stringBytes) +
         " bytes of strings, more than an object within etcd's 1.5 MiB limit can hold";
}

// What berth keeps of a pod it refuses for its size: enough to name it, find its profile and
// emit an event; nothing that costs memory in proportion to the pod.
json podSkeleton(const json& j) {
  json out = json::object();
  const auto copy = [&](const char* part, std::initializer_list<const char*> keys) {
    const auto from = j.find(part);
    if (from == j.end() || !from->is_object()) return;
    json& to = out[part];
    to = json::object();
    for (const char* key : keys) {
      const auto v = from->find(key);
      if (v != from->end() && (v->is_string() || v->is_number())) to[key] = *v;
    }
  };
  copy("metadata",
       {"name", "namespace", "uid", "resourceVersion", "creationTimestamp", "deletionTimestamp"});
  copy("spec", {"schedulerName", "nodeName", "priority", "priorityClassName"});
  copy("status", {"phase", "nominatedNodeName"});
  return out;
}

}  // namespace

util::Result<Pod> decodePod(const json& j) {
  if (std::string refusal = podSizeRefusal(j); !refusal.empty()) {
    auto skeleton = decodeObject<Pod>(podSkeleton(j), "pod");
    if (!skeleton.ok()) return skeleton.error();
    skeleton->sizeRefusal = "pod " + objectKey(j) + ": " + refusal;
    return skeleton;
  }
  return decodeObject<Pod>(j, "pod");
}

util::Result<Node> decodeNode(const json& j) { return decodeObject<Node>(j, "node"); }

util::Result<Namespace> decodeNamespace(const json& j) {
  return decodeObject<Namespace>(j, "namespace");
}

util::Result<Service> decodeService(const json& j) { return decodeObject<Service>(j, "service"); }

util::Result<ReplicaSet> decodeReplicaSet(const json& j) {
  return decodeObject<ReplicaSet>(j, "replicaset");
}

util::Result<StatefulSet> decodeStatefulSet(const json& j) {
  return decodeObject<StatefulSet>(j, "statefulset");
}

util::Result<ReplicationController> decodeReplicationController(const json& j) {
  return decodeObject<ReplicationController>(j, "replicationcontroller");
}

util::Result<PodDisruptionBudget> decodePodDisruptionBudget(const json& j) {
  return decodeObject<PodDisruptionBudget>(j, "poddisruptionbudget");
}

util::Result<PersistentVolumeClaim> decodePersistentVolumeClaim(const json& j) {
  return decodeObject<PersistentVolumeClaim>(j, "persistentvolumeclaim");
}

util::Result<PersistentVolume> decodePersistentVolume(const json& j) {
  return decodeObject<PersistentVolume>(j, "persistentvolume");
}

util::Result<StorageClass> decodeStorageClass(const json& j) {
  return decodeObject<StorageClass>(j, "storageclass");
}

util::Result<CSINode> decodeCSINode(const json& j) { return decodeObject<CSINode>(j, "csinode"); }

util::Result<CSIDriver> decodeCSIDriver(const json& j) {
  return decodeObject<CSIDriver>(j, "csidriver");
}

util::Result<CSIStorageCapacity> decodeCSIStorageCapacity(const json& j) {
  return decodeObject<CSIStorageCapacity>(j, "csistoragecapacity");
}

}  // namespace berth::api
