// YAML text -> YTree, from yaml-cpp's parser events (the only file that includes yaml-cpp).
//
// yaml-cpp's parser delivers events; we build a small flat tree from them (one vector of nodes,
// one of child indices, one arena of scalar text) instead of yaml-cpp's node graph, which is
// far heavier per node on large graphs.
#include "graph/yaml_tree.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <istream>
#include <new>
#include <streambuf>
#include <unordered_map>
#include <utility>

#include "tactus/core/text.hpp"

namespace tactus::compiler::parse {
namespace {

// Nesting deeper than this is refused. yaml-cpp recurses once per level and reports the start
// of each container before descending, so refusing at the start event bounds its stack use.
constexpr std::size_t kMaxNesting = 256;

/// Builds a YTree from yaml-cpp's events. Aliases share the anchored node.
class TreeBuilder : public YAML::EventHandler {
 public:
  TreeBuilder(YTree& tree, const std::string& origin, bool aliases) : tree_(tree), origin_(origin), aliases_(aliases) {}

  /// The line the document started on (1-based).
  u32 documentLine() const { return documentLine_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    documentLine_ = static_cast<u32>(mark.line < 0 ? 1 : mark.line + 1);
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { attach(make(NodeKind::kNull, mark), anchor); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (!aliases_) fault(mark, "aliases are not allowed here");
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) fault(mark, "alias to an unknown anchor");
    for (std::size_t i = 0; i < depth_; ++i)
      if (stack_[i].node == it->second) fault(mark, "an alias refers to a node that contains it");
    attach(it->second, YAML::NullAnchor);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    if (value.size() > 0xffffffffu || tree_.arena.size() > 0xffffffffu - value.size()) fault(mark, "text too large");
    u32 n = make(NodeKind::kScalar, mark);
    tree_.nodes[n].a = static_cast<u32>(tree_.arena.size());
    tree_.nodes[n].b = static_cast<u32>(value.size());
    tree_.arena += value;
    attach(n, anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(make(NodeKind::kSeq, mark), anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(make(NodeKind::kMap, mark), anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    u32 node;
    std::vector<u32> kids;
  };

  [[noreturn]] void fault(const YAML::Mark& mark, const std::string& what) {
    throw Failure{fail(ErrorCode::kParse, origin_ + ":" + std::to_string(mark.line + 1) + ": " + what)};
  }
  u32 make(NodeKind kind, const YAML::Mark& mark) {
    if (tree_.nodes.size() >= 0xfffffff0u) fault(mark, "too many yaml nodes");
    YNode node;
    node.kind = kind;
    node.line = static_cast<u32>(mark.line < 0 ? 1 : mark.line + 1);
    tree_.nodes.push_back(node);
    return static_cast<u32>(tree_.nodes.size() - 1);
  }
  void attach(u32 n, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) anchors_[anchor] = n;
    append(n);
  }
  void append(u32 n) {
    if (depth_ == 0) {
      tree_.root = n;
      return;
    }
    Frame& parent = stack_[depth_ - 1];
    // A block collection or an empty value starts on a later line than its key; messages
    // about such a value point at the key, where the reader looks for it.
    YNode& node = tree_.nodes[n];
    if (tree_.nodes[parent.node].kind == NodeKind::kMap && parent.kids.size() % 2 == 1 &&
        node.kind != NodeKind::kScalar)
      node.line = std::min(node.line, tree_.nodes[parent.kids.back()].line);
    parent.kids.push_back(n);
  }
  void open(u32 n, YAML::anchor_t anchor) {
    if (depth_ >= kMaxNesting)
      throw Failure{fail(ErrorCode::kParse, origin_ + ":" + std::to_string(tree_.nodes[n].line) +
                                                ": yaml nested deeper than " + std::to_string(kMaxNesting) +
                                                " levels")};
    if (anchor != YAML::NullAnchor) anchors_[anchor] = n;
    // Frames are reused so that their vectors keep their capacity.
    if (depth_ == stack_.size()) stack_.push_back(Frame{});
    stack_[depth_].node = n;
    stack_[depth_].kids.clear();
    ++depth_;
  }
  void close() {
    Frame& f = stack_[depth_ - 1];
    if (tree_.kids.size() > 0xffffffffu - f.kids.size())
      throw Failure{fail(ErrorCode::kParse, origin_ + ": too many yaml nodes")};
    tree_.nodes[f.node].a = static_cast<u32>(tree_.kids.size());
    tree_.nodes[f.node].b = static_cast<u32>(f.kids.size());
    tree_.kids.insert(tree_.kids.end(), f.kids.begin(), f.kids.end());
    u32 n = f.node;
    --depth_;
    append(n);
  }

  YTree& tree_;
  const std::string& origin_;
  std::vector<Frame> stack_;
  std::size_t depth_ = 0;
  std::unordered_map<YAML::anchor_t, u32> anchors_;
  bool aliases_ = true;
  u32 documentLine_ = 1;
};

/// Thrown by FastReader where the text leaves the plain subset it reads; yaml-cpp then reads it.
struct NotPlain {};

/// Reads the plain subset of YAML that generated and most hand-written graphs use, far faster
/// than yaml-cpp's scanner, and drives the same TreeBuilder with the events yaml-cpp would send:
/// block maps and sequences indented with spaces (a sequence entry may open a map on its own line,
/// `- Key: ...`), one-line flow maps and sequences, and plain scalars of letters, digits and
/// `_ . -` (not starting with `-` or `.`, and not a null word). Anything else (comments, quotes,
/// anchors, tags, tabs, a value on a later line at its key's indentation, an empty value, a
/// multi-line scalar or flow collection, a second document) throws NotPlain before the tree is
/// used, so the result never depends on which reader read it.
class FastReader {
 public:
  FastReader(std::string_view text, TreeBuilder& builder) : text_(text), builder_(builder) {}

  void read() {
    static const auto kPlain = [] {
      std::array<bool, 256> ok{};
      for (unsigned char c :
           std::string_view("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.- :,[]{}\n"))
        ok[c] = true;
      return ok;
    }();
    for (char c : text_)
      if (!kPlain[static_cast<unsigned char>(c)]) throw NotPlain{};
    nextLine();
    if (atEnd() || indent_ != 0) throw NotPlain{};
    builder_.OnDocumentStart(mark());
    block(0, 0);
    if (!atEnd()) throw NotPlain{};
    builder_.OnDocumentEnd();
  }

 private:
  static constexpr std::size_t kMaxDepth = 64;

  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return atEnd() ? '\n' : text_[pos_]; }
  YAML::Mark mark() const {
    YAML::Mark m;
    m.line = static_cast<int>(line_);
    return m;
  }
  void skipSpaces() {
    while (!atEnd() && text_[pos_] == ' ') ++pos_;
  }
  /// From the end of a line's content: past its newline and any blank lines, to the next line's
  /// first non-space character (indent_ its column), or to the end.
  void endLine() {
    skipSpaces();
    if (atEnd()) return;
    if (text_[pos_] != '\n') throw NotPlain{};
    ++pos_;
    ++line_;
    nextLine();
  }
  void nextLine() {
    for (;;) {
      std::size_t start = pos_;
      skipSpaces();
      if (atEnd()) return;
      if (text_[pos_] != '\n') {
        lineStart_ = start;
        indent_ = pos_ - start;
        return;
      }
      ++pos_;
      ++line_;
    }
  }
  /// The plain scalar at pos_ (empty where none starts there).
  std::string_view token() const {
    std::size_t end = pos_;
    while (end < text_.size()) {
      char c = text_[end];
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) break;
      ++end;
    }
    std::string_view t = text_.substr(pos_, end - pos_);
    if (!t.empty() && (t[0] == '-' || t[0] == '.')) return {};
    return t;
  }
  void scalar() {
    std::string_view t = token();
    if (t.empty() || t == "null" || t == "Null" || t == "NULL") throw NotPlain{};
    builder_.OnScalar(mark(), std::string(), YAML::NullAnchor, std::string(t));
    pos_ += t.size();
  }
  /// Whether a block map's key starts at pos_: a token, then `:` and a space or the line's end.
  bool keyAhead() const {
    std::string_view t = token();
    if (t.empty()) return false;
    std::size_t after = pos_ + t.size();
    if (after >= text_.size() || text_[after] != ':') return false;
    return after + 1 >= text_.size() || text_[after + 1] == ' ' || text_[after + 1] == '\n';
  }
  /// A block collection whose first line's content starts at pos_, in column `indent`.
  void block(std::size_t indent, std::size_t depth) {
    if (depth > kMaxDepth) throw NotPlain{};
    if (peek() == '-') blockSeq(indent, depth);
    else blockMap(indent, depth);
  }
  void blockMap(std::size_t indent, std::size_t depth) {
    builder_.OnMapStart(mark(), std::string(), YAML::NullAnchor, YAML::EmitterStyle::Block);
    for (;;) {
      if (!keyAhead()) throw NotPlain{};
      scalar();
      ++pos_;  // ':'
      skipSpaces();
      if (peek() == '\n') {
        endLine();
        if (atEnd() || indent_ <= indent) throw NotPlain{};
        block(indent_, depth + 1);
      } else {
        inlineValue(depth);
        endLine();
      }
      if (atEnd() || indent_ < indent) break;
      if (indent_ > indent) throw NotPlain{};
    }
    builder_.OnMapEnd();
  }
  void blockSeq(std::size_t indent, std::size_t depth) {
    builder_.OnSequenceStart(mark(), std::string(), YAML::NullAnchor, YAML::EmitterStyle::Block);
    for (;;) {
      if (peek() != '-' || pos_ + 1 >= text_.size() || text_[pos_ + 1] != ' ') throw NotPlain{};
      pos_ += 2;
      skipSpaces();
      if (keyAhead()) {
        blockMap(pos_ - lineStart_, depth + 1);
      } else {
        inlineValue(depth);
        endLine();
      }
      if (atEnd() || indent_ < indent) break;
      if (indent_ > indent) throw NotPlain{};
    }
    builder_.OnSequenceEnd();
  }
  /// A value on its key's or entry's line: a flow collection or a scalar.
  void inlineValue(std::size_t depth) { flowNode(depth + 1); }
  void flowNode(std::size_t depth) {
    if (depth > kMaxDepth) throw NotPlain{};
    char c = peek();
    if (c == '[') {
      builder_.OnSequenceStart(mark(), std::string(), YAML::NullAnchor, YAML::EmitterStyle::Flow);
      ++pos_;
      skipSpaces();
      if (peek() == ']') {
        ++pos_;
      } else {
        for (;;) {
          flowNode(depth + 1);
          skipSpaces();
          if (peek() == ']') {
            ++pos_;
            break;
          }
          if (peek() != ',') throw NotPlain{};
          ++pos_;
          skipSpaces();
        }
      }
      builder_.OnSequenceEnd();
    } else if (c == '{') {
      builder_.OnMapStart(mark(), std::string(), YAML::NullAnchor, YAML::EmitterStyle::Flow);
      ++pos_;
      skipSpaces();
      if (peek() == '}') {
        ++pos_;
      } else {
        for (;;) {
          scalar();
          if (peek() != ':' || pos_ + 1 >= text_.size() || text_[pos_ + 1] != ' ') throw NotPlain{};
          pos_ += 2;
          skipSpaces();
          flowNode(depth + 1);
          skipSpaces();
          if (peek() == '}') {
            ++pos_;
            break;
          }
          if (peek() != ',') throw NotPlain{};
          ++pos_;
          skipSpaces();
        }
      }
      builder_.OnMapEnd();
    } else {
      scalar();
    }
  }

