#include "cmd/berth/serving_auth.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cmd/berth/common.h"
#include "pkg/log/log.h"

namespace berth::cmd {
namespace {

using json = nlohmann::json;

constexpr api::ResourceInfo kTokenReviews{
    "authentication.k8s.io", "v1", "tokenreviews", "TokenReview", "TokenReviewList", false};
constexpr api::ResourceInfo kSubjectAccessReviews{"authorization.k8s.io",    "v1",
                                                  "subjectaccessreviews",    "SubjectAccessReview",
                                                  "SubjectAccessReviewList", false};
constexpr api::ResourceInfo kConfigMaps{"", "v1", "configmaps", "ConfigMap", "ConfigMapList", true};

std::vector<std::string> stringList(const json& value) {
  std::vector<std::string> out;
  if (!value.is_array()) return out;
  for (const json& item : value) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

class RestTokenReviewer final : public serving::TokenReviewer {
 public:
  explicit RestTokenReviewer(client::RestClient& client) : client_(client) {}

  util::Result<serving::TokenReviewStatus> review(const std::string& token) override {
    const json body = {{"apiVersion", "authentication.k8s.io/v1"},
                       {"kind", "TokenReview"},
                       {"spec", {{"token", token}}}};
    auto answer = client_.create(kTokenReviews, "", body);
    if (!answer.ok()) return answer.error().toError();
    const json status = answer->value("status", json::object());
    serving::TokenReviewStatus out;
    out.authenticated = status.value("authenticated", false);
    out.error = status.value("error", "");
    const json user = status.value("user", json::object());
    out.user.name = user.value("username", "");
    out.user.uid = user.value("uid", "");
    out.user.groups = stringList(user.value("groups", json::array()));
    const json extra = user.value("extra", json::object());  // items() must not outlive it
    for (const auto& [key, values] : extra.items()) {
      out.user.extra[key] = stringList(values);
    }
    return out;
  }

 private:
  client::RestClient& client_;
};

class RestAccessReviewer final : public serving::AccessReviewer {
 public:
  explicit RestAccessReviewer(client::RestClient& client) : client_(client) {}

  util::Result<serving::AccessReviewStatus> review(const serving::UserInfo& user,
                                                   std::string_view verb,
                                                   std::string_view path) override {
    json spec = {{"user", user.name},
                 {"groups", user.groups},
                 {"nonResourceAttributes", {{"verb", verb}, {"path", path}}}};
    if (!user.uid.empty()) spec["uid"] = user.uid;
    if (!user.extra.empty()) spec["extra"] = user.extra;
    const json body = {{"apiVersion", "authorization.k8s.io/v1"},
                       {"kind", "SubjectAccessReview"},
                       {"spec", std::move(spec)}};
    auto answer = client_.create(kSubjectAccessReviews, "", body);
    if (!answer.ok()) return answer.error().toError();
    const json status = answer->value("status", json::object());
    return serving::AccessReviewStatus{status.value("allowed", false),
                                       status.value("denied", false), status.value("reason", "")};
  }

 private:
  client::RestClient& client_;
};

bool inCluster() {
  // Read at startup, before any thread that could set variables starts; berth sets none.
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");  // NOLINT(concurrency-mt-unsafe)
  return host != nullptr && *host != '\0';
}

// --authentication-kubeconfig (or --authorization-kubeconfig), else the in-cluster
// configuration, else berth's own.
util::Result<client::RestConfig> reviewConfig(const std::string& kubeconfig,
                                              const client::RestConfig& own) {
  if (!kubeconfig.empty() || inCluster()) return loadClientConfig(kubeconfig, "");
  return own;
}

util::Result<std::unique_ptr<client::RestClient>> reviewClient(
    client::RestConfig config, const std::function<void(const client::RequestDone&)>& onRequest) {
  config.qps = 200;
  config.burst = 400;
  client::RestOptions options;
  options.requestTimeout = std::chrono::seconds(10);
  options.retry.maxRetries = 0;
  options.onRequest = onRequest;
  return client::RestClient::create(config, options);
}

}  // namespace

struct ServingAuth::Reviewers {
  std::unique_ptr<serving::TokenReviewer> tokens;
  std::unique_ptr<serving::AccessReviewer> access;
};

ServingAuth::~ServingAuth() = default;

util::Result<std::unique_ptr<ServingAuth>> ServingAuth::create(
    const ServingSettings& s, const client::RestConfig& own,
    const std::function<void(const client::RequestDone&)>& onRequest) {
  std::unique_ptr<ServingAuth> out(new ServingAuth());
  auto authnConfig = reviewConfig(s.authenticationKubeconfig, own);
  if (!authnConfig.ok()) return authnConfig.error().wrap("--authentication-kubeconfig");
  auto authzConfig = reviewConfig(s.authorizationKubeconfig, own);
  if (!authzConfig.ok()) return authzConfig.error().wrap("--authorization-kubeconfig");
  auto authn = reviewClient(*authnConfig, onRequest);
  if (!authn.ok()) return authn.error().wrap("--authentication-kubeconfig");
  auto authz = reviewClient(*authzConfig, onRequest);
  if (!authz.ok()) return authz.error().wrap("--authorization-kubeconfig");
  out->authn_client_ = std::move(*authn);
  out->authz_client_ = std::move(*authz);
  out->reviewers_ = std::make_unique<Reviewers>(
      Reviewers{std::make_unique<RestTokenReviewer>(*out->authn_client_),
                std::make_unique<RestAccessReviewer>(*out->authz_client_)});

  if (!s.clientCaFile.empty()) {
    auto ca = readFile(s.clientCaFile);
    if (!ca.ok()) return ca.error().wrap("--client-ca-file");
    out->client_ca_pem_ = std::move(*ca);
  } else if (!s.authenticationSkipLookup) {
    // Upstream's lookup: a missing ConfigMap means no client CA; any other failure is fatal
    // unless tolerated, and then every certificate is ignored.
    auto cm =
        out->authn_client_->get(kConfigMaps, "kube-system", "extension-apiserver-authentication");
    if (cm.ok()) {
      out->client_ca_pem_ = cm->value("data", json::object()).value("client-ca-file", "");
    } else if (!cm.error().isNotFound()) {
      const std::string err =
          "unable to load configmap based request-header-client-ca-file: " + cm.error().toString();
      if (!s.authenticationTolerateLookupFailure) {
        return util::Error{util::ErrorCode::Unavailable, err};
      }
      log::warning("Error looking up in-cluster authentication configuration",
                   {{"err", err},
                    {"hint",
                     "continuing without it: client certificates are not "
                     "authenticated; set --authentication-tolerate-lookup-failure="
                     "false to make this fatal"}});
    }
  }

  serving::DelegatedAuthOptions options;
  options.tokenReviewer = out->reviewers_->tokens.get();
  options.tokenCacheTtl = s.tokenCacheTtl;
  options.accessReviewer = out->reviewers_->access.get();
  options.authorizedTtl = s.authorizedTtl;
  options.unauthorizedTtl = s.unauthorizedTtl;
  options.alwaysAllowPaths = s.alwaysAllow;
  out->auth_ = std::make_unique<serving::DelegatedAuth>(std::move(options));
  return out;
}

}  // namespace berth::cmd
