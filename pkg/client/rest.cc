#include "pkg/client/rest.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/ssl.hpp>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pkg/api/json.h"
#include "pkg/client/http_transport.h"
#include "pkg/client/line_framer.h"
#include "pkg/client/rate_limiter.h"
#include "pkg/client/token_source.h"
#include "pkg/log/log.h"

namespace berth::client {
namespace {

using nlohmann::json;

// What to send; built by each verb.
struct Request {
  Request(std::string_view m, std::string p, std::optional<std::string> b = std::nullopt,
          std::string type = "application/json")
      : method(m), path(std::move(p)), body(std::move(b)), contentType(std::move(type)) {}

  std::string_view method;  // "GET": a literal
  std::string path;         // with the query string
  std::optional<std::string> body;
  std::string contentType;
  bool idempotent = false;
  // The bearer token the last attempt sent, so a 401 drops that exec credential and no newer one.
  mutable std::string sentToken;
};

// Installs the TLS material on a context; the error names what failed to load.
util::Result<void> configureTls(boost::asio::ssl::context& ctx, const RestConfig& config) {
  boost::system::error_code ec;
  if (!config.caPem.empty()) {
    // The context loaded the system's roots first: start from an empty store so that only the
    // kubeconfig's CA is trusted.
    X509_STORE* store = X509_STORE_new();
    // The kubeconfig's CA may be the server's own certificate (a leaf, or an intermediate), which
    // Go's verifier (and so kubectl) accepts as a root; OpenSSL does with PARTIAL_CHAIN.
    X509_STORE_set_flags(store, X509_V_FLAG_PARTIAL_CHAIN);
    SSL_CTX_set_cert_store(ctx.native_handle(), store);
    ctx.add_certificate_authority(boost::asio::buffer(config.caPem), ec);
    if (ec) {
      return util::invalidArgument("certificate authority: " + ec.message());
    }
  }
  if (!config.clientCertPem.empty()) {
    ctx.use_certificate_chain(boost::asio::buffer(config.clientCertPem), ec);
    if (ec) {
      return util::invalidArgument("client certificate: " + ec.message());
    }
    ctx.use_private_key(boost::asio::buffer(config.clientKeyPem), boost::asio::ssl::context::pem,
                        ec);
    if (ec) {
      return util::invalidArgument("client key: " + ec.message());
    }
  }
  return {};
}

// A watch response body read a block at a time and split into lines. Nothing more is read from
// the socket until the lines already read are consumed, so the caller's pace holds the server
// back (TCP flow control) and at most one event plus one block is buffered.
class HttpWatchStream final : public WatchStream {
 public:
  HttpWatchStream(HttpTransport::StreamPtr body, size_t maxLineBytes)
      : body_(std::move(body)), lines_(maxLineBytes) {}

  ApiResult<std::optional<WatchEvent>> next() override {
    while (true) {
      ApiResult<std::optional<std::string_view>> line = lines_.next();
      if (!line.ok()) {
        return line.error();
      }
      if (line->has_value()) {
        ApiResult<WatchEvent> event = decodeWatchEvent(**line);
        if (!event.ok()) {
          return event.error();
        }
        return std::optional<WatchEvent>(*std::move(event));
      }
      ApiResult<std::string_view> bytes = body_->read();
      if (!bytes.ok()) {
        return bytes.error();
      }
      if (bytes->empty()) {
        if (ApiResult<void> end = lines_.finish(); !end.ok()) {
          return end.error();
        }
        return std::optional<WatchEvent>();
      }
      lines_.append(*bytes);
      most_buffered_ = std::max(most_buffered_, lines_.bufferedBytes() + body_->bufferedBytes());
    }
  }

  size_t mostBufferedBytes() const override { return most_buffered_; }

