#pragma once
// The documents kube-apiserver serves so that clients can find what it serves: /version
// (version.Info), /api (APIVersions), /api/v1 and /apis/GROUP/v1 (APIResourceList), /apis
// (APIGroupList) and /apis/GROUP (APIGroup). kubectl and client-go read them to map "po" or
// "pods" to a path and to learn which verbs a resource allows; these list exactly what the
// embedded server routes, so discovery never promises a verb that would answer 405.
//
// Aggregated discovery (Accept: ...;as=APIGroupDiscoveryList) is not served: clients that ask for
// it receive the legacy documents, with Content-Type application/json, and fall back to them.

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

namespace berth::apiserver {

// The Kubernetes version the embedded server speaks (its resources' wire formats).
inline constexpr std::string_view kKubernetesVersion = "v1.35.0-berth";

// GET /version.
nlohmann::json versionInfo();
// GET /api; `serverAddress` is host:port as clients reach it.
nlohmann::json apiVersions(std::string_view serverAddress);
// GET /apis.
nlohmann::json apiGroupList();
// GET /apis/GROUP; nullopt for a group that is not served.
std::optional<nlohmann::json> apiGroup(std::string_view group);
// GET /api/v1 (group "") and /apis/GROUP/VERSION; nullopt when not served.
std::optional<nlohmann::json> apiResourceList(std::string_view group, std::string_view version);

// GET /openapi/v3: the group-versions with a document each ("api/v1", "apis/GROUP/v1").
nlohmann::json openApiV3Root();
// GET /openapi/v3/api/v1 and /openapi/v3/apis/GROUP/v1; nullopt when not served. The documents
// describe the PATCH endpoints only, each with its x-kubernetes-group-version-kind and the
// fieldValidation parameter: that is what kubectl reads to decide that the server validates
// fields itself, so that `kubectl create -f` needs no client-side schema. No object schemas.
std::optional<nlohmann::json> openApiV3Document(std::string_view groupVersionPath);

}  // namespace berth::apiserver
