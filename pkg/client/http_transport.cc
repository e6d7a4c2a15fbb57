#include "pkg/client/http_transport.h"

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <poll.h>

#include <array>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/span.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <exception>
#include <limits>

#include "pkg/log/log.h"

namespace berth::client {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

// Go's http.Transport reads at most 1 MiB of response headers; kube-apiserver sends a few hundred
// bytes.
constexpr uint32_t kMaxHeaderBytes = 1024 * 1024;

std::string durationText(Duration d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + "s" : std::to_string(ms) + "ms";
}

// A failed step's text: what was done, then why, with Beast's timeout in words.
std::string stepError(std::string_view step, const error_code& ec, Duration timeout) {
  std::string why =
      ec == beast::error::timeout ? "timed out after " + durationText(timeout) : ec.message();
  return std::string(step) + ": " + why;
}

// OpenSSL's reason ("certificate verify failed"), and for a rejected certificate why it was
// rejected ("unable to get local issuer certificate", "IP address mismatch").
std::string tlsError(std::string_view step, const error_code& ec, Duration timeout, SSL* ssl) {
  std::string text = stepError(step, ec, timeout);
  if (ec.category() == net::error::get_ssl_category()) {
    if (const long verify = SSL_get_verify_result(ssl); verify != X509_V_OK) {
      text += ": ";
      text += X509_verify_cert_error_string(verify);
    }
  }
  return text;
}

// Beast 1.74 speaks boost::string_view.
beast::string_view bsv(std::string_view s) { return {s.data(), s.size()}; }

}  // namespace

// One connection and the io_context its operations run on. Only the thread that holds it runs
// the io_context; abort() may be called from any thread.
class HttpTransport::Connection {
 public:
  explicit Connection(ssl::context* tls) : tcp_(ioc_) {
    if (tls != nullptr) {
      tls_.emplace(tcp_, *tls);
    }
  }

  // Starts an asynchronous operation (start(handler)) and runs the io_context on this thread
  // until it completes, whether done, failed, timed out or aborted.
  template <typename Start>
  error_code await(Start&& start) {
    std::optional<error_code> result;
    std::forward<Start>(start)([&result](error_code ec, auto&&...) { result = ec; });
    ioc_.restart();
    ioc_.run();
    return result.value_or(net::error::operation_aborted);
  }

  // Calls f with the stream requests go over: TLS over TCP, or TCP.
  template <typename F>
  void withStream(F&& f) {
    if (tls_) {
      f(*tls_);
    } else {
      f(tcp_);
    }
  }

  // Thread-safe: the io_context closes the socket, which fails any operation in flight (or the
  // next one) with operation_aborted. The connection is never reused after this.
  void abort() {
    aborted_ = true;
    net::post(ioc_, [this] { tcp_.close(); });
  }
  bool aborted() const { return aborted_.load(); }

  // True when the server closed it or sent bytes nobody asked for (either way no request may be
  // written to it), or when it has been idle too long.
  bool stale(TimePoint now, Duration maxIdle) {
    if (now - idle_since_ > maxIdle || buffer_.size() != 0 ||
        (tls_ && SSL_pending(tls_->native_handle()) > 0)) {
      return true;
    }
    pollfd p{tcp_.socket().native_handle(), POLLIN | POLLRDHUP, 0};
    return ::poll(&p, 1, 0) != 0;  // readable: EOF or stray bytes; < 0: cannot tell, drop it
  }

  net::io_context& ioc() { return ioc_; }
  beast::tcp_stream& tcp() { return tcp_; }
  ssl::stream<beast::tcp_stream&>* tls() { return tls_ ? &*tls_ : nullptr; }
  beast::flat_buffer& buffer() { return buffer_; }
  TimePoint idleSince() const { return idle_since_; }
  void markIdle(TimePoint now) { idle_since_ = now; }

