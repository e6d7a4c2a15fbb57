#pragma once
// The three PATCH mechanisms of kube-apiserver's patch handler, as pure functions of the current
// object and the patch (no locking, no decoding of the result; Store::patch does both):
//  - JSON patch (RFC 6902): a list of operations; one that cannot be applied (a failed test, a
//    missing path) is 422 Invalid with the generic "the server rejected our request..." text.
//  - JSON merge patch (RFC 7386): objects merge recursively, null deletes, anything else replaces.
//  - Strategic merge patch: a merge patch that knows the schema: lists tagged patchStrategy=merge
//    in k8s.io/api (status.conditions by type, spec.containers by name, container ports by
//    containerPort, finalizers as a set...) merge element by element; every other list is
//    replaced. The directives $patch (merge|replace|delete), $retainKeys,
//    $deleteFromPrimitiveList/<field> and $setElementOrder/<field> are honoured, and merged lists
//    are ordered as apimachinery's strategicpatch orders them.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "pkg/apiserver/store.h"

namespace berth::apiserver {

// `original` with `patch` applied. Errors carry the Status kube-apiserver answers for the same
// patch: 400 for a patch of the wrong shape, 422 for one that does not apply, and 500 (reason
// unknown) for strategic merge patches apimachinery rejects without a status.
ApiResult<nlohmann::json> applyPatch(Resource resource, PatchType type,
                                     const nlohmann::json& original, const nlohmann::json& patch);

// Go's fmt "%v" of a decoded JSON value (map[k:v], [a b], <nil>): how apimachinery prints
// objects in strategic merge patch errors.
std::string goFormat(const nlohmann::json& value);
// encoding/json's word for the kind of a value ("object", "array", "string", "number", "bool",
// "null"), as in "json: cannot unmarshal array into Go value of type v1.Pod".
std::string_view goJsonKind(const nlohmann::json& value);
// Compact JSON; invalid UTF-8 (which nlohmann would throw on) becomes U+FFFD.
std::string dumpJson(const nlohmann::json& value);

}  // namespace berth::apiserver
