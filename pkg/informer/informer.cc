#include "pkg/informer/informer.h"

#include "pkg/log/log.h"

namespace berth::informer {
namespace {

std::string metadataString(const nlohmann::json& object, std::string_view key) {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) {
    return {};
  }
  const auto v = meta->find(key);
  return v != meta->end() && v->is_string() ? v->get<std::string>() : std::string();
}

}  // namespace

std::string objectKey(const nlohmann::json& object) {
  const std::string name = metadataString(object, "name");
  if (name.empty()) {
    return {};
  }
  const std::string ns = metadataString(object, "namespace");
  return ns.empty() ? name : ns + "/" + name;
}

std::string objectResourceVersion(const nlohmann::json& object) {
  return metadataString(object, "resourceVersion");
}

void logUndecodable(std::string_view resource, std::string_view key, const util::Error& error) {
  log::error(error.message, "Skipping an object that does not decode",
             {{"resource", resource}, {"object", key}});
}

}  // namespace berth::informer
