// Client grouping (compiler/schedule/grouping.hpp): a client's instances on a core moved
// together where the schedule stays as good, on graphs built in code and on random ones.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "graph_builder.hpp"
#include "scheduler.hpp"
#include "scheduler_test_support.hpp"

using namespace tactus;
using namespace tactus::compiler;
using tactus::compiler::test::GraphBuilder;
using tactus::compiler::test::kMs;
using tactus::compiler::test::lengthOf;
using tactus::compiler::test::scheduleOk;

namespace {

constexpr std::int64_t kUs = 1000;

ClientId addClient(GraphBuilder& b, const std::string& name) {
  if (b.g.clients.size() == 1 && b.g.runnables.empty() && b.g.clients[ClientId{0}].name == "Client0") {
    b.g.clients[ClientId{0}].name = name;
    return ClientId{0};
  }
  b.g.clients.push_back({name});
  return ClientId{static_cast<std::uint32_t>(b.g.clients.size() - 1)};
}

// `clients` chains of `length` runnables of 20us on `cpus` CPUs (the compiler chooses), each
// chain its own client; every fifth runnable also depends on an earlier runnable of the next
// client. Equally urgent chains: the list scheduler alternates them on a core.
GraphBuilder chains(int clients, int length, int cpus) {
  GraphBuilder b;
  b.cpus(cpus);
  const auto h = b.hyperepoch("H", 20 * kMs);
  const auto e = b.epoch("E", h, 20 * kMs);
  std::vector<std::vector<RunnableId>> ids(static_cast<std::size_t>(clients));
  for (int c = 0; c < clients; ++c) {
    const ClientId client = addClient(b, "C" + std::to_string(c));
    for (int k = 0; k < length; ++k) {
      std::vector<RunnableId> deps;
      if (k > 0) deps.push_back(ids[static_cast<std::size_t>(c)].back());
      const RunnableId r =
          b.runnable("R" + std::to_string(c) + "_" + std::to_string(k), e, 20 * kUs, {b.type("CPU")}, deps);
      b[r].client = client;
      ids[static_cast<std::size_t>(c)].push_back(r);
    }
  }
  for (int c = 0; c < clients; ++c) {
    const auto& other = ids[static_cast<std::size_t>((c + 1) % clients)];
    for (int k = 5; k < length; k += 5) {
      auto& deps = b[ids[static_cast<std::size_t>(c)][static_cast<std::size_t>(k)]].dependencies;
      deps.push_back(other[static_cast<std::size_t>(k - 3)]);
      std::sort(deps.begin(), deps.end());
    }
  }
  return b;
}

// Consecutive instances of one core that belong to two clients, over every CPU timeline.
std::uint64_t switchesIn(const Schedule& s) {
  std::uint64_t n = 0;
  for (const TimelineInfo& tl : s.timelines) {
    if (s.resources[tl.resource].kind != ResourceKind::kCpu) continue;
    for (std::size_t k = 1; k < tl.instances.size(); ++k) {
      n += s.runnables[s.instances[tl.instances[k]].runnable].client !=
           s.runnables[s.instances[tl.instances[k - 1]].runnable].client;
    }
  }
  return n;
}

ScheduleOptions noGrouping() {
  ScheduleOptions o;
  o.groupClients = false;
  return o;
}

}  // namespace

TEST_CASE("grouping: chains of four clients on one core run client by client, as short as before", "[grouping]") {
  const GraphBuilder b = chains(4, 10, 1);
  const Schedule plain = scheduleOk(b.g, noGrouping());
  SearchInfo info;
  auto grouped = scheduleGraph(b.g, ScheduleOptions{}, &info);
  REQUIRE(grouped);
  const Schedule& s = *grouped;
  CHECK(verifySchedule(s, VerifyOptions{}).ok());
  INFO("switches without grouping " << switchesIn(plain) << ", with " << switchesIn(s));
  // The list scheduler alternates the equally urgent chains; one core, no idle time either way.
  CHECK(switchesIn(plain) >= 30);
  CHECK(switchesIn(s) <= 6);
  CHECK(lengthOf(s) == lengthOf(plain));
  CHECK(lengthOf(s) == 40 * (20 * kUs));
  // What the report prints: the figures before and after.
  CHECK(info.hyperepochs[HyperepochId{0}].clientSwitchesBefore == switchesIn(plain));
  CHECK(info.hyperepochs[HyperepochId{0}].clientSwitchesAfter == switchesIn(s));
}

