#include "pkg/apiserver/store.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <random>
#include <span>

#include "pkg/api/decode.h"
#include "pkg/apiserver/continue_token.h"
#include "pkg/apiserver/microtime.h"
#include "pkg/apiserver/patch.h"
#include "pkg/util/base64.h"
#include "pkg/util/quote.h"
#include "pkg/util/uuid.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

// etcd key prefixes (nodes are still stored as "minions"); they appear in precondition errors.
std::string_view storagePrefix(Resource resource) {
  switch (resource) {
    case Resource::Nodes:
      return "/registry/minions/";
    case Resource::Pods:
      return "/registry/pods/";
    case Resource::Events:
    case Resource::EventsV1:
      return "/registry/events/";
    case Resource::Leases:
      return "/registry/leases/";
  }
  return "/registry/";
}

ApiError notFound(const ResourceInfo& info, std::string_view name) {
  return objectError(ObjectError::NotFound, info.group, info.name, name);
}

constexpr std::string_view kOptimisticLock =
    "the object has been modified; please apply your changes to the latest version and try again";

// The StorageError a failed storage.Preconditions check turns into (ErrCodeInvalidObj = 4).
std::optional<ApiError> checkPreconditions(Resource resource, const Preconditions& pre,
                                           const json& object, std::string_view ns,
                                           std::string_view name) {
  const ResourceInfo& info = resourceInfo(resource);
  const json& meta = object["metadata"];
  std::string detail;
  const std::string uid = meta.value("uid", "");
  const std::string rv = meta.value("resourceVersion", "");
  if (!pre.uid.empty() && pre.uid != uid) {
    detail =
        "Precondition failed: UID in precondition: " + pre.uid + ", UID in object meta: " + uid;
  } else if (!pre.resourceVersion.empty() && pre.resourceVersion != rv) {
    detail = "Precondition failed: ResourceVersion in precondition: " + pre.resourceVersion +
             ", ResourceVersion in object meta: " + rv;
  } else {
    return std::nullopt;
  }
  std::string key(storagePrefix(resource));
  if (info.namespaced) {
    key += std::string(ns) + "/";
  }
  key += name;
  return objectError(ObjectError::Conflict, info.group, info.name, name,
                     "StorageError: invalid object, Code: 4, Key: " + key +
                         ", ResourceVersion: 0, AdditionalErrorMsg: " + detail);
}

std::optional<uint64_t> parseVersion(std::string_view text) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return v;
}

api::StringMap labelsOf(const json& object) {
  api::StringMap out;
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) {
    return out;
  }
  auto labels = meta->find("labels");
  if (labels == meta->end() || !labels->is_object()) {
    return out;
  }
  for (const auto& [k, v] : labels->items()) {
    if (v.is_string()) {
      out[k] = v.get<std::string>();
    }
  }
  return out;
}

std::string randomSuffix(std::mt19937_64& rng) {
  // names.SimpleNameGenerator's alphabet: no vowels, no confusable characters.
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  for (int i = 0; i < 5; ++i) {
    out += kAlphabet[rng() % kAlphabet.size()];
  }
  return out;
}

std::mt19937_64& rng() {
  static thread_local std::mt19937_64 gen{std::random_device{}()};
  return gen;
}

std::string randomUid() { return util::uuidV4(rng()); }

json& metadataOf(json& object) {
  json& meta = object["metadata"];
  if (!meta.is_object()) {
    meta = json::object();
  }
  return meta;
}

void setVersion(json& object, uint64_t rv) {
  metadataOf(object)["resourceVersion"] = std::to_string(rv);
}

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

std::string_view WatchEvent::typeName() const { return api::watchEventTypeName(type); }

json WatchEvent::toJson() const { return {{"type", typeName()}, {"object", object}}; }

std::optional<WatchEvent> Watch::next(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !queue_.empty() || closed_; });
  if (queue_.empty()) {
    return std::nullopt;
  }
  WatchEvent event = std::move(queue_.front());
  queue_.pop_front();
  return event;
}

