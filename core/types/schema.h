// The shape of a relation: named, typed columns in order. Names compare case-insensitively
// (SQL identifiers are folded to lower case unless quoted; fld keeps them as declared).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/types/types.h"

namespace fld {

struct Field {
  std::string name;
  SqlType type;
};

struct Schema {
  std::vector<Field> fields;

  size_t size() const { return fields.size(); }
  // Index of the column named `name` (case-insensitive), or -1.
  int IndexOf(std::string_view name) const;
  std::vector<PhysType> PhysTypes() const;
};

bool EqualsIgnoreCase(std::string_view a, std::string_view b);
std::string ToLower(std::string_view s);
std::string ToUpper(std::string_view s);

}  // namespace fld
