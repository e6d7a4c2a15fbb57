// The embedded API server's request handling, with no sockets: the input is the byte stream a
// client sends on one connection. Beast's request parser reads request after request from it (as
// the server's connection loop does, keep-alive and pipelining included), and each request is
// routed (parseRequestInfo) and served (HttpHandler) against an in-memory Store seeded with a
// node and a pod, so that one input can create, patch, bind and delete. Watches opened on the way
// stay open until the input ends, then their events are drained and written out as the server
// writes watch lines.
// Invariants: every answer has a valid HTTP status; a JSON answer is valid JSON; no request ends
// in the handler's catch-all for escaped exceptions (500 InternalError).

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/system/system_error.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "pkg/apiserver/http_handler.h"
#include "pkg/apiserver/store.h"

namespace {

namespace apiserver = berth::apiserver;
namespace http = boost::beast::http;
using berth::fuzz::check;
using nlohmann::json;

// The server's limit on request bodies (kube-apiserver's 3 MiB).
constexpr uint64_t kMaxBody = 3 * 1024 * 1024;

// A SyncReadStream over the input bytes: what a socket would deliver, then end of file.
class ByteStream {
 public:
  explicit ByteStream(std::string_view bytes) : rest_(bytes) {}

  template <typename MutableBuffers>
  size_t read_some(const MutableBuffers& buffers, boost::system::error_code& ec) {
    if (rest_.empty()) {
      ec = boost::asio::error::eof;
      return 0;
    }
    ec = {};
    const size_t n =
        boost::asio::buffer_copy(buffers, boost::asio::buffer(rest_.data(), rest_.size()));
    rest_.remove_prefix(n);
    return n;
  }

  // Required by Beast's SyncReadStream concept; http::read with an error_code never calls it.
  template <typename MutableBuffers>
  size_t read_some(const MutableBuffers& buffers) {
    boost::system::error_code ec;
    const size_t n = read_some(buffers, ec);
    if (ec) {
      throw boost::system::system_error(ec);
    }
    return n;
  }

 private:
  std::string_view rest_;
};

std::string_view sv(boost::beast::string_view s) { return {s.data(), s.size()}; }

apiserver::StoreOptions deterministicStore() {
  apiserver::StoreOptions options;
  options.historySize = 64;
  static berth::util::FakeClock clock{berth::util::SystemTime(std::chrono::seconds(1714557600))};
  options.clock = &clock;
  auto counter = std::make_shared<int>(0);
  options.newUid = [counter] { return "uid-" + std::to_string(++*counter); };
  return options;
}

void seed(apiserver::Store& store) {
  const json node = {{"apiVersion", "v1"},
                     {"kind", "Node"},
                     {"metadata", {{"name", "n1"}, {"labels", {{"zone", "a"}}}}},
                     {"status", {{"allocatable", {{"cpu", "4"}, {"memory", "8Gi"}}}}}};
  const json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "web"}, {"namespace", "default"}, {"labels", {{"app", "web"}}}}},
      {"spec",
       {{"schedulerName", "berth"},
        {"containers",
         {{{"name", "c"},
           {"image", "nginx"},
           {"resources", {{"requests", {{"cpu", "100m"}}}}}}}}}}};
  check(store.create(apiserver::Resource::Nodes, "", node).ok(), "the seed node is created");
  check(store.create(apiserver::Resource::Pods, "default", pod).ok(), "the seed pod is created");
}

void checkResponse(const apiserver::HttpResponse& res) {
  check(res.code >= 100 && res.code <= 599, "an answer has an HTTP status",
        std::to_string(res.code));
  if (res.watch || !res.contentType.starts_with("application/json")) {
    return;
  }
  const json body = json::parse(res.body, nullptr, /*allow_exceptions=*/false);
  check(!body.is_discarded(), "a JSON answer is JSON", res.body);
  // HttpHandler::serve answers an exception that escaped a check with this 500; every input
  // should have met a check that answers as kube-apiserver does.
  check(!(body.is_object() && body.value("reason", "") == "InternalError"),
        "no request reaches the handler's catch-all", res.body);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  apiserver::Store store(deterministicStore());
  seed(store);
  apiserver::HttpHandler handler(store, "127.0.0.1:6443");

  ByteStream stream(berth::fuzz::asText(data, size));
  boost::beast::flat_buffer buffer;
  std::vector<apiserver::WatchPtr> watches;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(kMaxBody);
    boost::system::error_code ec;
    http::read(stream, buffer, parser, ec);
    if (ec) {
      break;  // the server answers 413 or drops the connection
    }
    const http::request<http::string_body>& req = parser.get();
    const apiserver::RequestInfo info =
        apiserver::parseRequestInfo(sv(req.method_string()), sv(req.target()));
    const apiserver::HttpRequest request{sv(req.method_string()),
                                         sv(req[http::field::content_type]), req.body()};
    apiserver::HttpResponse res = handler.serve(info, request);
    checkResponse(res);
    if (res.watch) {
      if (res.watch->error) {
        static_cast<void>(apiserver::toJsonText(*res.watch->error));
      }
      if (res.watch->watch) {
        watches.push_back(std::move(res.watch->watch));
      }
    }
    if (!req.keep_alive()) {
      break;
    }
  }
  for (const apiserver::WatchPtr& watch : watches) {
    for (const apiserver::WatchEvent& event : watch->drain()) {
      static_cast<void>(apiserver::toJsonText(event.toJson()));
    }
    watch->stop();
  }
  return 0;
}
