#include "pipelines/connectors/datagen.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <random>
#include <thread>

#include "core/common/error.h"
#include "core/types/variant.h"
#include "formats/json.h"

namespace fld {

namespace {

using Json = nlohmann::json;

// ---- Randomness ----
// Every row gets a state mixed from (seed, plan, row); every column draws from its own
// sub-stream of it. The mixer is the splitmix64 finalizer (a bijection with full avalanche).

constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ULL;

inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// floor(r * n / 2^64): an unbiased-enough index in [0, n) from the high bits of r.
inline uint64_t MulHi(uint64_t r, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(r) * n) >> 64);
}

inline double Unit01(uint64_t r) {
  return static_cast<double>(r >> 11) * 0x1.0p-53;
}

// The sub-stream of one column in one row.
struct Rng {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = Mix64(s);
    s += kGamma;
    return z;
  }
};

inline uint64_t PlanKey(uint64_t seed, size_t plan) {
  return Mix64(seed ^ Mix64((plan + 1) * 0xD1B54A32D192ED03ULL));
}
inline uint64_t RowState(uint64_t plan_key, uint64_t row) {
  return Mix64(plan_key + row * kGamma);
}

// ---- Zipf sampling ----

// Walker/Vose alias table over k = 0..n-1 with P(k) ~ (k+1)^-e: O(1) per sample.
struct AliasEntry {
  uint64_t threshold;  // accept k when the low 32 bits of the draw are below this (in [0, 2^32])
  uint64_t alias;
};

std::vector<AliasEntry> BuildAlias(uint64_t n, double e) {
  std::vector<double> p(n);
  double total = 0;
  for (uint64_t k = 0; k < n; ++k) total += p[k] = std::pow(static_cast<double>(k + 1), -e);
  for (auto& x : p) x = x * static_cast<double>(n) / total;
  std::vector<AliasEntry> table(n);
  std::vector<uint32_t> small, large;
  for (uint64_t k = 0; k < n; ++k) (p[k] < 1.0 ? small : large).push_back(static_cast<uint32_t>(k));
  auto set = [&](uint64_t k, double prob, uint64_t alias) {
    double t = std::clamp(prob, 0.0, 1.0) * 4294967296.0;
    table[k] = {static_cast<uint64_t>(t), alias};
  };
  while (!small.empty() && !large.empty()) {
    uint32_t s = small.back(), l = large.back();
    small.pop_back();
    large.pop_back();
    set(s, p[s], l);
    p[l] = (p[l] + p[s]) - 1.0;
    (p[l] < 1.0 ? small : large).push_back(l);
  }
  for (uint32_t k : large) set(k, 1.0, k);
  for (uint32_t k : small) set(k, 1.0, k);  // only rounding leftovers
  return table;
}

// Rejection-inversion sampling (Hörmann & Derflinger 1996) for large n: k in 1..n with
// P(k) ~ k^-e, a few transcendental calls per sample, no table.
class ZipfRejectionInversion {
 public:
  ZipfRejectionInversion() = default;
  ZipfRejectionInversion(double n, double e) : n_(n), e_(e) {
    h_x1_ = H(1.5) - 1.0;
    h_n_ = H(n_ + 0.5);
    s_ = 2.0 - HInverse(H(2.5) - Density(2.0));
  }
  uint64_t Sample(Rng& rng) const {
    for (;;) {
      double u = h_n_ + Unit01(rng.Next()) * (h_x1_ - h_n_);
      double x = HInverse(u);
      double k = std::floor(x + 0.5);
      if (k < 1) k = 1;
      if (k > n_) k = n_;
      if (k - x <= s_ || u >= H(k + 0.5) - Density(k)) return static_cast<uint64_t>(k);
    }
  }

 private:
  // log1p(x)/x and expm1(x)/x, stable near 0.
  static double Helper1(double x) {
    return std::fabs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
  }
  static double Helper2(double x) {
    return std::fabs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
  }
  double Density(double x) const { return std::exp(-e_ * std::log(x)); }
  // An antiderivative of Density.
  double H(double x) const {
    double lx = std::log(x);
    return Helper2((1.0 - e_) * lx) * lx;
  }
  double HInverse(double x) const {
    double t = x * (1.0 - e_);
    if (t < -1.0) t = -1.0;
    return std::exp(Helper1(t) * x);
  }

  double n_ = 1, e_ = 1, h_x1_ = 0, h_n_ = 0, s_ = 0;
};

// ---- Word lists for the string fakers ----

constexpr const char* kWords[] = {
    "apple",  "river",   "stone",  "cloud",   "amber",  "harbor",  "lantern", "meadow",  "copper",  "willow",
    "falcon", "orchard", "signal", "thunder", "velvet", "canyon",  "ember",   "glacier", "hollow",  "island",
    "jasper", "kettle",  "ledger", "marble",  "nectar", "oasis",   "pepper",  "quartz",  "ribbon",  "saddle",
    "timber", "umbra",   "valley", "walnut",  "yonder", "zephyr",  "anchor",  "bramble", "cobalt",  "dune",
    "echo",   "fable",   "garnet", "hazel",   "ivory",  "juniper", "kindle",  "lagoon",  "mosaic",  "north",
    "opal",   "prairie", "quill",  "rustic",  "summit", "tundra",  "utopia",  "vortex",  "whisper", "yarrow"};
constexpr const char* kFirstNames[] = {"Ada",   "Bruno", "Clara", "Dmitri", "Elena", "Farid",   "Greta", "Hiro",
                                       "Ines",  "Jonas", "Kavya", "Liam",   "Maya",  "Nikolai", "Olga",  "Pablo",
                                       "Quinn", "Rosa",  "Sami",  "Tara",   "Umar",  "Vera",    "Wei",   "Ximena",
                                       "Yusuf", "Zoe",   "Anton", "Bea",    "Cyrus", "Dalia"};
constexpr const char* kLastNames[] = {
    "Abbott",   "Becker", "Castillo", "Dubois",   "Eriksen",  "Fischer", "Garcia",   "Hansen", "Ivanova", "Jensen",
    "Kowalski", "Lopez",  "Moreau",   "Nakamura", "Okafor",   "Petrov",  "Quintero", "Rossi",  "Schmidt", "Tanaka",
    "Ueda",     "Varga",  "Weber",    "Xu",       "Yamamoto", "Zhang",   "Novak",    "Silva",  "Murphy",  "Larsen"};
constexpr const char* kCities[] = {
    "Lisbon", "Oslo",    "Nairobi", "Kyoto",   "Lima",     "Dublin",  "Krakow",  "Montreal", "Seville", "Tbilisi",
    "Hanoi",  "Bergen",  "Porto",   "Quito",   "Valencia", "Zurich",  "Tallinn", "Adelaide", "Cusco",   "Ghent",
    "Malmo",  "Bologna", "Leipzig", "Sapporo", "Durban",   "Halifax", "Tampere", "Granada",  "Riga",    "Salta"};
constexpr const char* kDomains[] = {"example.com", "example.org", "mail.test", "inbox.test", "post.example"};
constexpr const char* kStreetSuffixes[] = {"Street", "Avenue", "Road", "Lane", "Way", "Drive", "Court", "Place"};
// The two-letter codes of the 50 US states (Feldera's state_abbr).
constexpr const char* kStateAbbrs[] = {"AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "FL", "GA", "HI", "ID", "IL",
                                       "IN", "IA", "KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT",
                                       "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI",
                                       "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY"};
constexpr const char* kBuzzwords[] = {"synergy",   "paradigm",  "bandwidth", "leverage",     "scalable",   "holistic",
                                      "agile",     "robust",    "seamless",  "proactive",    "disruptive", "granular",
                                      "ecosystem", "mindshare", "turnkey",   "cloud-native", "real-time",  "modular"};

