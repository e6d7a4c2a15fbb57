#pragma once
// A test fixture owning an embedded API server over an in-memory store, for the end-to-end tests
// that run the real daemon against it: start the server, create objects, read where a pod went.
// Header-only, so only the test binaries that link berth_apiserver see it.

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "pkg/apiserver/server.h"
#include "pkg/apiserver/store.h"

namespace berth::test {

// The bearer token the e2e tests scrape the daemon's /metrics with: a TokenReview of it names
// user "scraper", whom the SubjectAccessReviews of scraperReviews() let read every path.
inline constexpr const char* kScraperAuthorization = "Bearer scraper-token";
inline apiserver::ReviewConfig scraperReviews() {
  apiserver::ReviewConfig reviews;
  reviews.tokens.push_back({"scraper-token", "scraper", "1", {"system:authenticated"}});
  reviews.allow.push_back({"scraper", "", {"get"}, {"*"}});
  return reviews;
}

class ApiServerTest : public ::testing::Test {
 protected:
  // Starts the server on a free loopback port; call from SetUp (wrapped in ASSERT_NO_FATAL_FAILURE
  // if more follows).
  // Reviews are answered from scraperReviews().
  void startServer() {
    apiserver::ServerOptions options;
    options.reviews = scraperReviews();
    startServer(std::move(options));
  }
  void startServer(apiserver::ServerOptions options) {
    auto started = apiserver::Server::start(store_, std::move(options));
    ASSERT_TRUE(started.ok()) << started.error().message;
    server_ = std::move(*started);
  }

  void TearDown() override {
    if (server_) server_->stop();
  }

  // Creates `object` in the namespace its metadata names (none for cluster-scoped resources).
  void create(apiserver::Resource resource, const nlohmann::json& object) {
    auto r = store_.create(resource, object["metadata"].value("namespace", ""), object);
    ASSERT_TRUE(r.ok()) << r.error().status.message;
  }

  // spec.nodeName of pod default/`name`; empty while it is unbound or missing.
  std::string nodeOf(const std::string& name) {
    auto r = store_.get(apiserver::Resource::Pods, "default", name);
    return r.ok() ? (*r)["spec"].value("nodeName", "") : "";
  }

  apiserver::Store store_;
  std::unique_ptr<apiserver::Server> server_;
};

}  // namespace berth::test
