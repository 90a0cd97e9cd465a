// The shape of a relation: named, typed columns in order. Names compare case-insensitively
// (SQL identifiers are folded to lower case unless quoted; fld keeps them as declared).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/types/types.h"

namespace fld {

struct Field {
  Field() = default;
  Field(std::string n, SqlType t, std::optional<Value> d = std::nullopt)
      : name(std::move(n)), type(t), default_value(std::move(d)) {}

  std::string name;
  SqlType type;
  // DEFAULT of a table column: what an input record that omits the column gets (without one, a
  // nullable column gets NULL and a NOT NULL column is an error).
  std::optional<Value> default_value;
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
