#include "pkg/apiserver/server.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

namespace berth::apiserver {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// One chunk of a chunked body, framed as Beast's make_chunk frames it: size in hex, CRLF, data,
// CRLF.
void appendChunk(std::string& out, std::string_view data) {
  char size[20];
  const int n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  out.append(size, static_cast<size_t>(n)).append(data).append("\r\n");
}

// kube-apiserver's limit on request bodies (3 MiB).
constexpr uint64_t kMaxBody = 3 * 1024 * 1024;
// Go's http.Server allows this much beyond MaxHeaderBytes (its bufio slack).
constexpr size_t kHeaderSlack = 4096;
// A body must arrive within kube-apiserver's default --request-timeout.
constexpr milliseconds kBodyTimeout{60000};
// Go's http.Server's answer to headers beyond MaxHeaderBytes, byte for byte.
constexpr std::string_view kHeaderTooLarge =
    "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; "
    "charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large";
// How long a watch waits for an event before it checks the peer, the deadline and the hooks.
constexpr milliseconds kWatchSlice{200};
constexpr std::string_view kMalformedLine = "{\"type\":\"MODIFIED\",\"object\":{\n";

bool isPublicPath(const RequestInfo& info) {
  if (info.isResourceRequest) {
    return false;
  }
  std::string_view path = info.path;
  for (std::string_view prefix : {"/healthz", "/livez", "/readyz"}) {
    if (path == prefix || path.starts_with(std::string(prefix) + "/")) {
      return true;
    }
  }
  return path == "/version";
}

HttpResponse unauthorized() { return errorResponse(apiError(401, "Unauthorized", "Unauthorized")); }

// The Status an injected failure answers with: what kube-apiserver (or client-go's reading of a
// bare code) says for that code.
HttpResponse faultResponse(int code) {
  switch (code) {
    case 429:
      return errorResponse(
          apiError(429, "TooManyRequests",
                   "the server has received too many requests and has asked us to try again "
                   "later"));
    case 503:
      return errorResponse(apiError(503, "ServiceUnavailable",
                                    "the server is currently unable to handle the request"));
    case 504:
      return errorResponse(apiError(504, "Timeout",
                                    "the server was unable to return a response in the time "
                                    "allotted, but may still be processing the request"));
    default:
      ApiError error = apiError(code, "InternalError", "Internal error occurred: injected fault");
      error.status.details.causes = {{.message = "injected fault"}};
      return errorResponse(error);
  }
}

// True once the peer has closed its end or reset the connection.
bool peerGone(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) < 0) {
    return false;
  }
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

// Whether the peer sent something (or closed) within `timeout`; false when it stayed silent.
bool waitReadable(int fd, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    pollfd p{fd, POLLIN | POLLRDHUP, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
    if (n > 0) {
      return true;
    }
    if (n == 0 || errno != EINTR) {
      return false;
    }
  }
}

int64_t deadlineAfter(milliseconds timeout) {
  return (Clock::now() + timeout).time_since_epoch().count();
}

// Go's closeWriteAndWait: the answer is sent and the peer's unread request discarded for a while
// before the close, so that the kernel does not reset the connection before the answer is read.
void closeWriteAndWait(int fd) {
  ::shutdown(fd, SHUT_WR);
  const auto deadline = Clock::now() + milliseconds(500);
  char discard[16384];
  while (Clock::now() < deadline &&
         waitReadable(fd, std::chrono::duration_cast<milliseconds>(deadline - Clock::now()))) {
    const ssize_t n = ::recv(fd, discard, sizeof discard, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      return;
    }
  }
}

// Writes what fits of `text` without blocking; for a connection about to be closed.
void sendBestEffort(int fd, std::string_view text) {
  static_cast<void>(::send(fd, text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL));
}

