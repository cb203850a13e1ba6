// Notes from a client that cannot take part to its master: why it could not attach or register
// (another user's segment it may not open, a master of another layout version, a name the
// schedule does not have). A client that cannot open or trust the master's segment has no other
// way to tell it; the note travels over a Unix datagram socket in the abstract namespace named
// for the instance, which any process of the same network namespace may reach whatever its user
// and whatever layout version it was built with. The kernel attaches the sender's pid and uid
// (SO_PASSCRED), so a note names its sender truly; its text is the sender's word and is shown,
// never acted on. Best effort: a note nobody receives is lost, and nothing waits for one. The
// abstract namespace is per network namespace (a master under systemd's PrivateNetwork hears only
// clients in its namespace), and any local process may bind the name before the master does.
//
// The wire format is frozen across layout versions: "tactus-note 1\n" CLIENT "\n" TEXT, at most
// kMaxNoteBytes in one datagram. A TEXT that starts with kNoteWarning is a warning: the client may
// still take part (it registered a name its schedule lacks and may go on without it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tactus/core/result.hpp"

namespace tactus::ipc {

/// The largest note (one datagram); longer texts are cut.
inline constexpr std::size_t kMaxNoteBytes = 1024;

/// The start of a note's text that makes it a warning (the client may still take part).
inline constexpr const char* kNoteWarning = "warning: ";

/// One note as the master received it.
struct Note {
  std::uint32_t pid = 0;  ///< the sender's pid (from the kernel)
  std::uint32_t uid = 0;  ///< the sender's uid (from the kernel)
  std::string client;     ///< the client name it gave (printable ASCII only)
  std::string text;       ///< what it says (printable ASCII only)
  /// Whether the text starts with kNoteWarning.
  bool warning() const { return text.rfind(kNoteWarning, 0) == 0; }
};

/// The master's end: receives the notes sent to one instance. Move-only; closing unbinds the name.
class NoteBox {
 public:
  /// Binds the instance's note name; kAlreadyExists when another process holds it.
  static Result<NoteBox> open(const std::string& instance);
  NoteBox() = default;
  NoteBox(NoteBox&& other) noexcept;
  NoteBox& operator=(NoteBox&& other) noexcept;
  NoteBox(const NoteBox&) = delete;
  NoteBox& operator=(const NoteBox&) = delete;
  ~NoteBox();

  /// The notes that arrived since the last call (never blocks; at most `limit` of them; datagrams
  /// that are no note of this format are dropped).
  std::vector<Note> take(std::size_t limit = 16);

 private:
  int fd_ = -1;
};

/// Sends a note for `instance` from client `client`: never fails loudly (false when no master
/// receives notes for the instance), and waits at most about 50 ms, only while the master's box is
/// full (another process flooding it).
bool sendNote(const std::string& instance, const std::string& client, const std::string& text) noexcept;

/// Parses one datagram of the note format into `note` (client and text; pid and uid untouched);
/// false when it is no note. Exposed for tests and the fuzz target.
bool parseNote(const char* data, std::size_t size, Note& note);

}  // namespace tactus::ipc