std::vector<WatchEvent> Watch::drain() {
  std::lock_guard lock(mu_);
  std::vector<WatchEvent> out(std::make_move_iterator(queue_.begin()),
                              std::make_move_iterator(queue_.end()));
  queue_.clear();
  return out;
}

bool Watch::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

void Watch::stop() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

bool Watch::push(WatchEvent event) {
  {
    std::lock_guard lock(mu_);
    if (closed_) {
      return false;
    }
    if (queue_.size() >= limit_) {
      closed_ = true;
    } else {
      queue_.push_back(std::move(event));
    }
  }
  cv_.notify_all();
  return !closed();
}

// --- Store --------------------------------------------------------------------------------------

Store::Store(StoreOptions options) : options_(std::move(options)) {
  if (!options_.clock) {
    options_.clock = &util::realClock();
  }
  if (!options_.newUid) {
    options_.newUid = randomUid;
  }
  if (options_.historySize == 0) {
    options_.historySize = 1;
  }
}

Store::~Store() { closeWatches(); }

std::string Store::now() const {
  return api::formatTimestamp(api::toTimestamp(options_.clock->systemNow()));
}

std::string Store::resourceVersion() const {
  std::lock_guard lock(mu_);
  return std::to_string(rv_);
}

ApiResult<json> Store::create(Resource resource, std::string_view ns, json object) {
  const ResourceInfo& info = resourceInfo(resource);
  if (!object.is_object()) {
    return badRequest("the body of the request was in an unknown format");
  }
  json& meta = metadataOf(object);
  std::string objectNs = meta.value("namespace", "");
  if (info.namespaced) {
    if (!objectNs.empty() && objectNs != ns) {
      return badRequest(
          "the namespace of the provided object does not match the namespace sent on the request");
    }
    meta["namespace"] = std::string(ns);
  } else {
    meta.erase("namespace");
  }
  if (auto error = normalizeMicroTimes(resource, object); !error.ok()) {
    return decodeError(info, error.error());
  }
  std::lock_guard lock(mu_);
  Table& t = table(resource);
  std::string name = meta.value("name", "");
  const std::string generateName = meta.value("generateName", "");
  if (name.empty() && !generateName.empty()) {
    do {
      name = generateName.substr(0, 58) + randomSuffix(rng());
    } while (t.objects.count({meta.value("namespace", ""), name}) > 0);
    meta["name"] = name;
  }
  if (name.empty()) {
    std::string qualifiedKind(info.kind);
    if (!info.group.empty()) {
      qualifiedKind += "." + std::string(info.group);
    }
    ApiError error =
        apiError(422, "Invalid",
                 qualifiedKind +
                     " \"\" is invalid: metadata.name: Required value: name or generateName is "
                     "required");
    error.status.details = {
        .group = std::string(info.group),
        .kind = std::string(info.kind),
        .causes = {{.reason = "FieldValueRequired",
                    .message = "Required value: name or generateName is required",
                    .field = "metadata.name"}}};
    return error;
  }
  Key key{meta.value("namespace", ""), name};
  if (t.objects.count(key) > 0) {
    return objectError(ObjectError::AlreadyExists, info.group, info.name, name);
  }
  object["apiVersion"] = info.apiVersion();
  object["kind"] = info.kind;
  meta["uid"] = options_.newUid();
  meta["creationTimestamp"] = now();
  meta.erase("deletionTimestamp");
  if (resource == Resource::Pods) {
    // PodStrategy.PrepareForCreate resets the status; defaulting names the default scheduler.
    object["status"] = {{"phase", api::kPodPending}};
    json& spec = object["spec"];
    if (!spec.is_object()) {
      spec = json::object();
    }
    if (spec.value("schedulerName", "").empty()) {
      spec["schedulerName"] = "default-scheduler";
    }
  }
  setVersion(object, nextVersion());
  t.objects[key] = object;
  publish(resource, HistoryEntry{rv_, WatchEvent::Type::Added, object, std::nullopt});
  return object;
}

ApiResult<json> Store::get(Resource resource, std::string_view ns, std::string_view name) const {
  const ResourceInfo& info = resourceInfo(resource);
  std::lock_guard lock(mu_);
  const Table& t = table(resource);
  auto it = t.objects.find({info.namespaced ? std::string(ns) : "", std::string(name)});
  if (it == t.objects.end()) {
    return notFound(info, name);
  }
  return it->second;
}