// A connection the server will not serve: over plain HTTP it gets `code` with a Status (and a
// Retry-After, as kube-apiserver's max-in-flight filter sends), then it is closed.
void refuseConnection(tcp::socket& socket, bool tls, int code) {
  if (!tls) {
    const bool busy = code == 429;
    ApiError error =
        busy ? apiError(429, "TooManyRequests", "Too many requests, please try again later.")
             : apiError(503, "ServiceUnavailable",
                        "the server is currently unable to handle the request");
    error.status.details.retryAfterSeconds = 1;
    const std::string body = toJsonText(error.toStatus());
    const std::string reply = "HTTP/1.1 " + std::to_string(code) +
                              (busy ? " Too Many Requests" : " Service Unavailable") +
                              "\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
                              "Connection: close\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body;
    sendBestEffort(socket.native_handle(), reply);
  }
  boost::system::error_code ec;
  socket.shutdown(tcp::socket::shutdown_both, ec);
  socket.close(ec);
}

// The token of an Authorization header as kube-apiserver's bearer authenticator reads it: the
// scheme case-insensitively, the token up to the next space; empty when there is none.
std::string_view bearerToken(std::string_view header) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const size_t first = header.find_first_not_of(kSpace);
  if (first == std::string_view::npos) {
    return {};
  }
  header = header.substr(first, header.find_last_not_of(kSpace) - first + 1);
  const size_t space = header.find(' ');
  if (space != 6 || !std::equal(header.begin(), header.begin() + 6, "bearer", [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) == b;
      })) {
    return {};
  }
  std::string_view token = header.substr(space + 1);
  return token.substr(0, token.find(' '));
}

// Beast 1.74 speaks boost::string_view.
std::string_view sv(boost::beast::string_view s) { return {s.data(), s.size()}; }

std::string openSslError(std::string_view what, const boost::system::error_code& ec) {
  return std::string(what) + ": " + ec.message();
}

}  // namespace

struct Server::Impl {
  net::io_context ioc;
  tcp::acceptor acceptor{ioc};
  tcp::endpoint endpoint;
  int listenFd = -1;  // guarded by Server::mu_; -1 while not listening
  std::optional<ssl::context> tls;
};

struct Server::Connection {
  explicit Connection(tcp::socket s) : socket(std::move(s)), fd(socket.native_handle()) {}
  tcp::socket socket;
  int fd;  // guarded by Server::mu_; -1 once closed, so that a reused descriptor is never shut
  std::thread thread;
  std::atomic<bool> done{false};
  // When the deadline loop shuts the socket (Clock ticks; 0: none): the header or body deadline.
  std::atomic<int64_t> deadline{0};
};

struct Server::Peer {
  bool verifiedCertificate = false;
  std::string user;  // the client certificate's CN
};

Server::Server(Store& store, ServerOptions options)
    : impl_(std::make_unique<Impl>()), store_(store), options_(std::move(options)) {}

Server::~Server() { stop(); }

util::Result<std::unique_ptr<Server>> Server::start(Store& store, ServerOptions options) {
  std::unique_ptr<Server> server(new Server(store, std::move(options)));
  const ServerOptions& opts = server->options_;
  boost::system::error_code ec;
  net::ip::address address = net::ip::make_address(opts.bindAddress, ec);
  if (ec) {
    return util::invalidArgument("invalid bind address \"" + opts.bindAddress + "\"");
  }
  server->impl_->endpoint = tcp::endpoint(address, opts.port);
  if (opts.tls) {
    ssl::context& ctx = server->impl_->tls.emplace(ssl::context::tls_server);
    ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                        ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                    ec);
    ctx.use_certificate_chain(net::buffer(opts.tls->certificatePem), ec);
    if (ec) {
      return util::invalidArgument(openSslError("invalid TLS serving certificate", ec));
    }
    ctx.use_private_key(net::buffer(opts.tls->privateKeyPem), ssl::context::pem, ec);
    if (ec) {
      return util::invalidArgument(openSslError("invalid TLS private key", ec));
    }
    if (!opts.tls->clientCaPem.empty()) {
      ctx.add_certificate_authority(net::buffer(opts.tls->clientCaPem), ec);
      if (ec) {
        return util::invalidArgument(openSslError("invalid client CA", ec));
      }
      // Ask for a certificate and verify one that is sent; a client without one may still use
      // a token (Go's tls.VerifyClientCertIfGiven, which kube-apiserver uses).
      ctx.set_verify_mode(ssl::verify_peer, ec);
    }
  }
  if (auto listening = server->listen(); !listening.ok()) {
    return listening.error();
  }
  std::string host = opts.bindAddress;
  if (address.is_v6()) {
    host = "[" + host + "]";
  }
  server->handler_ =
      std::make_unique<HttpHandler>(store, host + ":" + std::to_string(server->port()));
  server->accept_thread_ = std::thread([s = server.get()] { s->acceptLoop(); });
  server->bookmark_thread_ = std::thread([s = server.get()] { s->bookmarkLoop(); });
  server->deadline_thread_ = std::thread([s = server.get()] { s->deadlineLoop(); });
  return server;
}

