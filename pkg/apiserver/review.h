#pragma once
// TokenReview (authentication.k8s.io/v1) and SubjectAccessReview (authorization.k8s.io/v1) as
// the embedded API server answers them, so that berth's delegated authentication and
// authorization run against it for real. The server knows a table of tokens and the users they
// stand for, and an allow list of non-resource rules (RBAC's nonResourceURLs: an exact path or a
// prefix ending in "*"); everything else is not allowed, with no opinion, as RBAC answers.
//
// The configuration, as JSON or YAML:
//   tokens: [{token: T, user: prometheus, uid: "1", groups: [system:serviceaccounts]}]
//   allow:  [{user: prometheus, verbs: [get], nonResourceURLs: ["/metrics", "/metrics/*"]},
//            {group: system:monitoring, verbs: ["*"], nonResourceURLs: ["*"]}]

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/apiserver/http_handler.h"
#include "pkg/util/result.h"

namespace berth::apiserver {

struct ReviewUser {
  std::string token;
  std::string user;
  std::string uid;
  std::vector<std::string> groups;
};

struct AccessRule {
  std::string user;  // one of user and group
  std::string group;
  std::vector<std::string> verbs;            // "*" for any
  std::vector<std::string> nonResourceURLs;  // "*" suffix for a prefix
};

struct ReviewConfig {
  std::vector<ReviewUser> tokens;
  std::vector<AccessRule> allow;
};

// Decodes the configuration; errors name the field ("allow[1].verbs: ...").
util::Result<ReviewConfig> decodeReviewConfig(const nlohmann::json& document);

// The TokenReview kube-apiserver returns for the posted one (status filled in), or nullopt when
// the body is not a TokenReview with a spec.token (the caller answers 400).
std::optional<nlohmann::json> reviewToken(const ReviewConfig& config, std::string_view body);
// The same for a SubjectAccessReview of a non-resource request; a resource request is not
// allowed (no rule can name a resource).
std::optional<nlohmann::json> reviewAccess(const ReviewConfig& config, std::string_view body);

// The answer to a POST of either review (201 with the review, or 400 for a body that is not
// one); nullopt for any other request.
std::optional<HttpResponse> serveReview(const ReviewConfig& config, const RequestInfo& info,
                                        const HttpRequest& request);

}  // namespace berth::apiserver
