#include "wal/store.h"

#include <lmdb.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "core/common/byte_order.h"
#include "core/common/error.h"
#include "core/common/prefetch.h"
#include "core/common/xxh64.h"
#include "core/zset/arena_map.h"  // varints
#include "wal/crc32c.h"

namespace fld {

namespace {

[[noreturn]] void LmdbFail(const std::string& what, int rc, const std::string& dir) {
  ErrorKind kind = ErrorKind::kIo;
  if (rc == MDB_CORRUPTED || rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH || rc == MDB_PAGE_NOTFOUND)
    kind = ErrorKind::kCorruption;
  Fail(kind, "{}: state store: {} failed: {}", dir, what, mdb_strerror(rc));
}

constexpr size_t kMapSize = size_t{1} << 40;  // address space only; the file grows as needed

// The operator state's two slots (see store.h): "state_slot" says which one holds it.
constexpr const char* kStateDb[2] = {"state", "state1"};

// The per-row term of a relation's content hash (see StateStore::ReadRelation).
uint64_t RowHash(std::string_view row) {
  return (static_cast<uint64_t>(Crc32c(0, row.data(), row.size())) << 32) | Crc32c(0x9E3779B9u, row.data(), row.size());
}

// A cursor on dbi, closed when it goes out of scope: declared after its transaction's TxnAbort
// (or before its commit), it closes first.
struct Cursor {
  MDB_cursor* c = nullptr;
  Cursor(MDB_txn* t, MDB_dbi dbi, const std::string& dir) {
    if (int rc = mdb_cursor_open(t, dbi, &c)) LmdbFail("open a cursor", rc, dir);
  }
  ~Cursor() { mdb_cursor_close(c); }
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;
};

// Aborts a transaction when it goes out of scope, unless `t` was reset (committed or handed on).
struct TxnAbort {
  MDB_txn* t;
  ~TxnAbort() {
    if (t) mdb_txn_abort(t);
  }
};

MDB_val Val(const std::string& s) {
  return MDB_val{s.size(), const_cast<char*>(s.data())};
}

// The key of a row encoding in a "rel:" database (see store.h): the encoding itself when shorter
// than LMDB's key limit, else its first bytes and its RowHash, max_key bytes in all.
void RowKey(std::string_view row, size_t max_key, std::string* key) {
  key->clear();
  if (row.size() < max_key) {
    key->assign(row);
    return;
  }
  key->assign(row.substr(0, max_key - 8));
  const uint64_t h = RowHash(row);
  for (int i = 7; i >= 0; --i) key->push_back(static_cast<char>((h >> (8 * i)) & 0xFF));
}

[[noreturn]] void HashCollision(const std::string& dir, const std::string& name) {
  Fail(ErrorKind::kIo, "{}: state store: two rows of {} have the same key (a 64-bit hash collision)", dir, name);
}

// The same for two operator entries, and an operator entry whose stored bytes do not parse.
[[noreturn]] void StateKeyCollision(const std::string& dir) {
  Fail(ErrorKind::kIo, "{}: state store: two operator entries have the same key (a 64-bit hash collision)", dir);
}
[[noreturn]] void MalformedStateEntry(const std::string& dir) {
  Fail(ErrorKind::kCorruption,
       "{}: state store: a stored operator entry is malformed (the file is damaged); refusing to use it (nothing "
       "was deleted; `fld run --reset` starts over)",
       dir);
}

// A stored row's value: its weight, then the row's encoding when it is a long row (keyed by
// RowKey's prefix and hash), else nothing.
void RowValue(int64_t w, std::string_view long_row, std::string* value) {
  value->assign(reinterpret_cast<const char*>(&w), 8);
  value->append(long_row);
}

// Adds w to the weight of the row stored under `key` in the cursor's database: inserts the row
// when absent, deletes it when the sum is 0. `long_row` is the encoding of a long row (else
// empty); a different long row stored under the same key is a hash collision, reported. One
// B-tree walk: the cursor finds the key, then replaces or deletes in place. `value` is scratch.
void AddRowWeight(MDB_cursor* c, std::string_view key, int64_t w, std::string_view long_row, std::string* value,
                  const std::string& dir, const std::string& name) {
  MDB_val k{key.size(), const_cast<char*>(key.data())}, v;
  int rc = mdb_cursor_get(c, &k, &v, MDB_SET);
  if (rc == 0) {
    if (!long_row.empty() && std::string_view(static_cast<const char*>(v.mv_data), v.mv_size).substr(8) != long_row)
      HashCollision(dir, name);
    int64_t old;
    std::memcpy(&old, v.mv_data, 8);
    w += old;
  } else if (rc != MDB_NOTFOUND) {
    LmdbFail("read " + name, rc, dir);
  }
  const bool found = rc == 0;
  if (w == 0) {
    if (found && (rc = mdb_cursor_del(c, 0))) LmdbFail("delete from " + name, rc, dir);
    return;
  }
  RowValue(w, long_row, value);
  MDB_val nk{key.size(), const_cast<char*>(key.data())}, nv{value->size(), value->data()};
  if ((rc = mdb_cursor_put(c, &nk, &nv, found ? MDB_CURRENT : 0))) LmdbFail("write " + name, rc, dir);
}

// True when `row` is a whole row encoding (core/zset/batch.h: per column a tag 0 = NULL,
// 1 = i64, 2 = f64, 3 = u32 length + bytes) of exactly `types`. LMDB keeps no checksums, so a
// damaged page can hand back any bytes; they are checked before they are decoded.
bool WellFormedRow(std::string_view row, const std::vector<PhysType>& types) {
  size_t pos = 0;
  for (PhysType t : types) {
    if (pos >= row.size()) return false;
    const uint8_t tag = static_cast<uint8_t>(row[pos++]);
    size_t n = 0;
    if (tag == 0) continue;
    if (tag == 1 && t == PhysType::kI64)
      n = 8;
    else if (tag == 2 && t == PhysType::kF64)
      n = 8;
    else if (tag == 3 && t == PhysType::kStr) {
      if (row.size() - pos < 4) return false;
      uint32_t len;
      std::memcpy(&len, row.data() + pos, 4);
      pos += 4;
      n = len;
    } else {
      return false;
    }
    if (row.size() - pos < n) return false;
    pos += n;
  }
  return pos == row.size();
}

}  // namespace

// LMDB reads through a memory map, so a data file damaged or cut short under it shows up as
// SIGBUS rather than an error code. Reads run under a guard that turns that signal into
// fld::Error(kCorruption) (the LMDB transaction it interrupts is abandoned: the process is
// about to stop anyway).
namespace {
thread_local sigjmp_buf* g_sigbus_jump = nullptr;

extern "C" void OnSigbus(int sig) {
  if (g_sigbus_jump) siglongjmp(*g_sigbus_jump, 1);
  signal(sig, SIG_DFL);
  raise(sig);
}

// The handler is installed once, for the whole process (reads run on several threads).
void InstallSigbusHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_handler = OnSigbus;
    sa.sa_flags = SA_NODEFER;  // a guard may jump out without restoring the signal mask
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, nullptr);
  });
}