util::Result<void> Server::listen() {
  tcp::acceptor& acceptor = impl_->acceptor;
  const tcp::endpoint& endpoint = impl_->endpoint;
  boost::system::error_code ec;
  const std::string where =
      "listen tcp " + endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) {
    acceptor.set_option(net::socket_base::reuse_address(true), ec);
  }
  if (!ec) {
    acceptor.bind(endpoint, ec);
  }
  if (!ec) {
    acceptor.listen(net::socket_base::max_listen_connections, ec);
  }
  if (ec) {
    boost::system::error_code ignored;
    acceptor.close(ignored);
    return util::Error{util::ErrorCode::Unavailable, where + ": " + ec.message()};
  }
  port_ = acceptor.local_endpoint().port();
  impl_->endpoint.port(port());  // a restart listens on the same port
  std::lock_guard lock(mu_);
  impl_->listenFd = acceptor.native_handle();
  if (resume_at_) {
    ::shutdown(impl_->listenFd, SHUT_RDWR);  // refused again while restarting
  }
  return {};
}

std::string Server::url() const {
  std::string host = options_.bindAddress;
  if (impl_->endpoint.address().is_v6()) {
    host = "[" + host + "]";
  }
  return (options_.tls ? "https://" : "http://") + host + ":" + std::to_string(port());
}

void Server::acceptLoop() {
  milliseconds backoff{0};
  for (;;) {
    tcp::socket socket(impl_->ioc);
    boost::system::error_code ec;
    impl_->acceptor.accept(socket, ec);
    std::unique_lock lock(mu_);
    if (stopped_) {
      return;
    }
    if (resume_at_) {
      // Refusing connections: no listener until the restart.
      socket.close(ec);
      impl_->listenFd = -1;
      impl_->acceptor.close(ec);
      while (!stopped_ && Clock::now() < *resume_at_) {
        cv_.wait_until(lock, *resume_at_);
      }
      if (stopped_) {
        return;
      }
      resume_at_.reset();
      lock.unlock();
      while (!listen().ok()) {
        sleepFor(milliseconds(50));  // the port may be held briefly; keep trying until stopped
        if (stopping_) {
          return;
        }
      }
      continue;
    }
    if (ec) {
      // Out of descriptors, or an aborted handshake: try again after a pause that doubles from
      // 5 ms to 1 s, as Go's http.Server does, rather than spin.
      lock.unlock();
      backoff = std::min(backoff.count() == 0 ? milliseconds(5) : backoff * 2, milliseconds(1000));
      sleepFor(backoff);
      continue;
    }
    backoff = milliseconds(0);
    reapConnections();
    const bool tls = impl_->tls.has_value();
    if (connections_.size() >= options_.maxConnections) {
      refuseConnection(socket, tls, 429);
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    Connection& connection = connections_.emplace_back(std::move(socket));
    connection.deadline = deadlineAfter(options_.headerTimeout);  // the TLS handshake included
    try {
      connection.thread = std::thread([this, &connection] { runConnection(connection); });
    } catch (const std::system_error&) {
      // No thread to be had (RLIMIT_NPROC, pids.max): this connection is refused, the server
      // goes on.
      tcp::socket refused = std::move(connection.socket);
      connections_.pop_back();
      refuseConnection(refused, tls, 503);
    }
  }
}

void Server::deadlineLoop() {
  const milliseconds tick = std::clamp(std::min(options_.headerTimeout, options_.idleTimeout) / 4,
                                       milliseconds(10), milliseconds(1000));
  std::unique_lock lock(mu_);
  while (!stopped_) {
    cv_.wait_for(lock, tick);
    const int64_t now = Clock::now().time_since_epoch().count();
    for (Connection& c : connections_) {
      const int64_t deadline = c.deadline.load();
      if (deadline != 0 && deadline <= now && c.fd >= 0) {
        ::shutdown(c.fd, SHUT_RDWR);  // the blocked read fails and the connection ends
        c.deadline = 0;
      }
    }
  }
}

void Server::bookmarkLoop() {
  std::unique_lock lock(mu_);
  while (!stopped_) {
    cv_.wait_for(lock, options_.bookmarkInterval);
    if (stopped_) {
      return;
    }
    lock.unlock();
    store_.sendBookmarks();
    lock.lock();
  }
}

void Server::runConnection(Connection& connection) {
  boost::system::error_code ec;
  if (impl_->tls) {
    ssl::stream<tcp::socket&> stream(connection.socket, *impl_->tls);
    stream.handshake(ssl::stream_base::server, ec);
    if (!ec) {
      Peer peer;
      SSL* ssl = stream.native_handle();
      if (X509* cert = SSL_get1_peer_certificate(ssl)) {
        peer.verifiedCertificate = SSL_get_verify_result(ssl) == X509_V_OK;
        char cn[256] = {};
        if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof(cn)) >
            0) {
          peer.user = cn;
        }
        X509_free(cert);
      }
      serveConnection(stream, connection, peer);
    }
  } else {
    serveConnection(connection.socket, connection, Peer{});
  }
  {
    std::lock_guard lock(mu_);
    connection.fd = -1;
  }
  connection.socket.close(ec);
  connection.done = true;
}

