#include "pipelines/connectors/nexmark.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <optional>
#include <string_view>

#include "core/common/error.h"

namespace fld {

namespace {

using Json = nlohmann::json;

// ---- The event model's constants (Beam/Flink Nexmark defaults, as Feldera's generator has them) ----

constexpr uint64_t kProportionTotal = 50;  // person 1, auction 3, bid 46
constexpr uint64_t kAuctionProportion = 3;
constexpr uint64_t kFirstPersonId = 1000;
constexpr uint64_t kFirstAuctionId = 1000;
constexpr uint64_t kFirstCategoryId = 10;
constexpr uint64_t kNumCategories = 5;
constexpr uint64_t kEventIntervalMs = 10;
constexpr uint64_t kActivePeople = 1000;
constexpr uint64_t kPersonIdLead = 10;
constexpr uint64_t kInFlightAuctions = 100;
constexpr uint64_t kHotRatio = 100;          // every 100th person/auction is hot
constexpr uint64_t kHotAuctionOdds = 2;      // 1 in 2 bids go to any recent auction, the rest to a hot one
constexpr uint64_t kHotBidderOdds = 4;       // 1 in 4 bids by any recent person
constexpr uint64_t kHotSellerOdds = 4;       // 1 in 4 auctions by any recent person
constexpr uint64_t kHotChannelsRatio = 100;  // 1 in 100 bids on a numbered channel
constexpr uint64_t kChannels = 10000;
// An auction lasts 1 .. 2 * horizon ms, the horizon being the event time of the auction
// kInFlightAuctions auctions later.
constexpr uint64_t kAuctionHorizonMs = kInFlightAuctions * kProportionTotal / kAuctionProportion * kEventIntervalMs;
constexpr uint64_t kAvgPersonBytes = 200, kAvgAuctionBytes = 500, kAvgBidBytes = 100;

constexpr std::array<std::string_view, 6> kStates = {"AZ", "CA", "ID", "OR", "WA", "WY"};
constexpr std::array<std::string_view, 10> kCities = {"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland",
                                                      "Bend",    "Redmond",     "Seattle",       "Kent",  "Cheyenne"};
constexpr std::array<std::string_view, 11> kFirstNames = {"Peter", "Paul",  "Luke",  "John",   "Saul",  "Vicky",
                                                          "Kate",  "Julie", "Sarah", "Deiter", "Walter"};
constexpr std::array<std::string_view, 9> kLastNames = {"Shultz", "Abrams", "Spencer", "White", "Bartels",
                                                        "Walton", "Smith",  "Jones",   "Noris"};
constexpr std::array<std::string_view, 4> kHotChannels = {"Google", "Facebook", "Baidu", "Apple"};
constexpr std::array<std::string_view, 4> kHotUrls = {
    "https://www.nexmark.com/googl/item.htm?query=1", "https://www.nexmark.com/meta/item.htm?query=1",
    "https://www.nexmark.com/bidu/item.htm?query=1", "https://www.nexmark.com/aapl/item.htm?query=1"};
constexpr std::string_view kAlphanumeric = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

// ---- Randomness: every field of event n draws from its own sub-stream of n ----

constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ULL;

inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

struct Rng {
  uint64_t s;
  uint64_t Next() {
    s += kGamma;
    return Mix64(s);
  }
  // Uniform in [0, n).
  uint64_t Below(uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64); }
  // Uniform in [lo, hi].
  uint64_t Between(uint64_t lo, uint64_t hi) { return lo + Below(hi - lo + 1); }
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
};

inline Rng FieldRng(uint64_t event, uint64_t field) {
  return Rng{Mix64(event * 0xD1B54A32D192ED03ULL + 0x6A09E667F3BCC909ULL) + field * 0xA0761D6478BD642FULL};
}

void AppendAlphanumeric(Rng& rng, size_t len, std::string* out) {
  size_t start = out->size();
  out->resize(start + len);
  char* p = out->data() + start;
  while (len > 0) {
    uint64_t x = rng.Next();
    for (int k = 0; k < 10 && len > 0; ++k, --len) {  // 62^10 < 2^64: ten characters per draw
      *p++ = kAlphanumeric[x % 62];
      x /= 62;
    }
  }
}

// A random alphanumeric string of 3..max_len characters.
std::string NextString(Rng& rng, size_t max_len) {
  std::string s;
  AppendAlphanumeric(rng, rng.Between(3, max_len), &s);
  return s;
}

// Padding that brings an event of current_size bytes to avg bytes on average (+-20%).
void NextExtra(Rng& rng, size_t current_size, size_t avg, std::string* out) {
  out->clear();
  if (current_size > avg) return;
  const uint64_t avg_extra = avg - current_size;
  const uint64_t delta = static_cast<uint64_t>(std::lround(static_cast<double>(avg_extra) * 0.2));
  if (delta == 0) return;
  AppendAlphanumeric(rng, rng.Between(avg_extra - delta, avg_extra + delta), out);
}

// 100 .. 100,000,000, log-uniform.
int64_t NextPrice(Rng& rng) {
  return static_cast<int64_t>(std::ceil(std::pow(10.0, rng.Unit() * 6.0) * 100.0));
}

uint64_t LastBase0PersonId(uint64_t n) {
  return n / kProportionTotal;
}

uint64_t NextBase0PersonId(uint64_t n, Rng& rng) {
  const uint64_t people = LastBase0PersonId(n) + 1;
  const uint64_t active = std::min(people, kActivePeople);
  return people - active + rng.Below(active + kPersonIdLead);
}

uint64_t LastBase0AuctionId(uint64_t n) {
  uint64_t epoch = n / kProportionTotal;
  uint64_t offset = n % kProportionTotal;
  if (offset < 1) {  // a person: the last auction is the previous epoch's third
    if (epoch == 0) return 0;
    --epoch;
    offset = kAuctionProportion - 1;
  } else if (offset >= 1 + kAuctionProportion) {
    offset = kAuctionProportion - 1;
  } else {
    offset -= 1;
  }
  return epoch * kAuctionProportion + offset;
}

uint64_t NextBase0AuctionId(uint64_t n, Rng& rng) {
  const uint64_t max = LastBase0AuctionId(n);
  const uint64_t min = max >= kInFlightAuctions ? max - kInFlightAuctions : 0;
  return min + rng.Below(max - min + 1);
}

uint32_t ReverseBits(uint32_t x) {
  uint32_t r = 0;
  for (int i = 0; i < 32; ++i, x >>= 1) r = (r << 1) | (x & 1);
  return r;
}

struct Channel {
  std::string name, url;
};

// The numbered channels and their URLs (each a function of the channel number).
const std::vector<Channel>& NumberedChannels() {
  static const std::vector<Channel> channels = [] {
    std::vector<Channel> v(kChannels);
    for (uint64_t c = 0; c < kChannels; ++c) {
      Rng rng{Mix64(c + 0x243F6A8885A308D3ULL)};
      v[c].name = fmt::format("channel-{}", c);
      v[c].url = "https://www.nexmark.com/" + NextString(rng, 5) + "/item.htm?query=1";
      if (rng.Below(10) != 9) v[c].url += fmt::format("&channel_id={}", ReverseBits(static_cast<uint32_t>(c)));
    }
    return v;
  }();
  return channels;
}

// ---- Tables and their fields ----

enum FieldType { kInt, kTime, kStr };
struct FieldDef {
  const char* name;
  FieldType type;
};
constexpr int kPerson = 0, kAuction = 1, kBid = 2;
constexpr const char* kTableNames[3] = {"person", "auction", "bid"};
const std::vector<FieldDef> kTableFields[3] = {
    {{"id", kInt},
     {"name", kStr},
     {"emailAddress", kStr},
     {"creditCard", kStr},
     {"city", kStr},
     {"state", kStr},
     {"date_time", kTime},
     {"extra", kStr}},
    {{"id", kInt},
     {"itemName", kStr},
     {"description", kStr},
     {"initialBid", kInt},
     {"reserve", kInt},
     {"date_time", kTime},
     {"expires", kTime},
     {"seller", kInt},
     {"category", kInt},
     {"extra", kStr}},
    {{"auction", kInt},
     {"bidder", kInt},
     {"price", kInt},
     {"channel", kStr},
     {"url", kStr},
     {"date_time", kTime},
     {"extra", kStr}},
};
constexpr size_t kMaxFields = 10;

std::string Normalized(std::string_view name) {
  std::string s;
  for (char c : name)
    if (c != '_') s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The table's columns by field (nullptr: the table does not have it); `row` is the slot to fill.
using FieldColumns = std::array<Column*, kMaxFields>;

inline void SetInt(const FieldColumns& c, int f, size_t row, int64_t v) {
  if (c[f]) c[f]->i64[row] = v;
}
inline void SetStr(const FieldColumns& c, int f, size_t row, std::string_view v) {
  if (c[f]) c[f]->str[row].assign(v);
}

int64_t EventMicros(uint64_t n) {
  return static_cast<int64_t>(n * kEventIntervalMs * 1000);
}

void FillPerson(uint64_t n, const FieldColumns& c, size_t row) {
  SetInt(c, 0, row, static_cast<int64_t>(LastBase0PersonId(n) + kFirstPersonId));
  Rng r1 = FieldRng(n, 1);
  std::string name = std::string(kFirstNames[r1.Below(kFirstNames.size())]) + " " +
                     std::string(kLastNames[r1.Below(kLastNames.size())]);
  Rng r2 = FieldRng(n, 2);
  std::string email = NextString(r2, 7) + "@" + NextString(r2, 5) + ".com";
  Rng r3 = FieldRng(n, 3);
  std::string card;
  for (int k = 0; k < 4; ++k) card += fmt::format("{}{:04d}", k ? " " : "", r3.Below(10000));
  Rng r4 = FieldRng(n, 4);
  std::string_view city = kCities[r4.Below(kCities.size())];
  Rng r5 = FieldRng(n, 5);
  std::string_view state = kStates[r5.Below(kStates.size())];
  SetStr(c, 1, row, name);
  SetStr(c, 2, row, email);
  SetStr(c, 3, row, card);
  SetStr(c, 4, row, city);
  SetStr(c, 5, row, state);
  SetInt(c, 6, row, EventMicros(n));
  if (c[7]) {
    Rng r7 = FieldRng(n, 7);
    NextExtra(r7, 8 + name.size() + email.size() + card.size() + city.size() + state.size(), kAvgPersonBytes,
              &c[7]->str[row]);
  }
}

void FillAuction(uint64_t n, const FieldColumns& c, size_t row) {
  SetInt(c, 0, row, static_cast<int64_t>(LastBase0AuctionId(n) + kFirstAuctionId));
  Rng r1 = FieldRng(n, 1);
  std::string item = NextString(r1, 20);
  Rng r2 = FieldRng(n, 2);
  std::string description = NextString(r2, 100);
  Rng r3 = FieldRng(n, 3);
  const int64_t initial_bid = NextPrice(r3);
  Rng r4 = FieldRng(n, 4);
  SetStr(c, 1, row, item);
  SetStr(c, 2, row, description);
  SetInt(c, 3, row, initial_bid);
  SetInt(c, 4, row, initial_bid + NextPrice(r4));
  SetInt(c, 5, row, EventMicros(n));
  Rng r6 = FieldRng(n, 6);
  SetInt(c, 6, row, EventMicros(n) + static_cast<int64_t>((1 + r6.Below(2 * kAuctionHorizonMs)) * 1000));
  Rng r7 = FieldRng(n, 7);
  const uint64_t seller =
      r7.Below(kHotSellerOdds) == 0 ? NextBase0PersonId(n, r7) : LastBase0PersonId(n) / kHotRatio * kHotRatio;
  SetInt(c, 7, row, static_cast<int64_t>(seller + kFirstPersonId));
  Rng r8 = FieldRng(n, 8);
  SetInt(c, 8, row, static_cast<int64_t>(kFirstCategoryId + r8.Below(kNumCategories)));
  if (c[9]) {
    Rng r9 = FieldRng(n, 9);
    NextExtra(r9, 8 + item.size() + description.size() + 8 * 3 + 8 * 2, kAvgAuctionBytes, &c[9]->str[row]);
  }
}

void FillBid(uint64_t n, const FieldColumns& c, size_t row) {
  if (c[0]) {
    Rng r = FieldRng(n, 0);
    const uint64_t a =
        r.Below(kHotAuctionOdds) == 0 ? NextBase0AuctionId(n, r) : LastBase0AuctionId(n) / kHotRatio * kHotRatio;
    c[0]->i64[row] = static_cast<int64_t>(a + kFirstAuctionId);
  }
  if (c[1]) {
    Rng r = FieldRng(n, 1);
    const uint64_t b =
        r.Below(kHotBidderOdds) == 0 ? NextBase0PersonId(n, r) : LastBase0PersonId(n) / kHotRatio * kHotRatio + 1;
    c[1]->i64[row] = static_cast<int64_t>(b + kFirstPersonId);
  }
  if (c[2]) {
    Rng r = FieldRng(n, 2);
    c[2]->i64[row] = NextPrice(r);
  }
  if (c[3] || c[4]) {
    Rng r = FieldRng(n, 3);
    const uint64_t number = r.Below(kChannels);
    if (r.Below(kHotChannelsRatio) == kHotChannelsRatio - 1) {
      const Channel& ch = NumberedChannels()[number];
      SetStr(c, 3, row, ch.name);
      SetStr(c, 4, row, ch.url);
    } else {
      const uint64_t hot = r.Below(kHotChannels.size());
      SetStr(c, 3, row, kHotChannels[hot]);
      SetStr(c, 4, row, kHotUrls[hot]);
    }
  }
  SetInt(c, 5, row, EventMicros(n));
  if (c[6]) {
    Rng r = FieldRng(n, 6);
    NextExtra(r, 8 * 3 + 8, kAvgBidBytes, &c[6]->str[row]);
  }
}

// ---- Options and the group of the three linked connectors ----

struct NexmarkOptions {
  uint64_t events = 100'000'000;
  uint64_t threads = 4;
  uint64_t batch_size_per_thread = 1000;
  uint64_t max_step_size_per_thread = 10000;
  uint64_t step_events() const { return 4 * max_step_size_per_thread; }
};

class NexmarkGroup : public ConnectorGroup {
 public:
  // Records table `kind`'s connector (written at `where`) and its options, if any.
  void Register(int kind, const std::string& where, const std::optional<NexmarkOptions>& options) {
    auto at = [&](const std::string& w) { return w.empty() ? std::string() : w + ": "; };
    if (seen_[kind])
      throw Error(ErrorKind::kUsage,
                  fmt::format("{}nexmark: a second connector for table '{}' (the first is at {}); Feldera's nexmark "
                              "takes exactly one connector per table",
                              at(where), kTableNames[kind], where_[kind]));
    if (options && options_)
      throw Error(ErrorKind::kUsage,
                  fmt::format("{}nexmark: 'options' given twice (also at {}); give them on one of the three "
                              "connectors, they apply to all",
                              at(where), options_where_));
    seen_[kind] = true;
    where_[kind] = where;
    if (options) {
      options_ = options;
      options_where_ = where;
    }
  }
  void Complete() override {
    std::string missing;
    std::string where;
    for (int k = 0; k < 3; ++k) {
      if (seen_[k]) {
        if (where.empty()) where = where_[k];
        continue;
      }
      missing += (missing.empty() ? "" : ", ") + std::string(kTableNames[k]);
    }
    if (!missing.empty())
      throw Error(ErrorKind::kUsage, fmt::format("{}{}nexmark: no connector for table {}: Feldera's nexmark needs one "
                                                 "connector on each of person, auction and bid",
                                                 where, where.empty() ? "" : ": ", missing));
  }
  const NexmarkOptions& options() const { return options_ ? *options_ : defaults_; }
  // The generator threads (shared by the three connectors, which the controller reads in turn).
  ThreadPool* pool() {
    if (options().threads <= 1) return nullptr;
    if (!pool_) pool_ = std::make_unique<ThreadPool>(static_cast<size_t>(options().threads));
    return pool_.get();
  }

 private:
  bool seen_[3] = {false, false, false};
  std::string where_[3];
  std::optional<NexmarkOptions> options_;
  NexmarkOptions defaults_;
  std::string options_where_;
  std::unique_ptr<ThreadPool> pool_;
};

class NexmarkConnector : public InputConnector {
 public:
  NexmarkConnector(int kind, const Schema& schema, std::vector<int> field_of_column,
                   std::shared_ptr<NexmarkGroup> group, std::string where)
      : kind_(kind),
        types_(schema.PhysTypes()),
        field_of_column_(std::move(field_of_column)),
        group_(std::move(group)),
        where_(std::move(where)) {}

  using InputConnector::Read;
  Batch Read(size_t max_records) override {
    const NexmarkOptions& o = group_->options();
    if (next_ >= o.events || max_records == 0) return EmptyBatch(types_);
    uint64_t end = std::min(next_ + o.step_events(), o.events);
    if (NexmarkCountBefore(kind_, end) - NexmarkCountBefore(kind_, next_) > max_records) {
      // Fewer events: up to and including this table's max_records-th event from next_.
      const uint64_t want = NexmarkCountBefore(kind_, next_) + max_records;
      uint64_t lo = next_, hi = end;  // smallest e with CountBefore(e) >= want
      while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (NexmarkCountBefore(kind_, mid) >= want)
          hi = mid;
        else
          lo = mid + 1;
      }
      end = lo;
    }
    Batch b = Generate(next_, end);
    next_ = end;
    records_ += b.size();
    return b;
  }
  bool AtEnd() const override { return next_ >= group_->options().events; }
  size_t max_batch_size() const override {
    // Every row of a step's events (so the controller never splits a step's range).
    return static_cast<size_t>(NexmarkCountBefore(kind_, group_->options().step_events()) + kProportionTotal);
  }
  uint64_t records() const override { return records_; }
  std::optional<uint64_t> total_records() const override { return NexmarkCountBefore(kind_, group_->options().events); }
  nlohmann::json Position() const override { return Json{{"event", next_}}; }
  void Seek(const nlohmann::json& position) override {
    if (!position.is_object() || !position.contains("event") || !position["event"].is_number_unsigned())
      throw Error(ErrorKind::kUsage, fmt::format("{}{}nexmark: cannot seek to {}: expected {{\"event\": N}}", where_,
                                                 where_.empty() ? "" : ": ", position.dump()));
    next_ = std::min(position["event"].get<uint64_t>(), group_->options().events);
    records_ = NexmarkCountBefore(kind_, next_);
  }
  bool Generated() const override { return true; }
  std::string Describe() const override {
    return fmt::format("nexmark({}, {} events)", kTableNames[kind_], group_->options().events);
  }

 private:
  // This table's rows among events [begin, end), in event order.
  Batch Generate(uint64_t begin, uint64_t end) {
    const uint64_t rows = NexmarkCountBefore(kind_, end) - NexmarkCountBefore(kind_, begin);
    std::vector<std::shared_ptr<Column>> cols;
    FieldColumns fc{};
    for (size_t i = 0; i < types_.size(); ++i) {
      auto col = std::make_shared<Column>(types_[i]);
      if (types_[i] == PhysType::kStr)
        col->str.resize(rows);
      else
        col->i64.resize(rows);
      fc[field_of_column_[i]] = col.get();
      cols.push_back(std::move(col));
    }
    const NexmarkOptions& o = group_->options();
    const uint64_t chunk = std::max<uint64_t>(o.batch_size_per_thread, 1);
    const size_t chunks = static_cast<size_t>((end - begin + chunk - 1) / chunk);
    auto fill = [&, begin, end](size_t j) {
      const uint64_t a = begin + j * chunk, b = std::min(end, a + chunk);
      size_t row = static_cast<size_t>(NexmarkCountBefore(kind_, a) - NexmarkCountBefore(kind_, begin));
      for (uint64_t n = a; n < b; ++n) {
        if (NexmarkEventKind(n) != kind_) continue;
        switch (kind_) {
          case kPerson:
            FillPerson(n, fc, row);
            break;
          case kAuction:
            FillAuction(n, fc, row);
            break;
          default:
            FillBid(n, fc, row);
        }
        ++row;
      }
    };
    ThreadPool* pool = chunks > 1 ? group_->pool() : nullptr;
    if (pool)
      pool->ParallelFor(chunks, fill);
    else
      for (size_t j = 0; j < chunks; ++j) fill(j);
    Batch b;
    b.cols.assign(cols.begin(), cols.end());
    b.weights.assign(rows, 1);
    return b;
  }

  int kind_;
  std::vector<PhysType> types_;
  std::vector<int> field_of_column_;
  std::shared_ptr<NexmarkGroup> group_;
  std::string where_;
  uint64_t next_ = 0;  // the next event id
  uint64_t records_ = 0;
};

}  // namespace