template <size_t N>
inline const char* Pick(const char* const (&list)[N], uint64_t r) {
  return list[MulHi(r, N)];
}

// ---- Field generators ----

enum class Strategy : uint8_t {
  kIncrement,
  kUniform,
  kZipf,
  kWord,
  kWords,
  kSentence,
  kName,
  kEmail,
  kCityName,
  kStreetName,
  kStateAbbr,
  kBuzzword,
};

constexpr std::pair<const char*, Strategy> kStrategies[] = {{"increment", Strategy::kIncrement},
                                                            {"uniform", Strategy::kUniform},
                                                            {"zipf", Strategy::kZipf},
                                                            {"word", Strategy::kWord},
                                                            {"words", Strategy::kWords},
                                                            {"sentence", Strategy::kSentence},
                                                            {"name", Strategy::kName},
                                                            {"email", Strategy::kEmail},
                                                            {"city_name", Strategy::kCityName},
                                                            {"street_name", Strategy::kStreetName},
                                                            {"state_abbr", Strategy::kStateAbbr},
                                                            {"buzzword", Strategy::kBuzzword}};

bool IsFaker(Strategy s) {
  return s >= Strategy::kWord;
}

// The most elements, bytes or entries a generated BINARY, ARRAY or MAP value may have.
constexpr uint64_t kMaxGeneratedLength = 1 << 20;

// What a field's index k (in [0, n)) becomes.
enum class Output : uint8_t {
  kInt,     // i64 column: base + k * mult
  kText,    // str column: decimal text of base + k * mult
  kValues,  // values[k] (any column type)
  kFloat,   // f64 column, continuous (own loops)
  kFaker,   // str column from the word lists (own loop)
  kWide,    // str column: EncodeInt128(wbase + k * wmult) (DECIMAL of more than 18 digits)
  kNested,  // str column: BINARY, ARRAY, MAP, ROW or VARIANT built from `children` (own loop)
};

}  // namespace

struct DatagenField {
  int col = 0;
  SqlType type;
  Strategy strategy = Strategy::kIncrement;
  Output output = Output::kInt;
  // Index domain: k in [0, n); n == 0 means 2^64. Increment: k = (i * step) mod n.
  uint64_t n = 1;
  uint64_t step = 1;
  // Integer result: base + k * mult (wrapping arithmetic; ranges were checked against the type).
  int64_t base = 0, mult = 1;
  // Float fields.
  bool float_range = false;
  double fa = 0, fb = 1, fscale = 1;
  // Zipf.
  std::vector<AliasEntry> alias;
  ZipfRejectionInversion zri;
  // values.
  std::vector<int64_t> ivalues;
  std::vector<double> fvalues;
  std::vector<std::string> svalues;
  std::vector<uint8_t> vnull;  // empty: no NULL among the values
  // NULLs.
  bool nulls = false, all_null = false;
  uint64_t null_threshold = 0;
  uint64_t salt = 0, null_salt = 0;
  int32_t max_len = -1;  // CHAR/VARCHAR length
  // kWide: the unscaled result.
  Int128 wbase = 0, wmult = 1;
  // kNested. BINARY and ARRAY: the length (an INTEGER field) and the elements; MAP: the length,
  // the keys and the values; ROW: one per field; VARIANT: the BIGINT it wraps.
  std::vector<DatagenField> children;

  bool Random() const { return strategy != Strategy::kIncrement; }
};

struct DatagenPlan {
  std::optional<uint64_t> limit;
  std::optional<double> rate;
  size_t chunk = 10000;
  std::vector<DatagenField> fields;  // one per column, in table order
  bool needs_row_state = false;
  bool needs_nulls = false;
};

namespace {

// ---- Configuration parsing ----

class ConfigParser {
 public:
  ConfigParser(const Schema& schema, const ConnectorContext& ctx) : schema_(schema), ctx_(ctx) {}

  [[noreturn]] void Fail(const std::string& msg) const {
    throw Error(ErrorKind::kUsage, ctx_.where.empty() ? "datagen: " + msg : ctx_.where + ": datagen: " + msg);
  }

  void CheckKeys(const Json& obj, std::initializer_list<const char*> allowed, const std::string& what) const {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool ok = false;
      for (const char* a : allowed) ok |= it.key() == a;
      if (ok) continue;
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      Fail(fmt::format("unknown key '{}'{} (expected {})", it.key(), what, list));
    }
  }

  uint64_t Unsigned(const Json& v, const std::string& what) const {
    if (v.is_number_unsigned()) return v.get<uint64_t>();
    if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
    Fail(fmt::format("{} must be a non-negative integer, not {}", what, v.dump()));
  }