template <typename Stream>
void Server::serveConnection(Stream& stream, Connection& connection, const Peer& peer) {
  boost::beast::flat_buffer buffer;
  const int fd = connection.socket.native_handle();
  for (bool first = true;; first = false) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(kMaxBody);
    parser.header_limit(static_cast<uint32_t>(
        std::min<size_t>(options_.maxHeaderBytes + kHeaderSlack, UINT32_MAX)));
    boost::system::error_code ec;
    if (!first) {
      // Between requests: idle until the next one's first byte, then its headers are timed.
      bool buffered = buffer.size() > 0;
      if constexpr (!std::is_same_v<Stream, tcp::socket>) {
        buffered = buffered || SSL_pending(stream.native_handle()) > 0;
      }
      if (!buffered && !waitReadable(fd, options_.idleTimeout)) {
        return;  // idle too long
      }
      connection.deadline = deadlineAfter(options_.headerTimeout);
    }
    http::read_header(stream, buffer, parser, ec);
    if (!ec) {
      connection.deadline = deadlineAfter(kBodyTimeout);
      http::read(stream, buffer, parser, ec);
    }
    connection.deadline = 0;
    if (ec == http::error::header_limit) {
      if constexpr (std::is_same_v<Stream, tcp::socket>) {
        net::write(stream, net::buffer(kHeaderTooLarge.data(), kHeaderTooLarge.size()), ec);
        closeWriteAndWait(fd);
      } else {
        net::write(stream, net::buffer(kHeaderTooLarge.data(), kHeaderTooLarge.size()), ec);
      }
      return;
    }
    if (ec == http::error::body_limit) {
      HttpResponse res =
          errorResponse(apiError(413, "RequestEntityTooLarge",
                                 "Request entity too large: limit is " + std::to_string(kMaxBody)));
      http::response<http::string_body> out{http::status::payload_too_large, 11};
      out.set(http::field::content_type, res.contentType);
      out.body() = std::move(res.body);
      out.keep_alive(false);
      out.prepare_payload();
      http::write(stream, out, ec);
      return;
    }
    if (ec) {
      return;  // the peer closed, or the server is stopping
    }
    const http::request<http::string_body>& req = parser.get();
    const bool keepAlive = req.keep_alive();
    RequestInfo info = parseRequestInfo(sv(req.method_string()), sv(req.target()));
    HttpRequest request{sv(req.method_string()), sv(req[http::field::content_type]), req.body()};
    HttpResponse res = handle(info, request, sv(req[http::field::authorization]), peer);
    if (res.watch) {
      if (!streamWatch(stream, req.version(), keepAlive, std::move(*res.watch),
                       connection.socket.native_handle())) {
        return;
      }
      continue;
    }
    http::response<http::string_body> out{static_cast<http::status>(res.code), req.version()};
    out.set(http::field::content_type, res.contentType);
    out.set(http::field::cache_control, "no-cache, private");
    out.keep_alive(keepAlive);
    out.body() = std::move(res.body);
    out.prepare_payload();
    http::write(stream, out, ec);
    if (ec || !keepAlive) {
      return;
    }
  }
}

