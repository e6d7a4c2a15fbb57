#include "pkg/util/result.h"

namespace berth::util {

std::string_view errorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidArgument:
      return "InvalidArgument";
    case ErrorCode::NotFound:
      return "NotFound";
    case ErrorCode::AlreadyExists:
      return "AlreadyExists";
    case ErrorCode::FailedPrecondition:
      return "FailedPrecondition";
    case ErrorCode::Aborted:
      return "Aborted";
    case ErrorCode::Unavailable:
      return "Unavailable";
    case ErrorCode::Unimplemented:
      return "Unimplemented";
    case ErrorCode::Internal:
      return "Internal";
  }
  return "Unknown";
}

Error Error::wrap(std::string_view prefix) const {
  std::string m(prefix);
  m += ": ";
  m += message;
  return Error{code, std::move(m)};
}

}  // namespace berth::util
