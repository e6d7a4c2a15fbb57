#pragma once
// The serving port's delegated authentication and authorization wired to the API server: REST
// clients of their own (QPS 200, burst 400, 10 s timeouts, as k8s.io/apiserver configures its
// delegating clients, so reviews never queue behind scheduling traffic and count in
// rest_client_requests_total), the TokenReview and SubjectAccessReview adapters, and the
// certificates' CAs: --client-ca-file, else the client-ca-file key of the ConfigMap
// kube-system/extension-apiserver-authentication, and the front proxy's requestheader-* keys of
// that ConfigMap, read at start as upstream's DelegatingAuthenticationOptions does, then watched:
// a change applies to the next request, a bad change is logged and the previous CAs stay.

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "cmd/berth/serving_flags.h"
#include "pkg/client/config.h"
#include "pkg/client/rest.h"
#include "pkg/informer/informer.h"
#include "pkg/serving/auth.h"
#include "pkg/util/result.h"

namespace berth::cmd {

class ServingAuth {
 public:
  // `own` is berth's own connection, the last resort for the review clients; `onRequest` sees
  // every review call (the rest_client_* metrics).
  static util::Result<std::unique_ptr<ServingAuth>> create(
      const ServingSettings& settings, const client::RestConfig& own,
      const std::function<void(const client::RequestDone&)>& onRequest);
  ~ServingAuth();

  serving::DelegatedAuth& auth() { return *auth_; }
  // Whether the serving port asks clients for a certificate (some CA may verify it).
  bool requestsClientCertificates() const { return request_client_certificates_; }

  struct Reviewers;
  // The ConfigMap's data, as the informer stores it.
  struct AuthenticationConfigMap {
    std::map<std::string, std::string> data;
  };

 private:
  ServingAuth() = default;
  std::unique_ptr<client::RestClient> authn_client_;
  std::unique_ptr<client::RestClient> authz_client_;
  std::unique_ptr<Reviewers> reviewers_;
  // The ConfigMap's CAs and front proxy settings into auth_ (--client-ca-file wins over its
  // client-ca-file); fails, changing nothing, when the request-header lists do not parse.
  util::Result<void> apply(const AuthenticationConfigMap& configMap);

  std::unique_ptr<serving::DelegatedAuth> auth_;
  serving::CertificatePoolPtr file_ca_;
  // What auth_ verifies with; written at start, then only on the informer's thread.
  serving::CertificateAuthentication current_;
  bool request_client_certificates_ = false;
  // Declared last: stopped first, before what its handlers use.
  std::unique_ptr<informer::Informer<AuthenticationConfigMap>> config_map_informer_;
};

}  // namespace berth::cmd
