// The state store: an LMDB environment in <storage>/state/ that holds the pipeline's durable
// state. This is the only module that includes <lmdb.h>.
//
// Layout (named databases):
//   "meta"          key (text) -> value (bytes): pipeline name, program fingerprint, step,
//                   completion flag, checkpoint bookkeeping
//   "state"         the operators' keyed state (incremental checkpoints): key = the operator's
//                   node number (4 bytes, big-endian) + the entry's key -> a flag byte (0, or
//                   1 for a key at LMDB's limit: then the key's length and bytes follow) + the
//                   entry's value. A key at the limit is stored as its prefix + a 64-bit hash,
//                   as long rows are below.
//   "state1"        the keyed state's second slot, same layout: a large change of the state is
//                   merged there (StageState) over transactions of bounded size, then switched
//                   to, as a relation's is.
//   "state_slot"    "active" -> "1" while "state1" holds the keyed state (absent: "state").
//   "rel:<name>"    one per materialized table/view: row encoding (core/zset/batch.h) ->
//                   weight (int64, 8 bytes little-endian). LMDB keys are at most
//                   mdb_env_get_maxkeysize() bytes (511), so a row whose encoding is that long or
//                   longer is stored under a key of exactly that size (the encoding's first bytes,
//                   then a 64-bit hash of the whole encoding) -> weight followed by the encoding;
//                   a hash collision between two such rows is reported, never merged.
//   "rel1:<name>"   the relation's second slot, same layout: a large change is written there
//                   (StageRelation) while readers keep seeing the first, then switched to.
//   "rel_slot"      relation name -> "1" while "rel1:<name>" holds the relation (absent: "rel:").
// Writes happen in one write transaction (Commit), so a reader (fld query, fld status) always
// sees a whole step: LMDB readers never block the writer and never see a half transaction.
// A staged relation or keyed state is the one exception to "one transaction": its rows or
// entries go into the unused slot over several transactions of bounded size (LMDB keeps a
// transaction's dirty pages in memory until it commits), and the transaction that switches the
// slot is the checkpoint's, so readers and a resume still see the change at the checkpoint and
// nowhere else; a crash before the switch leaves rows in the unused slot, which the next Open
// for writing (or the next staging) clears. A write in place makes what was staged
// unpublishable.
// Durability: LMDB's default synchronous commit (never MDB_NOSYNC / MDB_NOMETASYNC); a failed
// commit is an I/O error and the store must not be written again by this process.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/circuit/operator.h"
#include "core/zset/batch.h"
#include "wal/spill.h"

namespace fld {

class StateStore : public StateSource {
 public:
  // Opens (creating when `create`) the store under `dir` (the folder <storage>/state).
  // read_only opens without taking LMDB's writer lock.
  static std::unique_ptr<StateStore> Open(const std::string& dir, bool read_only, bool create);
  static bool Exists(const std::string& dir);
  ~StateStore() override;

  // A write transaction: every change becomes visible at Commit, together.
  class Txn {
   public:
    ~Txn();
    void PutMeta(const std::string& key, const std::string& value);
    // Replaces the whole contents of relation `name`.
    void PutRelation(const std::string& name, const Batch& contents);
    // Applies a change batch to relation `name` (adds weights; rows reaching 0 are removed).
    // Returns the change of the relation's content hash (see ReadRelation).
    uint64_t ApplyDelta(const std::string& name, const Batch& delta);
    // The same for rows from a stream (a consolidation left in place: ConsolidatedPull; nothing
    // is gathered into a batch first). Rows in encoding order go into an empty relation with
    // MDB_APPEND; any order is accepted.
    uint64_t ApplyDelta(const std::string& name, const RowPull& rows);
    // Applies the changes (puts; erases, of keys that may be absent) to the keyed state of
    // operator `node`, in the order of their stored keys (so pages fill in order; an erase stays
    // before a later put of its key). Returns the change of the state's content hash (see ForEachStateEntry).
    // When nothing is stored for this node or a later one (nodes applied in increasing order,
    // a first checkpoint or after DropState), the puts are appended (no B-tree search).
    uint64_t ApplyState(uint32_t node, const StateDelta& changes);
    // Makes the rows StageRelation wrote the contents of relation `name` (its other slot is
    // emptied).
    void PublishRelation(const std::string& name);
    // Removes every stored keyed-state entry.
    void DropState();
    // Makes the entries StageState wrote the keyed state (its other slot is emptied). Lookups
    // read the new slot from this transaction's Commit on.
    void PublishState();
    void Commit();

   private:
    friend class StateStore;
    explicit Txn(StateStore* s);
    StateStore* store_;
    void* txn_ = nullptr;
    int publish_state_ = -1;  // the slot PublishState switched to
  };
  std::unique_ptr<Txn> Begin();

