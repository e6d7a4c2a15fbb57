#include "pkg/apiserver/review.h"

#include <algorithm>
#include <optional>

#include "pkg/api/json.h"
#include "pkg/apiserver/api_error.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

util::Result<std::vector<std::string>> strings(const json& object, const char* key,
                                               const std::string& where) {
  std::vector<std::string> out;
  if (!object.contains(key)) return out;
  const json& list = object[key];
  if (!list.is_array()) return util::invalidArgument(where + "." + key + ": must be a list");
  for (const json& item : list) {
    if (!item.is_string()) {
      return util::invalidArgument(where + "." + key + ": must be a list of strings");
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::string text(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

bool urlMatches(std::string_view rule, std::string_view path) {
  if (rule == "*") return true;
  if (rule.ends_with('*')) return path.starts_with(rule.substr(0, rule.size() - 1));
  return rule == path;
}

std::optional<json> parseBody(std::string_view body, std::string_view kind) {
  if (api::jsonDepth(body) > api::kMaxJsonDepth) return std::nullopt;
  json doc = json::parse(body, nullptr, false);
  if (!doc.is_object() || !doc.contains("spec") || !doc["spec"].is_object()) return std::nullopt;
  if (doc.contains("kind") && doc["kind"] != kind) return std::nullopt;
  return doc;
}

}  // namespace

util::Result<ReviewConfig> decodeReviewConfig(const json& document) {
  if (!document.is_object()) return util::invalidArgument("must be an object");
  ReviewConfig config;
  if (document.contains("tokens")) {
    if (!document["tokens"].is_array()) return util::invalidArgument("tokens: must be a list");
    for (size_t i = 0; i < document["tokens"].size(); ++i) {
      const json& entry = document["tokens"][i];
      const std::string where = "tokens[" + std::to_string(i) + "]";
      if (!entry.is_object()) return util::invalidArgument(where + ": must be an object");
      ReviewUser user{text(entry, "token"), text(entry, "user"), text(entry, "uid"), {}};
      if (user.token.empty()) return util::invalidArgument(where + ".token: required");
      if (user.user.empty()) return util::invalidArgument(where + ".user: required");
      auto groups = strings(entry, "groups", where);
      if (!groups.ok()) return groups.error();
      user.groups = std::move(*groups);
      config.tokens.push_back(std::move(user));
    }
  }
  if (document.contains("allow")) {
    if (!document["allow"].is_array()) return util::invalidArgument("allow: must be a list");
    for (size_t i = 0; i < document["allow"].size(); ++i) {
      const json& entry = document["allow"][i];
      const std::string where = "allow[" + std::to_string(i) + "]";
      if (!entry.is_object()) return util::invalidArgument(where + ": must be an object");
      AccessRule rule{text(entry, "user"), text(entry, "group"), {}, {}};
      if (rule.user.empty() == rule.group.empty()) {
        return util::invalidArgument(where + ": exactly one of user and group is required");
      }
      auto verbs = strings(entry, "verbs", where);
      if (!verbs.ok()) return verbs.error();
      auto urls = strings(entry, "nonResourceURLs", where);
      if (!urls.ok()) return urls.error();
      rule.verbs = std::move(*verbs);
      rule.nonResourceURLs = std::move(*urls);
      config.allow.push_back(std::move(rule));
    }
  }
  return config;
}

std::optional<json> reviewToken(const ReviewConfig& config, std::string_view body) {
  std::optional<json> review = parseBody(body, "TokenReview");
  if (!review || !(*review)["spec"].contains("token") || !(*review)["spec"]["token"].is_string()) {
    return std::nullopt;
  }
  const std::string token = (*review)["spec"]["token"].get<std::string>();
  json status = {{"authenticated", false}};
  for (const ReviewUser& user : config.tokens) {
    if (user.token == token) {
      status = {{"authenticated", true},
                {"user", {{"username", user.user}, {"uid", user.uid}, {"groups", user.groups}}},
                {"audiences", json::array()}};
    }
  }
  review->erase("status");
  (*review)["apiVersion"] = "authentication.k8s.io/v1";
  (*review)["kind"] = "TokenReview";
  if (!review->contains("metadata")) (*review)["metadata"] = {{"creationTimestamp", nullptr}};
  (*review)["status"] = std::move(status);
  return review;
}

std::optional<json> reviewAccess(const ReviewConfig& config, std::string_view body) {
  std::optional<json> review = parseBody(body, "SubjectAccessReview");
  if (!review) return std::nullopt;
  const json& spec = (*review)["spec"];
  const std::string user = text(spec, "user");
  std::vector<std::string> groups;
  if (spec.contains("groups") && spec["groups"].is_array()) {
    for (const json& g : spec["groups"]) {
      if (g.is_string()) groups.push_back(g.get<std::string>());
    }
  }
  bool allowed = false;
  if (spec.contains("nonResourceAttributes") && spec["nonResourceAttributes"].is_object()) {
    const std::string verb = text(spec["nonResourceAttributes"], "verb");
    const std::string path = text(spec["nonResourceAttributes"], "path");
    for (const AccessRule& rule : config.allow) {
      const bool subject = rule.user.empty()
                               ? std::find(groups.begin(), groups.end(), rule.group) != groups.end()
                               : rule.user == user;
      const bool verbs = std::any_of(rule.verbs.begin(), rule.verbs.end(),
                                     [&](const std::string& v) { return v == "*" || v == verb; });
      const bool urls = std::any_of(rule.nonResourceURLs.begin(), rule.nonResourceURLs.end(),
                                    [&](const std::string& u) { return urlMatches(u, path); });
      allowed = allowed || (subject && verbs && urls);
    }
  }
  review->erase("status");
  (*review)["apiVersion"] = "authorization.k8s.io/v1";
  (*review)["kind"] = "SubjectAccessReview";
  if (!review->contains("metadata")) (*review)["metadata"] = {{"creationTimestamp", nullptr}};
  (*review)["status"] = allowed ? json{{"allowed", true}, {"reason", "allowed by the review file"}}
                                : json{{"allowed", false}};
  return review;
}

std::optional<HttpResponse> serveReview(const ReviewConfig& config, const RequestInfo& info,
                                        const HttpRequest& request) {
  if (request.method != "POST") return std::nullopt;
  std::optional<json> answer;
  if (info.path == "/apis/authentication.k8s.io/v1/tokenreviews") {
    answer = reviewToken(config, request.body);
    if (!answer) return errorResponse(badRequest("the body is not a TokenReview with spec.token"));
  } else if (info.path == "/apis/authorization.k8s.io/v1/subjectaccessreviews") {
    answer = reviewAccess(config, request.body);
    if (!answer) return errorResponse(badRequest("the body is not a SubjectAccessReview"));
  } else {
    return std::nullopt;
  }
  HttpResponse response;
  response.code = 201;
  response.body = toJsonText(*answer);
  return response;
}

}  // namespace berth::apiserver
