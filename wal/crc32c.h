// CRC32C (Castagnoli polynomial 0x82F63B78), the checksum every log record carries and the
// per-row term of a relation's content hash. Computed with the CPU's crc32 instruction where it
// has one (x86-64 with SSE4.2, checked once at run time), else by slicing-by-8 tables; both give
// the same value.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fld {

// Extends `crc` (start with 0) over n bytes.
uint32_t Crc32c(uint32_t crc, const void* data, size_t n);
// The same, always by the tables (tests compare the two).
uint32_t Crc32cPortable(uint32_t crc, const void* data, size_t n);

}  // namespace fld
