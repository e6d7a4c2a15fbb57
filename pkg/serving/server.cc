#include "pkg/serving/server.h"

#include <openssl/ssl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <fstream>
#include <list>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "pkg/log/log.h"

namespace berth::serving {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

// A connection has this long for its TLS handshake, for each request once it starts, and between
// requests (kube-apiserver: 32 s for headers, 90 s idle; shorter is safe for probes and scrapes).
constexpr std::chrono::seconds kIdleTimeout{10};
constexpr uint32_t kHeaderLimit = 8 * 1024;
constexpr uint64_t kBodyLimit = 4 * 1024;
// Accept errors (EMFILE, ENFILE) back off as Go's net/http: 5 ms doubling to 1 s.
constexpr std::chrono::milliseconds kAcceptBackoffMin{5};
constexpr std::chrono::milliseconds kAcceptBackoffMax{1000};
// How long, and how much, a refused oversized request is read and discarded.
constexpr std::chrono::seconds kDrainTime{2};
constexpr size_t kDrainLimit = 4 * 1024 * 1024;
// Threads serving connections: a handler waiting on the API server holds one.
constexpr int kThreads = 4;

util::Result<std::string> readSmallFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return util::invalidArgument(std::string(what) + " " + path + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > 1024 * 1024) {
    return util::invalidArgument(std::string(what) + " " + path + ": larger than 1 MiB");
  }
  return text.str();
}

// Accepts whatever certificate the client presents: as Go's tls.RequestClientCert, the handshake
// never fails for it, and the authenticator verifies it.
int acceptAnyPeer(int /*preverified*/, X509_STORE_CTX* /*ctx*/) { return 1; }

util::Result<std::shared_ptr<ssl::context>> loadTls(const TlsConfig& config) {
  std::string cert = config.inMemory.certificate;
  std::string key = config.inMemory.privateKey;
  std::string certName = "the serving certificate";
  std::string keyName = "its private key";
  if (config.files) {
    auto certText = readSmallFile(config.files->certFile, "--tls-cert-file");
    if (!certText.ok()) return certText.error();
    auto keyText = readSmallFile(config.files->keyFile, "--tls-private-key-file");
    if (!keyText.ok()) return keyText.error();
    cert = std::move(*certText);
    key = std::move(*keyText);
    certName = "--tls-cert-file " + config.files->certFile;
    keyName = "--tls-private-key-file " + config.files->keyFile;
  }
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  boost::system::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::single_dh_use,
                   ec);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), config.minVersion);
  if (!config.cipherList.empty() &&
      SSL_CTX_set_cipher_list(ctx->native_handle(), config.cipherList.c_str()) != 1) {
    return util::invalidArgument("--tls-cipher-suites: OpenSSL supports none of " +
                                 config.cipherList);
  }
  ctx->use_certificate_chain(net::buffer(cert), ec);
  if (ec) return util::invalidArgument(certName + ": " + ec.message());
  ctx->use_private_key(net::buffer(key), ssl::context::pem, ec);
  // OpenSSL checks the key against the certificate as it loads it ("key values mismatch").
  if (ec && ec.message().find("mismatch") == std::string::npos) {
    return util::invalidArgument(keyName + ": " + ec.message());
  }
  if (ec || SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    return util::invalidArgument(keyName + ": does not match " + certName);
  }
  if (config.requestClientCertificates) {
    SSL_CTX_set_verify(ctx->native_handle(), SSL_VERIFY_PEER, acceptAnyPeer);
    static constexpr unsigned char kSessionContext[] = "berth";
    SSL_CTX_set_session_id_context(ctx->native_handle(), kSessionContext,
                                   sizeof kSessionContext - 1);
  }
  return ctx;
}

std::string nameEntry(X509_NAME_ENTRY* entry) {
  unsigned char* utf8 = nullptr;
  const int n = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(entry));
  if (n < 0) return "";
  std::string out(reinterpret_cast<const char*>(utf8), static_cast<size_t>(n));
  OPENSSL_free(utf8);
  return out;
}

std::string derOf(X509* cert) {
  unsigned char* der = nullptr;
  const int n = i2d_X509(cert, &der);
  if (n < 0) return "";
  std::string out(reinterpret_cast<const char*>(der), static_cast<size_t>(n));
  OPENSSL_free(der);
  return out;
}

