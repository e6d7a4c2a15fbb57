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
#include <cstdio>
#include <string>
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
      lock.unlock();
      sleepFor(milliseconds(10));  // out of descriptors, or an aborted handshake: try again
      continue;
    }
    reapConnections();
    socket.set_option(tcp::no_delay(true), ec);
    Connection& connection = connections_.emplace_back(std::move(socket));
    connection.thread = std::thread([this, &connection] { runConnection(connection); });
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
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(kMaxBody);
    boost::system::error_code ec;
    http::read(stream, buffer, parser, ec);
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
    std::optional<WatchEvent> event = w->next(std::clamp(left, milliseconds(1), kWatchSlice));
    if (event) {
      // The events queued meanwhile go out in the same write, each still its own chunk (as
      // kube-apiserver frames them): under load one system call carries many events.
      std::string chunks;
      appendChunk(chunks, toJsonText(event->toJson()) + "\n");
      for (const WatchEvent& e : w->drain()) appendChunk(chunks, toJsonText(e.toJson()) + "\n");
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
  if (options_.token.empty() && !clientCerts) {
    return true;
  }
  if (peer.verifiedCertificate) {
    return true;
  }
  constexpr std::string_view kBearer = "Bearer ";
  if (!options_.token.empty() && authorization.starts_with(kBearer) &&
      authorization.substr(kBearer.size()) == options_.token) {
    return true;
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
