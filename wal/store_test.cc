// The state store's relations (wal/store.h): rows of any length, LMDB's key limit included, keep
// their weights through inserts, deletes and re-reads, checked against a map of row -> weight,
// and the content hash a reader computes equals the one the writer summed.
#include "wal/store.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/common/error.h"
#include "core/common/temp_dir.h"
#include "core/zset/batch.h"

namespace fld {
namespace {

const std::vector<PhysType> kTypes = {PhysType::kI64, PhysType::kStr};

// Text of length n that differs from other lengths' only at its end, so long rows share their
// first bytes (the part of a long row's key taken from its encoding).
std::string Text(size_t n, int variant) {
  std::string s(n, 'x');
  if (n > 0) s[n - 1] = static_cast<char>('a' + variant % 26);
  return s;
}

TEST_CASE("state store: rows longer than LMDB's key limit keep their weights", "[wal]") {
  TempDir dir;
  auto store = StateStore::Open(dir.path(), false, true);
  std::map<std::pair<int64_t, std::string>, int64_t> expected;
  std::mt19937 rng(7);
  uint64_t written_hash = 0;
  // Lengths around the key limit (511 bytes, the encoding adding 13 bytes to the text) and far beyond.
  const std::vector<size_t> lengths = {0, 10, 490, 497, 498, 499, 500, 600, 5000, 100000};
  for (int step = 0; step < 30; ++step) {
    BatchBuilder b(kTypes);
    for (int i = 0; i < 20; ++i) {
      const int64_t id = static_cast<int64_t>(rng() % 3);
      std::string text = Text(lengths[rng() % lengths.size()], static_cast<int>(rng() % 3));
      auto key = std::make_pair(id, text);
      // Deletes only what is there, so weights stay positive as a table's do.
      int64_t w = expected.count(key) && rng() % 2 ? -1 : 1;
      expected[key] += w;
      if (expected[key] == 0) expected.erase(key);
      std::vector<Value> row = {Value::Int(id), Value::String(text)};
      b.AppendRow(row, w);
    }
    auto txn = store->Begin();
    if (step == 0) {
      Batch first = Consolidate(b.Finish());
      txn->PutRelation("r", first);
      written_hash = txn->ApplyDelta("r2", first);  // the hash PutRelation's rows add up to
    } else if (step % 2 == 0) {
      written_hash += txn->ApplyDelta("r", b.Finish());
    } else {
      // A consolidation left in place over two parts, as a checkpoint writes a view's changes.
      const Batch all = b.Finish();
      std::vector<uint32_t> front, back;
      for (uint32_t r = 0; r < all.size(); ++r) (r < 7 ? front : back).push_back(r);
      const std::vector<Batch> parts = {Gather(all, front), Gather(all, back)};
      const ConsolidatedRows c = ConsolidateRows(parts);
      written_hash += txn->ApplyDelta("r", ConsolidatedPull(parts, c));
    }
    txn->Commit();

    // What a restart reads back: the rows, and their content hash equal to the writer's sum.
    uint64_t read_hash = 0;
    std::optional<Batch> got = store->ReadRelation("r", kTypes, &read_hash);
    REQUIRE(got.has_value());
    REQUIRE(read_hash == written_hash);
    std::map<std::pair<int64_t, std::string>, int64_t> read;
    for (size_t r = 0; r < got->size(); ++r) read[{got->Get(0, r).i, got->Get(1, r).s}] += got->weights[r];
    REQUIRE(read == expected);
  }
}

// StageRelation: the stored rows merged with a change into the relation's other slot over many
// small write transactions, seen by readers only once a transaction publishes it; a staging never
// published (the process died first) is cleared when the store is opened again and changes
// nothing. Interleaved with in-place changes, checked each step against a map of row -> weight.
TEST_CASE("state store: a damaged stored row is a corruption error on every read, each read ending", "[wal]") {
  TempDir dir;
  const std::string marker(40, 'Q');
  {
    auto store = StateStore::Open(dir.path(), false, true);
    BatchBuilder b(kTypes);
    const std::vector<Value> first = {Value::Int(1), Value::String("a")},
                             second = {Value::Int(2), Value::String(marker)};
    b.AppendRow(first, 1);
    b.AppendRow(second, 1);
    auto txn = store->Begin();
    txn->ApplyDelta("r", Consolidate(b.Finish()));
    txn->Commit();
  }
  // Damage the second row in the file: the byte before its text (the text's length) becomes
  // larger than what follows.
  {
    std::fstream f(dir.path() + "/data.mdb", std::ios::in | std::ios::out | std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const size_t at = bytes.find(marker);
    REQUIRE(at != std::string::npos);
    REQUIRE(bytes.find(marker, at + 1) == std::string::npos);
    f.seekp(static_cast<std::streamoff>(at - 1));
    f.put('\x7f');
  }
  auto store = StateStore::Open(dir.path(), true, false);
  // Each failed read must end its read transaction: LMDB has 126 reader slots, so leaked ones
  // would turn the 127th into "readers full" instead of the corruption.
  for (int i = 0; i < 300; ++i) {
    uint64_t h = 0;
    try {
      store->ReadRelation("r", kTypes, &h);
      FAIL("a damaged row was read");
    } catch (const Error& e) {
      INFO(e.what());
      REQUIRE(e.kind() == ErrorKind::kCorruption);
      REQUIRE(std::string(e.what()).find("a stored row of r is malformed") != std::string::npos);
    }
  }
}

TEST_CASE("state store: staged relations switch at the publishing transaction", "[wal]") {
  TempDir dir;
  auto store = StateStore::Open(dir.path(), false, true);
  using Rows = std::map<std::pair<int64_t, std::string>, int64_t>;
  Rows expected;
  std::mt19937 rng(11);
  uint64_t hash = 0;
  const std::vector<size_t> lengths = {0, 3, 10, 497, 498, 499, 500, 600, 3000};
  auto read = [&](StateStore& s, uint64_t* h) {
    Rows out;
    std::optional<Batch> got = s.ReadRelation("r", kTypes, h);
    if (!got) *h = 0;  // not written yet
    if (!got) return out;
    for (size_t r = 0; r < got->size(); ++r) out[{got->Get(0, r).i, got->Get(1, r).s}] += got->weights[r];
    return out;
  };
  int staged_steps = 0, replaced_steps = 0, abandoned = 0, abandoned_in_process = 0;
  for (int step = 0; step < 90; ++step) {
    BatchBuilder b(kTypes);
    Rows next = expected;
    const int n = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) {
      const int64_t id = static_cast<int64_t>(rng() % 5);
      auto key = std::make_pair(id, Text(lengths[rng() % lengths.size()], static_cast<int>(rng() % 4)));
      const int64_t w = next.count(key) && rng() % 2 ? -next[key] : 1 + static_cast<int64_t>(rng() % 2);
      if ((next[key] += w) == 0) next.erase(key);
      const std::vector<Value> row = {Value::Int(id), Value::String(key.second)};
      b.AppendRow(row, w);
    }
    const Batch delta = Consolidate(b.Finish());
    const int how = static_cast<int>(rng() % 6);
    if (how == 5) {
      // Replaced by the whole new contents (a table written from its operator's rows): the
      // stored rows are not read, and the hash returned is the new contents' own.
      BatchBuilder whole(kTypes);
      for (const auto& [key, w] : next)
        whole.AppendRow(std::vector<Value>{Value::Int(key.first), Value::String(key.second)}, w);
      const uint64_t staged_hash = store->StageRelation("r", whole.Finish(), 100, /*replace=*/true);
      uint64_t h = 0;
      REQUIRE(read(*store, &h) == expected);  // not visible yet
      REQUIRE(h == hash);
      auto txn = store->Begin();
      txn->PublishRelation("r");
      txn->Commit();
      hash = staged_hash;
      ++replaced_steps;
    } else if (how == 0) {  // in place
      auto txn = store->Begin();
      hash += txn->ApplyDelta("r", delta);
      txn->Commit();
    } else {
      // Transactions of ~100 bytes: a new one every few rows, long rows alone.
      const uint64_t staged_hash = store->StageRelation("r", delta, 100);
      uint64_t h = 0;
      REQUIRE(read(*store, &h) == expected);  // not visible yet
      REQUIRE(h == hash);
      if (how == 3) {
        // The process dies before its checkpoint: a new one finds the old contents.
        store.reset();
        store = StateStore::Open(dir.path(), false, true);
        ++abandoned;
        continue;
      }
      if (how == 4) {
        // The checkpoint fails after staging (a full disk) and the process goes on: the next
        // staging starts from the published contents, not from what this one left behind.
        ++abandoned_in_process;
        continue;
      }
      auto txn = store->Begin();
      txn->PublishRelation("r");
      txn->Commit();
      hash += staged_hash;
      ++staged_steps;
    }
    expected = std::move(next);
    uint64_t h = 0;
    REQUIRE(read(*store, &h) == expected);
    REQUIRE(h == hash);
    REQUIRE(store->RelationRows("r") == expected.size());
    // A reader of its own (fld query) sees the same.
    auto reader = StateStore::Open(dir.path(), true, false);
    REQUIRE(read(*reader, &h) == expected);
  }
  REQUIRE(staged_steps >= 10);
  REQUIRE(replaced_steps >= 10);
  REQUIRE(abandoned >= 5);
  REQUIRE(abandoned_in_process >= 5);
  // Publishing what was not staged is an error, not a silent switch to an empty slot; so is
  // publishing a staging that a later in-place write to the relation made stale.
  auto txn = store->Begin();
  REQUIRE_THROWS_AS(txn->PublishRelation("never staged"), Error);
  txn.reset();  // one write transaction at a time: staging opens its own
  BatchBuilder b(kTypes);
  b.AppendRow(std::vector<Value>{Value::Int(1), Value::String("x")}, 1);
  const Batch one = b.Finish();
  store->StageRelation("r", one, 100);
  txn = store->Begin();
  txn->ApplyDelta("r", one);
  REQUIRE_THROWS_AS(txn->PublishRelation("r"), Error);
}

// Operator entries against a map per node. Each round changes some nodes, in increasing order or
// not, with puts, erases (of absent keys too), repeated keys and long keys sharing their first
// bytes, in one of four ways: applied in place (ApplyState: appended where nothing is stored at
// or after the node, else searched), staged into the other slot and published (StageState, in
// transactions of a few entries; with `replace`, the stored state is dropped), or staged and
// then abandoned, the store closed before publishing (a crash: the state stays as it was). The
// contents must be the map's, the hashes the writer returns must be the readers', and a lookup
// opened in the first round must read the published slot after each Refresh.
TEST_CASE("state store: operator entries match a model, applied or staged", "[wal]") {
  TempDir dir;
  auto store = StateStore::Open(dir.path(), false, true);
  std::mt19937 rng(11);
  std::map<uint32_t, std::map<std::string, std::string>> model;
  uint64_t hash = 0;
  auto random_key = [&] {
    const int kind = static_cast<int>(rng() % 10);
    if (kind == 0) return Text(600 + rng() % 3, static_cast<int>(rng() % 4));  // long, shared prefix
    return "k" + std::to_string(rng() % 300);
  };
  std::unique_ptr<StateLookup> lookup;
  int staged = 0, replaced = 0, abandoned = 0;
  for (int round = 0; round < 60; ++round) {
    std::vector<uint32_t> nodes;
    for (uint32_t n = 1; n <= 6; ++n)
      if (rng() % 3 == 0) nodes.push_back(round < 6 ? n + 10 * static_cast<uint32_t>(round) : n * 10);
    const int way = static_cast<int>(rng() % 4);  // 0, 1: applied; 2: staged; 3: staged, abandoned
    const bool replace = way >= 2 && rng() % 4 == 0;
    auto next = model;
    if (replace) next.clear();
    std::vector<std::pair<int, StateDelta>> deltas;
    for (uint32_t node : nodes) {
      StateDelta& d = deltas.emplace_back(static_cast<int>(node), StateDelta()).second;
      auto& m = next[node];
      const int changes = 1 + static_cast<int>(rng() % 200);
      for (int i = 0; i < changes; ++i) {
        const std::string key = random_key();
        if (rng() % 4 == 0) {
          d.Erase(key);
          m.erase(key);
        } else {
          const std::string value = "v" + std::to_string(rng() % 1000);
          d.Put(key, value);
          m[key] = value;
        }
      }
    }
    if (way < 2) {
      auto txn = store->Begin();
      for (const auto& [node, d] : deltas) hash += txn->ApplyState(static_cast<uint32_t>(node), d);
      txn->Commit();
      model = next;
    } else {
      const uint64_t staged_hash = store->StageState(&deltas, replace, 200);
      for (const auto& [node, d] : deltas) REQUIRE(d.puts() + d.erases() == 0);  // emptied as written
      if (way == 2) {
        auto txn = store->Begin();
        txn->PublishState();
        txn->Commit();
        model = next;
        hash = staged_hash;
        ++staged;
        replaced += replace;
      } else {
        lookup.reset();
        store.reset();
        store = StateStore::Open(dir.path(), false, true);
        ++abandoned;
      }
    }
    for (auto it = model.begin(); it != model.end();) it = it->second.empty() ? model.erase(it) : std::next(it);
    uint64_t read_hash = 0;
    for (const auto& [node, m] : model) {
      std::map<std::string, std::string> got;
      read_hash += store->ForEachStateEntry(node, [&](std::string_view k, std::string_view v) {
        REQUIRE(got.emplace(std::string(k), std::string(v)).second);
      });
      REQUIRE(got == m);
    }
    REQUIRE(read_hash == hash);
    if (!lookup) lookup = store->OpenLookup(10);
    lookup->Refresh();
    for (int i = 0; i < 300; i += 7) {
      const std::string key = "k" + std::to_string(i);
      std::string v;
      const auto m = model.find(10);
      const bool want = m != model.end() && m->second.count(key);
      REQUIRE(lookup->Get(key, &v) == want);
      if (want) REQUIRE(v == m->second.at(key));
    }
  }
  REQUIRE(staged > 5);
  REQUIRE(replaced > 0);
  REQUIRE(abandoned > 5);
  // Publishing with nothing staged, or after the state changed in place, is an error, not a
  // switch to a stale slot.
  std::vector<std::pair<int, StateDelta>> none;
  store->StageState(&none, false);
  {
    auto txn = store->Begin();
    StateDelta d;
    d.Put("k1", "x");
    txn->ApplyState(10, d);
    REQUIRE_THROWS_AS(txn->PublishState(), Error);
  }
  auto txn = store->Begin();
  REQUIRE_THROWS_AS(txn->PublishState(), Error);
}

// Lookups on other threads while the state is staged and published over and over: every
// lookup between two Refreshes reads one whole checkpoint (every key present, all with the
// value of one round), never a slot that was emptied or not yet filled.
TEST_CASE("state store: lookups see whole checkpoints while slots switch", "[wal]") {
  TempDir dir;
  auto store = StateStore::Open(dir.path(), false, true);
  constexpr int kKeys = 40, kRounds = 400;
  auto stage = [&](int round) {
    std::vector<std::pair<int, StateDelta>> deltas(1);
    deltas[0].first = 10;
    for (int k = 0; k < kKeys; ++k) deltas[0].second.Put("k" + std::to_string(k), "r" + std::to_string(round));
    store->StageState(&deltas, false, 256);
    auto txn = store->Begin();
    txn->PublishState();
    txn->Commit();
  };
  stage(0);
  std::atomic<bool> done{false};
  std::atomic<int> reads{0}, bad{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r)
    readers.emplace_back([&] {
      auto lookup = store->OpenLookup(10);
      std::string v, first;
      while (!done.load()) {
        lookup->Refresh();
        for (int k = 0; k < kKeys; ++k) {
          if (!lookup->Get("k" + std::to_string(k), &v) || (k > 0 && v != first)) ++bad;
          if (k == 0) first = v;
        }
        ++reads;
      }
    });
  for (int round = 1; round <= kRounds; ++round) stage(round);
  done = true;
  for (auto& t : readers) t.join();
  REQUIRE(reads.load() > 0);
  REQUIRE(bad.load() == 0);
}

// Point lookups of operator entries (StateStore::OpenLookup): short keys and keys beyond LMDB's
// limit read back as written; a lookup keeps reading the checkpoint it started on until its
// Refresh, while another transaction commits; entries of other nodes are not seen.
TEST_CASE("state store: lookups read one committed checkpoint until refreshed", "[wal]") {
  TempDir dir;
  auto store = StateStore::Open(dir.path(), false, true);
  struct Change {
    std::string key, value;
    bool put;
  };
  auto apply = [&](uint32_t node, const std::vector<Change>& changes) {
    StateDelta d;
    for (const Change& c : changes) c.put ? d.Put(c.key, c.value) : d.Erase(c.key);
    auto txn = store->Begin();
    txn->ApplyState(node, d);
    txn->Commit();
  };
  const std::string long_a = Text(3000, 0), long_b = Text(3000, 1);  // same prefix, different keys
  apply(7, {{"k1", "v1", true}, {long_a, "long a", true}, {"gone", "x", true}});
  apply(8, {{"k1", "other node", true}});
  auto lookup = store->OpenLookup(7);
  std::string v;
  REQUIRE(lookup->Get("k1", &v));
  REQUIRE(v == "v1");
  REQUIRE(lookup->Get(long_a, &v));
  REQUIRE(v == "long a");
  REQUIRE_FALSE(lookup->Get(long_b, &v));
  REQUIRE_FALSE(lookup->Get("k2", &v));
  REQUIRE(lookup->Get("gone", &v));

  // Out of key order; a key erased then put, another put then erased: applied in key order, a
  // key's changes in the order given.
  apply(7, {{"k1", "v1 again", true},
            {"k4", "x", true},
            {"gone", "", false},
            {"k3", "", false},
            {long_b, "long b", true},
            {"k3", "v3", true},
            {"k2", "", true},
            {"k4", "", false}});
  // Still the first checkpoint...
  REQUIRE(lookup->Get("k1", &v));
  REQUIRE(v == "v1");
  REQUIRE(lookup->Get("gone", &v));
  REQUIRE_FALSE(lookup->Get(long_b, &v));
  // ... until Refresh.
  lookup->Refresh();
  lookup->Refresh();  // twice is harmless
  REQUIRE(lookup->Get("k1", &v));
  REQUIRE(v == "v1 again");
  REQUIRE_FALSE(lookup->Get("gone", &v));
  REQUIRE(lookup->Get(long_b, &v));
  REQUIRE(v == "long b");
  REQUIRE(lookup->Get(long_a, &v));
  REQUIRE(v == "long a");
  REQUIRE(lookup->Get("k2", &v));
  REQUIRE(v.empty());
  REQUIRE(lookup->Get("k3", &v));
  REQUIRE(v == "v3");
  REQUIRE_FALSE(lookup->Get("k4", &v));
  // A lookup from another thread, on a store read by this one at the same time.
  std::string from_thread;
  bool found = false;
  std::thread t([&] {
    auto other = store->OpenLookup(8);
    found = other->Get("k1", &from_thread);
  });
  t.join();
  REQUIRE(found);
  REQUIRE(from_thread == "other node");
}

}  // namespace
}  // namespace fld
