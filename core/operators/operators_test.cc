// Property tests for the incremental operators (core/operators): each stateful operator is run on
// random sequences of valid Z-set changes and, after every step, the integral of its output
// changes is compared with a from-scratch recomputation of the query over the integral of its
// input changes (the DBSP correctness rule I(Q^Δ(Δ)) == Q(I(Δ))). The reference implementations
// below are deliberately naive (nested loops, std::map) and share no code with the operators.
// Further properties: results do not depend on how input is cut into steps; save/restore at any
// step reproduces the same outputs byte for byte; a one-row change after a large load emits only
// the changed rows. Every test uses a fixed seed.
#include <malloc.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/common/error.h"
#include "core/common/serialize.h"
#include "core/common/thread_pool.h"
#include "core/expr/expr.h"
#include "core/operators/aggregate.h"
#include "core/operators/asof_join.h"
#include "core/operators/bag_set_op.h"
#include "core/operators/constant.h"
#include "core/operators/distinct.h"
#include "core/operators/integrate.h"
#include "core/operators/join.h"
#include "core/operators/map.h"
#include "core/operators/source.h"
#include "core/operators/topk.h"
#include "core/operators/union_all.h"
#include "core/operators/upsert.h"
#include "core/operators/window.h"
#include "core/zset/batch.h"

namespace fld {
namespace {

using Row = std::vector<Value>;
using ZSet = std::map<Row, int64_t>;                   // consolidated: no zero weights
using Changes = std::vector<std::pair<Row, int64_t>>;  // one step's change, in order, unconsolidated
using Types = std::vector<PhysType>;

// ------------------------------------------------------------------------------------ printing

std::string Show(const Value& v) {
  char buf[64];
  switch (v.kind) {
    case Value::Kind::kNull:
      return "NULL";
    case Value::Kind::kInt:
      return std::to_string(v.i);
    case Value::Kind::kDouble:
      std::snprintf(buf, sizeof buf, "%.17gd", v.d == 0.0 ? 0.0 : v.d);  // -0.0 is 0.0
      return buf;
    case Value::Kind::kString:
      return "'" + v.s + "'";
  }
  return "?";
}

std::string Show(const Row& r) {
  std::string s = "(";
  for (size_t i = 0; i < r.size(); ++i) s += (i ? ", " : "") + Show(r[i]);
  return s + ")";
}

std::string Show(const ZSet& z) {
  std::string s = "{";
  for (const auto& [r, w] : z) s += "\n  " + Show(r) + " x" + std::to_string(w);
  return s + (z.empty() ? "}" : "\n}");
}

std::string Show(const Changes& c) {
  std::string s = "[";
  for (const auto& [r, w] : c) s += " " + Show(r) + "x" + std::to_string(w);
  return s + " ]";
}

// "" when equal, else both sides (only built on mismatch, so the hot path stays cheap).
std::string Diff(const ZSet& actual, const ZSet& expected) {
  if (actual == expected) return "";
  return "actual " + Show(actual) + "\nexpected " + Show(expected);
}

// ------------------------------------------------------------------------------ Z-set helpers

void AddInto(ZSet* z, const Row& r, int64_t w) {
  if (w == 0) return;
  auto it = z->try_emplace(r, 0).first;
  it->second += w;
  if (it->second == 0) z->erase(it);
}

Row RowOf(const Batch& b, size_t r) {
  Row row;
  for (size_t c = 0; c < b.width(); ++c) row.push_back(b.Get(c, r));
  return row;
}

void AddInto(ZSet* z, const Batch& b) {
  for (size_t r = 0; r < b.size(); ++r) AddInto(z, RowOf(b, r), b.weights[r]);
}

ZSet ToZSet(const Batch& b) {
  ZSet z;
  AddInto(&z, b);
  return z;
}

ZSet ToZSet(const Changes& c) {
  ZSet z;
  for (const auto& [r, w] : c) AddInto(&z, r, w);
  return z;
}

Batch MakeBatch(const Types& types, const Changes& ch) {
  BatchBuilder b(types);
  for (const auto& [r, w] : ch) b.AppendRow(r, w);
  return b.Finish();
}

// "" when the batch is well formed: `types` columns, every column as long as the weights, a null
// vector either absent or one byte per row.
std::string ShapeError(const Batch& b, const Types& types) {
  if (b.width() != types.size()) return "width " + std::to_string(b.width()) + " != " + std::to_string(types.size());
  for (size_t c = 0; c < types.size(); ++c) {
    const Column& col = *b.cols[c];
    if (col.phys != types[c]) return "column " + std::to_string(c) + " has the wrong physical type";
    if (col.size() != b.size()) return "column " + std::to_string(c) + " length != weights";
    if (!col.nulls.empty() && col.nulls.size() != b.size()) return "column " + std::to_string(c) + " null vector";
  }
  return "";
}

// The batch as (row encoding, weight) in order: what "byte-identical output" compares.
std::vector<std::pair<std::string, int64_t>> Encoded(const Batch& b) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (size_t r = 0; r < b.size(); ++r) {
    std::string enc;
    EncodeRow(&enc, b, r);
    out.emplace_back(std::move(enc), b.weights[r]);
  }
  return out;
}

// "" when both batches have the same rows (by encoding) with the same weights in the same order.
std::string ByteDiff(const Batch& a, const Batch& b) {
  if (Encoded(a) == Encoded(b)) return "";
  auto show = [](const Batch& x) {
    std::string s;
    for (size_t r = 0; r < x.size(); ++r) s += " " + Show(RowOf(x, r)) + "x" + std::to_string(x.weights[r]);
    return s;
  };
  return "first:" + show(a) + "\nsecond:" + show(b);
}

std::string SaveOf(const Operator& op) {
  std::string s;
  StateWriter w(&s);
  op.SaveState(w);
  return s;
}

// ------------------------------------------------------------------------- random generation

struct ColSpec {
  PhysType phys;
  std::vector<Value> domain;
  double null_p = 0;
};

std::vector<Value> Ints(std::initializer_list<int64_t> xs) {
  std::vector<Value> v;
  for (int64_t x : xs) v.push_back(Value::Int(x));
  return v;
}
std::vector<Value> Doubles(std::initializer_list<double> xs) {
  std::vector<Value> v;
  for (double x : xs) v.push_back(Value::Double(x));
  return v;
}
std::vector<Value> Strings(std::initializer_list<const char*> xs) {
  std::vector<Value> v;
  for (const char* x : xs) v.push_back(Value::String(x));
  return v;
}

// Small domains so that keys collide and rows are deleted and re-inserted. Doubles are dyadic
// and small, so every sum the tests form is exact whatever the order of addition.
const ColSpec kKey3{PhysType::kI64, Ints({0, 1, 2}), 0.15};
const ColSpec kKeyNN{PhysType::kI64, Ints({0, 1, 2, 3}), 0};
const ColSpec kKeyWide{PhysType::kI64, Ints({-(int64_t{1} << 40), 0, int64_t{1} << 40, 7}), 0.1};
const ColSpec kKeyStr{PhysType::kStr, Strings({"", "x", "y"}), 0.15};
const ColSpec kKeyDbl{PhysType::kF64, Doubles({-0.0, 0.0, 1.5, -2.0}), 0.15};
const ColSpec kInt{PhysType::kI64, Ints({-2, -1, 0, 1, 3, 100}), 0.2};
const ColSpec kDbl{PhysType::kF64, Doubles({-1.5, -0.0, 0.0, 0.5, 2.25, 1024.0}), 0.2};
const ColSpec kStr{PhysType::kStr, Strings({"", "a", "b", "ab"}), 0.2};
const ColSpec kCents{PhysType::kI64, Ints({-150, 0, 1, 99, 250}), 0.2};  // DECIMAL(10,2)
const ColSpec kBool{PhysType::kI64, Ints({0, 1}), 0.2};                  // BOOLEAN
// Strings longer than an InlineKey holds inline (23 bytes), one with a zero byte.
const ColSpec kLongStr{PhysType::kStr,
                       {Value::String(std::string(30, 'b')), Value::String(std::string(30, 'a') + "z"),
                        Value::String(std::string(30, 'a')),
                        Value::String(std::string("a\0", 2) + std::string(25, 'c')), Value::String("short")},
                       0.2};
const ColSpec kIntNN{PhysType::kI64, Ints({-2, -1, 0, 1, 3, 100}), 0};   // INT NOT NULL
const ColSpec kCentsNN{PhysType::kI64, Ints({-150, 0, 1, 99, 250}), 0};  // DECIMAL(10,2) NOT NULL
// DECIMAL(38, 2): 36-digit values, so sums need the full 128 bits.
const ColSpec kWideCents{PhysType::kStr,
                         {Value::String(EncodeInt128(-Pow10Wide(36) + 7)), Value::String(EncodeInt128(0)),
                          Value::String(EncodeInt128(Pow10Wide(36) - 1)), Value::String(EncodeInt128(12345))},
                         0.2};

// DECIMAL(38, 2) values beyond 64 bits in units of the scale, yet small enough for a naive
// variance in 128 bits.
const ColSpec kWideMid{PhysType::kStr,
                       {Value::String(EncodeInt128(-Pow10Wide(15) + 3)), Value::String(EncodeInt128(0)),
                        Value::String(EncodeInt128(Pow10Wide(15) - 1)), Value::String(EncodeInt128(12345)),
                        Value::String(EncodeInt128(7))},
                       0.2};

Types TypesOf(const std::vector<ColSpec>& specs) {
  Types t;
  for (const auto& s : specs) t.push_back(s.phys);
  return t;
}

struct Gen {
  std::mt19937_64 rng;
  explicit Gen(uint64_t seed) : rng(seed) {}

  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }

  Value Pick(const ColSpec& s) {
    if (s.null_p > 0 && Chance(s.null_p)) return Value::Null();
    return s.domain[static_cast<size_t>(Int(0, static_cast<int>(s.domain.size()) - 1))];
  }
  Row RandomRow(const std::vector<ColSpec>& specs) {
    Row r;
    for (const auto& s : specs) r.push_back(Pick(s));
    return r;
  }

  // A valid change of the contents *cur (which it updates): inserts of random rows (weight 1,
  // sometimes 2) and deletes of rows present at that point (one copy, sometimes all copies).
  Changes ValidDelta(const std::vector<ColSpec>& specs, ZSet* cur, int max_changes = 6) {
    Changes ch;
    int n = Int(0, max_changes);
    for (int i = 0; i < n; ++i) {
      if (!cur->empty() && Chance(0.4)) {
        auto it = cur->begin();
        std::advance(it, Int(0, static_cast<int>(cur->size()) - 1));
        int64_t w = (it->second >= 2 && Chance(0.5)) ? -it->second : -1;
        Row r = it->first;
        ch.emplace_back(r, w);
        AddInto(cur, r, w);
      } else {
        Row r = RandomRow(specs);
        int64_t w = Chance(0.1) ? 2 : 1;
        ch.emplace_back(r, w);
        AddInto(cur, r, w);
      }
    }
    return ch;
  }

  // Any change at all: random rows with weights in [-3, 3] (zero included).
  Changes ArbitraryDelta(const std::vector<ColSpec>& specs, int max_changes = 8) {
    Changes ch;
    int n = Int(0, max_changes);
    for (int i = 0; i < n; ++i) ch.emplace_back(RandomRow(specs), Int(-3, 3));
    return ch;
  }
};

// ------------------------------------------------------------------------ scenario harness

// One operator under test: how to build it, what its inputs look like, and the naive query.
struct Scenario {
  std::string name;
  int iterations = 200;  // random sequences for the correctness check (fewer for the others)
  std::vector<std::vector<ColSpec>> inputs;
  Types out_types;
  std::function<std::unique_ptr<Operator>()> make;
  // Optional: the operator using a thread pool (sharded state, core/zset/exchange.h).
  std::function<std::unique_ptr<Operator>(ThreadPool*)> make_pooled;
  // The expected contents of the output from the integrated inputs and, for order-dependent
  // operators (upsert), every change so far in order.
  std::function<ZSet(const std::vector<ZSet>& integrals, const std::vector<Changes>& history)> naive;
  // Optional: a custom change generator (default: ValidDelta).
  std::function<Changes(Gen&, size_t input, ZSet* cur)> delta;
  // The operator promises consolidated output (no row twice, no zero weight) ...
  bool consolidated = false;
  // ... whose weights are all +1 or -1 (a set's changes: aggregate, distinct, upsert).
  bool unit_weights = false;
  // Integrate: extra per-step check of its Contents().
  std::function<std::string(const Operator&, const std::vector<ZSet>&)> extra_check;
};

// A random sequence of steps: per step, per input, one change.
struct Sequence {
  std::vector<std::vector<Changes>> steps;  // steps[s][input]
};

Sequence RandomSequence(const Scenario& sc, Gen& g, int min_steps, int max_steps) {
  Sequence seq;
  std::vector<ZSet> cur(sc.inputs.size());
  int n = g.Int(min_steps, max_steps);
  for (int s = 0; s < n; ++s) {
    std::vector<Changes> step;
    for (size_t i = 0; i < sc.inputs.size(); ++i) {
      // Leave an input idle now and then so one-sided steps happen.
      if (sc.inputs.size() > 1 && g.Chance(0.25)) {
        step.emplace_back();
        continue;
      }
      step.push_back(sc.delta ? sc.delta(g, i, &cur[i]) : g.ValidDelta(sc.inputs[i], &cur[i]));
    }
    seq.steps.push_back(std::move(step));
  }
  return seq;
}

Batch RunStep(Operator& op, const Scenario& sc, const std::vector<Changes>& step) {
  std::vector<Batch> batches;
  for (size_t i = 0; i < sc.inputs.size(); ++i) batches.push_back(MakeBatch(TypesOf(sc.inputs[i]), step[i]));
  std::vector<const Batch*> ptrs;
  for (const auto& b : batches) ptrs.push_back(&b);
  return op.Step(ptrs);
}

std::string DescribeSequence(const Sequence& seq) {
  std::string s;
  for (size_t k = 0; k < seq.steps.size(); ++k) {
    s += "step " + std::to_string(k) + ":";
    for (size_t i = 0; i < seq.steps[k].size(); ++i) s += " in" + std::to_string(i) + Show(seq.steps[k][i]);
    s += "\n";
  }
  return s;
}

// Passes when err is empty; else fails with the context (built only then).
void Expect(const std::string& err, const std::function<std::string()>& context) {
  if (err.empty()) {
    SUCCEED();
    return;
  }
  FAIL(context() << "\n" << err);
}

// I(output) == Q(I(input)) after every step of `iterations` random sequences of 1-10 steps.
void CheckCorrectness(const Scenario& sc, uint64_t seed) {
  Gen g(seed);
  for (int it = 0; it < sc.iterations; ++it) {
    Sequence seq = RandomSequence(sc, g, 1, 10);
    auto op = sc.make();
    std::vector<ZSet> integrals(sc.inputs.size());
    std::vector<Changes> history(sc.inputs.size());
    ZSet out;
    for (size_t s = 0; s < seq.steps.size(); ++s) {
      const auto& step = seq.steps[s];
      Batch delta = RunStep(*op, sc, step);
      for (size_t i = 0; i < step.size(); ++i)
        for (const auto& [r, w] : step[i]) {
          AddInto(&integrals[i], r, w);
          history[i].emplace_back(r, w);
        }
      AddInto(&out, delta);
      std::string err = ShapeError(delta, sc.out_types);
      if (err.empty()) err = Diff(out, sc.naive(integrals, history));
      if (err.empty() && sc.consolidated && Consolidate(delta).size() != delta.size())
        err = "output is not consolidated: " + Show(ToZSet(delta));
      if (err.empty() && sc.unit_weights)
        for (int64_t w : delta.weights)
          if (w != 1 && w != -1) err = "output weight " + std::to_string(w);
      if (err.empty() && sc.extra_check) err = sc.extra_check(*op, integrals);
      Expect(err, [&] {
        return sc.name + " iteration " + std::to_string(it) + " step " + std::to_string(s) + "\n" +
               DescribeSequence(seq);
      });
    }
  }
}

// Feeding the same changes cut into different steps gives the same integrated output.
void CheckStepBoundaries(const Scenario& sc, uint64_t seed) {
  Gen g(seed);
  for (int it = 0; it < std::max(20, sc.iterations / 5); ++it) {
    Sequence seq = RandomSequence(sc, g, 2, 10);
    INFO(sc.name << " iteration " << it << "\n" << DescribeSequence(seq));
    // (a) one step per generated step
    auto a = sc.make();
    ZSet out_a;
    for (const auto& step : seq.steps) AddInto(&out_a, RunStep(*a, sc, step));
    // (b) everything in one step
    auto b = sc.make();
    std::vector<Changes> all(sc.inputs.size());
    for (const auto& step : seq.steps)
      for (size_t i = 0; i < step.size(); ++i) all[i].insert(all[i].end(), step[i].begin(), step[i].end());
    ZSet out_b = ToZSet(RunStep(*b, sc, all));
    REQUIRE(Diff(out_b, out_a) == "");
    // (c) the concatenation re-cut at random points, with some empty steps in between
    auto c = sc.make();
    ZSet out_c;
    std::vector<size_t> pos(sc.inputs.size(), 0);
    bool more = true;
    while (more) {
      more = false;
      std::vector<Changes> step(sc.inputs.size());
      for (size_t i = 0; i < sc.inputs.size(); ++i) {
        size_t take = std::min<size_t>(all[i].size() - pos[i], static_cast<size_t>(g.Int(0, 6)));
        step[i].assign(all[i].begin() + pos[i], all[i].begin() + pos[i] + take);
        pos[i] += take;
        more |= pos[i] < all[i].size();
      }
      AddInto(&out_c, RunStep(*c, sc, step));
    }
    REQUIRE(Diff(out_c, out_a) == "");
  }
}

// Save at a random step, restore into a fresh operator, continue both: identical output batches
// (same encodings, same order), and the restored state saves to the same bytes.
void CheckSaveRestore(const Scenario& sc, uint64_t seed) {
  Gen g(seed);
  for (int it = 0; it < std::max(20, sc.iterations / 5); ++it) {
    Sequence seq = RandomSequence(sc, g, 1, 10);
    INFO(sc.name << " iteration " << it << "\n" << DescribeSequence(seq));
    auto a = sc.make();
    REQUIRE(a->HasState());
    size_t cut = static_cast<size_t>(g.Int(0, static_cast<int>(seq.steps.size())));
    for (size_t s = 0; s < cut; ++s) RunStep(*a, sc, seq.steps[s]);
    std::string saved = SaveOf(*a);
    auto b = sc.make();
    if (g.Chance(0.5)) {
      // Restoring replaces whatever state the operator had.
      Sequence other = RandomSequence(sc, g, 1, 3);
      for (const auto& step : other.steps) RunStep(*b, sc, step);
    }
    StateReader reader(saved);
    b->RestoreState(reader);
    REQUIRE(reader.AtEnd());
    REQUIRE((SaveOf(*b) == saved));
    for (size_t s = cut; s < seq.steps.size(); ++s) {
      INFO("step " << s << " (restored at " << cut << ")");
      Batch oa = RunStep(*a, sc, seq.steps[s]);
      Batch ob = RunStep(*b, sc, seq.steps[s]);
      REQUIRE(ByteDiff(oa, ob) == "");
    }
    REQUIRE((SaveOf(*a) == SaveOf(*b)));
    // A truncated checkpoint is reported, never read past its end.
    if (!saved.empty()) {
      size_t len = static_cast<size_t>(g.Int(0, static_cast<int>(saved.size()) - 1));
      auto c = sc.make();
      StateReader trunc(std::string_view(saved).substr(0, len));
      REQUIRE_THROWS_AS(c->RestoreState(trunc), Error);
    }
  }
}

