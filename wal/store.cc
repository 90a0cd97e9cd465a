#include "wal/store.h"

#include <lmdb.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/common/error.h"

namespace fld {

namespace {

[[noreturn]] void LmdbFail(const std::string& what, int rc, const std::string& dir) {
  ErrorKind kind = ErrorKind::kIo;
  if (rc == MDB_CORRUPTED || rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH || rc == MDB_PAGE_NOTFOUND)
    kind = ErrorKind::kCorruption;
  Fail(kind, "{}: state store: {} failed: {}", dir, what, mdb_strerror(rc));
}

constexpr size_t kMapSize = size_t{1} << 40;  // address space only; the file grows as needed

MDB_val Val(const std::string& s) { return MDB_val{s.size(), const_cast<char*>(s.data())}; }

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
  mdb_env_set_maxreaders(env, 126);
  unsigned flags = MDB_NOTLS;
  if (read_only) flags |= MDB_RDONLY;
  rc = mdb_env_open(env, dir.c_str(), flags, 0644);
  if (rc) LmdbFail("open", rc, dir);
  return s;
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

std::unique_ptr<StateStore::Txn> StateStore::Begin() { return std::unique_ptr<Txn>(new Txn(this)); }

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
  MDB_dbi dbi = store_->Dbi(txn_, "rel:" + name, true);
  int rc = mdb_drop(t, dbi, 0);
  if (rc) LmdbFail("clear " + name, rc, store_->dir_);
  ApplyDelta(name, contents);
}

void StateStore::Txn::ApplyDelta(const std::string& name, const Batch& delta) {
  MDB_txn* t = static_cast<MDB_txn*>(txn_);
  MDB_dbi dbi = store_->Dbi(txn_, "rel:" + name, true);
  std::string key;
  for (size_t r = 0; r < delta.size(); ++r) {
    key.clear();
    EncodeRow(&key, delta, r);
    MDB_val k = Val(key), v;
    int64_t w = delta.weights[r];
    int rc = mdb_get(t, dbi, &k, &v);
    if (rc == 0) {
      int64_t old;
      std::memcpy(&old, v.mv_data, 8);
      w += old;
    } else if (rc != MDB_NOTFOUND) {
      LmdbFail("read " + name, rc, store_->dir_);
    }
    if (w == 0) {
      if (rc == 0 && (rc = mdb_del(t, dbi, &k, nullptr))) LmdbFail("delete from " + name, rc, store_->dir_);
      continue;
    }
    MDB_val nv{8, &w};
    if ((rc = mdb_put(t, dbi, &k, &nv, 0))) LmdbFail("write " + name, rc, store_->dir_);
  }
}

void StateStore::Txn::Commit() {
  MDB_txn* t = static_cast<MDB_txn*>(txn_);
  txn_ = nullptr;  // a failed commit frees the transaction too
  int rc = mdb_txn_commit(t);
  if (rc) LmdbFail("commit", rc, store_->dir_);
}

std::optional<std::string> StateStore::GetMeta(const std::string& key) const {
  MDB_txn* t = nullptr;
  int rc = mdb_txn_begin(static_cast<MDB_env*>(env_), nullptr, MDB_RDONLY, &t);
  if (rc) LmdbFail("begin read transaction", rc, dir_);
  std::optional<std::string> out;
  MDB_dbi dbi = Dbi(t, "meta", false);
  if (dbi != UINT32_MAX) {
    MDB_val k = Val(key), v;
    if (mdb_get(t, dbi, &k, &v) == 0) out = std::string(static_cast<const char*>(v.mv_data), v.mv_size);
  }
  mdb_txn_abort(t);
  return out;
}

std::map<std::string, std::string> StateStore::AllMeta() const {
  std::map<std::string, std::string> out;
  MDB_txn* t = nullptr;
  int rc = mdb_txn_begin(static_cast<MDB_env*>(env_), nullptr, MDB_RDONLY, &t);
  if (rc) LmdbFail("begin read transaction", rc, dir_);
  MDB_dbi dbi = Dbi(t, "meta", false);
  if (dbi != UINT32_MAX) {
    MDB_cursor* c;
    mdb_cursor_open(t, dbi, &c);
    MDB_val k, v;
    while (mdb_cursor_get(c, &k, &v, MDB_NEXT) == 0)
      out[std::string(static_cast<const char*>(k.mv_data), k.mv_size)] =
          std::string(static_cast<const char*>(v.mv_data), v.mv_size);
    mdb_cursor_close(c);
  }
  mdb_txn_abort(t);
  return out;
}

std::optional<Batch> StateStore::ReadRelation(const std::string& name, const std::vector<PhysType>& types) const {
  MDB_txn* t = nullptr;
  int rc = mdb_txn_begin(static_cast<MDB_env*>(env_), nullptr, MDB_RDONLY, &t);
  if (rc) LmdbFail("begin read transaction", rc, dir_);
  MDB_dbi dbi = Dbi(t, "rel:" + name, false);
  if (dbi == UINT32_MAX) {
    mdb_txn_abort(t);
    return std::nullopt;
  }
  BatchBuilder b(types);
  MDB_cursor* c;
  mdb_cursor_open(t, dbi, &c);
  MDB_val k, v;
  while ((rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) == 0) {
    std::string_view row(static_cast<const char*>(k.mv_data), k.mv_size);
    int64_t w;
    std::memcpy(&w, v.mv_data, 8);
    DecodeRowInto(row, &b, 0);
    b.AddWeight(w);
  }
  mdb_cursor_close(c);
  mdb_txn_abort(t);
  if (rc != MDB_NOTFOUND) LmdbFail("read " + name, rc, dir_);
  return b.Finish();
}

uint64_t StateStore::SizeBytes() const {
  struct stat st;
  if (stat((dir_ + "/data.mdb").c_str(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

}  // namespace fld