 private:
  HttpTransport::StreamPtr body_;
  LineFramer lines_;
  size_t most_buffered_ = 0;
};

int statusOf(const HttpResponse& resp) { return resp.status; }
int statusOf(const HttpTransport::Opened& opened) {
  return opened.stream ? opened.stream->status() : opened.response->status;
}

// How long an attempt took until the response headers arrived, for RequestDone.
Duration headersTook(const HttpResponse& resp) { return resp.headersTook; }
Duration headersTook(const HttpTransport::Opened& opened) {
  return opened.stream ? opened.stream->headersTook() : opened.response->headersTook;
}

// The host a redirect points to, "localhost:47123"; empty for one to a path on the same server.
std::string_view redirectHost(std::string_view location) {
  const size_t scheme = location.find("://");
  if (scheme == std::string_view::npos) {
    return {};
  }
  location.remove_prefix(scheme + 3);
  location = location.substr(0, location.find_first_of("/?#"));
  if (const size_t at = location.rfind('@'); at != std::string_view::npos) {
    location.remove_prefix(at + 1);  // never repeat credentials from the URL
  }
  return location;
}

// Idle keep-alive connections kept per client: more than the threads that call at once.
constexpr size_t kMaxIdleConnections = 32;

}  // namespace

// "https://10.0.0.1:6443/prefix" -> "10.0.0.1:6443".
std::string hostOf(std::string_view server) {
  if (const size_t scheme = server.find("://"); scheme != std::string_view::npos) {
    server.remove_prefix(scheme + 3);
  }
  return std::string(server.substr(0, server.find('/')));
}

// Every call goes over the HttpTransport on the calling thread; a watch streams its body.
struct RestClient::Impl {
  RestConfig config;
  RestOptions options;
  util::Clock& clock;
  util::Random& random;
  HttpTransportPtr transport;
  TokenSource tokens;
  std::unique_ptr<ExecCredentialSource> exec;  // when the user's credentials come from a plugin
  TokenBucket limiter;
  std::string host;  // "host:port" of the server, the metrics' host label
  // A retried failure was logged and no call has succeeded since.
  std::atomic<bool> failing{false};

  Impl(const RestConfig& c, RestOptions o)
      : config(c),
        options(std::move(o)),
        clock(options.clock ? *options.clock : util::realClock()),
        random(options.random ? *options.random : util::defaultRandom()),
        tokens(c.bearerToken, c.tokenFile, options.tokenCheckInterval, clock),
        limiter(c.qps < 0 ? 0 : (c.qps == 0 ? 5 : c.qps), c.burst == 0 ? 10 : c.burst, clock),
        host(hostOf(c.server)) {}

  // The bearer token for the next attempt: the exec plugin's (run when none is cached or it
  // expired) or the configured one.
  ApiResult<std::string> bearerToken(const Request& r) {
    if (!exec) {
      r.sentToken = tokens.token();
      return r.sentToken;
    }
    util::Result<ExecCredential> cred = exec->credential();
    if (!cred.ok()) {
      return connectionFailure(cred.error().message);
    }
    r.sentToken = cred->token;
    return r.sentToken;
  }

  // One attempt (made by `attempt`), reported to options.onRequest.
  template <typename Answer, typename Attempt>
  ApiResult<Answer> sendOnce(const Request& r, Attempt& attempt) {
    if (!options.onRequest) return attempt();
    const TimePoint start = clock.monotonicNow();
    ApiResult<Answer> resp = attempt();
    Duration took = clock.monotonicNow() - start;
    // client-go's code label: the status, or "<error>" when no answer came.
    std::string code = "<error>";
    if (resp.ok()) {
      code = std::to_string(statusOf(*resp));
      took = headersTook(*resp);
    }
    options.onRequest(RequestDone{r.method, host, code, took});
    return resp;
  }

