#include "pkg/apiserver/field_selector.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <utility>

#include "pkg/util/quote.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

// The field labels each resource's conversion function accepts (pkg/apis/core/v1/conversion.go).
bool supportsField(Resource resource, std::string_view field) {
  if (field == "metadata.name" || field == "metadata.namespace") {
    return true;
  }
  static constexpr std::string_view kPod[] = {"spec.nodeName",
                                              "spec.restartPolicy",
                                              "spec.schedulerName",
                                              "spec.serviceAccountName",
                                              "spec.hostNetwork",
                                              "status.phase",
                                              "status.nominatedNodeName",
                                              "status.podIP"};
  static constexpr std::string_view kEvent[] = {"involvedObject.kind",
                                                "involvedObject.namespace",
                                                "involvedObject.name",
                                                "involvedObject.uid",
                                                "involvedObject.apiVersion",
                                                "involvedObject.resourceVersion",
                                                "involvedObject.fieldPath",
                                                "reason",
                                                "reportingComponent",
                                                "source",
                                                "type"};
  switch (resource) {
    case Resource::Pods:
      return std::find(std::begin(kPod), std::end(kPod), field) != std::end(kPod);
    case Resource::Nodes:
      return field == "spec.unschedulable";
    case Resource::Events:
      return std::find(std::begin(kEvent), std::end(kEvent), field) != std::end(kEvent);
    case Resource::Namespaces:
      return field == "status.phase";
    case Resource::Services:
      return field == "spec.clusterIP" || field == "spec.type";
    case Resource::ReplicationControllers:
      return field == "status.replicas";
    default:
      return false;
  }
}

// Splits on commas not escaped by a backslash (fields.splitTerms).
std::vector<std::string> splitTerms(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  bool escaped = false;
  for (char c : text) {
    if (escaped) {
      cur += c;
      escaped = false;
    } else if (c == '\\') {
      cur += c;
      escaped = true;
    } else if (c == ',') {
      out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(std::move(cur));
  return out;
}

// fields.UnescapeValue: only \\, \, and \= are escapes; a bare , or = is an error.
std::optional<std::string> unescapeValue(std::string_view text, std::string* error) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\') {
      if (i + 1 >= text.size() ||
          (text[i + 1] != '\\' && text[i + 1] != ',' && text[i + 1] != '=')) {
        *error = "invalid field selector: invalid escape sequence: " +
                 std::string(text.substr(i, std::min<size_t>(2, text.size() - i)));
        return std::nullopt;
      }
      out += text[++i];
    } else if (c == ',' || c == '=') {
      *error = std::string("invalid field selector: unescaped character: ") + c;
      return std::nullopt;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

// The string at a dotted path, "" when absent; booleans print as Go's strconv.FormatBool.
std::string stringAt(const json& object, std::initializer_list<std::string_view> path,
                     std::string_view absentBool) {
  const json* cur = &object;
  for (std::string_view part : path) {
    if (!cur->is_object()) {
      return std::string(absentBool);
    }
    auto it = cur->find(std::string(part));
    if (it == cur->end()) {
      return std::string(absentBool);
    }
    cur = &*it;
  }
  if (cur->is_string()) {
    return cur->get<std::string>();
  }
  if (cur->is_boolean()) {
    return cur->get<bool>() ? "true" : "false";
  }
  return std::string(absentBool);
}

ApiResult<FieldSelector> FieldSelector::parse(Resource resource, std::string_view text) {
  FieldSelector out;
  std::vector<std::string> parts = splitTerms(text);
  std::sort(parts.begin(), parts.end());  // upstream sorts the terms
  for (const std::string& part : parts) {
    if (part.empty()) {
      continue;
    }
    // The leftmost operator wins; at one position != and == are tried before =.
    size_t at = std::string::npos;
    std::string_view op;
    for (size_t i = 0; i < part.size() && at == std::string::npos; ++i) {
      for (std::string_view candidate : {"!=", "==", "="}) {
        if (std::string_view(part).substr(i).starts_with(candidate)) {
          at = i;
          op = candidate;
          break;
        }
      }
    }
    if (at == std::string::npos) {
      return badRequest("invalid selector: '" + std::string(text) + "'; can't understand '" + part +
                        "'");
    }
    std::string error;
    auto value = unescapeValue(std::string_view(part).substr(at + op.size()), &error);
    if (!value) {
      return badRequest(error);
    }
    Term term{part.substr(0, at), std::move(*value), op != "!="};
    if (!supportsField(resource, term.field)) {
      // Kinds with no field label conversion of their own (apps/v1 registers none).
      if (resource == Resource::Leases || resource == Resource::EventsV1 ||
          resource == Resource::ReplicaSets || resource == Resource::StatefulSets ||
          resource == Resource::PodDisruptionBudgets || resource == Resource::StorageClasses ||
          resource == Resource::CSINodes || resource == Resource::CSIDrivers ||
          resource == Resource::CSIStorageCapacities || resource == Resource::ConfigMaps) {
        return badRequest(util::quoteGo(term.field) +
                          " is not a known field selector: only \"metadata.name\", "
                          "\"metadata.namespace\"");
      }
      return badRequest("field label not supported: " + term.field);
    }
    out.terms_.push_back(std::move(term));
  }
  return out;
}

bool FieldSelector::matches(Resource resource, const json& object) const {
  for (const Term& t : terms_) {
    if ((fieldValue(resource, object, t.field) == t.value) != t.equals) {
      return false;
    }
  }
  return true;
}

std::string fieldValue(Resource resource, const json& object, std::string_view field) {
  if (field == "metadata.name") {
    return stringAt(object, {"metadata", "name"});
  }
  if (field == "metadata.namespace") {
    return stringAt(object, {"metadata", "namespace"});
  }
  if (resource == Resource::Pods) {
    if (field == "spec.hostNetwork") {
      return stringAt(object, {"spec", "hostNetwork"}, "false");
    }
    auto dot = field.find('.');
    if (dot == std::string_view::npos) {
      return "";
    }
    return stringAt(object, {field.substr(0, dot), field.substr(dot + 1)});
  }
  if (resource == Resource::Nodes && field == "spec.unschedulable") {
    return stringAt(object, {"spec", "unschedulable"}, "false");
  }
  if (resource == Resource::ReplicationControllers && field == "status.replicas") {
    // An integer, compared as its decimal text.
    auto status = object.find("status");
    if (status != object.end() && status->is_object()) {
      auto replicas = status->find("replicas");
      if (replicas != status->end() && replicas->is_number_integer()) {
        return std::to_string(replicas->get<int64_t>());
      }
    }
    return "0";
  }
  if (resource == Resource::Namespaces || resource == Resource::Services) {
    auto dot = field.find('.');
    return dot == std::string_view::npos
               ? ""
               : stringAt(object, {field.substr(0, dot), field.substr(dot + 1)});
  }
  if (resource == Resource::Events) {
    if (field == "source") {
      return stringAt(object, {"source", "component"});
    }
    auto dot = field.find('.');
    if (dot == std::string_view::npos) {
      return stringAt(object, {field});
    }
    return stringAt(object, {field.substr(0, dot), field.substr(dot + 1)});
  }
  return "";
}

}  // namespace berth::apiserver
