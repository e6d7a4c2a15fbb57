// Store::list: a consistent read at one resourceVersion, paged with continue tokens.

#include <map>

#include "pkg/apiserver/continue_token.h"
#include "pkg/apiserver/object_meta.h"
#include "pkg/apiserver/store.h"
#include "pkg/util/quote.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

}  // namespace

json ListResult::toJson(Resource resource) const {
  const ResourceInfo& info = resourceInfo(resource);
  json array = json::array();
  for (const json& item : items) {
    // Items of a typed list carry no apiVersion/kind on the wire.
    json copy = item;
    copy.erase("apiVersion");
    copy.erase("kind");
    array.push_back(std::move(copy));
  }
  json metadata = {{"resourceVersion", resourceVersion}};
  if (!continueToken.empty()) {
    metadata["continue"] = continueToken;
  }
  if (remainingItemCount) {
    metadata["remainingItemCount"] = *remainingItemCount;
  }
  return {{"kind", info.listKind},
          {"apiVersion", info.apiVersion()},
          {"metadata", std::move(metadata)},
          {"items", std::move(array)}};
}

ApiResult<ListResult> Store::list(Resource resource, std::string_view ns,
                                  const ListOptions& options, VersionMatch match) const {
  auto selector = labels::Selector::parse(options.labelSelector);
  if (!selector) {
    return badRequest(selector.error().message);
  }
  auto fields = FieldSelector::parse(resource, options.fieldSelector);
  if (!fields) {
    return fields.error();
  }
  const bool namespaced = resourceInfo(resource).namespaced;
  const std::string listNs = namespaced ? std::string(ns) : "";
  // Keys are relative to the list's key prefix, as etcd's: "ns/name" across namespaces.
  const bool qualifyKeys = namespaced && listNs.empty();
  std::optional<ContinueToken> token;
  Key start{listNs, ""};
  if (!options.continueToken.empty()) {
    auto decoded = decodeContinue(options.continueToken);
    if (!decoded) {
      return badRequest("invalid continue token: " + decoded.error().message);
    }
    token = std::move(*decoded);
    size_t slash = qualifyKeys ? token->start.find('/') : std::string::npos;
    start = slash == std::string::npos
                ? Key{qualifyKeys ? token->start : listNs, qualifyKeys ? "" : token->start}
                : Key{token->start.substr(0, slash), token->start.substr(slash + 1)};
  }

  std::optional<uint64_t> requested;
  if (!options.resourceVersion.empty() && options.resourceVersion != "0") {
    requested = parseVersion(options.resourceVersion);
    if (!requested) {
      return badRequest("invalid resource version: " + util::quoteGo(options.resourceVersion));
    }
  }
  const bool exact = match == VersionMatch::Exact;

  std::unique_lock lock(mu_);
  const Table& t = table(resource);
  if (requested && !token && *requested > rv_) {
    if (auto error = waitUntilFresh(lock, *requested)) {
      return *error;
    }
  }
  uint64_t at = rv_;
  if (requested && exact && !token) {
    if (*requested < t.oldest - 1) {
      return apiError(410, "Expired", "The resourceVersion for the provided list is too old.");
    }
    at = *requested;
  }
  if (token && token->rv > 0) {
    const auto rv = static_cast<uint64_t>(token->rv);
    if (rv > rv_) {
      return apiError(504, "Timeout",
                      "Too large resource version: " + std::to_string(rv) +
                          ", current: " + std::to_string(rv_));
    }
    if (rv < t.oldest - 1) {
      // etcd compacted the revision: the client may go on, inconsistently, from the same key.
      ApiError expired = apiError(410, "Expired", std::string(kContinueExpired));
      expired.status.continueToken = encodeContinue(-1, token->start);
      return expired;
    }
    at = rv;
  }
  // The table at `at`: the current objects, except the keys written since, which the history
  // gives back as they were (absent for those added since).
  std::map<Key, const json*> before;
  for (const Recorded& entry : t.history) {
    if (entry.rv <= at) {
      continue;
    }
    Key key{stringAt(*entry.object, {"metadata", "namespace"}),
            stringAt(*entry.object, {"metadata", "name"})};
    before.try_emplace(std::move(key), entry.previous.get());
  }

  ListResult out;
  out.resourceVersion = std::to_string(at);
  const bool paging = options.limit > 0;
  const bool filtered = !options.labelSelector.empty() || !options.fieldSelector.empty();
  int64_t remaining = 0;
  const Key* last = nullptr;
  auto visit = [&](const Key& key, const json* object) {
    if (object == nullptr || (!listNs.empty() && key.first != listNs) ||
        !selector->matches(labelsOf(*object)) || !fields->matches(resource, *object)) {
      return true;
    }
    if (!paging || static_cast<int64_t>(out.items.size()) < options.limit) {
      out.items.push_back(*object);
      last = &key;
      return true;
    }
    ++remaining;
    return !filtered;  // the count is reported only for unfiltered lists
  };
  // Merge the two key-ordered sequences from `start` on; a key in both was written since `at`
  // and is served as the history has it.
  auto cur = t.objects.lower_bound(start);
  auto old = before.lower_bound(start);
  while (cur != t.objects.end() || old != before.end()) {
    const bool current = cur != t.objects.end() && (old == before.end() || cur->first < old->first);
    const Key& key = current ? cur->first : old->first;
    const json* object = current ? &cur->second : old->second;
    if (!listNs.empty() && key.first != listNs) {
      break;
    }
    if (current) {
      ++cur;
    } else {
      if (cur != t.objects.end() && cur->first == old->first) {
        ++cur;
      }
      ++old;
    }
    if (!visit(key, object)) {
      break;
    }
  }
  if (remaining > 0) {
    std::string next = qualifyKeys ? last->first + "/" + last->second : last->second;
    out.continueToken = encodeContinue(static_cast<int64_t>(at), next + '\0');
    if (!filtered) {
      out.remainingItemCount = remaining;
    }
  }
  return out;
}

}  // namespace berth::apiserver
