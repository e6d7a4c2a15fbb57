#pragma once
// The API machinery vocabulary that the client and the embedded API server share
// (apimachinery/pkg/apis/meta/v1, pkg/watch, pkg/types): watch event types, patch types and their
// media types, and the preconditions of a delete or a binding. One definition, so that what the
// client sends and what the server reads cannot drift apart.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace berth::api {

// watch.EventType.
enum class WatchEventType { Added, Modified, Deleted, Bookmark, Error };

// "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR".
std::string_view watchEventTypeName(WatchEventType type);
// The type named on the wire; nullopt for any other text.
std::optional<WatchEventType> parseWatchEventType(std::string_view name);

// types.PatchType: the three patch formats kube-apiserver accepts for built-in resources.
enum class PatchType {
  Json,            // application/json-patch+json: RFC 6902 operations
  Merge,           // application/merge-patch+json: RFC 7386
  StrategicMerge,  // application/strategic-merge-patch+json: lists merged by their patchMergeKey
};

// The Content-Type a patch of `type` is sent with.
std::string_view contentType(PatchType type);
// The PatchType of a PATCH request's Content-Type (parameters such as charset are ignored, the
// type is case-insensitive, as mime.ParseMediaType reads it); nullopt for any other media type.
std::optional<PatchType> patchTypeFromContentType(std::string_view contentType);

// metav1.Preconditions of a DELETE (and a Binding's uid/resourceVersion): empty fields are neither
// sent nor checked.
struct Preconditions {
  std::string uid{};
  std::string resourceVersion{};
};

// metav1.DeleteOptions: the body of a DELETE; berth sends and reads only its preconditions.
struct DeleteOptions {
  Preconditions preconditions{};
};

// {"kind":"DeleteOptions","apiVersion":"v1","preconditions":{...}}, with only the set fields.
nlohmann::json encodeDeleteOptions(const DeleteOptions& options);
// Reads a DELETE body as kube-apiserver's handler does here: preconditions that are not strings
// are ignored, as is everything else.
DeleteOptions decodeDeleteOptions(const nlohmann::json& body);

}  // namespace berth::api
