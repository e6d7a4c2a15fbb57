#pragma once
// ApiError: a failed call as the metav1.Status kube-apiserver answers with, and the helpers that
// build the errors apimachinery/pkg/api/errors builds.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "pkg/api/status.h"
#include "pkg/apiserver/resource_info.h"
#include "pkg/util/result.h"

namespace berth::apiserver {

// A failure, as the metav1.Status kube-apiserver answers with (apimachinery/pkg/api/errors).
struct ApiError {
  // status.code is the HTTP status; continueToken is the token an expired list continuation may
  // go on with (inconsistently).
  api::Status status{.status = "Failure", .code = 500};

  // {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",...}
  nlohmann::json toStatus() const { return api::encodeStatus(status); }
};

// The error with `code`, `reason` and `message`, no details.
inline ApiError apiError(int code, std::string reason, std::string message) {
  return ApiError{{.status = "Failure",
                   .message = std::move(message),
                   .reason = std::move(reason),
                   .code = code}};
}

// 400 BadRequest with `message`, as kube-apiserver answers a malformed request.
inline ApiError badRequest(std::string message) {
  return apiError(400, "BadRequest", std::move(message));
}

// The Status of a successful call that has no object to return (pods/binding answers 201 with it).
nlohmann::json successStatus(int code);

// A value or the ApiError that explains why there is none.
template <typename T>
using ApiResult = util::Result<T, ApiError>;

// The errors about one object (errors.NewNotFound, NewAlreadyExists, NewConflict): the same
// Status shape, details naming the object. `resource` is the resource or subresource
// ("pods/binding"); `cause` is the Conflict's reason.
enum class ObjectError { NotFound, AlreadyExists, Conflict };

ApiError objectError(ObjectError kind, std::string_view group, std::string_view resource,
                     std::string_view name, std::string_view cause = "");

// The 400 a create or update body that does not decode gets (transformDecodeError).
ApiError decodeError(const ResourceInfo& info, const util::Error& error);
// The 422 a patch whose result does not decode gets: errors.NewInvalid with an empty kind and
// name and one cause on the field "patch", whose value is the patched object.
ApiError invalidPatch(std::string_view value, std::string_view detail);

}  // namespace berth::apiserver
