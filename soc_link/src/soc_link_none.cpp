// The link of a build without Cyclone DDS: it is not there, and says what to install.
#include "tactus/soc_link/soc_link.hpp"

namespace tactus::soc_link {

bool available() { return false; }

std::string missingText() {
  return "this tactus-master was built without the multi-SoC link: install Cyclone DDS (Debian: apt-get install "
         "cyclonedds-dev cyclonedds-tools; scripts/setup.sh does) and rebuild (meson setup -Dmultisoc=enabled)";
}

Result<std::unique_ptr<Link>> Link::open(const LinkOptions& /*options*/) {
  return fail(ErrorCode::kBadParameter, missingText());
}

}  // namespace tactus::soc_link
