#pragma once
// Server: berth's own small HTTPS endpoint for /metrics, /healthz, /livez, /readyz and the other
// operator paths (the kube-scheduler port, 10259). Boost.Beast, asynchronous on a few threads,
// each connection on its own strand: a handler may wait on the API server (TokenReview,
// SubjectAccessReview) without stopping probes on other connections.
//
// Always TLS, as kube-scheduler's secure port: at least TLS 1.2 by default, the certificate and
// key either in memory or from files that are re-read when they change (cert-manager and kubelet
// rotate them in place; a pair that fails to load keeps the previous one). Clients may present a
// certificate, handed to the handler unjudged (the authenticator verifies it, CertificatePool).
//
// Hardening, since the port is reachable from the pod network: requests other than GET/HEAD are
// refused, headers are capped at 8 KiB (431, as Go answers an oversized header block) and bodies
// at 4 KiB (413); malformed requests and HTTP/1.1 without Host get Go's 400, and each refusal
// closes the connection. A handshake, a request or the wait between requests that takes over
// 10 s closes it too. No small connection cap: the backstop is half the descriptor limit, and
// at the backstop the oldest idle connection is closed for the new one, so a client holding
// many idle sockets cannot starve the health probes. A failing accept() (EMFILE) backs off
// 5 ms doubling to 1 s, as Go's net/http, and is logged once per episode.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/serving/tls.h"
#include "pkg/util/result.h"

namespace berth::serving {

struct Response {
  int status = 200;
  std::string contentType = "text/plain; charset=utf-8";
  std::string body;
};

// The client certificate a connection presented.
struct PeerCertificate {
  std::vector<std::string> chainDer;  // DER, the leaf first, then what else the client sent
  std::string commonName;             // the leaf's subject
  std::vector<std::string> organizations;
};

using Header = std::pair<std::string_view, std::string_view>;  // name as sent, value

struct Request {
  std::string_view method;                // "GET" or "HEAD"
  std::string_view target;                // path and query: "/healthz?verbose"
  std::string_view authorization;         // the Authorization header, "" when absent
  const PeerCertificate* peer = nullptr;  // null when the client presented no certificate
  std::string_view accept;                // the Accept header, "" when absent
  std::vector<Header> headers;            // every header, in the order sent
};

// Answers one request. Called on one of the server's threads; it may block for a bounded time.
using Handler = std::function<Response(const Request& request)>;

struct Options {
  std::string bindAddress = "0.0.0.0";
  uint16_t port = 0;  // 0: a free port, see Server::port()
  TlsConfig tls;
  // Open connections at most; 0: half of RLIMIT_NOFILE's soft limit, at least 64.
  int maxConnections = 0;
};

class Server {
 public:
  // Binds and starts serving; fails with a message naming the address or the TLS file.
  static util::Result<std::unique_ptr<Server>> start(Options options, Handler handler);
  ~Server();  // stops
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  uint16_t port() const;
  // Closes the listener and every connection, and joins the threads. Idempotent.
  void stop();

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace berth::serving
