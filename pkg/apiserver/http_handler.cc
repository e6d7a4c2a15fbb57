#include "pkg/apiserver/http_handler.h"

#include <charconv>
#include <utility>
#include <vector>

#include "pkg/api/json.h"
#include "pkg/api/status.h"
#include "pkg/apiserver/discovery.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

// The body limit kube-apiserver enforces on requests (3 MiB) is the Server's; the JSON body here
// is parsed once per request.
std::vector<std::string_view> splitPath(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty() && path.front() == '/') {
    path.remove_prefix(1);
  }
  while (!path.empty() && path.back() == '/') {
    path.remove_suffix(1);
  }
  if (path.empty()) {
    return out;
  }
  size_t start = 0;
  for (;;) {
    size_t slash = path.find('/', start);
    out.push_back(path.substr(start, slash == std::string_view::npos ? path.npos : slash - start));
    if (slash == std::string_view::npos) {
      return out;
    }
    start = slash + 1;
  }
}

int hexValue(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

// A Status built as go-restful's errors reach clients (apierrors.NewGenericServerResponse with no
// resource): reason and message by code, and an empty details object.
HttpResponse genericStatus(int code) {
  json status = {{"kind", "Status"},
                 {"apiVersion", "v1"},
                 {"metadata", json::object()},
                 {"status", "Failure"}};
  switch (code) {
    case 404:
      status["message"] = "the server could not find the requested resource";
      status["reason"] = "NotFound";
      break;
    case 405:
      status["message"] = "the server does not allow this method on the requested resource";
      status["reason"] = "MethodNotAllowed";
      break;
    default:
      status["message"] = "the server responded with the status code " + std::to_string(code) +
                          " but did not return more information";
      break;
  }
  status["details"] = json::object();
  status["code"] = code;
  return HttpResponse{code, toJsonText(status)};
}

HttpResponse notFound() { return genericStatus(404); }
HttpResponse methodNotAllowed() { return genericStatus(405); }

HttpResponse jsonResponse(int code, const json& body) {
  return HttpResponse{code, toJsonText(body)};
}

// nlohmann's messages start with "[json.exception.parse_error.101] "; Go's do not.
std::string parseErrorText(const std::exception& e) {
  std::string_view text = e.what();
  if (text.starts_with("[json.exception.")) {
    if (size_t end = text.find("] "); end != std::string_view::npos) {
      text.remove_prefix(end + 2);
    }
  }
  return std::string(text);
}

// The request body as an object; a body that is not JSON is the 400 the apiserver's decoder
// answers (transformDecodeError): it names the expected kind and quotes the start of the body.
ApiResult<json> decodeBody(std::string_view body, std::string_view kind) {
  if (api::jsonDepth(body) > api::kMaxJsonDepth) {
    return badRequest("the object provided is unrecognized (must be of type " + std::string(kind) +
                      "): json: exceeded max depth");
  }
  try {
    return json::parse(body);
  } catch (const json::exception& e) {
    std::string summary(body.substr(0, 30));
    if (body.size() > 30) {
      summary += " ...";
    }
    return badRequest("the object provided is unrecognized (must be of type " + std::string(kind) +
                      "): couldn't get version/kind; json parse error: " + parseErrorText(e) +
                      " (" + summary + ")");
  }
}

// Go's strconv.ParseBool-like reading of a query flag as metav1 conversion does it: absent, "0"
// and "false" are false, anything else is true.
bool queryFlag(const RequestInfo& info, std::string_view key) {
  auto it = info.query.find(key);
  if (it == info.query.end()) {
    return false;
  }
  std::string lower;
  for (char c : it->second) {
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return !(lower.empty() || lower == "0" || lower == "false");
}

std::string queryValue(const RequestInfo& info, std::string_view key) {
  auto it = info.query.find(key);
  return it == info.query.end() ? std::string() : it->second;
}

// An integer query parameter; 400 as the query parameter conversion fails upstream.
ApiResult<std::optional<int64_t>> queryInt(const RequestInfo& info, std::string_view key) {
  auto it = info.query.find(key);
  if (it == info.query.end() || it->second.empty()) {
    return std::optional<int64_t>();
  }
  int64_t v = 0;
  const std::string& text = it->second;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return badRequest("strconv.ParseInt: parsing \"" + text + "\": invalid syntax");
  }
  return std::optional<int64_t>(v);
}

// The 422 ValidateListOptions answers: ListOptions.meta.k8s.io "" is invalid, one cause per
// error, each a Forbidden or NotSupported on resourceVersionMatch or sendInitialEvents.
HttpResponse invalidListOptions(const std::vector<api::StatusCause>& causes) {
  std::string list;
  for (const api::StatusCause& c : causes) {
    list += (list.empty() ? "" : ", ") + c.field + ": " + c.message;
  }
  ApiError error = apiError(
      422, "Invalid",
      "ListOptions.meta.k8s.io \"\" is invalid: " + (causes.size() == 1 ? list : "[" + list + "]"));
  error.status.details = {.group = "meta.k8s.io", .kind = "ListOptions", .causes = causes};
  return errorResponse(error);
}

api::StatusCause forbiddenMatch(std::string_view detail) {
  return {.reason = "FieldValueForbidden",
          .message = "Forbidden: " + std::string(detail),
          .field = "resourceVersionMatch"};
}

// Which subresources each resource serves.
bool servesSubresource(Resource resource, std::string_view subresource) {
  if (subresource.empty()) {
    return true;
  }
  switch (resource) {
    case Resource::Pods:
      return subresource == "status" || subresource == "binding";
    case Resource::Nodes:
    case Resource::Namespaces:
    case Resource::Services:
    case Resource::ReplicationControllers:
    case Resource::ReplicaSets:
    case Resource::StatefulSets:
    case Resource::PodDisruptionBudgets:
    case Resource::PersistentVolumeClaims:
    case Resource::PersistentVolumes:
      return subresource == "status";
    default:
      return false;
  }
}

}  // namespace

