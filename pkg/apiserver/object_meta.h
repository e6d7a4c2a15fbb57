#pragma once
// The metadata of a stored object's wire form, as the store's files read and write it: versions,
// labels, the 404 of a missing object and the StorageError of a failed precondition.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "pkg/api/meta.h"
#include "pkg/api/types.h"
#include "pkg/apiserver/api_error.h"
#include "pkg/apiserver/resource_info.h"

namespace berth::apiserver {

// A resourceVersion as a number; nullopt unless all decimal digits.
std::optional<uint64_t> parseVersion(std::string_view text);
// metadata.labels (string values only); empty when absent.
api::StringMap labelsOf(const nlohmann::json& object);
// object["metadata"], made an object when it is not one.
nlohmann::json& metadataOf(nlohmann::json& object);
void setVersion(nlohmann::json& object, uint64_t rv);

ApiError notFound(const ResourceInfo& info, std::string_view name);
// The watch cache's 504 for a read from a resourceVersion it has not reached
// (storage.NewTooLargeResourceVersionError): retry after 1 s.
ApiError tooLargeResourceVersion(uint64_t requested, uint64_t current);
// The StorageError a failed storage.Preconditions check turns into (ErrCodeInvalidObj = 4).
std::optional<ApiError> checkPreconditions(Resource resource, const api::Preconditions& pre,
                                           const nlohmann::json& object, std::string_view ns,
                                           std::string_view name);

}  // namespace berth::apiserver