ApiResult<json> Store::update(Resource resource, std::string_view ns, std::string_view name,
                              json object) {
  return replace(resource, ns, name, std::move(object), false);
}

ApiResult<json> Store::updateStatus(Resource resource, std::string_view ns, std::string_view name,
                                    json object) {
  return replace(resource, ns, name, std::move(object), true);
}

// The checks update() makes on the object before looking at the store.
std::optional<ApiError> checkUpdatedObject(const ResourceInfo& info, std::string_view ns,
                                           std::string_view name, json& object) {
  if (!object.is_object()) {
    return badRequest("the body of the request was in an unknown format");
  }
  json& meta = metadataOf(object);
  const std::string objectName = meta.value("name", "");
  if (objectName != name) {
    return badRequest("the name of the object (" + objectName +
                      ") does not match the name on the URL (" + std::string(name) + ")");
  }
  const std::string objectNs = meta.value("namespace", "");
  if (info.namespaced && !objectNs.empty() && objectNs != ns) {
    return badRequest("the namespace of the object (" + objectNs +
                      ") does not match the namespace on the request (" + std::string(ns) + ")");
  }
  const std::string rv = meta.value("resourceVersion", "");
  if (!rv.empty() && !parseVersion(rv)) {
    return badRequest("invalid resource version: " + util::quoteGo(rv));
  }
  return std::nullopt;
}

ApiResult<json> Store::replace(Resource resource, std::string_view ns, std::string_view name,
                               json object, bool statusOnly) {
  const ResourceInfo& info = resourceInfo(resource);
  if (auto error = checkUpdatedObject(info, ns, name, object)) {
    return *error;
  }
  if (!statusOnly) {
    if (auto error = normalizeMicroTimes(resource, object); !error.ok()) {
      return decodeError(info, error.error());
    }
  }
  Key key{info.namespaced ? std::string(ns) : "", std::string(name)};
  std::unique_lock lock(mu_);
  Table& t = table(resource);
  auto it = t.objects.find(key);
  if (it == t.objects.end()) {
    // Events allow create-on-update (AllowCreateOnUpdate); the others answer 404.
    if ((resource == Resource::Events || resource == Resource::EventsV1) && !statusOnly) {
      lock.unlock();
      object["metadata"].erase("resourceVersion");
      return create(resource, ns, std::move(object));
    }
    return notFound(info, name);
  }
  return writeLocked(resource, key, it->second, std::move(object), statusOnly);
}

ApiResult<json> Store::writeLocked(Resource resource, const Key& key, json& current, json object,
                                   bool statusOnly) {
  const ResourceInfo& info = resourceInfo(resource);
  const json& old = current;
  // resourceVersion 0 (or none) is an unconditional update; versions compare as numbers.
  const std::string rv = stringAt(object, {"metadata", "resourceVersion"});
  const uint64_t want = rv.empty() ? 0 : parseVersion(rv).value_or(0);
  if (want != 0 && parseVersion(old["metadata"].value("resourceVersion", "")) != want) {
    return objectError(ObjectError::Conflict, info.group, info.name, key.second, kOptimisticLock);
  }
  json next;
  if (statusOnly) {
    next = old;
    if (object.contains("status")) {
      next["status"] = object["status"];
    } else {
      next.erase("status");
    }
  } else {
    next = std::move(object);
    json& nextMeta = metadataOf(next);
    const json& oldMeta = old["metadata"];
    nextMeta["uid"] = oldMeta["uid"];
    nextMeta["creationTimestamp"] = oldMeta["creationTimestamp"];
    nextMeta["resourceVersion"] = oldMeta["resourceVersion"];
    if (info.namespaced) {
      nextMeta["namespace"] = key.first;
    } else {
      nextMeta.erase("namespace");
    }
    next["apiVersion"] = info.apiVersion();
    next["kind"] = info.kind;
    if (resource == Resource::Pods || resource == Resource::Nodes) {
      // A main-resource update cannot change the status (PrepareForUpdate keeps the old one).
      if (old.contains("status")) {
        next["status"] = old["status"];
      } else {
        next.erase("status");
      }
    }
  }
  if (next == old) {
    return old;  // a no-op write: etcd3 storage skips it, so no new resourceVersion
  }
  HistoryEntry entry{nextVersion(), WatchEvent::Type::Modified, std::move(next), old};
  setVersion(entry.object, entry.rv);
  current = entry.object;
  json result = entry.object;
  publish(resource, std::move(entry));
  return result;
}