 private:
  // Destroyed last: the streams' pending handlers belong to it.
  net::io_context ioc_{1};
  beast::tcp_stream tcp_;
  std::optional<ssl::stream<beast::tcp_stream&>> tls_;
  beast::flat_buffer buffer_;
  std::atomic<bool> aborted_{false};
  TimePoint idle_since_{};
};

// What one exchange on a connection gave.
struct HttpTransport::Outcome {
  std::optional<HttpResponse> response;  // complete
  std::optional<ApiFailure> failure;     // when there is no response
  bool answerStarted = false;            // some of the answer arrived before the failure
  bool timedOut = false;                 // the server stopped answering, rather than closed
  bool keepAlive = false;                // the connection may carry another request
};

HttpTransport::HttpTransport(Endpoint endpoint, std::optional<ssl::context> tls, bool verifyPeer,
                             HttpTransportOptions options)
    : endpoint_(std::move(endpoint)),
      tls_(std::move(tls)),
      verify_peer_(verifyPeer),
      options_(options) {}

HttpTransport::~HttpTransport() = default;

util::Result<std::unique_ptr<HttpTransport>> HttpTransport::create(std::string_view server,
                                                                   std::optional<ssl::context> tls,
                                                                   bool verifyPeer,
                                                                   HttpTransportOptions options) {
  const std::string where = "server \"" + std::string(server) + "\"";
  Endpoint e;
  std::string_view rest = server;
  bool https = false;
  if (rest.starts_with("https://")) {
    https = true;
    rest.remove_prefix(8);
  } else if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else {
    return util::invalidArgument(where + ": must be an https:// or http:// URL");
  }
  if (https && !tls) {
    return util::invalidArgument(where + ": https needs a TLS context");
  }
  const size_t authorityEnd = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, authorityEnd);
  std::string_view path =
      authorityEnd == std::string_view::npos ? std::string_view() : rest.substr(authorityEnd);
  path = path.substr(0, path.find_first_of("?#"));
  while (path.ends_with('/')) {
    path.remove_suffix(1);
  }
  if (authority.find('@') != std::string_view::npos) {
    return util::invalidArgument(where + ": user information in the URL is not supported");
  }
  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with('[')) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return util::invalidArgument(where + ": unterminated IPv6 address");
    }
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty() && !after.starts_with(':')) {
      return util::invalidArgument(where + ": unexpected text after the IPv6 address");
    }
    port = after.empty() ? after : after.substr(1);
  } else if (const size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) {
    return util::invalidArgument(where + ": no host");
  }
  unsigned portNumber = https ? 443 : 80;
  if (!port.empty()) {
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), portNumber);
    if (ec != std::errc() || end != port.data() + port.size() || portNumber == 0 ||
        portNumber > 65535) {
      return util::invalidArgument(where + ": invalid port \"" + std::string(port) + "\"");
    }
  }
  e.host = std::string(host);
  e.port = static_cast<uint16_t>(portNumber);
  e.hostHeader = std::string(authority);
  e.prefix = std::string(path);
  error_code ec;
  e.address = net::ip::make_address(e.host, ec);
  e.hostIsAddress = !ec;
  return std::unique_ptr<HttpTransport>(
      new HttpTransport(std::move(e), std::move(tls), verifyPeer, options));
}