std::string queryUnescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '+') {
      out += ' ';
    } else if (c == '%' && i + 2 < text.size() && hexValue(text[i + 1]) >= 0 &&
               hexValue(text[i + 2]) >= 0) {
      out += static_cast<char>(hexValue(text[i + 1]) * 16 + hexValue(text[i + 2]));
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string pathUnescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size() || hexValue(text[i + 1]) < 0 || hexValue(text[i + 2]) < 0) {
      return std::string(text);  // not an escape Go's URL parser accepts: the path as sent
    }
    out += static_cast<char>(hexValue(text[i + 1]) * 16 + hexValue(text[i + 2]));
    i += 2;
  }
  return out;
}

RequestInfo parseRequestInfo(std::string_view method, std::string_view target) {
  RequestInfo info;
  size_t q = target.find('?');
  info.path = std::string(target.substr(0, q));
  if (q != std::string_view::npos) {
    std::string_view query = target.substr(q + 1);
    while (!query.empty()) {
      size_t amp = query.find('&');
      std::string_view pair = query.substr(0, amp);
      size_t eq = pair.find('=');
      std::string key = queryUnescape(pair.substr(0, eq));
      std::string value = eq == std::string_view::npos ? "" : queryUnescape(pair.substr(eq + 1));
      if (!key.empty()) {
        info.query.emplace(std::move(key), std::move(value));  // the first value wins
      }
      query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    }
  }
  for (char c : method) {
    info.verb += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }

  // Routed by the decoded path, as Go's r.URL.Path is.
  const std::string decoded = pathUnescape(info.path);
  std::vector<std::string_view> parts = splitPath(decoded);
  size_t at = 0;
  if (parts.size() >= 2 && parts[0] == "api") {
    info.version = parts[1];
    at = 2;
  } else if (parts.size() >= 3 && parts[0] == "apis") {
    info.group = parts[1];
    info.version = parts[2];
    at = 3;
  } else {
    return info;
  }
  if (at == parts.size()) {
    return info;  // discovery
  }
  info.isResourceRequest = true;
  if (parts[at] == "namespaces" && parts.size() > at + 2) {
    info.ns = parts[at + 1];
    at += 2;
  }
  info.resource = parts[at];
  if (parts.size() > at + 1) {
    info.name = parts[at + 1];
  }
  if (parts.size() > at + 2) {
    info.subresource = parts[at + 2];
  }
  if (parts.size() > at + 3) {
    info.resource.clear();  // deeper paths are served by nothing
  }
  const std::string httpMethod = info.verb;
  if (httpMethod == "get") {
    if (info.name.empty()) {
      info.verb = queryFlag(info, "watch") ? "watch" : "list";
    } else if (queryFlag(info, "watch")) {
      info.verb = "watch";
    }
  } else if (httpMethod == "post") {
    info.verb = "create";
  } else if (httpMethod == "put") {
    info.verb = "update";
  } else if (httpMethod == "delete") {
    info.verb = info.name.empty() ? "deletecollection" : "delete";
  }
  return info;
}