[[noreturn]] void SigbusFail(const std::string& dir) {
  Fail(ErrorKind::kCorruption,
       "{}/data.mdb: the state store is damaged or cut short (reading it failed with SIGBUS); refusing to use it "
       "(nothing was deleted; `fld run --reset` starts over)",
       dir);
}

template <typename F>
auto GuardSigbus(const std::string& dir, F&& f) -> decltype(f()) {
  InstallSigbusHandler();
  sigjmp_buf jump;
  sigjmp_buf* outer = g_sigbus_jump;
  if (sigsetjmp(jump, 0) != 0) {
    g_sigbus_jump = outer;
    SigbusFail(dir);
  }
  g_sigbus_jump = &jump;
  struct Restore {  // also when f throws
    sigjmp_buf* outer;
    ~Restore() { g_sigbus_jump = outer; }
  } restore{outer};
  return f();
}
}  // namespace

bool StateStore::Exists(const std::string& dir) {
  return std::filesystem::exists(std::filesystem::path(dir) / "data.mdb");
}

std::unique_ptr<StateStore> StateStore::Open(const std::string& dir, bool read_only, bool create) {
  std::unique_ptr<StateStore> s(new StateStore());
  s->dir_ = dir;
  s->read_only_ = read_only;
  if (create) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) Fail(ErrorKind::kIo, "{}: cannot create the state folder: {}", dir, ec.message());
  }
  MDB_env* env = nullptr;
  int rc = mdb_env_create(&env);
  if (rc) LmdbFail("mdb_env_create", rc, dir);
  s->env_ = env;
  mdb_env_set_maxdbs(env, 4096);
  mdb_env_set_mapsize(env, kMapSize);
  // Lookups hold a reader slot per operator shard (a process opening an existing lock file gets
  // the size its creator chose).
  mdb_env_set_maxreaders(env, 1024);
  unsigned flags = MDB_NOTLS;
  if (read_only) flags |= MDB_RDONLY;
  rc = mdb_env_open(env, dir.c_str(), flags, 0644);
  if (rc) LmdbFail("open", rc, dir);
  // LMDB reads its pages through a memory map: a data file shorter than the pages its last commit
  // uses (a truncated copy, a lost tail) would kill the process with SIGBUS on the first read.
  MDB_envinfo info;
  MDB_stat st;
  struct stat fst;
  if (mdb_env_info(env, &info) == 0 && mdb_env_stat(env, &st) == 0 && ::stat((dir + "/data.mdb").c_str(), &fst) == 0) {
    const uint64_t need = (static_cast<uint64_t>(info.me_last_pgno) + 1) * st.ms_psize;
    if (static_cast<uint64_t>(fst.st_size) < need)
      Fail(ErrorKind::kCorruption,
           "{}/data.mdb: the state store is cut short ({} bytes, its last commit uses {}); refusing to use it "
           "(nothing was deleted; `fld run --reset` starts over)",
           dir, fst.st_size, need);
  }
  if (!read_only) {
    GuardSigbus(dir, [&] {
      MDB_txn* t = nullptr;
      if ((rc = mdb_txn_begin(env, nullptr, 0, &t))) LmdbFail("begin write transaction", rc, dir);
      TxnAbort guard{t};
      MDB_dbi dbi[2];
      for (int slot : {0, 1})
        if ((rc = mdb_dbi_open(t, kStateDb[slot], MDB_CREATE, &dbi[slot])))
          LmdbFail(std::string("open database ") + kStateDb[slot], rc, dir);
      const int active = s->StateSlot(t);
      s->ClearUnusedSlots(t);
      guard.t = nullptr;  // a failed commit frees the transaction too
      if ((rc = mdb_txn_commit(t))) LmdbFail("commit", rc, dir);
      s->state_dbi_[0] = dbi[0];
      s->state_dbi_[1] = dbi[1];
      s->active_state_.store(active);
    });
  }
  return s;
}

std::optional<std::string> StateStore::GetMeta(const std::string& key) const {
  return GuardSigbus(dir_, [&] { return GetMetaUnguarded(key); });
}

std::map<std::string, std::string> StateStore::AllMeta() const {
  return GuardSigbus(dir_, [&] { return AllMetaUnguarded(); });
}

std::optional<Batch> StateStore::ReadRelation(const std::string& name, const std::vector<PhysType>& types,
                                              uint64_t* content_hash) const {
  return GuardSigbus(dir_, [&] { return ReadRelationUnguarded(name, types, content_hash, true); });
}

std::optional<uint64_t> StateStore::CheckRelation(const std::string& name, const std::vector<PhysType>& types) const {
  uint64_t hash = 0;
  if (!GuardSigbus(dir_, [&] { return ReadRelationUnguarded(name, types, &hash, false); })) return std::nullopt;
  return hash;
}

StateStore::~StateStore() {
  if (env_) mdb_env_close(static_cast<MDB_env*>(env_));
}

unsigned StateStore::Dbi(void* txn, const std::string& name, bool create) const {
  MDB_dbi dbi;
  int rc = mdb_dbi_open(static_cast<MDB_txn*>(txn), name.c_str(), create ? MDB_CREATE : 0, &dbi);
  if (rc == MDB_NOTFOUND) return UINT32_MAX;
  if (rc) LmdbFail("open database " + name, rc, dir_);
  return dbi;
}

std::unique_ptr<StateStore::Txn> StateStore::Begin() {
  return std::unique_ptr<Txn>(new Txn(this));
}

StateStore::Txn::Txn(StateStore* s) : store_(s) {
  MDB_txn* t = nullptr;
  int rc = mdb_txn_begin(static_cast<MDB_env*>(s->env_), nullptr, 0, &t);
  if (rc) LmdbFail("begin write transaction", rc, s->dir_);
  txn_ = t;
}

