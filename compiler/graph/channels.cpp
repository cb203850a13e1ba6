// Building the graph's channels and cause-effect chains (tactus extension): names, ends and links
// checked with located messages; versions and bounds are computed on the schedule
// (compiler/channel_analysis.cpp).
#include <algorithm>
#include <unordered_set>

#include "graph/builder.hpp"
#include "tactus/core/limits.hpp"
#include "tactus/core/text.hpp"

namespace tactus::compiler::parse {

void Builder::refuseRoundRobin(RunnableId r, u32 atLine, const std::string& who) const {
  const GraphRunnable& run = g_.runnables[r];
  if (run.kind == RunnableKind::kAliasGroup || run.aliasGroup != kNone)
    die(ErrorCode::kValidation, atLine,
        who + ": runnable " + quoted(g_.clients[run.client].name + "." + run.name) +
            " is round robin (its runs take turns by frame); name a runnable that runs in every frame");
}

void Builder::buildChannels(u32 list) {
  expect(list, NodeKind::kSeq, "Channels");
  if (t_.size(list) > limits::kMaxChannels)
    die(ErrorCode::kValidation, line(list),
        std::to_string(t_.size(list)) + " channels (at most " + std::to_string(limits::kMaxChannels) + ")");
  std::unordered_set<std::string_view> names;
  auto qualified = [&](RunnableId r) { return g_.clients[g_.runnables[r].client].name + "." + g_.runnables[r].name; };
  for (std::size_t i = 0; i < t_.size(list); ++i) {
    auto [key, value] = singleEntry(t_.kid(list, i), "a channel");
    const std::string_view name = t_.text(key);
    checkName(name, key, "channel", false);
    if (!names.insert(name).second) die(ErrorCode::kValidation, line(key), "duplicate channel " + quoted(name));
    const std::string who = "channel " + quoted(name);
    GraphChannel ch;
    ch.name = std::string(name);
    ch.loc = {origin_, static_cast<int>(line(key))};
    u32 writerNode = kNone, readersNode = kNone, sizeNode = kNone;
    forEachKey(value, who, kChannelTable, [&](std::string_view k, u32 kn, u32 v) {
      if (k == "Writer") writerNode = v;
      else if (k == "Readers") readersNode = v;
      else if (k == "Size") sizeNode = v;
      else notRead(k, kn, who);
    });
    if (writerNode == kNone) die(ErrorCode::kValidation, line(key), who + " has no Writer");
    if (readersNode == kNone) die(ErrorCode::kValidation, line(key), who + " has no Readers");
    if (sizeNode == kNone) die(ErrorCode::kValidation, line(key), who + " has no Size (bytes of one buffer)");
    ch.sizeBytes = integer(sizeNode, who + " Size", 1, limits::kMaxChannelBytes);
    ch.writer = resolveRef(Ref{scalar(writerNode, who + " Writer"), line(writerNode)}, who + " Writer");
    refuseRoundRobin(ch.writer, line(writerNode), who);
    const GraphRunnable& writer = g_.runnables[ch.writer];
    const HyperepochId h = g_.epochs[writer.epoch].hyperepoch;
    const std::vector<Ref> readers = refList(readersNode, who + " Readers");
    if (readers.empty()) die(ErrorCode::kValidation, line(readersNode), who + " has no reader (Readers is empty)");
    for (const Ref& ref : readers) {
      const RunnableId r = resolveRef(ref, who + " Readers");
      refuseRoundRobin(r, ref.line, who);
      if (r == ch.writer)
        die(ErrorCode::kValidation, ref.line, who + ": its writer " + quoted(ref.text) + " is also a reader");
      if (std::find(ch.readers.begin(), ch.readers.end(), r) != ch.readers.end())
        die(ErrorCode::kValidation, ref.line, who + ": reader " + quoted(ref.text) + " is listed twice");
      const GraphRunnable& reader = g_.runnables[r];
      const HyperepochId rh = g_.epochs[reader.epoch].hyperepoch;
      if (rh != h)
        die(ErrorCode::kValidation, ref.line,
            who + ": reader " + quoted(ref.text) + " runs in hyperepoch " + quoted(g_.hyperepochs[rh].name) +
                ", its writer " + quoted(qualified(ch.writer)) + " in " + quoted(g_.hyperepochs[h].name) +
                ": a channel across hyperepochs is not supported (hyperepochs do not share a time base)");
      const u32 ws = g_.clients[writer.client].soc, rs = g_.clients[reader.client].soc;
      if (ws != rs)
        die(ErrorCode::kValidation, ref.line,
            who + ": reader " + quoted(ref.text) + " runs on SoC " + quoted(g_.socs[rs].name) + ", its writer " +
                quoted(qualified(ch.writer)) + " on SoC " + quoted(g_.socs[ws].name) +
                ": a channel across SoCs is not supported (its buffers live in one machine's shared memory)");
      ch.readers.push_back(r);
    }
    std::sort(ch.readers.begin(), ch.readers.end());
    g_.channels.push_back(std::move(ch));
  }
}

void Builder::buildChains(u32 list) {
  expect(list, NodeKind::kSeq, "Chains");
  if (t_.size(list) > limits::kMaxChains)
    die(ErrorCode::kValidation, line(list),
        std::to_string(t_.size(list)) + " chains (at most " + std::to_string(limits::kMaxChains) + ")");
  std::unordered_set<std::string_view> names;
  for (std::size_t i = 0; i < t_.size(list); ++i) {
    auto [key, value] = singleEntry(t_.kid(list, i), "a chain");
    const std::string_view name = t_.text(key);
    checkName(name, key, "chain", false);
    if (!names.insert(name).second) die(ErrorCode::kValidation, line(key), "duplicate chain " + quoted(name));
    const std::string who = "chain " + quoted(name);
    GraphChain chain;
    chain.name = std::string(name);
    chain.loc = {origin_, static_cast<int>(line(key))};
    u32 runnablesNode = kNone;
    forEachKey(value, who, kChainTable, [&](std::string_view k, u32 kn, u32 v) {
      if (k == "Runnables") runnablesNode = v;
      else if (k == "MaxReaction") chain.maxReactionNs = duration(v, who + " MaxReaction", false, false);
      else if (k == "MaxAge") chain.maxAgeNs = duration(v, who + " MaxAge", false, false);
      else notRead(k, kn, who);
    });
    if (runnablesNode == kNone) die(ErrorCode::kValidation, line(key), who + " has no Runnables");
    const std::vector<Ref> refs = refList(runnablesNode, who + " Runnables");
    if (refs.size() < 2)
      die(ErrorCode::kValidation, line(runnablesNode),
          who + " names " + std::to_string(refs.size()) + " runnable(s); a chain is a path of two or more");
    for (std::size_t k = 0; k < refs.size(); ++k) {
      const RunnableId r = resolveRef(refs[k], who + " Runnables");
      refuseRoundRobin(r, refs[k].line, who);
      if (std::find(chain.runnables.begin(), chain.runnables.end(), r) != chain.runnables.end())
        die(ErrorCode::kValidation, refs[k].line, who + ": runnable " + quoted(refs[k].text) + " is on it twice");
      if (k > 0) {
        const RunnableId a = chain.runnables.back();
        const GraphRunnable& ra = g_.runnables[a];
        const GraphRunnable& rb = g_.runnables[r];
        const bool dependency = (ra.epoch == rb.epoch && std::find(rb.dependencies.begin(), rb.dependencies.end(), a) !=
                                                             rb.dependencies.end()) ||
                                ra.submits == r;
        const bool channel = std::any_of(g_.channels.begin(), g_.channels.end(), [&](const GraphChannel& c) {
          return c.writer == a && std::find(c.readers.begin(), c.readers.end(), r) != c.readers.end();
        });
        if (!dependency && !channel)
          die(ErrorCode::kValidation, refs[k].line,
              who + ": " + quoted(refs[k].text) + " neither depends on " + quoted(refs[k - 1].text) +
                  " nor reads a channel it writes (link them with Dependencies, Submits or a channel)");
      }
      chain.runnables.push_back(r);
    }
    g_.chains.push_back(std::move(chain));
  }
}

}  // namespace tactus::compiler::parse