// The certificate the client presented, with what it sent along; nullopt if none.
std::optional<PeerCertificate> peerOf(SSL* ssl) {
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (cert == nullptr) return std::nullopt;
  PeerCertificate peer;
  peer.chainDer.push_back(derOf(cert));
  // On a server the chain the client sent does not hold the leaf.
  if (STACK_OF(X509)* chain = SSL_get_peer_cert_chain(ssl)) {
    for (int i = 0; i < sk_X509_num(chain); ++i) {
      X509* c = sk_X509_value(chain, i);
      if (X509_cmp(c, cert) != 0) peer.chainDer.push_back(derOf(c));
    }
  }
  X509_NAME* subject = X509_get_subject_name(cert);
  for (int i = 0; i < X509_NAME_entry_count(subject); ++i) {
    X509_NAME_ENTRY* entry = X509_NAME_get_entry(subject, i);
    const int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(entry));
    if (nid == NID_commonName) peer.commonName = nameEntry(entry);
    if (nid == NID_organizationName) peer.organizations.push_back(nameEntry(entry));
  }
  X509_free(cert);
  return peer;
}

// The backstop on open connections: half the descriptor limit (the rest is the API client's, the
// files' and the watches'), so that the cap is reached before accept() fails.
int connectionCapFromFdLimit() {
  constexpr int kFloor = 64;
  constexpr rlim_t kCeiling = 1 << 20;
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return kFloor;
  const rlim_t soft =
      limit.rlim_cur == RLIM_INFINITY ? kCeiling : std::min(limit.rlim_cur, kCeiling);
  return std::max(kFloor, static_cast<int>(soft / 2));
}

}  // namespace

struct Server::Impl {
  // What identifies a version of a file on disk: a rotation changes at least one of these.
  struct FileStamp {
    ino_t inode = 0;
    off_t size = 0;
    timespec mtime{};
    bool operator==(const FileStamp& o) const {
      return inode == o.inode && size == o.size && mtime.tv_sec == o.mtime.tv_sec &&
             mtime.tv_nsec == o.mtime.tv_nsec;
    }
  };
  static std::optional<FileStamp> stampOf(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    return FileStamp{st.st_ino, st.st_size, st.st_mtim};
  }

  class Session;

  // Declared before the io_context: connections still queued in it when it is destroyed
  // deregister themselves and must find these alive.
  Handler handler;
  int maxConnections = 0;
  std::mutex sessionsMutex;
  // Every open connection, oldest first; at the cap the oldest idle one makes room.
  std::list<Session*> sessions;
  TlsConfig tlsConfig;
  // Read and replaced only by the accept handler (one accept is outstanding at a time).
  std::shared_ptr<ssl::context> tls;
  std::optional<FileStamp> certStamp, keyStamp;
  uint16_t port = 0;

  net::io_context ioc{kThreads};
  tcp::acceptor acceptor{ioc};
  std::vector<std::thread> threads;
  std::atomic<bool> stopped{false};
  // The accept back-off, touched only by the accept handler and its timer.
  net::steady_timer acceptRetry{ioc};
  std::chrono::milliseconds acceptDelay{0};
  uint64_t acceptFailures = 0;

  void accept();
  void onAcceptError(const beast::error_code& ec);
  // Registers a new connection; false when every open one is busy and the cap is reached.
  bool admit(const std::shared_ptr<Session>& session);
  void refreshTls();
  Response answer(const http::request<http::string_body>& req, const PeerCertificate* peer) const;
};

namespace {
using TlsStream = beast::ssl_stream<beast::tcp_stream>;
}  // namespace

// One connection, on its own strand: reads requests until the peer closes, idles out, asks to
// close or is evicted to make room for a newer connection.
class Server::Impl::Session : public std::enable_shared_from_this<Session> {
 public:
  // The session keeps `context` alive past a certificate reload.
  Session(Server::Impl& server, tcp::socket socket, std::shared_ptr<ssl::context> context)
      : server_(server), context_(std::move(context)), stream_(std::move(socket), *context_) {}
  ~Session() {
    if (!registered_) return;
    std::lock_guard<std::mutex> lock(server_.sessionsMutex);
    server_.sessions.erase(self_);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Called by admit(), under sessionsMutex.
  void registered(std::list<Session*>::iterator self) {
    self_ = self;
    registered_ = true;
  }
  // Claims the connection for eviction if it is waiting for a handshake or a request (nothing is
  // lost by closing it) and no other newcomer claimed it already.
  bool claimIfIdle() { return idle_.load() && !evicting_.exchange(true); }

  void start() {
    beast::get_lowest_layer(stream_).expires_after(kIdleTimeout);
    stream_.async_handshake(ssl::stream_base::server,
                            [self = shared_from_this()](beast::error_code ec) {
                              if (ec) return;
                              self->peer_ = peerOf(self->stream_.native_handle());
                              self->read();
                            });
  }

  // Closes a claimed connection if it is still idle; from any thread.
  void evict() {
    net::post(stream_.get_executor(), [self = shared_from_this()] {
      if (!self->idle_) {
        self->evicting_ = false;  // a request arrived meanwhile: it may be claimed again later
        return;
      }
      beast::error_code ignored;
      beast::get_lowest_layer(self->stream_).socket().close(ignored);
    });
  }

 private:
  void read() {
    idle_ = true;
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(kBodyLimit);
    beast::get_lowest_layer(stream_).expires_after(kIdleTimeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->onRead(ec); });
  }