// Incremental checkpoints (keyed state): a store that applies every step's SaveChanges (erases,
// then puts) holds the whole state; restoring from it gives the same state and the same outputs
// afterwards; and a step with no input reports no changed entry.
// op.SaveChanges applied to a map standing for the store (st) and a header (hdr); returns how
// many entries it put or erased.
size_t SaveChangesInto(Operator& op, std::map<std::string, std::string>* st, std::string* hdr) {
  hdr->clear();
  StateWriter w(hdr);
  StateDelta d;
  op.SaveChanges(w, d);
  d.ForEach([&](std::string_view k, std::string_view v, bool put) {
    if (put)
      (*st)[std::string(k)] = std::string(v);
    else
      st->erase(std::string(k));
  });
  return d.puts() + d.erases();
}

void CheckIncrementalSave(const Scenario& sc, uint64_t seed) {
  if (!sc.make()->HasKeyedState()) return;
  Gen g(seed);
  for (int it = 0; it < std::max(20, sc.iterations / 5); ++it) {
    Sequence seq = RandomSequence(sc, g, 1, 10);
    INFO(sc.name << " iteration " << it << "\n" << DescribeSequence(seq));
    auto a = sc.make();
    a->TrackChanges();
    std::map<std::string, std::string> stored;
    std::string header;
    auto save = SaveChangesInto;
    size_t cut = static_cast<size_t>(g.Int(0, static_cast<int>(seq.steps.size())));
    for (size_t s = 0; s < cut; ++s) {
      RunStep(*a, sc, seq.steps[s]);
      if (g.Chance(0.6)) save(*a, &stored, &header);
    }
    save(*a, &stored, &header);
    REQUIRE(save(*a, &stored, &header) == 0);  // nothing changed since
    auto b = sc.make();
    b->TrackChanges();
    if (g.Chance(0.5))
      for (const auto& step : RandomSequence(sc, g, 1, 3).steps) RunStep(*b, sc, step);
    StateReader hr(header);
    b->BeginRestore(hr);
    for (const auto& [k, v] : stored) b->RestoreEntry(k, v);
    b->EndRestore();
    REQUIRE((SaveOf(*b) == SaveOf(*a)));
    std::map<std::string, std::string> stored_b = stored;
    std::string header_b;
    REQUIRE(save(*b, &stored_b, &header_b) == 0);  // restored entries count as saved
    for (size_t s = cut; s < seq.steps.size(); ++s) {
      INFO("step " << s << " (restored at " << cut << ")");
      Batch oa = RunStep(*a, sc, seq.steps[s]);
      Batch ob = RunStep(*b, sc, seq.steps[s]);
      REQUIRE(ByteDiff(oa, ob) == "");
      save(*a, &stored, &header);
      save(*b, &stored_b, &header_b);
      REQUIRE(stored == stored_b);
      REQUIRE(header == header_b);
    }
    // The store still restores the final state.
    auto c = sc.make();
    StateReader hc(header);
    c->BeginRestore(hc);
    for (const auto& [k, v] : stored) c->RestoreEntry(k, v);
    c->EndRestore();
    REQUIRE((SaveOf(*c) == SaveOf(*a)));
  }
}

// Sharded (a pool of 2 or 3 workers) and unsharded operators given the same steps emit the same
// bytes, save the same state and store the same keyed entries; a state saved with one number of
// shards restores into another and continues identically.
void CheckSharded(const Scenario& sc, uint64_t seed) {
  if (!sc.make_pooled) return;
  ThreadPool two(2), three(3);
  Gen g(seed);
  auto save = SaveChangesInto;
  for (int it = 0; it < std::max(20, sc.iterations / 4); ++it) {
    Sequence seq = RandomSequence(sc, g, 2, 10);
    INFO(sc.name << " iteration " << it << "\n" << DescribeSequence(seq));
    auto plain = sc.make();
    auto sharded = sc.make_pooled(it % 2 ? &two : &three);
    plain->TrackChanges();
    sharded->TrackChanges();
    std::map<std::string, std::string> st_plain, st_sharded;
    std::string hdr_plain, hdr_sharded;
    const size_t cut = static_cast<size_t>(g.Int(1, static_cast<int>(seq.steps.size())));
    for (size_t s = 0; s < cut; ++s) {
      INFO("step " << s);
      REQUIRE(ByteDiff(RunStep(*plain, sc, seq.steps[s]), RunStep(*sharded, sc, seq.steps[s])) == "");
      REQUIRE((SaveOf(*plain) == SaveOf(*sharded)));
      save(*plain, &st_plain, &hdr_plain);
      save(*sharded, &st_sharded, &hdr_sharded);
      REQUIRE(st_plain == st_sharded);
      REQUIRE(hdr_plain == hdr_sharded);
    }
    // Restore the stored entries into the other number of shards (and the whole-state form into
    // one shard), then continue.
    auto moved = sc.make_pooled(it % 2 ? &three : &two);
    StateReader hr(hdr_sharded);
    moved->BeginRestore(hr);
    for (const auto& [k, v] : st_sharded) moved->RestoreEntry(k, v);
    moved->EndRestore();
    auto whole = sc.make();
    std::string saved = SaveOf(*sharded);
    StateReader wr(saved);
    whole->RestoreState(wr);
    REQUIRE((SaveOf(*moved) == SaveOf(*plain)));
    for (size_t s = cut; s < seq.steps.size(); ++s) {
      INFO("step " << s << " after restoring at " << cut);
      Batch want = RunStep(*plain, sc, seq.steps[s]);
      REQUIRE(ByteDiff(want, RunStep(*moved, sc, seq.steps[s])) == "");
      REQUIRE(ByteDiff(want, RunStep(*whole, sc, seq.steps[s])) == "");
    }
  }
}

// State beyond memory (operator.h): a store standing for the checkpoint store, whose committed
// versions are kept whole, so a lookup reads exactly the version its last Refresh saw.
class VersionedStore : public StateSource {
 public:
  using Entries = std::map<std::string, std::string>;
  VersionedStore() : committed_(std::make_shared<Entries>()) {}
  std::unique_ptr<StateLookup> OpenLookup(uint32_t) override { return std::make_unique<Lookup>(this); }
  // Applies one SaveChanges's delta (erases and puts, in order) as a new committed version.
  void Commit(const StateDelta& d) {
    auto next = std::make_shared<Entries>(*committed_);
    d.ForEach([&](std::string_view k, std::string_view v, bool put) {
      if (put)
        (*next)[std::string(k)] = std::string(v);
      else
        next->erase(std::string(k));
    });
    committed_ = std::move(next);
  }
  const Entries& committed() const { return *committed_; }
  size_t reads = 0;

 private:
  struct Lookup : StateLookup {
    explicit Lookup(VersionedStore* s) : store(s), version(s->committed_) {}
    bool Get(std::string_view key, std::string* value) override {
      ++store->reads;
      auto it = version->find(std::string(key));
      if (it == version->end()) return false;
      *value = it->second;
      return true;
    }
    void Refresh() override { version = store->committed_; }
    VersionedStore* store;
    std::shared_ptr<const Entries> version;
  };
  std::shared_ptr<const Entries> committed_;
};

// A store-backed operator (sharded or not), checkpointed at random moments (a checkpoint's
// changes taken at one step and committed some steps later, as the background writer does),
// evicting its clean entries at random commits and sometimes restored lazily (nothing loaded,
// everything read back on demand) into another number of shards, emits the same bytes as one
// that keeps everything in memory, and its store ends holding exactly that one's state.
void CheckBacked(const Scenario& sc, uint64_t seed) {
  if (!sc.make()->CanBackState()) return;
  ThreadPool two(2), three(3);
  Gen g(seed);
  size_t reads = 0;
  for (int it = 0; it < std::max(20, sc.iterations / 4); ++it) {
    Sequence seq = RandomSequence(sc, g, 2, 12);
    INFO(sc.name << " iteration " << it << "\n" << DescribeSequence(seq));
    auto make = [&](int variant) -> std::unique_ptr<Operator> {
      if (!sc.make_pooled || variant == 0) return sc.make();
      return sc.make_pooled(variant == 1 ? &two : &three);
    };
    auto plain = sc.make();
    plain->TrackChanges();
    VersionedStore store;
    auto backed = make(it % 3);
    backed->TrackChanges();
    backed->BackState(&store, 0, false);
    std::optional<StateDelta> in_flight;                 // saved, not yet committed
    size_t saved_after = 0, committed_after = SIZE_MAX;  // the step after which they were taken
    std::string header, committed_header;
    size_t evictions = 0, lazy_restores = 0;
    auto commit = [&](bool evict) {
      store.Commit(*in_flight);
      in_flight.reset();
      committed_after = saved_after;
      committed_header = header;
      backed->StateCommitted(evict);
      evictions += evict;
    };
    for (size_t s = 0; s < seq.steps.size(); ++s) {
      INFO("step " << s << " (" << evictions << " evictions, " << lazy_restores << " lazy restores so far)");
      REQUIRE(ByteDiff(RunStep(*plain, sc, seq.steps[s]), RunStep(*backed, sc, seq.steps[s])) == "");
      if (in_flight && g.Chance(0.6)) commit(g.Chance(0.7));
      if (!in_flight && g.Chance(0.5)) {
        in_flight.emplace();
        header.clear();
        StateWriter w(&header);
        backed->SaveChanges(w, *in_flight);
        saved_after = s;
        if (g.Chance(0.5)) commit(g.Chance(0.7));  // else the next steps run while it is written
      }
      if (committed_after == s && g.Chance(0.4)) {
        // A restart from the checkpoint just committed (nothing ran since).
        auto restored = make(g.Int(0, 2));
        restored->TrackChanges();
        StateReader r(committed_header);
        restored->BeginRestore(r);
        restored->EndRestore();
        restored->BackState(&store, 0, true);
        backed = std::move(restored);
        in_flight.reset();  // (empty: taken after the commit, with nothing run since)
        ++lazy_restores;
      }
    }
    if (in_flight) commit(false);
    in_flight.emplace();
    header.clear();
    StateWriter w(&header);
    backed->SaveChanges(w, *in_flight);
    commit(true);
    std::map<std::string, std::string> want;
    std::string want_header;
    SaveChangesInto(*plain, &want, &want_header);
    REQUIRE(store.committed() == want);
    REQUIRE(committed_header == want_header);
    // After the final eviction every entry is clean: none is left in memory.
    REQUIRE(backed->StateMemoryBytes() == 0);
    reads += store.reads;
  }
  REQUIRE(reads > 0);  // the evicted and lazily restored entries were read back
}

void CheckAll(const Scenario& sc, uint64_t seed) {
  CheckCorrectness(sc, seed);
  CheckStepBoundaries(sc, seed + 1);
  CheckSaveRestore(sc, seed + 2);
  CheckIncrementalSave(sc, seed + 3);
}

// ------------------------------------------------------------------------------- join

// Naive outer/inner equi-join: nested loops; a key with a NULL never matches; unmatched rows of
// a padded side are emitted with NULLs for the other side.
ZSet NaiveJoin(const ZSet& L, const ZSet& R, const std::vector<int>& lk, const std::vector<int>& rk, bool pad_l,
               bool pad_r, size_t nl, size_t nr) {
  auto matches = [&](const Row& l, const Row& r) {
    for (size_t k = 0; k < lk.size(); ++k) {
      const Value& a = l[lk[k]];
      const Value& b = r[rk[k]];
      if (a.IsNull() || b.IsNull() || !(a == b)) return false;
    }
    return true;
  };
  ZSet out;
  std::set<Row> r_matched;
  for (const auto& [l, lw] : L) {
    bool matched = false;
    for (const auto& [r, rw] : R) {
      if (!matches(l, r)) continue;
      matched = true;
      r_matched.insert(r);
      Row row = l;
      row.insert(row.end(), r.begin(), r.end());
      AddInto(&out, row, lw * rw);
    }
    if (!matched && pad_l) {
      Row row = l;
      row.resize(nl + nr);
      AddInto(&out, row, lw);
    }
  }
  if (pad_r)
    for (const auto& [r, rw] : R) {
      if (r_matched.count(r)) continue;
      Row row(nl);
      row.insert(row.end(), r.begin(), r.end());
      AddInto(&out, row, rw);
    }
  return out;
}

Scenario JoinScenario(std::string name, std::vector<ColSpec> left, std::vector<ColSpec> right, std::vector<int> lk,
                      std::vector<int> rk, bool pad_l, bool pad_r) {
  Scenario sc;
  sc.name = name + (pad_l && pad_r ? " full" : pad_l ? " left" : pad_r ? " right" : " inner");
  sc.inputs = {left, right};
  Types lt = TypesOf(left), rt = TypesOf(right);
  sc.out_types = lt;
  sc.out_types.insert(sc.out_types.end(), rt.begin(), rt.end());
  sc.make = [=] { return std::make_unique<JoinOp>(lt, rt, lk, rk, pad_l, pad_r); };
  sc.make_pooled = [=](ThreadPool* pool) { return std::make_unique<JoinOp>(lt, rt, lk, rk, pad_l, pad_r, pool); };
  sc.consolidated = pad_l || pad_r;
  size_t nl = left.size(), nr = right.size();
  sc.naive = [=](const std::vector<ZSet>& in, const std::vector<Changes>&) {
    return NaiveJoin(in[0], in[1], lk, rk, pad_l, pad_r, nl, nr);
  };
  return sc;
}

std::vector<Scenario> JoinScenarios() {
  std::vector<Scenario> out;
  for (int pad = 0; pad < 4; ++pad) {
    bool pl = pad & 1, pr = pad & 2;
    out.push_back(JoinScenario("join on int", {kKey3, kStr}, {kKey3, kDbl}, {0}, {0}, pl, pr));
    out.push_back(
        JoinScenario("join on (int, str)", {kKey3, kKeyStr, kInt}, {kKeyStr, kInt, kKey3}, {0, 1}, {2, 0}, pl, pr));
    out.back().iterations = 60;
    out.push_back(JoinScenario("join on double (-0.0 = 0.0)", {kKeyDbl}, {kInt, kKeyDbl}, {0}, {1}, pl, pr));
    out.back().iterations = 60;
  }
  out.push_back(JoinScenario("cross join", {kKey3, kStr}, {kInt}, {}, {}, false, false));
  out.back().iterations = 60;
  // Keys whose rows move from packed records to ordered maps (and back to nothing) all the time.
  for (int pad = 0; pad < 4; ++pad) {
    bool pl = pad & 1, pr = pad & 2;
    Scenario sc = JoinScenario("join on int, big keys", {kKey3, kStr, kInt}, {kKey3, kDbl}, {0}, {0}, pl, pr);
    Types lt = TypesOf({kKey3, kStr, kInt}), rt = TypesOf({kKey3, kDbl});
    sc.make = [=] {
      auto j = std::make_unique<JoinOp>(lt, rt, std::vector<int>{0}, std::vector<int>{0}, pl, pr);
      j->set_big_key_bytes(40);
      return j;
    };
    sc.make_pooled = [=](ThreadPool* pool) {
      auto j = std::make_unique<JoinOp>(lt, rt, std::vector<int>{0}, std::vector<int>{0}, pl, pr, pool);
      j->set_big_key_bytes(40);
      return j;
    };
    sc.iterations = 60;
    out.push_back(std::move(sc));
  }
  // Inner joins whose sides keep every row in their spines (core/zset/spine.h) until a save folds
  // them: lookups read trace and spine together, including rows cancelled across runs.
  for (const bool big : {false, true}) {
    Scenario sc = JoinScenario(big ? "join on int, spines kept, big keys" : "join on int, spines kept",
                               {kKey3, kStr, kInt}, {kKey3, kDbl}, {0}, {0}, false, false);
    Types lt = TypesOf({kKey3, kStr, kInt}), rt = TypesOf({kKey3, kDbl});
    auto make = [=](ThreadPool* pool) {
      auto j = std::make_unique<JoinOp>(lt, rt, std::vector<int>{0}, std::vector<int>{0}, false, false, pool);
      j->set_spine_lookup_cost(0);
      if (big) j->set_big_key_bytes(40);
      return j;
    };
    sc.make = [=] { return make(nullptr); };
    sc.make_pooled = make;
    sc.iterations = 60;
    out.push_back(std::move(sc));
  }
  Scenario cross = JoinScenario("cross join, spines kept", {kKey3, kStr}, {kInt}, {}, {}, false, false);
  Types clt = TypesOf({kKey3, kStr}), crt = TypesOf({kInt});
  cross.make = [=] {
    auto j = std::make_unique<JoinOp>(clt, crt, std::vector<int>{}, std::vector<int>{}, false, false);
    j->set_spine_lookup_cost(0);
    return j;
  };
  cross.iterations = 40;
  out.push_back(std::move(cross));
  return out;
}

TEST_CASE("join: I(output) equals the from-scratch join of I(inputs)", "[operators]") {
  uint64_t seed = 1000;
  for (const auto& sc : JoinScenarios()) CheckCorrectness(sc, seed++);
}

TEST_CASE("join: output does not depend on step boundaries", "[operators]") {
  uint64_t seed = 2000;
  for (const auto& sc : JoinScenarios()) CheckStepBoundaries(sc, seed++);
}

TEST_CASE("join: save/restore reproduces outputs byte for byte", "[operators]") {
  uint64_t seed = 3000;
  for (const auto& sc : JoinScenarios()) CheckSaveRestore(sc, seed++);
}

TEST_CASE("join: incremental saves store exactly the state", "[operators]") {
  uint64_t seed = 3500;
  for (const auto& sc : JoinScenarios()) CheckIncrementalSave(sc, seed++);
}

TEST_CASE("join: sharded across workers, the same outputs and state as one shard", "[operators]") {
  uint64_t seed = 3700;
  for (const auto& sc : JoinScenarios()) CheckSharded(sc, seed++);
}

