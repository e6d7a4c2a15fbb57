#pragma once
// The parts of kube-apiserver's validation (pkg/apis/core/validation, apimachinery's
// ValidateObjectMeta) that keep the embedded server's objects addressable and its pods bound only
// by a Binding: names and namespaces, and what a pod update may change.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/apiserver/api_error.h"
#include "pkg/apiserver/resource_info.h"

namespace berth::apiserver {

// apimachinery's IsDNS1123Subdomain, IsDNS1123Label and IsDNS1035Label: why `value` is not one
// (upstream's messages), empty when it is.
std::vector<std::string> dns1123SubdomainErrors(std::string_view value);
std::vector<std::string> dns1123LabelErrors(std::string_view value);
std::vector<std::string> dns1035LabelErrors(std::string_view value);

// ValidateObjectMeta's checks of metadata.name, generateName and namespace with the kind's name
// rule (DNS-1123 label for namespaces, DNS-1035 label for services, DNS-1123 subdomain for the
// others); the 422 Invalid naming every field at fault, nullopt when valid.
std::optional<ApiError> validateObjectMeta(Resource resource, const nlohmann::json& object);

// ValidatePodUpdate: a main-resource update of a pod may change its metadata, its containers'
// and init containers' images, activeDeadlineSeconds, add tolerations, set a negative
// terminationGracePeriodSeconds to 1 and remove scheduling gates; anything else in spec
// (spec.nodeName included: only a Binding sets it) is the 422 "pod updates may not change fields
// other than ...". `next` has the update's defaults applied.
std::optional<ApiError> validatePodUpdate(const nlohmann::json& old, const nlohmann::json& next);

}  // namespace berth::apiserver
