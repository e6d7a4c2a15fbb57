// Object decoding: what berth reads from the API server and from files. Each input is tried in
// every form, so one corpus entry feeds all decoders: as a JSON object it is decoded as a Pod, a
// Node and (its spec) a Lease; as a response body as an error Status; as a line of a watch stream
// as an event, whose object is then decoded like the reflector does; as a file as
// `berth simulate` reads `kubectl get -o json|yaml` output.
// Invariant: a Pod, Node or Lease spec that decodes encodes to JSON that decodes to the same
// encoding (what berth writes back to the API server it can read again).

#include <nlohmann/json.hpp>

#include "fuzz/fuzz_check.h"
#include "pkg/api/decode.h"
#include "pkg/client/failure.h"
#include "pkg/client/request.h"
#include "pkg/leaderelection/leader_elector.h"

namespace {

using berth::fuzz::check;
using nlohmann::json;
namespace api = berth::api;
namespace client = berth::client;
namespace leaderelection = berth::leaderelection;

void checkPodRoundTrip(const api::Pod& pod) {
  const json encoded = api::encodePod(pod);
  const auto again = api::decodePod(encoded);
  check(again.ok(), "an encoded Pod decodes", again.ok() ? "" : again.error().message);
  check(api::encodePod(*again) == encoded, "a Pod's encoding survives decoding", encoded.dump());
}

void checkNodeRoundTrip(const api::Node& node) {
  const json encoded = api::encodeNode(node);
  const auto again = api::decodeNode(encoded);
  check(again.ok(), "an encoded Node decodes", again.ok() ? "" : again.error().message);
  check(api::encodeNode(*again) == encoded, "a Node's encoding survives decoding", encoded.dump());
}

void decodeObject(const json& object) {
  if (const auto pod = api::decodePod(object); pod.ok()) {
    checkPodRoundTrip(*pod);
  }
  if (const auto node = api::decodeNode(object); node.ok()) {
    checkNodeRoundTrip(*node);
  }
  if (!object.is_object()) {
    return;
  }
  const auto spec = object.find("spec");
  if (spec == object.end()) {
    return;
  }
  if (const auto lease = leaderelection::decodeLeaseSpec(*spec); lease.ok()) {
    const json encoded = leaderelection::encodeLeaseSpec(*lease);
    const auto again = leaderelection::decodeLeaseSpec(encoded);
    check(again.ok(), "an encoded Lease spec decodes", again.ok() ? "" : again.error().message);
    check(leaderelection::encodeLeaseSpec(*again) == encoded,
          "a Lease spec's encoding survives decoding", encoded.dump());
  }
}

// As the reflector reads an ERROR event: the Status's own code, else 500.
void decodeErrorEvent(const json& status) {
  const auto c = status.find("code");
  const int code = c != status.end() && c->is_number_integer() ? c->get<int>() : 500;
  const client::ApiFailure failure = client::decodeFailure(code, "GET", status.dump());
  static_cast<void>(failure.toString());
  static_cast<void>(failure.toError());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = berth::fuzz::asText(data, size);

  if (const json object = json::parse(text, nullptr, /*allow_exceptions=*/false);
      !object.is_discarded()) {
    decodeObject(object);
  }

  // The body of an error answer; the verb decides 409's reason, the header a Retry-After.
  for (const int code : {409, 429, 503}) {
    const client::ApiFailure failure = client::decodeFailure(code, "POST", text, text.substr(0, 8));
    static_cast<void>(failure.toString());
    static_cast<void>(failure.isTransient());
  }

  if (const auto event = client::decodeWatchEvent(text); event.ok()) {
    static_cast<void>(event->resourceVersion());
    if (event->type == client::WatchEvent::Type::Error) {
      decodeErrorEvent(event->object);
    } else {
      decodeObject(event->object);
    }
  }

  if (const auto objects = api::decodeObjects(text); objects.ok()) {
    for (const api::PodPtr& pod : objects->pods) {
      checkPodRoundTrip(*pod);
    }
    for (const api::NodePtr& node : objects->nodes) {
      checkNodeRoundTrip(*node);
    }
  }
  return 0;
}