TEST_CASE("join: is bilinear for arbitrary weights", "[operators]") {
  // Join distributes over + on each side, whatever the weights: feeding ΔL and ΔR with random
  // (also negative, also absent-row) weights still integrates to I(L) ⋈ I(R) for the inner join.
  Scenario sc = JoinScenario("join", {kKey3, kStr}, {kKey3, kInt}, {0}, {0}, false, false);
  sc.delta = [&](Gen& g, size_t i, ZSet* cur) {
    Changes ch = g.ArbitraryDelta(sc.inputs[i]);
    for (const auto& [r, w] : ch) AddInto(cur, r, w);
    return ch;
  };
  sc.iterations = 100;
  CheckCorrectness(sc, 4000);
}

// A join whose consumers read only some columns (the others come out NULL) and, inner, filters
// each side on entry (core/plan/join_pushdown.h): the naive join of the filtered inputs with
// the unread columns set to NULL.
Scenario PrunedJoinScenario(bool pad_l, bool pad_r) {
  std::vector<ColSpec> left = {kKey3, kStr, kInt}, right = {kInt, kKey3, kStr};
  const std::vector<int> lk = {0}, rk = {1};
  // Read: left.$0 (key) and left.$2; right.$0 and right.$1 (key; kept though unread).
  const std::vector<bool> needed = {true, false, true, true, false, false};
  const bool filtered = !pad_l && !pad_r;
  Scenario sc = JoinScenario("pruned, filtered join", left, right, lk, rk, pad_l, pad_r);
  Types lt = TypesOf(left), rt = TypesOf(right);
  const SqlType big = SqlType::Of(TypeId::kBigInt), boolean = SqlType::Of(TypeId::kBoolean);
  auto pred = [=](int col, int64_t bound) {
    std::vector<BoundExprPtr> args;
    args.push_back(MakeColumn(col, big));
    args.push_back(MakeLiteral(Value::Int(bound), big));
    return MakeCall(ExprOp::kGe, boolean, std::move(args));
  };
  sc.make = [=] {
    auto op = std::make_unique<JoinOp>(lt, rt, lk, rk, pad_l, pad_r);
    op->SetNeededColumns(needed);
    if (filtered) {
      op->SetSideFilter(true, pred(2, 0));   // left.$2 >= 0
      op->SetSideFilter(false, pred(0, 1));  // right.$0 >= 1
    }
    return op;
  };
  auto keep = [](const ZSet& z, int col, int64_t bound) {
    ZSet out;
    for (const auto& [r, w] : z)
      if (!r[col].IsNull() && r[col].i >= bound) out[r] = w;
    return out;
  };
  sc.naive = [=](const std::vector<ZSet>& in, const std::vector<Changes>&) {
    ZSet l = filtered ? keep(in[0], 2, 0) : in[0];
    ZSet r = filtered ? keep(in[1], 0, 1) : in[1];
    ZSet out;
    for (const auto& [joined, w] : NaiveJoin(l, r, lk, rk, pad_l, pad_r, 3, 3)) {
      Row row = joined;
      for (size_t c = 0; c < row.size(); ++c)
        if (!needed[c] && c != 4) row[c] = Value::Null();
      AddInto(&out, row, w);
    }
    return out;
  };
  return sc;
}

TEST_CASE("join: unread columns and side filters give the join of the filtered inputs", "[operators]") {
  uint64_t seed = 4100;
  for (int pad = 0; pad < 4; ++pad) CheckAll(PrunedJoinScenario(pad & 1, pad & 2), seed += 10);
}

// -------------------------------------------------------------------------------- aggregate

SqlType kBigInt = SqlType::Of(TypeId::kBigInt);
SqlType kDouble = SqlType::Of(TypeId::kDouble);
SqlType kVarchar = SqlType::Of(TypeId::kVarchar);
SqlType kDec = SqlType::Decimal(10, 2);
SqlType kDecSum = SqlType::Decimal(18, 2);

AggSpec Agg(AggKind kind, int arg, SqlType arg_type, bool distinct = false) {
  AggSpec a;
  a.kind = kind;
  a.arg = arg;
  a.arg_type = arg_type;
  a.distinct = distinct;
  switch (kind) {
    case AggKind::kCountStar:
    case AggKind::kCount:
      a.result_type = SqlType::Of(TypeId::kBigInt, false);
      break;
    case AggKind::kSum:
      a.result_type = arg_type.id == TypeId::kDecimal ? kDecSum : arg_type.IsFloat() ? kDouble : kBigInt;
      break;
    default:  // AVG, STDDEV, VARIANCE, MIN/MAX, ARG_MIN/ARG_MAX, BIT_*: the argument's type
      a.result_type = arg_type;
      break;
  }
  return a;
}

// An aggregate with FILTER (WHERE <column `filter` is TRUE>).
AggSpec Filtered(AggSpec a, int filter) {
  a.filter = filter;
  return a;
}

// ARG_MIN / ARG_MAX(arg, key).
AggSpec ArgAgg(AggKind kind, int arg, SqlType arg_type, int key, SqlType key_type) {
  AggSpec a = Agg(kind, arg, arg_type);
  a.key = key;
  a.key_type = key_type;
  return a;
}

// sqrt / truncation of a variance into the argument's type, as the aggregate defines it.
Value NaiveMomentResult(AggKind kind, double var, const SqlType& t) {
  const bool stddev = kind == AggKind::kStddevPop || kind == AggKind::kStddevSamp;
  double x = stddev ? std::sqrt(var) : var;
  if (t.IsFloat()) return Value::Double(x);
  if (t.id == TypeId::kDecimal) x *= std::pow(10.0, t.scale);
  return Value::Int(static_cast<int64_t>(std::trunc(x)));
}

// The SQL value of one aggregate over a group's rows (each row with a positive multiplicity).
Value NaiveAgg(const AggSpec& a, const std::vector<std::pair<Row, int64_t>>& all_rows) {
  // FILTER (WHERE f): only the rows where f is TRUE.
  std::vector<std::pair<Row, int64_t>> rows;
  for (const auto& [r, w] : all_rows)
    if (a.filter < 0 || (!r[a.filter].IsNull() && r[a.filter].i != 0)) rows.emplace_back(r, w);
  if (a.kind == AggKind::kCountStar) {
    int64_t n = 0;
    for (const auto& [r, w] : rows) n += w;
    return Value::Int(n);
  }
  if (a.kind == AggKind::kArgMin || a.kind == AggKind::kArgMax) {
    // The value of the row with the smallest (largest) (key, value); rows with a NULL key only
    // when no row has a key.
    std::vector<std::pair<Value, Value>> keyed, unkeyed;
    for (const auto& [r, w] : rows) (r[a.key].IsNull() ? unkeyed : keyed).emplace_back(r[a.key], r[a.arg]);
    const auto& pairs = keyed.empty() ? unkeyed : keyed;
    if (pairs.empty()) return Value::Null();
    auto [lo, hi] = std::minmax_element(pairs.begin(), pairs.end());
    return a.kind == AggKind::kArgMin ? lo->second : hi->second;
  }
  if (a.kind == AggKind::kMapAgg) {
    // One entry per non-NULL key, mapping to the largest of its values (NULL smallest).
    std::map<Value, Value> m;
    for (const auto& [r, w] : rows) {
      if (w <= 0 || r[a.key].IsNull()) continue;
      auto [it, fresh] = m.try_emplace(r[a.key], r[a.arg]);
      if (!fresh && it->second < r[a.arg]) it->second = r[a.arg];
    }
    std::vector<std::pair<Value, Value>> entries(m.begin(), m.end());
    return Value::String(EncodeMapValue(std::move(entries), a.result_type));
  }
  if (a.kind == AggKind::kArrayAgg) {
    // Every value (NULL too), in the order of (key, value); DISTINCT: the distinct values in order.
    std::vector<std::pair<Value, Value>> pairs;
    for (const auto& [r, w] : rows)
      for (int64_t k = 0; k < w; ++k) pairs.emplace_back(a.distinct ? Value::Null() : r[a.key], r[a.arg]);
    std::sort(pairs.begin(), pairs.end());
    if (a.distinct) pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    std::vector<Value> elements;
    for (const auto& p : pairs) elements.push_back(p.second);
    return Value::String(EncodeArrayValue(elements, a.arg_type));
  }
  // The non-NULL argument values, each repeated by its multiplicity (once for DISTINCT).
  std::vector<Value> vals;
  for (const auto& [r, w] : rows)
    if (!r[a.arg].IsNull())
      for (int64_t k = 0; k < w; ++k) vals.push_back(r[a.arg]);
  if (a.distinct) {
    std::sort(vals.begin(), vals.end());
    vals.erase(std::unique(vals.begin(), vals.end()), vals.end());
  }
  const bool is_float = a.arg_type.IsFloat();
  switch (a.kind) {
    case AggKind::kCount:
      return Value::Int(static_cast<int64_t>(vals.size()));
    case AggKind::kSum:
    case AggKind::kAvg: {
      if (vals.empty()) return Value::Null();
      if (a.arg_type.IsWideDecimal() || a.result_type.IsWideDecimal()) {
        Int128 sum = 0;
        for (const auto& v : vals) sum += UnscaledDecimal(v, a.arg_type);
        if (a.kind == AggKind::kSum) return DecimalValue(sum, a.result_type);
        return DecimalValue(sum / static_cast<int64_t>(vals.size()), a.arg_type);
      }
      int64_t isum = 0;
      double dsum = 0;
      for (const auto& v : vals) {
        if (is_float)
          dsum += v.d;
        else
          isum += v.i;
      }
      if (a.kind == AggKind::kSum) return is_float ? Value::Double(dsum) : Value::Int(isum);
      // AVG keeps the argument's type: integers (and decimals, in units of their scale)
      // truncate toward zero.
      if (!is_float) return Value::Int(isum / static_cast<int64_t>(vals.size()));
      return Value::Double(dsum / static_cast<double>(vals.size()));
    }
    case AggKind::kStddevPop:
    case AggKind::kStddevSamp:
    case AggKind::kVarPop:
    case AggKind::kVarSamp: {
      const bool samp = a.kind == AggKind::kStddevSamp || a.kind == AggKind::kVarSamp;
      const int64_t n = static_cast<int64_t>(vals.size());
      if (n == 0 || (samp && n < 2)) return Value::Null();
      if (a.arg_type.IsWideDecimal()) {
        // Exact, two passes (values small enough for 128 bits here): D = sum((n*x - S)^2) is
        // n^2 times the sum of squared deviations; the variance in units of the scale is
        // D / (n^2 (n or n - 1) 10^s), truncated, and STDDEV the integer square root of
        // D / (n^2 (n or n - 1)).
        __int128 sum = 0, d = 0;
        for (const auto& v : vals) sum += UnscaledDecimal(v, a.arg_type);
        for (const auto& v : vals) {
          const __int128 dev = static_cast<__int128>(n) * UnscaledDecimal(v, a.arg_type) - sum;
          d += dev * dev;
        }
        const __int128 denom = static_cast<__int128>(n) * n * (samp ? n - 1 : n);
        if (a.kind == AggKind::kVarPop || a.kind == AggKind::kVarSamp)
          return DecimalValue(d / denom / Pow10Wide(a.arg_type.scale), a.arg_type);
        const __int128 q = d / denom;
        __int128 r = static_cast<__int128>(std::sqrt(static_cast<long double>(q)));
        while (r * r > q) --r;
        while ((r + 1) * (r + 1) <= q) ++r;
        return DecimalValue(r, a.arg_type);
      }
      double var;
      if (is_float) {
        double s1 = 0, s2 = 0;
        for (const auto& v : vals) {
          s1 += v.d;
          s2 += v.d * v.d;
        }
        var =
            (static_cast<double>(n) * s2 - s1 * s1) / (static_cast<double>(n) * static_cast<double>(samp ? n - 1 : n));
        if (var < 0) var = 0;
      } else if (a.arg_type.IsInteger()) {
        // Feldera's integer variance: (sum(x^2) - S * S / n) / (n or n - 1), truncating.
        __int128 s1 = 0, s2 = 0;
        for (const auto& v : vals) {
          s1 += v.i;
          s2 += static_cast<__int128>(v.i) * v.i;
        }
        var = static_cast<double>((s2 - s1 * s1 / n) / (samp ? n - 1 : n));
      } else {
        // Two passes, exact: D = sum((n*x - S)^2) = n * (n * sum(x^2) - S^2).
        __int128 sum = 0, d = 0;
        for (const auto& v : vals) sum += v.i;
        for (const auto& v : vals) d += (static_cast<__int128>(n) * v.i - sum) * (static_cast<__int128>(n) * v.i - sum);
        double unit = a.arg_type.id == TypeId::kDecimal ? std::pow(10.0, a.arg_type.scale) : 1.0;
        var = static_cast<double>(d) / (static_cast<double>(n) * n * (samp ? n - 1 : n)) / (unit * unit);
      }
      return NaiveMomentResult(a.kind, var, a.arg_type);
    }
    case AggKind::kBitAnd:
    case AggKind::kBitOr:
    case AggKind::kBitXor: {
      if (vals.empty()) return Value::Null();
      int64_t r = a.kind == AggKind::kBitAnd ? -1 : 0;
      for (const auto& v : vals) {
        if (a.kind == AggKind::kBitAnd) r &= v.i;
        if (a.kind == AggKind::kBitOr) r |= v.i;
        if (a.kind == AggKind::kBitXor) r ^= v.i;
      }
      return Value::Int(r);
    }
    case AggKind::kMin:
    case AggKind::kMax: {
      if (vals.empty()) return Value::Null();
      auto [lo, hi] = std::minmax_element(vals.begin(), vals.end());
      return a.kind == AggKind::kMin ? *lo : *hi;
    }
    default:
      return Value::Null();
  }
}

// GROUP BY the first num_keys columns (NULL keys form their own group); without keys, one row
// even over empty input.
ZSet NaiveGroupBy(const ZSet& in, int num_keys, const std::vector<AggSpec>& aggs) {
  std::map<Row, std::vector<std::pair<Row, int64_t>>> groups;
  for (const auto& [r, w] : in) {
    REQUIRE(w > 0);  // the generators only produce valid contents
    groups[Row(r.begin(), r.begin() + num_keys)].emplace_back(r, w);
  }
  if (num_keys == 0) groups.try_emplace(Row{});
  ZSet out;
  for (const auto& [key, rows] : groups) {
    Row row = key;
    for (const auto& a : aggs) row.push_back(NaiveAgg(a, rows));
    AddInto(&out, row, 1);
  }
  return out;
}

Scenario AggScenario(std::string name, std::vector<ColSpec> cols, int num_keys, std::vector<AggSpec> aggs) {
  Scenario sc;
  sc.name = std::move(name);
  sc.inputs = {cols};
  Types in = TypesOf(cols);
  for (int k = 0; k < num_keys; ++k) sc.out_types.push_back(in[k]);
  for (const auto& a : aggs) sc.out_types.push_back(a.result_type.phys());
  sc.make = [=] { return std::make_unique<AggregateOp>(in, num_keys, aggs); };
  sc.make_pooled = [=](ThreadPool* pool) { return std::make_unique<AggregateOp>(in, num_keys, aggs, pool); };
  sc.consolidated = sc.unit_weights = true;  // -old/+new per changed group only
  sc.naive = [=](const std::vector<ZSet>& ins, const std::vector<Changes>&) {
    return NaiveGroupBy(ins[0], num_keys, aggs);
  };
  return sc;
}

// The scenario over an input that only inserts: the operator is told so (InputsInsertOnly, as a
// circuit does over an append-only table) and every change inserts rows.
Scenario InsertsOnly(Scenario sc) {
  sc.name += ", input inserts only";
  auto make = sc.make;
  auto make_pooled = sc.make_pooled;
  sc.make = [make] {
    auto op = make();
    op->InputsInsertOnly();
    return op;
  };
  sc.make_pooled = [make_pooled](ThreadPool* pool) {
    auto op = make_pooled(pool);
    op->InputsInsertOnly();
    return op;
  };
  sc.delta = [specs = sc.inputs](Gen& g, size_t input, ZSet* cur) {
    Changes ch;
    const int n = g.Int(0, 6);
    for (int i = 0; i < n; ++i) {
      Row r = g.RandomRow(specs[input]);
      const int64_t w = g.Chance(0.1) ? 2 : 1;
      ch.emplace_back(r, w);
      AddInto(cur, r, w);
    }
    return ch;
  };
  return sc;
}

// MIN, MAX, ARG_MIN, ARG_MAX over every physical type, with FILTER, next to linear aggregates:
// over an input that only inserts, every one is kept inline or as its extreme's order key.
std::vector<AggSpec> ExtremeAggs(int base) {
  const int i = base, d = base + 1, s = base + 2, c = base + 3, b = base + 4, l = base + 5;
  const SqlType kBoolean = SqlType::Of(TypeId::kBoolean);
  std::vector<AggSpec> out = {Agg(AggKind::kCountStar, -1, SqlType()), Agg(AggKind::kSum, i, kBigInt)};
  for (AggKind k : {AggKind::kMin, AggKind::kMax}) {
    out.push_back(Agg(k, i, kBigInt));
    out.push_back(Agg(k, d, kDouble));
    out.push_back(Agg(k, s, kVarchar));
    out.push_back(Agg(k, c, kDec));
    out.push_back(Agg(k, b, kBoolean));
    out.push_back(Agg(k, l, kVarchar));
    out.push_back(Agg(k, i, kBigInt, true));
    out.push_back(Filtered(Agg(k, d, kDouble), b));
    out.push_back(Filtered(Agg(k, l, kVarchar), b));
  }
  for (AggKind k : {AggKind::kArgMin, AggKind::kArgMax}) {
    out.push_back(ArgAgg(k, s, kVarchar, i, kBigInt));
    out.push_back(ArgAgg(k, i, kBigInt, d, kDouble));
    out.push_back(ArgAgg(k, l, kVarchar, s, kVarchar));
    out.push_back(ArgAgg(k, d, kDouble, l, kVarchar));
    out.push_back(Filtered(ArgAgg(k, c, kDec, i, kBigInt), b));
  }
  return out;
}

