#pragma once
// ApiFailure: why a call to the API server did not succeed. Either the server answered with an
// HTTP error, usually a metav1.Status body decoded here into `status` (as client-go's
// apierrors.StatusError), or there was no usable answer at all: the connection failed, the call was
// cancelled, or the response could not be read. Callers branch on `kind` and `status.code` the way
// client-go code branches on apierrors.IsNotFound / IsConflict / IsGone.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/api/status.h"
#include "pkg/util/result.h"

namespace berth::client {

struct ApiFailure {
  enum class Kind {
    Status,       // the server answered with an HTTP error; `status.code` is its status
    Connection,   // no response: refused, reset, timed out, TLS handshake failed
    Cancelled,    // the caller stopped the call (shutdown)
    BadResponse,  // a 2xx answer whose body (or watch line) is not what the API sends
  };
  Kind kind = Kind::Status;
  // The Status the server answered with: code is the HTTP status (0 unless kind is Status), reason
  // may be empty. For the other kinds only the message is set, saying what went wrong.
  api::Status status{};
  // A Retry-After header (or details.retryAfterSeconds) in seconds, as 429 and some 5xx carry.
  std::optional<std::chrono::seconds> retryAfter;
  // A BadResponse because the body was over the client's size limit: a smaller page may fit.
  bool overLimit = false;

  bool isStatus(int httpCode) const { return kind == Kind::Status && status.code == httpCode; }
  bool isNotFound() const { return isStatus(404); }
  bool isConflict() const { return isStatus(409); }
  // 410 Gone / reason Expired: the resourceVersion is too old; list again.
  bool isGone() const {
    return isStatus(410) || (kind == Kind::Status && status.reason == "Expired");
  }
  bool isResponseTooLarge() const { return kind == Kind::BadResponse && overLimit; }
  // Worth retrying for an idempotent call: no answer, 429 Too Many Requests, or a 5xx.
  bool isTransient() const;

  // "pods \"web\" not found (404 NotFound)", "connection: Connection refused".
  std::string toString() const;
  // As a util::Error for layers that do not care about HTTP (Unavailable for transient ones).
  util::Error toError() const;
};

template <typename T>
using ApiResult = util::Result<T, ApiFailure>;

// Decodes an HTTP error answer. A metav1.Status body gives reason, message and details; any other
// body (an HTML page from a proxy, plain text, nothing) gives the reason kube-apiserver would use
// for the code (client-go's NewGenericServerResponse) and the body, trimmed, as the message.
// `verb` is the request's method (a 409 to a POST is AlreadyExists, else Conflict); `retryAfter` is
// the Retry-After header's value, empty when absent.
ApiFailure decodeFailure(int code, std::string_view verb, std::string_view body,
                         std::string_view retryAfter = {});

ApiFailure connectionFailure(std::string message);
ApiFailure cancelledFailure();
ApiFailure badResponse(std::string message);
// A BadResponse for a body over the client's limit (isResponseTooLarge()).
ApiFailure responseTooLarge(std::string message);

}  // namespace berth::client