ApiResult<HttpResponse> HttpTransport::roundTrip(const HttpRequest& request, std::stop_token stop) {
  const TimePoint start = Clock::now();
  try {
    // At most twice: a reused connection found dead lets an idempotent request try a new one.
    for (int attempt = 0;; ++attempt) {
      if (stop.stop_requested()) {
        return cancelledFailure();
      }
      ConnectionPtr connection = attempt == 0 ? takeIdle() : nullptr;
      const bool reused = connection != nullptr;
      if (!reused) {
        connection = std::make_unique<Connection>(tls_ ? &*tls_ : nullptr);
      }
      Outcome outcome;
      {
        std::stop_callback abortOnStop(stop, [&c = *connection] { c.abort(); });
        if (!reused) {
          outcome.failure = connect(*connection);
        }
        if (!outcome.failure) {
          outcome = exchange(*connection, request, start);
        }
      }  // from here on no stop request touches the connection
      if (outcome.response) {
        // A complete answer stands even if a stop came late: the request took effect.
        if (outcome.keepAlive && !connection->aborted()) {
          putIdle(std::move(connection));
        }
        return *std::move(outcome.response);
      }
      if (connection->aborted()) {
        return cancelledFailure();
      }
      // A server that closed the connection as the request went out did not answer it; one that
      // stopped answering is left to the caller's retries and their backoff.
      if (reused && request.idempotent && !outcome.answerStarted && !outcome.timedOut) {
        log::info(5, "Retrying request on a new connection: the reused one was closed",
                  {{"method", request.method},
                   {"path", request.target},
                   {"err", outcome.failure->toString()}});
        continue;
      }
      return *std::move(outcome.failure);
    }
  } catch (const std::exception& e) {
    // Asio throws only when the system is out of resources (descriptors, memory).
    return connectionFailure(std::string("HTTP transport: ") + e.what());
  }
}

std::optional<ApiFailure> HttpTransport::connect(Connection& c) {
  const Endpoint& e = endpoint_;
  std::vector<tcp::endpoint> targets;
  if (e.hostIsAddress) {
    targets.emplace_back(e.address, e.port);
  } else {
    // Synchronous: an asynchronous resolve would start a thread per io_context.
    tcp::resolver resolver(c.ioc());
    error_code ec;
    const auto results = resolver.resolve(e.host, std::to_string(e.port), ec);
    if (ec) {
      return connectionFailure("resolve " + e.host + ": " + ec.message());
    }
    for (const auto& entry : results) {
      targets.push_back(entry.endpoint());
    }
  }
  // An abort that came before the socket was opened closed nothing; the checks between the
  // steps catch it.
  if (c.aborted()) {
    return cancelledFailure();
  }
  c.tcp().expires_after(options_.timeout);
  error_code ec =
      c.await([&](auto handler) { c.tcp().async_connect(targets, std::move(handler)); });
  if (ec) {
    return connectionFailure(stepError("connect to " + e.hostHeader, ec, options_.timeout));
  }
  c.tcp().socket().set_option(tcp::no_delay(true), ec);  // a request is one write; never wait
  ssl::stream<beast::tcp_stream&>* tls = c.tls();
  if (tls == nullptr) {
    return std::nullopt;
  }
  SSL* ssl = tls->native_handle();
  // RFC 6066 forbids IP addresses in SNI.
  if (!e.hostIsAddress && SSL_set_tlsext_host_name(ssl, e.host.c_str()) != 1) {
    return connectionFailure("TLS: cannot send server name \"" + e.host + "\"");
  }
  if (verify_peer_) {
    // OpenSSL checks the name while it verifies the chain (as asio's host_name_verification
    // does), and a mismatch then reads "hostname mismatch" rather than a bare verify failure.
    // Only the subjectAltName counts: Go has refused a name found only in the CN since 1.15.
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    X509_VERIFY_PARAM_set_hostflags(
        param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS | X509_CHECK_FLAG_NEVER_CHECK_SUBJECT);
    const int named = e.hostIsAddress ? X509_VERIFY_PARAM_set1_ip_asc(param, e.host.c_str())
                                      : X509_VERIFY_PARAM_set1_host(param, e.host.c_str(), 0);
    if (named != 1) {
      return connectionFailure("TLS: cannot verify against host \"" + e.host + "\"");
    }
  }
  tls->set_verify_mode(verify_peer_ ? ssl::verify_peer : ssl::verify_none, ec);
  if (c.aborted()) {
    return cancelledFailure();
  }
  c.tcp().expires_after(options_.timeout);
  ec = c.await([&](auto handler) { tls->async_handshake(ssl::stream_base::client, handler); });
  if (ec) {
    return connectionFailure(
        tlsError("TLS handshake with " + e.hostHeader, ec, options_.timeout, ssl));
  }
  return std::nullopt;
}

