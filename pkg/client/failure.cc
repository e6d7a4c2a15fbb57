#include "pkg/client/failure.h"

#include <charconv>
#include <string>
#include <utility>

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
void genericResponse(ApiFailure& f, std::string_view verb, std::string_view body) {
  const std::string server(trim(body));
  f.message = "the server responded with the status code " + std::to_string(f.code) +
              " but did not return more information";
  switch (f.code) {
    case 409:
      f.reason = verb == "POST" ? "AlreadyExists" : "Conflict";
      f.message = "the server reported a conflict";
      break;
    case 404:
      f.reason = "NotFound";
      f.message = "the server could not find the requested resource";
      break;
    case 400:
      f.reason = "BadRequest";
      f.message = "the server rejected our request for an unknown reason";
      break;
    case 401:
      f.reason = "Unauthorized";
      f.message = "the server has asked for the client to provide credentials";
      break;
    case 403:
      f.reason = "Forbidden";
      f.message = server;
      break;
    case 405:
      f.reason = "MethodNotAllowed";
      f.message = "the server does not allow this method on the requested resource";
      break;
    case 406:
      f.reason = "NotAcceptable";
      f.message = server;
      break;
    case 415:
      f.reason = "UnsupportedMediaType";
      f.message = server;
      break;
    case 422:
      f.reason = "Invalid";
      f.message = "the server rejected our request due to an error in our request";
      break;
    case 504:
      f.reason = "Timeout";
      f.message =
          "the server was unable to return a response in the time allotted, but may still be "
          "processing the request";
      break;
    case 429:
      f.reason = "TooManyRequests";
      f.message = "the server has received too many requests and has asked us to try again later";
      break;
    default:
      if (f.code >= 500) {
        f.reason = "InternalError";
        // A proxy's error page need not be UTF-8; a strict dump() would throw on it.
        f.message = "an error on the server (" +
                    json(server).dump(-1, ' ', false, json::error_handler_t::replace) +
                    ") has prevented the request from succeeding";
      }
  }
}

}  // namespace

bool ApiFailure::isTransient() const {
  return kind == Kind::Connection || (kind == Kind::Status && (code == 429 || code >= 500));
}

std::string ApiFailure::toString() const {
  switch (kind) {
    case Kind::Status: {
      std::string out = message.empty() ? "the server answered " + std::to_string(code) : message;
      out += " (" + std::to_string(code);
      if (!reason.empty()) {
        out += " " + reason;
      }
      return out + ")";
    }
    case Kind::Connection:
      return "connection: " + message;
    case Kind::Cancelled:
      return "cancelled";
    case Kind::BadResponse:
      return "malformed response: " + message;
  }
  return message;
}

util::Error ApiFailure::toError() const {
  using util::ErrorCode;
  ErrorCode code = ErrorCode::Internal;
  if (isTransient()) {
    code = ErrorCode::Unavailable;
  } else if (kind == Kind::Cancelled) {
    code = ErrorCode::Aborted;
  } else if (kind == Kind::Status) {
    switch (this->code) {
      case 400:
      case 422:
        code = ErrorCode::InvalidArgument;
        break;
      case 404:
        code = ErrorCode::NotFound;
        break;
      case 409:
        code = reason == "AlreadyExists" ? ErrorCode::AlreadyExists : ErrorCode::Aborted;
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
  f.code = code;
  f.retryAfter = parseSeconds(retryAfter);
  const json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  const std::optional<api::Status> status = api::decodeStatus(parsed);
  if (!status) {
    genericResponse(f, verb, body);
    return f;
  }
  // As client-go, the Status's own code is the error's code (when it names an error at all).
  if (status->code >= 400) {
    f.code = status->code;
  }
  f.reason = status->reason;
  f.message = status->message;
  if (const auto it = parsed.find("details"); it != parsed.end() && it->is_object()) {
    f.details = *it;
  }
  if (!f.retryAfter && status->details.retryAfterSeconds > 0) {
    f.retryAfter = std::chrono::seconds(status->details.retryAfterSeconds);
  }
  if (f.message.empty()) {
    ApiFailure generic;
    generic.code = f.code;
    genericResponse(generic, verb, "");
    f.message = !generic.message.empty()
                    ? generic.message
                    : "the server responded with the status code " + std::to_string(f.code) +
                          " but did not return more information";
  }
  return f;
}

ApiFailure connectionFailure(std::string message) {
  ApiFailure f;
  f.kind = ApiFailure::Kind::Connection;
  f.message = std::move(message);
  return f;
}

ApiFailure cancelledFailure() {
  ApiFailure f;
  f.kind = ApiFailure::Kind::Cancelled;
  f.message = "cancelled";
  return f;
}

ApiFailure badResponse(std::string message) {
  ApiFailure f;
  f.kind = ApiFailure::Kind::BadResponse;
  f.message = std::move(message);
  return f;
}

}  // namespace berth::client