StateStore::Txn::~Txn() {
  if (txn_) mdb_txn_abort(static_cast<MDB_txn*>(txn_));
}

void StateStore::Txn::PutMeta(const std::string& key, const std::string& value) {
  MDB_dbi dbi = store_->Dbi(txn_, "meta", true);
  MDB_val k = Val(key), v = Val(value);
  int rc = mdb_put(static_cast<MDB_txn*>(txn_), dbi, &k, &v, 0);
  if (rc) LmdbFail("put " + key, rc, store_->dir_);
}

void StateStore::Txn::PutRelation(const std::string& name, const Batch& contents) {
  MDB_txn* t = static_cast<MDB_txn*>(txn_);
  store_->staged_.erase(name);  // what was staged no longer follows from the active slot
  MDB_dbi dbi = store_->Dbi(txn_, store_->RelationDb(txn_, name), true);
  int rc = mdb_drop(t, dbi, 0);
  if (rc) LmdbFail("clear " + name, rc, store_->dir_);
  ApplyDelta(name, contents);
}

uint64_t StateStore::Txn::ApplyDelta(const std::string& name, const Batch& delta) {
  return ApplyDelta(name, [&delta, r = size_t{0}](std::string* enc, int64_t* weight) mutable {
    if (r == delta.size()) return false;
    EncodeRow(enc, delta, r);
    *weight = delta.weights[r++];
    return true;
  });
}

uint64_t StateStore::Txn::ApplyDelta(const std::string& name, const RowPull& rows) {
  MDB_txn* t = static_cast<MDB_txn*>(txn_);
  store_->staged_.erase(name);  // what was staged no longer follows from the active slot
  MDB_dbi dbi = store_->Dbi(txn_, store_->RelationDb(txn_, name), true);
  const size_t max_key = static_cast<size_t>(mdb_env_get_maxkeysize(static_cast<MDB_env*>(store_->env_)));
  // Into an empty relation, rows sorted by encoding (a consolidated batch) go in with
  // MDB_APPEND: no lookup, pages filled in order. Anything out of order takes the general path.
  MDB_stat st;
  bool append = mdb_stat(t, dbi, &st) == 0 && st.ms_entries == 0;
  Cursor cur(t, dbi, store_->dir_);
  std::string row, key, value;
  uint64_t hash = 0;
  int64_t weight;
  for (key.clear(); rows(&key, &weight); key.clear()) {
    hash += RowHash(key) * static_cast<uint64_t>(weight);
    // A row at LMDB's key limit or over it is keyed by its prefix and hash (RowKey), and its
    // encoding follows the weight in the value; other rows are their own key, copied nowhere.
    const bool long_row = key.size() >= max_key;
    if (long_row) {
      row.swap(key);
      RowKey(row, max_key, &key);
    }
    const std::string_view long_value = long_row ? std::string_view(row) : std::string_view();
    if (append && weight > 0) {
      RowValue(weight, long_value, &value);
      MDB_val k = Val(key), v = Val(value);
      const int rc = mdb_cursor_put(cur.c, &k, &v, MDB_APPEND);
      if (rc == 0) continue;
      if (rc != MDB_KEYEXIST) LmdbFail("write " + name, rc, store_->dir_);
    }
    append = false;  // out of order (or a retraction): the general path for this row and the rest
    AddRowWeight(cur.c, key, weight, long_value, &value, store_->dir_, name);
  }
  return hash;
}

std::string StateStore::RelationDb(void* txn, const std::string& name) const {
  MDB_dbi slots = Dbi(txn, "rel_slot", false);
  if (slots != UINT32_MAX) {
    MDB_val k = Val(name), v;
    const int rc = mdb_get(static_cast<MDB_txn*>(txn), slots, &k, &v);
    if (rc == 0 && v.mv_size == 1 && *static_cast<const char*>(v.mv_data) == '1') return "rel1:" + name;
    if (rc == 0)
      Fail(ErrorKind::kCorruption, "{}: state store: the slot of relation {} is malformed (the file is damaged)", dir_,
           name);
    if (rc != MDB_NOTFOUND) LmdbFail("read the slot of " + name, rc, dir_);
  }
  return "rel:" + name;
}

int StateStore::StateSlot(void* txn) const {
  MDB_dbi slots = Dbi(txn, "state_slot", false);
  if (slots == UINT32_MAX) return 0;
  MDB_val k{6, const_cast<char*>("active")}, v;
  const int rc = mdb_get(static_cast<MDB_txn*>(txn), slots, &k, &v);
  if (rc == MDB_NOTFOUND) return 0;
  if (rc) LmdbFail("read the slot of the operator state", rc, dir_);
  if (v.mv_size != 1 || *static_cast<const char*>(v.mv_data) != '1')
    Fail(ErrorKind::kCorruption, "{}: state store: the slot of the operator state is malformed (the file is damaged)",
         dir_);
  return 1;
}

unsigned StateStore::StateDbi(void* txn) const {
  // A store open for writing opened both slots with itself (lookups read them from other
  // threads, and LMDB wants no two transactions opening databases at the same time).
  if (state_dbi_[0] != UINT32_MAX) return state_dbi_[active_state_.load()];
  return Dbi(txn, kStateDb[StateSlot(txn)], false);
}

void StateStore::ClearUnusedSlots(void* txn) {
  MDB_txn* t = static_cast<MDB_txn*>(txn);
  MDB_dbi main;
  int rc = mdb_dbi_open(t, nullptr, 0, &main);
  if (rc) LmdbFail("open the main database", rc, dir_);
  std::vector<std::string> unused;
  {
    Cursor c(t, main, dir_);
    MDB_val k, v;
    while ((rc = mdb_cursor_get(c.c, &k, &v, MDB_NEXT)) == 0) {
      const std::string db(static_cast<const char*>(k.mv_data), k.mv_size);
      for (const std::string prefix : {"rel:", "rel1:"})
        if (db.compare(0, prefix.size(), prefix) == 0 && RelationDb(t, db.substr(prefix.size())) != db)
          unused.push_back(db);
    }
  }
  if (rc != MDB_NOTFOUND) LmdbFail("list the databases", rc, dir_);
  unused.push_back(kStateDb[1 - StateSlot(t)]);
  for (const std::string& db : unused) {
    MDB_dbi dbi = Dbi(t, db, false);
    MDB_stat st;
    if (dbi != UINT32_MAX && mdb_stat(t, dbi, &st) == 0 && st.ms_entries > 0 && (rc = mdb_drop(t, dbi, 0)))
      LmdbFail("clear " + db, rc, dir_);
  }
}