  // Writes relation `name` with a change merged in (`changes`: rows in encoding order with
  // distinct encodings, as ConsolidatedPull or MergeSorted give them) into the relation's unused
  // slot, in write transactions of about `txn_bytes` of rows each: the stored rows are read in
  // order and the result appended, so each page is written once, full. Nothing changes for
  // readers until a Txn publishes it (PublishRelation); staging again before that starts over.
  // Call it with no Txn open (LMDB has one writer). Returns the change of the content hash.
  // With `replace`, `changes` are the relation's whole new contents (weights not 0): the stored
  // rows are not read, and the content hash returned is the new contents' whole hash.
  static constexpr size_t kStageTxnBytes = size_t{32} << 20;
  uint64_t StageRelation(const std::string& name, const RowPull& changes, size_t txn_bytes = kStageTxnBytes,
                         bool replace = false);
  uint64_t StageRelation(const std::string& name, const Batch& delta, size_t txn_bytes = kStageTxnBytes,
                         bool replace = false);
  // Rows stored in relation `name` (0 when absent).
  uint64_t RelationRows(const std::string& name) const;
  // The keyed state with every node's changes in `deltas` applied, written into the state's
  // unused slot as StageRelation does for a relation (the stored entries, unless `replace`,
  // merged with the changes in key order and appended), for PublishState. Each delta is emptied
  // once its changes are written. Call it with no Txn open. Returns the content hash of the
  // whole staged state (see ForEachStateEntry).
  // Smaller transactions than a relation's: the entries are smaller, and the pages a
  // transaction dirties add to what the operators and their gathered changes already hold (the
  // first checkpoint of a 1.9M-entry state: 256 MB peak in one transaction, 236 MB with 32 MB
  // ones, 226 MB with these).
  static constexpr size_t kStageStateTxnBytes = size_t{8} << 20;
  uint64_t StageState(std::vector<std::pair<int, StateDelta>>* deltas, bool replace,
                      size_t txn_bytes = kStageStateTxnBytes);
  // Keyed-state entries stored, over all operators.
  uint64_t StateEntries() const;

  // Reads (each in its own short read transaction).
  std::optional<std::string> GetMeta(const std::string& key) const;
  std::map<std::string, std::string> AllMeta() const;
  // Contents of a stored relation, decoded into columns of `types`; nullopt when absent.
  // With `content_hash`, also the relation's content hash: the sum over rows of a 64-bit hash of
  // the row's encoding times its weight. It is order-independent, so a writer keeps it up to date
  // from ApplyDelta's results and a reader checks the stored rows against it.
  std::optional<Batch> ReadRelation(const std::string& name, const std::vector<PhysType>& types,
                                    uint64_t* content_hash = nullptr) const;
  // The same checks and content hash without decoding the rows (a resume checks the stored
  // relations this way: nothing of them is loaded into memory); nullopt when absent.
  std::optional<uint64_t> CheckRelation(const std::string& name, const std::vector<PhysType>& types) const;
  // f(key, value) for every keyed-state entry of operator `node`, in key order (long keys in
  // the order of their stored prefix). Returns the content hash of those entries: the sum of a
  // 64-bit hash of each (key, value).
  uint64_t ForEachStateEntry(uint32_t node,
                             const std::function<void(std::string_view key, std::string_view value)>& f) const;
  // Point reads of operator `node`'s entries (StateSource): each lookup keeps a read
  // transaction on the last committed checkpoint until its Refresh. Only on a store opened for
  // writing; a lookup may run on any thread, one thread at a time.
  std::unique_ptr<StateLookup> OpenLookup(uint32_t node) override;
  // Size of the data file in bytes.
  uint64_t SizeBytes() const;

 private:
  StateStore() = default;
  unsigned Dbi(void* txn, const std::string& name, bool create) const;
  // The database that holds relation `name` as of transaction `txn` ("rel:" or "rel1:" + name).
  std::string RelationDb(void* txn, const std::string& name) const;
  // The slot (0: "state", 1: "state1") that holds the keyed state as of `txn`, and its database
  // (UINT32_MAX when a read-only store has none).
  int StateSlot(void* txn) const;
  unsigned StateDbi(void* txn) const;
  // Entries in the database db_of(read transaction) names (0 when it is UINT32_MAX).
  template <typename DbOf>
  uint64_t Entries(DbOf db_of) const;
  // Empties the unused slots that hold rows: a staging the process did not live to publish.
  void ClearUnusedSlots(void* txn);
  std::optional<std::string> GetMetaUnguarded(const std::string& key) const;
  std::map<std::string, std::string> AllMetaUnguarded() const;
  uint64_t ForEachStateEntryUnguarded(uint32_t node,
                                      const std::function<void(std::string_view, std::string_view)>& f) const;
  std::optional<Batch> ReadRelationUnguarded(const std::string& name, const std::vector<PhysType>& types,
                                             uint64_t* content_hash, bool decode) const;
  std::string dir_;
  void* env_ = nullptr;
  bool read_only_ = false;
  // The keyed state's two slots, opened with a writable store, and the one that holds it.
  unsigned state_dbi_[2] = {UINT32_MAX, UINT32_MAX};
  std::atomic<int> active_state_{0};
  int staged_state_ = -1;                      // the slot StageState filled, or -1
  std::map<std::string, std::string> staged_;  // relation -> the database StageRelation filled
};

// The checksum a checkpoint stores under the meta key "meta_crc": CRC32C over every other meta
// key and value (each preceded by its 64-bit length), in key order. A reader that finds it
// missing or different has no valid checkpoint.
uint32_t MetaChecksum(const std::map<std::string, std::string>& meta);

}  // namespace fld