// Every aggregate over argument columns starting at `base`: int, double, string, decimal.
std::vector<AggSpec> AllAggs(int base) {
  const int i = base, d = base + 1, s = base + 2, c = base + 3;
  return {
      Agg(AggKind::kCountStar, -1, SqlType()),
      Agg(AggKind::kCount, i, kBigInt),
      Agg(AggKind::kCount, s, kVarchar),
      Agg(AggKind::kSum, i, kBigInt),
      Agg(AggKind::kSum, d, kDouble),
      Agg(AggKind::kSum, c, kDec),
      Agg(AggKind::kAvg, i, kBigInt),
      Agg(AggKind::kAvg, d, kDouble),
      Agg(AggKind::kAvg, c, kDec),
      Agg(AggKind::kMin, i, kBigInt),
      Agg(AggKind::kMax, i, kBigInt),
      Agg(AggKind::kMin, d, kDouble),
      Agg(AggKind::kMax, d, kDouble),
      Agg(AggKind::kMin, s, kVarchar),
      Agg(AggKind::kMax, s, kVarchar),
      Agg(AggKind::kCount, i, kBigInt, true),
      Agg(AggKind::kCount, s, kVarchar, true),
      Agg(AggKind::kCount, d, kDouble, true),
      Agg(AggKind::kSum, i, kBigInt, true),
      Agg(AggKind::kSum, d, kDouble, true),
      Agg(AggKind::kAvg, i, kBigInt, true),
      Agg(AggKind::kAvg, d, kDouble, true),
      Agg(AggKind::kMax, s, kVarchar, true),
  };
}

// Feldera's further aggregates and FILTER, over argument columns starting at `base`: int,
// double, string, decimal, boolean (the filter).
std::vector<AggSpec> MoreAggs(int base) {
  const int i = base, d = base + 1, s = base + 2, c = base + 3, b = base + 4;
  const SqlType kBoolean = SqlType::Of(TypeId::kBoolean);
  std::vector<AggSpec> out;
  for (AggKind k : {AggKind::kStddevPop, AggKind::kStddevSamp, AggKind::kVarPop, AggKind::kVarSamp}) {
    out.push_back(Agg(k, i, kBigInt));
    out.push_back(Agg(k, d, kDouble));
    out.push_back(Agg(k, c, kDec));
    out.push_back(Agg(k, i, kBigInt, true));
  }
  for (AggKind k : {AggKind::kBitAnd, AggKind::kBitOr, AggKind::kBitXor}) {
    out.push_back(Agg(k, i, kBigInt));
    out.push_back(Agg(k, c, kBigInt));
    out.push_back(Filtered(Agg(k, i, kBigInt), b));
  }
  out.push_back(Agg(AggKind::kBitXor, i, kBigInt, true));
  for (AggKind k : {AggKind::kArgMin, AggKind::kArgMax}) {
    out.push_back(ArgAgg(k, s, kVarchar, i, kBigInt));
    out.push_back(ArgAgg(k, i, kBigInt, d, kDouble));
    out.push_back(ArgAgg(k, c, kDec, s, kVarchar));
    out.push_back(Filtered(ArgAgg(k, d, kDouble, c, kDec), b));
  }
  {
    AggSpec arr = ArgAgg(AggKind::kArrayAgg, s, kVarchar, i, kBigInt);
    arr.result_type = SqlType::Array(kVarchar, false);
    out.push_back(arr);
    out.push_back(Filtered(arr, b));
    arr.distinct = true;
    arr.key = -1;
    out.push_back(arr);
    AggSpec arr_d = ArgAgg(AggKind::kArrayAgg, d, kDouble, c, kDec);
    arr_d.result_type = SqlType::Array(kDouble, false);
    out.push_back(arr_d);
    // MAP_AGG(i, s) and MAP_AGG(s, d): few distinct keys, so duplicates and deletions of the
    // winning value are frequent.
    AggSpec map = ArgAgg(AggKind::kMapAgg, s, kVarchar, i, kBigInt);
    map.result_type = SqlType::Map(kBigInt.WithNullable(false), kVarchar, false);
    out.push_back(map);
    out.push_back(Filtered(map, b));
    AggSpec map_s = ArgAgg(AggKind::kMapAgg, d, kDouble, s, kVarchar);
    map_s.result_type = SqlType::Map(kVarchar.WithNullable(false), kDouble, false);
    out.push_back(map_s);
    // MAP_AGG(DISTINCT k, v): the same map (it depends only on the set of pairs).
    map.distinct = true;
    out.push_back(map);
  }
  out.push_back(Agg(AggKind::kMin, b, kBoolean));  // EVERY
  out.push_back(Agg(AggKind::kMax, b, kBoolean));  // SOME
  out.push_back(Filtered(Agg(AggKind::kCountStar, -1, SqlType()), b));
  out.push_back(Filtered(Agg(AggKind::kSum, i, kBigInt), b));
  out.push_back(Filtered(Agg(AggKind::kAvg, c, kDec), b));
  out.push_back(Filtered(Agg(AggKind::kMax, s, kVarchar), b));
  out.push_back(Filtered(Agg(AggKind::kCount, d, kDouble, true), b));
  out.push_back(Filtered(Agg(AggKind::kStddevSamp, i, kBigInt), b));
  return out;
}

// The linear aggregates only (no multiset, no string argument): with one non-NULL integer key
// of small range, AggregateOp pre-aggregates in fixed-size slices (in parallel with a pool).
std::vector<AggSpec> LinearAggs(int base) {
  const int i = base, d = base + 1, c = base + 3;
  return {
      Agg(AggKind::kCountStar, -1, SqlType()), Agg(AggKind::kCount, i, kBigInt), Agg(AggKind::kCount, d, kDouble),
      Agg(AggKind::kSum, i, kBigInt),          Agg(AggKind::kSum, d, kDouble),   Agg(AggKind::kSum, c, kDec),
      Agg(AggKind::kAvg, i, kBigInt),          Agg(AggKind::kAvg, d, kDouble),   Agg(AggKind::kAvg, c, kDec),
  };
}

std::vector<Scenario> AggScenarios() {
  std::vector<Scenario> out;
  const std::vector<ColSpec> args = {kInt, kDbl, kStr, kCents};
  auto with_keys = [&](std::vector<ColSpec> keys) {
    keys.insert(keys.end(), args.begin(), args.end());
    return keys;
  };
  auto add = [&](Scenario sc, int iterations) {
    sc.iterations = iterations;
    out.push_back(std::move(sc));
  };
  add(AggScenario("global aggregate, all kinds", args, 0, AllAggs(0)), 200);
  add(AggScenario("group by int (nullable), all kinds", with_keys({kKey3}), 1, AllAggs(1)), 200);
  add(AggScenario("group by int (no NULLs: dense fast path)", with_keys({kKeyNN}), 1, AllAggs(1)), 60);
  add(AggScenario("group by wide int (sparse path)", with_keys({kKeyWide}), 1, AllAggs(1)), 60);
  add(AggScenario("group by (int, str)", with_keys({kKey3, kKeyStr}), 2, AllAggs(2)), 60);
  add(AggScenario("group by double", with_keys({kKeyDbl}), 1, AllAggs(1)), 60);
  add(AggScenario("group by small int, linear aggregates (slice path)", with_keys({kKeyNN}), 1, LinearAggs(1)), 100);
  add(AggScenario("group by nullable int, linear aggregates", with_keys({kKey3}), 1, LinearAggs(1)), 60);
  const std::vector<ColSpec> more = {kInt, kDbl, kStr, kCents, kBool};
  std::vector<ColSpec> keyed_more = {kKey3};
  keyed_more.insert(keyed_more.end(), more.begin(), more.end());
  std::vector<ColSpec> dense_more = {kKeyNN};
  dense_more.insert(dense_more.end(), more.begin(), more.end());
  add(AggScenario("global, STDDEV/VAR/BIT/ARG_MIN/ARG_MAX/EVERY/SOME and FILTER", more, 0, MoreAggs(0)), 200);
  add(AggScenario("group by int, STDDEV/VAR/BIT/ARG_MIN/ARG_MAX/EVERY/SOME and FILTER", keyed_more, 1, MoreAggs(1)),
      200);
  add(AggScenario("group by int (no NULLs), further aggregates", dense_more, 1, MoreAggs(1)), 60);
  {
    // DECIMAL(38, 2) arguments, and the DECIMAL(38, 2) sum of a narrow DECIMAL(10, 2).
    const SqlType wide = SqlType::Decimal(38, 2);
    AggSpec sum_narrow = Agg(AggKind::kSum, 2, kDec);
    sum_narrow.result_type = wide;
    std::vector<AggSpec> aggs = {Agg(AggKind::kSum, 1, wide),
                                 Agg(AggKind::kAvg, 1, wide),
                                 Agg(AggKind::kMin, 1, wide),
                                 Agg(AggKind::kMax, 1, wide),
                                 Agg(AggKind::kSum, 1, wide, true),
                                 Agg(AggKind::kCount, 1, wide),
                                 sum_narrow};
    aggs[0].result_type = aggs[4].result_type = wide;
    add(AggScenario("group by int, DECIMAL(38, 2) sums", {kKey3, kWideCents, kCents}, 1, aggs), 200);
    std::vector<AggSpec> moments;
    for (AggKind k : {AggKind::kStddevPop, AggKind::kStddevSamp, AggKind::kVarPop, AggKind::kVarSamp})
      moments.push_back(Agg(k, 1, wide));
    moments.push_back(Agg(AggKind::kStddevSamp, 1, wide, true));
    moments.push_back(Agg(AggKind::kVarPop, 1, wide, true));
    add(AggScenario("group by int, STDDEV/VARIANCE over DECIMAL(38, 2)", {kKey3, kWideMid}, 1, moments), 200);
    for (AggSpec& m : moments) m.arg = 0;
    add(AggScenario("global STDDEV/VARIANCE over DECIMAL(38, 2)", {kWideMid}, 0, moments), 100);
  }
  {
    // SUM/AVG over NOT NULL integer and decimal columns keep no count (it is the row count), next
    // to a nullable SUM; on the slice path, the hashed path, and in a record with a boxed MIN.
    SqlType big_nn = kBigInt, dec_nn = kDec;
    big_nn.nullable = dec_nn.nullable = false;
    std::vector<AggSpec> aggs = {Agg(AggKind::kSum, 1, big_nn),           Agg(AggKind::kAvg, 1, big_nn),
                                 Agg(AggKind::kSum, 2, dec_nn),           Agg(AggKind::kAvg, 2, dec_nn),
                                 Agg(AggKind::kCountStar, -1, SqlType()), Agg(AggKind::kSum, 3, kBigInt)};
    add(AggScenario("group by small int, SUM/AVG of NOT NULL columns (slice path)", {kKeyNN, kIntNN, kCentsNN, kInt}, 1,
                    aggs),
        100);
    add(AggScenario("group by wide int, SUM/AVG of NOT NULL columns", {kKeyWide, kIntNN, kCentsNN, kInt}, 1, aggs),
        100);
    aggs.push_back(Agg(AggKind::kMin, 1, big_nn));
    add(AggScenario("group by nullable int, SUM/AVG of NOT NULL columns and MIN", {kKey3, kIntNN, kCentsNN, kInt}, 1,
                    aggs),
        100);
  }
  {
    // Over an input that only inserts: the extremes alone (records fold in place), and next to
    // every other kind (some boxed: the extremes then fold through accumulators).
    const std::vector<ColSpec> ext = {kInt, kDbl, kStr, kCents, kBool, kLongStr};
    auto keyed = [&](std::vector<ColSpec> keys, const std::vector<ColSpec>& cols) {
      keys.insert(keys.end(), cols.begin(), cols.end());
      return keys;
    };
    add(InsertsOnly(AggScenario("global MIN/MAX/ARG_MIN/ARG_MAX", ext, 0, ExtremeAggs(0))), 100);
    add(InsertsOnly(AggScenario("group by int, MIN/MAX/ARG_MIN/ARG_MAX", keyed({kKey3}, ext), 1, ExtremeAggs(1))), 100);
    add(InsertsOnly(
            AggScenario("group by wide int, MIN/MAX/ARG_MIN/ARG_MAX", keyed({kKeyWide}, ext), 1, ExtremeAggs(1))),
        60);
    add(InsertsOnly(AggScenario("group by (int, str), MIN/MAX/ARG_MIN/ARG_MAX", keyed({kKey3, kKeyStr}, ext), 2,
                                ExtremeAggs(2))),
        60);
    add(InsertsOnly(AggScenario("group by int, all kinds", with_keys({kKey3}), 1, AllAggs(1))), 60);
    {
      // ARG_MIN/ARG_MAX whose key and value are NOT NULL integers or doubles keep the pair as
      // 16 ordered bytes: the integers' extremes, negative and positive zeros, infinities, ties
      // on the key (broken by the value); alone (folded in place) and next to a boxed aggregate
      // (folded through accumulators).
      const ColSpec ints_nn{
          PhysType::kI64,
          Ints({std::numeric_limits<int64_t>::min(), -256, -1, 0, 1, 255, 256, std::numeric_limits<int64_t>::max()}),
          0};
      const ColSpec dbls_nn{PhysType::kF64,
                            Doubles({-std::numeric_limits<double>::infinity(), -2.5, -0.0, 0.0, 0.5, 1e300,
                                     std::numeric_limits<double>::infinity()}),
                            0};
      SqlType big_nn = kBigInt, dbl_nn = kDouble;
      big_nn.nullable = dbl_nn.nullable = false;
      std::vector<AggSpec> pairs;
      for (AggKind k : {AggKind::kArgMin, AggKind::kArgMax}) {
        pairs.push_back(ArgAgg(k, 2, dbl_nn, 1, big_nn));
        pairs.push_back(ArgAgg(k, 1, big_nn, 2, dbl_nn));
        pairs.push_back(ArgAgg(k, 3, big_nn, 1, big_nn));
        pairs.push_back(ArgAgg(k, 2, dbl_nn, 2, dbl_nn));
        pairs.push_back(ArgAgg(k, 1, big_nn, 4, kBigInt));  // a nullable key: order keys
      }
      const std::vector<ColSpec> cols = {kKey3, ints_nn, dbls_nn, kIntNN, kInt};
      add(InsertsOnly(AggScenario("group by int, ARG_MIN/ARG_MAX of NOT NULL numbers", cols, 1, pairs)), 100);
      pairs.push_back(Agg(AggKind::kCount, 3, kBigInt, true));
      add(InsertsOnly(
              AggScenario("group by int, ARG_MIN/ARG_MAX of NOT NULL numbers and COUNT(DISTINCT)", cols, 1, pairs)),
          60);
    }
    add(InsertsOnly(AggScenario("group by int, further aggregates", keyed_more, 1, MoreAggs(1))), 60);
    add(InsertsOnly(
            AggScenario("group by small int, linear aggregates (slice path)", with_keys({kKeyNN}), 1, LinearAggs(1))),
        30);
  }
  {
    // Groups holding more distinct strings and pairs than a KeyWeights keeps in its array (64):
    // 150 short and 150 long strings, steps of up to 80 changes, so the sets cross into the
    // B-tree and shrink again as rows are retracted.
    auto many = [](bool long_ones) {
      std::vector<Value> v;
      for (int i = 0; i < 150; ++i)
        v.push_back(Value::String((long_ones ? std::string(25, 'q') : std::string()) + std::to_string(i * 7 % 150)));
      return ColSpec{PhysType::kStr, v, 0.1};
    };
    const std::vector<ColSpec> cols = {kInt, kDbl, many(false), kCents, kBool, many(true)};
    Scenario sc =
        AggScenario("global MIN/MAX/ARG_MIN/ARG_MAX over 150 distinct strings a column", cols, 0, ExtremeAggs(0));
    sc.delta = [cols](Gen& g, size_t, ZSet* cur) { return g.ValidDelta(cols, cur, 80); };
    add(sc, 40);
  }
  // Degenerate shapes: a lone COUNT(*) (no argument column), and GROUP BY without aggregates.
  add(AggScenario("global COUNT(*)", args, 0, {Agg(AggKind::kCountStar, -1, SqlType())}), 60);
  add(AggScenario("group by key only (no aggregates)", with_keys({kKey3, kKeyStr}), 2, {}), 60);
  return out;
}

TEST_CASE("aggregate: I(output) equals GROUP BY recomputed from scratch", "[operators]") {
  uint64_t seed = 5000;
  for (const auto& sc : AggScenarios()) CheckCorrectness(sc, seed++);
}

TEST_CASE("aggregate: output does not depend on step boundaries", "[operators]") {
  uint64_t seed = 6000;
  for (const auto& sc : AggScenarios()) CheckStepBoundaries(sc, seed++);
}

TEST_CASE("aggregate: save/restore reproduces outputs byte for byte", "[operators]") {
  uint64_t seed = 7000;
  for (const auto& sc : AggScenarios()) CheckSaveRestore(sc, seed++);
}

TEST_CASE("aggregate: incremental saves store exactly the state", "[operators]") {
  uint64_t seed = 7500;
  for (const auto& sc : AggScenarios()) CheckIncrementalSave(sc, seed++);
}

TEST_CASE("aggregate: sharded across workers, the same outputs and state as one shard", "[operators]") {
  uint64_t seed = 7700;
  for (const auto& sc : AggScenarios()) CheckSharded(sc, seed++);
}

TEST_CASE("join: backed by the store, evicted and restored lazily, the same outputs and state", "[operators]") {
  uint64_t seed = 7950;
  size_t backed = 0;
  for (const auto& sc : JoinScenarios()) {
    backed += sc.make()->CanBackState();
    CheckBacked(sc, seed++);
  }
  REQUIRE(backed >= 3);
}

// Aggregates and DISTINCT under a waterline, backed by the store: groups (rows) checkpointed,
// evicted and then passed by the waterline leave the store at the next checkpoint without being
// read back, also after a lazy restore (which indexes the stored keys: RestoreStoredKey); the
// outputs are those of the same operator keeping everything in memory, and the store ends
// holding exactly its state.
TEST_CASE("aggregate and distinct under a waterline: backed, passed entries leave the store", "[operators]") {
  const Types t = {PhysType::kI64, PhysType::kI64};  // ts (the key, with the waterline), v
  for (const bool distinct : {false, true}) {
    for (const bool lazy : {false, true}) {
      INFO((distinct ? "distinct" : "aggregate") << (lazy ? ", restored lazily" : ""));
      auto cell = std::make_shared<WaterlineCell>();
      const WaterlineRef wl(cell, SqlType::Of(TypeId::kBigInt));
      auto make = [&]() -> std::unique_ptr<Operator> {
        if (distinct) {
          auto op = std::make_unique<DistinctOp>();
          op->SetWaterline(0, wl);
          return op;
        }
        auto op = std::make_unique<AggregateOp>(t, 1, std::vector<AggSpec>{Agg(AggKind::kSum, 1, kBigInt)});
        op->SetWaterline(0, wl);
        return op;
      };
      auto plain = make();
      plain->TrackChanges();
      VersionedStore store;
      auto backed = make();
      backed->TrackChanges();
      backed->BackState(&store, 0, false);
      std::string header;
      std::mt19937 rng(distinct ? 5 : 6);
      size_t evictions = 0;
      for (int step = 0; step < 40; ++step) {
        INFO("step " << step);
        // The waterline stands at 10 * step: this step's rows lie at or above it, and the groups
        // below are discarded at its end.
        cell->known = true;
        cell->value = Value::Int(10 * step);
        Changes ch;
        for (int i = 0; i < 20; ++i)
          ch.push_back({{Value::Int(10 * step + static_cast<int64_t>(rng() % 40)), Value::Int(rng() % 5)}, 1});
        const Batch b = MakeBatch(t, ch);
        const Batch* in[] = {&b};
        REQUIRE(ByteDiff(plain->Step(in), backed->Step(in)) == "");
        if (step % 3 != 2) continue;
        // A checkpoint, committed at once, evicting everything it saved.
        StateDelta d;
        header.clear();
        StateWriter w(&header);
        backed->SaveChanges(w, d);
        store.Commit(d);
        backed->StateCommitted(true);
        ++evictions;
        REQUIRE(backed->StateMemoryBytes() == 0);
        if (lazy && step == 20) {
          auto restored = make();
          restored->TrackChanges();
          StateReader r(header);
          restored->BeginRestore(r);
          for (const auto& [k, v] : store.committed()) restored->RestoreStoredKey(k);
          restored->EndRestore();
          restored->BackState(&store, 0, true);
          backed = std::move(restored);
        }
      }
      StateDelta d;
      header.clear();
      StateWriter w(&header);
      backed->SaveChanges(w, d);
      store.Commit(d);
      std::map<std::string, std::string> want;
      std::string want_header;
      SaveChangesInto(*plain, &want, &want_header);
      REQUIRE(evictions > 5);
      REQUIRE(!want.empty());
      REQUIRE(store.committed() == want);  // nothing the waterline passed is left there
    }
  }
}