std::optional<ApiFailure> HttpTransport::writeRequest(Connection& c, const HttpRequest& request,
                                                      bool& timedOut) {
  http::request<http::span_body<const char>> req;
  if (const http::verb verb = http::string_to_verb(bsv(request.method));
      verb != http::verb::unknown) {
    req.method(verb);
  } else {
    req.method_string(bsv(request.method));
  }
  std::string target;
  if (!endpoint_.prefix.empty()) {
    target = endpoint_.prefix + std::string(request.target);
    req.target(target);
  } else {
    req.target(bsv(request.target));
  }
  req.version(11);
  req.set(http::field::host, bsv(endpoint_.hostHeader));
  if (!request.accept.empty()) {
    req.set(http::field::accept, bsv(request.accept));
  }
  if (!request.userAgent.empty()) {
    req.set(http::field::user_agent, bsv(request.userAgent));
  }
  if (!request.authorization.empty()) {
    req.set(http::field::authorization, bsv(request.authorization));
  }
  if (request.body) {
    req.set(http::field::content_type, bsv(request.contentType));
    req.body() = beast::span<const char>(request.body->data(), request.body->size());
    req.content_length(request.body->size());
  }

  if (c.aborted()) {
    return cancelledFailure();
  }
  c.tcp().expires_after(options_.timeout);
  const error_code ec = c.await([&](auto handler) {
    c.withStream([&](auto& stream) { http::async_write(stream, req, std::move(handler)); });
  });
  if (ec) {
    timedOut = ec == beast::error::timeout;
    return connectionFailure(stepError("sending the request", ec, options_.timeout));
  }
  return std::nullopt;
}

HttpTransport::Outcome HttpTransport::exchange(Connection& c, const HttpRequest& request,
                                               TimePoint start) {
  Outcome out;
  out.failure = writeRequest(c, request, out.timedOut);
  if (out.failure) {
    return out;
  }
  error_code ec;
  http::response_parser<http::string_body> parser;
  parser.body_limit(options_.maxBodyBytes);
  parser.header_limit(kMaxHeaderBytes);
  std::optional<Duration> headersTook;
  while (!parser.is_done()) {
    // Re-armed for every read: the timeout bounds silence, not the length of a big list.
    c.tcp().expires_after(options_.timeout);
    ec = c.await([&](auto handler) {
      c.withStream([&](auto& stream) {
        http::async_read_some(stream, c.buffer(), parser, std::move(handler));
      });
    });
    if (!ec && c.aborted()) {
      ec = net::error::operation_aborted;
    }
    if (ec) {
      out.answerStarted = parser.got_some() || c.buffer().size() != 0;
      out.timedOut = ec == beast::error::timeout;
      const std::string what = std::string(request.method) + " " + std::string(request.target);
      if (ec == http::error::body_limit) {
        out.failure = responseTooLarge(what + ": response body over the limit of " +
                                       std::to_string(options_.maxBodyBytes) + " bytes");
      } else if (ec == http::error::header_limit) {
        out.failure = badResponse(what + ": response headers over the limit of " +
                                  std::to_string(kMaxHeaderBytes) + " bytes");
      } else if (c.tls() != nullptr) {
        out.failure = connectionFailure(
            tlsError("reading the response", ec, options_.timeout, c.tls()->native_handle()));
      } else {
        out.failure = connectionFailure(stepError("reading the response", ec, options_.timeout));
      }
      return out;
    }
    if (!headersTook && parser.is_header_done()) {
      headersTook = Clock::now() - start;
    }
  }
  http::response<http::string_body>& res = parser.get();
  HttpResponse& response = out.response.emplace();
  response.headersTook = headersTook.value_or(Clock::now() - start);
  response.status = static_cast<int>(res.result_int());
  if (const auto it = res.find(http::field::retry_after); it != res.end()) {
    response.retryAfter = it->value().to_string();
  }
  if (const auto it = res.find(http::field::location); it != res.end()) {
    response.location = it->value().to_string();
  }
  response.body = std::move(res.body());
  // Bytes past the answer would be read as the next one's beginning.
  out.keepAlive = res.keep_alive() && c.buffer().size() == 0;
  return out;
}

