#include "pkg/apiserver/validation.h"

#include <algorithm>

#include "pkg/util/quote.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

constexpr std::string_view kLabelFormat = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
constexpr std::string_view kSubdomainFormat =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr std::string_view kDns1035Format = "[a-z]([-a-z0-9]*[a-z0-9])?";

bool lowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool isLabel(std::string_view s) {
  return !s.empty() && lowerAlnum(s.front()) && lowerAlnum(s.back()) &&
         std::all_of(s.begin(), s.end(), [](char c) { return lowerAlnum(c) || c == '-'; });
}

bool isSubdomain(std::string_view s) {
  for (;;) {
    const size_t dot = s.find('.');
    if (!isLabel(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

std::string maxLenError(size_t n) {
  return "must be no more than " + std::to_string(n) + " characters";
}

// apimachinery's RegexError: "msg (e.g. 'a',  or 'b', regex used for validation is 'fmt')".
std::string regexError(std::string_view msg, std::string_view format,
                       const std::vector<std::string_view>& examples) {
  std::string out(msg);
  out += " (e.g. ";
  for (size_t i = 0; i < examples.size(); ++i) {
    if (i > 0) out += " or ";
    out += "'" + std::string(examples[i]) + "', ";
  }
  return out + "regex used for validation is '" + std::string(format) + "')";
}

struct FieldError {
  std::string field;
  std::string reason;  // FieldValueInvalid...
  std::string detail;  // "Invalid value: \"x\": ..."
};

ApiError invalidObject(const ResourceInfo& info, std::string_view name,
                       const std::vector<FieldError>& errors) {
  std::string qualifiedKind(info.kind);
  if (!info.group.empty()) qualifiedKind += "." + std::string(info.group);
  std::string list;
  api::StatusDetails details{
      .name = std::string(name), .group = std::string(info.group), .kind = std::string(info.kind)};
  for (const FieldError& e : errors) {
    list += (list.empty() ? "" : ", ") + e.field + ": " + e.detail;
    details.causes.push_back({.reason = e.reason, .message = e.detail, .field = e.field});
  }
  ApiError error = apiError(422, "Invalid",
                            qualifiedKind + " " + util::quoteGo(name) +
                                " is invalid: " + (errors.size() == 1 ? list : "[" + list + "]"));
  error.status.details = std::move(details);
  return error;
}

void addInvalid(std::vector<FieldError>& out, const std::string& field, std::string_view value,
                const std::vector<std::string>& messages) {
  for (const std::string& m : messages) {
    out.push_back(
        {field, "FieldValueInvalid", "Invalid value: " + util::quoteGo(value) + ": " + m});
  }
}

std::vector<std::string> nameErrors(Resource resource, std::string_view name) {
  switch (resource) {
    case Resource::Namespaces:
      return dns1123LabelErrors(name);
    case Resource::Services:
      return dns1035LabelErrors(name);
    default:
      return dns1123SubdomainErrors(name);
  }
}

const json& member(const json& object, const char* key) {
  static const json kNull;
  return object.is_object() && object.contains(key) ? object[key] : kNull;
}

const json& arrayAt(const json& spec, const char* key) {
  static const json kEmpty = json::array();
  const json& value = member(spec, key);
  return value.is_array() ? value : kEmpty;
}

// Every element of `sub` is in `super`.
bool containsAll(const json& super, const json& sub) {
  return std::all_of(sub.begin(), sub.end(), [&](const json& item) {
    return std::find(super.begin(), super.end(), item) != super.end();
  });
}

constexpr std::string_view kPodUpdatable =
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
    "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set "
    "to 1 if it was previously negative)";

}  // namespace

std::vector<std::string> dns1123SubdomainErrors(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 253) errs.push_back(maxLenError(253));
  if (!isSubdomain(value)) {
    errs.push_back(regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
        "or '.', and must start and end with an alphanumeric character",
        kSubdomainFormat, {"example.com"}));
  }
  return errs;
}

std::vector<std::string> dns1123LabelErrors(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 63) errs.push_back(maxLenError(63));
  if (!isLabel(value)) {
    if (isSubdomain(value)) {
      errs.emplace_back("must not contain dots");
    } else {
      errs.push_back(regexError(
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
          "and must start and end with an alphanumeric character",
          kLabelFormat, {"my-name", "123-abc"}));
    }
  }
  return errs;
}