int NexmarkEventKind(uint64_t event) {
  const uint64_t r = event % kProportionTotal;
  return r == 0 ? kPerson : r <= kAuctionProportion ? kAuction : kBid;
}

uint64_t NexmarkCountBefore(int kind, uint64_t end) {
  const uint64_t epochs = end / kProportionTotal, offset = end % kProportionTotal;
  const uint64_t persons = epochs + (offset > 0 ? 1 : 0);
  const uint64_t auctions = epochs * kAuctionProportion + std::min<uint64_t>(offset > 0 ? offset - 1 : 0, 3);
  switch (kind) {
    case kPerson:
      return persons;
    case kAuction:
      return auctions;
    default:
      return end - persons - auctions;
  }
}

std::unique_ptr<InputConnector> MakeNexmarkInput(const Json& config, const Json* format, const Schema& schema,
                                                 const ConnectorContext& ctx) {
  auto fail = [&](const std::string& msg) {
    throw Error(ErrorKind::kUsage, ctx.where.empty() ? "nexmark: " + msg : ctx.where + ": nexmark: " + msg);
  };
  if (format != nullptr) {
    const Json* name = format->contains("name") ? &(*format)["name"] : nullptr;
    if (!name || !name->is_string() || name->get<std::string>() != "csv")
      fail(fmt::format("'format' must be csv (Feldera's) or absent; it generates rows, not {}",
                       name ? name->dump() : "a format without a name"));
  }
  if (!config.is_object()) fail(fmt::format("'config' must be an object {{table, options}}, not {}", config.dump()));
  for (auto it = config.begin(); it != config.end(); ++it)
    if (it.key() != "table" && it.key() != "options")
      fail(fmt::format("unknown key '{}' in 'config' (expected table, options)", it.key()));
  if (!config.contains("table") || !config["table"].is_string())
    fail("'config' needs a 'table': \"person\", \"auction\" or \"bid\"");
  const std::string table = config["table"].get<std::string>();
  int kind = -1;
  for (int k = 0; k < 3; ++k)
    if (table == kTableNames[k]) kind = k;
  if (kind < 0) fail(fmt::format("unknown table '{}' (expected person, auction or bid)", table));

  std::optional<NexmarkOptions> options;
  if (config.contains("options") && !config["options"].is_null()) {
    const Json& oj = config["options"];
    if (!oj.is_object()) fail(fmt::format("'options' must be an object, not {}", oj.dump()));
    options.emplace();
    for (auto it = oj.begin(); it != oj.end(); ++it) {
      uint64_t* slot = it.key() == "events"                     ? &options->events
                       : it.key() == "threads"                  ? &options->threads
                       : it.key() == "batch_size_per_thread"    ? &options->batch_size_per_thread
                       : it.key() == "max_step_size_per_thread" ? &options->max_step_size_per_thread
                                                                : nullptr;
      if (!slot)
        fail(
            fmt::format("unknown option '{}' (expected events, threads, batch_size_per_thread, "
                        "max_step_size_per_thread)",
                        it.key()));
      const Json& v = it.value();
      const bool ok = v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
      if (!ok) fail(fmt::format("option '{}' must be a non-negative integer, not {}", it.key(), v.dump()));
      *slot = v.get<uint64_t>();
      if (*slot == 0 && it.key() != "events") fail(fmt::format("option '{}' must be at least 1", it.key()));
    }
    if (options->threads > 256) fail(fmt::format("option 'threads' is {}; at most 256", options->threads));
    if (options->max_step_size_per_thread > (uint64_t{1} << 40)) fail("option 'max_step_size_per_thread' is too large");
  }

  // Columns by field.
  const std::vector<FieldDef>& fields = kTableFields[kind];
  std::vector<int> field_of_column;
  for (const Field& col : schema.fields) {
    int f = -1;
    for (size_t i = 0; i < fields.size(); ++i)
      if (Normalized(fields[i].name) == Normalized(col.name)) f = static_cast<int>(i);
    if (f < 0) {
      std::string list;
      for (const auto& d : fields) list += (list.empty() ? "" : ", ") + std::string(d.name);
      fail(fmt::format("table {} has a column '{}' that nexmark's {} events do not have (they have {})", ctx.relation,
                       col.name, table, list));
    }
    const FieldType t = fields[f].type;
    const bool fits = t == kInt    ? col.type.IsInteger()
                      : t == kTime ? col.type.id == TypeId::kTimestamp
                                   : col.type.IsString();
    if (!fits)
      fail(fmt::format("column {}.{} is {}, but nexmark's {} is {}", ctx.relation, col.name, col.type.ToString(),
                       fields[f].name,
                       t == kInt    ? "an integer (BIGINT)"
                       : t == kTime ? "a TIMESTAMP"
                                    : "a string (VARCHAR)"));
    for (size_t i = 0; i < field_of_column.size(); ++i)
      if (field_of_column[i] == f)
        fail(fmt::format("columns {} and {} of table {} are both nexmark's {}", schema.fields[i].name, col.name,
                         ctx.relation, fields[f].name));
    field_of_column.push_back(f);
  }

  std::shared_ptr<NexmarkGroup> group;
  if (ctx.groups) {
    auto& slot = (*ctx.groups)["nexmark"];
    if (!slot) slot = std::make_shared<NexmarkGroup>();
    group = std::static_pointer_cast<NexmarkGroup>(slot);
  } else {
    group = std::make_shared<NexmarkGroup>();
  }
  group->Register(kind, ctx.where, options);
  if (ctx.validate_only) return nullptr;
  return std::make_unique<NexmarkConnector>(kind, schema, std::move(field_of_column), std::move(group), ctx.where);
}

}  // namespace fld