// An aggregate feeding a join updates a key by retracting its old row and inserting the new one
// in the same step: the key's rows are rewritten in place, so the checkpoint saves one put and no
// erasure; a key whose rows all go (and stay gone) is erased and saved as an erasure, for either
// record form (packed rows, and the ordered map of a key with many rows).
TEST_CASE("join: a key emptied and refilled in one step is rewritten, not erased", "[operators]") {
  const Types t = {PhysType::kI64, PhysType::kI64};
  for (size_t big_bytes : {size_t{4096}, size_t{1}}) {
    INFO("big key bytes " << big_bytes);
    JoinOp j(t, t, {0}, {0}, false, false);
    j.set_big_key_bytes(big_bytes);
    j.TrackChanges();
    auto step = [&](const Changes& l, const Changes& r) {
      Batch bl = MakeBatch(t, l), br = MakeBatch(t, r);
      const Batch* in[2] = {&bl, &br};
      return ToZSet(j.Step({in, 2}));
    };
    auto save = [&](size_t* puts, size_t* erases) {
      std::string hdr;
      StateWriter w(&hdr);
      StateDelta d;
      j.SaveChanges(w, d);
      *puts = d.puts();
      *erases = d.erases();
    };
    auto row = [](int64_t k, int64_t v) { return Row{Value::Int(k), Value::Int(v)}; };
    step({{row(1, 10), 1}, {row(2, 20), 1}}, {{row(1, 100), 1}, {row(2, 200), 1}});
    size_t puts = 0, erases = 0;
    save(&puts, &erases);
    CHECK(puts == 4);
    CHECK(erases == 0);
    // Key 1's left row is replaced (-old, +new), key 2's left row is deleted.
    ZSet out = step({{row(1, 10), -1}, {row(1, 11), 1}, {row(2, 20), -1}}, {});
    ZSet want;
    want[Row{Value::Int(1), Value::Int(10), Value::Int(1), Value::Int(100)}] = -1;
    want[Row{Value::Int(1), Value::Int(11), Value::Int(1), Value::Int(100)}] = 1;
    want[Row{Value::Int(2), Value::Int(20), Value::Int(2), Value::Int(200)}] = -1;
    CHECK(out == want);
    save(&puts, &erases);
    CHECK(puts == 1);    // key 1's new rows
    CHECK(erases == 1);  // key 2
    // Key 2 joins nothing now; key 1 joins its new row only.
    out = step({}, {{row(2, 201), 1}, {row(1, 101), 1}});
    want.clear();
    want[Row{Value::Int(1), Value::Int(11), Value::Int(1), Value::Int(101)}] = 1;
    CHECK(out == want);
  }
}

// A key whose rows are one row of weight 1 (every key of a join on a unique key) is kept and
// stored as the row alone, whatever the history that led to it: inserted once; inserted twice
// and retracted once; inserted with a second row that then goes. A record written in the
// longer form (weight and length, as stores written before the short form hold) restores to the
// same state.
TEST_CASE("join: a key holding one row of weight 1 keeps the row alone", "[operators]") {
  const Types t = {PhysType::kI64, PhysType::kI64};
  auto row = [](int64_t k, int64_t v) { return Row{Value::Int(k), Value::Int(v)}; };
  using History = std::vector<Changes>;
  const std::vector<History> histories = {
      {{{row(1, 10), 1}}},
      {{{row(1, 10), 2}}, {{row(1, 10), -1}}},
      {{{row(1, 10), 1}, {row(1, 5), 1}}, {{row(1, 5), -1}}},
      {{{row(1, 12), 1}, {row(1, 10), 1}}, {{row(1, 12), -1}}},
      {{{row(1, 10), -1}}, {{row(1, 10), 2}}},
  };
  std::string standard;  // the row's encoding
  {
    Batch b = MakeBatch(t, {{row(1, 10), 1}});
    EncodeRow(&standard, b, 0);
  }
  const std::string compact = CompactRow(standard);  // 1 and 10 in 2 bytes each
  REQUIRE(compact.size() == 4);
  std::string encoded;  // as the trace keeps it: the key column NULL (the key holds its value), in 1 byte
  {
    std::string key_null;
    Batch b = MakeBatch(t, {{Row{Value::Null(), Value::Int(10)}, 1}});
    EncodeRow(&key_null, b, 0);
    encoded = CompactRow(key_null);
  }
  REQUIRE(encoded.size() == 3);
  std::map<std::string, std::string> first;
  for (size_t h = 0; h < histories.size(); ++h) {
    INFO("history " << h);
    JoinOp j(t, t, {0}, {0}, false, false);
    j.TrackChanges();
    for (const Changes& l : histories[h]) {
      Batch bl = MakeBatch(t, l), br = MakeBatch(t, {});
      const Batch* in[2] = {&bl, &br};
      j.Step({in, 2});
    }
    std::string hdr;
    StateWriter w(&hdr);
    StateDelta d;
    j.SaveChanges(w, d);
    std::map<std::string, std::string> stored;
    d.ForEach([&](std::string_view k, std::string_view v, bool put) {
      REQUIRE(put);
      stored.emplace(std::string(k), std::string(v));
    });
    REQUIRE(stored.size() == 1);
    REQUIRE(stored.begin()->second.size() == 1 + encoded.size());
    REQUIRE(stored.begin()->second.substr(1) == encoded);
    if (h == 0) first = stored;
    REQUIRE(stored == first);
    // It joins as the row it is.
    Batch bl = MakeBatch(t, {}), br = MakeBatch(t, {{row(1, 7), 1}});
    const Batch* in[2] = {&bl, &br};
    ZSet want;
    want[Row{Value::Int(1), Value::Int(10), Value::Int(1), Value::Int(7)}] = 1;
    REQUIRE(ToZSet(j.Step({in, 2})) == want);
  }
  // The packed form of one row of weight 1 (tag 8, the row's length shifted left by one, the
  // row). The forms of stores written before, whose rows hold the key column: the short form
  // (tag 4) and the longer form (tag 3, varint length, the row, an 8-byte weight of 1); with rows
  // in the row encoding, the packed form (tag 0), the short form (tag 2) and the ordered map's
  // (tag 1, a count, the row, the weight).
  const int64_t one = 1;
  auto packed = [&](char tag, const std::string& r) {
    std::string v(1, tag);
    v.push_back(static_cast<char>(r.size()));
    v.append(r);
    v.append(reinterpret_cast<const char*>(&one), 8);
    return v;
  };
  std::string big_old(1, '\1');
  {
    StateWriter w(&big_old);
    w.U64(1);
    w.Str(standard);
    w.I64(1);
  }
  const std::string short_packed = std::string(1, '\x08') + static_cast<char>(encoded.size() << 1) + encoded;
  for (const std::string& value :
       {first.begin()->second, short_packed, std::string(1, '\4') + compact, packed('\3', compact),
        packed('\0', standard), std::string(1, '\2') + standard, big_old}) {
    JoinOp j(t, t, {0}, {0}, false, false);
    std::string hdr;
    StateReader r(hdr);
    j.BeginRestore(r);
    j.RestoreEntry(first.begin()->first, value);
    j.EndRestore();
    // A second row for the key, and a right row joining both.
    Batch bl = MakeBatch(t, {{row(1, 11), 1}}), br = MakeBatch(t, {{row(1, 7), 1}});
    const Batch* in[2] = {&bl, &br};
    ZSet want;
    want[Row{Value::Int(1), Value::Int(10), Value::Int(1), Value::Int(7)}] = 1;
    want[Row{Value::Int(1), Value::Int(11), Value::Int(1), Value::Int(7)}] = 1;
    REQUIRE(ToZSet(j.Step({in, 2})) == want);
    // Retracting the new row leaves the state the short form describes.
    j.TrackChanges();
    Batch bl2 = MakeBatch(t, {{row(1, 11), -1}}), br2 = MakeBatch(t, {});
    const Batch* in2[2] = {&bl2, &br2};
    j.Step({in2, 2});
    JoinOp k(t, t, {0}, {0}, false, false);
    Batch b1 = MakeBatch(t, {{row(1, 10), 1}}), b2 = MakeBatch(t, {{row(1, 7), 1}});
    const Batch* i1[2] = {&b1, &b2};
    k.Step({i1, 2});
    REQUIRE((SaveOf(j) == SaveOf(k)));
  }
}

// A join whose sides are aggregates grouped by the join key reads their groups (ReadSideFrom)
// instead of keeping traces: at every step, for random inserts and deletes (groups appearing,
// changing on one side or both, disappearing) its output is byte for byte the output of the same
// join keeping its own traces, with one shard or several. The right aggregate's MAX is boxed
// (a multiset), the left's SUM and COUNT inline.
TEST_CASE("join: sides read from aggregates give the same outputs as sides with traces", "[operators]") {
  const Types in = {PhysType::kI64, PhysType::kI64};
  struct AggJoin {
    std::unique_ptr<AggregateOp> left, right;
    std::unique_ptr<JoinOp> join;
    AggJoin(ThreadPool* pool, bool read_left, bool read_right, const Types& in) {
      left = std::make_unique<AggregateOp>(
          in, 1, std::vector<AggSpec>{Agg(AggKind::kSum, 1, kBigInt), Agg(AggKind::kCountStar, -1, kBigInt)}, pool);
      right = std::make_unique<AggregateOp>(in, 1, std::vector<AggSpec>{Agg(AggKind::kMax, 1, kBigInt)}, pool);
      join = std::make_unique<JoinOp>(Types{PhysType::kI64, PhysType::kI64, PhysType::kI64},
                                      Types{PhysType::kI64, PhysType::kI64}, std::vector<int>{0}, std::vector<int>{0},
                                      false, false, pool);
      if (read_left) REQUIRE(join->ReadSideFrom(true, left.get()));
      if (read_right) REQUIRE(join->ReadSideFrom(false, right.get()));
    }
    Batch Step(const Batch& l, const Batch& r) {
      const Batch* pl = &l;
      const Batch* pr = &r;
      Batch ol = left->Step({&pl, 1});
      Batch orr = right->Step({&pr, 1});
      const Batch* j[2] = {&ol, &orr};
      return join->Step({j, 2});
    }
  };
  ThreadPool two(2), three(3);
  std::mt19937_64 rng(8100);
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &two, &three})
    for (int mode = 1; mode < 4; ++mode) {
      INFO("workers " << (pool ? pool->workers() : 1) << " read left " << (mode & 1) << " right " << (mode & 2));
      AggJoin plain(pool, false, false, in), reading(pool, mode & 1, mode & 2, in);
      std::vector<Row> live[2];  // each side's rows so far (deletes pick one)
      for (int step = 0; step < 60; ++step) {
        Changes ch[2];
        for (int side = 0; side < 2; ++side) {
          const int n = static_cast<int>(rng() % 12);
          for (int i = 0; i < n; ++i) {
            if (!live[side].empty() && rng() % 3 == 0) {
              const size_t at = rng() % live[side].size();
              ch[side].push_back({live[side][at], -1});
              live[side].erase(live[side].begin() + static_cast<long>(at));
            } else {
              Row r{Value::Int(static_cast<int64_t>(rng() % 8)), Value::Int(static_cast<int64_t>(rng() % 20) - 5)};
              ch[side].push_back({r, 1});
              live[side].push_back(r);
            }
          }
        }
        INFO("step " << step);
        Batch l = MakeBatch(in, ch[0]), r = MakeBatch(in, ch[1]);
        REQUIRE(ByteDiff(plain.Step(l, r), reading.Step(l, r)) == "");
      }
    }
}

TEST_CASE("join: reads an aggregate's groups only where they are the side's integrated input", "[operators]") {
  const Types in = {PhysType::kI64, PhysType::kI64};
  AggregateOp agg(in, 1, {Agg(AggKind::kSum, 1, kBigInt)});
  const Types side = {PhysType::kI64, PhysType::kI64};
  JoinOp outer(side, side, {0}, {0}, true, false);
  CHECK_FALSE(outer.ReadSideFrom(true, &agg));  // padding needs the side's own counts
  JoinOp other_key(side, side, {1}, {1}, false, false);
  CHECK_FALSE(other_key.ReadSideFrom(true, &agg));  // not the group key
  JoinOp two_keys(side, side, {0, 1}, {0, 1}, false, false);
  CHECK_FALSE(two_keys.ReadSideFrom(true, &agg));  // the aggregate has one key column
  ThreadPool two(2);
  JoinOp sharded(side, side, {0}, {0}, false, false, &two);
  CHECK_FALSE(sharded.ReadSideFrom(true, &agg));  // one shard against two
  JoinOp ok(side, side, {0}, {0}, false, false);
  CHECK(ok.ReadSideFrom(false, &agg));
  CHECK(ok.Describe().find("right side: the aggregate's groups") != std::string::npos);
}

TEST_CASE("aggregate: backed by the store, evicted and restored lazily, the same outputs and state", "[operators]") {
  uint64_t seed = 7900;
  size_t backed = 0;
  for (const auto& sc : AggScenarios()) {
    backed += sc.make()->CanBackState();
    CheckBacked(sc, seed++);
  }
  REQUIRE(backed >= 5);  // the keyed scenarios (not the global aggregates)
}

// -------------------------------------------------------------------------------- top-K

// ORDER BY keys LIMIT limit OFFSET offset, recomputed: every copy of every row, sorted by the
// keys (NULL placed by nulls_first) and then by the row, cut to the window.
ZSet NaiveTopK(const ZSet& in, const std::vector<SortKey>& keys, int64_t limit, int64_t offset) {
  std::vector<Row> rows;
  for (const auto& [r, w] : in)
    for (int64_t k = 0; k < w; ++k) rows.push_back(r);
  auto before = [&](const Row& a, const Row& b) {
    for (const SortKey& k : keys) {
      const Value &x = a[k.column], &y = b[k.column];
      if (x.IsNull() != y.IsNull()) return x.IsNull() == k.nulls_first;
      if (x.IsNull()) continue;
      if (x == y) continue;
      return k.desc ? y < x : x < y;
    }
    return a < b;
  };
  std::sort(rows.begin(), rows.end(), before);
  ZSet out;
  for (int64_t i = offset; i < static_cast<int64_t>(rows.size()) && i - offset < limit; ++i) AddInto(&out, rows[i], 1);
  return out;
}

std::vector<Scenario> TopKScenarios() {
  std::vector<Scenario> out;
  const std::vector<ColSpec> cols = {kKey3, kDbl, kStr};
  struct Shape {
    std::string name;
    std::vector<SortKey> keys;
    int64_t limit, offset;
  };
  const Shape shapes[] = {
      {"ORDER BY int LIMIT 3", {{0, false, true}}, 3, 0},
      {"ORDER BY int DESC NULLS LAST, str LIMIT 2 OFFSET 1", {{0, true, false}, {2, false, true}}, 2, 1},
      {"ORDER BY double NULLS LAST, int DESC LIMIT 5", {{1, false, false}, {0, true, true}}, 5, 0},
      {"ORDER BY str DESC LIMIT 1", {{2, true, true}}, 1, 0},
      {"OFFSET 4 only", {{0, false, true}}, INT64_MAX, 4},
  };
  for (const Shape& sh : shapes) {
    Scenario sc;
    sc.name = "top-K " + sh.name;
    sc.inputs = {cols};
    sc.out_types = TypesOf(cols);
    Types types = sc.out_types;
    auto keys = sh.keys;
    int64_t limit = sh.limit, offset = sh.offset;
    sc.make = [=] { return std::make_unique<TopKOp>(types, keys, limit, offset); };
    sc.consolidated = true;
    sc.naive = [=](const std::vector<ZSet>& ins, const std::vector<Changes>&) {
      return NaiveTopK(ins[0], keys, limit, offset);
    };
    sc.iterations = 150;
    out.push_back(std::move(sc));
  }
  return out;
}

TEST_CASE("top-K: I(output) equals the sorted, cut input recomputed from scratch", "[operators]") {
  uint64_t seed = 9100;
  for (const auto& sc : TopKScenarios()) CheckCorrectness(sc, seed++);
}

TEST_CASE("top-K: output does not depend on step boundaries", "[operators]") {
  uint64_t seed = 9200;
  for (const auto& sc : TopKScenarios()) CheckStepBoundaries(sc, seed++);
}

TEST_CASE("top-K: save/restore reproduces outputs byte for byte", "[operators]") {
  uint64_t seed = 9300;
  for (const auto& sc : TopKScenarios()) CheckSaveRestore(sc, seed++);
}