  int64_t Signed(const Json& v, const std::string& what) const {
    if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<int64_t>();
    if (v.is_number_unsigned() && v.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX))
      return static_cast<int64_t>(v.get<uint64_t>());
    Fail(fmt::format("{} must be an integer, not {}", what, v.dump()));
  }

  double Number(const Json& v, const std::string& what) const {
    if (v.is_number()) return v.get<double>();
    Fail(fmt::format("{} must be a number, not {}", what, v.dump()));
  }

  std::string Columns() const {
    std::string s;
    for (const auto& f : schema_.fields) s += (s.empty() ? "" : ", ") + f.name;
    return s;
  }

  // A range end or value in the field's unit: integers as is, DECIMAL in units of its last digit,
  // DATE in days, TIME/TIMESTAMP in milliseconds. Strings are parsed with ParseValue.
  Int128 IntPoint(const Json& v, const SqlType& type, const std::string& what) const {
    auto bad = [&] {
      Fail(fmt::format("{}: {} is not a valid {}", what, v.dump(), type.WithNullable(true).ToString()));
    };
    Value parsed;
    if (type.id == TypeId::kDecimal) {
      std::string text;
      if (v.is_number_integer())
        text = v.dump();
      else if (v.is_number_float())
        text = fmt::format("{}", v.get<double>());
      else if (v.is_string())
        text = v.get<std::string>();
      else
        bad();
      if (text.find_first_of("eE") != std::string::npos) text = fmt::format("{:.{}f}", v.get<double>(), type.scale + 1);
      Int128 x;
      if (!ParseDecimalText(text, type.scale, &x)) bad();
      return x;
    }
    if (v.is_string()) {
      SqlType t = type.IsString() ? SqlType::Of(TypeId::kBigInt) : type.WithNullable(true);
      if (!ParseValue(v.get<std::string>(), t, &parsed)) bad();
      if (type.id == TypeId::kTime || type.id == TypeId::kTimestamp) {
        // microseconds -> milliseconds, rounding down
        int64_t us = parsed.i;
        return us >= 0 ? us / 1000 : -((-us + 999) / 1000);
      }
      return parsed.i;
    }
    if (v.is_number_integer()) return Signed(v, what);
    if (v.is_number_float() && std::trunc(v.get<double>()) == v.get<double>() && std::fabs(v.get<double>()) < 9e18)
      return static_cast<int64_t>(v.get<double>());
    bad();
    return 0;  // not reached: bad() throws
  }

  DatagenPlan ParsePlan(const Json& pj, size_t index) {
    DatagenPlan plan;
    const std::string in_plan = fmt::format(" in plan {}", index);
    if (!pj.is_object()) Fail(fmt::format("plan {} must be an object, not {}", index, pj.dump()));
    CheckKeys(pj, {"limit", "rate", "worker_chunk_size", "fields"}, in_plan);
    if (pj.contains("limit") && !pj["limit"].is_null()) plan.limit = Unsigned(pj["limit"], "'limit'" + in_plan);
    if (pj.contains("rate") && !pj["rate"].is_null()) {
      double r = Number(pj["rate"], "'rate'" + in_plan);
      if (!(r > 0) || !std::isfinite(r))
        Fail(fmt::format("'rate'{} must be positive, not {}", in_plan, pj["rate"].dump()));
      plan.rate = r;
    }
    plan.chunk = plan.rate ? static_cast<size_t>(std::clamp(*plan.rate, 1.0, 10000.0)) : 10000;
    if (pj.contains("worker_chunk_size") && !pj["worker_chunk_size"].is_null()) {
      uint64_t c = Unsigned(pj["worker_chunk_size"], "'worker_chunk_size'" + in_plan);
      if (c == 0) Fail("'worker_chunk_size'" + in_plan + " must be positive");
      plan.chunk = static_cast<size_t>(std::min<uint64_t>(c, 1ULL << 30));
    }
    std::vector<const Json*> settings(schema_.size(), nullptr);
    if (pj.contains("fields") && !pj["fields"].is_null()) {
      const Json& fj = pj["fields"];
      if (!fj.is_object()) Fail(fmt::format("'fields'{} must be a map from column to settings", in_plan));
      for (auto it = fj.begin(); it != fj.end(); ++it) {
        int c = schema_.IndexOf(it.key());
        if (c < 0) {
          Fail(fmt::format("unknown field '{}'{} (table {} has {})", it.key(), in_plan,
                           ctx_.relation.empty() ? "?" : ctx_.relation, Columns()));
        }
        if (!it.value().is_object())
          Fail(fmt::format("settings of field '{}'{} must be an object, not {}", it.key(), in_plan, it.value().dump()));
        settings[c] = &it.value();
      }
    }
    for (size_t c = 0; c < schema_.size(); ++c) {
      plan.fields.push_back(ParseField(static_cast<int>(c), settings[c], in_plan));
      plan.needs_row_state |=
          plan.fields.back().Random() || plan.fields.back().nulls || plan.fields.back().output == Output::kNested;
      plan.needs_nulls |= plan.fields.back().nulls || !plan.fields.back().vnull.empty();
    }
    return plan;
  }

 private:
  DatagenField ParseField(int c, const Json* sj, const std::string& in_plan) {
    const Field& column = schema_.fields[c];
    Json empty = Json::object();
    DatagenField f = ParseSpec(column.type, sj ? *sj : empty, fmt::format("field '{}'{}", column.name, in_plan),
                               Mix64((static_cast<uint64_t>(c) + 1) * 0xA24BAED4963EE407ULL));
    f.col = c;
    return f;
  }

  // The settings `s` of a value of `type` (a column, or an element, key, value or field inside
  // one, named by `field` in messages); `salt` separates its random stream from its siblings'.
  DatagenField ParseSpec(const SqlType& type, const Json& s, const std::string& field, uint64_t salt) {
    const std::string tname = type.WithNullable(true).ToString();
    DatagenField f;
    f.type = type;
    f.salt = salt;
    f.null_salt = Mix64(f.salt ^ 0x5851F42D4C957F2DULL);
    f.max_len = type.IsString() ? type.length : -1;
    if (!s.is_object()) Fail(fmt::format("settings of {} must be an object, not {}", field, s.dump()));
    if (type.id == TypeId::kGeometry)
      Fail(fmt::format("{}: datagen does not generate {} values (neither does Feldera's)", field, tname));
    if (type.id == TypeId::kUuid) Fail(fmt::format("{}: datagen generating UUID values is not supported yet", field));
    const bool nested = type.IsBinary() || type.id == TypeId::kRow || type.id == TypeId::kArray ||
                        type.id == TypeId::kMap || type.id == TypeId::kVariant;
    if (type.id == TypeId::kMap)
      CheckKeys(s, {"strategy", "range", "scale", "values", "null_percentage", "e", "key", "value"}, " for " + field);
    else if (type.id == TypeId::kRow)
      CheckKeys(s, {"strategy", "range", "scale", "values", "null_percentage", "e", "fields"}, " for " + field);
    else if (type.IsBinary() || type.id == TypeId::kArray)
      CheckKeys(s, {"strategy", "range", "scale", "values", "null_percentage", "e", "value"}, " for " + field);
    else
      CheckKeys(s, {"strategy", "range", "scale", "values", "null_percentage", "e"}, " for " + field);

    if (s.contains("strategy")) {
      const Json& st = s["strategy"];
      if (!st.is_string()) Fail(fmt::format("'strategy' for {} must be a string, not {}", field, st.dump()));
      bool found = false;
      for (const auto& [name, value] : kStrategies) {
        if (st.get<std::string>() == name) {
          f.strategy = value;
          found = true;
        }
      }
      if (!found) {
        std::string list;
        for (const auto& [name, value] : kStrategies) list += (list.empty() ? "" : ", ") + std::string(name);
        Fail(fmt::format("unknown strategy {} for {} (expected {})", st.dump(), field, list));
      }
    }
    int64_t scale = 1;
    if (s.contains("scale")) {
      scale = Signed(s["scale"], fmt::format("'scale' for {}", field));
      if (scale == 0) Fail(fmt::format("'scale' for {} must not be 0", field));
    }
    double e = 1.0;
    if (s.contains("e")) {
      e = Number(s["e"], fmt::format("'e' for {}", field));
      if (!(e >= 0) || !std::isfinite(e)) Fail(fmt::format("'e' for {} must be a non-negative number", field));
      if (f.strategy != Strategy::kZipf) Fail(fmt::format("'e' for {} only applies to the zipf strategy", field));
    }
    if (s.contains("null_percentage") && !s["null_percentage"].is_null()) {
      double p = Number(s["null_percentage"], fmt::format("'null_percentage' for {}", field));
      if (!(p >= 0 && p <= 100)) Fail(fmt::format("'null_percentage' for {} must be between 0 and 100", field));
      if (!type.nullable && p > 0)
        Fail(fmt::format("'null_percentage' for {}: the column is {} and cannot be NULL", field, type.ToString()));
      if (p > 0) {
        f.nulls = true;
        long double t = static_cast<long double>(p) / 100.0L * 18446744073709551616.0L;
        if (t >= 18446744073709551615.0L)
          f.all_null = true;
        else
          f.null_threshold = static_cast<uint64_t>(t);
      }
    }
    const bool has_range = s.contains("range") && !s["range"].is_null();
    const bool has_values = s.contains("values") && !s["values"].is_null();

    if (IsFaker(f.strategy)) {
      if (!type.IsString())
        Fail(fmt::format("strategy {} does not fit {} of type {} (word lists need a CHAR or VARCHAR column)",
                         s["strategy"].dump(), field, tname));
      if (has_range || has_values)
        Fail(fmt::format("strategy {} for {} takes no 'range' or 'values'", s["strategy"].dump(), field));
      f.output = Output::kFaker;
      return f;
    }
    if (has_range && has_values) Fail(fmt::format("{} has both 'range' and 'values'; use one", field));

    if (has_values) {
      ParseValues(s["values"], &f, field);
      FinishIndex(&f, static_cast<uint64_t>(f.svalues.size() + f.ivalues.size() + f.fvalues.size()), scale, e);
      f.output = Output::kValues;
      return f;
    }
    if (nested) {
      ParseNested(s, &f, field);
      return f;
    }

    if (type.IsFloat()) {
      f.output = Output::kFloat;
      f.fscale = static_cast<double>(scale);
      if (has_range) {
        const Json& r = s["range"];
        if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number())
          Fail(fmt::format("'range' for {} must be a list of two numbers [a, b), not {}", field, r.dump()));
        f.fa = r[0].get<double>();
        f.fb = r[1].get<double>();
        if (!(f.fa < f.fb)) Fail(fmt::format("empty range {} for {}: it needs a < b", r.dump(), field));
        f.float_range = true;
      }
      if (f.strategy == Strategy::kZipf) {
        if (!has_range) Fail(fmt::format("zipf for {} of type {} needs a 'range'", field, tname));
        double steps = std::ceil(f.fb - f.fa);
        if (steps > 9e18) Fail(fmt::format("'range' for {} is too wide for zipf", field));
        FinishIndex(&f, static_cast<uint64_t>(steps), 1, e);
      }
      return f;
    }

    if (type.id == TypeId::kBoolean) {
      if (has_range) Fail(fmt::format("'range' does not apply to {} of type BOOLEAN (use 'values')", field));
      f.output = Output::kInt;
      f.base = 0;
      f.mult = 1;
      FinishIndex(&f, 2, scale, e);
      return f;
    }

    // Integer-valued: integers, DECIMAL, temporal types, and strings as decimal text.
    const bool temporal = type.IsTemporal();
    Int128 lo, hi;  // the type's bounds in the field's unit
    int64_t unit = 1;
    switch (type.id) {
      case TypeId::kTinyInt:
        lo = -128, hi = 127;
        break;
      case TypeId::kSmallInt:
        lo = -32768, hi = 32767;
        break;
      case TypeId::kInteger:
        lo = INT32_MIN, hi = INT32_MAX;
        break;
      case TypeId::kDecimal: {
        int p = type.precision > 0 && type.precision <= kMaxDecimalPrecision ? type.precision : 18;
        hi = p == 18 ? INT64_MAX : Pow10Wide(p) - 1;
        lo = -hi;
        break;
      }
      case TypeId::kDate:
        lo = -(1LL << 40), hi = 1LL << 40;
        break;
      case TypeId::kTime:
        lo = 0, hi = 86400000 - 1, unit = 1000;
        break;
      case TypeId::kTimestamp:
        lo = -(1LL << 52), hi = 1LL << 52, unit = 1000;
        break;
      default:
        lo = INT64_MIN, hi = INT64_MAX;
        break;  // BIGINT, strings
    }
    // Without a range, wide DECIMALs keep to the 64-bit unscaled values (index domains are 64-bit).
    const Int128 dlo = std::max<Int128>(lo, INT64_MIN), dhi = std::min<Int128>(hi, INT64_MAX);
    __int128 a, b;  // [a, b) in the field's unit
    if (has_range) {
      const Json& r = s["range"];
      if (!r.is_array() || r.size() != 2)
        Fail(fmt::format("'range' for {} must be a list of two values [a, b), not {}", field, r.dump()));
      a = IntPoint(r[0], type, fmt::format("'range' for {}", field));
      b = IntPoint(r[1], type, fmt::format("'range' for {}", field));
      if (a >= b) Fail(fmt::format("empty range {} for {}: it needs a < b", r.dump(), field));
      if (a < lo || b - 1 > hi) Fail(fmt::format("'range' {} for {} exceeds the bounds of {}", r.dump(), field, tname));
      if (b - a > (static_cast<Int128>(1) << 64))
        Fail(fmt::format("'range' {} for {} spans more than 2^64 values", r.dump(), field));
    } else if (temporal) {
      int64_t days2100 = DaysFromCivil(2100, 1, 1);
      a = 0;
      b = type.id == TypeId::kDate ? days2100 : type.id == TypeId::kTime ? 86400000 : days2100 * 86400000;
    } else if (f.strategy == Strategy::kUniform) {
      // The whole type (for strings: [0, 2^63)), shrunk so that value * scale still fits.
      const Int128 ulo = type.IsString() ? 0 : dlo;
      __int128 abs_scale = scale < 0 ? -static_cast<__int128>(scale) : scale;
      if (scale > 0) {
        a = -((-ulo) / abs_scale);
        b = dhi / abs_scale + 1;
      } else {
        a = -(dhi / abs_scale);
        b = (-ulo) / abs_scale + 1;
      }
    } else {
      // increment and zipf count from 0 up to the type's maximum (wrapping there).
      __int128 abs_scale = scale < 0 ? -static_cast<__int128>(scale) : scale;
      a = 0;
      b = f.strategy == Strategy::kIncrement ? dhi + 1 : (scale > 0 ? dhi : -dlo) / abs_scale + 1;
    }
    const __int128 n = b - a;  // >= 1, <= 2^64
    f.output = type.IsString() ? Output::kText : Output::kInt;

    if (temporal) {
      if (scale < 0) Fail(fmt::format("'scale' for {} of type {} must be positive", field, tname));
      f.base = static_cast<int64_t>(a) * unit;
      if (f.strategy == Strategy::kIncrement) {
        f.mult = unit;
        FinishIndex(&f, static_cast<uint64_t>(n), scale, e);
      } else {
        // a + scale * k for k in [0, ceil(n / scale)).
        f.mult = scale * unit;
        FinishIndex(&f, static_cast<uint64_t>((n + scale - 1) / scale), 1, e);
      }
      return f;
    }
    if (type.IsWideDecimal()) f.output = Output::kWide;
    if (f.strategy == Strategy::kIncrement) {
      // a + (i * scale) mod n stays in [a, b).
      f.base = static_cast<int64_t>(a);
      f.mult = 1;
      f.wbase = a;
      f.wmult = 1;
      FinishIndex(&f, n == (static_cast<__int128>(1) << 64) ? 0 : static_cast<uint64_t>(n), scale, e);
      return f;
    }
    // uniform/zipf: (a + k) * scale for k in [0, n): check both ends against the type.
    __int128 v1 = a * scale, v2 = (b - 1) * scale;
    __int128 vmin = std::min(v1, v2), vmax = std::max(v1, v2);
    __int128 tlo = type.IsString() ? INT64_MIN : lo, thi = hi;
    if (vmin < tlo || vmax > thi)
      Fail(fmt::format("'range' times 'scale' ({}) for {} exceeds the bounds of {}", scale, field, tname));
    f.base = static_cast<int64_t>(a * scale);
    f.mult = scale;
    f.wbase = a * scale;
    f.wmult = scale;
    FinishIndex(&f, n == (static_cast<__int128>(1) << 64) ? 0 : static_cast<uint64_t>(n), 1, e);
    return f;
  }

  // Sets the index domain [0, n) (0 = 2^64) and prepares the strategy's sampler.
  void FinishIndex(DatagenField* f, uint64_t n, int64_t scale, double e) {
    f->n = n;
    if (f->strategy == Strategy::kIncrement) {
      if (n == 0) {
        f->step = static_cast<uint64_t>(scale);
      } else {
        __int128 m = static_cast<__int128>(scale) % n;
        if (m < 0) m += n;
        f->step = static_cast<uint64_t>(m);
      }
      return;
    }
    if (f->strategy == Strategy::kZipf) {
      if (e == 0) {
        f->strategy = Strategy::kUniform;
      } else if (n != 0 && n <= (1u << 20)) {
        f->alias = BuildAlias(n, e);
      } else {
        f->zri = ZipfRejectionInversion(n == 0 ? 18446744073709551616.0 : static_cast<double>(n), e);
      }
    }
  }

  void ParseValues(const Json& vj, DatagenField* f, const std::string& field) {
    const SqlType& type = f->type;
    if (!vj.is_array() || vj.empty()) Fail(fmt::format("'values' for {} must be a non-empty list", field));
    bool any_null = false;
    for (const Json& v : vj) {
      uint8_t is_null = v.is_null();
      if (is_null && !type.nullable)
        Fail(fmt::format("'values' for {} contains null but the column is NOT NULL", field));
      any_null |= is_null;
      f->vnull.push_back(is_null);
      const std::string what = fmt::format("'values' for {}", field);
      if (type.phys() == PhysType::kStr && !type.IsString()) {
        // BINARY, wide DECIMAL, ARRAY, MAP, ROW, VARIANT: written as in a JSON input row.
        Value x;
        std::string why;
        if (!is_null && !JsonToValue(v, type.WithNullable(true), &x, &why))
          Fail(fmt::format("{}: {}: {}", what, v.dump(), why));
        f->svalues.push_back(std::move(x.s));
      } else if (type.IsString()) {
        if (is_null)
          f->svalues.emplace_back();
        else if (v.is_string())
          f->svalues.push_back(v.get<std::string>());
        else if (v.is_number())
          f->svalues.push_back(v.dump());
        else
          Fail(fmt::format("{}: {} is not a string", what, v.dump()));
        if (type.length >= 0 && f->svalues.back().size() > static_cast<size_t>(type.length))
          f->svalues.back().resize(type.length);
      } else if (type.IsFloat()) {
        if (is_null)
          f->fvalues.push_back(0);
        else if (v.is_number())
          f->fvalues.push_back(v.get<double>());
        else
          Fail(fmt::format("{}: {} is not a number", what, v.dump()));
        if (type.id == TypeId::kReal) f->fvalues.back() = static_cast<float>(f->fvalues.back());
      } else if (type.id == TypeId::kBoolean) {
        if (is_null)
          f->ivalues.push_back(0);
        else if (v.is_boolean())
          f->ivalues.push_back(v.get<bool>() ? 1 : 0);
        else
          Fail(fmt::format("{}: {} is not a boolean", what, v.dump()));
      } else if (is_null) {
        f->ivalues.push_back(0);
      } else {
        int64_t x;
        if (v.is_string() && type.IsTemporal()) {
          Value parsed;
          if (!ParseValue(v.get<std::string>(), type.WithNullable(true), &parsed))
            Fail(fmt::format("{}: {} is not a valid {}", what, v.dump(), type.WithNullable(true).ToString()));
          x = parsed.i;
        } else {
          const Int128 wide = IntPoint(v, type, what);
          if (type.id == TypeId::kDecimal && !DecimalFits(wide, type.precision > 0 ? type.precision : 18))
            Fail(fmt::format("{}: {} exceeds the bounds of {}", what, v.dump(), type.WithNullable(true).ToString()));
          x = static_cast<int64_t>(wide);
          if (type.id == TypeId::kTime || type.id == TypeId::kTimestamp) x *= 1000;
          Value check;
          if (type.IsInteger() && !ParseValue(fmt::format("{}", x), type.WithNullable(true), &check))
            Fail(fmt::format("{}: {} exceeds the bounds of {}", what, v.dump(), type.WithNullable(true).ToString()));
        }
        f->ivalues.push_back(x);
      }
    }
    if (!any_null) f->vnull.clear();
  }

  // BINARY/VARBINARY, ARRAY, MAP, ROW and VARIANT without `values` (ParseSpec has read the
  // strategy and null_percentage into *f).
  void ParseNested(const Json& s, DatagenField* f, const std::string& field) {
    const SqlType& type = f->type;
    f->output = Output::kNested;
    auto child_salt = [&](uint64_t i) { return Mix64(f->salt + (i + 1) * 0xD6E8FEB86659FD93ULL); };
    auto sub = [&](const char* key) { return s.contains(key) && !s[key].is_null() ? s[key] : Json::object(); };
    if (type.id == TypeId::kRow) {
      // `fields`: settings per ROW field, by name; every field generates with the row's index.
      const Json fs = sub("fields");
      if (!fs.is_object()) Fail(fmt::format("'fields' for {} must be a map from ROW field to settings", field));
      for (auto it = fs.begin(); it != fs.end(); ++it) {
        bool known = false;
        for (size_t i = 0; i < type.fields->size(); ++i) known |= EqualsIgnoreCase(type.FieldName(i), it.key());
        if (!known) Fail(fmt::format("'fields' for {}: {} has no field '{}'", field, type.ToString(), it.key()));
      }
      for (size_t i = 0; i < type.fields->size(); ++i) {
        Json fsettings = Json::object();
        for (auto it = fs.begin(); it != fs.end(); ++it)
          if (EqualsIgnoreCase(type.FieldName(i), it.key())) fsettings = it.value();
        f->children.push_back(
            ParseSpec((*type.fields)[i], fsettings, fmt::format("{}.{}", field, type.FieldName(i)), child_salt(i)));
      }
      return;
    }
    if (type.id == TypeId::kVariant) {
      // The number the strategy gives, as a VARIANT holding a BIGINT.
      Json settings = s;
      settings.erase("null_percentage");
      f->children.push_back(ParseSpec(SqlType::Of(TypeId::kBigInt, false), settings, field, child_salt(0)));
      return;
    }
    // BINARY, ARRAY, MAP: the length is an integer field over `range` (default [0, 5)); element j
    // generates with index j.
    Json len = Json::object();
    for (const char* key : {"strategy", "scale", "e"})
      if (s.contains(key)) len[key] = s[key];
    if (f->strategy != Strategy::kIncrement && f->strategy != Strategy::kUniform && f->strategy != Strategy::kZipf)
      Fail(fmt::format("strategy {} does not fit {} of type {}", s["strategy"].dump(), field, type.ToString()));
    len["range"] = Json::array({0, 5});
    if (s.contains("range") && !s["range"].is_null()) {
      const Json& r = s["range"];
      auto length = [](const Json& x) { return x.is_number_integer() && x.get<int64_t>() >= 0; };
      if (!r.is_array() || r.size() != 2 || !length(r[0]) || !length(r[1]) ||
          r[1].get<uint64_t>() > kMaxGeneratedLength)
        Fail(fmt::format("'range' for {} is its number of {}: two integers in [0, {}], not {}", field,
                         type.id == TypeId::kMap ? "entries"
                         : type.IsBinary()       ? "bytes"
                                                 : "elements",
                         kMaxGeneratedLength, r.dump()));
      len["range"] = r;
    }
    if (s.contains("scale") && !(s["scale"].is_number_integer() && s["scale"].get<int64_t>() > 0))
      Fail(fmt::format("'scale' for {} must be a positive integer, not {}", field, s["scale"].dump()));
    f->children.push_back(ParseSpec(SqlType::Of(TypeId::kInteger, false), len, field, f->salt));
    if (type.IsBinary()) {
      // Bytes are integers in [0, 256) (the default range).
      Json bytes = sub("value");
      if (bytes.is_object() && !bytes.contains("range") && !bytes.contains("values"))
        bytes["range"] = Json::array({0, 256});
      const std::string what = field + ".value";
      DatagenField b = ParseSpec(SqlType::Of(TypeId::kSmallInt, false), bytes, what, child_salt(0));
      bool ok = true;
      if (b.output == Output::kValues) {
        for (int64_t v : b.ivalues) ok &= v >= 0 && v <= 255;
      } else {
        Int128 last = static_cast<Int128>(b.base) + static_cast<Int128>(b.n == 0 ? 0 : b.n - 1) * b.mult;
        ok = b.n != 0 && b.base >= 0 && b.base <= 255 && last >= 0 && last <= 255;
      }
      if (!ok) Fail(fmt::format("{}: bytes must be in [0, 256)", what));
      f->children.push_back(std::move(b));
    } else if (type.id == TypeId::kArray) {
      f->children.push_back(ParseSpec((*type.fields)[0], sub("value"), field + ".value", child_salt(0)));
    } else {
      f->children.push_back(ParseSpec((*type.fields)[0], sub("key"), field + ".key", child_salt(0)));
      f->children.push_back(ParseSpec((*type.fields)[1], sub("value"), field + ".value", child_salt(1)));
    }
  }

  const Schema& schema_;
  const ConnectorContext& ctx_;
};

