#include "emulated_hosts.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "runtime_harness.hpp"

namespace tactus::test {

const std::vector<std::string>& clockAhead() {
  static const std::vector<std::string> prefix{
      std::filesystem::exists("/usr/bin/unshare") ? "/usr/bin/unshare" : "/bin/unshare", "-T", "--monotonic", "5000"};
  return prefix;
}

bool timeNamespacesPermitted() { return std::system("unshare -T --monotonic 5000 true >/dev/null 2>&1") == 0; }

EmulatedHosts::EmulatedHosts(std::string dir, const EmulatedHostsLayout& layout)
    : dir_(std::move(dir)), layout_(layout) {
  const std::string tag = std::to_string(::getpid() % 100000);
  nsA_ = layout_.nsA + tag;
  nsB_ = layout_.nsB + tag;
}

EmulatedHosts::~EmulatedHosts() {
  if (attempted_)
    (void)std::system(("ip netns del " + nsA_ + " 2>/dev/null; ip netns del " + nsB_ + " 2>/dev/null").c_str());
}

std::string EmulatedHosts::create() {
  attempted_ = true;
  const std::string& a = layout_.ifA;
  const std::string& b = layout_.ifB;
  const std::string script = "set -e; ip netns add " + nsA_ + "; ip netns add " + nsB_ + "; ip link add " + a +
                             " netns " + nsA_ + " type veth peer name " + b + " netns " + nsB_ + "; ip -n " + nsA_ +
                             " addr add " + layout_.subnet + ".1/30 dev " + a + "; ip -n " + nsB_ + " addr add " +
                             layout_.subnet + ".2/30 dev " + b + "; ip -n " + nsA_ + " link set " + a + " up; ip -n " +
                             nsB_ + " link set " + b + " up; ip -n " + nsA_ + " link set lo up; ip -n " + nsB_ +
                             " link set lo up";
  if (std::system(("(" + script + ") >" + dir_ + "/netns.out 2>&1").c_str()) != 0) return readFile(dir_ + "/netns.out");
  return "";
}

std::string EmulatedHosts::ddsConfig(const std::string& side, const std::string& own, const std::string& peer) const {
  const std::string path = dir_ + "/dds_" + side + ".xml";
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return "";
  std::fprintf(f,
               "<CycloneDDS xmlns=\"https://cdds.io/config\"><Domain Id=\"any\"><General><Interfaces>"
               "<NetworkInterface address=\"%s\"/></Interfaces><AllowMulticast>false</AllowMulticast>"
               "</General><Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>40"
               "</MaxAutoParticipantIndex><Peers><Peer address=\"%s\"/></Peers></Discovery></Domain>"
               "</CycloneDDS>\n",
               own.c_str(), peer.c_str());
  std::fclose(f);
  return "file://" + path;
}

std::string EmulatedHosts::prefixes(std::vector<std::string>& socA, std::vector<std::string>& socB) const {
  const std::string addressA = layout_.subnet + ".1", addressB = layout_.subnet + ".2";
  const std::string uriA = ddsConfig("A", addressA, addressB), uriB = ddsConfig("B", addressB, addressA);
  if (uriA.empty() || uriB.empty()) return "cannot write a Cyclone DDS configuration in " + dir_;
  socA = {"/usr/sbin/ip", "netns", "exec", nsA_, "env", "CYCLONEDDS_URI=" + uriA};
  socB = {"/usr/sbin/ip", "netns", "exec", nsB_, "env", "CYCLONEDDS_URI=" + uriB};
  socB.insert(socB.end(), clockAhead().begin(), clockAhead().end());
  return "";
}

}  // namespace tactus::test