template <typename DbOf>
uint64_t StateStore::Entries(DbOf db_of) const {
  return GuardSigbus(dir_, [&]() -> uint64_t {
    MDB_txn* t = nullptr;
    int rc = mdb_txn_begin(static_cast<MDB_env*>(env_), nullptr, MDB_RDONLY, &t);
    if (rc) LmdbFail("begin read transaction", rc, dir_);
    TxnAbort guard{t};
    const unsigned dbi = db_of(t);
    MDB_stat st;
    if (dbi == UINT32_MAX || mdb_stat(t, dbi, &st) != 0) return 0;
    return st.ms_entries;
  });
}

uint64_t StateStore::RelationRows(const std::string& name) const {
  return Entries([&](MDB_txn* t) { return Dbi(t, RelationDb(t, name), false); });
}

uint64_t StateStore::StageRelation(const std::string& name, const Batch& delta, size_t txn_bytes, bool replace) {
  const ConsolidatedRows rows = ConsolidateRows(std::span<const Batch>(&delta, 1));
  return StageRelation(name, ConsolidatedPull(std::span<const Batch>(&delta, 1), rows), txn_bytes, replace);
}

namespace {
// The stored entry a merge's input cursor is on, and its output cursor (MergeTransactions).
struct MergeCursors {
  MDB_cursor* out = nullptr;
  MDB_cursor* in = nullptr;
  MDB_val key{}, value{};  // the stored entry `in` is on, while `have`
  bool have = false;
  const std::string* dir = nullptr;
  std::string_view Key() const { return {static_cast<const char*>(key.mv_data), key.mv_size}; }
  std::string_view Value() const { return {static_cast<const char*>(value.mv_data), value.mv_size}; }
  void Next() {
    const int rc = mdb_cursor_get(in, &key, &value, MDB_NEXT);
    if (rc != 0 && rc != MDB_NOTFOUND) LmdbFail("read a stored entry", rc, *dir);
    have = rc == 0;
  }
};

// A merge of stored entries with changes into another database (StageRelation, StageState),
// over write transactions so that none holds many dirty pages: each opens the target for output
// (the first empties it) and, until the stored entries end, the source for input at the entry
// the last one stopped at. dbis(txn) gives (target, source; UINT32_MAX: none). fill(cursors)
// writes until its budget is spent or nothing is left, and returns whether changes remain.
template <typename Dbis, typename Fill>
void MergeTransactions(MDB_env* env, const std::string& dir, bool changes, Dbis dbis, Fill fill) {
  std::string old_next;  // the stored entry to go on from in the next transaction
  bool old_done = false, first = true;
  while (first || changes || !old_done) {
    MDB_txn* t = nullptr;
    int rc = mdb_txn_begin(env, nullptr, 0, &t);
    if (rc) LmdbFail("begin write transaction", rc, dir);
    TxnAbort guard{t};
    const auto [out_dbi, in_dbi] = dbis(t);
    if (first && (rc = mdb_drop(t, out_dbi, 0))) LmdbFail("clear the database staged into", rc, dir);
    // Cursors close before their transaction commits.
    std::optional<Cursor> out, in;
    out.emplace(t, out_dbi, dir);
    MergeCursors m;
    m.out = out->c;
    m.dir = &dir;
    if (!old_done && in_dbi != UINT32_MAX) {
      in.emplace(t, in_dbi, dir);
      m.in = in->c;
      if (first) {
        rc = mdb_cursor_get(m.in, &m.key, &m.value, MDB_FIRST);
      } else {
        m.key = Val(old_next);
        rc = mdb_cursor_get(m.in, &m.key, &m.value, MDB_SET_RANGE);
      }
      if (rc != 0 && rc != MDB_NOTFOUND) LmdbFail("read a stored entry", rc, dir);
      m.have = rc == 0;
    }
    first = false;
    changes = fill(m);
    old_done = !m.have;
    if (m.have) old_next.assign(m.Key());
    in.reset();
    out.reset();
    guard.t = nullptr;  // a failed commit frees the transaction too
    if ((rc = mdb_txn_commit(t))) LmdbFail("commit", rc, dir);
  }
}
}  // namespace

uint64_t StateStore::StageRelation(const std::string& name, const RowPull& changes, size_t txn_bytes, bool replace) {
  if (read_only_) Fail(ErrorKind::kRuntime, "{}: state store: opened read-only", dir_);
  MDB_env* env = static_cast<MDB_env*>(env_);
  const size_t max_key = static_cast<size_t>(mdb_env_get_maxkeysize(env));
  // The merge of the stored rows (in key order) with the changes (in encoding order, the same
  // order except among long rows sharing their key's prefix: those take the general path).
  std::string target, source;
  std::string enc, long_key;  // the next change's encoding, and its key when it is a long row
  std::string_view key;       // its key: the encoding itself (copied nowhere) or long_key
  int64_t weight = 0;
  bool have_change = false;
  uint64_t hash = 0;
  std::string value;
  auto take_change = [&] {
    enc.clear();
    have_change = changes(&enc, &weight);
    if (!have_change) return;
    hash += RowHash(enc) * static_cast<uint64_t>(weight);
    if (enc.size() < max_key) {
      key = enc;
    } else {
      RowKey(enc, max_key, &long_key);
      key = long_key;
    }
  };
  staged_.erase(name);  // a staging that fails part way leaves nothing to publish
  take_change();
  GuardSigbus(dir_, [&] {
    auto dbis = [&](MDB_txn* t) {
      if (target.empty()) {
        source = RelationDb(t, name);
        target = source == "rel:" + name ? "rel1:" + name : "rel:" + name;
      }
      return std::pair<unsigned, unsigned>(Dbi(t, target, true), replace ? UINT32_MAX : Dbi(t, source, false));
    };
    MergeTransactions(env, dir_, have_change, dbis, [&](MergeCursors& m) {
      // Puts (key, w [, long row]) into the target: appended when in order, else added to what
      // the target holds under the key (a long row out of order).
      auto emit = [&](std::string_view k, int64_t w, std::string_view long_row) -> size_t {
        RowValue(w, long_row, &value);
        MDB_val mk{k.size(), const_cast<char*>(k.data())}, mv = Val(value);
        const int rc2 = mdb_cursor_put(m.out, &mk, &mv, MDB_APPEND);
        if (rc2 == MDB_KEYEXIST)
          AddRowWeight(m.out, k, w, long_row, &value, dir_, name);
        else if (rc2 != 0)
          LmdbFail("write " + target, rc2, dir_);
        return k.size() + 8 + long_row.size();
      };
      size_t bytes = 0;
      while ((have_change || m.have) && bytes < txn_bytes) {
        std::string_view old_key, old_value;
        if (m.have) {
          old_key = m.Key();
          old_value = m.Value();
          if (old_value.size() < 8)
            Fail(ErrorKind::kCorruption, "{}: state store: a stored row of {} is malformed (the file is damaged)", dir_,
                 name);
        }
        const int c = !m.have ? -1 : !have_change ? 1 : key.compare(old_key);
        const std::string_view long_row = enc.size() >= max_key ? std::string_view(enc) : std::string_view();
        if (c < 0) {
          bytes += emit(key, weight, long_row);
          take_change();
        } else if (c > 0) {
          int64_t w;
          std::memcpy(&w, old_value.data(), 8);
          bytes += emit(old_key, w, old_value.substr(8));
          m.Next();
        } else {
          if (old_value.substr(8) != long_row) HashCollision(dir_, name);
          int64_t w;
          std::memcpy(&w, old_value.data(), 8);
          w += weight;
          if (w != 0) bytes += emit(key, w, long_row);
          take_change();
          m.Next();
        }
      }
      return have_change;
    });
  });
  staged_[name] = target;
  return hash;
}