// ---- Generation ----

// Calls emit(j, k) for rows i0 + j, j < count, with k the field's index in [0, n).
template <typename Emit>
inline void ForEachIndex(const DatagenField& f, uint64_t i0, size_t count, const uint64_t* rs, Emit&& emit) {
  const uint64_t n = f.n, salt = f.salt;
  switch (f.strategy) {
    case Strategy::kIncrement: {
      const uint64_t step = f.step;
      if (n == 0) {
        uint64_t k = i0 * step;
        for (size_t j = 0; j < count; ++j, k += step) emit(j, k);
      } else {
        uint64_t k = static_cast<uint64_t>((static_cast<unsigned __int128>(i0 % n) * step) % n);
        const uint64_t back = n - step;  // k + step wraps when k >= n - step
        for (size_t j = 0; j < count; ++j) {
          emit(j, k);
          k = k >= back ? k - back : k + step;
        }
      }
      break;
    }
    case Strategy::kUniform:
      if (n == 0) {
        for (size_t j = 0; j < count; ++j) emit(j, Mix64(rs[j] ^ salt));
      } else {
        for (size_t j = 0; j < count; ++j) emit(j, MulHi(Mix64(rs[j] ^ salt), n));
      }
      break;
    case Strategy::kZipf:
      if (!f.alias.empty()) {
        const AliasEntry* table = f.alias.data();
        for (size_t j = 0; j < count; ++j) {
          const uint64_t r = Mix64(rs[j] ^ salt);
          const uint64_t idx = MulHi(r, n);
          const AliasEntry& e = table[idx];
          // Branch-free select: the coin flip is unpredictable.
          const uint64_t keep = 0 - static_cast<uint64_t>((r & 0xFFFFFFFFULL) < e.threshold);
          emit(j, (idx & keep) | (e.alias & ~keep));
        }
      } else {
        for (size_t j = 0; j < count; ++j) {
          Rng rng{rs[j] ^ salt};
          emit(j, f.zri.Sample(rng) - 1);
        }
      }
      break;
    default:
      break;
  }
}

