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

void SkippedObjects::add(std::string_view key, const util::Error& error) {
  if (count_ == 0) {
    first_error_ = error.message;
  }
  ++count_;
  if (first_.size() < kNamed) {
    first_.emplace_back(key.empty() ? "<no name>" : key);
  }
}

void SkippedObjects::log(std::string_view resource) const {
  if (count_ == 0) {
    return;
  }
  // The first error stands for the rest: a server that sends one broken object usually sends many.
  log::error(first_error_, "Skipping listed objects that do not decode",
             {{"resource", resource}, {"count", count_}, {"first", nlohmann::json(first_)}});
}

}  // namespace berth::informer
