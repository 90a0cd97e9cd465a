#include "pipelines/controller.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

#include "core/common/error.h"
#include "wal/store.h"

namespace fld {

RunSummary Controller::Run(const std::atomic<bool>* stop_requested) {
  Circuit& c = p_->circuit();
  RunSummary s;
  auto t0 = std::chrono::steady_clock::now();
  bool first = true;
  try {
    for (;;) {
      if (stop_requested && stop_requested->load()) break;
      bool any = false, all_ended = true;
      for (auto& in : p_->inputs()) {
        if (in.connector->AtEnd()) continue;
        Batch b = in.connector->Read();
        if (!b.empty()) {
          s.records += b.size();
          c.Push(in.relation, std::move(b));
          any = true;
        }
        if (!in.connector->AtEnd()) all_ended = false;
      }
      if (any || first) {
        c.Step();
        ++s.steps;
        first = false;
        for (auto& out : p_->outputs()) out.connector->Write(c.Delta(out.relation), c.steps());
      }
      if (all_ended) {
        s.completed = true;
        break;
      }
      if (!any) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  } catch (const Error& e) {
    // A bad record or a failed connector stops the run; everything accepted before it has been
    // computed, so it is written out and stored before the error is reported.
    if (e.kind() == ErrorKind::kRuntime) {
      for (auto& out : p_->outputs()) out.connector->Flush(true);
      s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      StoreState(s);
    }
    throw;
  }
  for (auto& out : p_->outputs()) out.connector->Flush(true);
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  StoreState(s);
  return s;
}

void Controller::StoreState(const RunSummary& s) {
  const Circuit& c = p_->circuit();
  auto store = StateStore::Open(p_->spec().storage_path + "/state", false, true);
  auto txn = store->Begin();
  for (size_t r = 0; r < c.relations().size(); ++r) {
    const Relation& rel = c.relations()[r];
    if (rel.materialized) txn->PutRelation(rel.name, c.Contents(static_cast<int>(r)));
  }
  txn->PutMeta("name", p_->spec().name);
  txn->PutMeta("fingerprint", p_->fingerprint());
  txn->PutMeta("step", std::to_string(c.steps()));
  txn->PutMeta("total_processed_records", std::to_string(s.records));
  txn->PutMeta("pipeline_complete", s.completed ? "true" : "false");
  txn->PutMeta("state", s.completed ? "COMPLETED" : "SUSPENDED");
  txn->Commit();
}

}  // namespace fld
