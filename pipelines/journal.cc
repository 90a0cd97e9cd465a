#include "pipelines/journal.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <string_view>

#include "core/common/error.h"
#include "core/common/serialize.h"

namespace fld {

namespace {
constexpr uint64_t kMulA = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kMulB = 0xFF51AFD7ED558CCDull;

inline uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= kMulB;
  x ^= x >> 29;
  return x;
}
}  // namespace

namespace {

// Hash of rows [b, e) of every column and the weights.
uint64_t SliceHash(const Batch& batch, size_t b, size_t e) {
  uint64_t h = Mix(e - b + 1);
  auto fold = [&](uint64_t acc) { h = Mix(h ^ (acc + kMulA)); };
  for (const auto& cp : batch.cols) {
    const Column& c = *cp;
    uint64_t acc = 0;
    switch (c.phys) {
      case PhysType::kI64: {
        const int64_t* v = c.i64.data();
        for (size_t i = b; i < e; ++i) acc += (static_cast<uint64_t>(v[i]) ^ (i * kMulA)) * kMulB;
        break;
      }
      case PhysType::kF64: {
        for (size_t i = b; i < e; ++i) {
          uint64_t bits;
          std::memcpy(&bits, &c.f64[i], 8);
          acc += (bits ^ (i * kMulA)) * kMulB;
        }
        break;
      }
      case PhysType::kStr: {
        std::hash<std::string_view> hs;
        for (size_t i = b; i < e; ++i) acc += (hs(c.str[i]) ^ (i * kMulA)) * kMulB;
        break;
      }
    }
    if (c.HasNulls())
      for (size_t i = b; i < e; ++i) acc += c.nulls[i] * (i + 7) * kMulA;
    fold(acc);
  }
  uint64_t acc = 0;
  for (size_t i = b; i < e; ++i) acc += (static_cast<uint64_t>(batch.weights[i]) ^ (i * kMulA)) * kMulB;
  fold(acc);
  return h;
}

}  // namespace

uint64_t BatchHash(const Batch& b, ThreadPool* pool) {
  // Fixed-size slices hashed independently and combined in order: the same value whatever the
  // number of threads.
  constexpr size_t kSlice = 16384;
  const size_t n = b.size(), slices = std::max<size_t>(1, (n + kSlice - 1) / kSlice);
  std::vector<uint64_t> parts(slices);
  auto work = [&](size_t s) { parts[s] = SliceHash(b, s * kSlice, std::min(n, (s + 1) * kSlice)); };
  if (pool && slices > 1)
    pool->ParallelFor(slices, work);
  else
    for (size_t s = 0; s < slices; ++s) work(s);
  uint64_t h = Mix(n + 1);
  for (uint64_t p : parts) h = Mix(h ^ (p + kMulA));
  return h;
}

uint64_t JournalHash(const Batch& b, bool generated, ThreadPool* pool) {
  if (!generated || b.size() <= 3) return BatchHash(b, pool);
  const uint32_t n = static_cast<uint32_t>(b.size());
  const uint32_t sample[] = {0, n / 2, n - 1};
  return Mix(BatchHash(Gather(b, sample)) ^ (b.size() * kMulB));
}

std::string EncodeJournal(const std::vector<JournalInput>& inputs, std::optional<int64_t> now) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& in : inputs) {
    if (in.logged)
      j.push_back({in.index, in.count, in.hash, in.position, 1});
    else
      j.push_back({in.index, in.count, in.hash, in.position});
  }
  nlohmann::json doc{{"i", j}};
  if (now) doc["now"] = *now;
  std::string json = doc.dump();
  std::string out;
  uint32_t n = static_cast<uint32_t>(json.size());
  out.append(reinterpret_cast<const char*>(&n), 4);
  out += json;
  StateWriter w(&out);
  std::string row;
  for (const auto& in : inputs) {
    if (!in.logged) continue;
    const Batch& b = *in.rows;
    w.U64(b.size());
    for (size_t r = 0; r < b.size(); ++r) {
      row.clear();
      EncodeRow(&row, b, r);
      w.Str(row);
      w.I64(b.weights[r]);
    }
  }
  return out;
}

std::vector<JournalInput> DecodeJournal(const std::string& payload,
                                        const std::vector<std::vector<PhysType>>& input_types,
                                        std::optional<int64_t>* now) {
  if (payload.size() < 4) Fail(ErrorKind::kCorruption, "journal entry is too short");
  uint32_t n;
  std::memcpy(&n, payload.data(), 4);
  if (n > payload.size() - 4) Fail(ErrorKind::kCorruption, "journal entry header runs past its end");
  std::vector<JournalInput> out;
  try {
    auto j = nlohmann::json::parse(payload.substr(4, n));
    if (now) *now = j.contains("now") ? std::optional<int64_t>(j["now"].get<int64_t>()) : std::nullopt;
    for (const auto& e : j.at("i")) {
      JournalInput in;
      in.index = e.at(0).get<uint32_t>();
      in.count = e.at(1).get<uint64_t>();
      in.hash = e.at(2).get<uint64_t>();
      in.position = e.at(3);
      in.logged = in.position.is_null() || (e.size() > 4 && e.at(4) == 1);
      out.push_back(std::move(in));
    }
  } catch (const nlohmann::json::exception& e) {
    Fail(ErrorKind::kCorruption, "journal entry is not valid: {}", e.what());
  }
  StateReader r(std::string_view(payload).substr(4 + n));
  for (auto& in : out) {
    if (!in.logged) continue;
    if (in.index >= input_types.size())
      Fail(ErrorKind::kCorruption, "journal names input {} which does not exist", in.index);
    BatchBuilder b(input_types[in.index]);
    uint64_t rows = r.U64();
    for (uint64_t k = 0; k < rows; ++k) {
      std::string row = r.Str();
      DecodeRowInto(row, &b, 0);
      b.AddWeight(r.I64());
    }
    in.rows = b.Finish();
  }
  return out;
}

}  // namespace fld