void AppendWord(std::string* s, uint64_t r) {
  s->append(Pick(kWords, r));
}

void FakerValue(const DatagenField& f, uint64_t state, std::string* out) {
  Rng rng{state ^ f.salt};
  out->clear();
  switch (f.strategy) {
    case Strategy::kWord:
      AppendWord(out, rng.Next());
      break;
    case Strategy::kWords: {
      uint64_t count = 1 + MulHi(rng.Next(), 5);
      for (uint64_t w = 0; w < count; ++w) {
        if (w) out->push_back(' ');
        AppendWord(out, rng.Next());
      }
      break;
    }
    case Strategy::kSentence: {
      uint64_t count = 4 + MulHi(rng.Next(), 9);
      for (uint64_t w = 0; w < count; ++w) {
        if (w) out->push_back(' ');
        AppendWord(out, rng.Next());
      }
      (*out)[0] = static_cast<char>(std::toupper(static_cast<unsigned char>((*out)[0])));
      out->push_back('.');
      break;
    }
    case Strategy::kName:
      out->append(Pick(kFirstNames, rng.Next()));
      out->push_back(' ');
      out->append(Pick(kLastNames, rng.Next()));
      break;
    case Strategy::kEmail: {
      out->append(ToLower(Pick(kFirstNames, rng.Next())));
      out->push_back('.');
      out->append(ToLower(Pick(kLastNames, rng.Next())));
      uint64_t num = MulHi(rng.Next(), 100);
      if (num >= 50) out->append(fmt::format("{}", num));
      out->push_back('@');
      out->append(Pick(kDomains, rng.Next()));
      break;
    }
    case Strategy::kCityName:
      out->append(Pick(kCities, rng.Next()));
      break;
    case Strategy::kStreetName: {  // "Willow Lane"
      std::string w = Pick(kWords, rng.Next());
      w[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(w[0])));
      out->append(w);
      out->push_back(' ');
      out->append(Pick(kStreetSuffixes, rng.Next()));
      break;
    }
    case Strategy::kStateAbbr:
      out->append(Pick(kStateAbbrs, rng.Next()));
      break;
    case Strategy::kBuzzword:
      out->append(Pick(kBuzzwords, rng.Next()));
      break;
    default:
      break;
  }
  if (f.max_len >= 0 && out->size() > static_cast<size_t>(f.max_len)) out->resize(f.max_len);
}