void StateStore::Txn::PublishRelation(const std::string& name) {
  auto it = store_->staged_.find(name);
  if (it == store_->staged_.end())
    Fail(ErrorKind::kRuntime, "{}: state store: relation {} was not staged", store_->dir_, name);
  MDB_txn* t = static_cast<MDB_txn*>(txn_);
  const std::string old = store_->RelationDb(txn_, name);
  MDB_dbi slots = store_->Dbi(txn_, "rel_slot", true);
  MDB_val k = Val(name);
  int rc;
  if (it->second == "rel:" + name) {
    rc = mdb_del(t, slots, &k, nullptr);
    if (rc == MDB_NOTFOUND) rc = 0;
  } else {
    std::string one = "1";
    MDB_val v = Val(one);
    rc = mdb_put(t, slots, &k, &v, 0);
  }
  if (rc) LmdbFail("switch the slot of " + name, rc, store_->dir_);
  if (old != it->second) {
    MDB_dbi dbi = store_->Dbi(txn_, old, false);
    if (dbi != UINT32_MAX && (rc = mdb_drop(t, dbi, 0))) LmdbFail("clear " + old, rc, store_->dir_);
  }
  store_->staged_.erase(it);
}

namespace {
void NodePrefix(uint32_t node, std::string* out) {
  for (int i = 3; i >= 0; --i) out->push_back(static_cast<char>((node >> (8 * i)) & 0xFF));
}

// The content-hash term of a keyed-state entry (XXH64 of the value, seeded with the key's).
uint64_t EntryHash(std::string_view full_key, std::string_view value) {
  return Xxh64(value, Xxh64(full_key, 0x9E3779B97F4A7C15ULL));
}

// A stored keyed-state value: flag 0 + value, or flag 1 + varint key length + key + value.
// Returns false when malformed.
bool SplitStateValue(std::string_view stored, std::string_view* full_key, std::string_view* value) {
  if (stored.empty()) return false;
  if (stored[0] == 0) {
    *value = stored.substr(1);
    return true;
  }
  if (stored[0] != 1) return false;
  const char* p = stored.data() + 1;
  const char* end = stored.data() + stored.size();
  uint64_t n = 0;
  if (!GetVarintChecked(&p, end, &n) || n > static_cast<uint64_t>(end - p)) return false;
  *full_key = std::string_view(p, n);
  *value = std::string_view(p + n, end - p - n);
  return true;
}
}  // namespace

namespace {
// One node's changes in the order of their stored keys (the node's prefix and the key, or for a
// key at LMDB's limit the prefix of that and a hash: RowKey), a key's changes in the order given.
class SortedChanges {
 public:
  SortedChanges(uint32_t node, const StateDelta& delta, size_t max_key) : max_key_(max_key) {
    NodePrefix(node, &prefix_);
    std::vector<const char*> entries;
    entries.reserve(delta.puts() + delta.erases());
    delta.ForEachEntry([&](const char* p) { entries.push_back(p); });
    // A long key sorts by its stored key without the node's prefix (kept aside: they are rare).
    std::unordered_map<size_t, std::string> long_keys;
    for (size_t i = 0; i < entries.size(); ++i) {
      const std::string_view k = StateDelta::Decode(entries[i]).key;
      if (prefix_.size() + k.size() < max_key_) continue;
      std::string full = prefix_, stored;
      full.append(k);
      RowKey(full, max_key_, &stored);
      long_keys.emplace(i, stored.substr(prefix_.size()));
    }
    const std::vector<uint32_t> order = SortedByBytes(entries.size(), [&](size_t i) -> std::string_view {
      const std::string_view k = StateDelta::Decode(entries[i]).key;
      return prefix_.size() + k.size() < max_key_ ? k : std::string_view(long_keys.at(i));
    });
    // Gathered once (independent loads), so the walk below reads them in sequence.
    sorted_.resize(order.size());
    for (size_t n = 0; n < order.size(); ++n) sorted_[n] = entries[order[n]];
    ahead_.emplace(sorted_.size(), 2, Fetch{this});
  }
  SortedChanges(const SortedChanges&) = delete;  // (ahead_ points back at it)
  SortedChanges& operator=(const SortedChanges&) = delete;
  // The next change, false after the last. Each is read far from where the last lay in memory:
  // the entries, then their bytes, are prefetched ahead in bursts.
  bool Next() {
    if (next_ == sorted_.size()) return false;
    ahead_->Before(next_);
    c_ = StateDelta::Decode(sorted_[next_++]);
    full_.assign(prefix_).append(c_.key);
    long_key_ = full_.size() >= max_key_;
    if (long_key_) RowKey(full_, max_key_, &key_);
    return true;
  }
  // The next change's key, without moving on (empty after the last).
  std::string_view PeekKey() const {
    return next_ < sorted_.size() ? StateDelta::Decode(sorted_[next_]).key : std::string_view();
  }
  bool AtEnd() const { return next_ == sorted_.size(); }
  const StateDelta::Change& change() const { return c_; }
  std::string_view full() const { return full_; }                    // node prefix + key
  std::string_view key() const { return long_key_ ? key_ : full_; }  // the stored key
  // The stored value: flag 0 + value, or flag 1 + the long key's length and bytes + value.
  void Encode(std::string* out) const {
    out->assign(1, long_key_ ? 1 : 0);
    if (long_key_) {
      char len[10];
      out->append(len, PutVarint(len, full_.size())).append(full_);
    }
    out->append(c_.value);
  }

