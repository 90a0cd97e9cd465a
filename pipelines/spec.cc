#include "pipelines/spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/error.h"

namespace fld {

namespace {

namespace fs = std::filesystem;

std::string Where(const std::string& file, const YAML::Node& n) {
  return fmt::format("{}:{}", file, n.Mark().line + 1);
}

// YAML -> JSON for connector objects: scalars become numbers, booleans or strings.
nlohmann::json ToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Sequence: {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& x : n) a.push_back(ToJson(x));
      return a;
    }
    case YAML::NodeType::Map: {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = ToJson(kv.second);
      return o;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted in the YAML: a string
      try {
        size_t used = 0;
        long long i = std::stoll(s, &used);
        if (used == s.size()) return i;
      } catch (...) {
      }
      try {
        size_t used = 0;
        double d = std::stod(s, &used);
        if (used == s.size()) return d;
      } catch (...) {
      }
      if (s == "true" || s == "True") return true;
      if (s == "false" || s == "False") return false;
      if (s == "null" || s == "~") return nullptr;
      return s;
    }
    default:
      return nullptr;
  }
}

void OnlyKeys(const std::string& file, const YAML::Node& map, std::initializer_list<const char*> keys,
              const char* what) {
  for (const auto& kv : map) {
    std::string k = kv.first.as<std::string>();
    bool ok = false;
    std::string list;
    for (const char* allowed : keys) {
      ok = ok || k == allowed;
      list += (list.empty() ? "" : ", ") + std::string(allowed);
    }
    if (!ok) Fail(ErrorKind::kUsage, "{}: unknown key '{}' in {} (known: {})", Where(file, kv.first), k, what, list);
  }
}

}  // namespace

const char* FtModelName(FtModel m) {
  switch (m) {
    case FtModel::kNone:
      return "none";
    case FtModel::kAtLeastOnce:
      return "at_least_once";
    case FtModel::kExactlyOnce:
      return "exactly_once";
  }
  return "?";
}

