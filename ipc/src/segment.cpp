// Shared-memory segments over Boost.Interprocess (shared_memory_object + mapped_region).
#include "tactus/ipc/segment.hpp"

#include <sys/stat.h>

#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/permissions.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <cstring>

namespace bip = boost::interprocess;

namespace tactus::ipc {

Result<void> validateInstanceName(const std::string& instance) {
  if (instance.empty() || instance.size() > 64 || instance[0] == '.') {
    return fail(ErrorCode::kBadParameter,
                "instance name '" + instance + "' must be 1 to 64 characters and not start with '.'");
  }
  for (const char c : instance) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.';
    if (!ok) {
      return fail(ErrorCode::kBadParameter,
                  "instance name '" + instance + "' may only contain letters, digits, '_', '-' and '.'");
    }
  }
  return {};
}

std::string segmentName(const std::string& instance) { return "tactus_" + instance; }

std::string segmentPath(const std::string& instance) { return "/dev/shm/" + segmentName(instance); }

struct Segment::Impl {
  bip::shared_memory_object object;
  bip::mapped_region region;
};

Segment::Segment() = default;
Segment::Segment(Segment&&) noexcept = default;
Segment& Segment::operator=(Segment&&) noexcept = default;
Segment::~Segment() = default;

std::span<std::byte> Segment::bytes() const {
  if (!impl_) return {};
  return {static_cast<std::byte*>(impl_->region.get_address()), impl_->region.get_size()};
}

bool Segment::removeNameIfStillOurs(const std::string& instance) const {
  if (!impl_) return false;
  struct stat mine {};
  struct stat named {};
  if (::fstat(impl_->object.get_mapping_handle().handle, &mine) != 0) return false;
  if (::stat(segmentPath(instance).c_str(), &named) != 0) return false;
  if (mine.st_dev != named.st_dev || mine.st_ino != named.st_ino) return false;
  // The remaining window is a check-then-unlink race: a new master could replace the name
  // between the stat above and the unlink below. A new master tolerates it because it replaces
  // stale segments anyway (it finds this one, removes it and creates its own); only a master that
  // does all of that inside this few-microsecond window would lose its fresh name.
  return removeSegment(instance);
}

Result<Segment> Segment::create(const std::string& instance, std::size_t size) {
  if (auto ok = validateInstanceName(instance); !ok) return ok.error();
  const std::string name = segmentName(instance);
  try {
    auto impl = std::make_unique<Impl>();
    bip::permissions perms(S_IRUSR | S_IWUSR);  // 0600: only this user's processes may attach
    impl->object = bip::shared_memory_object(bip::create_only, name.c_str(), bip::read_write, perms);
    impl->object.truncate(static_cast<bip::offset_t>(size));
    impl->region = bip::mapped_region(impl->object, bip::read_write, 0, size);
    // ftruncate zero-fills; no memset needed (and it would touch every page twice).
    Segment segment;
    segment.impl_ = std::move(impl);
    return segment;
  } catch (const bip::interprocess_exception& e) {
    if (e.get_error_code() == bip::already_exists_error) {
      return fail(ErrorCode::kAlreadyExists, segmentPath(instance) + ": segment exists already");
    }
    return fail(ErrorCode::kIo, segmentPath(instance) + ": cannot create shared memory: " + e.what());
  }
}

Result<Segment> Segment::open(const std::string& instance) {
  if (auto ok = validateInstanceName(instance); !ok) return ok.error();
  const std::string name = segmentName(instance);
  try {
    auto impl = std::make_unique<Impl>();
    impl->object = bip::shared_memory_object(bip::open_only, name.c_str(), bip::read_write);
    bip::offset_t size = 0;
    if (!impl->object.get_size(size) || size <= 0) {
      return fail(ErrorCode::kNotFound, segmentPath(instance) + ": segment is still empty");
    }
    impl->region = bip::mapped_region(impl->object, bip::read_write);
    Segment segment;
    segment.impl_ = std::move(impl);
    return segment;
  } catch (const bip::interprocess_exception& e) {
    if (e.get_error_code() == bip::not_found_error) {
      return fail(ErrorCode::kNotFound, segmentPath(instance) + ": no such segment");
    }
    return fail(ErrorCode::kIo, segmentPath(instance) + ": cannot open shared memory: " + e.what());
  }
}

bool removeSegment(const std::string& instance) {
  try {
    return bip::shared_memory_object::remove(segmentName(instance).c_str());
  } catch (...) {
    return false;
  }
}

bool segmentExists(const std::string& instance) {
  struct stat st {};
  return ::stat(segmentPath(instance).c_str(), &st) == 0;
}

}  // namespace tactus::ipc