 private:
  // Stage 0 of change j: its entry; stage 1: its value's bytes (BurstPrefetch).
  struct Fetch {
    const SortedChanges* changes;
    void operator()(size_t stage, size_t j) const {
      if (stage == 0) return fld::Prefetch(changes->sorted_[j]);
      const StateDelta::Change a = StateDelta::Decode(changes->sorted_[j]);
      fld::Prefetch(a.value.data());
      fld::Prefetch(a.value.data() + a.value.size() - 1);
    }
  };
  size_t max_key_;
  std::string prefix_, full_, key_;
  std::vector<const char*> sorted_;
  std::optional<BurstPrefetch<Fetch>> ahead_;  // over sorted_, made once it is filled
  size_t next_ = 0;
  StateDelta::Change c_{};
  bool long_key_ = false;
};
}  // namespace

uint64_t StateStore::Txn::ApplyState(uint32_t node, const StateDelta& delta) {
  MDB_txn* t = static_cast<MDB_txn*>(txn_);
  MDB_dbi dbi = store_->StateDbi(txn_);
  store_->staged_state_ = -1;  // what was staged no longer follows from the active slot
  const size_t max_key = static_cast<size_t>(mdb_env_get_maxkeysize(static_cast<MDB_env*>(store_->env_)));
  SortedChanges changes(node, delta, max_key);
  Cursor cur(t, dbi, store_->dir_);
  std::string value;
  // Puts go in with MDB_APPEND (no B-tree search) until one is refused: LMDB appends only a key
  // after every stored one, as when nothing is stored at or after this node (its first
  // checkpoint with entries, nodes in increasing order). From the first refusal on, the search.
  bool append = true;
  uint64_t hash = 0;
  while (changes.Next()) {
    const StateDelta::Change& c = changes.change();
    const std::string_view full = changes.full();
    MDB_val k{changes.key().size(), const_cast<char*>(changes.key().data())}, v;
    if (append && c.put) {
      changes.Encode(&value);
      MDB_val nv = Val(value);
      int rc = mdb_cursor_put(cur.c, &k, &nv, MDB_APPEND);
      if (rc == 0) {
        hash += EntryHash(full, c.value);
        continue;
      }
      if (rc != MDB_KEYEXIST) LmdbFail("write operator state", rc, store_->dir_);
      append = false;  // not after every stored key: the general path from here on
    }
    // One B-tree walk per entry: the cursor finds the key, then replaces or deletes in place.
    int rc = mdb_cursor_get(cur.c, &k, &v, MDB_SET);  // MDB_SET leaves k on our bytes (the put needs them)
    const bool found = rc == 0;
    if (found) {
      std::string_view old_key = full, old_value;
      if (!SplitStateValue({static_cast<const char*>(v.mv_data), v.mv_size}, &old_key, &old_value))
        MalformedStateEntry(store_->dir_);
      if (old_key != full) StateKeyCollision(store_->dir_);
      hash -= EntryHash(full, old_value);
    } else if (rc != MDB_NOTFOUND) {
      LmdbFail("read operator state", rc, store_->dir_);
    }
    if (!c.put) {
      if (found && (rc = mdb_cursor_del(cur.c, 0))) LmdbFail("delete operator state", rc, store_->dir_);
      continue;
    }
    changes.Encode(&value);
    MDB_val nv = Val(value);
    if ((rc = mdb_cursor_put(cur.c, &k, &nv, found ? MDB_CURRENT : 0)))
      LmdbFail("write operator state", rc, store_->dir_);
    hash += EntryHash(full, c.value);
  }
  return hash;
}

void StateStore::Txn::DropState() {
  int rc = mdb_drop(static_cast<MDB_txn*>(txn_), store_->StateDbi(txn_), 0);
  if (rc) LmdbFail("clear operator state", rc, store_->dir_);
  store_->staged_state_ = -1;
}

uint64_t StateStore::StateEntries() const {
  return Entries([&](MDB_txn* t) { return StateDbi(t); });
}