  std::string_view text_;
  TreeBuilder& builder_;
  std::size_t pos_ = 0;
  std::size_t line_ = 0;
  std::size_t lineStart_ = 0;
  std::size_t indent_ = 0;
};

/// A read-only streambuf over a string_view, so yaml-cpp reads the text without a copy.
class ViewBuf : public std::streambuf {
 public:
  explicit ViewBuf(std::string_view text) {
    char* p = const_cast<char*>(text.data());
    setg(p, p, p + text.size());
  }
};

}  // namespace

Result<YTree> readYamlTree(std::string_view text, const std::string& origin, const TreeOptions& options) {
  if (const std::size_t nulLine = firstNulLine(text))
    return fail(ErrorCode::kParse, origin + ":" + std::to_string(nulLine) + ": the " + std::string(options.what) +
                                       " contains a NUL byte (binary data, not YAML)");
  try {
    if (!options.yamlCppOnly) {
      try {
        YTree tree;
        TreeBuilder builder(tree, origin, options.aliases);
        FastReader(text, builder).read();
        return tree;
      } catch (const NotPlain&) {}
    }
    YTree tree;
    ViewBuf buf(text);
    std::istream in(&buf);
    YAML::Parser parser(in);
    TreeBuilder builder(tree, origin, options.aliases);
    if (!parser.HandleNextDocument(builder)) return tree;
    YTree ignored;
    TreeBuilder rest(ignored, origin, true);
    if (parser.HandleNextDocument(rest))
      return fail(ErrorCode::kParse, origin + ":" + std::to_string(rest.documentLine()) +
                                         ": more than one yaml document (" + std::string(options.holds) + ")");
    return tree;
  } catch (const Failure& f) {
    return f.error;
  } catch (const YAML::Exception& e) {
    return fail(ErrorCode::kParse,
                origin + ":" + std::to_string(std::max(0, e.mark.line) + 1) + ": yaml syntax error: " + e.msg);
  } catch (const std::bad_alloc&) {
    return fail(ErrorCode::kInternal, origin + ": out of memory while parsing");
  } catch (const std::exception& e) {
    return fail(ErrorCode::kInternal, origin + ": unexpected failure while parsing: " + e.what());
  }
}

}  // namespace tactus::compiler::parse
