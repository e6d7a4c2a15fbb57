#include "pkg/api/status.h"

#include <utility>

namespace berth::api {
namespace {

using json = nlohmann::json;

std::string stringAt(const json& obj, const char* key) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

json encodeStatus(const Status& status) {
  json out = {{"kind", "Status"},
              {"apiVersion", "v1"},
              {"metadata", json::object()},
              {"status", status.status}};
  if (!status.continueToken.empty()) out["metadata"]["continue"] = status.continueToken;
  if (status.status == "Failure" || !status.message.empty()) out["message"] = status.message;
  if (status.code != 0) out["code"] = status.code;
  if (!status.reason.empty()) out["reason"] = status.reason;
  const StatusDetails& d = status.details;
  json details = json::object();
  auto put = [&](const char* key, const std::string& value) {
    if (!value.empty()) details[key] = value;
  };
  put("name", d.name);
  put("group", d.group);
  put("kind", d.kind);
  put("uid", d.uid);
  if (!d.causes.empty()) {
    json causes = json::array();
    for (const StatusCause& c : d.causes) {
      json cause = json::object();
      if (!c.reason.empty()) cause["reason"] = c.reason;
      if (!c.message.empty()) cause["message"] = c.message;
      if (!c.field.empty()) cause["field"] = c.field;
      causes.push_back(std::move(cause));
    }
    details["causes"] = std::move(causes);
  }
  if (d.retryAfterSeconds != 0) details["retryAfterSeconds"] = d.retryAfterSeconds;
  if (!details.empty()) out["details"] = std::move(details);
  return out;
}

std::optional<Status> decodeStatus(const json& body) {
  if (!body.is_object() || stringAt(body, "kind") != "Status") return std::nullopt;
  Status status;
  status.status = stringAt(body, "status");
  status.message = stringAt(body, "message");
  status.reason = stringAt(body, "reason");
  if (const auto it = body.find("code"); it != body.end() && it->is_number_integer()) {
    status.code = it->get<int>();
  }
  if (const auto it = body.find("metadata"); it != body.end() && it->is_object()) {
    status.continueToken = stringAt(*it, "continue");
  }
  const auto d = body.find("details");
  if (d == body.end() || !d->is_object()) return status;
  status.details.name = stringAt(*d, "name");
  status.details.group = stringAt(*d, "group");
  status.details.kind = stringAt(*d, "kind");
  status.details.uid = stringAt(*d, "uid");
  if (const auto it = d->find("retryAfterSeconds"); it != d->end() && it->is_number_integer()) {
    status.details.retryAfterSeconds = it->get<int64_t>();
  }
  if (const auto it = d->find("causes"); it != d->end() && it->is_array()) {
    for (const json& c : *it) {
      if (!c.is_object()) continue;
      status.details.causes.push_back(
          {stringAt(c, "reason"), stringAt(c, "message"), stringAt(c, "field")});
    }
  }
  return status;
}

}  // namespace berth::api
