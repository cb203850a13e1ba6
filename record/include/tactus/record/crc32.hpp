// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), slicing-by-8: the recording's checksum.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tactus::record {

/// Continues a CRC-32 over `size` more bytes: crc32(crc32(0, a), b) == crc32 of a+b. 0 starts.
std::uint32_t crc32(std::uint32_t crc, const void* data, std::size_t size);

}  // namespace tactus::record