// The saved state is the stored form of checkpoints written before partitions were order keys in
// a B-tree: the rows in the row encoding, in SortedRowLess order. Read back with LoadSortedRows
// (the reader of that form), it holds the integrated input, in the same order.
TEST_CASE("top-K: saved rows keep the stored form and order of SortedRows", "[operators]") {
  const std::vector<ColSpec> cols = {kKey3, kDbl, kStr};
  const Types types = TypesOf(cols);
  const std::vector<SortKey> keys = {{1, true, false}, {2, false, true}};
  std::mt19937_64 rng(4242);
  TopKOp op(types, keys, 3, 1);
  ZSet model;
  for (int step = 0; step < 20; ++step) {
    Changes ch;
    for (int i = 0; i < 40; ++i) {
      std::vector<Value> row;
      for (const ColSpec& c : cols)
        row.push_back(static_cast<double>(rng() % 1000) < c.null_p * 1000 ? Value::Null()
                                                                          : c.domain[rng() % c.domain.size()]);
      // Deletes only of rows present (the model's), inserts of any.
      const int64_t w = !model.empty() && rng() % 3 == 0 ? -1 : 1;
      if (w < 0) row = std::next(model.begin(), static_cast<long>(rng() % model.size()))->first;
      ch.push_back({row, w});
      AddInto(&model, row, w);
    }
    Batch b = MakeBatch(types, ch);
    const Batch* in[] = {&b};
    op.Step(in);
  }
  std::string saved;
  StateWriter w(&saved);
  op.SaveState(w);
  StateReader r(saved);
  SortedRows rows{SortedRowLess{&keys}};
  LoadSortedRows(r, types.size(), "top-K", &rows);
  REQUIRE(r.AtEnd());
  ZSet back;
  for (const auto& [row, weight] : rows) back[row] = weight;
  REQUIRE(back == model);
  // The bytes list the rows in SortedRowLess order: saving `rows` again gives the same bytes.
  std::string again;
  StateWriter w2(&again);
  SaveSortedRows(rows, w2);
  REQUIRE(again == saved);
}

// ------------------------------------------------ partitioned state: top-K, windows, as-of join

// Operators whose state is whole partitions (core/circuit/partitions.h): one keyed entry per
// PARTITION BY value (top-K, window functions) or per join key and side (as-of join). The
// unpartitioned top-Ks (TopKScenarios) keep one partition.
std::vector<Scenario> PartitionedScenarios() {
  std::vector<Scenario> out;
  const std::vector<ColSpec> cols = {kKey3, kInt, kStr};
  const Types types = TypesOf(cols);
  {
    // LIMIT 2 OFFSET 1 in each partition of column 0, ordered by column 1 DESC.
    Scenario sc;
    sc.name = "top-K per partition LIMIT 2 OFFSET 1";
    sc.inputs = {cols};
    sc.out_types = types;
    const std::vector<SortKey> keys = {{1, true, false}};
    sc.make = [=] { return std::make_unique<TopKOp>(types, keys, 2, 1, std::vector<int>{0}); };
    sc.make_pooled = [=](ThreadPool* pool) {
      return std::make_unique<TopKOp>(types, keys, 2, 1, std::vector<int>{0}, RankKind::kNone, pool);
    };
    sc.consolidated = true;
    sc.naive = [=](const std::vector<ZSet>& ins, const std::vector<Changes>&) {
      std::map<Value, ZSet> parts;
      for (const auto& [r, w] : ins[0]) parts[r[0]][r] = w;
      ZSet out;
      for (const auto& [p, z] : parts)
        for (const auto& [r, w] : NaiveTopK(z, keys, 2, 1)) AddInto(&out, r, w);
      return out;
    };
    out.push_back(std::move(sc));
  }
  {
    Scenario sc;
    sc.name = "top-K RANK <= 2 per partition";
    sc.inputs = {cols};
    sc.out_types = types;
    sc.out_types.push_back(PhysType::kI64);
    const std::vector<SortKey> keys = {{1, false, true}};
    sc.make = [=] { return std::make_unique<TopKOp>(types, keys, 2, 0, std::vector<int>{0, 2}, RankKind::kRank); };
    sc.make_pooled = [=](ThreadPool* pool) {
      return std::make_unique<TopKOp>(types, keys, 2, 0, std::vector<int>{0, 2}, RankKind::kRank, pool);
    };
    out.push_back(std::move(sc));
  }
  {
    // ROW_NUMBER, LAG and a sliding SUM per partition of column 2, ordered by column 1.
    Scenario sc;
    sc.name = "window functions per partition";
    sc.inputs = {cols};
    sc.out_types = types;
    std::vector<WindowFn> fns(3);
    fns[0].kind = WindowFnKind::kRowNumber;
    fns[1].kind = WindowFnKind::kLag;
    fns[1].arg = 1;
    fns[2].kind = WindowFnKind::kAggregate;
    fns[2].agg.kind = AggKind::kSum;
    fns[2].agg.arg = 1;
    fns[2].agg.arg_type = SqlType::Of(TypeId::kBigInt);
    fns[2].rows = true;
    fns[2].start = {WindowBound::Kind::kPreceding, 1, Value::Int(1)};
    for (size_t i = 0; i < fns.size(); ++i) sc.out_types.push_back(PhysType::kI64);
    sc.make = [=] {
      return std::make_unique<WindowOp>(types, std::vector<int>{2}, std::vector<SortKey>{{1, false, true}}, fns);
    };
    out.push_back(std::move(sc));
  }
  for (bool pad : {false, true}) {
    Scenario sc;
    sc.name = pad ? "left as-of join" : "as-of join";
    sc.inputs = {cols, {kKey3, kInt, kInt}};
    sc.out_types = types;
    for (PhysType t : TypesOf(sc.inputs[1])) sc.out_types.push_back(t);
    const SqlType big = SqlType::Of(TypeId::kBigInt), str = SqlType::Of(TypeId::kVarchar);
    sc.make = [=] {
      return std::make_unique<AsofJoinOp>(std::vector<SqlType>{big, big, str}, std::vector<SqlType>{big, big, big},
                                          std::vector<int>{0}, std::vector<int>{0}, 1, 1, false, pad);
    };
    out.push_back(std::move(sc));
  }
  return out;
}

TEST_CASE("top-K per partition: I(output) is each partition's cut recomputed from scratch", "[operators]") {
  CheckCorrectness(PartitionedScenarios()[0], 9350);
}

TEST_CASE("top-K, windows, as-of join: incremental saves store exactly the changed partitions", "[operators]") {
  uint64_t seed = 9400;
  for (const auto& sc : TopKScenarios()) CheckIncrementalSave(sc, seed++);
  for (const auto& sc : PartitionedScenarios()) {
    CheckIncrementalSave(sc, seed++);
    // (Not the window: its whole-state format may end after the rows, as it did before rows were
    // discarded, so a cut there is a valid state, not the truncation CheckSaveRestore expects.)
    if (sc.name.find("window") == std::string::npos) CheckSaveRestore(sc, seed++);
  }
}

TEST_CASE("top-K per partition: sharded over 2 or 3 workers, the same outputs and state as one", "[operators]") {
  uint64_t seed = 9450;
  int sharded = 0;
  for (const auto& sc : PartitionedScenarios())
    if (sc.make_pooled) {
      CheckSharded(sc, seed++);
      ++sharded;
    }
  REQUIRE(sharded == 2);
}

TEST_CASE("top-K, windows, as-of join: backed by the store, evicted and restored lazily, the same outputs and state",
          "[operators]") {
  uint64_t seed = 9500;
  for (const auto& sc : TopKScenarios()) CheckBacked(sc, seed++);
  for (const auto& sc : PartitionedScenarios()) {
    REQUIRE(sc.make()->CanBackState());
    CheckBacked(sc, seed++);
  }
}

TEST_CASE("top-K, windows, as-of join: changes tracked only from a later step still save every partition",
          "[operators]") {
  // Under fault_tolerance none the changes are tracked once the state outgrows the cache: the
  // first checkpoint then stores everything.
  Gen g(9700);
  for (const auto& sc : PartitionedScenarios()) {
    for (int it = 0; it < 20; ++it) {
      Sequence seq = RandomSequence(sc, g, 2, 8);
      INFO(sc.name << " iteration " << it << "\n" << DescribeSequence(seq));
      const size_t cut = static_cast<size_t>(g.Int(1, static_cast<int>(seq.steps.size()) - 1));
      auto late = sc.make();
      auto early = sc.make();
      early->TrackChanges();
      for (size_t s = 0; s < cut; ++s) {
        RunStep(*late, sc, seq.steps[s]);
        RunStep(*early, sc, seq.steps[s]);
      }
      late->TrackChanges();
      std::map<std::string, std::string> want, got;
      std::string hw, hg;
      SaveChangesInto(*early, &want, &hw);
      SaveChangesInto(*late, &got, &hg);
      REQUIRE(got == want);
      for (size_t s = cut; s < seq.steps.size(); ++s) {
        REQUIRE(ByteDiff(RunStep(*early, sc, seq.steps[s]), RunStep(*late, sc, seq.steps[s])) == "");
        SaveChangesInto(*early, &want, &hw);
        SaveChangesInto(*late, &got, &hg);
        REQUIRE(got == want);
      }
    }
  }
}

TEST_CASE("top-K, windows: a damaged stored partition is reported as corruption", "[operators]") {
  Gen g(9650);
  for (const auto& sc : PartitionedScenarios()) {
    // (The as-of join stores typed row encodings, which DecodeRowValue bounds-checks as it reads.)
    if (sc.name.find("as-of") != std::string::npos) continue;
    size_t damaged = 0;
    for (int it = 0; it < 20; ++it) {
      Sequence seq = RandomSequence(sc, g, 1, 6);
      auto a = sc.make();
      a->TrackChanges();
      for (const auto& step : seq.steps) RunStep(*a, sc, step);
      std::map<std::string, std::string> stored;
      std::string header;
      SaveChangesInto(*a, &stored, &header);
      for (const auto& [key, value] : stored) {
        INFO(sc.name << " iteration " << it);
        // U64 rows, then the first row's length (U64) and its first value's tag: an unknown tag.
        if (value.size() <= 16) continue;
        std::string bad = value;
        bad[16] = '\x09';
        auto b = sc.make();
        StateReader hr(header);
        b->BeginRestore(hr);
        REQUIRE_THROWS_AS(b->RestoreEntry(key, bad), Error);
        // Cut short.
        auto c = sc.make();
        StateReader hc(header);
        c->BeginRestore(hc);
        REQUIRE_THROWS_AS(c->RestoreEntry(key, std::string_view(value).substr(0, g.Int(0, value.size() - 1))), Error);
        ++damaged;
      }
    }
    REQUIRE(damaged > 0);
  }
}

TEST_CASE("top-K, windows, as-of join: a checkpoint holding the whole state (the older format) restores",
          "[operators]") {
  Gen g(9600);
  for (const auto& sc : PartitionedScenarios()) {
    for (int it = 0; it < 20; ++it) {
      Sequence seq = RandomSequence(sc, g, 2, 8);
      INFO(sc.name << " iteration " << it << "\n" << DescribeSequence(seq));
      const size_t cut = static_cast<size_t>(g.Int(1, static_cast<int>(seq.steps.size()) - 1));
      auto a = sc.make();
      a->TrackChanges();
      for (size_t s = 0; s < cut; ++s) RunStep(*a, sc, seq.steps[s]);
      // Such a checkpoint has the whole state as the header and no entries.
      const std::string whole = SaveOf(*a);
      auto b = sc.make();
      b->TrackChanges();
      StateReader r(whole);
      b->BeginRestore(r);
      b->EndRestore();
      REQUIRE(SaveOf(*b) == whole);
      // Its partitions count as changed: the next checkpoint stores them all, as `a` would.
      std::map<std::string, std::string> want, got;
      std::string hw, hg;
      SaveChangesInto(*a, &want, &hw);
      SaveChangesInto(*b, &got, &hg);
      REQUIRE(got == want);
      REQUIRE(hg == hw);
      for (size_t s = cut; s < seq.steps.size(); ++s)
        REQUIRE(ByteDiff(RunStep(*a, sc, seq.steps[s]), RunStep(*b, sc, seq.steps[s])) == "");
    }
  }
}

TEST_CASE("aggregate: global aggregate over empty input is one row", "[operators]") {
  std::vector<AggSpec> aggs = {Agg(AggKind::kCountStar, -1, SqlType()), Agg(AggKind::kCount, 0, kBigInt),
                               Agg(AggKind::kSum, 0, kBigInt),          Agg(AggKind::kAvg, 0, kBigInt),
                               Agg(AggKind::kMin, 0, kBigInt),          Agg(AggKind::kCount, 0, kBigInt, true)};
  Types in = {PhysType::kI64};
  AggregateOp op(in, 0, aggs);
  Batch empty = EmptyBatch(in);
  const Batch* ptr = &empty;
  Batch first = op.Step({&ptr, 1});
  REQUIRE(first.size() == 1);
  CHECK(first.weights[0] == 1);
  CHECK(RowOf(first, 0) ==
        Row{Value::Int(0), Value::Int(0), Value::Null(), Value::Null(), Value::Null(), Value::Int(0)});
  CHECK(op.Step({&ptr, 1}).empty());  // nothing changes afterwards
  // Insert then delete a row: the row goes to (1, 1, 5, 5.0, 5, 1) and back.
  Batch ins = MakeBatch(in, {{{Value::Int(5)}, 1}});
  Batch del = MakeBatch(in, {{{Value::Int(5)}, -1}});
  const Batch* pi = &ins;
  const Batch* pd = &del;
  CHECK(op.Step({&pi, 1}).size() == 2);
  Batch back = op.Step({&pd, 1});
  ZSet z = ToZSet(back);
  CHECK(z.size() == 2);
  CHECK(z.at(Row{Value::Int(0), Value::Int(0), Value::Null(), Value::Null(), Value::Null(), Value::Int(0)}) == 1);
}

TEST_CASE("aggregate: SUM overflow raises a runtime error", "[operators]") {
  Types in = {PhysType::kI64};
  AggregateOp op(in, 0, {Agg(AggKind::kSum, 0, kBigInt)});
  Batch b = MakeBatch(in, {{{Value::Int(INT64_MAX)}, 1}, {{Value::Int(1)}, 1}});
  const Batch* p = &b;
  REQUIRE_THROWS_AS(op.Step({&p, 1}), Error);
  // The same with a small integer group key (the slice path), with unit and other weights.
  Types kin = {PhysType::kI64, PhysType::kI64};
  for (int64_t w : {1, 2}) {
    AggregateOp keyed(kin, 1, {Agg(AggKind::kSum, 1, kBigInt)});
    Batch kb = MakeBatch(kin, {{{Value::Int(3), Value::Int(INT64_MAX / 2 + 1)}, w},
                               {{Value::Int(3), Value::Int(INT64_MAX / 2 + 1)}, 1}});
    const Batch* kp = &kb;
    REQUIRE_THROWS_AS(keyed.Step({&kp, 1}), Error);
  }
  // In a shard on a worker thread: the error reaches the caller.
  ThreadPool pool(2);
  AggregateOp sharded(kin, 1, {Agg(AggKind::kSum, 1, kBigInt)}, &pool);
  BatchBuilder many(kin);
  for (int64_t k = 0; k < 5000; ++k) many.AppendRow(std::vector<Value>{Value::Int(k * 1000), Value::Int(k)}, 1);
  many.AppendRow(std::vector<Value>{Value::Int(7), Value::Int(INT64_MAX)}, 2);
  Batch mb = many.Finish();
  const Batch* mp = &mb;
  REQUIRE_THROWS_AS(sharded.Step({&mp, 1}), Error);
}

TEST_CASE("aggregate: parallel slice pre-aggregation matches serial and plain sums", "[operators]") {
  // Batches of 40k rows (several 16K-row slices) over up to 1100 integer keys: the pooled and the
  // serial operator must emit identical bytes, and the integral must equal per-key sums kept
  // here with plain integers (the doubles are dyadic, so every order of addition is exact).
  const Types in = {PhysType::kI64, PhysType::kI64, PhysType::kF64};
  const std::vector<AggSpec> aggs = {Agg(AggKind::kCountStar, -1, SqlType()), Agg(AggKind::kCount, 1, kBigInt),
                                     Agg(AggKind::kSum, 1, kBigInt),          Agg(AggKind::kAvg, 1, kBigInt),
                                     Agg(AggKind::kCount, 2, kDouble),        Agg(AggKind::kSum, 2, kDouble),
                                     Agg(AggKind::kAvg, 2, kDouble)};
  ThreadPool pool(4);
  AggregateOp par(in, 1, aggs, &pool), ser(in, 1, aggs);
  struct Rec {
    int64_t k;
    Value x, d;
  };
  std::vector<Rec> live;  // one entry per copy currently in the input
  std::mt19937_64 rng(12000);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  ZSet out;
  auto step = [&](const Batch& batch) {
    const Batch* p = &batch;
    Batch a = par.Step({&p, 1});
    Batch b = ser.Step({&p, 1});
    REQUIRE(ByteDiff(a, b) == "");
    AddInto(&out, a);
    return a;
  };
  auto expected = [&] {
    struct Sums {
      int64_t rows = 0, cx = 0, sx = 0, cd = 0;
      double sd = 0;
    };
    std::map<int64_t, Sums> g;
    for (const Rec& r : live) {
      Sums& s = g[r.k];
      ++s.rows;
      if (!r.x.IsNull()) ++s.cx, s.sx += r.x.i;
      if (!r.d.IsNull()) ++s.cd, s.sd += r.d.d;
    }
    ZSet z;
    for (const auto& [k, s] : g) {
      Row row = {Value::Int(k), Value::Int(s.rows), Value::Int(s.cx)};
      row.push_back(s.cx ? Value::Int(s.sx) : Value::Null());
      row.push_back(s.cx ? Value::Int(s.sx / s.cx) : Value::Null());  // AVG(BIGINT) truncates
      row.push_back(Value::Int(s.cd));
      row.push_back(s.cd ? Value::Double(s.sd) : Value::Null());
      row.push_back(s.cd ? Value::Double(s.sd / static_cast<double>(s.cd)) : Value::Null());
      AddInto(&z, row, 1);
    }
    return z;
  };
  for (int st = 0; st < 4; ++st) {
    const int key_span = st == 3 ? 1100 : 500;  // the last step exceeds the slice path's key range
    const bool with_nulls = st != 1;            // step 1: no NULLs (the dense loops)
    BatchBuilder bb(in);
    for (int i = 0; i < 40000; ++i) {
      int64_t w = 1;
      Rec r;
      if (st > 0 && !live.empty() && pick(100) < 45) {
        size_t idx = static_cast<size_t>(pick(static_cast<int>(live.size())));
        r = live[idx];
        live[idx] = live.back();
        live.pop_back();
        w = -1;
      } else {
        r.k = pick(key_span);
        r.x = with_nulls && pick(10) == 0 ? Value::Null() : Value::Int(pick(2001) - 1000);
        r.d = with_nulls && pick(10) == 0 ? Value::Null() : Value::Double((pick(64) - 32) * 0.25);
        if (st == 2 && pick(5) == 0) w = 2;
        for (int64_t c = 0; c < w; ++c) live.push_back(r);
      }
      bb.col(0).Append(Value::Int(r.k));
      bb.col(1).Append(r.x);
      bb.col(2).Append(r.d);
      bb.AddWeight(w);
    }
    step(bb.Finish());
    INFO("step " << st);
    REQUIRE(Diff(out, expected()) == "");
  }
  // After the load, a one-row change emits at most -old/+new.
  Batch one = MakeBatch(in, {{{Value::Int(7), Value::Int(1), Value::Double(0.5)}, 1}});
  CHECK(step(one).size() <= 2);
  REQUIRE(Diff(out, [&] {
            live.push_back({7, Value::Int(1), Value::Double(0.5)});
            return expected();
          }()) == "");
  // The pooled and serial operators hold the same state.
  REQUIRE((SaveOf(par) == SaveOf(ser)));
}

