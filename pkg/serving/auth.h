#pragma once
// Delegated authentication and authorization for the serving port, as k8s.io/apiserver's
// DelegatingAuthenticationOptions and DelegatingAuthorizationOptions wire them for
// kube-scheduler:
//   authentication, a union in this order: the front proxy's request headers (a client
//     certificate verified against the request-header CA, its CN among the allowed names, the user
//     from the first username header set, groups and extra from theirs), a client certificate
//     verified against the client CA (CN = user, O = groups), a bearer token checked by a
//     TokenReview; a request with none is system:anonymous. Credentials that are presented and
//     all fail are 401 Unauthorized. Authenticated users get system:authenticated.
//   authorization, a union in this order: the always-allow groups (system:masters), the
//     always-allow paths ("/healthz", "/readyz", "/livez"; a trailing "*" matches a prefix), then a
//     SubjectAccessReview of the non-resource request (verb = lower-cased method, path). Not
//     allowed is 403 Forbidden with the apiserver's Status; a review that could not be made is 500.
// TokenReview answers are cached for the token TTL; SubjectAccessReview answers for the authorized
// or the unauthorized TTL; failures to reach the API server are never cached.

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/serving/server.h"
#include "pkg/serving/x509.h"
#include "pkg/util/clock.h"
#include "pkg/util/result.h"

namespace berth::serving {

struct UserInfo {
  std::string name;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
};

// The answer of a TokenReview (authentication.k8s.io/v1 TokenReviewStatus).
struct TokenReviewStatus {
  bool authenticated = false;
  UserInfo user;
  std::string error;
};

// Makes TokenReviews; an error result means the API server gave no answer.
class TokenReviewer {
 public:
  virtual ~TokenReviewer() = default;
  virtual util::Result<TokenReviewStatus> review(const std::string& token) = 0;
};

// The answer of a SubjectAccessReview (authorization.k8s.io/v1 SubjectAccessReviewStatus).
struct AccessReviewStatus {
  bool allowed = false;
  bool denied = false;
  std::string reason;
};

// Makes non-resource SubjectAccessReviews; an error result means the API server gave no answer.
class AccessReviewer {
 public:
  virtual ~AccessReviewer() = default;
  virtual util::Result<AccessReviewStatus> review(const UserInfo& user, std::string_view verb,
                                                  std::string_view path) = 0;
};

// --authorization-always-allow-paths: exact paths, or prefixes written with a trailing "*".
class PathMatcher {
 public:
  // Fails for a "*" anywhere but at the end, as upstream's path authorizer does.
  static util::Result<PathMatcher> create(const std::vector<std::string>& paths);
  bool matches(std::string_view path) const;

 private:
  std::vector<std::string> exact_;
  std::vector<std::string> prefixes_;
};

// A map whose entries expire; thread-safe. Bounded: when full, expired entries are dropped first,
// then everything (a flood of distinct tokens must not grow it without limit).
template <typename V>
class TtlCache {
 public:
  TtlCache(util::Clock& clock, size_t maxEntries) : clock_(clock), max_entries_(maxEntries) {}

  std::optional<V> get(const std::string& key) const {
    std::lock_guard lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end() || it->second.expires <= clock_.monotonicNow()) return std::nullopt;
    return it->second.value;
  }

  void put(const std::string& key, V value, util::Duration ttl) {
    if (ttl <= util::Duration::zero()) return;
    std::lock_guard lock(mu_);
    const util::MonotonicTime now = clock_.monotonicNow();
    if (entries_.size() >= max_entries_) {
      std::erase_if(entries_, [now](const auto& e) { return e.second.expires <= now; });
      if (entries_.size() >= max_entries_) entries_.clear();
    }
    entries_.insert_or_assign(key, Entry{std::move(value), now + ttl});
  }

 private:
  struct Entry {
    V value;
    util::MonotonicTime expires;
  };
  util::Clock& clock_;
  size_t max_entries_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;
};

// Front-proxy authentication (requestheader-* in extension-apiserver-authentication).
struct RequestHeaderConfig {
  CertificatePoolPtr ca;                  // null: request headers are never trusted
  std::vector<std::string> allowedNames;  // CNs allowed to assert a user; empty: any
  std::vector<std::string> usernameHeaders;
  std::vector<std::string> groupHeaders;
  std::vector<std::string> extraHeaderPrefixes;
};

// What client certificates are verified against; replaced as a whole when a source changes.
struct CertificateAuthentication {
  CertificatePoolPtr clientCa;  // null: client certificates are not looked at
  RequestHeaderConfig requestHeader;
};

struct DelegatedAuthOptions {
  // Null: bearer tokens are not looked at, every caller without a certificate is anonymous.
  TokenReviewer* tokenReviewer = nullptr;
  util::Duration tokenCacheTtl = std::chrono::seconds(10);
  // Null: every request the always-allow rules do not let through is forbidden.
  AccessReviewer* accessReviewer = nullptr;
  util::Duration authorizedTtl = std::chrono::seconds(10);
  util::Duration unauthorizedTtl = std::chrono::seconds(10);
  PathMatcher alwaysAllowPaths;
  std::vector<std::string> alwaysAllowGroups{"system:masters"};
  util::Clock* clock = nullptr;  // the real clock when null
  CertificateAuthentication certificates;
};

class DelegatedAuth {
 public:
  explicit DelegatedAuth(DelegatedAuthOptions options);

  // Nullopt when `request` may be served; otherwise the answer to send instead.
  std::optional<Response> check(const Request& request);
  // Swaps the client and request-header CAs; requests already being checked finish with the old.
  void setCertificates(CertificateAuthentication certificates);

 private:
  struct Authentication {
    std::optional<UserInfo> user;  // who, when authenticated (system:anonymous included)
    std::optional<Response> refusal;
  };
  Authentication authenticate(const Request& request);
  std::shared_ptr<const CertificateAuthentication> certificates() const;
  std::optional<Response> authorize(const UserInfo& user, std::string_view verb,
                                    std::string_view path, std::string_view target);

  DelegatedAuthOptions options_;
  util::Clock& clock_;
  TtlCache<TokenReviewStatus> tokens_;
  TtlCache<AccessReviewStatus> decisions_;
  mutable std::mutex certificates_mu_;
  std::shared_ptr<const CertificateAuthentication> certificates_;
};

// The bodies upstream answers with.
Response unauthorizedResponse();
Response forbiddenResponse(std::string_view user, std::string_view verb, std::string_view path,
                           std::string_view reason);

}  // namespace berth::serving