  // One attempt with the current credentials: `exchange` sends the request it is given.
  template <typename Answer, typename Exchange>
  ApiResult<Answer> withRequest(const Request& r, const Exchange& exchange) {
    ApiResult<std::string> token = bearerToken(r);
    if (!token.ok()) {
      return token.error();
    }
    const std::string authorization = token->empty() ? std::string() : "Bearer " + *token;
    const HttpRequest req{.method = r.method,
                          .target = r.path,
                          .body = r.body ? std::optional<std::string_view>(*r.body) : std::nullopt,
                          .contentType = r.contentType,
                          .accept = "application/json",
                          .userAgent = config.userAgent,
                          .authorization = authorization,
                          .idempotent = r.idempotent};
    return exchange(req);
  }

  // One unary attempt: sends and reads the whole answer, on this thread.
  ApiResult<HttpResponse> roundTrip(const Request& r, const std::stop_token& stop) {
    return withRequest<HttpResponse>(
        r, [&](const HttpRequest& req) { return transport->roundTrip(req, stop); });
  }

  // One watch attempt: sends and waits for the response headers.
  ApiResult<HttpTransport::Opened> openWatch(const Request& r, const std::stop_token& stop) {
    return withRequest<HttpTransport::Opened>(r, [&](const HttpRequest& req) {
      return transport->openStream(req, options.watchIdleTimeout, stop);
    });
  }

  // Turns a non-2xx answer into its failure.
  ApiFailure failureOf(const Request& r, const HttpTransport::Opened& opened) {
    return failureOf(r, *opened.response);
  }
  ApiFailure failureOf(const Request& r, const HttpResponse& resp) {
    if (resp.status == 401) {
      tokens.invalidate();  // perhaps the token rotated under us
      if (exec) {
        exec->invalidate(r.sentToken);  // client-go runs the plugin again after a 401
      }
    }
    ApiFailure failure = decodeFailure(resp.status, r.method, resp.body, resp.retryAfter);
    if (resp.status >= 300 && resp.status < 400) {
      // Redirects are not followed: the credentials would go with the request to whoever the
      // Location names, and lists and watches could end up on different servers.
      const std::string_view to = redirectHost(resp.location);
      failure.status.message = std::string(r.method) + " " + r.path +
                               ": the server redirected to " +
                               (to.empty() ? std::string("another path on itself")
                                           : "host \"" + std::string(to) + "\"") +
                               ", which berth does not follow";
    }
    return failure;
  }

  // Sends with rate limiting and, for idempotent requests, retries; `attempt()` makes one
  // attempt. On success the answer's status is 2xx.
  template <typename Answer, typename Attempt>
  ApiResult<Answer> send(const Request& r, std::stop_token stop, Attempt attempt) {
    Backoff backoff(options.retry.backoff, clock, random);
    for (int attempts = 0;; ++attempts) {
      if (!limiter.wait(stop)) {
        return cancelledFailure();
      }
      ApiResult<Answer> resp = sendOnce<Answer>(r, attempt);
      std::optional<ApiFailure> failure;
      if (!resp.ok()) {
        failure = resp.error();
      } else if (statusOf(*resp) >= 300) {
        failure = failureOf(r, *resp);
      } else {
        if (failing.exchange(false)) {
          log::info(2, "Request succeeded after failures",
                    {{"method", r.method}, {"path", r.path}});
        }
        return resp;
      }
      if (!r.idempotent || !failure->isTransient() || attempts >= options.retry.maxRetries) {
        return *std::move(failure);
      }
      Duration wait = backoff.next();
      if (failure->retryAfter) {
        wait = std::min<Duration>(*failure->retryAfter, options.retry.maxRetryAfter);
      }
      const auto waitMs = std::chrono::duration_cast<std::chrono::milliseconds>(wait).count();
      // The first failure of a series is what an operator needs at once (an unreachable
      // server, a wrong CA); its retries, and the failures after it until a call succeeds,
      // only at V(4).
      if (!failing.exchange(true)) {
        log::error(failure->toString(), "Request failed; retrying",
                   {{"method", r.method},
                    {"url", config.server + r.path},
                    {"attempt", attempts + 1},
                    {"waitMs", waitMs}});
      } else {
        log::info(4, "Retrying request",
                  {{"method", r.method},
                   {"path", r.path},
                   {"attempt", attempts + 1},
                   {"waitMs", waitMs},
                   {"err", failure->toString()}});
      }
      if (!clock.sleepFor(wait, stop)) {
        return cancelledFailure();
      }
    }
  }