// -------------------------------------------------------------------------------- distinct

Scenario DistinctScenario(bool arbitrary) {
  Scenario sc;
  sc.name = arbitrary ? "distinct (arbitrary weights)" : "distinct";
  sc.inputs = {{kKey3, kKeyStr, kKeyDbl}};
  sc.out_types = TypesOf(sc.inputs[0]);
  sc.make = [] { return std::make_unique<DistinctOp>(); };
  sc.consolidated = sc.unit_weights = true;
  sc.naive = [](const std::vector<ZSet>& in, const std::vector<Changes>&) {
    ZSet out;
    for (const auto& [r, w] : in[0])
      if (w > 0) out[r] = 1;
    return out;
  };
  if (arbitrary) {
    auto specs = sc.inputs[0];
    sc.delta = [specs](Gen& g, size_t, ZSet* cur) {
      Changes ch = g.ArbitraryDelta(specs);
      for (const auto& [r, w] : ch) AddInto(cur, r, w);
      return ch;
    };
  }
  return sc;
}

TEST_CASE("distinct: I(output) is the set of rows with positive weight", "[operators]") {
  CheckAll(DistinctScenario(false), 8000);
  // Distinct is defined for any Z-set (rows of weight <= 0 are absent), so negative integrated
  // weights must work too.
  CheckAll(DistinctScenario(true), 8100);
}

TEST_CASE("distinct: backed by the store, evicted and restored lazily, the same outputs and state", "[operators]") {
  REQUIRE(DistinctScenario(false).make()->CanBackState());
  CheckBacked(DistinctScenario(false), 8200);
  CheckBacked(DistinctScenario(true), 8300);
}

// ----------------------------------------------------------------- EXCEPT ALL / INTERSECT ALL

Scenario BagSetScenario(BagSetOp::Kind kind, bool arbitrary) {
  Scenario sc;
  const bool except = kind == BagSetOp::Kind::kExceptAll;
  sc.name = std::string(except ? "except all" : "intersect all") + (arbitrary ? " (arbitrary weights)" : "");
  sc.inputs = {{kKey3, kKeyStr}, {kKey3, kKeyStr}};
  sc.out_types = TypesOf(sc.inputs[0]);
  sc.make = [kind] { return std::make_unique<BagSetOp>(kind); };
  sc.consolidated = true;
  // PostgreSQL's rule, with a multiplicity below zero counting as zero.
  sc.naive = [except](const std::vector<ZSet>& in, const std::vector<Changes>&) {
    ZSet out;
    std::set<Row> rows;
    for (const auto& z : in)
      for (const auto& [r, w] : z) rows.insert(r);
    for (const Row& r : rows) {
      auto mult = [&](const ZSet& z) {
        auto it = z.find(r);
        return it == z.end() ? int64_t{0} : std::max<int64_t>(it->second, 0);
      };
      int64_t l = mult(in[0]), rr = mult(in[1]);
      AddInto(&out, r, except ? std::max<int64_t>(l - rr, 0) : std::min(l, rr));
    }
    return out;
  };
  if (arbitrary) {
    auto specs = sc.inputs[0];
    sc.delta = [specs](Gen& g, size_t, ZSet* cur) {
      Changes ch = g.ArbitraryDelta(specs);
      for (const auto& [r, w] : ch) AddInto(cur, r, w);
      return ch;
    };
  }
  return sc;
}

TEST_CASE("except all / intersect all: I(output) is the multiset difference / intersection", "[operators]") {
  uint64_t seed = 8500;
  for (auto kind : {BagSetOp::Kind::kExceptAll, BagSetOp::Kind::kIntersectAll})
    for (bool arbitrary : {false, true}) CheckAll(BagSetScenario(kind, arbitrary), seed += 10);
}

TEST_CASE("except all / intersect all: backed by the store, evicted and restored lazily, the same outputs",
          "[operators]") {
  uint64_t seed = 8600;
  for (auto kind : {BagSetOp::Kind::kExceptAll, BagSetOp::Kind::kIntersectAll})
    for (bool arbitrary : {false, true}) CheckBacked(BagSetScenario(kind, arbitrary), seed += 10);
}

TEST_CASE("except all: a checkpoint holding the whole state in its header restores, and is stored keyed next",
          "[operators]") {
  // The form of checkpoints before the state was keyed: the count, then per row in order its
  // encoding and its left and right weights.
  const Types types = {PhysType::kI64, PhysType::kStr};
  std::string header;
  {
    StateWriter w(&header);
    w.U64(1);
    Batch b = MakeBatch(types, {{{Value::Int(300), Value::String("x")}, 1}});
    std::string row;
    EncodeRow(&row, b, 0);
    w.Str(row);
    w.I64(2);
    w.I64(0);
  }
  BagSetOp op(BagSetOp::Kind::kExceptAll);
  op.TrackChanges();
  StateReader r(header);
  op.BeginRestore(r);
  op.EndRestore();
  // The row is there twice on the left: one more on the right takes one copy out.
  Batch none = MakeBatch(types, {});
  Batch right = MakeBatch(types, {{{Value::Int(300), Value::String("x")}, 1}});
  const Batch* in[] = {&none, &right};
  const ZSet out = ToZSet(op.Step(in));
  ZSet want;
  AddInto(&want, Row{Value::Int(300), Value::String("x")}, -1);
  CHECK(Diff(out, want) == "");
  std::map<std::string, std::string> stored;
  std::string hdr;
  SaveChangesInto(op, &stored, &hdr);
  CHECK(hdr.empty());
  CHECK(stored.size() == 1);
}

// ---------------------------------------------------------------------------------- upsert

Scenario UpsertScenario(std::vector<int> key_cols) {
  Scenario sc;
  sc.name = "upsert keys " + std::to_string(key_cols.size());
  sc.inputs = {{kKeyNN, kInt, kKeyStr}};
  sc.out_types = TypesOf(sc.inputs[0]);
  Types types = sc.out_types;
  sc.make = [=] { return std::make_unique<UpsertOp>(types, key_cols); };
  sc.make_pooled = [=](ThreadPool* pool) { return std::make_unique<UpsertOp>(types, key_cols, pool); };
  sc.unit_weights = true;
  auto key_of = [key_cols](const Row& r) {
    Row k;
    for (int c : key_cols) k.push_back(r[c]);
    return k;
  };
  sc.naive = [=](const std::vector<ZSet>&, const std::vector<Changes>& history) {
    std::map<Row, Row> table;  // last write per key wins; a delete removes the key's row
    for (const auto& [r, w] : history[0]) {
      if (w > 0)
        table[key_of(r)] = r;
      else
        table.erase(key_of(r));
    }
    ZSet out;
    for (const auto& [k, r] : table) AddInto(&out, r, 1);
    return out;
  };
  auto specs = sc.inputs[0];
  sc.delta = [specs](Gen& g, size_t, ZSet*) {
    // Inserts (weight 1, sometimes 2) and deletes by key whose other values are arbitrary.
    Changes ch;
    int n = g.Int(0, 6);
    for (int i = 0; i < n; ++i) {
      Row r = g.RandomRow(specs);
      int64_t w = g.Chance(0.35) ? -1 : g.Chance(0.1) ? 2 : 1;
      ch.emplace_back(r, w);
    }
    return ch;
  };
  return sc;
}

TEST_CASE("upsert: I(output) is the table with the last write per key", "[operators]") {
  CheckAll(UpsertScenario({0}), 9000);
  CheckAll(UpsertScenario({0, 2}), 9100);
}

TEST_CASE("upsert: sharded, and backed by the store", "[operators]") {
  uint64_t seed = 9200;
  for (const auto& keys : {std::vector<int>{0}, std::vector<int>{0, 2}}) {
    CheckSharded(UpsertScenario(keys), seed++);
    CheckBacked(UpsertScenario(keys), seed++);
  }
}

TEST_CASE("upsert: IntegralContents lists the table; pinned, nothing is evicted", "[operators]") {
  // The table a checkpoint writes from the operator's rows (pipelines/controller.cc): after each
  // step, the last write per key (the scenario's from-scratch oracle), whatever the shards; once
  // evicted to the store the rows are no longer listable, unless pinned first.
  ThreadPool two(2), three(3);
  Gen g(9300);
  int evicted = 0, pinned_kept = 0;
  for (const auto& keys : {std::vector<int>{0}, std::vector<int>{0, 2}}) {
    const Scenario sc = UpsertScenario(keys);
    for (int it = 0; it < 60; ++it) {
      Sequence seq = RandomSequence(sc, g, 2, 10);
      INFO(sc.name << " iteration " << it << "\n" << DescribeSequence(seq));
      ThreadPool* pool = it % 3 == 0 ? nullptr : it % 3 == 1 ? &two : &three;
      auto op = pool ? sc.make_pooled(pool) : sc.make();
      VersionedStore store;
      op->TrackChanges();
      op->BackState(&store, 0, false);
      std::vector<Changes> history(1);
      for (const auto& step : seq.steps) {
        RunStep(*op, sc, step);
        history[0].insert(history[0].end(), step[0].begin(), step[0].end());
        const ZSet want = sc.naive({}, history);
        REQUIRE(op->IntegralRows() == want.size());
        ZSet got;
        for (const Batch& part : op->IntegralContents(pool)) AddInto(&got, part);
        REQUIRE(Diff(got, want) == "");
      }
      // A committed checkpoint evicts the clean rows, except while pinned.
      const bool pin = g.Chance(0.5);
      op->PinIntegral(pin);
      StateDelta d;
      std::string header;
      StateWriter w(&header);
      op->SaveChanges(w, d);
      store.Commit(d);
      op->StateCommitted(true);
      const size_t rows = sc.naive({}, history).size();
      if (pin || rows == 0) {
        REQUIRE(op->IntegralRows() == rows);
        pinned_kept += pin && rows > 0;
      } else {
        REQUIRE(!op->IntegralRows());
        REQUIRE_THROWS_AS(op->IntegralContents(pool), Error);
        ++evicted;
      }
    }
  }
  REQUIRE(evicted >= 10);
  REQUIRE(pinned_kept >= 10);
}

TEST_CASE("upsert: a checkpoint holding the whole state in its header restores, and is stored keyed next",
          "[operators]") {
  // The form of checkpoints before the state was keyed: the count, then per key in order its
  // key and row, both in the row encoding.
  const Types types = {PhysType::kI64, PhysType::kStr};
  std::string header;
  {
    StateWriter w(&header);
    w.U64(2);
    for (int64_t k : {3, 7}) {
      Batch b = MakeBatch(types, {{{Value::Int(k), Value::String("v" + std::to_string(k))}, 1}});
      std::string key, row;
      EncodeRow(&key, b, 0, std::vector<int>{0});
      EncodeRow(&row, b, 0);
      w.Str(key);
      w.Str(row);
    }
  }
  ThreadPool two(2);
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &two}) {
    UpsertOp op(types, {0}, pool);
    op.TrackChanges();
    StateReader r(header);
    op.BeginRestore(r);
    op.EndRestore();
    // Both keys are there: replacing one retracts its old row, deleting the other retracts it.
    Batch in = MakeBatch(types, {{{Value::Int(3), Value::String("new")}, 1}, {{Value::Int(7), Value::Null()}, -1}});
    const Batch* p = &in;
    const ZSet out = ToZSet(op.Step({&p, 1}));
    ZSet want;
    AddInto(&want, Row{Value::Int(3), Value::String("v3")}, -1);
    AddInto(&want, Row{Value::Int(3), Value::String("new")}, 1);
    AddInto(&want, Row{Value::Int(7), Value::String("v7")}, -1);
    CHECK(Diff(out, want) == "");
    // The next checkpoint stores the whole state keyed, with an empty header.
    std::map<std::string, std::string> stored;
    std::string hdr;
    SaveChangesInto(op, &stored, &hdr);
    CHECK(hdr.empty());
    REQUIRE(stored.size() == 1);
    CHECK(DecodeRow(stored.begin()->second) == Row{Value::Int(3), Value::String("new")});
  }
}

TEST_CASE("upsert: a stored row that does not fit the columns is a corruption error", "[operators]") {
  const Types types = {PhysType::kI64, PhysType::kStr};
  UpsertOp op(types, {0});
  StateReader r("");
  op.BeginRestore(r);
  std::string key;
  EncodeValue(&key, Value::Int(1));
  key = CompactRow(key);
  CHECK_THROWS_AS(op.RestoreEntry(key, std::string("\x01", 1)), Error);  // a truncated integer
  std::string wrong;
  EncodeValue(&wrong, Value::Int(1));
  EncodeValue(&wrong, Value::Int(2));  // an integer where the column holds strings
  CHECK_THROWS_AS(op.RestoreEntry(key, wrong), Error);
  std::string narrow;
  EncodeValue(&narrow, Value::Int(1));
  CHECK_THROWS_AS(op.RestoreEntry(key, narrow), Error);
}

TEST_CASE("upsert: a row of weight 0 is no change", "[operators]") {
  const Types types = {PhysType::kI64, PhysType::kStr};
  UpsertOp op(types, {0});
  Batch ins = MakeBatch(types, {{{Value::Int(1), Value::String("a")}, 1}});
  const Batch* p = &ins;
  REQUIRE(op.Step({&p, 1}).size() == 1);
  Batch zero = MakeBatch(types, {{{Value::Int(1), Value::String("b")}, 0}});
  const Batch* z = &zero;
  CHECK(op.Step({&z, 1}).empty());  // the row with key 1 is still there
  Batch del = MakeBatch(types, {{{Value::Int(1), Value::Null()}, -1}});
  const Batch* d = &del;
  Batch out = op.Step({&d, 1});
  REQUIRE(out.size() == 1);
  CHECK(out.weights[0] == -1);
  CHECK(out.Get(1, 0) == Value::String("a"));
}

// -------------------------------------------------------------------------------- integrate

TEST_CASE("integrate: passes changes through and Contents() is the integral", "[operators]") {
  Scenario sc;
  sc.name = "integrate";
  sc.inputs = {{kKey3, kDbl, kStr}};
  sc.out_types = TypesOf(sc.inputs[0]);
  Types types = sc.out_types;
  sc.make = [=] { return std::make_unique<IntegrateOp>(types); };
  sc.naive = [](const std::vector<ZSet>& in, const std::vector<Changes>&) { return in[0]; };
  sc.extra_check = [types](const Operator& op, const std::vector<ZSet>& in) -> std::string {
    const auto& integ = dynamic_cast<const IntegrateOp&>(op);
    Batch contents = integ.Contents();
    if (std::string e = ShapeError(contents, types); !e.empty()) return e;
    if (integ.size() != in[0].size()) return "size() disagrees with the integral";
    // Contents is consolidated and sorted by encoding.
    auto enc = Encoded(contents);
    for (size_t i = 1; i < enc.size(); ++i)
      if (!(enc[i - 1].first < enc[i].first)) return "Contents() is not sorted by encoding";
    return Diff(ToZSet(contents), in[0]);
  };
  CheckAll(sc, 10000);
}

TEST_CASE("integrate: Load replaces the contents and keeps no zero-weight rows", "[operators]") {
  const std::vector<ColSpec> specs = {kKey3, kDbl, kStr};
  const Types types = TypesOf(specs);
  Gen g(10500);
  for (int it = 0; it < 100; ++it) {
    IntegrateOp op(types);
    // Some earlier contents, which Load must discard.
    Batch before = MakeBatch(types, g.ArbitraryDelta(specs));
    const Batch* p = &before;
    op.Step({&p, 1});
    // Unconsolidated contents with duplicates and rows whose weights cancel.
    Changes ch = g.ArbitraryDelta(specs, 12);
    if (!ch.empty()) ch.emplace_back(ch[0].first, -ch[0].second);
    Batch contents = MakeBatch(types, ch);
    op.Load(contents);
    ZSet want = ToZSet(ch);
    INFO("iteration " << it << " contents " << Show(ch));
    REQUIRE(Diff(ToZSet(op.Contents()), want) == "");
    REQUIRE(op.size() == want.size());
    for (int64_t w : op.Contents().weights) REQUIRE(w != 0);
    // Same state as integrating the contents from empty.
    IntegrateOp fresh(types);
    const Batch* q = &contents;
    fresh.Step({&q, 1});
    REQUIRE((SaveOf(op) == SaveOf(fresh)));
  }
}

// -------------------------------------------------------------------------- linear operators

// MapOp with `$0 > 1` and projections ($0 + 1, $2, $1): a naive row-at-a-time version.
std::unique_ptr<MapOp> MakeTestMap() {
  std::vector<BoundExprPtr> args;
  args.push_back(MakeColumn(0, kBigInt));
  args.push_back(MakeLiteral(Value::Int(1), kBigInt));
  auto pred = MakeCall(ExprOp::kGt, SqlType::Of(TypeId::kBoolean), std::move(args));
  std::vector<BoundExprPtr> proj;
  std::vector<BoundExprPtr> add;
  add.push_back(MakeColumn(0, kBigInt));
  add.push_back(MakeLiteral(Value::Int(1), kBigInt));
  proj.push_back(MakeCall(ExprOp::kAdd, kBigInt, std::move(add)));
  proj.push_back(MakeColumn(2, kVarchar));
  proj.push_back(MakeColumn(1, kDouble));
  return std::make_unique<MapOp>(std::move(pred), std::move(proj));
}

ZSet NaiveMap(const ZSet& in) {
  ZSet out;
  for (const auto& [r, w] : in) {
    if (r[0].IsNull() || !(r[0].i > 1)) continue;
    AddInto(&out, Row{Value::Int(r[0].i + 1), r[2], r[1]}, w);
  }
  return out;
}

ZSet Negate(ZSet z) {
  for (auto& [r, w] : z) w = -w;
  return z;
}

ZSet Sum(const ZSet& a, const ZSet& b) {
  ZSet out = a;
  for (const auto& [r, w] : b) AddInto(&out, r, w);
  return out;
}

