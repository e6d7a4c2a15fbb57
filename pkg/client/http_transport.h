#pragma once
// HttpTransport: the HTTP/1.1 client behind every RestClient call, built for throughput: a call
// runs entirely on the calling thread, with no hand-off to a pool. Each connection owns an
// io_context that the caller runs while its request is in flight, so every step (connect, TLS
// handshake, write, read) is bounded by the timeout and aborted promptly by the call's stop token;
// a server that stops answering cannot hang the caller.
//
// Connections are kept alive and reused: after a complete response that allows it, a connection
// goes back to a bounded stack of idle ones. A reused connection is checked first: if the server
// closed it (or it sat idle too long) it is dropped, because a request written to a dead
// connection may or may not have been processed. An idempotent request that still finds its
// reused connection dead before any byte of the answer arrived is sent once more on a fresh
// connection; any other request returns the connection failure, so a POST is sent at most once.
//
// A watch is a streaming GET (openStream): its body is read from the socket only as the caller
// asks for more, a block at a time, so a server that sends faster than the caller consumes is held
// back by TCP flow control instead of growing a buffer. Redirects are never followed: a 3xx is an
// answer like any other, for the caller to refuse.
//
// TLS: the server's certificate is verified against the given context's roots (unless told not
// to), including its host name or IP address, and SNI names the host. Thread-safe.

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/context.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/client/backoff.h"
#include "pkg/client/failure.h"
#include "pkg/util/result.h"

namespace berth::client {

// What to send. The views must stay valid during roundTrip.
struct HttpRequest {
  std::string_view method{};  // "GET"
  // Path and query, "/api/v1/pods?limit=500"; the server URL's path is put in front.
  std::string_view target{};
  std::optional<std::string_view> body{};
  std::string_view contentType{};    // sent with a body
  std::string_view accept{};         // empty: not sent
  std::string_view userAgent{};      // empty: not sent
  std::string_view authorization{};  // the header's whole value, "Bearer ..."; empty: not sent
  // Sending it twice does no harm: it may be repeated once when a reused connection turns out
  // to be dead before any of the answer arrived.
  bool idempotent = false;
};

// A complete answer, body read.
struct HttpResponse {
  int status = 0;
  std::string body;
  std::string retryAfter;  // the Retry-After header, empty when absent
  std::string location;    // the Location header (of a redirect), empty when absent
  Duration headersTook{};  // from the start of the call until the status line and headers arrived
};

struct HttpTransportOptions {
  // Connect, TLS handshake, writing the request, and each read of the answer must progress within
  // this; a body that keeps arriving is read to its end.
  Duration timeout = std::chrono::seconds(30);
  // A larger answer fails the call (as a malformed response): lists of many objects are big, but
  // not this big.
  size_t maxBodyBytes = 64 * 1024 * 1024;
  size_t maxIdleConnections = 32;
  // An idle connection older than this is closed instead of reused (Go's IdleConnTimeout), so that
  // one silently dropped by a middlebox is not where a POST goes to wait for its timeout.
  Duration maxIdle = std::chrono::seconds(90);
};

class HttpTransport {
 public:
  // `server` is "https://host[:port][/prefix]" or "http://..."; `tls` must be given for https: its
  // roots, client certificate and options are used as they are. With `verifyPeer` false the
  // server's certificate is not checked at all (insecure-skip-tls-verify).
  static util::Result<std::unique_ptr<HttpTransport>> create(
      std::string_view server, std::optional<boost::asio::ssl::context> tls, bool verifyPeer,
      HttpTransportOptions options = {});
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // Sends the request and reads the whole answer, whatever its status. Fails with a Connection
  // failure when no complete answer came (refused, reset, TLS, timed out), BadResponse when it
  // could not be parsed or is over maxBodyBytes, Cancelled once `stop` is requested.
  ApiResult<HttpResponse> roundTrip(const HttpRequest& request, std::stop_token stop = {});

  class Stream;
  using StreamPtr = std::unique_ptr<Stream>;
  // What openStream got: a 2xx answer's open body, or any other answer read whole.
  struct Opened {
    StreamPtr stream;                      // a 2xx: its body is read through the stream
    std::optional<HttpResponse> response;  // otherwise: the whole answer (body up to maxBodyBytes)
  };
  // Sends the request on a connection of its own and waits for the status line and headers; each
  // read of them and of the body must progress within `idleTimeout` (connect, handshake and write
  // within the options' timeout). `stop` cancels the stream for as long as it lives. Fails as
  // roundTrip does.
  ApiResult<Opened> openStream(const HttpRequest& request, Duration idleTimeout,
                               std::stop_token stop = {});

 private:
  class Connection;
  using ConnectionPtr = std::unique_ptr<Connection>;
  struct Outcome;
  // Where the server is, from its URL.
  struct Endpoint {
    std::string host;  // IPv6 without brackets
    uint16_t port = 0;
    std::string hostHeader;  // "host:port" as the URL writes it
    std::string prefix;      // the URL's path, without a trailing slash
    bool hostIsAddress = false;
    boost::asio::ip::address address;  // when hostIsAddress
  };

  HttpTransport(Endpoint endpoint, std::optional<boost::asio::ssl::context> tls, bool verifyPeer,
                HttpTransportOptions options);
  // An idle connection still fit for a request, or null.
  ConnectionPtr takeIdle();
  void putIdle(ConnectionPtr connection);
  // Connects a new connection and shakes hands; the failure says which step failed.
  std::optional<ApiFailure> connect(Connection& connection);
  // Writes the request and reads the answer.
  Outcome exchange(Connection& connection, const HttpRequest& request, TimePoint start);
  // Writes the request; the failure says why it could not.
  std::optional<ApiFailure> writeRequest(Connection& connection, const HttpRequest& request,
                                         bool& timedOut);

  const Endpoint endpoint_;
  std::optional<boost::asio::ssl::context> tls_;
  const bool verify_peer_;
  const HttpTransportOptions options_;

  std::mutex mu_;
  std::vector<ConnectionPtr> idle_;  // guarded by mu_; the most recently used last
};
using HttpTransportPtr = std::unique_ptr<HttpTransport>;

// The body of a 2xx answer being read: it holds its own connection, which it closes when
// destroyed (or when the stop token given to openStream is requested). Used by one thread.
class HttpTransport::Stream {
 public:
  // The bytes read per block: the most read from the body that the stream holds at once, beside
  // what the connection has read ahead of the parser (at most one socket read of 64 KiB).
  static constexpr size_t kBlockBytes = 64 * 1024;

  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  int status() const;
  Duration headersTook() const;  // from the start of openStream until the headers arrived
  // The next bytes of the body, waiting for at least one; an empty view at its end. Valid until
  // the next call. Fails with a Connection failure when the connection breaks or stays silent for
  // the idle timeout, Cancelled once the stop token is requested.
  ApiResult<std::string_view> read();
  // Bytes read from the socket and not yet returned by read(): the read-ahead, bounded by one
  // socket read plus what the parser could not yet place.
  size_t bufferedBytes() const;

 private:
  friend class HttpTransport;
  struct State;
  explicit Stream(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace berth::client