std::vector<std::string> dns1035LabelErrors(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 63) errs.push_back(maxLenError(63));
  if (!isLabel(value) || !(value.front() >= 'a' && value.front() <= 'z')) {
    errs.push_back(regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
        "an alphabetic character, and end with an alphanumeric character",
        kDns1035Format, {"my-name", "abc-123"}));
  }
  return errs;
}

std::optional<ApiError> validateObjectMeta(Resource resource, const json& object) {
  const ResourceInfo& info = resourceInfo(resource);
  const json& meta = member(object, "metadata");
  const json& nameValue = member(meta, "name");
  const std::string name = nameValue.is_string() ? nameValue.get<std::string>() : "";
  std::vector<FieldError> errors;
  const json& generate = member(meta, "generateName");
  if (generate.is_string() && !generate.get<std::string>().empty()) {
    // A prefix: validated without its trailing dash (maskTrailingDash).
    std::string prefix = generate.get<std::string>();
    if (prefix.size() > 1 && prefix.back() == '-') prefix.pop_back();
    addInvalid(errors, "metadata.generateName", generate.get<std::string>(),
               nameErrors(resource, prefix));
  }
  addInvalid(errors, "metadata.name", name, nameErrors(resource, name));
  if (info.namespaced) {
    const json& ns = member(meta, "namespace");
    const std::string namespaceName = ns.is_string() ? ns.get<std::string>() : "";
    addInvalid(errors, "metadata.namespace", namespaceName, dns1123LabelErrors(namespaceName));
  }
  if (errors.empty()) return std::nullopt;
  return invalidObject(info, name, errors);
}

std::optional<ApiError> validatePodUpdate(const json& old, const json& next) {
  const ResourceInfo& info = resourceInfo(Resource::Pods);
  const std::string name = member(member(next, "metadata"), "name").is_string()
                               ? member(next, "metadata")["name"].get<std::string>()
                               : "";
  const json& oldSpec = member(old, "spec");
  const json& newSpec = member(next, "spec");
  for (const char* list : {"containers", "initContainers"}) {
    if (arrayAt(oldSpec, list).size() != arrayAt(newSpec, list).size()) {
      return invalidObject(info, name,
                           {{"spec." + std::string(list), "FieldValueForbidden",
                             "Forbidden: pod updates may not add or remove containers"}});
    }
  }
  // The new spec with every field an update may change set back to the old value: what is left
  // must be the old spec.
  json munged = newSpec.is_object() ? newSpec : json::object();
  const json oldObject = oldSpec.is_object() ? oldSpec : json::object();
  auto restore = [&](const char* key) {
    if (oldObject.contains(key)) {
      munged[key] = oldObject[key];
    } else {
      munged.erase(key);
    }
  };
  for (const char* list : {"containers", "initContainers"}) {
    if (!munged.contains(list)) continue;
    const json& before = arrayAt(oldObject, list);
    json& after = munged[list];
    for (size_t i = 0; i < after.size() && i < before.size(); ++i) {
      if (!after[i].is_object() || !before[i].is_object()) continue;
      if (before[i].contains("image")) {
        after[i]["image"] = before[i]["image"];
      } else {
        after[i].erase("image");
      }
    }
  }
  restore("activeDeadlineSeconds");
  if (containsAll(arrayAt(munged, "tolerations"), arrayAt(oldObject, "tolerations"))) {
    restore("tolerations");
  }
  const json& oldGrace = member(oldObject, "terminationGracePeriodSeconds");
  const json& newGrace = member(munged, "terminationGracePeriodSeconds");
  if (oldGrace.is_number_integer() && oldGrace.get<int64_t>() < 0 && newGrace == 1) {
    restore("terminationGracePeriodSeconds");
  }
  if (containsAll(arrayAt(oldObject, "schedulingGates"), arrayAt(munged, "schedulingGates"))) {
    restore("schedulingGates");
  }
  if (munged == oldObject) return std::nullopt;
  return invalidObject(
      info, name, {{"spec", "FieldValueForbidden", "Forbidden: " + std::string(kPodUpdatable)}});
}

}  // namespace berth::apiserver
