#include "pkg/serving/server.h"

#include <openssl/ssl.h>
#include <sys/stat.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "pkg/log/log.h"

namespace berth::serving {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

constexpr std::chrono::seconds kIdleTimeout{10};
constexpr uint32_t kHeaderLimit = 8 * 1024;
constexpr uint64_t kBodyLimit = 4 * 1024;
constexpr int kMaxConnections = 128;

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

util::Result<std::shared_ptr<ssl::context>> loadTls(const TlsFiles& files) {
  auto cert = readSmallFile(files.certFile, "--tls-cert-file");
  if (!cert.ok()) return cert.error();
  auto key = readSmallFile(files.keyFile, "--tls-private-key-file");
  if (!key.ok()) return key.error();
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  boost::system::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                   ec);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  ctx->use_certificate_chain(net::buffer(*cert), ec);
  if (ec) return util::invalidArgument("--tls-cert-file " + files.certFile + ": " + ec.message());
  ctx->use_private_key(net::buffer(*key), ssl::context::pem, ec);
  // OpenSSL checks the key against the certificate as it loads it ("key values mismatch").
  if (ec && ec.message().find("mismatch") == std::string::npos) {
    return util::invalidArgument("--tls-private-key-file " + files.keyFile + ": " + ec.message());
  }
  if (ec || SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    return util::invalidArgument("--tls-private-key-file " + files.keyFile +
                                 ": does not match the certificate in " + files.certFile);
  }
  return ctx;
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

  // Declared before the io_context: connections still queued in it when it is destroyed
  // decrement `connections` and must find it alive.
  Handler handler;
  std::atomic<int> connections{0};
  std::optional<TlsFiles> tlsFiles;
  std::shared_ptr<ssl::context> tls;  // the io thread's; replaced when the files change
  std::optional<FileStamp> certStamp, keyStamp;
  uint16_t port = 0;

  net::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  std::thread thread;
  std::atomic<bool> stopped{false};

  void accept();
  void refreshTls();
  Response answer(const http::request<http::string_body>& req) const;
};

namespace {

// One connection: reads requests until the peer closes, idles out or asks to close.
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  // `context` is null for plain HTTP; the session keeps it alive past a certificate reload.
  Session(Server::Impl& server, tcp::socket socket, std::shared_ptr<ssl::context> context)
      : server_(server), context_(std::move(context)), stream_(makeStream(std::move(socket))) {}
  ~Session() { --server_.connections; }

  void start() {
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      read();
    } else {
      beast::get_lowest_layer(stream_).expires_after(kIdleTimeout);
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (!ec) self->read();
                              });
    }
  }

 private:
  Stream makeStream(tcp::socket socket) {
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      return Stream(std::move(socket));
    } else {
      return Stream(std::move(socket), *context_);
    }
  }

  void read() {
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(kBodyLimit);
    beast::get_lowest_layer(stream_).expires_after(kIdleTimeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) { self->onRead(ec); });
  }

  void onRead(beast::error_code ec) {
    if (ec == http::error::header_limit || ec == http::error::body_limit) {
      respond(Response{431, "text/plain; charset=utf-8", "request too large\n"}, false, 11);
      return;
    }
    if (ec) return close();
    const auto& req = parser_->get();
    respond(server_.answer(req), req.keep_alive(), req.version(), req.method() == http::verb::head);
  }

  void respond(Response r, bool keepAlive, unsigned version, bool head = false) {
    res_ = {};
    res_.version(version);
    res_.result(static_cast<http::status>(r.status));
    res_.set(http::field::content_type, r.contentType);
    res_.set("X-Content-Type-Options", "nosniff");
    res_.keep_alive(keepAlive);
    res_.body() = std::move(r.body);
    res_.prepare_payload();
    if (head) res_.body().clear();
    http::async_write(stream_, res_,
                      [self = this->shared_from_this(), keepAlive](beast::error_code ec, size_t) {
                        if (ec || !keepAlive) return self->close();
                        self->read();
                      });
  }

  void close() {
    beast::error_code ignored;
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    } else {
      // No TLS close_notify round trip: the peer is done or misbehaving either way.
      beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
  }

  Server::Impl& server_;
  std::shared_ptr<ssl::context> context_;
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
};

}  // namespace

Response Server::Impl::answer(const http::request<http::string_body>& req) const {
  if (req.method() != http::verb::get && req.method() != http::verb::head) {
    return Response{405, "text/plain; charset=utf-8", "method not allowed\n"};
  }
  try {
    return handler(std::string_view(req.target().data(), req.target().size()));
  } catch (const std::exception& e) {
    log::error(e.what(), "Serving a request failed", {{"target", std::string(req.target())}});
    return Response{500, "text/plain; charset=utf-8", "internal server error\n"};
  }
}

void Server::Impl::refreshTls() {
  auto cert = stampOf(tlsFiles->certFile);
  auto key = stampOf(tlsFiles->keyFile);
  if (cert == certStamp && key == keyStamp) return;
  auto loaded = loadTls(*tlsFiles);
  if (!loaded.ok()) {
    // Mid-rotation the two files may disagree for a moment; keep serving the old pair.
    log::warning("Keeping the previous serving certificate", {{"err", loaded.error().message}});
    return;
  }
  log::info(0, "Loaded serving certificate", {{"certFile", tlsFiles->certFile}});
  tls = std::move(*loaded);
  certStamp = cert;
  keyStamp = key;
}

void Server::Impl::accept() {
  acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (stopped) return;
    if (!ec) {
      if (connections.load() >= kMaxConnections) {
        beast::error_code ignored;
        socket.close(ignored);
      } else {
        ++connections;
        if (tlsFiles) {
          refreshTls();
          std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(*this, std::move(socket),
                                                                          tls)
              ->start();
        } else {
          std::make_shared<Session<beast::tcp_stream>>(*this, std::move(socket), nullptr)->start();
        }
      }
    }
    accept();
  });
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() { stop(); }

util::Result<std::unique_ptr<Server>> Server::start(Options options, Handler handler) {
  auto impl = std::make_unique<Impl>();
  impl->handler = std::move(handler);
  if (options.tls) {
    impl->tlsFiles = options.tls;
    auto loaded = loadTls(*options.tls);
    if (!loaded.ok()) return loaded.error();
    impl->tls = std::move(*loaded);
    impl->certStamp = Impl::stampOf(options.tls->certFile);
    impl->keyStamp = Impl::stampOf(options.tls->keyFile);
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
  impl->thread = std::thread([raw] { raw->ioc.run(); });
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

uint16_t Server::port() const { return impl_->port; }

bool Server::tls() const { return impl_->tlsFiles.has_value(); }

void Server::stop() {
  if (!impl_ || impl_->stopped.exchange(true)) return;
  // Pending handlers are dropped unrun; the io_context's destruction frees their sessions.
  impl_->ioc.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace berth::serving
