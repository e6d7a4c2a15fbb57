#include "pkg/serving/auth.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <utility>

#include "pkg/log/log.h"
#include "pkg/util/quote.h"

namespace berth::serving {
namespace {

using json = nlohmann::json;

constexpr size_t kCacheEntries = 4096;
constexpr std::string_view kAnonymous = "system:anonymous";

bool validUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07;
    } else {
      return false;
    }
    for (size_t k = 1; k <= n; ++k) {
      if (i + k >= s.size()) return false;
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
      return false;
    }
    i += n + 1;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The token of `Authorization: Bearer <token>` as k8s.io/apiserver's bearertoken reads it; empty
// when the header carries none (the request is then not a token request).
std::string_view bearerToken(std::string_view header) {
  header = trim(header);
  const size_t space = header.find(' ');
  if (space == std::string_view::npos) return {};
  std::string scheme(header.substr(0, space));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (scheme != "bearer") return {};
  std::string_view token = header.substr(space + 1);
  return token.substr(0, token.find(' '));
}

std::string statusJson(int code, std::string_view reason, const std::string& message,
                       bool details) {
  nlohmann::ordered_json status = {{"kind", "Status"},           {"apiVersion", "v1"},
                                   {"metadata", json::object()}, {"status", "Failure"},
                                   {"message", message},         {"reason", reason}};
  if (details) status["details"] = json::object();
  status["code"] = code;
  return status.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string lowered(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool sameHeaderName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && lowered(a) == lowered(b);
}

// url.PathUnescape of an extra key; the key as given when it is not well escaped, as upstream.
std::string unescapeExtraKey(std::string_view key) {
  std::string out;
  for (size_t i = 0; i < key.size(); ++i) {
    if (key[i] != '%') {
      out += key[i];
      continue;
    }
    if (i + 2 >= key.size() || !std::isxdigit(static_cast<unsigned char>(key[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(key[i + 2]))) {
      return std::string(key);
    }
    out += static_cast<char>(std::stoi(std::string(key.substr(i + 1, 2)), nullptr, 16));
    i += 2;
  }
  return out;
}

// The user a front proxy names in its headers (headerrequest's authenticator): the first
// username header with a value, every value of the group headers, the extra-prefixed headers.
std::optional<UserInfo> headerUser(const RequestHeaderConfig& config,
                                   const std::vector<Header>& headers) {
  auto values = [&](std::string_view name) {
    std::vector<std::string> out;
    for (const auto& [key, value] : headers) {
      if (!value.empty() && sameHeaderName(key, name)) out.emplace_back(value);
    }
    return out;
  };
  UserInfo user;
  for (const std::string& name : config.usernameHeaders) {
    std::vector<std::string> found = values(name);
    if (!found.empty()) {
      user.name = found.front();
      break;
    }
  }
  if (user.name.empty()) return std::nullopt;
  for (const std::string& name : config.groupHeaders) {
    for (std::string& group : values(name)) user.groups.push_back(std::move(group));
  }
  for (const auto& [key, value] : headers) {
    const std::string lowerKey = lowered(key);
    for (const std::string& prefix : config.extraHeaderPrefixes) {
      if (!lowerKey.starts_with(lowered(prefix))) continue;
      user.extra[unescapeExtraKey(std::string_view(lowerKey).substr(prefix.size()))].emplace_back(
          value);
    }
  }
  return user;
}

// group.AuthenticatedGroupAdder: every authenticated user is in system:authenticated.
UserInfo withAuthenticatedGroup(UserInfo user) {
  for (const std::string& group : user.groups) {
    if (group == "system:authenticated" || group == "system:unauthenticated") return user;
  }
  user.groups.emplace_back("system:authenticated");
  return user;
}

void logAuthenticationError(const std::string& err) {
  log::info(4, "Unable to authenticate the request", {{"err", err}});
}

// The decision cache's key: everything the review is asked about.
std::string decisionKey(const UserInfo& user, std::string_view verb, std::string_view path) {
  json key = {{"u", user.name},  {"i", user.uid}, {"g", user.groups},
              {"e", user.extra}, {"v", verb},     {"p", path}};
  return key.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

util::Result<PathMatcher> PathMatcher::create(const std::vector<std::string>& paths) {
  PathMatcher m;
  for (const std::string& raw : paths) {
    std::string_view p = raw;
    if (p.starts_with('/')) p.remove_prefix(1);
    const size_t star = p.find('*');
    if (star != std::string_view::npos && star != p.size() - 1) {
      return util::invalidArgument(
          "--authorization-always-allow-paths: only trailing * allowed in " + util::quoteGo(raw));
    }
    if (star != std::string_view::npos) {
      m.prefixes_.emplace_back(p.substr(0, star));
    } else {
      m.exact_.emplace_back(p);
    }
  }
  return m;
}

bool PathMatcher::matches(std::string_view path) const {
  if (path.starts_with('/')) path.remove_prefix(1);
  for (const std::string& e : exact_) {
    if (path == e) return true;
  }
  for (const std::string& p : prefixes_) {
    if (path.starts_with(p)) return true;
  }
  return false;
}

Response unauthorizedResponse() {
  return Response{401, "application/json", statusJson(401, "Unauthorized", "Unauthorized", false)};
}

Response forbiddenResponse(std::string_view user, std::string_view verb, std::string_view path,
                           std::string_view reason) {
  std::string message = "forbidden: User " + util::quoteGo(user) + " cannot " + std::string(verb) +
                        " path " + util::quoteGo(path) + ".";
  if (!reason.empty()) message += ": " + util::quoteGo(reason);
  return Response{403, "application/json", statusJson(403, "Forbidden", message, true)};
}

DelegatedAuth::DelegatedAuth(DelegatedAuthOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : util::realClock()),
      tokens_(clock_, kCacheEntries),
      decisions_(clock_, kCacheEntries),
      certificates_(
          std::make_shared<const CertificateAuthentication>(std::move(options_.certificates))) {}

void DelegatedAuth::setCertificates(CertificateAuthentication certificates) {
  auto next = std::make_shared<const CertificateAuthentication>(std::move(certificates));
  std::lock_guard lock(certificates_mu_);
  certificates_ = std::move(next);
}

std::shared_ptr<const CertificateAuthentication> DelegatedAuth::certificates() const {
  std::lock_guard lock(certificates_mu_);
  return certificates_;
}

std::optional<Response> DelegatedAuth::check(const Request& request) {
  Authentication authn = authenticate(request);
  if (authn.refusal) return authn.refusal;
  const std::string_view path = request.target.substr(0, request.target.find('?'));
  return authorize(*authn.user, lowered(request.method), path, request.target);
}

DelegatedAuth::Authentication DelegatedAuth::authenticate(const Request& request) {
  bool failed = false;
  // The union of the request-header, x509 and token authenticators: the first that succeeds
  // decides; one that fails lets the next try, and only when none succeeds does a failure make
  // the request 401.
  const std::shared_ptr<const CertificateAuthentication> certs = certificates();
  if (request.peer != nullptr && certs->requestHeader.ca != nullptr) {
    const RequestHeaderConfig& rh = certs->requestHeader;
    if (auto err = rh.ca->verify(*request.peer)) {
      logAuthenticationError("verifying the front proxy's certificate: " + *err);
      failed = true;
    } else if (!rh.allowedNames.empty() &&
               std::find(rh.allowedNames.begin(), rh.allowedNames.end(),
                         request.peer->commonName) == rh.allowedNames.end()) {
      logAuthenticationError("x509: subject with cn=" + request.peer->commonName +
                             " is not in the allowed list");
      failed = true;
    } else if (auto user = headerUser(rh, request.headers)) {
      if (!validUtf8(user->name) ||
          !std::all_of(user->groups.begin(), user->groups.end(), validUtf8) ||
          !std::all_of(user->extra.begin(), user->extra.end(), [](const auto& e) {
            return validUtf8(e.first) && std::all_of(e.second.begin(), e.second.end(), validUtf8);
          })) {
        // A SubjectAccessReview carries them as JSON strings, which must be UTF-8.
        return Authentication{
            std::nullopt,
            Response{400, "application/json",
                     statusJson(400, "BadRequest", "the front proxy's headers are not valid UTF-8",
                                false)}};
      }
      return Authentication{withAuthenticatedGroup(std::move(*user)), std::nullopt};
    }
  }
  if (request.peer != nullptr && certs->clientCa != nullptr) {
    if (auto err = certs->clientCa->verify(*request.peer)) {
      logAuthenticationError("verifying certificate: " + *err);
      failed = true;
    } else {
      UserInfo user{request.peer->commonName, "", request.peer->organizations, {}};
      return Authentication{withAuthenticatedGroup(std::move(user)), std::nullopt};
    }
  }
  const std::string_view token = bearerToken(request.authorization);
  if (!token.empty() && options_.tokenReviewer != nullptr) {
    if (!validUtf8(token)) {
      // Nothing that is not UTF-8 can be a token; it is not worth a TokenReview.
      return Authentication{
          std::nullopt,
          Response{400, "application/json",
                   statusJson(400, "BadRequest", "the bearer token is not valid UTF-8", false)}};
    }
    const std::string key(token);
    std::optional<TokenReviewStatus> status = tokens_.get(key);
    if (!status) {
      auto reviewed = options_.tokenReviewer->review(key);
      if (!reviewed.ok()) {
        log::warning("Unable to authenticate the request",
                     {{"err", "TokenReview failed: " + reviewed.error().message}});
        return Authentication{std::nullopt, unauthorizedResponse()};
      }
      status = std::move(*reviewed);
      tokens_.put(key, *status, options_.tokenCacheTtl);
    }
    if (status->authenticated && status->error.empty()) {
      return Authentication{withAuthenticatedGroup(status->user), std::nullopt};
    }
    failed = true;
  }
  if (failed) return Authentication{std::nullopt, unauthorizedResponse()};
  return Authentication{UserInfo{std::string(kAnonymous), "", {"system:unauthenticated"}, {}},
                        std::nullopt};
}

std::optional<Response> DelegatedAuth::authorize(const UserInfo& user, std::string_view verb,
                                                 std::string_view path, std::string_view target) {
  for (const std::string& group : user.groups) {
    for (const std::string& allowed : options_.alwaysAllowGroups) {
      if (group == allowed) return std::nullopt;
    }
  }
  if (options_.alwaysAllowPaths.matches(path)) return std::nullopt;
  if (options_.accessReviewer == nullptr) return forbiddenResponse(user.name, verb, path, "");
  const std::string key = decisionKey(user, verb, path);
  std::optional<AccessReviewStatus> status = decisions_.get(key);
  if (!status) {
    auto reviewed = options_.accessReviewer->review(user, verb, path);
    if (!reviewed.ok()) {
      log::warning("Unable to authorize the request",
                   {{"err", "SubjectAccessReview failed: " + reviewed.error().message}});
      return Response{500, "text/plain; charset=utf-8",
                      "Internal Server Error: " + util::quoteGo(target) + ": " +
                          reviewed.error().message + "\n"};
    }
    status = std::move(*reviewed);
    decisions_.put(key, *status,
                   status->allowed ? options_.authorizedTtl : options_.unauthorizedTtl);
  }
  if (status->allowed && !status->denied) return std::nullopt;
  log::info(4, "Forbidden", {{"URI", std::string(target)}, {"reason", status->reason}});
  return forbiddenResponse(user.name, verb, path, status->reason);
}

}  // namespace berth::serving