ApiResult<json> Store::patch(Resource resource, std::string_view ns, std::string_view name,
                             PatchType type, const json& patch, bool statusOnly) {
  const ResourceInfo& info = resourceInfo(resource);
  Key key{info.namespaced ? std::string(ns) : "", std::string(name)};
  std::lock_guard lock(mu_);
  Table& t = table(resource);
  auto it = t.objects.find(key);
  if (it == t.objects.end()) {
    return notFound(info, name);
  }
  auto patched = applyPatch(resource, type, it->second, patch);
  if (!patched) {
    return patched.error();
  }
  json object = std::move(*patched);
  // The patched object must decode as the resource again (jsonPatcher/smpPatcher decode it).
  auto invalid = [&](const std::string& detail) {
    const std::string value =
        type == PatchType::StrategicMerge ? goFormat(patch) : dumpJson(object);
    return invalidPatch(value, detail);
  };
  if (!object.is_object()) {
    return invalid("json: cannot unmarshal " + std::string(goJsonKind(object)) +
                   " into Go value of type " + goTypeName(info));
  }
  if (resource == Resource::Pods) {
    if (auto pod = api::decodePod(object); !pod) {
      return invalid(pod.error().message);
    }
  } else if (resource == Resource::Nodes) {
    if (auto node = api::decodeNode(object); !node) {
      return invalid(node.error().message);
    }
  } else if (auto error = normalizeMicroTimes(resource, object); !error.ok()) {
    return invalid(error.error().message);
  }
  if (auto error = checkUpdatedObject(info, ns, name, object)) {
    return *error;
  }
  return writeLocked(resource, key, it->second, std::move(object), statusOnly);
}

ApiResult<json> Store::remove(Resource resource, std::string_view ns, std::string_view name,
                              const Preconditions& preconditions) {
  const ResourceInfo& info = resourceInfo(resource);
  Key key{info.namespaced ? std::string(ns) : "", std::string(name)};
  std::lock_guard lock(mu_);
  Table& t = table(resource);
  auto it = t.objects.find(key);
  if (it == t.objects.end()) {
    return notFound(info, name);
  }
  if (auto error = checkPreconditions(resource, preconditions, it->second, key.first, name)) {
    return *error;
  }
  json old = std::move(it->second);
  t.objects.erase(it);
  HistoryEntry entry{nextVersion(), WatchEvent::Type::Deleted, old, old};
  setVersion(entry.object, entry.rv);
  publish(resource, std::move(entry));
  return old;
}

