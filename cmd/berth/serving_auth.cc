#include "cmd/berth/serving_auth.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cmd/berth/common.h"
#include "pkg/api/json.h"
#include "pkg/informer/lister_watcher.h"
#include "pkg/log/log.h"

namespace berth::cmd {
namespace {

using json = nlohmann::json;

constexpr api::ResourceInfo kTokenReviews{
    "authentication.k8s.io", "v1", "tokenreviews", "TokenReview", "TokenReviewList", false};
constexpr api::ResourceInfo kSubjectAccessReviews{"authorization.k8s.io",    "v1",
                                                  "subjectaccessreviews",    "SubjectAccessReview",
                                                  "SubjectAccessReviewList", false};
constexpr const char* kAuthNamespace = "kube-system";
constexpr const char* kAuthConfigMap = "extension-apiserver-authentication";
constexpr const char* kAuthConfigMapKey =
    "configmap kube-system/extension-apiserver-authentication";

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

using AuthenticationConfigMap = ServingAuth::AuthenticationConfigMap;

util::Result<AuthenticationConfigMap> decodeAuthenticationConfigMap(const json& object) {
  AuthenticationConfigMap out;
  if (!object.contains("data") || object["data"].is_null()) return out;
  if (!object["data"].is_object()) return util::invalidArgument("data: not an object");
  for (const auto& [key, value] : object["data"].items()) {
    if (!value.is_string()) return util::invalidArgument("data." + key + ": not a string");
    out.data[key] = value.get<std::string>();
  }
  return out;
}

// A requestheader-* list key: a JSON array of strings, as the API server writes it.
util::Result<std::vector<std::string>> headerList(const AuthenticationConfigMap& cm,
                                                  const std::string& key) {
  auto it = cm.data.find(key);
  if (it == cm.data.end() || it->second.empty()) return std::vector<std::string>{};
  auto parsed = api::parseJson(it->second);
  if (!parsed.ok() || !parsed->is_array()) {
    return util::invalidArgument("data." + key + ": not a JSON array of strings");
  }
  std::vector<std::string> out;
  for (const json& item : *parsed) {
    if (!item.is_string()) {
      return util::invalidArgument("data." + key + ": not a JSON array of strings");
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

// The CA bundle under `key`, null when the key is absent or empty.
util::Result<serving::CertificatePoolPtr> caOf(const AuthenticationConfigMap& cm,
                                               const std::string& key) {
  auto it = cm.data.find(key);
  if (it == cm.data.end() || it->second.empty()) return serving::CertificatePoolPtr{};
  return serving::CertificatePool::fromPem(it->second, "data." + key);
}

// The front proxy's header lists (its CA comes separately, as upstream's two controllers).
util::Result<serving::RequestHeaderConfig> requestHeaderListsOf(const AuthenticationConfigMap& cm) {
  serving::RequestHeaderConfig out;
  for (auto [key, target] :
       {std::pair{"requestheader-allowed-names", &out.allowedNames},
        std::pair{"requestheader-username-headers", &out.usernameHeaders},
        std::pair{"requestheader-group-headers", &out.groupHeaders},
        std::pair{"requestheader-extra-headers-prefix", &out.extraHeaderPrefixes}}) {
    auto list = headerList(cm, key);
    if (!list.ok()) return list.error();
    *target = std::move(*list);
  }
  return out;
}

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
    auto pool = serving::CertificatePool::fromPem(*ca, "--client-ca-file " + s.clientCaFile);
    if (!pool.ok()) return pool.error();
    out->file_ca_ = std::move(*pool);
    out->request_client_certificates_ = true;
  }

  serving::DelegatedAuthOptions options;
  out->current_.clientCa = out->file_ca_;
  options.certificates = out->current_;
  options.tokenReviewer = out->reviewers_->tokens.get();
  options.tokenCacheTtl = s.tokenCacheTtl;
  options.accessReviewer = out->reviewers_->access.get();
  options.authorizedTtl = s.authorizedTtl;
  options.unauthorizedTtl = s.unauthorizedTtl;
  options.alwaysAllowPaths = s.alwaysAllow;
  out->auth_ = std::make_unique<serving::DelegatedAuth>(std::move(options));
  if (s.authenticationSkipLookup) return out;

  // Upstream's lookup: a missing ConfigMap means no CA from it (yet); any other failure to read
  // it, or request-header lists that do not parse, is fatal unless tolerated, and then front
  // proxies are not trusted until a good version of the ConfigMap arrives.
  out->request_client_certificates_ = true;
  auto cm = out->authn_client_->get(api::kConfigMaps, kAuthNamespace, kAuthConfigMap);
  util::Result<void> applied;
  if (cm.ok()) {
    auto decoded = decodeAuthenticationConfigMap(*cm);
    applied = decoded.ok() ? out->apply(*decoded)
                           : util::Result<void>(decoded.error().wrap(kAuthConfigMapKey));
  } else if (!cm.error().isNotFound()) {
    applied = util::Error{util::ErrorCode::Unavailable, cm.error().toString()};
  }
  if (!applied.ok()) {
    const std::string err =
        "unable to load configmap based request-header-client-ca-file: " + applied.error().message;
    if (!s.authenticationTolerateLookupFailure) {
      return util::Error{util::ErrorCode::Unavailable, err};
    }
    log::warning("Error looking up in-cluster authentication configuration",
                 {{"err", err},
                  {"hint",
                   "continuing without it until the ConfigMap can be read: client certificates "
                   "and front proxies are not authenticated; set "
                   "--authentication-tolerate-lookup-failure=false to make this fatal"}});
  }

  informer::ReflectorOptions watchOptions;
  watchOptions.name = "configmaps";
  out->config_map_informer_ = std::make_unique<informer::Informer<AuthenticationConfigMap>>(
      informer::makeListerWatcher(*out->authn_client_, api::kConfigMaps, kAuthNamespace, "",
                                  std::string("metadata.name=") + kAuthConfigMap),
      decodeAuthenticationConfigMap, std::move(watchOptions));
  ServingAuth* self = out.get();
  auto onChange = [self](const std::shared_ptr<const AuthenticationConfigMap>& cm) {
    if (auto r = self->apply(*cm); !r.ok()) {
      log::warning("Keeping the previous front proxy settings", {{"err", r.error().message}});
    }
  };
  out->config_map_informer_->addEventHandlers(
      {onChange,
       [onChange](const std::shared_ptr<const AuthenticationConfigMap>& /*old*/,
                  const std::shared_ptr<const AuthenticationConfigMap>& next) { onChange(next); },
       [](const std::shared_ptr<const AuthenticationConfigMap>& /*gone*/) {
         // Upstream's controllers keep what they loaded when the ConfigMap goes away.
         log::warning("Keeping the previous client CAs",
                      {{"configmap", kAuthConfigMapKey}, {"err", "the ConfigMap was deleted"}});
       }});
  out->config_map_informer_->start();
  return out;
}

util::Result<void> ServingAuth::apply(const AuthenticationConfigMap& configMap) {
  auto lists = requestHeaderListsOf(configMap);
  if (!lists.ok()) return lists.error().wrap(kAuthConfigMapKey);
  serving::CertificateAuthentication next = current_;
  const serving::CertificatePoolPtr proxyCa = next.requestHeader.ca;
  next.requestHeader = std::move(*lists);
  next.requestHeader.ca = proxyCa;
  // As upstream's dynamic CA bundles: one that is missing, empty or bad keeps the previous.
  auto loadCa = [&configMap](const std::string& key, serving::CertificatePoolPtr& target) {
    auto ca = caOf(configMap, key);
    if (!ca.ok()) {
      log::warning("Keeping the previous CA bundle",
                   {{"configmap", kAuthConfigMapKey}, {"key", key}, {"err", ca.error().message}});
    } else if (*ca != nullptr) {
      target = std::move(*ca);
    }
  };
  if (file_ca_ == nullptr) loadCa("client-ca-file", next.clientCa);
  loadCa("requestheader-client-ca-file", next.requestHeader.ca);
  current_ = next;
  log::info(2, "Loaded client CAs",
            {{"configmap", kAuthConfigMapKey},
             {"clientCA", next.clientCa != nullptr ? "set" : "none"},
             {"requestHeaderCA", next.requestHeader.ca != nullptr ? "set" : "none"}});
  auth_->setCertificates(std::move(next));
  return {};
}

}  // namespace berth::cmd
