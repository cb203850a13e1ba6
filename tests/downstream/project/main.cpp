// The downstream project's client: attaches to an instance no master serves, with a time limit,
// and exits 0 when init says so (proof that it compiled, linked and runs against libtactus).
#include <tactus/client.hpp>

#include <cstdio>

int main() {
  tactus::InitOptions options;
  options.instance = "downstream_no_master";
  options.timeoutMs = 0;
  auto ok = tactus::init("Client0", options);
  if (ok) return 1;
  std::printf("downstream: %s: %s\n", tactus::errorCodeName(ok.error().code), ok.error().message.c_str());
  return ok.error().code == tactus::ErrorCode::kTimeout ? 0 : 1;
}