// The values of a kFloat field for rows i0 .. i0 + count.
void GenerateFloats(const DatagenField& f, uint64_t i0, size_t count, const uint64_t* state, double* out) {
  const double fa = f.fa, fb = f.fb, width = f.fb - f.fa, fscale = f.fscale;
  switch (f.strategy) {
    case Strategy::kIncrement:
      for (size_t j = 0; j < count; ++j) {
        double x = static_cast<double>(i0 + j) * fscale;
        if (f.float_range) {
          x = std::fmod(x, width);
          if (x < 0) x += width;
          x += fa;
          if (x >= fb) x = fa;
        }
        out[j] = x;
      }
      break;
    case Strategy::kUniform: {
      const double below_b = std::nextafter(fb, fa);
      if (f.type.id == TypeId::kReal) {
        // Rounding to float must not reach b either.
        const float below_bf = std::nextafter(static_cast<float>(fb), static_cast<float>(fa));
        for (size_t j = 0; j < count; ++j) {
          float x = static_cast<float>(fa + Unit01(Mix64(state[j] ^ f.salt)) * width);
          out[j] = (x < fb ? x : below_bf) * fscale;
        }
      } else {
        for (size_t j = 0; j < count; ++j) {
          double x = fa + Unit01(Mix64(state[j] ^ f.salt)) * width;
          out[j] = (x < fb ? x : below_b) * fscale;
        }
      }
      break;
    }
    case Strategy::kZipf:
      ForEachIndex(f, i0, count, state, [&](size_t j, uint64_t k) { out[j] = (fa + static_cast<double>(k)) * fscale; });
      break;
    default:
      break;
  }
  if (f.type.id == TypeId::kReal)
    for (size_t j = 0; j < count; ++j) out[j] = static_cast<float>(out[j]);
}

std::string NestedValue(const DatagenField& f, uint64_t i, uint64_t state);

// The value of field f (an element, key, value or field inside a nested value) at index i, drawing
// from `state` as a column does from its row's state.
Value FieldValue(const DatagenField& f, uint64_t i, uint64_t state) {
  if (f.nulls && (f.all_null || Mix64(state ^ f.null_salt) < f.null_threshold)) return Value::Null();
  uint64_t k = 0;
  auto index = [&] { ForEachIndex(f, i, 1, &state, [&](size_t, uint64_t x) { k = x; }); };
  switch (f.output) {
    case Output::kInt:
      index();
      return Value::Int(static_cast<int64_t>(static_cast<uint64_t>(f.base) + k * static_cast<uint64_t>(f.mult)));
    case Output::kText: {
      index();
      std::string text =
          fmt::format("{}", static_cast<int64_t>(static_cast<uint64_t>(f.base) + k * static_cast<uint64_t>(f.mult)));
      if (f.max_len >= 0 && text.size() > static_cast<size_t>(f.max_len)) text.resize(f.max_len);
      return Value::String(std::move(text));
    }
    case Output::kValues:
      index();
      if (!f.vnull.empty() && f.vnull[k]) return Value::Null();
      switch (f.type.phys()) {
        case PhysType::kI64:
          return Value::Int(f.ivalues[k]);
        case PhysType::kF64:
          return Value::Double(f.fvalues[k]);
        case PhysType::kStr:
          return Value::String(f.svalues[k]);
      }
      break;
    case Output::kFloat: {
      double x;
      GenerateFloats(f, i, 1, &state, &x);
      return Value::Double(x);
    }
    case Output::kFaker: {
      std::string text;
      FakerValue(f, state, &text);
      return Value::String(std::move(text));
    }
    case Output::kWide:
      index();
      return Value::String(EncodeInt128(f.wbase + static_cast<Int128>(k) * f.wmult));
    case Output::kNested:
      return Value::String(NestedValue(f, i, state));
  }
  return Value::Null();
}

