// CRC32C (Castagnoli polynomial 0x82F63B78), the checksum every log record carries.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fld {

// Extends `crc` (start with 0) over n bytes.
uint32_t Crc32c(uint32_t crc, const void* data, size_t n);

}  // namespace fld