uint64_t StateStore::StageState(std::vector<std::pair<int, StateDelta>>* deltas, bool replace, size_t txn_bytes) {
  if (read_only_ || state_dbi_[0] == UINT32_MAX) Fail(ErrorKind::kRuntime, "{}: state store: opened read-only", dir_);
  MDB_env* env = static_cast<MDB_env*>(env_);
  const size_t max_key = static_cast<size_t>(mdb_env_get_maxkeysize(env));
  std::sort(deltas->begin(), deltas->end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  const int source = active_state_.load(), target = 1 - source;
  // The changes, node after node (each node's delta is freed once its changes are taken).
  size_t node_index = 0;
  std::optional<SortedChanges> changes;
  bool have_change = false;
  auto take_change = [&] {
    for (;;) {
      if (changes && changes->Next()) {
        // A key's later changes win: only the last is merged.
        while (!changes->AtEnd() && changes->PeekKey() == changes->change().key) changes->Next();
        have_change = true;
        return;
      }
      if (changes) {
        changes.reset();
        (*deltas)[node_index++].second = StateDelta();
      }
      if (node_index == deltas->size()) {
        have_change = false;
        return;
      }
      const auto& [node, delta] = (*deltas)[node_index];
      changes.emplace(static_cast<uint32_t>(node), delta, max_key);
    }
  };
  uint64_t hash = 0;
  std::string value;
  staged_state_ = -1;  // a staging that fails part way leaves nothing to publish
  take_change();
  GuardSigbus(dir_, [&] {
    auto dbis = [&](MDB_txn*) {
      return std::pair<unsigned, unsigned>(state_dbi_[target], replace ? UINT32_MAX : state_dbi_[source]);
    };
    MergeTransactions(env, dir_, have_change, dbis, [&](MergeCursors& m) {
      // Appends (key, stored value) to the target: the merge gives keys in increasing order, so
      // LMDB refuses one only when two entries have the same stored key.
      auto emit = [&](std::string_view k, std::string_view v) -> size_t {
        MDB_val mk{k.size(), const_cast<char*>(k.data())}, mv{v.size(), const_cast<char*>(v.data())};
        const int rc = mdb_cursor_put(m.out, &mk, &mv, MDB_APPEND);
        if (rc == MDB_KEYEXIST) StateKeyCollision(dir_);
        if (rc) LmdbFail("write operator state", rc, dir_);
        return k.size() + v.size();
      };
      size_t bytes = 0;
      while ((have_change || m.have) && bytes < txn_bytes) {
        std::string_view old_key, old_full, old_value;
        if (m.have) {
          old_key = old_full = m.Key();
          if (!SplitStateValue(m.Value(), &old_full, &old_value)) MalformedStateEntry(dir_);
        }
        const int c = !m.have ? -1 : !have_change ? 1 : changes->key().compare(old_key);
        if (c > 0) {
          bytes += emit(old_key, m.Value());
          hash += EntryHash(old_full, old_value);
          m.Next();
          continue;
        }
        if (c == 0) {
          if (old_full != changes->full()) StateKeyCollision(dir_);
          m.Next();  // replaced or erased
        }
        if (changes->change().put) {
          changes->Encode(&value);
          bytes += emit(changes->key(), value);
          hash += EntryHash(changes->full(), changes->change().value);
        }
        take_change();
      }
      return have_change;
    });
  });
  staged_state_ = target;
  return hash;
}

void StateStore::Txn::PublishState() {
  const int target = store_->staged_state_;
  if (target < 0)
    Fail(ErrorKind::kRuntime, "{}: state store: the operator state was not staged (or was changed since)",
         store_->dir_);
  MDB_txn* t = static_cast<MDB_txn*>(txn_);
  MDB_dbi slots = store_->Dbi(txn_, "state_slot", true);
  MDB_val k{6, const_cast<char*>("active")};
  int rc;
  if (target == 0) {
    rc = mdb_del(t, slots, &k, nullptr);
    if (rc == MDB_NOTFOUND) rc = 0;
  } else {
    MDB_val v{1, const_cast<char*>("1")};
    rc = mdb_put(t, slots, &k, &v, 0);
  }
  if (rc) LmdbFail("switch the slot of the operator state", rc, store_->dir_);
  if ((rc = mdb_drop(t, store_->state_dbi_[1 - target], 0)))
    LmdbFail(std::string("clear ") + kStateDb[1 - target], rc, store_->dir_);
  store_->staged_state_ = -1;
  publish_state_ = target;
}

uint64_t StateStore::ForEachStateEntry(uint32_t node,
                                       const std::function<void(std::string_view, std::string_view)>& f) const {
  return GuardSigbus(dir_, [&] { return ForEachStateEntryUnguarded(node, f); });
}

uint64_t StateStore::ForEachStateEntryUnguarded(
    uint32_t node, const std::function<void(std::string_view, std::string_view)>& f) const {
  MDB_txn* t = nullptr;
  int rc = mdb_txn_begin(static_cast<MDB_env*>(env_), nullptr, MDB_RDONLY, &t);
  if (rc) LmdbFail("begin read transaction", rc, dir_);
  TxnAbort guard{t};  // a read transaction ends by abort, also when f or a check throws
  MDB_dbi dbi = StateDbi(t);
  if (dbi == UINT32_MAX) return 0;
  std::string prefix;
  NodePrefix(node, &prefix);
  const size_t max_key = static_cast<size_t>(mdb_env_get_maxkeysize(static_cast<MDB_env*>(env_)));
  Cursor cur(t, dbi, dir_);
  MDB_val k = Val(prefix), v;
  uint64_t hash = 0;
  std::string rebuilt;
  for (rc = mdb_cursor_get(cur.c, &k, &v, MDB_SET_RANGE); rc == 0; rc = mdb_cursor_get(cur.c, &k, &v, MDB_NEXT)) {
    std::string_view key(static_cast<const char*>(k.mv_data), k.mv_size);
    if (key.size() < 4 || key.substr(0, 4) != prefix) break;
    std::string_view full = key, value;
    bool ok = SplitStateValue({static_cast<const char*>(v.mv_data), v.mv_size}, &full, &value);
    if (ok && full.data() != key.data()) {
      RowKey(full, max_key, &rebuilt);
      ok = rebuilt == key && full.substr(0, 4) == prefix;
    }
    if (!ok) MalformedStateEntry(dir_);
    hash += EntryHash(full, value);
    f(full.substr(4), value);
  }
  if (rc != 0 && rc != MDB_NOTFOUND) LmdbFail("read operator state", rc, dir_);
  return hash;
}

namespace {
// A StateLookup over one node's entries: a read transaction kept open (reset and renewed by
// Refresh), so a lookup costs one B-tree descent.
class StoreLookup : public StateLookup {
 public:
  StoreLookup(MDB_env* env, const unsigned* dbi, const std::atomic<int>* active, uint32_t node, std::string dir)
      : env_(env),
        dbi_(dbi),
        active_(active),
        dir_(std::move(dir)),
        max_key_(static_cast<size_t>(mdb_env_get_maxkeysize(env))) {
    NodePrefix(node, &prefix_);
  }
  ~StoreLookup() override {
    if (txn_) mdb_txn_abort(txn_);
  }
  bool Get(std::string_view key, std::string* value) override {
    if (!txn_ || stale_) {
      // The slot that holds the state in this transaction's snapshot: the store switches slots
      // (Commit) after the staged one is complete and before the switch commits. So when the
      // slot read before the snapshot and after it are the same, the snapshot is before the
      // switch (old slot, still whole) or after the staging (new slot, whole); else retry.
      for (;;) {
        const int before = active_->load();
        if (!txn_) {
          if (int rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn_)) {
            txn_ = nullptr;
            LmdbFail("begin read transaction", rc, dir_);
          }
        } else if (int rc = mdb_txn_renew(txn_)) {
          LmdbFail("renew read transaction", rc, dir_);
        }
        if (active_->load() == before) {
          slot_ = before;
          break;
        }
        mdb_txn_reset(txn_);
      }
    }
    stale_ = false;
    full_.assign(prefix_).append(key);
    const bool long_key = full_.size() >= max_key_;
    if (long_key) RowKey(full_, max_key_, &stored_key_);
    const std::string& k = long_key ? stored_key_ : full_;
    return GuardSigbus(dir_, [&] {
      MDB_val mk = Val(k), mv;
      const int rc = mdb_get(txn_, dbi_[slot_], &mk, &mv);
      if (rc == MDB_NOTFOUND) return false;
      if (rc) LmdbFail("read operator state", rc, dir_);
      std::string_view stored_full = full_, v;
      if (!SplitStateValue({static_cast<const char*>(mv.mv_data), mv.mv_size}, &stored_full, &v))
        MalformedStateEntry(dir_);
      if (stored_full != full_) return false;  // another key with the same long-key hash: ours is not stored
      value->assign(v);
      return true;
    });
  }
  void Refresh() override {
    if (txn_ && !stale_) mdb_txn_reset(txn_);
    stale_ = txn_ != nullptr;
  }

 private:
  MDB_env* env_;
  const unsigned* dbi_;             // the store's two slots
  const std::atomic<int>* active_;  // the store's active slot
  int slot_ = 0;                    // the slot this transaction reads
  std::string dir_;
  size_t max_key_;
  std::string prefix_, full_, stored_key_;
  MDB_txn* txn_ = nullptr;
  bool stale_ = false;  // reset: renewed at the next Get
};
}  // namespace

