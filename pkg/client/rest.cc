#include "pkg/client/rest.h"

#include <cpprest/http_client.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <pplx/threadpool.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/ip/address.hpp>
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
namespace http = web::http;

// What to send; built by each verb.
struct Request {
  Request(http::method m, std::string p, std::optional<std::string> b = std::nullopt,
          std::string type = "application/json")
      : method(std::move(m)),
        path(std::move(p)),
        body(std::move(b)),
        contentType(std::move(type)) {}

  http::method method;
  std::string path;  // with the query string
  std::optional<std::string> body;
  std::string contentType;
  bool idempotent = false;
  // The bearer token the last attempt sent, so a 401 drops that exec credential and no newer one.
  mutable std::string sentToken;
};

// A connection error's text; TLS errors carry the packed OpenSSL code, which std::error_code
// cannot name ("Unknown error 167772294").
std::string describe(const http::http_exception& e) {
  const int code = e.error_code().value();
  if (code > 0 && ERR_GET_LIB(static_cast<unsigned long>(code)) != 0) {
    if (const char* reason = ERR_reason_error_string(static_cast<unsigned long>(code))) {
      return std::string(e.what()) + ": " + reason;
    }
  }
  return e.what();
}

// Installs the TLS material on a context; the error names what failed to load.
util::Result<void> configureTls(boost::asio::ssl::context& ctx, const RestConfig& config) {
  boost::system::error_code ec;
  if (!config.caPem.empty()) {
    // Both transports load the system's roots first (cpprestsdk calls set_default_verify_paths()
    // before this callback): start from an empty store so that only the kubeconfig's CA is
    // trusted.
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

// Makes the context's verification check the server's host name or IP address against the
// certificate's subjectAltName only, never its CN (Go refuses a CN-only certificate since 1.15);
// cpprestsdk's own check (rfc2818_verification) would fall back to the CN.
void verifyHostOf(boost::asio::ssl::context& ctx, const std::string& server) {
  std::string host;
  try {
    host = web::uri(server).host();
  } catch (const std::exception&) {
    return;  // create() refuses such a URL
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  X509_VERIFY_PARAM* param = SSL_CTX_get0_param(ctx.native_handle());
  X509_VERIFY_PARAM_set_hostflags(
      param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS | X509_CHECK_FLAG_NEVER_CHECK_SUBJECT);
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  if (!ec) {
    X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  } else {
    X509_VERIFY_PARAM_set1_host(param, host.c_str(), 0);
  }
}

std::string header(const http::http_headers& headers, const std::string& name) {
  const auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

// A watch response body read in blocks and split into lines.
class HttpWatchStream final : public WatchStream {
 public:
  HttpWatchStream(http::http_response response, const pplx::cancellation_token_source& cts,
                  std::stop_token stop, size_t maxLineBytes)
      : response_(std::move(response)),
        body_(response_.body().streambuf()),
        cts_(cts),
        on_stop_(std::move(stop), [cts]() mutable { cts.cancel(); }),
        lines_(maxLineBytes) {}

  ~HttpWatchStream() override {
    // Close the connection, or cpprestsdk keeps reading the endless body into the buffer.
    cts_.cancel();
  }

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
      ApiResult<size_t> n = read();
      if (!n.ok()) {
        return n.error();
      }
      if (*n == 0) {
        if (ApiResult<void> end = lines_.finish(); !end.ok()) {
          return end.error();
        }
        return std::optional<WatchEvent>();
      }
    }
  }

 private:
  // Appends what is available (at least one byte, waiting for it); 0 at the end of the body.
  ApiResult<size_t> read() {
    try {
      // getn() of more than is buffered waits for all of it; ask for what is there, or for 1.
      const size_t want = std::clamp<size_t>(body_.in_avail(), 1, block_.size());
      const size_t n = body_.getn(block_.data(), want).get();
      lines_.append(std::string_view(reinterpret_cast<const char*>(block_.data()), n));
      return n;
    } catch (const http::http_exception& e) {
      if (cts_.get_token().is_canceled()) {
        return cancelledFailure();
      }
      return connectionFailure(describe(e));
    } catch (const pplx::task_canceled&) {
      return cancelledFailure();
    } catch (const std::exception& e) {
      if (cts_.get_token().is_canceled()) {
        return cancelledFailure();
      }
      return connectionFailure(e.what());
    }
  }

  http::http_response response_;
  Concurrency::streams::streambuf<uint8_t> body_;
  pplx::cancellation_token_source cts_;
  std::stop_callback<std::function<void()>> on_stop_;
  std::array<uint8_t, 64 * 1024> block_{};
  LineFramer lines_;
};

// The answer of one watch attempt: the response (headers received) or why there is none.
using Response = ApiResult<http::http_response>;

int statusOf(const http::http_response& resp) { return resp.status_code(); }
int statusOf(const HttpResponse& resp) { return resp.status; }

// How long an attempt took until the response headers arrived, for RequestDone.
Duration headersTook(const http::http_response&, Duration attempt) { return attempt; }
Duration headersTook(const HttpResponse& resp, Duration) { return resp.headersTook; }

// Idle keep-alive connections kept per client: more than the threads that call at once.
constexpr size_t kMaxIdleConnections = 32;

}  // namespace

void initializeClientThreads(size_t threads) {
  crossplat::threadpool::initialize_with_threads(threads);
}

// "https://10.0.0.1:6443/prefix" -> "10.0.0.1:6443".
std::string hostOf(std::string_view server) {
  if (const size_t scheme = server.find("://"); scheme != std::string_view::npos) {
    server.remove_prefix(scheme + 3);
  }
  return std::string(server.substr(0, server.find('/')));
}

// Unary calls go over the HttpTransport on the calling thread; watches, which stream, over
// cpprestsdk.
struct RestClient::Impl {
  RestConfig config;
  RestOptions options;
  util::Clock& clock;
  util::Random& random;
  HttpTransportPtr transport;
  std::optional<http::client::http_client> watchClient;
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

  http::client::http_client_config clientConfig(Duration timeout) const {
    http::client::http_client_config cfg;
    cfg.set_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
    if (config.server.starts_with("https://")) {
      cfg.set_validate_certificates(!config.insecureSkipTLSVerify);
      RestConfig tls = config;
      cfg.set_ssl_context_callback([tls](boost::asio::ssl::context& ctx) {
        // Checked in create(); a failure here would surface as a handshake error.
        configureTls(ctx, tls).ignore();
        if (!tls.insecureSkipTLSVerify) {
          verifyHostOf(ctx, tls.server);
        }
      });
    }
    return cfg;
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
      took = headersTook(*resp, took);
    }
    options.onRequest(RequestDone{r.method, host, code, took});
    return resp;
  }

  // One watch attempt: sends and waits for the response headers.
  Response attempt(const Request& r, pplx::cancellation_token_source& cts, std::stop_token stop) {
    http::http_request req(r.method);
    req.set_request_uri(r.path);
    http::http_headers& h = req.headers();
    h.add(http::header_names::accept, "application/json");
    h.add(http::header_names::user_agent, config.userAgent);
    ApiResult<std::string> token = bearerToken(r);
    if (!token.ok()) {
      return token.error();
    }
    if (!token->empty()) {
      h.add(http::header_names::authorization, "Bearer " + *token);
    }
    if (r.body) {
      // Bytes, not set_body(std::string): that overload reinterprets a char stream buffer as a
      // uint8_t one, which UBSan rightly reports. The header set first is kept by set_body.
      h.add(http::header_names::content_type, r.contentType);
      req.set_body(std::vector<unsigned char>(r.body->begin(), r.body->end()));
    }
    std::stop_callback onStop(stop, [&cts] { cts.cancel(); });
    try {
      return watchClient->request(req, cts.get_token()).get();
    } catch (const http::http_exception& e) {
      if (cts.get_token().is_canceled()) {
        return cancelledFailure();
      }
      return connectionFailure(describe(e));
    } catch (const pplx::task_canceled&) {
      return cancelledFailure();
    } catch (const std::exception& e) {
      return connectionFailure(e.what());
    }
  }

  // One unary attempt: sends and reads the whole answer, on this thread.
  ApiResult<HttpResponse> roundTrip(const Request& r, std::stop_token stop) {
    ApiResult<std::string> token = bearerToken(r);
    if (!token.ok()) {
      return token.error();
    }
    const std::string authorization = token->empty() ? std::string() : "Bearer " + *token;
    HttpRequest req{.method = r.method,
                    .target = r.path,
                    .body = r.body ? std::optional<std::string_view>(*r.body) : std::nullopt,
                    .contentType = r.contentType,
                    .accept = "application/json",
                    .userAgent = config.userAgent,
                    .authorization = authorization,
                    .idempotent = r.idempotent};
    return transport->roundTrip(req, std::move(stop));
  }

  // Turns a non-2xx watch response into its failure; reads the whole body.
  ApiFailure failureOf(const Request& r, http::http_response& resp) {
    std::string body;
    try {
      body = resp.extract_utf8string(true).get();
    } catch (const std::exception&) {
      // The code says enough; the body is only detail.
    }
    return failureOf(r, resp.status_code(), body,
                     header(resp.headers(), http::header_names::retry_after));
  }
  ApiFailure failureOf(const Request& r, HttpResponse& resp) {
    return failureOf(r, resp.status, resp.body, resp.retryAfter);
  }
  ApiFailure failureOf(const Request& r, int status, std::string_view body,
                       std::string_view retryAfter) {
    if (status == 401) {
      tokens.invalidate();  // perhaps the token rotated under us
      if (exec) {
        exec->invalidate(r.sentToken);  // client-go runs the plugin again after a 401
      }
    }
    return decodeFailure(status, r.method, body, retryAfter);
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
  try {
    const web::uri base(config.server);
    impl->watchClient.emplace(base, impl->clientConfig(impl->options.watchIdleTimeout));
  } catch (const std::exception& e) {
    return util::invalidArgument("server \"" + config.server + "\": " + e.what());
  }
  return std::unique_ptr<RestClient>(new RestClient(std::move(impl)));
}

const std::string& RestClient::server() const { return impl_->config.server; }

ApiResult<json> RestClient::get(const Resource& resource, std::string_view ns,
                                std::string_view name, std::string_view subresource,
                                std::stop_token stop) {
  Request r{http::methods::GET, resource.path(ns, name, subresource)};
  r.idempotent = true;
  return impl_->call(r, std::move(stop));
}

ApiResult<json> RestClient::getPath(std::string_view path, std::stop_token stop) {
  Request r{http::methods::GET, std::string(path)};
  r.idempotent = true;
  return impl_->call(r, std::move(stop));
}

ApiResult<ObjectList> RestClient::list(const Resource& resource, std::string_view ns,
                                       const ListOptions& options, std::stop_token stop) {
  Request r{http::methods::GET, resource.path(ns) + queryString(options)};
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
  Request r{http::methods::GET, resource.path(ns) + queryString(o)};
  r.idempotent = true;
  pplx::cancellation_token_source cts;
  Response resp = impl_->send<http::http_response>(r, stop, [&] {
    cts = pplx::cancellation_token_source();  // a cancelled attempt's source stays cancelled
    return impl_->attempt(r, cts, stop);
  });
  if (!resp.ok()) {
    return resp.error();
  }
  return WatchStreamPtr(std::make_unique<HttpWatchStream>(*std::move(resp), cts, std::move(stop),
                                                          impl_->options.maxWatchEventBytes));
}

ApiResult<json> RestClient::create(const Resource& resource, std::string_view ns,
                                   const json& object, std::stop_token stop) {
  Request r{http::methods::POST, resource.path(ns), object.dump()};
  return impl_->call(r, std::move(stop));
}

ApiResult<json> RestClient::post(const Resource& resource, std::string_view ns,
                                 std::string_view name, std::string_view subresource,
                                 const json& body, std::stop_token stop) {
  Request r{http::methods::POST, resource.path(ns, name, subresource), body.dump()};
  return impl_->call(r, std::move(stop));
}

ApiResult<json> RestClient::update(const Resource& resource, std::string_view ns,
                                   std::string_view name, const json& object,
                                   std::string_view subresource, std::stop_token stop) {
  Request r{http::methods::PUT, resource.path(ns, name, subresource), object.dump()};
  const auto meta = object.find("metadata");
  r.idempotent = meta != object.end() && meta->is_object() &&
                 meta->value("resourceVersion", std::string()) != "";
  return impl_->call(r, std::move(stop));
}

ApiResult<json> RestClient::patch(const Resource& resource, std::string_view ns,
                                  std::string_view name, PatchType type, const json& patch,
                                  std::string_view subresource, std::stop_token stop) {
  Request r{http::methods::PATCH, resource.path(ns, name, subresource), patch.dump(),
            std::string(api::contentType(type))};
  // A merge patch sets fields to given values: applying it twice is applying it once.
  r.idempotent = type != PatchType::Json;
  return impl_->call(r, std::move(stop));
}

ApiResult<json> RestClient::remove(const Resource& resource, std::string_view ns,
                                   std::string_view name, const Preconditions& preconditions,
                                   std::stop_token stop) {
  Request r{http::methods::DEL, resource.path(ns, name)};
  if (!preconditions.uid.empty() || !preconditions.resourceVersion.empty()) {
    r.body = api::encodeDeleteOptions({preconditions}).dump();
  }
  r.idempotent = true;
  return impl_->call(r, std::move(stop));
}

}  // namespace berth::client
