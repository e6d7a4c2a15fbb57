#pragma once
// Server: berth's own small HTTP(S) endpoint for /metrics, /healthz, /livez and /readyz (the
// kube-scheduler port, 10259). Boost.Beast, asynchronous on one thread: scrapes and probes are
// rare and small, so one thread serves any number of connections.
//
// Hardening, since the port is reachable from the pod network: requests other than GET/HEAD are
// refused, headers are capped at 8 KiB and bodies at 4 KiB, a connection that sends nothing for
// 10 s is closed, and at most 128 connections are open at once. With TLS, at least TLS 1.2 is
// required and the certificate and key files are re-read when they change (cert-manager and
// kubelet rotate them in place), so a rotation needs no restart.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/util/result.h"

namespace berth::serving {

struct Response {
  int status = 200;
  std::string contentType = "text/plain; charset=utf-8";
  std::string body;
};

// Answers one request; `target` is the request target with its query ("/healthz?verbose").
// Called on the server's thread: it must not block for long.
using Handler = std::function<Response(std::string_view target)>;

struct TlsFiles {
  std::string certFile;  // PEM certificate chain
  std::string keyFile;   // PEM private key
};

struct Options {
  std::string bindAddress = "0.0.0.0";
  uint16_t port = 0;  // 0: a free port, see Server::port()
  std::optional<TlsFiles> tls;
};

class Server {
 public:
  // Binds and starts serving; fails with a message naming the address or the TLS file.
  static util::Result<std::unique_ptr<Server>> start(Options options, Handler handler);
  ~Server();  // stops
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  uint16_t port() const;
  bool tls() const;
  // Closes the listener and every connection, and joins the thread. Idempotent.
  void stop();

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace berth::serving
