#pragma once
// A minimal HTTP/1.1 client for the embedded API server's tests, on Beast: one connection
// (plain or TLS, optionally with a client certificate) reused across requests, whole responses,
// and watch streams read line by line from their chunks. Every operation runs under a generous
// deadline so that a broken server fails a test instead of hanging it.

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace berth::test {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;

struct ClientTls {
  std::string caPem;           // trusted to sign the server's certificate
  std::string certificatePem;  // presented when set
  std::string privateKeyPem;
};

struct Response {
  int code = 0;
  std::map<std::string, std::string> headers;
  std::string body;
  nlohmann::json json() const { return nlohmann::json::parse(body, nullptr, false); }
};

class TestClient {
 public:
  static constexpr std::chrono::seconds kDeadline{10};

  explicit TestClient(uint16_t port, std::optional<ClientTls> tls = std::nullopt)
      : port_(port), tls_options_(std::move(tls)) {}

  // Connects (and handshakes); "" on success, else the error.
  std::string connect() {
    close();
    buffer_.clear();
    socket_ = std::make_unique<tcp::socket>(ioc_);
    boost::system::error_code ec = run([&](auto done) {
      socket_->async_connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port_),
                             [done](boost::system::error_code e) { done(e); });
    });
    if (ec) {
      return ec.message();
    }
    if (!tls_options_) {
      return "";
    }
    ctx_ = std::make_unique<ssl::context>(ssl::context::tls_client);
    ctx_->add_certificate_authority(net::buffer(tls_options_->caPem), ec);
    ctx_->set_verify_mode(ssl::verify_peer);
    if (!tls_options_->certificatePem.empty()) {
      ctx_->use_certificate_chain(net::buffer(tls_options_->certificatePem), ec);
      ctx_->use_private_key(net::buffer(tls_options_->privateKeyPem), ssl::context::pem, ec);
    }
    tls_ = std::make_unique<ssl::stream<tcp::socket&>>(*socket_, *ctx_);
    SSL_set_tlsext_host_name(tls_->native_handle(), "localhost");
    tls_->set_verify_callback(ssl::host_name_verification("localhost"));
    ec = run([&](auto done) {
      tls_->async_handshake(ssl::stream_base::client,
                            [done](boost::system::error_code e) { done(e); });
    });
    if (!ec && tls_options_->certificatePem.empty()) {
      return "";
    }
    if (ec) {
      return ec.message();
    }
    // TLS 1.3 reports a rejected client certificate only on the first read: probe with a
    // request so that connect() fails for it.
    Response probe = request("GET", "/healthz");
    return probe.code == 0 ? "connection closed after the handshake" : "";
  }

  bool connected() const { return socket_ != nullptr; }

  // Sends one request; code 0 when the connection failed (then reconnect).
  Response request(const std::string& method, const std::string& target,
                   const std::string& body = "",
                   const std::map<std::string, std::string>& headers = {}) {
    Response out;
    if (!socket_ && !connect().empty()) {
      return out;
    }
    if (!send(method, target, body, headers)) {
      close();
      return out;
    }
    http::response<http::string_body> res;
    boost::system::error_code ec = withStream([&](auto& stream) {
      return run([&](auto done) {
        http::async_read(stream, buffer_, res,
                         [done](boost::system::error_code e, size_t) { done(e); });
      });
    });
    if (ec) {
      close();
      return out;
    }
    out.code = static_cast<int>(res.result_int());
    for (const auto& field : res) {
      out.headers[std::string(field.name_string())] = std::string(field.value());
    }
    out.body = res.body();
    if (!res.keep_alive()) {
      close();
    }
    return out;
  }

  // Starts a watch: sends the request and reads the response header. Returns the HTTP code (0 on
  // a connection failure); then nextLine() reads the stream.
  int openWatch(const std::string& target, const std::map<std::string, std::string>& headers = {}) {
    pending_.clear();
    if (!socket_ && !connect().empty()) {
      return 0;
    }
    if (!send("GET", target, "", headers)) {
      close();
      return 0;
    }
    parser_ = std::make_unique<http::response_parser<http::empty_body>>();
    parser_->body_limit(std::numeric_limits<uint64_t>::max());
    chunks_.clear();
    on_chunk_header_ = [this](uint64_t, boost::beast::string_view, boost::system::error_code&) {
      chunks_.emplace_back();
    };
    on_chunk_ = [this](uint64_t, boost::beast::string_view body, boost::system::error_code&) {
      pending_.append(body.data(), body.size());
      chunks_.back().append(body.data(), body.size());
      return body.size();
    };
    parser_->on_chunk_header(on_chunk_header_);
    parser_->on_chunk_body(on_chunk_);
    boost::system::error_code ec = withStream([&](auto& stream) {
      return run([&](auto done) {
        http::async_read_header(stream, buffer_, *parser_,
                                [done](boost::system::error_code e, size_t) { done(e); });
      });
    });
    if (ec) {
      close();
      return 0;
    }
    watch_headers_.clear();
    for (const auto& field : parser_->get()) {
      watch_headers_[std::string(field.name_string())] = std::string(field.value());
    }
    return static_cast<int>(parser_->get().result_int());
  }

  const std::map<std::string, std::string>& watchHeaders() const { return watch_headers_; }
  // The bodies of the watch stream's chunks read so far (the final, empty one included).
  const std::vector<std::string>& chunks() const { return chunks_; }

  // The next line of the watch stream (without its newline); nullopt once the stream ended
  // (final chunk), the connection closed, or the deadline passed (see ended()).
  std::optional<std::string> nextLine(std::chrono::milliseconds deadline = kDeadline) {
    ended_ = false;
    for (;;) {
      if (size_t nl = pending_.find('\n'); nl != std::string::npos) {
        std::string line = pending_.substr(0, nl);
        pending_.erase(0, nl + 1);
        return line;
      }
      if (!parser_ || parser_->is_done()) {
        ended_ = true;
        return std::nullopt;
      }
      boost::system::error_code ec = withStream([&](auto& stream) {
        return run(
            [&](auto done) {
              http::async_read_some(stream, buffer_, *parser_,
                                    [done](boost::system::error_code e, size_t) { done(e); });
            },
            deadline);
      });
      if (ec == net::error::timed_out) {
        return std::nullopt;
      }
      if (ec) {
        closed_by_peer_ = true;
        close();
        return std::nullopt;
      }
    }
  }

  // Whether the last nextLine() saw the stream's final chunk.
  bool ended() const { return ended_; }
  // Whether the server closed the connection during a watch.
  bool closedByPeer() const { return closed_by_peer_; }

  void close() {
    tls_.reset();
    if (socket_) {
      boost::system::error_code ec;
      socket_->close(ec);
      socket_.reset();
    }
    parser_.reset();
  }

 private:
  template <typename F>
  boost::system::error_code withStream(F f) {
    return tls_ ? f(*tls_) : f(*socket_);
  }

  bool send(const std::string& method, const std::string& target, const std::string& body,
            const std::map<std::string, std::string>& headers) {
    http::request<http::string_body> req{http::string_to_verb(method), target, 11};
    if (req.method() == http::verb::unknown) {
      req.method_string(method);
    }
    req.set(http::field::host, "127.0.0.1:" + std::to_string(port_));
    req.set(http::field::accept, "application/json");
    for (const auto& [k, v] : headers) {
      req.set(k, v);
    }
    if (!body.empty() && req.find(http::field::content_type) == req.end()) {
      req.set(http::field::content_type, "application/json");
    }
    req.body() = body;
    req.prepare_payload();
    boost::system::error_code ec = withStream([&](auto& stream) {
      return run([&](auto done) {
        http::async_write(stream, req, [done](boost::system::error_code e, size_t) { done(e); });
      });
    });
    return !ec;
  }

  // Runs one asynchronous operation to completion or until the deadline (then the connection
  // is closed and net::error::timed_out returned).
  template <typename Start>
  boost::system::error_code run(Start start, std::chrono::milliseconds deadline = kDeadline) {
    std::optional<boost::system::error_code> result;
    start([&result](boost::system::error_code ec) { result = ec; });
    ioc_.restart();
    ioc_.run_for(deadline);
    if (result) {
      return *result;
    }
    boost::system::error_code ignored;
    socket_->cancel(ignored);
    ioc_.restart();
    ioc_.run();  // lets the cancelled handler run
    if (!result || *result == net::error::operation_aborted) {
      return net::error::timed_out;
    }
    return *result;
  }

  uint16_t port_;
  std::optional<ClientTls> tls_options_;
  net::io_context ioc_;
  std::unique_ptr<tcp::socket> socket_;
  std::unique_ptr<ssl::context> ctx_;
  std::unique_ptr<ssl::stream<tcp::socket&>> tls_;
  boost::beast::flat_buffer buffer_;
  std::unique_ptr<http::response_parser<http::empty_body>> parser_;
  std::function<size_t(uint64_t, boost::beast::string_view, boost::system::error_code&)> on_chunk_;
  std::function<void(uint64_t, boost::beast::string_view, boost::system::error_code&)>
      on_chunk_header_;
  std::vector<std::string> chunks_;
  std::map<std::string, std::string> watch_headers_;
  std::string pending_;
  bool ended_ = false;
  bool closed_by_peer_ = false;
};

}  // namespace berth::test
