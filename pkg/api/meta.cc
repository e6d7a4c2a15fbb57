#include "pkg/api/meta.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace berth::api {

std::string ResourceInfo::apiVersion() const {
  return group.empty() ? std::string(version) : std::string(group) + "/" + std::string(version);
}

std::string ResourceInfo::path(std::string_view ns, std::string_view name,
                               std::string_view subresource) const {
  std::string out = group.empty() ? "/api/" : "/apis/" + std::string(group) + "/";
  out += version;
  if (namespaced && !ns.empty()) {
    out += "/namespaces/";
    out += ns;
  }
  out += "/";
  out += this->name;
  if (!name.empty()) {
    out += "/";
    out += name;
    if (!subresource.empty()) {
      out += "/";
      out += subresource;
    }
  }
  return out;
}

std::string_view watchEventTypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::Added:
      return "ADDED";
    case WatchEventType::Modified:
      return "MODIFIED";
    case WatchEventType::Deleted:
      return "DELETED";
    case WatchEventType::Bookmark:
      return "BOOKMARK";
    case WatchEventType::Error:
      return "ERROR";
  }
  return "UNKNOWN";
}

std::optional<WatchEventType> parseWatchEventType(std::string_view name) {
  for (WatchEventType type :
       {WatchEventType::Added, WatchEventType::Modified, WatchEventType::Deleted,
        WatchEventType::Bookmark, WatchEventType::Error}) {
    if (name == watchEventTypeName(type)) {
      return type;
    }
  }
  return std::nullopt;
}

std::string_view contentType(PatchType type) {
  switch (type) {
    case PatchType::Json:
      return "application/json-patch+json";
    case PatchType::Merge:
      return "application/merge-patch+json";
    case PatchType::StrategicMerge:
      return "application/strategic-merge-patch+json";
  }
  return "application/json";
}

std::optional<PatchType> patchTypeFromContentType(std::string_view contentType) {
  std::string type(contentType.substr(0, contentType.find(';')));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) {
    type.pop_back();
  }
  size_t start = type.find_first_not_of(" \t");
  type = start == std::string::npos ? "" : type.substr(start);
  std::transform(type.begin(), type.end(), type.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (PatchType t : {PatchType::Json, PatchType::Merge, PatchType::StrategicMerge}) {
    if (type == api::contentType(t)) {
      return t;
    }
  }
  return std::nullopt;
}

nlohmann::json encodeDeleteOptions(const DeleteOptions& options) {
  nlohmann::json pre = nlohmann::json::object();
  if (!options.preconditions.uid.empty()) {
    pre["uid"] = options.preconditions.uid;
  }
  if (!options.preconditions.resourceVersion.empty()) {
    pre["resourceVersion"] = options.preconditions.resourceVersion;
  }
  nlohmann::json out = {
      {"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"preconditions", std::move(pre)}};
  if (options.gracePeriodSeconds) out["gracePeriodSeconds"] = *options.gracePeriodSeconds;
  return out;
}

DeleteOptions decodeDeleteOptions(const nlohmann::json& body) {
  DeleteOptions options;
  if (const auto grace = body.find("gracePeriodSeconds");
      grace != body.end() && grace->is_number_integer()) {
    options.gracePeriodSeconds = grace->get<int64_t>();
  }
  const auto pre = body.find("preconditions");
  if (pre == body.end() || !pre->is_object()) {
    return options;
  }
  if (const auto uid = pre->find("uid"); uid != pre->end() && uid->is_string()) {
    options.preconditions.uid = uid->get<std::string>();
  }
  if (const auto rv = pre->find("resourceVersion"); rv != pre->end() && rv->is_string()) {
    options.preconditions.resourceVersion = rv->get<std::string>();
  }
  return options;
}

}  // namespace berth::api