ApiResult<ListResult> Store::list(Resource resource, std::string_view ns,
                                  const ListOptions& options) const {
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

  std::lock_guard lock(mu_);
  const Table& t = table(resource);
  uint64_t at = rv_;
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
  for (const HistoryEntry& entry : t.history) {
    if (entry.rv <= at) {
      continue;
    }
    Key key{stringAt(entry.object, {"metadata", "namespace"}),
            stringAt(entry.object, {"metadata", "name"})};
    before.try_emplace(std::move(key), entry.previous ? &*entry.previous : nullptr);
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

ApiResult<WatchPtr> Store::watch(Resource resource, std::string_view ns,
                                 const WatchOptions& options) {
  auto selector = labels::Selector::parse(options.labelSelector);
  if (!selector) {
    return badRequest(selector.error().message);
  }
  auto fields = FieldSelector::parse(resource, options.fieldSelector);
  if (!fields) {
    return fields.error();
  }
  std::optional<uint64_t> from;
  if (!options.resourceVersion.empty() && options.resourceVersion != "0") {
    from = parseVersion(options.resourceVersion);
    if (!from) {
      return badRequest("invalid resource version: " + util::quoteGo(options.resourceVersion));
    }
  }
  Watcher watcher{{},
                  resourceInfo(resource).namespaced ? std::string(ns) : "",
                  std::move(*selector),
                  std::move(*fields),
                  options.allowWatchBookmarks};
  auto watch = std::make_shared<Watch>(options_.watchQueueLimit);
  watcher.watch = watch;

  std::lock_guard lock(mu_);
  Table& t = table(resource);
  if (!from) {
    // "Any" resourceVersion: the current state as synthetic ADDED events.
    for (const auto& [key, object] : t.objects) {
      HistoryEntry entry{0, WatchEvent::Type::Added, object, std::nullopt};
      if (auto event = eventFor(resource, watcher, entry)) {
        watch->push(std::move(*event));
      }
    }
  } else {
    if (*from < t.oldest - 1) {
      return apiError(410, "Expired",
                      "too old resource version: " + std::to_string(*from) + " (" +
                          std::to_string(t.oldest - 1) + ")");
    }
    for (const HistoryEntry& entry : t.history) {
      if (entry.rv <= *from) {
        continue;
      }
      if (auto event = eventFor(resource, watcher, entry)) {
        watch->push(std::move(*event));
      }
    }
  }
  t.watchers.push_back(std::move(watcher));
  return watch;
}

std::optional<WatchEvent> Store::eventFor(Resource resource, const Watcher& watcher,
                                          const HistoryEntry& entry) const {
  auto passes = [&](const json& object) {
    if (!watcher.ns.empty() && stringAt(object, {"metadata", "namespace"}) != watcher.ns) {
      return false;
    }
    return watcher.labels.matches(labelsOf(object)) && watcher.fields.matches(resource, object);
  };
  const bool current = entry.type != WatchEvent::Type::Deleted && passes(entry.object);
  const bool previous = entry.previous && passes(*entry.previous);
  if (current && !previous) {
    return WatchEvent{WatchEvent::Type::Added, entry.object};
  }
  if (current && previous) {
    return WatchEvent{WatchEvent::Type::Modified, entry.object};
  }
  if (previous) {
    // Leaving the selection (or deleted): the previous content at the event's resourceVersion.
    WatchEvent event{WatchEvent::Type::Deleted, *entry.previous};
    setVersion(event.object, entry.rv);
    return event;
  }
  return std::nullopt;
}

void Store::publish(Resource resource, HistoryEntry entry) {
  Table& t = table(resource);
  t.history.push_back(std::move(entry));
  if (t.history.size() > options_.historySize) {
    t.history.pop_front();
    t.oldest = t.history.front().rv;
  }
  const HistoryEntry& last = t.history.back();
  std::erase_if(t.watchers, [&](const Watcher& w) {
    WatchPtr watch = w.watch.lock();
    if (!watch || watch->closed()) {
      return true;
    }
    auto event = eventFor(resource, w, last);
    return event && !watch->push(std::move(*event));
  });
}

ApiResult<std::string> Store::bind(std::string_view ns, std::string_view name,
                                   const json& binding) {
  if (!binding.is_object()) {
    return badRequest("the body of the request was in an unknown format");
  }
  const std::string bindingName = stringAt(binding, {"metadata", "name"});
  if (bindingName != name) {
    return badRequest("name in URL does not match name in Binding object");
  }
  // ValidatePodBinding's errors reach the client as a plain error: 500, reason unknown.
  const std::string targetKind = stringAt(binding, {"target", "kind"});
  if (!targetKind.empty() && targetKind != "Node") {
    return apiError(500, "",
                    "target.kind: Unsupported value: " + util::quoteGo(targetKind) +
                        ": supported values: \"Node\", \"<empty>\"");
  }
  const std::string node = stringAt(binding, {"target", "name"});
  if (node.empty()) {
    return apiError(500, "", "target.name: Required value");
  }
  Preconditions pre{stringAt(binding, {"metadata", "uid"}),
                    stringAt(binding, {"metadata", "resourceVersion"})};

  std::lock_guard lock(mu_);
  Table& t = table(Resource::Pods);
  auto it = t.objects.find({std::string(ns), std::string(name)});
  if (it == t.objects.end()) {
    return notFound(resourceInfo(Resource::Pods), name);
  }
  if (auto error = checkPreconditions(Resource::Pods, pre, it->second, ns, name)) {
    return *error;
  }
  const json& pod = it->second;
  if (!stringAt(pod, {"metadata", "deletionTimestamp"}).empty()) {
    return objectError(
        ObjectError::Conflict, "", "pods/binding", name,
        "pod " + std::string(name) + " is being deleted, cannot be assigned to a host");
  }
  const std::string assigned = stringAt(pod, {"spec", "nodeName"});
  if (!assigned.empty()) {
    return objectError(
        ObjectError::Conflict, "", "pods/binding", name,
        "pod " + std::string(name) + " is already assigned to node " + util::quoteGo(assigned));
  }
  auto spec = pod.find("spec");
  if (spec != pod.end() && spec->is_object() && spec->contains("schedulingGates") &&
      (*spec)["schedulingGates"].is_array() && !(*spec)["schedulingGates"].empty()) {
    return objectError(ObjectError::Conflict, "", "pods/binding", name,
                       "pod " + std::string(name) + " has non-empty .spec.schedulingGates");
  }

  json next = pod;
  next["spec"]["nodeName"] = node;
  const json& bindingMeta = binding.contains("metadata") ? binding["metadata"] : json::object();
  if (bindingMeta.is_object() && bindingMeta.contains("annotations") &&
      bindingMeta["annotations"].is_object()) {
    for (const auto& [k, v] : bindingMeta["annotations"].items()) {
      next["metadata"]["annotations"][k] = v;
    }
  }
  // podutil.UpdatePodCondition: the condition is replaced; the transition time moves only when
  // the status changes.
  json condition = {{"type", "PodScheduled"},
                    {"status", "True"},
                    {"lastProbeTime", nullptr},
                    {"lastTransitionTime", now()}};
  json& status = next["status"];
  if (!status.is_object()) {
    status = json::object();
  }
  json& conditions = status["conditions"];
  if (!conditions.is_array()) {
    conditions = json::array();
  }
  auto existing = std::find_if(conditions.begin(), conditions.end(), [](const json& c) {
    return c.is_object() && c.value("type", "") == "PodScheduled";
  });
  if (existing == conditions.end()) {
    conditions.push_back(std::move(condition));
  } else {
    if (existing->value("status", "") == "True" && existing->contains("lastTransitionTime")) {
      condition["lastTransitionTime"] = (*existing)["lastTransitionTime"];
    }
    *existing = std::move(condition);
  }
  // The stored pod becomes the event's previous object: moved, not copied (a bind is the hot path
  // of every scheduler benchmark).
  HistoryEntry entry{nextVersion(), WatchEvent::Type::Modified, std::move(next),
                     std::move(it->second)};
  setVersion(entry.object, entry.rv);
  it->second = entry.object;
  std::string version = std::to_string(entry.rv);
  publish(Resource::Pods, std::move(entry));
  return version;
}

void Store::sendBookmarks() {
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < std::size(tables_); ++i) {
    const ResourceInfo& info = resourceInfo(static_cast<Resource>(i));
    json object = {{"kind", info.kind},
                   {"apiVersion", info.apiVersion()},
                   {"metadata", {{"resourceVersion", std::to_string(rv_)}}}};
    for (const Watcher& w : tables_[i].watchers) {
      if (WatchPtr watch = w.watch.lock(); watch && w.bookmarks) {
        watch->push(WatchEvent{WatchEvent::Type::Bookmark, object});
      }
    }
  }
}

void Store::closeWatches() {
  std::lock_guard lock(mu_);
  for (Table& t : tables_) {
    for (const Watcher& w : t.watchers) {
      if (WatchPtr watch = w.watch.lock()) {
        watch->stop();
      }
    }
    t.watchers.clear();
  }
}

void Store::expireHistory() {
  std::lock_guard lock(mu_);
  for (Table& t : tables_) {
    t.history.clear();
    t.oldest = rv_ + 1;
  }
}

}  // namespace berth::apiserver
