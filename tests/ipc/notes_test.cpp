// Notes from clients to their master (ipc/notes.hpp): the kernel's sender, the frozen format, and
// what a hostile sender can and cannot do.
#include "tactus/ipc/notes.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>

using namespace tactus;

namespace {

std::string uniqueInstance(const char* tag) { return std::string("notes_") + tag + "_" + std::to_string(::getpid()); }

}  // namespace

TEST_CASE("a note reaches the master's box with the sender's pid and uid from the kernel", "[ipc][notes]") {
  const std::string instance = uniqueInstance("roundtrip");
  auto box = ipc::NoteBox::open(instance);
  REQUIRE(box.has_value());
  CHECK(ipc::sendNote(instance, "Planning", "it may not open /dev/shm/tactus_x"));
  const auto notes = box->take();
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].client == "Planning");
  CHECK(notes[0].text == "it may not open /dev/shm/tactus_x");
  CHECK(notes[0].pid == static_cast<std::uint32_t>(::getpid()));
  CHECK(notes[0].uid == ::geteuid());
  CHECK(box->take().empty());  // taken once
}

TEST_CASE("no box: a note is lost without blocking or failing loudly; a second box of the instance is refused",
          "[ipc][notes]") {
  const std::string instance = uniqueInstance("nobox");
  CHECK_FALSE(ipc::sendNote(instance, "A", "nobody listens"));
  auto first = ipc::NoteBox::open(instance);
  REQUIRE(first.has_value());
  auto second = ipc::NoteBox::open(instance);
  REQUIRE_FALSE(second.has_value());
  CHECK(second.error().code == ErrorCode::kAlreadyExists);
  CHECK(second.error().message.find(instance) != std::string::npos);
  first = ipc::NoteBox();  // closed: the name is free again
  CHECK(ipc::NoteBox::open(instance).has_value());
}

TEST_CASE("the note format: anything else is dropped, control characters are shown as '?', long notes are cut",
          "[ipc][notes]") {
  ipc::Note note;
  const std::string good = "tactus-note 1\nA\nsays \x1b[2Jhello\n";
  REQUIRE(ipc::parseNote(good.data(), good.size(), note));
  CHECK(note.client == "A");
  CHECK(note.text == "says ?[2Jhello?");
  for (const std::string bad :
       {"", "tactus-note 2\nA\nx", "tactus-note 1\n\nx", "tactus-note 1\nA\n", "tactus-note 1\nno newline", "hello"}) {
    CAPTURE(bad);
    CHECK_FALSE(ipc::parseNote(bad.data(), bad.size(), note));
  }
  const std::string instance = uniqueInstance("format");
  auto box = ipc::NoteBox::open(instance);
  REQUIRE(box.has_value());
  // A datagram of no note (a stranger on the name) is dropped; a note longer than the limit is cut.
  {
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::string name = "tactus-notes/" + instance;
    std::memcpy(address.sun_path + 1, name.data(), name.size());
    const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    CHECK(::sendto(fd, "junk", 4, 0, reinterpret_cast<const sockaddr*>(&address), length) == 4);
    ::close(fd);
  }
  CHECK(ipc::sendNote(instance, "B", std::string(5000, 'x')));
  const auto notes = box->take();
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].client == "B");
  CHECK(notes[0].text.size() < ipc::kMaxNoteBytes);
  CHECK(notes[0].text.size() > ipc::kMaxNoteBytes - 32);
}