template <typename Stream>
bool Server::streamWatch(Stream& stream, unsigned version, bool keepAlive, WatchStream watch,
                         int fd) {
  http::response<http::empty_body> header{http::status::ok, version};
  header.set(http::field::content_type, "application/json");
  header.set(http::field::cache_control, "no-cache, private");
  header.keep_alive(keepAlive);
  header.chunked(true);
  http::response_serializer<http::empty_body> serializer{header};
  boost::system::error_code ec;
  http::write_header(stream, serializer, ec);
  auto writeLine = [&](std::string_view line) {
    net::write(stream, http::make_chunk(net::buffer(line.data(), line.size())), ec);
    return !ec;
  };
  if (watch.error) {
    // One ERROR event, then the end of the stream.
    if (ec || !writeLine(toJsonText(*watch.error) + "\n")) {
      return false;
    }
    net::write(stream, http::make_chunk_last(), ec);
    return !ec && keepAlive;
  }
  WatchPtr w = std::move(watch.watch);
  ++active_watches_;
  const auto deadline = watch.timeout ? Clock::now() + *watch.timeout : Clock::time_point::max();
  uint64_t malformedSeen = malformed_generation_.load();
  bool open = !ec;
  while (open) {
    if (stopping_) {
      open = false;
      break;
    }
    if (uint64_t g = malformed_generation_.load(); g != malformedSeen) {
      malformedSeen = g;
      if (!writeLine(kMalformedLine)) {
        open = false;
        break;
      }
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      break;
    }
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - now);
    std::optional<SharedWatchEvent> event =
        w->nextShared(std::clamp(left, milliseconds(1), kWatchSlice));
    if (event) {
      // The events queued meanwhile go out in the same write, each still its own chunk (as
      // kube-apiserver frames them): under load one system call carries many events.
      std::string chunks;
      appendChunk(chunks, event->line() + "\n");
      for (const SharedWatchEvent& e : w->drainShared()) appendChunk(chunks, e.line() + "\n");
      net::write(stream, net::buffer(chunks), ec);
      open = !ec;
      continue;
    }
    if (w->closed()) {
      break;  // closed by the store (closeWatches, or a reader that fell behind) and drained
    }
    if (peerGone(fd)) {
      open = false;
    }
  }
  w->stop();  // the store forgets it on its next event
  --active_watches_;
  if (!open) {
    return false;
  }
  net::write(stream, http::make_chunk_last(), ec);
  return !ec && keepAlive;
}

HttpResponse Server::handle(const RequestInfo& info, const HttpRequest& request,
                            std::string_view authorization, const Peer& peer) {
  HttpResponse res;
  if (!authenticated(info, authorization, peer)) {
    res = unauthorized();
  } else if (auto fault = takeFault()) {
    res = std::move(*fault);
  } else if (auto review = serveReview(options_.reviews, info, request)) {
    res = std::move(*review);
  } else {
    const bool binding = info.verb == "create" && info.group.empty() &&
                         (info.subresource == "binding" || info.resource == "bindings");
    if (int64_t delay = binding_delay_ms_.load(); binding && delay > 0) {
      sleepFor(milliseconds(delay));
    }
    int expire = info.verb == "watch" ? expire_count_.load() : 0;
    while (expire > 0 && !expire_count_.compare_exchange_weak(expire, expire - 1)) {
    }
    if (expire > 0) {
      auto rv = info.query.find("resourceVersion");
      res.watch = WatchStream{
          nullptr, expiredEvent(rv == info.query.end() ? "" : rv->second, store_.resourceVersion()),
          std::nullopt};
    } else {
      res = handler_->serve(info, request);
    }
  }
  record(info, request.method, res.code);
  return res;
}

