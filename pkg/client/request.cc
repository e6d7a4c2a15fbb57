#include "pkg/client/request.h"

#include <string>

#include "pkg/api/json.h"
#include "pkg/log/log.h"

namespace berth::client {
namespace {

using nlohmann::json;

// RFC 3986 percent-encoding of a query value: everything but unreserved characters.
std::string encodeQueryValue(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : value) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

void addParam(std::string& query, std::string_view key, std::string_view value) {
  if (value.empty()) {
    return;
  }
  query += query.empty() ? '?' : '&';
  query += key;
  query += '=';
  query += encodeQueryValue(value);
}

}  // namespace

std::string queryString(const ListOptions& options) {
  std::string q;
  addParam(q, "labelSelector", options.labelSelector);
  addParam(q, "fieldSelector", options.fieldSelector);
  addParam(q, "resourceVersion", options.resourceVersion);
  if (options.limit > 0) {
    addParam(q, "limit", std::to_string(options.limit));
  }
  addParam(q, "continue", options.continueToken);
  return q;
}

std::string queryString(const WatchOptions& options) {
  std::string q = "?watch=true";
  addParam(q, "labelSelector", options.labelSelector);
  addParam(q, "fieldSelector", options.fieldSelector);
  addParam(q, "resourceVersion", options.resourceVersion);
  if (options.timeoutSeconds > 0) {
    addParam(q, "timeoutSeconds", std::to_string(options.timeoutSeconds));
  }
  if (options.allowWatchBookmarks) {
    addParam(q, "allowWatchBookmarks", "true");
  }
  return q;
}

ApiResult<ObjectList> decodeList(json body) {
  if (!body.is_object()) {
    return badResponse("list: expected a JSON object");
  }
  ObjectList out;
  const auto meta = body.find("metadata");
  if (meta != body.end() && meta->is_object()) {
    if (const auto rv = meta->find("resourceVersion"); rv != meta->end() && rv->is_string()) {
      out.resourceVersion = rv->get<std::string>();
    }
    if (const auto c = meta->find("continue"); c != meta->end() && c->is_string()) {
      out.continueToken = c->get<std::string>();
    }
  }
  auto items = body.find("items");
  if (items == body.end() || items->is_null()) {
    return out;  // an empty list may omit items
  }
  if (!items->is_array()) {
    return badResponse("list: items must be an array");
  }
  out.items.reserve(items->size());
  for (json& item : *items) {
    out.items.push_back(std::move(item));
  }
  return out;
}

std::string WatchEvent::resourceVersion() const {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) {
    return {};
  }
  const auto rv = meta->find("resourceVersion");
  return rv != meta->end() && rv->is_string() ? rv->get<std::string>() : std::string();
}

ApiResult<WatchEvent> decodeWatchEvent(std::string_view line) {
  if (api::jsonDepth(line) > api::kMaxJsonDepth) {
    return badResponse("watch event is not JSON: exceeded max depth of " +
                       std::to_string(api::kMaxJsonDepth));
  }
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return badResponse("watch event is not JSON: " + std::string(line.substr(0, 200)));
  }
  if (!j.is_object()) {
    return badResponse("watch event is not a JSON object");
  }
  const auto type = j.find("type");
  const auto object = j.find("object");
  if (type == j.end() || !type->is_string() || object == j.end() || !object->is_object()) {
    return badResponse("watch event needs a string type and an object");
  }
  WatchEvent e;
  const std::string& t = type->get_ref<const std::string&>();
  const std::optional<api::WatchEventType> parsed = api::parseWatchEventType(t);
  if (parsed) {
    e.type = *parsed;
  } else {
    // Named in one log line: a prefix is enough, and "" must still read as set.
    e.unknownType = t.empty() ? std::string("\"\"") : t.substr(0, 64);
  }
  e.object = std::move(*object);
  return e;
}

ApiResult<ObjectList> listAllPages(const ListPageFn& listPage, ListOptions options,
                                   std::stop_token stop) {
  if (options.limit <= 0) {
    options.limit = kDefaultPageSize;
  }
  ObjectList all;
  bool first = true;
  bool shrunk = false;
  while (true) {
    if (stop.stop_requested()) {
      return cancelledFailure();
    }
    ApiResult<ObjectList> page = listPage(options);
    if (!page.ok()) {
      if (page.error().isResponseTooLarge() && options.limit > 1) {
        // Valid objects can make a page too big (up to ~3 MiB each): ask for the same page, from
        // the same continue token, in fewer objects. A page of one always fits.
        const int64_t smaller = options.limit / 2;
        if (!shrunk) {
          shrunk = true;
          log::warning(
              "A list page is over the response size limit; listing in smaller pages",
              {{"limit", options.limit}, {"newLimit", smaller}, {"err", page.error().toString()}});
        } else {
          log::info(4, "A list page is still over the response size limit",
                    {{"limit", options.limit}, {"newLimit", smaller}});
        }
        options.limit = smaller;
        continue;
      }
      if (!first && page.error().isGone()) {
        // The continue token expired: read everything at once instead.
        ListOptions whole = options;
        whole.limit = 0;
        whole.continueToken.clear();
        return listPage(whole);
      }
      return page.error();
    }
    if (first) {
      all.resourceVersion = page->resourceVersion;
      first = false;
    }
    for (nlohmann::json& item : page->items) {
      all.items.push_back(std::move(item));
    }
    if (page->continueToken.empty()) {
      return all;
    }
    options.continueToken = std::move(page->continueToken);
    // Later pages come from the same snapshot; a resourceVersion must not accompany `continue`.
    options.resourceVersion.clear();
  }
}

}  // namespace berth::client