// A streamed body and the connection it is read from.
struct HttpTransport::Stream::State {
  struct AbortOnStop {
    Connection* connection;
    void operator()() const { connection->abort(); }
  };

  State(ConnectionPtr c, const std::stop_token& stop, Duration idle)
      : connection(std::move(c)), idleTimeout(idle), onStop(stop, AbortOnStop{connection.get()}) {}

  // Reads the next part of the answer into the parser, within the idle timeout.
  template <typename Read>
  error_code await(Read read) {
    connection->tcp().expires_after(idleTimeout);
    error_code ec = connection->await([&](auto handler) {
      connection->withStream([&](auto& stream) { read(stream, std::move(handler)); });
    });
    if (!ec && connection->aborted()) {
      ec = net::error::operation_aborted;
    }
    return ec;
  }

  ApiFailure failure(const error_code& ec) const {
    if (connection->aborted()) {
      return cancelledFailure();
    }
    if (ec == http::error::header_limit) {
      return badResponse("response headers over the limit of " + std::to_string(kMaxHeaderBytes) +
                         " bytes");
    }
    if (auto* tls = connection->tls()) {
      return connectionFailure(
          tlsError("reading the response", ec, idleTimeout, tls->native_handle()));
    }
    return connectionFailure(stepError("reading the response", ec, idleTimeout));
  }

  ConnectionPtr connection;
  http::response_parser<http::buffer_body> parser;
  const Duration idleTimeout;
  int status = 0;
  Duration headersTook{};
  std::array<char, kBlockBytes> block{};
  // Last, so destroyed first: no stop request reaches the connection once it is going.
  std::stop_callback<AbortOnStop> onStop;
};

HttpTransport::Stream::Stream(std::unique_ptr<State> state) : state_(std::move(state)) {}
HttpTransport::Stream::~Stream() = default;

int HttpTransport::Stream::status() const { return state_->status; }
Duration HttpTransport::Stream::headersTook() const { return state_->headersTook; }
size_t HttpTransport::Stream::bufferedBytes() const { return state_->connection->buffer().size(); }

ApiResult<std::string_view> HttpTransport::Stream::read() {
  State& s = *state_;
  if (s.connection->aborted()) {
    return cancelledFailure();
  }
  try {
    while (!s.parser.is_done()) {
      http::buffer_body::value_type& body = s.parser.get().body();
      body.data = s.block.data();
      body.size = s.block.size();
      error_code ec = s.await([&](auto& stream, auto handler) {
        http::async_read_some(stream, s.connection->buffer(), s.parser, std::move(handler));
      });
      if (ec == http::error::need_buffer) {
        ec = {};  // the block is full
      }
      if (ec) {
        return s.failure(ec);
      }
      // A chunk header alone gives no bytes of the body; read on.
      if (const size_t got = s.block.size() - body.size; got > 0) {
        return std::string_view(s.block.data(), got);
      }
    }
    return std::string_view();
  } catch (const std::exception& e) {
    return connectionFailure(std::string("HTTP transport: ") + e.what());
  }
}