TEST_CASE("grouping: a deadline that needs the interleaving keeps it", "[grouping]") {
  GraphBuilder b = chains(2, 6, 1);
  // C1's last runnable must end by 200us (it waits for C0's third runnable): interleaved, both
  // chains end at 240us, so C1 runs early, and grouping may not move C0's runs in front of it.
  b[RunnableId{11}].deadlineNs = 200 * kUs;
  const Schedule s = scheduleOk(b.g);
  for (const InstanceInfo& i : s.instances)
    if (i.runnable == RunnableId{11}) CHECK(i.endNs <= 200 * kUs);
  CHECK(lengthOf(s) == 12 * (20 * kUs));
}

TEST_CASE("grouping: a chain's members keep their planned times", "[grouping]") {
  GraphBuilder b = chains(3, 8, 1);
  GraphChain c;
  c.name = "Watched";
  c.runnables = {RunnableId{8}, RunnableId{9}, RunnableId{10}};
  c.maxReactionNs = 10 * kMs;
  b.g.chains.push_back(c);
  const Schedule plain = scheduleOk(b.g, noGrouping());
  const Schedule s = scheduleOk(b.g);
  CHECK(switchesIn(s) < switchesIn(plain));
  for (RunnableId r : c.runnables) {
    const auto before = test::instancesOf(plain, r);
    const auto after = test::instancesOf(s, r);
    REQUIRE(before.size() == after.size());
    for (std::size_t k = 0; k < before.size(); ++k) CHECK(before[k]->startNs == after[k]->startNs);
  }
}

TEST_CASE("grouping: random multi-client graphs stay valid, no longer, no more misses, fewer switches", "[grouping]") {
  int fewer = 0;
  for (unsigned seed = 1; seed <= 150; ++seed) {
    GraphBuilder b = test::randomGraph(24, 2, seed);
    std::mt19937 rng(static_cast<std::mt19937::result_type>(seed) * 7919u);
    const int clients = 2 + static_cast<int>(rng() % 4);
    for (int c = 1; c < clients; ++c) addClient(b, "C" + std::to_string(c));
    for (RunnableId r : b.g.runnables.ids()) {
      // A submittee goes with its submitter's client (the streams are Client0's: submitters too).
      if (b[r].kind == RunnableKind::kSubmitter || b[r].kind == RunnableKind::kSubmittee) continue;
      b[r].client = ClientId{static_cast<std::uint32_t>(rng() % static_cast<unsigned>(clients))};
    }
    INFO("seed " << seed);
    const Schedule plain = scheduleOk(b.g, noGrouping());
    const Schedule s = scheduleOk(b.g);
    CHECK(lengthOf(s) <= lengthOf(plain));
    CHECK(switchesIn(s) <= switchesIn(plain));
    if (switchesIn(s) < switchesIn(plain)) ++fewer;
  }
  INFO(fewer << " of 150 graphs with fewer switches");
  CHECK(fewer >= 50);
}

TEST_CASE("grouping: where no core is shared by two clients the schedule is the search's", "[grouping]") {
  GraphBuilder b = chains(1, 12, 2);
  const Schedule plain = scheduleOk(b.g, noGrouping());
  SearchInfo info;
  auto s = scheduleGraph(b.g, ScheduleOptions{}, &info);
  REQUIRE(s);
  REQUIRE(s->instances.size() == plain.instances.size());
  for (std::size_t i = 0; i < plain.instances.size(); ++i) {
    const InstanceId id{static_cast<std::uint32_t>(i)};
    CHECK(s->instances[id].runnable == plain.instances[id].runnable);
    CHECK(s->instances[id].startNs == plain.instances[id].startNs);
    CHECK(s->instances[id].resources == plain.instances[id].resources);
  }
  CHECK(info.hyperepochs[HyperepochId{0}].clientSwitchesBefore == 0);
}
