// A circuit: the dataflow graph of incremental operators that evaluates a SQL program.
//
// Nodes are added in topological order (an operator's inputs exist before it), so a step runs
// them in id order. Tables are input nodes fed by Push(); every view is a node whose output is
// its change per step; a materialized table or view also has an integrate node holding its
// contents. The circuit is single-threaded: Push/Step/Contents are called by one thread (the
// controller); operators may use the circuit's ThreadPool inside a step.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/circuit/operator.h"
#include "core/common/thread_pool.h"
#include "core/expr/expr.h"
#include "core/sql/ast.h"
#include "core/types/schema.h"

namespace fld {

class IntegrateOp;

struct Relation {
  enum class Kind : uint8_t { kTable, kView };
  Kind kind = Kind::kTable;
  std::string name;  // as declared
  Schema schema;
  int node = -1;            // the node whose output is this relation's change per step
  int input_node = -1;      // tables: the source node that Push() feeds
  int integrate_node = -1;  // materialized: the node holding the contents
  bool materialized = false;
  bool local = false;
  // Tables declared WITH ('append_only' = 'true'): they only receive inserts, and Push refuses
  // a change with a negative weight.
  bool append_only = false;
  std::vector<int> primary_key;           // tables: column indices
  std::vector<sql::Property> properties;  // WITH (...) as written
  sql::Pos pos;                           // of the CREATE statement
  std::string query_text;                 // views: the query's SQL text
};

class Circuit {
 public:
  explicit Circuit(ThreadPool* pool = nullptr) : pool_(pool) {}

  // ---- building (the planner) ----
  int AddNode(std::unique_ptr<Operator> op, std::vector<int> inputs, std::vector<PhysType> types);
  int AddRelation(Relation r);
  // A function declared without a body that the program calls: the pipeline must give it an
  // implementation (ExternalFunction::impl) before the first step.
  void AddExternalFunction(std::shared_ptr<ExternalFunction> f) { external_functions_.push_back(std::move(f)); }
  const std::vector<std::shared_ptr<ExternalFunction>>& external_functions() const { return external_functions_; }
  Relation& relation(int i) { return relations_[i]; }
  ThreadPool* pool() const { return pool_; }
  const std::vector<PhysType>& node_types(int id) const { return nodes_[id].types; }
  size_t num_nodes() const { return nodes_.size(); }
  Operator& op(int id) { return *nodes_[id].op; }
  const Operator& op(int id) const { return *nodes_[id].op; }
  const std::vector<int>& node_inputs(int id) const { return nodes_[id].inputs; }
  // Whether the node's output only ever inserts rows: an append-only table's source node
  // (MarkInsertsOnly), or a node whose operator PreservesInserts and whose inputs all insert
  // only. Operators whose state can then be smaller (MIN/MAX keep only the extreme) ask it.
  bool InsertsOnly(int id) const { return nodes_[id].inserts_only; }
  void MarkInsertsOnly(int id) { nodes_[id].inserts_only = true; }
  // The clock node (NOW(), core/operators/temporal_filter.h), added at the first call.
  int ClockNode();

  // ---- running ----
  const std::vector<Relation>& relations() const { return relations_; }
  // Index of the relation named `name` (case-insensitive), or -1.
  int FindRelation(std::string_view name) const;
  // Queues a change for a table; it enters the circuit at the next Step(). A deletion (negative
  // weight) for an append-only table is an error (kRuntime) and queues nothing.
  void Push(int table, Batch delta);
  // Whether the program reads NOW(): the caller then sets the time of every step with SetNow
  // (microseconds since the epoch, UTC; a step without one reads the system clock).
  bool UsesNow() const { return clock_node_ >= 0; }
  void SetNow(int64_t micros);
  // The time of the last step, when the program reads NOW() and a step ran.
  std::optional<int64_t> Now() const;
  // Runs one step: every queued change goes in, every view's change comes out.
  void Step();
  uint64_t steps() const { return steps_; }
  // The change a relation had in the last step.
  const Batch& Delta(int relation) const { return nodes_[relations_[relation].node].output; }
  // Contents of a materialized relation (consolidated, sorted by row encoding).
  Batch Contents(int relation) const;
  // The output of any node in the last step (for the planner's one-step ad-hoc queries).
  const Batch& NodeOutput(int node) const { return nodes_[node].output; }

  // ---- state ----
  // All operator state (for checkpoints): restoring it into a circuit compiled from the same
  // program continues exactly where the saved one stood.
  // The contents of materialized relations are not part of it (the state store keeps them as
  // relations; restore them with LoadContents).
  void SaveState(std::string* out) const;
  void RestoreState(std::string_view in);
  // Incremental form (see operator.h): `out` gets the whole state of operators without keyed
  // state and the headers of those with it, `deltas` the keyed entries changed since the
  // previous SaveChanges (all of them the first time), as (node index, changes).
  // TrackChanges, once before the first step, makes operators remember erased keys.
  void TrackChanges();
  void SaveChanges(std::string* out, std::vector<std::pair<int, StateDelta>>* deltas);
  // Restores SaveChanges's `in`; entries(node, put) must call put(key, value) for every entry
  // stored for that node, in key order. With `lazy`, the operators that can be backed by the
  // store (Operator::CanBackState) load nothing: entries gets a put that ignores them (the
  // caller still reads them to check the checksum) and the operators read them from `lazy`
  // when a step needs them.
  using EntrySink = std::function<void(std::string_view key, std::string_view value)>;
  void RestoreKeyed(std::string_view in, const std::function<void(int node, const EntrySink& put)>& entries,
                    StateSource* lazy = nullptr);
  // State beyond memory (operator.h): attaches `source` to every operator that can be backed by
  // it; StateCommitted after each committed checkpoint that saved changes (with `evict`, the
  // operators drop the entries that are in the store and unchanged since from memory);
  // StateMemoryBytes sums what those operators hold.
  void BackState(StateSource* source);
  void StateCommitted(bool evict);
  size_t StateMemoryBytes() const;
  void LoadContents(int relation, const Batch& contents);
  // For a caller that keeps materialized relations' contents itself (a pipeline: its state store
  // holds them and `fld query` reads them there): the circuit then keeps no copy; Contents and
  // LoadContents refuse.
  void ContentsKeptOutside();
  // Rows dropped so far for lying behind a LATENESS waterline (core/operators/lateness.h).
  uint64_t LateRecords() const;
  // Text form of the operator graph that computes `relation` (for `fld check`).
  std::string Explain(int relation) const;

 private:
  struct Node {
    std::unique_ptr<Operator> op;
    std::vector<int> inputs;
    std::vector<PhysType> types;
    Batch output;
    bool inserts_only = false;
  };
  bool IsIntegrate(const Node& n) const;
  IntegrateOp* ContentsOf(int relation) const;  // fails unless materialized and kept here
  bool BacksState(const Node& n) const;         // a keyed operator that can be backed by the store
  // The saved-state frame both forms share: the step count, the node count, then one string per
  // node, which node(i, ...) writes or reads for each stateful node (integrates excluded).
  void WriteNodes(std::string* out, const std::function<void(size_t, StateWriter&)>& node) const;
  void ReadNodes(std::string_view in, const std::function<void(size_t, StateReader&)>& node);
  ThreadPool* pool_;
  std::vector<Node> nodes_;
  std::vector<Relation> relations_;
  std::vector<std::vector<Batch>> pending_;  // per relation (tables only)
  std::vector<std::shared_ptr<ExternalFunction>> external_functions_;
  uint64_t steps_ = 0;
  int clock_node_ = -1;
  bool now_set_ = false;
};

}  // namespace fld
