#include "pkg/apiserver/store.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <random>
#include <span>

#include "pkg/api/decode.h"
#include "pkg/apiserver/microtime.h"
#include "pkg/apiserver/object_meta.h"
#include "pkg/apiserver/patch.h"
#include "pkg/apiserver/strategy.h"
#include "pkg/apiserver/validation.h"
#include "pkg/util/quote.h"
#include "pkg/util/uuid.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

constexpr std::string_view kOptimisticLock =
    "the object has been modified; please apply your changes to the latest version and try again";

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

// A storage kind's object must decode as its typed form before it is stored.
std::optional<ApiError> validateWrite(Resource resource, const json& object) {
  if (!validatesOnWrite(resource)) {
    return std::nullopt;
  }
  if (auto failure = decodeFailure(resource, object)) {
    return decodeError(resourceInfo(resource), util::invalidArgument(*failure));
  }
  return std::nullopt;
}

}  // namespace

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
  applyDefaults(resource, object);
  if (auto error = validateWrite(resource, object)) {
    return *error;
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
  if (auto error = validateObjectMeta(resource, object)) {
    return *error;
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
  prepareForCreate(resource, object, now());
  setVersion(object, nextVersion());
  t.objects[key] = object;
  publish(resource, HistoryEntry{rv_, WatchEvent::Type::Added, object, std::nullopt});
  return object;
}

void Store::createSystemNamespaces() {
  for (std::string_view name : kSystemNamespaces) {
    // AlreadyExists is fine: they are created once.
    (void)create(Resource::Namespaces, "", {{"metadata", {{"name", name}}}});
  }
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
    applyDefaults(resource, object);
    if (auto error = validateWrite(resource, object)) {
      return *error;
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
    applyDefaults(resource, next);
    prepareForStatusUpdate(resource, old, next, now());
  } else {
    next = std::move(object);
    json& nextMeta = metadataOf(next);
    const json& oldMeta = old["metadata"];
    nextMeta["uid"] = oldMeta["uid"];
    nextMeta["creationTimestamp"] = oldMeta["creationTimestamp"];
    nextMeta["resourceVersion"] = oldMeta["resourceVersion"];
    // Only DELETE starts a graceful deletion; an update cannot start, move or end one.
    for (const char* field : {"deletionTimestamp", "deletionGracePeriodSeconds"}) {
      if (oldMeta.contains(field)) {
        nextMeta[field] = oldMeta[field];
      } else {
        nextMeta.erase(field);
      }
    }
    if (info.namespaced) {
      nextMeta["namespace"] = key.first;
    } else {
      nextMeta.erase("namespace");
    }
    next["apiVersion"] = info.apiVersion();
    next["kind"] = info.kind;
    prepareForUpdate(resource, old, next);
    applyDefaults(resource, next);
    if (resource == Resource::Pods) {
      // Only a Binding sets spec.nodeName; an update changes little else of a pod's spec.
      if (auto error = validatePodUpdate(old, next)) {
        return *error;
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
  if (auto failure = decodeFailure(resource, object)) {
    return invalid(*failure);
  }
  if (auto error = normalizeMicroTimes(resource, object); !error.ok()) {
    return invalid(error.error().message);
  }
  if (auto error = checkUpdatedObject(info, ns, name, object)) {
    return *error;
  }
  return writeLocked(resource, key, it->second, std::move(object), statusOnly);
}

ApiResult<json> Store::remove(Resource resource, std::string_view ns, std::string_view name,
                              const Preconditions& preconditions,
                              std::optional<int64_t> gracePeriodSeconds) {
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
  if (resource == Resource::Namespaces && isImmortalNamespace(name)) {
    // NamespaceLifecycle admission.
    ApiError error = apiError(
        403, "Forbidden",
        "namespaces " + util::quoteGo(name) + " is forbidden: this namespace may not be deleted");
    error.status.details = {.name = std::string(name), .kind = "namespaces"};
    return error;
  }
  if (resource == Resource::Pods) {
    if (auto grace = podGracePeriod(it->second, gracePeriodSeconds); grace > 0) {
      return beginGracefulDeletionLocked(key, it->second, grace);
    }
  }
  return eraseLocked(resource, t, it);
}

int64_t Store::podGracePeriod(const json& pod, std::optional<int64_t> requested) {
  // The pod strategy's CheckGracefulDelete: the request's period, else the pod's
  // terminationGracePeriodSeconds (30 by default); none for a pod no kubelet runs (unbound, or
  // finished).
  const json& spec = pod.value("spec", json::object());
  const std::string phase = pod.value("status", json::object()).value("phase", "");
  if (spec.value("nodeName", "").empty() || phase == "Succeeded" || phase == "Failed") return 0;
  if (requested) return std::max<int64_t>(*requested, 0);
  const json& period = spec.value("terminationGracePeriodSeconds", json());
  return period.is_number_integer() ? std::max<int64_t>(period.get<int64_t>(), 0) : 30;
}

ApiResult<json> Store::beginGracefulDeletionLocked(const Key& key, json& current, int64_t grace) {
  json& meta = current["metadata"];
  const util::SystemTime now = options_.clock->systemNow();
  const util::SystemTime deadline = now + std::chrono::seconds(grace);
  if (meta.contains("deletionTimestamp")) {
    // Already terminating: a second DELETE may shorten the grace period, never extend it.
    const int64_t current_grace = meta.value("deletionGracePeriodSeconds", int64_t{0});
    if (grace >= current_grace) return current;
  }
  json next = current;
  next["metadata"]["deletionTimestamp"] = api::formatTimestamp(api::toTimestamp(deadline));
  next["metadata"]["deletionGracePeriodSeconds"] = grace;
  HistoryEntry entry{nextVersion(), WatchEvent::Type::Modified, std::move(next), current};
  setVersion(entry.object, entry.rv);
  current = entry.object;
  terminating_[key] = Terminating{now, deadline};
  json result = entry.object;
  publish(Resource::Pods, std::move(entry));
  return result;
}

json Store::eraseLocked(Resource resource, Table& t, std::map<Key, json>::iterator it) {
  if (resource == Resource::Pods) terminating_.erase(it->first);
  json old = std::move(it->second);
  t.objects.erase(it);
  HistoryEntry entry{nextVersion(), WatchEvent::Type::Deleted, old, old};
  setVersion(entry.object, entry.rv);
  publish(resource, std::move(entry));
  return old;
}

size_t Store::finalizeGracefulDeletions(std::optional<util::Duration> bound) {
  std::lock_guard lock(mu_);
  const util::SystemTime now = options_.clock->systemNow();
  Table& t = table(Resource::Pods);
  size_t finalized = 0;
  for (auto term = terminating_.begin(); term != terminating_.end();) {
    const Terminating when = term->second;
    const Key key = term->first;
    ++term;
    if (now < when.deadline && !(bound && now >= when.started + *bound)) continue;
    if (auto it = t.objects.find(key); it != t.objects.end()) {
      eraseLocked(Resource::Pods, t, it);
      ++finalized;
    }
  }
  return finalized;
}

}  // namespace berth::apiserver
