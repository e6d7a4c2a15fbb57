#pragma once
// The embedded API server: serves a Store over HTTP/1.1 (or HTTPS) on loopback the way
// kube-apiserver serves etcd, so that berth's client, kubectl and other real clients can talk to
// it in tests, demos and benchmarks.
//
// Concurrency: one thread accepts; each connection gets its own thread that reads requests
// synchronously (keep-alive) and answers them from the Store, which is thread-safe. Connections
// are bounded (ServerOptions::maxConnections: beyond it, or when no thread can be started, a new
// connection is answered 429 or 503 and closed), and so is their time, as kube-apiserver's
// http.Server: a request's headers must arrive within headerTimeout of the connection opening or
// of the request's first byte, and a keep-alive connection idle for idleTimeout is closed. A watch
// holds its connection's thread and waits on Watch::next in short slices, so that it notices within
// a fraction of a second a client that went away (the socket reports the peer's FIN or reset), the
// server stopping, a ?timeoutSeconds= deadline and injected faults. stop() shuts every socket
// down, which unblocks any read or write, and joins every thread.
//
// Authentication, as kube-apiserver's union authenticator: with neither a token nor a client CA
// configured every request is served; otherwise a request needs `Authorization: Bearer <token>`
// (the scheme matched case-insensitively, a token from ServerOptions::token or ::tokens) or a
// client certificate the client CA verifies, or it is answered 401 Unauthorized. Requests
// with no credentials at all may still read /healthz, /livez, /readyz and /version, as the
// apiserver lets anonymous users read them. TokenReviews and SubjectAccessReviews are answered
// from ServerOptions::reviews (review.h).
//
// Fault hooks let tests reproduce what a real apiserver does under stress: restarts (refused
// connections), 5xx answers, closed watches, compacted history (410 Expired), corrupt streams and
// slow bindings. Every request is also recorded in a bounded log that tests can read.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "pkg/apiserver/http_handler.h"
#include "pkg/apiserver/review.h"
#include "pkg/apiserver/store.h"
#include "pkg/util/result.h"

