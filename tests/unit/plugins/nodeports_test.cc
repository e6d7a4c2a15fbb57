// NodePorts: upstream's node_ports_test.go (TestNodePorts, TestFits), through the runtime over a
// real Snapshot whose node already runs a pod holding ports.

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "pkg/plugins/nodeports/node_ports.h"
#include "tests/support/builders.h"

namespace berth::plugins::nodeports {
namespace {

using framework::Code;
using test::MakeNode;
using test::MakePod;

constexpr const char* kErr = "node(s) didn't have free ports for the requested pod ports";

// Upstream's newPod(host, "PROTO/IP/PORT"...).
test::PodWrapper podWithPorts(const std::string& name, const std::vector<std::string>& ports) {
  auto p = MakePod().name(name).req({});
  for (const auto& spec : ports) {
    std::stringstream ss(spec);
    std::string proto, ip, port;
    std::getline(ss, proto, '/');
    std::getline(ss, ip, '/');
    std::getline(ss, port, '/');
    p.hostPort(std::stoi(port), proto, ip);
  }
  return p;
}

struct Case {
  const char* name;
  test::PodWrapper pod;
  std::vector<std::string> existing;  // ports held by a pod already on the node
  bool wantSkip = false;
  bool wantConflict = false;
};

void runCases(const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto bound = podWithPorts("existing", c.existing).node("m1").uid("existing").obj();
    test::Harness h(test::profileWith({test::plugin("NodePorts")}), {MakeNode().name("m1").obj()},
                    {bound});
    auto run = h.filter(c.pod.obj());
    ASSERT_TRUE(run.preFilter.isSuccess()) << run.preFilter.message();
    EXPECT_EQ(run.state.filterSkipped("NodePorts"), c.wantSkip);
    ASSERT_EQ(run.filter.size(), 1u);
    if (c.wantConflict) {
      EXPECT_EQ(run.filter[0].code(), Code::Unschedulable);
      EXPECT_EQ(run.filter[0].message(), kErr);
      EXPECT_EQ(run.filter[0].plugin(), "NodePorts");
    } else {
      EXPECT_TRUE(run.filter[0].isSuccess()) << run.filter[0].message();
    }
  }
}

TEST(NodePorts, MatchesUpstreamTable) {
  runCases({
      {"skip filter", MakePod().name("p"), {}, true, false},
      {"other port", podWithPorts("p", {"UDP/127.0.0.1/8080"}), {"UDP/127.0.0.1/9090"}},
      {"same udp port",
       podWithPorts("p", {"UDP/127.0.0.1/8080"}),
       {"UDP/127.0.0.1/8080"},
       false,
       true},
      {"same tcp port",
       podWithPorts("p", {"TCP/127.0.0.1/8080"}),
       {"TCP/127.0.0.1/8080"},
       false,
       true},
      {"different host ip", podWithPorts("p", {"TCP/127.0.0.1/8080"}), {"TCP/127.0.0.2/8080"}},
      {"different protocol", podWithPorts("p", {"UDP/127.0.0.1/8080"}), {"TCP/127.0.0.1/8080"}},
      {"second udp port conflict",
       podWithPorts("p", {"UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"}),
       {"UDP/127.0.0.1/8080"},
       false,
       true},
      {"first tcp port conflict",
       podWithPorts("p", {"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"}),
       {"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"},
       false,
       true},
      {"first tcp port conflict due to 0.0.0.0 hostIP",
       podWithPorts("p", {"TCP/0.0.0.0/8001"}),
       {"TCP/127.0.0.1/8001"},
       false,
       true},
      {"TCP hostPort conflict due to 0.0.0.0 hostIP",
       podWithPorts("p", {"TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"}),
       {"TCP/127.0.0.1/8001"},
       false,
       true},
      {"second tcp port conflict to 0.0.0.0 hostIP",
       podWithPorts("p", {"TCP/127.0.0.1/8001"}),
       {"TCP/0.0.0.0/8001"},
       false,
       true},
      {"second different protocol",
       podWithPorts("p", {"UDP/127.0.0.1/8001"}),
       {"TCP/0.0.0.0/8001"}},
      {"UDP hostPort conflict due to 0.0.0.0 hostIP",
       podWithPorts("p", {"UDP/127.0.0.1/8001"}),
       {"TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"},
       false,
       true},
      {"non-sidecar initContainer using hostPort",
       MakePod().name("p").initHostPort(/*sidecar=*/false, 8001),
       {"TCP/0.0.0.0/8001"},
       true,
       false},
      {"TCP hostPort conflict from sidecar initContainer",
       MakePod().name("p").initHostPort(/*sidecar=*/true, 8001),
       {"TCP/0.0.0.0/8001"},
       false,
       true},
  });
}

TEST(NodePorts, FitsMatchesUpstreamTable) {
  runCases({
      {"non-conflicting ports", podWithPorts("p", {"TCP/127.0.0.1/80"}), {"TCP/127.0.0.1/9090"}},
      {"multiple non-conflicting ports",
       podWithPorts(
           "p", {"TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"}),
       {"TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"}},
      {"same ports on different protocols",
       podWithPorts("m1", {"TCP/127.0.0.1/80"}),
       {"UDP/127.0.0.1/80"}},
      {"conflicting ports",
       podWithPorts("m1", {"TCP/127.0.0.1/80"}),
       {"TCP/127.0.0.1/80"},
       false,
       true},
      {"multiple ports, some conflicting",
       podWithPorts(
           "p", {"TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"}),
       {"TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"},
       false,
       true},
  });
}

TEST(NodePorts, UnsetIpAndProtocolMeanAnyAddressAndTcp) {
  runCases({
      {"unset ip is 0.0.0.0", podWithPorts("p", {"TCP//8080"}), {"TCP/10.0.0.1/8080"}, false, true},
      {"unset protocol is TCP",
       podWithPorts("p", {"/10.0.0.1/8080"}),
       {"TCP/10.0.0.1/8080"},
       false,
       true},
      {"unset protocol is not UDP", podWithPorts("p", {"/10.0.0.1/8080"}), {"UDP/10.0.0.1/8080"}},
  });
}

TEST(NodePorts, PortsFreedWhenTheHolderLeaves) {
  auto holder = podWithPorts("holder", {"TCP/0.0.0.0/80"}).node("m1").uid("h").obj();
  test::Harness h(test::profileWith({test::plugin("NodePorts")}), {MakeNode().name("m1").obj()},
                  {holder});
  auto pod = podWithPorts("p", {"TCP/0.0.0.0/80"}).obj();
  EXPECT_FALSE(h.filter(pod).filter[0].isSuccess());
  ASSERT_TRUE(h.snapshot().removePod("m1", *holder));
  EXPECT_TRUE(h.filter(pod).filter[0].isSuccess());
}

}  // namespace
}  // namespace berth::plugins::nodeports