  void onRead(beast::error_code ec) {
    idle_ = false;
    // Go's answers to requests it cannot serve, each followed by closing the connection.
    if (ec == http::error::header_limit) {
      return refuse(431, "431 Request Header Fields Too Large");
    }
    if (ec == http::error::body_limit) return refuse(413, "413 Request Entity Too Large");
    if (ec && ec.category() == http::make_error_code(http::error::bad_target).category() &&
        ec != http::error::partial_message && ec != http::error::end_of_stream) {
      return refuse(400, "400 Bad Request");
    }
    if (ec) return close();
    const auto& req = parser_->get();
    if (req.version() >= 11) {
      const auto hosts = req.count(http::field::host);
      if (hosts == 0) return refuse(400, "400 Bad Request: missing required Host header");
      if (hosts > 1) return refuse(400, "400 Bad Request: too many Host headers");
    }
    respond(server_.answer(req, peer_ ? &*peer_ : nullptr), req.keep_alive(), req.version(),
            req.method() == http::verb::head);
  }

  void refuse(int status, std::string body) {
    refused_ = true;
    respond(Response{status, "text/plain; charset=utf-8", std::move(body)}, false, 11);
  }

  void respond(Response r, bool keepAlive, unsigned version, bool head = false) {
    res_ = {};
    res_.version(version);
    res_.result(static_cast<http::status>(r.status));
    // Go's status text; Beast's is "Payload Too Large".
    if (r.status == 413) res_.reason("Request Entity Too Large");
    res_.set(http::field::content_type, r.contentType);
    res_.set("X-Content-Type-Options", "nosniff");
    res_.keep_alive(keepAlive);
    res_.body() = std::move(r.body);
    res_.prepare_payload();
    if (head) res_.body().clear();
    http::async_write(stream_, res_,
                      [self = shared_from_this(), keepAlive](beast::error_code ec, size_t) {
                        if (!ec && self->refused_) return self->drain();
                        if (ec || !keepAlive) return self->close();
                        self->read();
                      });
  }

  // After refusing a request, as Go's server does: stop sending, then discard what the client is
  // still writing for a moment, so that closing with unread data (a TCP reset) does not destroy
  // the answer before the client reads it.
  void drain() {
    close();
    beast::get_lowest_layer(stream_).expires_after(kDrainTime);
    discard();
  }
  void discard() {
    auto& tcp = beast::get_lowest_layer(stream_);
    tcp.async_read_some(net::buffer(scratch_),
                        [self = shared_from_this()](beast::error_code ec, size_t n) {
                          self->drained_ += n;
                          if (!ec && self->drained_ < kDrainLimit) self->discard();
                        });
  }