namespace berth::apiserver {

struct TlsOptions {
  std::string certificatePem;  // the serving certificate (chain), PEM
  std::string privateKeyPem;   // its key, PEM
  std::string clientCaPem;     // when set, client certificates are requested and verified
};

struct ServerOptions {
  std::string bindAddress = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port (see Server::port())
  std::optional<TlsOptions> tls;
  std::string token;  // when set, `Authorization: Bearer <token>` authenticates
  // More tokens that authenticate (--token-auth-file's).
  std::vector<std::string> tokens;
  // kube-apiserver's http.Server: ReadHeaderTimeout 32 s, IdleTimeout 90 s, and Go's
  // DefaultMaxHeaderBytes (1 MiB) beyond which a request is answered 431.
  std::chrono::milliseconds headerTimeout{32000};
  std::chrono::milliseconds idleTimeout{90000};
  size_t maxHeaderBytes = 1 << 20;
  // Open connections (each one thread; a watch holds one). Far above what tests and demos use.
  size_t maxConnections = 10000;
  // What TokenReviews and SubjectAccessReviews are answered from (review.h).
  ReviewConfig reviews;
  // How often watches that allow bookmarks get one (kube-apiserver: about once a minute).
  std::chrono::milliseconds bookmarkInterval{60000};
  size_t requestLogLimit = 10000;  // the newest records are kept
};

// One served request, as an audit log records it.
struct RequestRecord {
  std::string method;  // "GET"
  std::string verb;    // "list", "watch", "create"... (the lower-cased method for non-resources)
  std::string path;    // without the query
  std::string query;
  std::string resource;
  std::string subresource;
  std::string ns;
  std::string name;
  int code = 0;  // the HTTP status; 200 for a watch that started
};

class Server {
 public:
  // Binds, listens and starts serving; an error names the address or the TLS material at fault.
  static util::Result<std::unique_ptr<Server>> start(Store& store, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  uint16_t port() const { return port_; }
  // "http://127.0.0.1:PORT" or "https://..."
  std::string url() const;
  // Closes the listener and every connection (open watches end without a final chunk) and joins
  // every thread. Idempotent; the destructor calls it.
  void stop();

  // --- Fault hooks ------------------------------------------------------------------------------
  // Ends every open watch cleanly (the final chunk is sent), as an apiserver does when its watch
  // cache is reinitialized; clients must rewatch.
  void closeWatches();
  // The next `count` watch requests answer HTTP 200 and a single ERROR event with a 410 Expired
  // Status, as for a resourceVersion that was compacted away.
  void expireNextWatches(int count);
  // The next `count` requests (any path) are answered with `code` and a matching Status.
  void failNextRequests(int count, int code = 503);
  // Every request in the next `duration` is answered with `code` and a matching Status.
  void failRequestsFor(std::chrono::milliseconds duration, int code = 503);
  // Acts as a restart: closes the listener and every connection; connections are refused for
  // `duration`; then it listens again on the same port, with the same store.
  void refuseConnectionsFor(std::chrono::milliseconds duration);
  // Writes `{"type":"MODIFIED","object":{` (a truncated event) as the next line of every open
  // watch stream.
  void injectMalformedWatchLine();
  // Every binding (pods/NAME/binding, bindings) waits `delay` before it is applied; 0 to stop.
  void delayBindings(std::chrono::milliseconds delay);
  // How many watch streams are open (a watch whose client disconnected is gone within ~2 s).
  size_t activeWatches() const { return active_watches_.load(); }
  // The served requests, oldest first.
  std::vector<RequestRecord> requestLog() const;
  void clearRequestLog();

 private:
  struct Connection;
  struct Peer;

  Server(Store& store, ServerOptions options);
  util::Result<void> listen();
  void acceptLoop();
  void bookmarkLoop();
  // Shuts the socket of every connection whose header or idle deadline has passed.
  void deadlineLoop();
  void runConnection(Connection& connection);
  template <typename Stream>
  void serveConnection(Stream& stream, Connection& connection, const Peer& peer);
  template <typename Stream>
  bool streamWatch(Stream& stream, unsigned version, bool keepAlive, WatchStream watch, int fd);
  // Authentication, faults and the handler, in the apiserver's filter order; records the request.
  HttpResponse handle(const RequestInfo& info, const HttpRequest& request,
                      std::string_view authorization, const Peer& peer);
  std::optional<HttpResponse> takeFault();
  bool authenticated(const RequestInfo& info, std::string_view authorization,
                     const Peer& peer) const;
  void record(const RequestInfo& info, std::string_view method, int code);
  // Shuts down every connection's socket; they end and their threads exit.
  void dropConnections();
  void reapConnections();
  // Sleeps up to `duration`, returning early when the server stops.
  void sleepFor(std::chrono::milliseconds duration);

  struct Impl;
  std::unique_ptr<Impl> impl_;  // Asio and OpenSSL state, kept out of this header
  Store& store_;
  ServerOptions options_;
  std::atomic<uint16_t> port_ = 0;  // rewritten by the accept thread when it listens again
  std::unique_ptr<HttpHandler> handler_;

  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
  std::thread bookmark_thread_;
  std::thread deadline_thread_;

  // Guards the listener's state, the connections and wakes sleepers on stop.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::list<Connection> connections_;
  std::optional<std::chrono::steady_clock::time_point> resume_at_;  // refusing until then
  bool stopped_ = false;

  // Faults.
  mutable std::mutex fault_mu_;
  int fail_count_ = 0;
  int fail_code_ = 503;
  std::chrono::steady_clock::time_point fail_until_{};
  int fail_until_code_ = 503;
  std::atomic<int> expire_count_{0};
  std::atomic<uint64_t> malformed_generation_{0};
  std::atomic<int64_t> binding_delay_ms_{0};
  std::atomic<size_t> active_watches_{0};

  mutable std::mutex log_mu_;
  std::deque<RequestRecord> log_;
};

}  // namespace berth::apiserver