  ApiResult<json> call(const Request& r, std::stop_token stop) {
    ApiResult<HttpResponse> resp = send<HttpResponse>(r, stop, [&] { return roundTrip(r, stop); });
    if (!resp.ok()) {
      return resp.error();
    }
    if (resp->body.empty()) {
      return json();
    }
    auto j = api::parseJson(resp->body);
    if (!j) {
      return badResponse(std::string(r.method) + " " + r.path +
                         ": response is not JSON: " + j.error().message);
    }
    return std::move(*j);
  }
};

RestClient::RestClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RestClient::~RestClient() = default;

util::Result<std::unique_ptr<RestClient>> RestClient::create(const RestConfig& config,
                                                             RestOptions options) {
  const bool https = config.server.starts_with("https://");
  if (!https && !config.server.starts_with("http://")) {
    return util::invalidArgument("server \"" + config.server +
                                 "\": must be an https:// or http:// URL");
  }
  if (!config.tlsServerName.empty()) {
    return util::Error{util::ErrorCode::Unimplemented,
                       "tls-server-name is not supported by berth's client"};
  }
  RestConfig effective = config;
  std::unique_ptr<ExecCredentialSource> exec;
  if (config.exec) {
    exec =
        std::make_unique<ExecCredentialSource>(*config.exec, options.interactiveCredentials,
                                               options.clock ? *options.clock : util::realClock());
    // A plugin may answer with a client certificate, which the TLS contexts need now; running
    // it here also reports a missing or failing plugin before the first request. The
    // certificate is kept for the client's life (a token is refreshed on expiry and 401).
    util::Result<ExecCredential> cred = exec->credential();
    if (!cred.ok()) {
      return cred.error();
    }
    effective.clientCertPem = cred->clientCertPem;
    effective.clientKeyPem = cred->clientKeyPem;
  }
  std::optional<boost::asio::ssl::context> tls;
  if (https) {
    try {
      boost::asio::ssl::context& ctx = tls.emplace(boost::asio::ssl::context::tls_client);
      boost::system::error_code ec;
      ctx.set_options(
          boost::asio::ssl::context::default_workarounds | boost::asio::ssl::context::no_sslv2 |
              boost::asio::ssl::context::no_sslv3 | boost::asio::ssl::context::no_compression,
          ec);
      // The system's roots, replaced by the kubeconfig's CA when it names one.
      ctx.set_default_verify_paths(ec);
      if (util::Result<void> r = configureTls(ctx, effective); !r.ok()) {
        return r.error();
      }
    } catch (const std::exception& e) {
      return util::Error{util::ErrorCode::Internal, std::string("TLS setup: ") + e.what()};
    }
  }
  auto impl = std::make_unique<Impl>(effective, std::move(options));
  impl->exec = std::move(exec);
  HttpTransportOptions transportOptions{.timeout = impl->options.requestTimeout,
                                        .maxBodyBytes = impl->options.maxResponseBytes,
                                        .maxIdleConnections = kMaxIdleConnections};
  auto transport = HttpTransport::create(effective.server, std::move(tls),
                                         !effective.insecureSkipTLSVerify, transportOptions);
  if (!transport.ok()) {
    return transport.error();
  }
  impl->transport = *std::move(transport);
  return std::unique_ptr<RestClient>(new RestClient(std::move(impl)));
}

const std::string& RestClient::server() const { return impl_->config.server; }

ApiResult<json> RestClient::get(const Resource& resource, std::string_view ns,
                                std::string_view name, std::string_view subresource,
                                std::stop_token stop) {
  Request r{"GET", resource.path(ns, name, subresource)};
  r.idempotent = true;
  return impl_->call(r, std::move(stop));
}

ApiResult<json> RestClient::getPath(std::string_view path, std::stop_token stop) {
  Request r{"GET", std::string(path)};
  r.idempotent = true;
  return impl_->call(r, std::move(stop));
}

ApiResult<ObjectList> RestClient::list(const Resource& resource, std::string_view ns,
                                       const ListOptions& options, std::stop_token stop) {
  Request r{"GET", resource.path(ns) + queryString(options)};
  r.idempotent = true;
  ApiResult<json> body = impl_->call(r, std::move(stop));
  if (!body.ok()) {
    return body.error();
  }
  return decodeList(*std::move(body));
}

ApiResult<ObjectList> RestClient::listAll(const Resource& resource, std::string_view ns,
                                          const ListOptions& options, std::stop_token stop) {
  return listAllPages([&](const ListOptions& page) { return list(resource, ns, page, stop); },
                      options, stop);
}

ApiResult<WatchStreamPtr> RestClient::watch(const Resource& resource, std::string_view ns,
                                            const WatchOptions& options, std::stop_token stop) {
  WatchOptions o = options;
  const auto limit = std::chrono::duration_cast<std::chrono::seconds>(
                         impl_->options.watchIdleTimeout - std::chrono::minutes(1))
                         .count();
  if (o.timeoutSeconds <= 0 || o.timeoutSeconds > limit) {
    o.timeoutSeconds = std::max<int64_t>(limit, 1);
  }
  Request r{"GET", resource.path(ns) + queryString(o)};
  r.idempotent = true;
  ApiResult<HttpTransport::Opened> opened =
      impl_->send<HttpTransport::Opened>(r, stop, [&] { return impl_->openWatch(r, stop); });
  if (!opened.ok()) {
    return opened.error();
  }
  return WatchStreamPtr(std::make_unique<HttpWatchStream>(std::move(opened->stream),
                                                          impl_->options.maxWatchEventBytes));
}

ApiResult<json> RestClient::create(const Resource& resource, std::string_view ns,
                                   const json& object, std::stop_token stop) {
  Request r{"POST", resource.path(ns), object.dump()};
  return impl_->call(r, std::move(stop));
}

ApiResult<json> RestClient::post(const Resource& resource, std::string_view ns,
                                 std::string_view name, std::string_view subresource,
                                 const json& body, std::stop_token stop) {
  Request r{"POST", resource.path(ns, name, subresource), body.dump()};
  return impl_->call(r, std::move(stop));
}

ApiResult<json> RestClient::update(const Resource& resource, std::string_view ns,
                                   std::string_view name, const json& object,
                                   std::string_view subresource, std::stop_token stop) {
  Request r{"PUT", resource.path(ns, name, subresource), object.dump()};
  const auto meta = object.find("metadata");
  r.idempotent = meta != object.end() && meta->is_object() &&
                 meta->value("resourceVersion", std::string()) != "";
  return impl_->call(r, std::move(stop));
}

ApiResult<json> RestClient::patch(const Resource& resource, std::string_view ns,
                                  std::string_view name, PatchType type, const json& patch,
                                  std::string_view subresource, std::stop_token stop) {
  Request r{"PATCH", resource.path(ns, name, subresource), patch.dump(),
            std::string(api::contentType(type))};
  // A merge patch sets fields to given values: applying it twice is applying it once.
  r.idempotent = type != PatchType::Json;
  return impl_->call(r, std::move(stop));
}

ApiResult<json> RestClient::remove(const Resource& resource, std::string_view ns,
                                   std::string_view name, const Preconditions& preconditions,
                                   std::stop_token stop) {
  Request r{"DELETE", resource.path(ns, name)};
  if (!preconditions.uid.empty() || !preconditions.resourceVersion.empty()) {
    r.body = api::encodeDeleteOptions({preconditions}).dump();
  }
  r.idempotent = true;
  return impl_->call(r, std::move(stop));
}

}  // namespace berth::client
