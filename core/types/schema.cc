#include "core/types/schema.h"

#include <cctype>

namespace fld {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

std::string ToLower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::string ToUpper(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r;
}

int Schema::IndexOf(std::string_view name) const {
  for (size_t i = 0; i < fields.size(); ++i)
    if (EqualsIgnoreCase(fields[i].name, name)) return static_cast<int>(i);
  return -1;
}

std::vector<PhysType> Schema::PhysTypes() const {
  std::vector<PhysType> t;
  for (const auto& f : fields) t.push_back(f.type.phys());
  return t;
}

}  // namespace fld
