// Two emulated hosts on one machine (root only), for the multi-SoC test and benchmark: two network
// namespaces (`ip netns`) joined by one veth pair whose two addresses are the only ones either has
// besides its own loopback, a Cyclone DDS configuration per side for that interface (multicast off,
// the other side the only peer), and the prefixes each side's processes start under (SoC B's also
// with a clock of its own, `unshare -T`, 5000 s ahead). The shared memory between a master and its
// clients is the host's /dev/shm, as on one machine. Catch2-free: errors come back as strings.
#pragma once

#include <string>
#include <vector>

namespace tactus::test {

/// SoC B's clock: `unshare -T --monotonic 5000`, CLOCK_MONOTONIC 5000 s ahead, as a host booted
/// that much earlier (a time namespace of its own; root only).
const std::vector<std::string>& clockAhead();

/// Whether this process may make time namespaces (what needs one skips, named, where not).
bool timeNamespacesPermitted();

/// The names and addresses of one pair of emulated hosts; each user its own, so that runs of the
/// test and the benchmark at once do not meet.
struct EmulatedHostsLayout {
  std::string nsA, nsB;  ///< the namespaces' names, before this process's tag (`tactusA`)
  std::string ifA, ifB;  ///< the veth ends (`vA`)
  std::string subnet;    ///< the /30's first three octets (`10.77.0`): A is .1, B is .2
};

/// The two namespaces, removed when it goes (also after a create() that failed part way).
class EmulatedHosts {
 public:
  /// `dir`: where the DDS configurations and `ip`'s output go.
  EmulatedHosts(std::string dir, const EmulatedHostsLayout& layout);
  EmulatedHosts(const EmulatedHosts&) = delete;
  EmulatedHosts& operator=(const EmulatedHosts&) = delete;
  ~EmulatedHosts();

  /// Creates the namespaces and the link; "" when done, else what failed.
  std::string create();

  /// Writes each side's Cyclone DDS configuration and sets what SoC A's and SoC B's processes
  /// start under (`ip netns exec NS env CYCLONEDDS_URI=...`, SoC B's then clockAhead()); "" when
  /// done, else what failed.
  std::string prefixes(std::vector<std::string>& socA, std::vector<std::string>& socB) const;

  const std::string& nsA() const { return nsA_; }
  const std::string& ifA() const { return layout_.ifA; }

 private:
  // The configuration of one side: its veth address, the other's as the only peer; its
  // `file://` URI, or "" where it cannot be written.
  std::string ddsConfig(const std::string& side, const std::string& own, const std::string& peer) const;

  std::string dir_;
  EmulatedHostsLayout layout_;
  std::string nsA_, nsB_;
  bool attempted_ = false;
};

}  // namespace tactus::test