bool Server::authenticated(const RequestInfo& info, std::string_view authorization,
                           const Peer& peer) const {
  const bool clientCerts = options_.tls && !options_.tls->clientCaPem.empty();
  if (options_.token.empty() && options_.tokens.empty() && !clientCerts) {
    return true;
  }
  if (peer.verifiedCertificate) {
    return true;
  }
  if (const std::string_view token = bearerToken(authorization); !token.empty()) {
    if (token == options_.token ||
        std::find(options_.tokens.begin(), options_.tokens.end(), token) != options_.tokens.end()) {
      return true;
    }
  }
  return authorization.empty() && isPublicPath(info);
}

std::optional<HttpResponse> Server::takeFault() {
  std::lock_guard lock(fault_mu_);
  if (fail_count_ > 0) {
    --fail_count_;
    return faultResponse(fail_code_);
  }
  if (Clock::now() < fail_until_) {
    return faultResponse(fail_until_code_);
  }
  return std::nullopt;
}

void Server::record(const RequestInfo& info, std::string_view method, int code) {
  RequestRecord r{std::string(method), info.verb, info.path, "",  info.resource,
                  info.subresource,    info.ns,   info.name, code};
  for (const auto& [k, v] : info.query) {
    r.query += (r.query.empty() ? "" : "&") + k + "=" + v;
  }
  std::lock_guard lock(log_mu_);
  log_.push_back(std::move(r));
  while (log_.size() > options_.requestLogLimit) {
    log_.pop_front();
  }
}

void Server::dropConnections() {
  for (Connection& c : connections_) {
    if (c.fd >= 0) {
      ::shutdown(c.fd, SHUT_RDWR);
    }
  }
}

void Server::reapConnections() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (it->done) {
      it->thread.join();
      it = connections_.erase(it);
    } else {
      ++it;
    }
  }
}

void Server::sleepFor(milliseconds duration) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, duration, [&] { return stopped_; });
}

void Server::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopped_) {
      return;
    }
    stopped_ = true;
    stopping_ = true;
    if (impl_->listenFd >= 0) {
      ::shutdown(impl_->listenFd, SHUT_RDWR);  // wakes the blocked accept
    }
    dropConnections();
  }
  cv_.notify_all();
  if (accept_thread_.joinable()) {
    accept_thread_.join();
  }
  if (bookmark_thread_.joinable()) {
    bookmark_thread_.join();
  }
  if (deadline_thread_.joinable()) {
    deadline_thread_.join();
  }
  // The accept thread is gone: nobody adds connections any more.
  for (Connection& c : connections_) {
    if (c.thread.joinable()) {
      c.thread.join();
    }
  }
  connections_.clear();
  boost::system::error_code ec;
  impl_->acceptor.close(ec);
}

// --- Fault hooks --------------------------------------------------------------------------------

void Server::closeWatches() { store_.closeWatches(); }

void Server::expireNextWatches(int count) { expire_count_ = count; }

void Server::failNextRequests(int count, int code) {
  std::lock_guard lock(fault_mu_);
  fail_count_ = count;
  fail_code_ = code;
}

void Server::failRequestsFor(milliseconds duration, int code) {
  std::lock_guard lock(fault_mu_);
  fail_until_ = Clock::now() + duration;
  fail_until_code_ = code;
}

void Server::refuseConnectionsFor(milliseconds duration) {
  {
    std::lock_guard lock(mu_);
    if (stopped_) {
      return;
    }
    resume_at_ = Clock::now() + duration;
    if (impl_->listenFd >= 0) {
      ::shutdown(impl_->listenFd, SHUT_RDWR);
    }
    dropConnections();
  }
  cv_.notify_all();
}

void Server::injectMalformedWatchLine() { ++malformed_generation_; }

void Server::delayBindings(milliseconds delay) { binding_delay_ms_ = delay.count(); }

std::vector<RequestRecord> Server::requestLog() const {
  std::lock_guard lock(log_mu_);
  return {log_.begin(), log_.end()};
}

void Server::clearRequestLog() {
  std::lock_guard lock(log_mu_);
  log_.clear();
}

}  // namespace berth::apiserver