PipelineSpec LoadSpec(const std::string& path) {
  PipelineSpec spec;
  spec.spec_path = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(ErrorKind::kUsage, "{}: cannot read the pipeline spec: {}", path, std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::error_code ec;
  spec.base_dir = fs::absolute(fs::path(path), ec).parent_path().string();

  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    Fail(ErrorKind::kUsage, "{}:{}:{}: invalid YAML: {}", path, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  if (!root.IsMap()) Fail(ErrorKind::kUsage, "{}: a pipeline spec is a YAML mapping with keys name, sql, ...", path);
  OnlyKeys(path, root,
           {"name", "sql", "connectors", "storage", "workers", "fault_tolerance", "min_batch_size_records",
            "max_buffering_delay_usecs", "clock_resolution_usecs", "udf"},
           "the pipeline spec");

  try {
    if (!root["name"] || !root["name"].IsScalar() || root["name"].Scalar().empty())
      Fail(ErrorKind::kUsage, "{}: the spec needs a 'name' (a string)", path);
    spec.name = root["name"].Scalar();
    for (char c : spec.name)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
        Fail(ErrorKind::kUsage, "{}: name '{}' may hold only letters, digits, '_', '-' and '.'",
             Where(path, root["name"]), spec.name);

    YAML::Node sqln = root["sql"];
    if (!sqln || !sqln.IsScalar())
      Fail(ErrorKind::kUsage, "{}: the spec needs 'sql' (the SQL program, as a string)", path);
    spec.sql = sqln.Scalar();
    spec.sql_source.name = path;
    // Map SQL positions to the YAML file: a block scalar (| or >) starts on the next line,
    // indented; an inline scalar starts where the mark points.
    {
      int line = sqln.Mark().line;  // 0-based line of the value's first character
      size_t pos = sqln.Mark().pos;
      bool block = pos < text.size() && (text[pos] == '|' || text[pos] == '>');
      if (block) {
        // First non-empty line after the indicator; its indentation is the block's.
        size_t p = text.find('\n', pos);
        int l = line + 1;
        while (p != std::string::npos && p + 1 < text.size()) {
          size_t start = p + 1;
          size_t end = text.find('\n', start);
          std::string_view ln(text.data() + start, (end == std::string::npos ? text.size() : end) - start);
          size_t ind = ln.find_first_not_of(' ');
          if (ind != std::string_view::npos && ln[ind] != '\r') {
            spec.sql_source.first_line = l + 1;
            spec.sql_source.column_offset = static_cast<int>(ind);
            break;
          }
          p = end;
          ++l;
        }
      } else {
        spec.sql_source.first_line = line + 1;
        bool quoted = pos < text.size() && (text[pos] == '"' || text[pos] == '\'');
        spec.sql_source.column_offset = sqln.Mark().column + (quoted ? 1 : 0);
      }
    }

    if (YAML::Node w = root["workers"]) {
      int n = 0;
      try {
        n = w.as<int>();
      } catch (const YAML::Exception&) {
        n = 0;
      }
      if (n < 1 || n > 256) Fail(ErrorKind::kUsage, "{}: 'workers' must be an integer from 1 to 256", Where(path, w));
      spec.workers = n;
    }

    auto non_negative = [&](const char* key, uint64_t max, uint64_t* out) {
      YAML::Node n = root[key];
      if (!n) return;
      bool ok = n.IsScalar() && !n.Scalar().empty() &&
                n.Scalar().find_first_not_of("0123456789") == std::string::npos && n.Scalar().size() <= 12;
      if (!ok || std::stoull(n.Scalar()) > max)
        Fail(ErrorKind::kUsage, "{}: '{}' must be an integer from 0 to {}", Where(path, n), key, max);
      *out = std::stoull(n.Scalar());
    };
    non_negative("min_batch_size_records", 1000000000, &spec.min_batch_size_records);
    non_negative("max_buffering_delay_usecs", 3600000000, &spec.max_buffering_delay_usecs);
    non_negative("clock_resolution_usecs", 3600000000, &spec.clock_resolution_usecs);
    spec.clock_resolution_usecs = std::max<uint64_t>(spec.clock_resolution_usecs, 1000);

    std::string storage = spec.name + ".fld";
    if (YAML::Node s = root["storage"]) {
      if (s.IsScalar()) {
        storage = s.Scalar();
      } else if (s.IsMap()) {
        OnlyKeys(path, s, {"path", "cache_mib"}, "storage");
        if (s["path"]) {
          if (!s["path"].IsScalar()) Fail(ErrorKind::kUsage, "{}: storage needs 'path' (a folder)", Where(path, s));
          storage = s["path"].Scalar();
        }
        if (YAML::Node c = s["cache_mib"]) {
          const std::string& v = c.Scalar();
          const bool ok = c.IsScalar() && !v.empty() && v.size() <= 9 &&
                          v.find_first_not_of("0123456789") == std::string::npos && std::stoull(v) >= 1;
          if (!ok)
            Fail(ErrorKind::kUsage, "{}: storage.cache_mib must be a whole number of MiB from 1 to 999999999",
                 Where(path, c));
          spec.cache_bytes = std::stoull(v) << 20;
        }
      } else {
        Fail(ErrorKind::kUsage, "{}: 'storage' must be a mapping {{path: FOLDER, cache_mib: N}}", Where(path, s));
      }
    }
    fs::path sp(storage);
    spec.storage_path = (sp.is_absolute() ? sp : fs::path(spec.base_dir) / sp).lexically_normal().string();

    if (YAML::Node u = root["udf"]) {
      if (!u.IsMap()) Fail(ErrorKind::kUsage, "{}: 'udf' must be a mapping {{library: PATH}}", Where(path, u));
      OnlyKeys(path, u, {"library"}, "udf");
      if (!u["library"] || !u["library"].IsScalar() || u["library"].Scalar().empty())
        Fail(ErrorKind::kUsage, "{}: udf needs 'library' (the path of a shared library)", Where(path, u));
      fs::path lp(u["library"].Scalar());
      spec.udf_library = (lp.is_absolute() ? lp : fs::path(spec.base_dir) / lp).lexically_normal().string();
    }

    if (YAML::Node ft = root["fault_tolerance"]) {
      if (!ft.IsMap()) Fail(ErrorKind::kUsage, "{}: 'fault_tolerance' must be a mapping", Where(path, ft));
      OnlyKeys(path, ft, {"model", "checkpoint_interval_secs"}, "fault_tolerance");
      if (YAML::Node m = ft["model"]) {
        std::string v = m.IsNull() ? "none" : m.Scalar();
        if (v == "none")
          spec.ft_model = FtModel::kNone;
        else if (v == "at_least_once")
          spec.ft_model = FtModel::kAtLeastOnce;
        else if (v == "exactly_once")
          spec.ft_model = FtModel::kExactlyOnce;
        else
          Fail(ErrorKind::kUsage, "{}: fault_tolerance.model must be none, at_least_once or exactly_once, not '{}'",
               Where(path, m), v);
      }
      if (YAML::Node ci = ft["checkpoint_interval_secs"]) {
        if (ci.IsNull()) {
          spec.checkpoint_interval_secs = 0;
        } else {
          double secs = 0;
          try {
            secs = ci.as<double>();
          } catch (const YAML::Exception&) {
            Fail(ErrorKind::kUsage, "{}: checkpoint_interval_secs must be a number of seconds (1..3600) or null",
                 Where(path, ci));
          }
          spec.checkpoint_interval_secs = std::clamp(secs, 1.0, 3600.0);
        }
      }
    }

    if (YAML::Node cs = root["connectors"]) {
      if (!cs.IsMap())
        Fail(ErrorKind::kUsage, "{}: 'connectors' maps table or view names to lists of connectors", Where(path, cs));
      for (const auto& kv : cs) {
        std::string rel = kv.first.as<std::string>();
        spec.connector_lines[rel] = kv.first.Mark().line + 1;
        if (!kv.second.IsSequence())
          Fail(ErrorKind::kUsage, "{}: connectors of '{}' must be a list", Where(path, kv.second), rel);
        for (const auto& c : kv.second) {
          if (!c.IsMap())
            Fail(ErrorKind::kUsage, "{}: a connector is a mapping (transport, format, ...)", Where(path, c));
          spec.connectors[rel].push_back({ToJson(c), Where(path, c)});
        }
      }
    }
  } catch (const YAML::Exception& e) {
    Fail(ErrorKind::kUsage, "{}:{}:{}: {}", path, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  return spec;
}

}  // namespace fld
