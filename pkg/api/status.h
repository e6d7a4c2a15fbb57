#pragma once
// metav1.Status: how the API answers a call that returns no object, above all a failed one. The
// embedded API server writes it and the client reads it, from this one type.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace berth::api {

// metav1.StatusCause: one problem of an Invalid object; empty fields are omitted.
struct StatusCause {
  std::string reason{};  // "FieldValueInvalid"...
  std::string message{};
  std::string field{};
};

// metav1.StatusDetails: the object the Status is about. `kind` is the resource ("pods"), or the
// kind for Invalid ("Pod").
struct StatusDetails {
  std::string name{};
  std::string group{};
  std::string kind{};
  std::string uid{};
  std::vector<StatusCause> causes{};
  int64_t retryAfterSeconds = 0;  // 0: absent
};

struct Status {
  std::string status{};  // "Success" or "Failure"
  std::string message{};
  std::string reason{};  // metav1.StatusReason: "NotFound", "Conflict", "Expired"...
  int code = 0;          // the HTTP status; 0: absent
  StatusDetails details{};
  std::string continueToken{};  // metadata.continue
};

// {"kind":"Status","apiVersion":"v1","metadata":{},"status":..} as kube-apiserver writes it: a
// Failure always carries its message; code, reason, details and each detail only when set.
nlohmann::json encodeStatus(const Status& status);
// The Status in `body`; nullopt when it is not an object of kind Status. Fields of the wrong type
// read as absent, as client-go tolerates them.
std::optional<Status> decodeStatus(const nlohmann::json& body);

}  // namespace berth::api