// A BINARY, ARRAY, MAP, ROW or VARIANT value at index i (ParseNested lays out the children).
std::string NestedValue(const DatagenField& f, uint64_t i, uint64_t state) {
  const uint64_t s = Mix64(state ^ f.salt);  // this value's own stream
  const TypeId id = f.type.id;
  if (id == TypeId::kRow) {
    std::vector<Value> fields;
    for (const DatagenField& c : f.children) fields.push_back(FieldValue(c, i, s));
    return EncodeRowValue(fields, *f.type.fields);
  }
  if (id == TypeId::kVariant) return VariantFromValue(FieldValue(f.children[0], i, s), SqlType::Of(TypeId::kBigInt));
  const uint64_t len =
      std::min<uint64_t>(static_cast<uint64_t>(FieldValue(f.children[0], i, s).i), kMaxGeneratedLength);
  auto element_state = [&](uint64_t j) { return Mix64(s + (j + 1) * kGamma); };
  if (f.type.IsBinary()) {
    std::string bytes(len, '\0');
    for (uint64_t j = 0; j < len; ++j) bytes[j] = static_cast<char>(FieldValue(f.children[1], j, element_state(j)).i);
    return bytes;
  }
  if (id == TypeId::kArray) {
    std::vector<Value> elements;
    elements.reserve(len);
    for (uint64_t j = 0; j < len; ++j) elements.push_back(FieldValue(f.children[1], j, element_state(j)));
    return EncodeArrayValue(elements, (*f.type.fields)[0]);
  }
  std::vector<std::pair<Value, Value>> entries;  // MAP: equal keys collapse into one entry
  for (uint64_t j = 0; j < len; ++j) {
    const uint64_t es = element_state(j);
    entries.emplace_back(FieldValue(f.children[1], j, es), FieldValue(f.children[2], j, es));
  }
  return EncodeMapValue(std::move(entries), f.type);
}

// Fills rows [off, off + count) of the columns with rows i0.. of the plan.
void GenerateChunk(const DatagenPlan& plan, uint64_t plan_key, uint64_t i0, size_t count, size_t off,
                   const std::vector<std::shared_ptr<Column>>& cols) {
  std::vector<uint64_t> rs;
  if (plan.needs_row_state) {
    rs.resize(count);
    for (size_t j = 0; j < count; ++j) rs[j] = RowState(plan_key, i0 + j);
  }
  const uint64_t* state = rs.data();
  for (const DatagenField& f : plan.fields) {
    Column& col = *cols[f.col];
    switch (f.output) {
      case Output::kInt: {
        int64_t* out = col.i64.data() + off;
        const uint64_t base = static_cast<uint64_t>(f.base), mult = static_cast<uint64_t>(f.mult);
        if (mult == 1)
          ForEachIndex(f, i0, count, state, [&](size_t j, uint64_t k) { out[j] = static_cast<int64_t>(base + k); });
        else
          ForEachIndex(f, i0, count, state,
                       [&](size_t j, uint64_t k) { out[j] = static_cast<int64_t>(base + k * mult); });
        break;
      }
      case Output::kText: {
        std::string* out = col.str.data() + off;
        const uint64_t base = static_cast<uint64_t>(f.base), mult = static_cast<uint64_t>(f.mult);
        ForEachIndex(f, i0, count, state, [&](size_t j, uint64_t k) {
          fmt::format_int text(static_cast<int64_t>(base + k * mult));
          out[j].assign(text.data(), text.size());
          if (f.max_len >= 0 && out[j].size() > static_cast<size_t>(f.max_len)) out[j].resize(f.max_len);
        });
        break;
      }
      case Output::kValues: {
        uint8_t* nulls = f.vnull.empty() ? nullptr : col.nulls.data() + off;
        const uint8_t* vnull = f.vnull.data();
        switch (col.phys) {
          case PhysType::kI64: {
            int64_t* out = col.i64.data() + off;
            const int64_t* v = f.ivalues.data();
            ForEachIndex(f, i0, count, state, [&](size_t j, uint64_t k) {
              out[j] = v[k];
              if (nulls) nulls[j] = vnull[k];
            });
            break;
          }
          case PhysType::kF64: {
            double* out = col.f64.data() + off;
            const double* v = f.fvalues.data();
            ForEachIndex(f, i0, count, state, [&](size_t j, uint64_t k) {
              out[j] = v[k];
              if (nulls) nulls[j] = vnull[k];
            });
            break;
          }
          case PhysType::kStr: {
            std::string* out = col.str.data() + off;
            const std::string* v = f.svalues.data();
            ForEachIndex(f, i0, count, state, [&](size_t j, uint64_t k) {
              out[j] = v[k];
              if (nulls) nulls[j] = vnull[k];
            });
            break;
          }
        }
        break;
      }
      case Output::kFloat:
        GenerateFloats(f, i0, count, state, col.f64.data() + off);
        break;
      case Output::kWide: {
        std::string* out = col.str.data() + off;
        ForEachIndex(f, i0, count, state,
                     [&](size_t j, uint64_t k) { out[j] = EncodeInt128(f.wbase + static_cast<Int128>(k) * f.wmult); });
        break;
      }
      case Output::kNested: {
        std::string* out = col.str.data() + off;
        for (size_t j = 0; j < count; ++j) out[j] = NestedValue(f, i0 + j, state[j]);
        break;
      }
      case Output::kFaker: {
        std::string* out = col.str.data() + off;
        for (size_t j = 0; j < count; ++j) FakerValue(f, state[j], &out[j]);
        break;
      }
    }
    if (f.nulls) {
      uint8_t* nulls = col.nulls.data() + off;
      for (size_t j = 0; j < count; ++j) {
        if (!f.all_null && Mix64(state[j] ^ f.null_salt) >= f.null_threshold) continue;
        nulls[j] = 1;
        switch (col.phys) {
          case PhysType::kI64:
            col.i64[off + j] = 0;
            break;
          case PhysType::kF64:
            col.f64[off + j] = 0;
            break;
          case PhysType::kStr:
            col.str[off + j].clear();
            break;
        }
      }
    }
  }
}

// A column for a new batch: one handed out earlier that nobody else holds any more (its pages are
// already mapped and need no zeroing), else a fresh one.
std::shared_ptr<Column> TakeColumn(PhysType phys, std::deque<std::shared_ptr<Column>>* spare) {
  if (spare != nullptr) {
    // Newest first: its memory is the most likely to still be in cache.
    for (auto it = spare->rbegin(); it != spare->rend(); ++it) {
      if ((*it)->phys != phys || it->use_count() != 1) continue;
      // use_count() is a relaxed load; the fence orders our writes after the last holder's release.
      std::atomic_thread_fence(std::memory_order_acquire);
      std::shared_ptr<Column> col = std::move(*it);
      spare->erase(std::next(it).base());
      return col;
    }
  }
  return std::make_shared<Column>(phys);
}

