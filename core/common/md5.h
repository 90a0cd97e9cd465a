// MD5 (RFC 1321): the MD5() SQL function, and the "N values hashing to <md5>" results of
// sqllogictest files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fld {

class Md5 {
 public:
  Md5();
  void Update(std::string_view data);
  // The digest as 32 lower-case hex digits. Finishes the hash: call once.
  std::string HexDigest();

 private:
  void Block(const unsigned char* p);
  uint32_t state_[4];
  uint64_t length_ = 0;  // bytes
  unsigned char buffer_[64];
  size_t buffered_ = 0;
};

std::string Md5Hex(std::string_view data);

// Checks the RFC 1321 test vectors; on failure fills *error and returns false.
bool Md5SelfTest(std::string* error);

}  // namespace fld
