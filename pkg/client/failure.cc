#include "pkg/client/failure.h"

#include <charconv>
#include <string>
#include <utility>

#include "pkg/api/json.h"
#include "pkg/api/status.h"

namespace berth::client {
namespace {

using nlohmann::json;

std::string_view trim(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return {};
  }
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

// Retry-After in delta-seconds; the HTTP-date form is not used by kube-apiserver.
std::optional<std::chrono::seconds> parseSeconds(std::string_view text) {
  text = trim(text);
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0) {
    return std::nullopt;
  }
  return std::chrono::seconds(value);
}

// The reason and message client-go's NewGenericServerResponse gives a code whose body is not a
// Status.
void genericResponse(api::Status& out, std::string_view verb, std::string_view body) {
  const std::string server(trim(body));
  out.message = "the server responded with the status code " + std::to_string(out.code) +
                " but did not return more information";
  switch (out.code) {
    case 409:
      out.reason = verb == "POST" ? "AlreadyExists" : "Conflict";
      out.message = "the server reported a conflict";
      break;
    case 404:
      out.reason = "NotFound";
      out.message = "the server could not find the requested resource";
      break;
    case 400:
      out.reason = "BadRequest";
      out.message = "the server rejected our request for an unknown reason";
      break;
    case 401:
      out.reason = "Unauthorized";
      out.message = "the server has asked for the client to provide credentials";
      break;
    case 403:
      out.reason = "Forbidden";
      out.message = server;
      break;
    case 405:
      out.reason = "MethodNotAllowed";
      out.message = "the server does not allow this method on the requested resource";
      break;
    case 406:
      out.reason = "NotAcceptable";
      out.message = server;
      break;
    case 415:
      out.reason = "UnsupportedMediaType";
      out.message = server;
      break;
    case 422:
      out.reason = "Invalid";
      out.message = "the server rejected our request due to an error in our request";
      break;
    case 504:
      out.reason = "Timeout";
      out.message =
          "the server was unable to return a response in the time allotted, but may still be "
          "processing the request";
      break;
    case 429:
      out.reason = "TooManyRequests";
      out.message = "the server has received too many requests and has asked us to try again later";
      break;
    default:
      if (out.code >= 500) {
        out.reason = "InternalError";
        // A proxy's error page need not be UTF-8; a strict dump() would throw on it.
        out.message = "an error on the server (" +
                      json(server).dump(-1, ' ', false, json::error_handler_t::replace) +
                      ") has prevented the request from succeeding";
      }
  }
}

}  // namespace

bool ApiFailure::isTransient() const {
  return kind == Kind::Connection ||
         (kind == Kind::Status && (status.code == 429 || status.code >= 500));
}

std::string ApiFailure::toString() const {
  switch (kind) {
    case Kind::Status: {
      std::string out = status.message.empty()
                            ? "the server answered " + std::to_string(status.code)
                            : status.message;
      out += " (" + std::to_string(status.code);
      if (!status.reason.empty()) {
        out += " " + status.reason;
      }
      return out + ")";
    }
    case Kind::Connection:
      return "connection: " + status.message;
    case Kind::Cancelled:
      return "cancelled";
    case Kind::BadResponse:
      return "malformed response: " + status.message;
  }
  return status.message;
}

util::Error ApiFailure::toError() const {
  using util::ErrorCode;
  ErrorCode code = ErrorCode::Internal;
  if (isTransient()) {
    code = ErrorCode::Unavailable;
  } else if (kind == Kind::Cancelled) {
    code = ErrorCode::Aborted;
  } else if (kind == Kind::Status) {
    switch (status.code) {
      case 400:
      case 422:
        code = ErrorCode::InvalidArgument;
        break;
      case 404:
        code = ErrorCode::NotFound;
        break;
      case 409:
        code = status.reason == "AlreadyExists" ? ErrorCode::AlreadyExists : ErrorCode::Aborted;
        break;
      case 401:
      case 403:
      case 410:
        code = ErrorCode::FailedPrecondition;
        break;
      default:
        break;
    }
  }
  return util::Error{code, toString()};
}

ApiFailure decodeFailure(int code, std::string_view verb, std::string_view body,
                         std::string_view retryAfter) {
  ApiFailure f;
  f.kind = ApiFailure::Kind::Status;
  f.retryAfter = parseSeconds(retryAfter);
  auto doc = api::parseJson(body);
  const json parsed = doc ? std::move(*doc) : json(json::value_t::discarded);
  std::optional<api::Status> status = api::decodeStatus(parsed);
  if (!status) {
    f.status.code = code;
    genericResponse(f.status, verb, body);
    return f;
  }
  f.status = std::move(*status);
  // As client-go, the Status's own code is the error's code (when it names an error at all).
  if (f.status.code < 400) {
    f.status.code = code;
  }
  if (!f.retryAfter && f.status.details.retryAfterSeconds > 0) {
    f.retryAfter = std::chrono::seconds(f.status.details.retryAfterSeconds);
  }
  if (f.status.message.empty()) {
    api::Status generic{.code = f.status.code};
    genericResponse(generic, verb, "");
    f.status.message = !generic.message.empty() ? generic.message
                                                : "the server responded with the status code " +
                                                      std::to_string(f.status.code) +
                                                      " but did not return more information";
  }
  return f;
}

ApiFailure connectionFailure(std::string message) {
  ApiFailure f;
  f.kind = ApiFailure::Kind::Connection;
  f.status.message = std::move(message);
  return f;
}

ApiFailure cancelledFailure() {
  ApiFailure f;
  f.kind = ApiFailure::Kind::Cancelled;
  f.status.message = "cancelled";
  return f;
}

ApiFailure badResponse(std::string message) {
  ApiFailure f;
  f.kind = ApiFailure::Kind::BadResponse;
  f.status.message = std::move(message);
  return f;
}

ApiFailure responseTooLarge(std::string message) {
  ApiFailure f = badResponse(std::move(message));
  f.overLimit = true;
  return f;
}

}  // namespace berth::client
