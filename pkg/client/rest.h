#pragma once
// RestClient: berth's connection to kube-apiserver, as client-go's rest.RESTClient configured
// from a RestConfig. It speaks JSON, verifies the server's certificate (against the kubeconfig's
// CA only, or the system's roots when none is given) unless insecure-skip-tls-verify is set,
// authenticates with a client certificate and/or a bearer token (re-read from its file when it
// rotates, or run from an exec credential plugin), and sends User-Agent berth/VERSION. The first
// failure of a series of retried calls is logged at once at the default verbosity, the retries
// after it at V(4).
//
// Every call is synchronous: it runs on the calling thread (no pool of the client's own) and can
// be cancelled through its stop token. Calls pass a client-side token
// bucket (qps/burst) first. Idempotent calls (GET, LIST, watch start, DELETE, PUT with a
// resourceVersion, merge patches) are retried on connection errors, 429 and 5xx with jittered
// exponential backoff, or after Retry-After when the server sends one. POST (create, binding) is
// never retried: the scheduler must send exactly one binding per decision and decide itself.
// Redirects are never followed (a 3xx fails the call, naming where it pointed), so the credentials
// go to the configured server only.

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>
#include <string_view>

#include "pkg/api/meta.h"
#include "pkg/client/backoff.h"
#include "pkg/client/config.h"
#include "pkg/client/failure.h"
#include "pkg/client/request.h"
#include "pkg/util/result.h"

namespace berth::client {

using PatchType = api::PatchType;
using Preconditions = api::Preconditions;

struct RetryOptions {
  int maxRetries = 5;  // attempts after the first
  BackoffOptions backoff{.initial = std::chrono::milliseconds(250),
                         .max = std::chrono::seconds(8),
                         .factor = 2.0,
                         .jitter = 1.0,
                         .resetAfter = std::chrono::minutes(2)};
  // The longest Retry-After honoured; a longer one is cut to this.
  Duration maxRetryAfter = std::chrono::seconds(60);
};

// What one attempt of a request did, for the rest_client_* metrics.
struct RequestDone {
  std::string_view method;  // "GET"
  std::string_view host;    // "10.96.0.1:443"
  std::string_view code;    // "200", or "<error>" when no answer came
  Duration took;            // until the response headers (a watch: until it started)
};

struct RestOptions {
  // Inactivity timeout of ordinary calls (no byte for this long fails the call).
  Duration requestTimeout = std::chrono::seconds(30);
  // Inactivity timeout of watch streams; watches ask the server to end them before it (a watch
  // whose timeoutSeconds is 0 or too long is sent with this minus one minute).
  Duration watchIdleTimeout = std::chrono::minutes(12);
  // The longest watch event line accepted; a longer one fails the stream as a malformed response
  // (the reflector then relists), so a hostile or broken server cannot grow the buffer without
  // bound. kube-apiserver refuses request bodies over 3 MiB (MaxRequestBodyBytes in
  // k8s.io/apiserver/pkg/server/config.go) and etcd requests over 1.5 MiB, so no stored object's
  // event comes near 16 MiB.
  size_t maxWatchEventBytes = 16 * 1024 * 1024;
  // The largest answer to a unary call; a list page over it is asked again in smaller pages.
  size_t maxResponseBytes = 64 * 1024 * 1024;
  RetryOptions retry;
  Duration tokenCheckInterval = std::chrono::seconds(5);
  // Times requests, paces the rate limiter and token checks, and sleeps between retries; the
  // random source jitters the retry backoff. Both default to the real ones and must outlive the
  // client.
  util::Clock* clock = nullptr;
  util::Random* random = nullptr;
  // Called after every attempt (retries included) on the calling thread; must be cheap.
  std::function<void(const RequestDone&)> onRequest;
  // Whether an exec credential plugin may prompt on berth's terminal (interactiveMode allowing):
  // true for the command-line tools, never for the daemon.
  bool interactiveCredentials = false;
};

class RestClient {
 public:
  // Fails on an unusable configuration (malformed server URL, CA/cert/key that do not load,
  // tls-server-name, which berth's transport does not implement).
  static util::Result<std::unique_ptr<RestClient>> create(const RestConfig& config,
                                                          RestOptions options = {});
  ~RestClient();
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  // GET RESOURCE/NAME[/SUB].
  ApiResult<nlohmann::json> get(const Resource& resource, std::string_view ns,
                                std::string_view name, std::string_view subresource = {},
                                std::stop_token stop = {});
  // GET of a path that is not a resource: discovery (/apis/events.k8s.io/v1), /version.
  ApiResult<nlohmann::json> getPath(std::string_view path, std::stop_token stop = {});
  // One page of a LIST.
  ApiResult<ObjectList> list(const Resource& resource, std::string_view ns,
                             const ListOptions& options = {}, std::stop_token stop = {});
  // Every page of a LIST (limit 500 unless options.limit says otherwise).
  ApiResult<ObjectList> listAll(const Resource& resource, std::string_view ns,
                                const ListOptions& options = {}, std::stop_token stop = {});
  // Opens a watch; the stream is cancelled by `stop` (and when destroyed).
  ApiResult<WatchStreamPtr> watch(const Resource& resource, std::string_view ns,
                                  const WatchOptions& options, std::stop_token stop = {});
  // POST to the collection. Never retried.
  ApiResult<nlohmann::json> create(const Resource& resource, std::string_view ns,
                                   const nlohmann::json& object, std::stop_token stop = {});
  // POST to a subresource: pods/NAME/binding. Never retried. Returns the answer (a Status for a
  // binding).
  ApiResult<nlohmann::json> post(const Resource& resource, std::string_view ns,
                                 std::string_view name, std::string_view subresource,
                                 const nlohmann::json& body, std::stop_token stop = {});
  // PUT RESOURCE/NAME[/SUB] (pods/NAME/status); retried only when the object carries a
  // metadata.resourceVersion (then a repeat cannot apply twice).
  ApiResult<nlohmann::json> update(const Resource& resource, std::string_view ns,
                                   std::string_view name, const nlohmann::json& object,
                                   std::string_view subresource = {}, std::stop_token stop = {});
  ApiResult<nlohmann::json> patch(const Resource& resource, std::string_view ns,
                                  std::string_view name, PatchType type,
                                  const nlohmann::json& patch, std::string_view subresource = {},
                                  std::stop_token stop = {});
  // DELETE, with DeleteOptions.preconditions when given. Returns the answer (object or Status).
  ApiResult<nlohmann::json> remove(const Resource& resource, std::string_view ns,
                                   std::string_view name, const Preconditions& preconditions = {},
                                   std::stop_token stop = {});

  const std::string& server() const;

 private:
  struct Impl;
  explicit RestClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};
using RestClientPtr = std::unique_ptr<RestClient>;

}  // namespace berth::client
