#include "pipelines/connectors/nexmark.h"

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <set>

#include "core/common/error.h"

namespace fld {
namespace {

using Json = nlohmann::json;

SqlType Big() {
  return SqlType::Of(TypeId::kBigInt);
}
SqlType Str() {
  return SqlType::Of(TypeId::kVarchar);
}
SqlType Ts() {
  return SqlType::Of(TypeId::kTimestamp, false);
}

// Feldera's declarations (benchmark/feldera-sql/benchmarks/nexmark/table.sql).
Schema PersonSchema() {
  Schema s;
  s.fields = {{"id", Big()},   {"name", Str()},  {"emailAddress", Str()}, {"creditCard", Str()},
              {"city", Str()}, {"state", Str()}, {"date_time", Ts()},     {"extra", Str()}};
  return s;
}
Schema AuctionSchema() {
  Schema s;
  s.fields = {{"id", Big()},       {"itemName", Str()}, {"description", Str()}, {"initialBid", Big()},
              {"reserve", Big()},  {"date_time", Ts()}, {"expires", Ts()},      {"seller", Big()},
              {"category", Big()}, {"extra", Str()}};
  return s;
}
Schema BidSchema() {
  Schema s;
  s.fields = {{"auction", Big()}, {"bidder", Big()},   {"price", Big()}, {"channel", Str()},
              {"url", Str()},     {"date_time", Ts()}, {"extra", Str()}};
  return s;
}
const char* kTables[3] = {"person", "auction", "bid"};
Schema SchemaOf(int t) {
  return t == 0 ? PersonSchema() : t == 1 ? AuctionSchema() : BidSchema();
}

struct Trio {
  ConnectorGroups groups;
  std::unique_ptr<InputConnector> c[3];
};

// The three linked connectors; `options` go on the bid connector.
std::unique_ptr<Trio> MakeTrio(const Json& options) {
  auto t = std::make_unique<Trio>();
  for (int k = 0; k < 3; ++k) {
    ConnectorContext ctx;
    ctx.relation = kTables[k];
    ctx.where = std::string("spec.yaml:") + std::to_string(k + 1);
    ctx.groups = &t->groups;
    Json cfg = {{"table", kTables[k]}};
    if (k == 2) cfg["options"] = options;
    Json format = {{"name", "csv"}};
    t->c[k] = MakeNexmarkInput(cfg, &format, SchemaOf(k), ctx);
  }
  for (auto& [name, g] : t->groups) g->Complete();
  return t;
}

// Reads every input once per round (as the controller polls) until all have ended.
std::vector<Batch> ReadAll(Trio& t, size_t max_records = SIZE_MAX) {
  std::vector<std::vector<Batch>> parts(3);
  for (int round = 0; round < 1000000; ++round) {
    bool all = true;
    for (int k = 0; k < 3; ++k) {
      if (t.c[k]->AtEnd()) continue;
      all = false;
      parts[k].push_back(t.c[k]->Read(std::min(max_records, t.c[k]->max_batch_size())));
    }
    if (all) break;
  }
  std::vector<Batch> out;
  for (int k = 0; k < 3; ++k) out.push_back(parts[k].empty() ? EmptyBatch(SchemaOf(k).PhysTypes()) : Concat(parts[k]));
  return out;
}

void CheckSame(const Batch& a, const Batch& b) {
  REQUIRE(a.size() == b.size());
  REQUIRE(a.width() == b.width());
  for (size_t c = 0; c < a.width(); ++c) {
    CHECK(a.cols[c]->i64 == b.cols[c]->i64);
    CHECK(a.cols[c]->str == b.cols[c]->str);
  }
  CHECK(a.weights == b.weights);
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kUsage);
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("nexmark: event kinds in proportions 1:3:46 and their counts", "[nexmark]") {
  uint64_t counts[3] = {0, 0, 0};
  for (uint64_t n = 0; n < 5000; ++n) {
    for (int k = 0; k < 3; ++k) CHECK(NexmarkCountBefore(k, n) == counts[k]);
    ++counts[NexmarkEventKind(n)];
  }
  CHECK(counts[0] == 100);
  CHECK(counts[1] == 300);
  CHECK(counts[2] == 4600);
  CHECK(NexmarkEventKind(0) == 0);
  CHECK(NexmarkEventKind(1) == 1);
  CHECK(NexmarkEventKind(3) == 1);
  CHECK(NexmarkEventKind(4) == 2);
  CHECK(NexmarkEventKind(49) == 2);
  CHECK(NexmarkEventKind(50) == 0);
}

TEST_CASE("nexmark: the same rows for any threads, batch sizes and read sizes", "[nexmark]") {
  auto base = MakeTrio({{"events", 23456}, {"threads", 1}});
  std::vector<Batch> want = ReadAll(*base);
  CHECK(want[0].size() == NexmarkCountBefore(0, 23456));
  CHECK(want[1].size() == NexmarkCountBefore(1, 23456));
  CHECK(want[2].size() == NexmarkCountBefore(2, 23456));
  CHECK(base->c[2]->total_records() == NexmarkCountBefore(2, 23456));
  for (Json opts : {Json{{"events", 23456}, {"threads", 3}, {"batch_size_per_thread", 7}},
                    Json{{"events", 23456}, {"threads", 2}, {"max_step_size_per_thread", 333}},
                    Json{{"events", 23456},
                         {"threads", 4},
                         {"batch_size_per_thread", 5000},
                         {"max_step_size_per_thread", 100000}}}) {
    auto t = MakeTrio(opts);
    std::vector<Batch> got = ReadAll(*t);
    for (int k = 0; k < 3; ++k) CheckSame(got[k], want[k]);
  }
  // Reads smaller than a step's rows take fewer events and lose none.
  auto t = MakeTrio({{"events", 23456}, {"threads", 2}});
  std::vector<Batch> got = ReadAll(*t, 97);
  for (int k = 0; k < 3; ++k) CheckSame(got[k], want[k]);
}

TEST_CASE("nexmark: steps cover the same events in the three tables; Seek regenerates", "[nexmark]") {
  auto t = MakeTrio({{"events", 200000}, {"max_step_size_per_thread", 1000}});
  for (int k = 0; k < 3; ++k) {
    Batch b = t->c[k]->Read(t->c[k]->max_batch_size());
    CHECK(t->c[k]->Position() == Json{{"event", 4000}});
    CHECK(b.size() == NexmarkCountBefore(k, 4000));
  }
  // A second trio seeks to the first one's positions and continues identically.
  auto rest = MakeTrio({{"events", 200000}, {"max_step_size_per_thread", 1000}});
  for (int k = 0; k < 3; ++k) rest->c[k]->Seek(t->c[k]->Position());
  std::vector<Batch> a = ReadAll(*t), b = ReadAll(*rest);
  for (int k = 0; k < 3; ++k) {
    CheckSame(a[k], b[k]);
    CHECK(t->c[k]->records() == NexmarkCountBefore(k, 200000));
    CHECK(rest->c[k]->records() == NexmarkCountBefore(k, 200000));
  }
  CHECK_THROWS_AS(t->c[0]->Seek(Json{{"row", 3}}), Error);
}

TEST_CASE("nexmark: the standard event model", "[nexmark]") {
  const uint64_t events = 500000;
  auto t = MakeTrio({{"events", events}, {"threads", 2}});
  std::vector<Batch> all = ReadAll(*t);
  const Batch &p = all[0], &a = all[1], &b = all[2];
  const int64_t ms = 1000;  // microseconds

  // People: ids 1000, 1001, ... one per 50 events (500 ms of event time apart).
  const std::set<std::string> states = {"AZ", "CA", "ID", "OR", "WA", "WY"};
  for (size_t i = 0; i < p.size(); ++i) {
    CHECK(p.cols[0]->i64[i] == static_cast<int64_t>(1000 + i));
    CHECK(p.cols[6]->i64[i] == static_cast<int64_t>(i) * 500 * ms);
    CHECK(states.count(p.cols[5]->str[i]) == 1);
    const std::string& card = p.cols[3]->str[i];
    CHECK(card.size() == 19);
    CHECK(p.cols[2]->str[i].find('@') != std::string::npos);
    CHECK(p.cols[1]->str[i].find(' ') != std::string::npos);
  }
  // Auctions: ids 1000, 1001, ...; event n = 50 * (i / 3) + 1 + i % 3; expiry 1 ms .. 33.32 s later.
  std::map<int64_t, int64_t> auction_time;
  for (size_t i = 0; i < a.size(); ++i) {
    const int64_t n = static_cast<int64_t>(50 * (i / 3) + 1 + i % 3);
    CHECK(a.cols[0]->i64[i] == static_cast<int64_t>(1000 + i));
    CHECK(a.cols[5]->i64[i] == n * 10 * ms);
    const int64_t len = a.cols[6]->i64[i] - a.cols[5]->i64[i];
    CHECK(len >= 1 * ms);
    CHECK(len <= 33320 * ms);
    CHECK(a.cols[3]->i64[i] >= 100);
    CHECK(a.cols[4]->i64[i] > a.cols[3]->i64[i]);  // reserve = initial bid + another price
    CHECK(a.cols[8]->i64[i] >= 10);
    CHECK(a.cols[8]->i64[i] <= 14);
    // Sellers: people that exist, or at most 10 ahead (Beam lets ids lead by 10).
    CHECK(a.cols[7]->i64[i] >= 1000);
    CHECK(a.cols[7]->i64[i] <= 1000 + n / 50 + 10);
    auction_time[a.cols[0]->i64[i]] = a.cols[5]->i64[i];
  }
  // Bids: for auctions opened by then, by people that exist (or at most 10 ahead); prices
  // 100 .. 10^8; 99% on the four hot channels.
  size_t hot_channel = 0, hot_auction = 0, hot_bidder = 0, channel_id = 0;
  int64_t min_price = INT64_MAX, max_price = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    const int64_t ts = b.cols[5]->i64[i];
    CHECK(ts % (10 * ms) == 0);
    const int64_t n = ts / (10 * ms);
    CHECK(NexmarkEventKind(static_cast<uint64_t>(n)) == 2);
    auto it = auction_time.find(b.cols[0]->i64[i]);
    REQUIRE(it != auction_time.end());
    CHECK(it->second < ts);
    CHECK(b.cols[0]->i64[i] >= static_cast<int64_t>(1000 + NexmarkCountBefore(1, n)) - 101);
    CHECK(b.cols[1]->i64[i] <= 1000 + n / 50 + 10);
    hot_auction += (b.cols[0]->i64[i] - 1000) % 100 == 0;
    hot_bidder += (b.cols[1]->i64[i] - 1000) % 100 == 1;
    min_price = std::min(min_price, b.cols[2]->i64[i]);
    max_price = std::max(max_price, b.cols[2]->i64[i]);
    const std::string& ch = b.cols[3]->str[i];
    const std::string& url = b.cols[4]->str[i];
    if (ch == "Google" || ch == "Facebook" || ch == "Baidu" || ch == "Apple") {
      ++hot_channel;
      CHECK(url.rfind("https://www.nexmark.com/", 0) == 0);
    } else {
      CHECK(ch.rfind("channel-", 0) == 0);
      channel_id += url.find("&channel_id=") != std::string::npos;
    }
    const size_t extra = b.cols[6]->str[i].size();
    CHECK(extra >= 54);
    CHECK(extra <= 82);
  }
  CHECK(min_price >= 100);
  CHECK(max_price <= 100000000);
  CHECK(min_price < 200);
  CHECK(max_price > 50000000);
  const double nb = static_cast<double>(b.size());
  CHECK(hot_channel / nb == Approx(0.99).margin(0.003));
  CHECK(channel_id / (nb - hot_channel) == Approx(0.9).margin(0.05));
  CHECK(hot_auction / nb > 0.5);  // half go to a hot auction, a few others hit a multiple of 100
  CHECK(hot_auction / nb < 0.52);
  CHECK(hot_bidder / nb > 0.75);
  CHECK(hot_bidder / nb < 0.77);
}

TEST_CASE("nexmark: tables may omit fields without changing the others", "[nexmark]") {
  auto full = MakeTrio({{"events", 5000}});
  std::vector<Batch> want = ReadAll(*full);
  ConnectorGroups groups;
  Schema s;
  s.fields = {{"price", Big()}, {"AUCTION", SqlType::Of(TypeId::kInteger)}};
  ConnectorContext ctx;
  ctx.relation = "b2";
  ctx.groups = &groups;
  auto c = MakeNexmarkInput({{"table", "bid"}, {"options", {{"events", 5000}}}}, nullptr, s, ctx);
  Batch got = c->Read(c->max_batch_size());
  REQUIRE(got.size() == want[2].size());
  CHECK(got.cols[0]->i64 == want[2].cols[2]->i64);
  CHECK(got.cols[1]->i64 == want[2].cols[0]->i64);
}

TEST_CASE("nexmark: configuration errors name the key, the table or the column", "[nexmark]") {
  auto make = [](Json cfg, const Schema& s, ConnectorGroups* groups = nullptr, const Json* format = nullptr) {
    ConnectorContext ctx;
    ctx.relation = "t";
    ctx.where = "spec.yaml:7";
    ctx.groups = groups;
    return MakeNexmarkInput(cfg, format, s, ctx);
  };
  CHECK_THAT(ErrorOf([&] {
               make({{"table", "bids"}}, BidSchema());
             }),
             Catch::Contains("spec.yaml:7") && Catch::Contains("unknown table 'bids'"));
  CHECK_THAT(ErrorOf([&] {
               make({{"table", "bid"}, {"rate", 5}}, BidSchema());
             }),
             Catch::Contains("unknown key 'rate'"));
  CHECK_THAT(ErrorOf([&] {
               make({{"table", "bid"}, {"options", {{"event", 5}}}}, BidSchema());
             }),
             Catch::Contains("unknown option 'event'"));
  CHECK_THAT(ErrorOf([&] {
               make({{"table", "bid"}, {"options", {{"threads", 0}}}}, BidSchema());
             }),
             Catch::Contains("'threads' must be at least 1"));
  CHECK_THAT(ErrorOf([&] {
               make({{"table", "bid"}, {"options", {{"events", -1}}}}, BidSchema());
             }),
             Catch::Contains("non-negative integer"));
  CHECK_THAT(ErrorOf([&] {
               make({{"table", "person"}}, BidSchema());
             }),
             Catch::Contains("column 'auction'") && Catch::Contains("person"));
  Schema wrong = BidSchema();
  wrong.fields[2].type = SqlType::Of(TypeId::kDouble);
  CHECK_THAT(ErrorOf([&] {
               make({{"table", "bid"}}, wrong);
             }),
             Catch::Contains("t.price is DOUBLE") && Catch::Contains("integer"));
  Json json_format = {{"name", "json"}};
  CHECK_THAT(ErrorOf([&] {
               make({{"table", "bid"}}, BidSchema(), nullptr, &json_format);
             }),
             Catch::Contains("'format' must be csv"));
  // The group: one connector per table, options once, all three present.
  {
    ConnectorGroups g;
    make({{"table", "bid"}, {"options", {{"events", 10}}}}, BidSchema(), &g);
    CHECK_THAT(ErrorOf([&] {
                 make({{"table", "bid"}}, BidSchema(), &g);
               }),
               Catch::Contains("a second connector for table 'bid'"));
    CHECK_THAT(ErrorOf([&] {
                 make({{"table", "person"}, {"options", {{"events", 10}}}}, PersonSchema(), &g);
               }),
               Catch::Contains("'options' given twice"));
    CHECK_THAT(ErrorOf([&] { g["nexmark"]->Complete(); }), Catch::Contains("no connector for table person, auction"));
  }
}

}  // namespace fld
