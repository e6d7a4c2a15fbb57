#pragma once
// BerthDaemonTest: the embedded API server plus the real `berth run` against it, for end-to-end
// tests of the daemon (BERTH_BINARY is the binary under test). One daemon alone: no leader
// election (a leader that cannot renew exits, which outage tests provoke) and a free port, so
// parallel test binaries stay apart.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/api_server_fixture.h"
#include "tests/support/berth_process.h"

namespace berth::test {

class BerthDaemonTest : public ApiServerTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(startServer());
    const std::string stem = testing::TempDir() + "berth-daemon-" + std::to_string(getpid());
    kubeconfig_ = stem + ".kubeconfig";
    auto written = writeKubeconfig(kubeconfig_, server_->url());
    ASSERT_TRUE(written.ok()) << written.error().message;
    log_ = stem + ".log";
    std::remove(log_.c_str());
  }

  void TearDown() override {
    if (berth_) {
      berth_->terminate(std::chrono::seconds(10));
      if (HasFailure()) std::cerr << "--- berth log (tail) ---\n" << berth_->logTail() << "\n";
    }
    ApiServerTest::TearDown();
    std::remove(kubeconfig_.c_str());
  }

  void startBerth(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"run", "--kubeconfig", kubeconfig_, "--v",
                                     "3",   "--port",       "0",         "--leader-elect=false"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto spawned = BerthProcess::spawn(BERTH_BINARY, args, log_);
    ASSERT_TRUE(spawned.ok()) << spawned.error().message;
    berth_ = std::move(*spawned);
  }

  std::string kubeconfig_;
  std::string log_;
  BerthProcessPtr berth_;
};

}  // namespace berth::test
