#pragma once
// The serving port's delegated authentication and authorization wired to the API server: REST
// clients of their own (QPS 200, burst 400, 10 s timeouts, as k8s.io/apiserver configures its
// delegating clients, so reviews never queue behind scheduling traffic and count in
// rest_client_requests_total), the TokenReview and SubjectAccessReview adapters, and the client
// CA: --client-ca-file, else the client-ca-file key of kube-system/extension-apiserver-
// authentication as upstream looks it up.

#include <functional>
#include <memory>
#include <string>

#include "cmd/berth/serving_flags.h"
#include "pkg/client/config.h"
#include "pkg/client/rest.h"
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
  // The PEM bundle client certificates are verified against ("" when there is none).
  const std::string& clientCaPem() const { return client_ca_pem_; }

  struct Reviewers;

 private:
  ServingAuth() = default;
  std::unique_ptr<client::RestClient> authn_client_;
  std::unique_ptr<client::RestClient> authz_client_;
  std::unique_ptr<Reviewers> reviewers_;
  std::unique_ptr<serving::DelegatedAuth> auth_;
  std::string client_ca_pem_;
};

}  // namespace berth::cmd
