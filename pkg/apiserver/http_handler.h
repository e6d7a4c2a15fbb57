#pragma once
// The REST layer of the embedded API server: it turns one HTTP request (method, target, body)
// into a Store call and the response kube-apiserver would write, with no sockets involved. The
// Server owns the transport (connections, TLS, authentication, fault hooks, watch streaming);
// this unit owns the mapping, so that it reads like kube-apiserver's RequestInfoFactory and
// endpoint handlers:
//   /api/v1/[namespaces/NS/]RESOURCE[/NAME[/SUBRESOURCE]]
//   /apis/GROUP/v1/[namespaces/NS/]RESOURCE[/NAME[/SUBRESOURCE]]
// plus discovery, /version and the health endpoints. Every failure is a metav1.Status with the
// HTTP code the apiserver uses; paths nothing serves answer 404 NotFound and verbs a path does
// not support 405 MethodNotAllowed, in the words go-restful's handlers use.

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/apiserver/store.h"

namespace berth::apiserver {

// What a request asks for (k8s.io/apiserver/pkg/endpoints/request.RequestInfo).
struct RequestInfo {
  bool isResourceRequest = false;
  // For resource requests, the Kubernetes verb: get, list, watch, create, update, patch, delete;
  // otherwise the lower-cased HTTP method.
  std::string verb;
  std::string path;  // the target without its query
  std::string group;
  std::string version;
  std::string ns;
  std::string resource;  // the path segment, "pods"
  std::string subresource;
  std::string name;
  std::map<std::string, std::string, std::less<>> query;  // first value of each parameter
};

// Parses a request target; never fails (an unroutable path is a request nothing serves).
RequestInfo parseRequestInfo(std::string_view method, std::string_view target);

// The parameter's decoded value as Go's url.ParseQuery reads it ('+' is a space).
std::string queryUnescape(std::string_view text);
// A path as Go's url.PathUnescape reads it ('+' stays); the text unchanged when an escape is
// malformed.
std::string pathUnescape(std::string_view text);

struct HttpRequest {
  std::string_view method;  // "GET"
  std::string_view contentType;
  std::string_view body;
};

// A watch to stream: the events of `watch`, or, when the watch could not start from the requested
// resourceVersion, the one ERROR event `error` (kube-apiserver answers a watch that is too old with
// HTTP 200 and a 410 Expired Status event, not with an HTTP error).
struct WatchStream {
  WatchPtr watch;
  std::optional<nlohmann::json> error;
  std::optional<std::chrono::seconds> timeout;  // ?timeoutSeconds=: end the stream cleanly
};

struct HttpResponse {
  int code = 200;
  std::string body;
  std::string contentType = "application/json";
  std::optional<WatchStream> watch{};  // set instead of body for a watch
};

// JSON text as kube-apiserver writes it: like Go's encoding/json, bytes that are not UTF-8 become
// U+FFFD (a strict dump() would throw; a name or namespace in a request path may hold any byte).
std::string toJsonText(const nlohmann::json& value);

// The Status response for `error`.
HttpResponse errorResponse(const ApiError& error);
// The ERROR watch event kube-apiserver sends for a watch from a compacted resourceVersion.
nlohmann::json expiredEvent(std::string_view requested, std::string_view oldest);

class HttpHandler {
 public:
  // `serverAddress` (host:port) is what /api advertises.
  HttpHandler(Store& store, std::string serverAddress);

  HttpResponse serve(const RequestInfo& info, const HttpRequest& request);

 private:
  HttpResponse serveNonResource(const RequestInfo& info) const;
  HttpResponse serveResource(const RequestInfo& info, const HttpRequest& request);
  HttpResponse list(Resource resource, const RequestInfo& info);
  HttpResponse watch(Resource resource, const RequestInfo& info);
  HttpResponse remove(Resource resource, const RequestInfo& info, std::string_view body);
  HttpResponse bind(const RequestInfo& info, std::string_view body, std::string_view name);

  Store& store_;
  std::string server_address_;
};

}  // namespace berth::apiserver
