#include "pkg/apiserver/api_error.h"

#include "pkg/api/status.h"
#include "pkg/util/quote.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

// Object names in these messages escape only '"' and '\\'; other bytes reach the JSON writer,
// which turns invalid UTF-8 into U+FFFD (HttpServerTest.WritesBytesThatAreNotUtf8AsReplacement-
// Characters pins this). Go's %q would print them as \x escapes instead.
std::string quoteName(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

ApiError objectError(ObjectError kind, std::string_view group, std::string_view resource,
                     std::string_view name, std::string_view cause) {
  std::string qualified(resource);
  if (!group.empty()) {
    qualified += ".";
    qualified += group;
  }
  const std::string object = qualified + " " + quoteName(name);
  ApiError error;
  api::Status& status = error.status;
  status.details = {
      .name = std::string(name), .group = std::string(group), .kind = std::string(resource)};
  switch (kind) {
    case ObjectError::NotFound:
      status.code = 404;
      status.reason = "NotFound";
      status.message = object + " not found";
      break;
    case ObjectError::AlreadyExists:
      status.code = 409;
      status.reason = "AlreadyExists";
      status.message = object + " already exists";
      break;
    case ObjectError::Conflict:
      status.code = 409;
      status.reason = "Conflict";
      status.message = "Operation cannot be fulfilled on " + object + ": " + std::string(cause);
      break;
  }
  return error;
}

json successStatus(int code) { return api::encodeStatus({.status = "Success", .code = code}); }

ApiError decodeError(const ResourceInfo& info, const util::Error& error) {
  return badRequest(std::string(info.kind) + " in version " + util::quoteGo(info.version) +
                    " cannot be handled as a " + std::string(info.kind) + ": " + error.message);
}

ApiError invalidPatch(std::string_view value, std::string_view detail) {
  const std::string cause = "Invalid value: " + util::quoteGo(value) + ": " + std::string(detail);
  ApiError error = apiError(422, "Invalid", " \"\" is invalid: patch: " + cause);
  error.status.details.causes = {
      {.reason = "FieldValueInvalid", .message = cause, .field = "patch"}};
  return error;
}

}  // namespace berth::apiserver