ApiResult<HttpTransport::Opened> HttpTransport::openStream(const HttpRequest& request,
                                                           Duration idleTimeout,
                                                           std::stop_token stop) {
  const TimePoint start = Clock::now();
  if (stop.stop_requested()) {
    return cancelledFailure();
  }
  try {
    auto state = std::make_unique<Stream::State>(
        std::make_unique<Connection>(tls_ ? &*tls_ : nullptr), stop, idleTimeout);
    Connection& c = *state->connection;
    std::optional<ApiFailure> failure = connect(c);
    bool timedOut = false;
    if (!failure) {
      failure = writeRequest(c, request, timedOut);
    }
    if (failure) {
      return c.aborted() ? cancelledFailure() : *std::move(failure);
    }
    state->parser.header_limit(kMaxHeaderBytes);
    // A watch body has no end to limit (its lines are limited by the caller); an error body is
    // limited below.
    state->parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    if (const error_code ec = state->await([&](auto& stream, auto handler) {
          http::async_read_header(stream, c.buffer(), state->parser, std::move(handler));
        })) {
      return state->failure(ec);
    }
    state->headersTook = Clock::now() - start;
    const auto& header = state->parser.get();
    state->status = static_cast<int>(header.result_int());
    Opened out;
    if (state->status >= 200 && state->status < 300) {
      out.stream = StreamPtr(new Stream(std::move(state)));
      return out;
    }
    // Any other answer is read whole, as roundTrip reads it: the caller turns it into a failure.
    HttpResponse& response = out.response.emplace();
    response.status = state->status;
    response.headersTook = state->headersTook;
    if (const auto it = header.find(http::field::retry_after); it != header.end()) {
      response.retryAfter = it->value().to_string();
    }
    if (const auto it = header.find(http::field::location); it != header.end()) {
      response.location = it->value().to_string();
    }
    Stream body(std::move(state));
    while (true) {
      ApiResult<std::string_view> bytes = body.read();
      if (!bytes.ok()) {
        return bytes.error();
      }
      if (bytes->empty()) {
        return out;
      }
      if (response.body.size() + bytes->size() > options_.maxBodyBytes) {
        return badResponse(std::string(request.method) + " " + std::string(request.target) +
                           ": response body over the limit of " +
                           std::to_string(options_.maxBodyBytes) + " bytes");
      }
      response.body.append(*bytes);
    }
  } catch (const std::exception& e) {
    return connectionFailure(std::string("HTTP transport: ") + e.what());
  }
}

HttpTransport::ConnectionPtr HttpTransport::takeIdle() {
  std::vector<ConnectionPtr> dead;  // closed outside the lock
  ConnectionPtr found;
  const TimePoint now = Clock::now();
  {
    std::lock_guard lock(mu_);
    while (!idle_.empty() && !found) {
      ConnectionPtr c = std::move(idle_.back());
      idle_.pop_back();
      if (c->stale(now, options_.maxIdle)) {
        dead.push_back(std::move(c));
      } else {
        found = std::move(c);
      }
    }
  }
  if (!dead.empty() && log::enabled(5)) {
    log::info(5, "Closed idle connections the server closed or that idled too long",
              {{"server", endpoint_.hostHeader}, {"count", dead.size()}});
  }
  return found;
}

void HttpTransport::putIdle(ConnectionPtr connection) {
  const TimePoint now = Clock::now();
  connection->markIdle(now);
  std::vector<ConnectionPtr> dropped;  // closed outside the lock
  {
    std::lock_guard lock(mu_);
    // The oldest are at the front; those idle too long go now rather than when reached.
    size_t expired = 0;
    while (expired < idle_.size() && now - idle_[expired]->idleSince() > options_.maxIdle) {
      ++expired;
    }
    for (size_t i = 0; i < expired; ++i) {
      dropped.push_back(std::move(idle_[i]));
    }
    idle_.erase(idle_.begin(), idle_.begin() + static_cast<std::ptrdiff_t>(expired));
    if (idle_.size() < options_.maxIdleConnections) {
      idle_.push_back(std::move(connection));
    } else {
      dropped.push_back(std::move(connection));
    }
  }
}

}  // namespace berth::client