std::string toJsonText(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

HttpResponse errorResponse(const ApiError& error) {
  return HttpResponse{error.status.code, toJsonText(error.toStatus())};
}

json expiredEvent(std::string_view requested, std::string_view oldest) {
  ApiError error = apiError(
      410, "Expired",
      "too old resource version: " + std::string(requested) + " (" + std::string(oldest) + ")");
  return WatchEvent{WatchEvent::Type::Error, error.toStatus()}.toJson();
}

HttpHandler::HttpHandler(Store& store, std::string serverAddress)
    : store_(store), server_address_(std::move(serverAddress)) {}

HttpResponse HttpHandler::serve(const RequestInfo& info, const HttpRequest& request) {
  try {
    return info.isResourceRequest ? serveResource(info, request) : serveNonResource(info);
  } catch (const std::exception& e) {
    // A body of an unexpected shape that slipped past a check: a 500, never a crash.
    return errorResponse(
        apiError(500, "InternalError", std::string("Internal error occurred: ") + e.what()));
  }
}

HttpResponse HttpHandler::serveNonResource(const RequestInfo& info) const {
  const std::vector<std::string_view> parts = splitPath(info.path);
  std::optional<json> body;
  if (parts.empty()) {
    body = json{{"paths",
                 {"/api", "/api/v1", "/apis", "/apis/coordination.k8s.io",
                  "/apis/coordination.k8s.io/v1", "/apis/events.k8s.io", "/apis/events.k8s.io/v1",
                  "/healthz", "/livez", "/openapi/v3", "/readyz", "/version"}}};
  } else if (parts[0] == "healthz" || parts[0] == "livez" || parts[0] == "readyz") {
    if (info.verb != "get") {
      return methodNotAllowed();
    }
    return HttpResponse{200, "ok", "text/plain; charset=utf-8"};
  } else if (parts.size() == 2 && parts[0] == "openapi" && parts[1] == "v3") {
    body = openApiV3Root();
  } else if (parts.size() > 2 && parts[0] == "openapi" && parts[1] == "v3") {
    constexpr std::string_view kPrefix = "/openapi/v3/";
    body = openApiV3Document(std::string_view(info.path).substr(kPrefix.size()));
  } else if (parts.size() == 1 && parts[0] == "version") {
    body = versionInfo();
  } else if (parts.size() == 1 && parts[0] == "api") {
    body = apiVersions(server_address_);
  } else if (parts.size() == 2 && parts[0] == "api") {
    body = apiResourceList("", parts[1]);
  } else if (parts.size() == 1 && parts[0] == "apis") {
    body = apiGroupList();
  } else if (parts.size() == 2 && parts[0] == "apis") {
    body = apiGroup(parts[1]);
  } else if (parts.size() == 3 && parts[0] == "apis") {
    body = apiResourceList(parts[1], parts[2]);
  }
  if (!body) {
    return notFound();
  }
  if (info.verb != "get") {
    return methodNotAllowed();
  }
  return jsonResponse(200, *body);
}

HttpResponse HttpHandler::serveResource(const RequestInfo& info, const HttpRequest& request) {
  if (info.version != "v1") {
    return notFound();
  }
  // POST /api/v1/namespaces/NS/bindings: the Binding names the pod.
  if (info.group.empty() && info.resource == "bindings" && !info.ns.empty() && info.name.empty()) {
    if (info.verb != "create") {
      return methodNotAllowed();
    }
    return bind(info, request.body, "");
  }
  std::optional<Resource> found = findResource(info.group, info.resource);
  if (!found || !servesSubresource(*found, info.subresource)) {
    return notFound();
  }
  const Resource resource = *found;
  const ResourceInfo& meta = resourceInfo(resource);
  // A namespaced resource has no named routes without a namespace, a cluster-scoped one none
  // under a namespace.
  if (!meta.namespaced && !info.ns.empty()) {
    return notFound();
  }
  if (meta.namespaced && info.ns.empty() && !info.name.empty()) {
    return notFound();
  }
  const std::string& verb = info.verb;

  if (info.name.empty()) {
    if (verb == "list") {
      return list(resource, info);
    }
    if (verb == "watch") {
      return watch(resource, info);
    }
    if (verb == "create" && (!meta.namespaced || !info.ns.empty())) {
      auto object = decodeBody(request.body, meta.kind);
      if (!object) {
        return errorResponse(object.error());
      }
      auto created = store_.create(resource, info.ns, std::move(*object));
      return created ? jsonResponse(201, *created) : errorResponse(created.error());
    }
    return methodNotAllowed();
  }

  if (info.subresource == "binding") {
    if (verb != "create") {
      return methodNotAllowed();
    }
    return bind(info, request.body, info.name);
  }
  const bool status = info.subresource == "status";
  if (verb == "get") {
    auto object = store_.get(resource, info.ns, info.name);
    return object ? jsonResponse(200, *object) : errorResponse(object.error());
  }
  if (verb == "watch" && !status) {
    return watch(resource, info);
  }
  if (verb == "update") {
    auto object = decodeBody(request.body, meta.kind);
    if (!object) {
      return errorResponse(object.error());
    }
    auto updated = status ? store_.updateStatus(resource, info.ns, info.name, std::move(*object))
                          : store_.update(resource, info.ns, info.name, std::move(*object));
    return updated ? jsonResponse(200, *updated) : errorResponse(updated.error());
  }
  if (verb == "patch") {
    std::optional<PatchType> type = api::patchTypeFromContentType(request.contentType);
    if (!type) {
      return genericStatus(415);  // go-restful rejects the Content-Type before the handler
    }
    if (api::jsonDepth(request.body) > api::kMaxJsonDepth) {
      return errorResponse(badRequest("error decoding patch: json: exceeded max depth"));
    }
    json patch;
    try {
      patch = json::parse(request.body);
    } catch (const json::exception& e) {
      return errorResponse(badRequest("error decoding patch: " + parseErrorText(e)));
    }
    auto patched = store_.patch(resource, info.ns, info.name, *type, patch, status);
    return patched ? jsonResponse(200, *patched) : errorResponse(patched.error());
  }
  if (verb == "delete" && !status) {
    return remove(resource, info, request.body);
  }
  return methodNotAllowed();
}

HttpResponse HttpHandler::list(Resource resource, const RequestInfo& info) {
  auto limit = queryInt(info, "limit");
  if (!limit) {
    return errorResponse(limit.error());
  }
  ListOptions options;
  options.labelSelector = queryValue(info, "labelSelector");
  options.fieldSelector = queryValue(info, "fieldSelector");
  options.limit = limit->value_or(0);
  options.continueToken = queryValue(info, "continue");
  options.resourceVersion = queryValue(info, "resourceVersion");
  const std::string match = queryValue(info, "resourceVersionMatch");
  if (!match.empty()) {
    std::vector<api::StatusCause> causes;
    if (options.resourceVersion.empty()) {
      causes.push_back(
          forbiddenMatch("resourceVersionMatch is forbidden unless resourceVersion is provided"));
    }
    if (!options.continueToken.empty()) {
      causes.push_back(
          forbiddenMatch("resourceVersionMatch is forbidden when continue is provided"));
    }
    if (match != "Exact" && match != "NotOlderThan") {
      causes.push_back({.reason = "FieldValueNotSupported",
                        .message = "Unsupported value: \"" + match +
                                   "\": supported values: \"Exact\", \"NotOlderThan\", \"\"",
                        .field = "resourceVersionMatch"});
    }
    if (match == "Exact" && options.resourceVersion == "0") {
      causes.push_back(
          forbiddenMatch("resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""));
    }
    if (!causes.empty()) {
      return invalidListOptions(causes);
    }
  }
  auto listed = store_.list(resource, info.ns, options,
                            match == "Exact" ? VersionMatch::Exact : VersionMatch::NotOlderThan);
  return listed ? jsonResponse(200, listed->toJson(resource)) : errorResponse(listed.error());
}

HttpResponse HttpHandler::watch(Resource resource, const RequestInfo& info) {
  if (info.query.count("sendInitialEvents") > 0) {
    // The WatchList feature is not served: validation rejects the parameter as kube-apiserver
    // does with the feature gate off; client-go then falls back to list and watch.
    ApiError error =
        apiError(422, "Invalid",
                 "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: "
                 "sendInitialEvents is forbidden for watch unless the WatchList feature gate is "
                 "enabled");
    error.status.details = {
        .group = "meta.k8s.io",
        .kind = "ListOptions",
        .causes = {{.reason = "FieldValueForbidden",
                    .message = "Forbidden: sendInitialEvents is forbidden for watch unless the "
                               "WatchList feature gate is enabled",
                    .field = "sendInitialEvents"}}};
    return errorResponse(error);
  }
  if (!queryValue(info, "resourceVersionMatch").empty()) {
    return invalidListOptions({forbiddenMatch("resourceVersionMatch is forbidden for watch")});
  }
  auto timeout = queryInt(info, "timeoutSeconds");
  if (!timeout) {
    return errorResponse(timeout.error());
  }
  WatchOptions options;
  options.resourceVersion = queryValue(info, "resourceVersion");
  options.labelSelector = queryValue(info, "labelSelector");
  options.fieldSelector = queryValue(info, "fieldSelector");
  options.allowWatchBookmarks = queryFlag(info, "allowWatchBookmarks");
  if (!info.name.empty()) {
    // A watch on a named path watches that one object.
    std::string byName = "metadata.name=" + info.name;
    options.fieldSelector =
        options.fieldSelector.empty() ? byName : options.fieldSelector + "," + byName;
  }
  WatchStream stream;
  if (timeout->has_value() && **timeout > 0) {
    stream.timeout = std::chrono::seconds(**timeout);
  }
  auto opened = store_.watch(resource, info.ns, options);
  if (!opened) {
    // Past the request's checks the watch cache fails with an ERROR event (newErrWatcher): a
    // compacted resourceVersion, or one it has not reached.
    if (const int code = opened.error().status.code; code != 410 && code != 504) {
      return errorResponse(opened.error());
    }
    stream.error = WatchEvent{WatchEvent::Type::Error, opened.error().toStatus()}.toJson();
  } else {
    stream.watch = std::move(*opened);
  }
  HttpResponse response;
  response.watch = std::move(stream);
  return response;
}

HttpResponse HttpHandler::remove(Resource resource, const RequestInfo& info,
                                 std::string_view body) {
  api::DeleteOptions options;
  if (!body.empty()) {
    auto decoded = decodeBody(body, "DeleteOptions");
    if (!decoded) {
      return errorResponse(decoded.error());
    }
    options = api::decodeDeleteOptions(*decoded);
  }
  if (!options.gracePeriodSeconds) {
    // kubectl and client-go may send it as a query parameter instead.
    if (auto grace = info.query.find("gracePeriodSeconds"); grace != info.query.end()) {
      int64_t v = 0;
      const std::string& text = grace->second;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec == std::errc() && end == text.data() + text.size()) options.gracePeriodSeconds = v;
    }
  }
  auto removed = store_.remove(resource, info.ns, info.name, options.preconditions,
                               options.gracePeriodSeconds);
  if (!removed) {
    return errorResponse(removed.error());
  }
  if (resource == Resource::Pods || resource == Resource::Services ||
      resource == Resource::Namespaces || resource == Resource::PersistentVolumeClaims ||
      resource == Resource::PersistentVolumes || resource == Resource::StorageClasses ||
      resource == Resource::CSINodes || resource == Resource::CSIDrivers) {
    // Their registries return the deleted object (ReturnDeletedObject; a namespace's REST).
    return jsonResponse(200, *removed);
  }
  // The generic registry's finalizeDelete: a Success Status naming what was deleted.
  const ResourceInfo& meta = resourceInfo(resource);
  api::Status status{
      .status = "Success",
      .details = {
          .name = info.name, .group = std::string(meta.group), .kind = std::string(meta.name)}};
  if (removed->contains("metadata") && (*removed)["metadata"].contains("uid")) {
    status.details.uid = (*removed)["metadata"]["uid"];
  }
  return jsonResponse(200, api::encodeStatus(status));
}

HttpResponse HttpHandler::bind(const RequestInfo& info, std::string_view body,
                               std::string_view name) {
  auto binding = decodeBody(body, "Binding");
  if (!binding) {
    return errorResponse(binding.error());
  }
  std::string podName(name);
  if (podName.empty() && binding->is_object() && binding->contains("metadata") &&
      (*binding)["metadata"].is_object()) {
    podName = (*binding)["metadata"].value("name", "");
  }
  auto bound = store_.bind(info.ns, podName, *binding);
  return bound ? jsonResponse(201, successStatus(201)) : errorResponse(bound.error());
}

}  // namespace berth::apiserver
