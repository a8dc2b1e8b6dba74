// The verbs data path on a real RDMA device: one queue pair connected to itself through the port
// (loopback), then a write, a read and a latency exchange on host memory. Skips where there is no
// device (docs/links.md, "Hardware test"); nothing here stands in for one.
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "health/verbs_probe.hpp"
#include "links/verbs_link_transport.hpp"

namespace commcert {
namespace {

TEST(VerbsHardware, AQueuePairConnectedToItselfWritesReadsAndPingPongs) {
  const VerbsProbe probe = probe_verbs();
  if (!probe.built) GTEST_SKIP() << "no RDMA device: this build has no libibverbs";
  if (probe.devices.empty()) {
    GTEST_SKIP() << "no RDMA device" << (probe.error.empty() ? "" : ": " + probe.error);
  }
  VerbsTransportOptions options;
  options.device = probe.devices.front();
  options.buffer_bytes = 4 << 20;
  options.window = 4;
  options.timeout_s = 10;
  std::unique_ptr<VerbsLinkTransport> transport;
  try {
    transport = make_verbs_link_transport(options);
  } catch (const RuntimeFailure& e) {
    GTEST_SKIP() << "RDMA device " << options.device << " not usable: " << e.what();
  }
  const std::string mine = transport->prepare_connection(0);
  transport->complete_connection(0, mine);
  EXPECT_EQ(transport->peer_device(), transport->device_port());
  EXPECT_EQ(transport->registration(), "host");
  for (const LinkTest test :
       {LinkTest::kWriteBandwidth, LinkTest::kReadBandwidth, LinkTest::kWriteLatency}) {
    LinkTransfer transfer;
    transfer.test = test;
    transfer.peer = 0;
    transfer.initiator = true;
    transfer.bytes = test == LinkTest::kWriteLatency ? 8 : 1 << 20;
    transfer.window = test == LinkTest::kWriteLatency ? 1 : 4;
    transfer.warmup = 1;
    transfer.iterations = 3;
    const std::vector<double> samples = transport->run(transfer);
    ASSERT_EQ(samples.size(), 3U) << name_of(test);
    for (const double s : samples)
      EXPECT_GT(s, 0) << name_of(test);
  }
}

}  // namespace
}  // namespace commcert