TEST_CASE("map and union_all are linear for arbitrary weights", "[operators]") {
  const std::vector<ColSpec> specs = {{PhysType::kI64, Ints({-1, 0, 1, 2, 3, 4}), 0.2}, kDbl, kStr};
  const Types types = TypesOf(specs);
  const Types map_out = {PhysType::kI64, PhysType::kStr, PhysType::kF64};
  Gen g(11000);
  for (int it = 0; it < 200; ++it) {
    Changes ca = g.ArbitraryDelta(specs), cb = g.ArbitraryDelta(specs), cc = g.ArbitraryDelta(specs);
    INFO("iteration " << it << " a=" << Show(ca) << " b=" << Show(cb));
    Batch a = MakeBatch(types, ca), b = MakeBatch(types, cb), c = MakeBatch(types, cc);
    Changes both = ca;
    both.insert(both.end(), cb.begin(), cb.end());
    Batch ab = MakeBatch(types, both);
    Changes neg = ca;
    for (auto& [r, w] : neg) w = -w;
    Batch na = MakeBatch(types, neg);

    auto map = MakeTestMap();
    REQUIRE_FALSE(map->HasState());
    auto run = [&](Operator& op, const Batch& x) {
      const Batch* p = &x;
      Batch out = op.Step({&p, 1});
      REQUIRE(ShapeError(out, map_out) == "");
      return ToZSet(out);
    };
    ZSet ma = run(*map, a), mb = run(*map, b);
    REQUIRE(Diff(ma, NaiveMap(ToZSet(ca))) == "");
    REQUIRE(Diff(run(*map, ab), Sum(ma, mb)) == "");  // M(a + b) = M(a) + M(b)
    REQUIRE(Diff(run(*map, na), Negate(ma)) == "");   // M(-a) = -M(a)
    REQUIRE(Diff(run(*map, a), ma) == "");            // stateless: same input, same output
    REQUIRE(run(*map, EmptyBatch(types)).empty());    // M(0) = 0

    UnionAllOp u3;
    const Batch* three[] = {&a, &b, &c};
    Batch u = u3.Step(three);
    REQUIRE(ShapeError(u, types) == "");
    REQUIRE(Diff(ToZSet(u), Sum(Sum(ToZSet(ca), ToZSet(cb)), ToZSet(cc))) == "");
    UnionAllOp minus({1, -1});
    const Batch* two[] = {&ab, &b};
    Batch d = minus.Step(two);
    REQUIRE(ShapeError(d, types) == "");
    REQUIRE(Diff(ToZSet(d), ToZSet(ca)) == "");  // (a + b) - b = a
    // The inputs are not modified (batches are immutable and shared).
    REQUIRE(Diff(ToZSet(b), ToZSet(cb)) == "");
  }
}

TEST_CASE("map over slices on a pool: the same batch, row for row, and the same error", "[operators]") {
  // Large batches (slices of at least MapOp::kSliceRows rows), with NULLs, long and short strings.
  const std::vector<ColSpec> specs = {{PhysType::kI64, Ints({-1, 0, 1, 2, 3, 4}), 0.2}, kDbl, kStr};
  const Types types = TypesOf(specs);
  Gen g(11500);
  auto column = [](int i, SqlType t) { return MakeColumn(i, t); };
  auto add_one = [&] {
    std::vector<BoundExprPtr> add;
    add.push_back(column(0, kBigInt));
    add.push_back(MakeLiteral(Value::Int(1), kBigInt));
    return MakeCall(ExprOp::kAdd, kBigInt, std::move(add));
  };
  auto positive = [&] {
    std::vector<BoundExprPtr> args;
    args.push_back(column(0, kBigInt));
    args.push_back(MakeLiteral(Value::Int(1), kBigInt));
    return MakeCall(ExprOp::kGt, SqlType::Of(TypeId::kBoolean), std::move(args));
  };
  // Filter and map; map alone (a reference first, a computed column, a reference again); filter
  // alone.
  auto make = [&](int shape, ThreadPool* pool) {
    std::vector<BoundExprPtr> proj;
    if (shape != 2) {
      if (shape == 1) proj.push_back(column(2, kVarchar));
      proj.push_back(add_one());
      proj.push_back(column(2, kVarchar));
      proj.push_back(column(1, kDouble));
    }
    return std::make_unique<MapOp>(shape == 1 ? nullptr : positive(), std::move(proj), pool);
  };
  const Types out_types[] = {{PhysType::kI64, PhysType::kStr, PhysType::kF64},
                             {PhysType::kStr, PhysType::kI64, PhysType::kStr, PhysType::kF64},
                             types};
  ThreadPool two(2), three(3);
  for (size_t rows : {size_t{100}, 2 * MapOp::kSliceRows - 1, 2 * MapOp::kSliceRows, size_t{10007}}) {
    Changes ch;
    while (ch.size() < rows) {
      Changes more = g.ArbitraryDelta(specs);
      ch.insert(ch.end(), more.begin(), more.end());
    }
    ch.resize(rows);
    const Batch in = MakeBatch(types, ch);
    for (int shape = 0; shape < 3; ++shape) {
      INFO("rows " << rows << " shape " << shape);
      const Batch* p = &in;
      const Batch one = make(shape, nullptr)->Step({&p, 1});
      for (ThreadPool* pool : {&two, &three}) {
        const Batch par = make(shape, pool)->Step({&p, 1});
        REQUIRE(ShapeError(par, out_types[shape]) == "");
        REQUIRE(ByteDiff(par, one) == "");
      }
    }
  }
  // Two projections that fail on different rows: $0 * 2^62 on row 9000 (in the second slice),
  // $0 + (2^63 - 1) on rows 10 and 9000 (the first slice's fails there). One thread evaluates the
  // first projection over every row first, so it fails on the multiplication; the pool must too.
  Changes ch;
  for (int i = 0; i < 10000; ++i)
    ch.push_back({{Value::Int(i == 9000 ? 2 : i == 10 ? 1 : 0), Value::Double(0), Value::String("")}, 1});
  const Batch in = MakeBatch(types, ch);
  auto failing = [&](ThreadPool* pool) {
    std::vector<BoundExprPtr> proj, mul, add;
    mul.push_back(column(0, kBigInt));
    mul.push_back(MakeLiteral(Value::Int(int64_t{1} << 62), kBigInt));
    add.push_back(column(0, kBigInt));
    add.push_back(MakeLiteral(Value::Int(INT64_MAX), kBigInt));
    proj.push_back(MakeCall(ExprOp::kMul, kBigInt, std::move(mul)));
    proj.push_back(MakeCall(ExprOp::kAdd, kBigInt, std::move(add)));
    MapOp op(nullptr, std::move(proj), pool);
    const Batch* p = &in;
    try {
      op.Step({&p, 1});
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string alone = failing(nullptr);
  REQUIRE(alone.find("overflow in *") != std::string::npos);
  REQUIRE(failing(&two) == alone);
  REQUIRE(failing(&three) == alone);
}

TEST_CASE("map calling a function implemented outside SQL stays on the calling thread", "[operators]") {
  // Nothing says a user's implementation may run on two threads at once.
  auto f = std::make_shared<ExternalFunction>();
  f->name = "f";
  f->params = {kBigInt};
  f->result = kBigInt;
  std::set<std::thread::id> threads;  // written by the calls: a data race if two threads called
  f->impl = [&](std::span<const Value> args) {
    threads.insert(std::this_thread::get_id());
    return args[0];
  };
  std::vector<BoundExprPtr> args;
  args.push_back(MakeColumn(0, kBigInt));
  auto call = MakeCall(ExprOp::kCall, kBigInt, std::move(args));
  call->external = f;
  std::vector<BoundExprPtr> proj;
  proj.push_back(std::move(call));
  ThreadPool two(2);
  MapOp op(nullptr, std::move(proj), &two);
  Changes ch;
  for (int i = 0; i < 10000; ++i) ch.push_back({{Value::Int(i)}, 1});
  const Batch in = MakeBatch({PhysType::kI64}, ch);
  const Batch* p = &in;
  const Batch out = op.Step({&p, 1});
  REQUIRE(out.size() == 10000);
  REQUIRE(out.cols[0]->i64[9999] == 9999);
  REQUIRE(threads == std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST_CASE("source and constant emit what they should", "[operators]") {
  const Types types = {PhysType::kI64, PhysType::kStr};
  SourceOp src(types);
  Batch b1 = MakeBatch(types, {{{Value::Int(1), Value::String("a")}, 1}});
  Batch b2 = MakeBatch(types, {{{Value::Null(), Value::String("")}, -1}, {{Value::Int(2), Value::Null()}, 2}});
  src.Feed({b1, b2});
  Batch out = src.Step({});
  REQUIRE(ShapeError(out, types) == "");
  std::vector<Batch> both = {b1, b2};
  REQUIRE(ByteDiff(out, Concat(both)) == "");
  Batch next = src.Step({});
  REQUIRE(next.empty());
  REQUIRE(ShapeError(next, types) == "");

  ConstantOp c(b2);
  REQUIRE(ByteDiff(c.Step({}), b2) == "");
  std::string saved = SaveOf(c);
  Batch again = c.Step({});
  REQUIRE(again.empty());
  REQUIRE(ShapeError(again, types) == "");
  ConstantOp restored(b2);
  StateReader r(saved);
  restored.RestoreState(r);
  REQUIRE(restored.Step({}).empty());  // it had emitted already
}

// ------------------------------------------------------------------------------------- cost

TEST_CASE("cost: a one-row change after a large load emits only the changed rows", "[operators]") {
  const size_t kRows = 100000;
  const Types in = {PhysType::kI64, PhysType::kI64, PhysType::kF64};

  SECTION("aggregate") {
    std::vector<AggSpec> aggs = {Agg(AggKind::kCountStar, -1, SqlType()), Agg(AggKind::kSum, 1, kBigInt),
                                 Agg(AggKind::kMin, 2, kDouble), Agg(AggKind::kCount, 1, kBigInt, true)};
    AggregateOp op(in, 1, aggs);
    BatchBuilder bb(in);
    for (size_t r = 0; r < kRows; ++r) {
      bb.col(0).i64.push_back(static_cast<int64_t>(r % 1000));
      bb.col(1).i64.push_back(static_cast<int64_t>(r % 7));
      bb.col(2).f64.push_back(static_cast<double>(r % 13));
      bb.AddWeight(1);
    }
    Batch load = bb.Finish();
    const Batch* p = &load;
    REQUIRE(op.Step({&p, 1}).size() == 1000);  // one +row per group
    auto step1 = [&](Row row, int64_t w) {
      Batch b = MakeBatch(in, {{row, w}});
      const Batch* q = &b;
      return op.Step({&q, 1});
    };
    CHECK(step1({Value::Int(5), Value::Int(3), Value::Double(0.5)}, 1).size() == 2);      // changed group
    CHECK(step1({Value::Int(5), Value::Int(3), Value::Double(0.5)}, -1).size() == 2);     // and back
    CHECK(step1({Value::Int(123456), Value::Int(1), Value::Double(1)}, 1).size() == 1);   // new group
    CHECK(step1({Value::Int(123456), Value::Int(1), Value::Double(1)}, -1).size() == 1);  // gone again
    CHECK(step1({Value::Null(), Value::Int(1), Value::Double(1)}, 1).size() == 1);
  }

  SECTION("global aggregate") {
    AggregateOp op(in, 0, {Agg(AggKind::kCountStar, -1, SqlType()), Agg(AggKind::kMax, 1, kBigInt)});
    BatchBuilder bb(in);
    for (size_t r = 0; r < kRows / 5; ++r) {
      bb.col(0).i64.push_back(static_cast<int64_t>(r));
      bb.col(1).i64.push_back(static_cast<int64_t>(r));
      bb.col(2).f64.push_back(0);
      bb.AddWeight(1);
    }
    Batch load = bb.Finish();
    const Batch* p = &load;
    REQUIRE(op.Step({&p, 1}).size() == 1);
    Batch one = MakeBatch(in, {{{Value::Int(0), Value::Int(0), Value::Double(0)}, -1}});
    const Batch* q = &one;
    CHECK(op.Step({&q, 1}).size() == 2);
  }

  SECTION("join") {
    const size_t kJoinRows = 20000;  // per side
    for (int pad = 0; pad < 4; ++pad) {
      JoinOp op(in, in, {0}, {0}, pad & 1, pad & 2);
      BatchBuilder bl(in), br(in);
      for (size_t r = 0; r < kJoinRows; ++r) {
        for (BatchBuilder* b : {&bl, &br}) {
          b->col(0).i64.push_back(static_cast<int64_t>(r));
          b->col(1).i64.push_back(static_cast<int64_t>(r % 7));
          b->col(2).f64.push_back(0.25);
          b->AddWeight(1);
        }
      }
      Batch l = bl.Finish(), r = br.Finish();
      const Batch* both[] = {&l, &r};
      REQUIRE(op.Step(both).size() == kJoinRows);
      Batch empty = EmptyBatch(in);
      Batch one = MakeBatch(in, {{{Value::Int(17), Value::Int(1), Value::Double(2)}, 1}});
      const Batch* left_only[] = {&one, &empty};
      CHECK(op.Step(left_only).size() == 1);  // matches the one right row with key 17
      Batch fresh = MakeBatch(in, {{{Value::Int(-5), Value::Int(1), Value::Double(2)}, 1}});
      const Batch* right_only[] = {&empty, &fresh};
      CHECK(op.Step(right_only).size() == ((pad & 2) ? 1u : 0u));  // no match: padded or nothing
    }
  }

  SECTION("distinct") {
    DistinctOp op;
    BatchBuilder bb(in);
    for (size_t r = 0; r < kRows / 5; ++r) {
      bb.col(0).i64.push_back(static_cast<int64_t>(r / 2));
      bb.col(1).i64.push_back(0);
      bb.col(2).f64.push_back(0);
      bb.AddWeight(1);
    }
    Batch load = bb.Finish();
    const Batch* p = &load;
    REQUIRE(op.Step({&p, 1}).size() == kRows / 10);
    Batch one = MakeBatch(in, {{{Value::Int(3), Value::Int(0), Value::Double(0)}, -1}});
    const Batch* q = &one;
    CHECK(op.Step({&q, 1}).empty());  // still one copy left
    CHECK(op.Step({&q, 1}).size() == 1);
  }
}

TEST_CASE("aggregate keeping every value: about the values' bytes per group, not B-tree nodes", "[operators]") {
  // MIN(varchar), MAX(double), ARG_MAX(bigint, bigint) per key over an input that may retract:
  // each group keeps all its values. 4000 groups of 10 values each (40 bytes of order keys and
  // doubles a row), measured by the allocator: the groups, their accumulators and the values.
  // Packed buffers of the entries (KeyWeights) in boxes holding only the container (the values,
  // the pairs) take about 0.9 KB; arrays of 32-byte entries took 1.3 KB, whole accumulators
  // (Acc) 1.8 KB, B-trees of the same entries about 2.9 KB.
  auto allocated = [] {
    const struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
  };
  const Types in = {PhysType::kI64, PhysType::kStr, PhysType::kF64, PhysType::kI64, PhysType::kI64};
  std::vector<AggSpec> aggs = {Agg(AggKind::kMin, 1, kVarchar), Agg(AggKind::kMax, 2, kDouble),
                               ArgAgg(AggKind::kArgMax, 3, kBigInt, 4, kBigInt)};
  const int64_t groups = 4000;
  std::vector<Batch> batches;
  for (int round = 0; round < 10; ++round) {
    BatchBuilder b(in);
    for (int64_t k = 0; k < groups; ++k) {
      const int64_t x = (k * 7919 + round * 104729) % 1000003;
      const std::vector<Value> row = {Value::Int(k), Value::String(std::to_string(1000000 + x)),
                                      Value::Double(static_cast<double>(x) * 0.5), Value::Int(x), Value::Int(x % 977)};
      b.AppendRow(row, 1);
    }
    batches.push_back(b.Finish());
  }
  const size_t before = allocated();
  {
    AggregateOp op(in, 1, aggs);
    for (const Batch& b : batches) {
      const Batch* p = &b;
      op.Step(std::span<const Batch* const>(&p, 1));
    }
    const size_t per_group = (allocated() - before) / static_cast<size_t>(groups);
    INFO("bytes per group: " << per_group);
    CHECK(per_group < 1000);
    // The estimate the cache budget uses stays within a third of it.
    CHECK(op.StateMemoryBytes() * 3 >= per_group * groups * 2);
    CHECK(op.StateMemoryBytes() * 2 <= per_group * groups * 3);
  }
}

TEST_CASE("aggregate over an input that only inserts: state per group does not grow with its values", "[operators]") {
  // MIN(varchar), MAX(double), ARG_MAX(bigint, bigint) per key: 2000 groups, then 20 times as
  // many values each. Keeping the extremes, memory stays where it was; keeping every value (the
  // general form) it grows with them.
  const Types in = {PhysType::kI64, PhysType::kStr, PhysType::kF64, PhysType::kI64, PhysType::kI64};
  std::vector<AggSpec> aggs = {Agg(AggKind::kMin, 1, kVarchar), Agg(AggKind::kMax, 2, kDouble),
                               ArgAgg(AggKind::kArgMax, 3, kBigInt, 4, kBigInt)};
  auto batch = [&](int round) {
    BatchBuilder b(in);
    for (int64_t k = 0; k < 2000; ++k) {
      const int64_t x = (k * 7919 + round * 104729) % 1000003;
      const std::vector<Value> row = {Value::Int(k), Value::String("value " + std::to_string(x)),
                                      Value::Double(static_cast<double>(x) * 0.5), Value::Int(x), Value::Int(x % 977)};
      b.AppendRow(row, 1);
    }
    return b.Finish();
  };
  AggregateOp extremes(in, 1, aggs), general(in, 1, aggs);
  extremes.InputsInsertOnly();
  auto step = [&](AggregateOp& op, int round) {
    Batch b = batch(round);
    const Batch* p = &b;
    return op.Step(std::span<const Batch* const>(&p, 1));
  };
  for (int r = 0; r < 2; ++r) {
    Batch x = step(extremes, r), y = step(general, r);
    REQUIRE(ToZSet(x) == ToZSet(y));
  }
  const size_t extremes_before = extremes.StateMemoryBytes(), general_before = general.StateMemoryBytes();
  for (int r = 2; r < 40; ++r) {
    Batch x = step(extremes, r), y = step(general, r);
    REQUIRE(ToZSet(x) == ToZSet(y));
  }
  CHECK(extremes.StateMemoryBytes() <= extremes_before + extremes_before / 10);
  CHECK(general.StateMemoryBytes() > 2 * general_before);
  // By at least the bytes of the 38 new values a group: a string of 12 or 13 bytes and a double.
  CHECK(general.StateMemoryBytes() - general_before >= 2000 * 38 * (12 + 8));

  // A deletion reaching it is an error, not a wrong extreme.
  BatchBuilder del(in);
  const std::vector<Value> gone = {Value::Int(1), Value::String("x"), Value::Double(1), Value::Int(1), Value::Int(1)};
  del.AppendRow(gone, -1);
  Batch d = del.Finish();
  const Batch* p = &d;
  std::string error;
  try {
    extremes.Step(std::span<const Batch* const>(&p, 1));
  } catch (const Error& e) {
    error = e.what();
  }
  CHECK(error.find("a deletion reached an aggregate") != std::string::npos);
}

}  // namespace
}  // namespace fld