  void close() {
    // No TLS close_notify round trip: the peer is done or misbehaving either way.
    beast::error_code ignored;
    beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  Server::Impl& server_;
  std::shared_ptr<ssl::context> context_;
  TlsStream stream_;
  std::list<Session*>::iterator self_;
  bool registered_ = false;
  std::atomic<bool> idle_{true};
  std::atomic<bool> evicting_{false};
  std::optional<PeerCertificate> peer_;
  bool refused_ = false;
  std::array<char, 16 * 1024> scratch_{};
  size_t drained_ = 0;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
};

Response Server::Impl::answer(const http::request<http::string_body>& req,
                              const PeerCertificate* peer) const {
  if (req.method() != http::verb::get && req.method() != http::verb::head) {
    return Response{405, "text/plain; charset=utf-8", "method not allowed\n"};
  }
  const std::string_view method = req.method() == http::verb::get ? "GET" : "HEAD";
  const auto view = [](beast::string_view v) { return std::string_view(v.data(), v.size()); };
  std::vector<Header> headers;
  for (const auto& field : req)
    headers.emplace_back(view(field.name_string()), view(field.value()));
  const Request request{method,
                        view(req.target()),
                        view(req[http::field::authorization]),
                        peer,
                        view(req[http::field::accept]),
                        std::move(headers)};
  try {
    return handler(request);
  } catch (const std::exception& e) {
    log::error(e.what(), "Serving a request failed", {{"target", std::string(req.target())}});
    return Response{500, "text/plain; charset=utf-8", "internal server error\n"};
  }
}

void Server::Impl::refreshTls() {
  const TlsFiles& files = *tlsConfig.files;
  auto cert = stampOf(files.certFile);
  auto key = stampOf(files.keyFile);
  if (cert == certStamp && key == keyStamp) return;
  auto loaded = loadTls(tlsConfig);
  if (!loaded.ok()) {
    // Mid-rotation the two files may disagree for a moment; keep serving the old pair.
    log::warning("Keeping the previous serving certificate", {{"err", loaded.error().message}});
    return;
  }
  log::info(0, "Loaded serving certificate", {{"certFile", files.certFile}});
  tls = std::move(*loaded);
  certStamp = cert;
  keyStamp = key;
}

bool Server::Impl::admit(const std::shared_ptr<Session>& session) {
  // Declared before the lock: if it is the last owner, the session deregisters after the unlock.
  std::shared_ptr<Session> victim;
  {
    std::lock_guard<std::mutex> lock(sessionsMutex);
    if (static_cast<int>(sessions.size()) >= maxConnections) {
      // One client holding many idle connections must not lock out the probes: the oldest idle
      // connection goes. When every connection is busy the newcomer is refused. A listed session
      // is alive while the lock is held: its destructor takes the lock to leave the list.
      for (Session* s : sessions) {
        if (!s->claimIfIdle()) continue;
        victim = s->weak_from_this().lock();
        if (victim) break;
      }
      if (!victim) return false;
    }
    session->registered(sessions.insert(sessions.end(), session.get()));
  }
  if (victim) victim->evict();
  return true;
}

void Server::Impl::onAcceptError(const beast::error_code& ec) {
  ++acceptFailures;
  if (acceptDelay.count() == 0) {
    acceptDelay = kAcceptBackoffMin;
    log::error(ec.message(), "Accepting a serving connection failed; retrying with backoff",
               {{"maxDelay", "1s"}});
  } else {
    acceptDelay = std::min(acceptDelay * 2, kAcceptBackoffMax);
  }
  acceptRetry.expires_after(acceptDelay);
  acceptRetry.async_wait([this](beast::error_code waitEc) {
    if (!waitEc && !stopped) accept();
  });
}

void Server::Impl::accept() {
  acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (stopped) return;
    if (ec == net::error::operation_aborted) return;
    if (ec) return onAcceptError(ec);
    if (acceptDelay.count() != 0) {
      log::info(0, "Accepting serving connections again", {{"failures", acceptFailures}});
      acceptDelay = std::chrono::milliseconds{0};
      acceptFailures = 0;
    }
    if (tlsConfig.files) refreshTls();
    auto session = std::make_shared<Session>(*this, std::move(socket), tls);
    if (admit(session)) session->start();
    accept();
  });
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() { stop(); }

util::Result<std::unique_ptr<Server>> Server::start(Options options, Handler handler) {
  auto impl = std::make_unique<Impl>();
  impl->handler = std::move(handler);
  impl->maxConnections =
      options.maxConnections > 0 ? options.maxConnections : connectionCapFromFdLimit();
  impl->tlsConfig = std::move(options.tls);
  auto loaded = loadTls(impl->tlsConfig);
  if (!loaded.ok()) return loaded.error();
  impl->tls = std::move(*loaded);
  if (impl->tlsConfig.files) {
    impl->certStamp = Impl::stampOf(impl->tlsConfig.files->certFile);
    impl->keyStamp = Impl::stampOf(impl->tlsConfig.files->keyFile);
  }
  boost::system::error_code ec;
  const net::ip::address address = net::ip::make_address(options.bindAddress, ec);
  if (ec)
    return util::invalidArgument("--bind-address: invalid IP address \"" + options.bindAddress +
                                 "\"");
  const tcp::endpoint endpoint(address, options.port);
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return util::Error{util::ErrorCode::Unavailable, "cannot listen on " + options.bindAddress +
                                                         ":" + std::to_string(options.port) + ": " +
                                                         ec.message()};
  }
  impl->port = impl->acceptor.local_endpoint().port();
  impl->accept();
  Impl* raw = impl.get();
  for (int i = 0; i < kThreads; ++i) impl->threads.emplace_back([raw] { raw->ioc.run(); });
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

uint16_t Server::port() const { return impl_->port; }

void Server::stop() {
  if (!impl_ || impl_->stopped.exchange(true)) return;
  // Pending handlers are dropped unrun; the io_context's destruction frees their sessions.
  impl_->ioc.stop();
  for (std::thread& t : impl_->threads) {
    if (t.joinable()) t.join();
  }
}

}  // namespace berth::serving