Batch GeneratePlanRange(const DatagenPlan& plan, uint64_t plan_key, uint64_t begin, uint64_t end, ThreadPool* pool,
                        std::deque<std::shared_ptr<Column>>* spare) {
  const size_t n = static_cast<size_t>(end - begin);
  std::vector<std::shared_ptr<Column>> cols;
  for (const DatagenField& f : plan.fields) {
    std::shared_ptr<Column> col = TakeColumn(f.type.phys(), spare);
    switch (col->phys) {
      case PhysType::kI64:
        col->i64.resize(n);
        break;
      case PhysType::kF64:
        col->f64.resize(n);
        break;
      case PhysType::kStr:
        col->str.resize(n);
        break;
    }
    if (f.nulls || !f.vnull.empty())
      col->nulls.assign(n, 0);
    else
      col->nulls.clear();
    cols.push_back(std::move(col));
  }
  const size_t chunk = plan.chunk;
  const size_t chunks = (n + chunk - 1) / chunk;
  auto task = [&](size_t c) {
    size_t off = c * chunk;
    GenerateChunk(plan, plan_key, begin + off, std::min(chunk, n - off), off, cols);
  };
  if (pool != nullptr && pool->workers() > 1 && chunks > 1) {
    pool->ParallelFor(chunks, task);
  } else {
    for (size_t c = 0; c < chunks; ++c) task(c);
  }
  Batch b;
  for (auto& c : cols) {
    c->CompactNulls();
    b.cols.push_back(c);
    if (spare != nullptr) spare->push_back(std::move(c));
  }
  if (spare != nullptr) {
    // Remember the last few batches' columns only.
    const size_t keep = 4 * plan.fields.size() + 4;
    while (spare->size() > keep) spare->pop_front();
  }
  b.weights.assign(n, 1);
  return b;
}

}  // namespace

DatagenConnector::DatagenConnector(const Json& config, const Schema& schema, const ConnectorContext& ctx,
                                   size_t max_batch_size)
    : schema_(schema), where_(ctx.where), max_batch_size_(std::max<size_t>(1, max_batch_size)), pool_(ctx.pool) {
  ConfigParser parser(schema_, ctx);
  Json cfg = config.is_null() ? Json::object() : config;
  if (!cfg.is_object()) parser.Fail(fmt::format("config must be an object, not {}", cfg.dump()));
  parser.CheckKeys(cfg, {"plan", "workers", "seed"}, "");
  uint64_t workers = 1;
  if (cfg.contains("workers") && !cfg["workers"].is_null()) {
    workers = parser.Unsigned(cfg["workers"], "'workers'");
    if (workers == 0 || workers > 1024) parser.Fail("'workers' must be between 1 and 1024");
  }
  if (cfg.contains("seed") && !cfg["seed"].is_null()) {
    seed_ = parser.Unsigned(cfg["seed"], "'seed'");
  } else {
    std::random_device rd;
    seed_ = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }
  if (cfg.contains("plan") && !cfg["plan"].is_null()) {
    const Json& pj = cfg["plan"];
    if (!pj.is_array()) parser.Fail(fmt::format("'plan' must be a list of plans, not {}", pj.dump()));
    for (size_t p = 0; p < pj.size(); ++p) plans_.push_back(std::make_unique<DatagenPlan>(parser.ParsePlan(pj[p], p)));
  } else {
    plans_.push_back(std::make_unique<DatagenPlan>(parser.ParsePlan(Json::object(), 0)));
  }
  if (pool_ == nullptr && workers > 1) {
    own_pool_ = std::make_unique<ThreadPool>(workers);
    pool_ = own_pool_.get();
  }
  StartPlan();
}

DatagenConnector::~DatagenConnector() = default;

void DatagenConnector::StartPlan() {
  // Skips exhausted plans (limit 0, or a position at their end).
  while (plan_ < plans_.size() && plans_[plan_]->limit && row_ >= *plans_[plan_]->limit) {
    ++plan_;
    row_ = 0;
  }
  bucket_started_ = false;
  tokens_ = 0;
}

uint64_t DatagenConnector::Allowance(uint64_t max_rows) {
  const DatagenPlan& p = *plans_[plan_];
  if (!p.rate || !throttle_) return max_rows;
  const double rate = *p.rate;
  const double cap = std::max(1.0, rate);  // at most one second's worth at once
  // All or nothing: a Read takes a whole quantum of rows or none, so step boundaries do not
  // depend on timing and a resumed run cuts its steps exactly like an uninterrupted one.
  // A quantum is a tenth of a second's worth (at most max_rows), so the pace stays smooth.
  const uint64_t quantum =
      std::max<uint64_t>(1, std::min<uint64_t>(max_rows, static_cast<uint64_t>(std::ceil(rate / 10))));
  auto refill = [&] {
    auto now = Clock::now();
    if (!bucket_started_) {
      bucket_started_ = true;
      bucket_time_ = now;
      return;
    }
    double dt = std::chrono::duration<double>(now - bucket_time_).count();
    bucket_time_ = now;
    tokens_ = std::min(cap, tokens_ + dt * rate);
  };
  refill();
  if (tokens_ < static_cast<double>(quantum)) {
    // Wait a little for the quantum, but never long: the controller calls again.
    double wait = std::min(0.001, (static_cast<double>(quantum) - tokens_) / rate);
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    refill();
    if (tokens_ < static_cast<double>(quantum)) return 0;
  }
  tokens_ -= static_cast<double>(quantum);
  return quantum;
}

Batch DatagenConnector::Read(size_t max_records) {
  std::vector<Batch> parts;
  uint64_t budget = max_records;
  while (budget > 0 && plan_ < plans_.size()) {
    const DatagenPlan& p = *plans_[plan_];
    uint64_t want = budget;
    if (p.limit) want = std::min(want, *p.limit - row_);
    uint64_t n = Allowance(want);
    if (n == 0) break;
    parts.push_back(GeneratePlanRange(p, PlanKey(seed_, plan_), row_, row_ + n, pool_, &spare_));
    row_ += n;
    records_ += n;
    budget -= n;
    if (p.limit && row_ >= *p.limit) {
      ++plan_;
      row_ = 0;
      StartPlan();
    } else if (n < want) {
      break;  // held back by the rate
    }
  }
  if (parts.empty()) {
    auto types = schema_.PhysTypes();
    return EmptyBatch(types);
  }
  if (parts.size() == 1) return std::move(parts[0]);
  return Concat(parts);
}

Batch DatagenConnector::Generate(size_t plan, uint64_t begin, uint64_t end) const {
  if (plan >= plans_.size() || end < begin) throw Error(ErrorKind::kUsage, "datagen: no such plan or row range");
  return GeneratePlanRange(*plans_[plan], PlanKey(seed_, plan), begin, end, pool_, nullptr);
}

bool DatagenConnector::AtEnd() const {
  return plan_ >= plans_.size();
}

std::optional<uint64_t> DatagenConnector::total_records() const {
  uint64_t total = 0;
  for (const auto& p : plans_) {
    if (!p->limit) return std::nullopt;
    total += *p->limit;
  }
  return total;
}

Json DatagenConnector::Position() const {
  return Json{{"seed", seed_}, {"plan", plan_}, {"row", row_}};
}

void DatagenConnector::Seek(const Json& position) {
  auto bad = [&](const std::string& why) {
    throw Error(ErrorKind::kUsage, fmt::format("{}{}datagen: cannot seek to {}: {}", where_, where_.empty() ? "" : ": ",
                                               position.dump(), why));
  };
  if (!position.is_object()) bad("expected {\"seed\": S, \"plan\": P, \"row\": R}");
  for (const char* k : {"seed", "plan", "row"})
    if (!position.contains(k) || !position[k].is_number_integer() ||
        (!position[k].is_number_unsigned() && position[k].get<int64_t>() < 0))
      bad(fmt::format("'{}' must be a non-negative integer", k));
  uint64_t plan = position["plan"].get<uint64_t>();
  uint64_t row = position["row"].get<uint64_t>();
  if (plan > plans_.size() || (plan == plans_.size() && row != 0)) bad("no such plan");
  if (plan < plans_.size() && plans_[plan]->limit && row > *plans_[plan]->limit) bad("row beyond the plan's limit");
  seed_ = position["seed"].get<uint64_t>();
  plan_ = plan;
  row_ = row;
  records_ = row;
  for (size_t p = 0; p < plan; ++p) records_ += plans_[p]->limit.value_or(0);
  StartPlan();
}

std::string DatagenConnector::Describe() const {
  return fmt::format("datagen({} plan{}, seed {})", plans_.size(), plans_.size() == 1 ? "" : "s", seed_);
}

}  // namespace fld