std::unique_ptr<StateLookup> StateStore::OpenLookup(uint32_t node) {
  if (state_dbi_[0] == UINT32_MAX)
    Fail(ErrorKind::kRuntime, "{}: state store: lookups need a store opened for writing", dir_);
  return std::make_unique<StoreLookup>(static_cast<MDB_env*>(env_), state_dbi_, &active_state_, node, dir_);
}

void StateStore::Txn::Commit() {
  MDB_txn* t = static_cast<MDB_txn*>(txn_);
  txn_ = nullptr;  // a failed commit frees the transaction too
  // Lookups switch slots before the commit (see StoreLookup): a failed commit ends the process's
  // writes to this store anyway.
  if (publish_state_ >= 0) store_->active_state_.store(publish_state_);
  int rc = mdb_txn_commit(t);
  if (rc) LmdbFail("commit", rc, store_->dir_);
}

std::optional<std::string> StateStore::GetMetaUnguarded(const std::string& key) const {
  MDB_txn* t = nullptr;
  int rc = mdb_txn_begin(static_cast<MDB_env*>(env_), nullptr, MDB_RDONLY, &t);
  if (rc) LmdbFail("begin read transaction", rc, dir_);
  TxnAbort guard{t};
  std::optional<std::string> out;
  MDB_dbi dbi = Dbi(t, "meta", false);
  if (dbi != UINT32_MAX) {
    MDB_val k = Val(key), v;
    if (mdb_get(t, dbi, &k, &v) == 0) out = std::string(static_cast<const char*>(v.mv_data), v.mv_size);
  }
  return out;
}

std::map<std::string, std::string> StateStore::AllMetaUnguarded() const {
  std::map<std::string, std::string> out;
  MDB_txn* t = nullptr;
  int rc = mdb_txn_begin(static_cast<MDB_env*>(env_), nullptr, MDB_RDONLY, &t);
  if (rc) LmdbFail("begin read transaction", rc, dir_);
  TxnAbort guard{t};
  MDB_dbi dbi = Dbi(t, "meta", false);
  if (dbi != UINT32_MAX) {
    Cursor cur(t, dbi, dir_);
    MDB_val k, v;
    while (mdb_cursor_get(cur.c, &k, &v, MDB_NEXT) == 0)
      out[std::string(static_cast<const char*>(k.mv_data), k.mv_size)] =
          std::string(static_cast<const char*>(v.mv_data), v.mv_size);
  }
  return out;
}

std::optional<Batch> StateStore::ReadRelationUnguarded(const std::string& name, const std::vector<PhysType>& types,
                                                       uint64_t* content_hash, bool decode) const {
  MDB_txn* t = nullptr;
  int rc = mdb_txn_begin(static_cast<MDB_env*>(env_), nullptr, MDB_RDONLY, &t);
  if (rc) LmdbFail("begin read transaction", rc, dir_);
  TxnAbort guard{t};
  MDB_dbi dbi = Dbi(t, RelationDb(t, name), false);
  if (dbi == UINT32_MAX) return std::nullopt;
  BatchBuilder b(decode ? types : std::vector<PhysType>{});
  uint64_t hash = 0;
  const size_t max_key = static_cast<size_t>(mdb_env_get_maxkeysize(static_cast<MDB_env*>(env_)));
  Cursor cur(t, dbi, dir_);
  MDB_val k, v;
  std::string key;
  while ((rc = mdb_cursor_get(cur.c, &k, &v, MDB_NEXT)) == 0) {
    std::string_view row(static_cast<const char*>(k.mv_data), k.mv_size);
    if (v.mv_size > 8) row = std::string_view(static_cast<const char*>(v.mv_data) + 8, v.mv_size - 8);  // a long row
    if (v.mv_size > 8) RowKey(row, max_key, &key);
    if (v.mv_size < 8 || (v.mv_size > 8 && key != std::string_view(static_cast<const char*>(k.mv_data), k.mv_size)) ||
        !WellFormedRow(row, types)) {
      Fail(ErrorKind::kCorruption,
           "{}: state store: a stored row of {} is malformed (the file is damaged); refusing to use it (nothing was "
           "deleted; `fld run --reset` starts over)",
           dir_, name);
    }
    int64_t w;
    std::memcpy(&w, v.mv_data, 8);
    if (content_hash) hash += RowHash(row) * static_cast<uint64_t>(w);
    if (!decode) continue;
    DecodeRowInto(row, &b, 0);
    b.AddWeight(w);
  }
  if (rc != MDB_NOTFOUND) LmdbFail("read " + name, rc, dir_);
  if (content_hash) *content_hash = hash;
  if (!decode) return Batch{};
  return b.Finish();
}

uint64_t StateStore::SizeBytes() const {
  struct stat st;
  if (stat((dir_ + "/data.mdb").c_str(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

uint32_t MetaChecksum(const std::map<std::string, std::string>& meta) {
  uint32_t crc = 0;
  for (const auto& [k, v] : meta) {
    if (k == "meta_crc") continue;
    uint64_t n = k.size();
    crc = Crc32c(crc, &n, 8);
    crc = Crc32c(crc, k.data(), k.size());
    n = v.size();
    crc = Crc32c(crc, &n, 8);
    crc = Crc32c(crc, v.data(), v.size());
  }
  return crc;
}

}  // namespace fld
