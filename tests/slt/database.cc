#include "tests/slt/database.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_set>

#include "core/common/error.h"
#include "core/expr/expr.h"
#include "core/plan/planner.h"

namespace fld::slt {

namespace {

// Runs f, turning its exceptions into StageErrors: fld::Error of kind kRuntime is a run-time
// error whatever the stage; any other fld::Error belongs to `stage`; anything else is internal.
template <typename F>
auto At(Stage stage, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const StageError&) {
    throw;
  } catch (const fld::Error& e) {
    Stage s = stage;
    if (e.kind() == ErrorKind::kRuntime && stage != Stage::kParse) s = Stage::kRun;
    throw StageError(s, e.what());
  } catch (const std::exception& e) {
    throw StageError(Stage::kInternal, std::string("internal error: ") + e.what());
  }
}

[[noreturn]] void PlanError(const std::string& msg) {
  throw StageError(Stage::kPlan, msg);
}

// The rows of b, one per copy (weights expanded), all with weight 1. Weights must be positive.
Batch Expand(const Batch& b) {
  std::vector<uint32_t> sel;
  for (size_t r = 0; r < b.size(); ++r)
    for (int64_t w = 0; w < b.weights[r]; ++w) sel.push_back(static_cast<uint32_t>(r));
  Batch out = Gather(b, sel);
  out.weights.assign(sel.size(), 1);
  return out;
}

Batch Slice(const Batch& b, size_t begin, size_t end, int64_t weight) {
  std::vector<uint32_t> sel;
  for (size_t r = begin; r < end; ++r) sel.push_back(static_cast<uint32_t>(r));
  Batch out = Gather(b, sel);
  out.weights.assign(sel.size(), weight);
  return out;
}

Batch Pick(const Batch& b, std::vector<uint32_t> sel, int64_t weight) {
  Batch out = Gather(b, sel);
  out.weights.assign(sel.size(), weight);
  return out;
}

Batch Cat(const Batch& a, const Batch& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  std::vector<Batch> parts{a, b};
  return Concat(parts);
}

std::string RowEncoding(const Batch& b, size_t r) {
  std::string key;
  EncodeRow(&key, b, r);
  return key;
}

// ---- a tiny scanner for UPDATE, which the SQL parser does not know ----

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Positions in s that are at parenthesis depth 0 and outside quotes, calling f(i) for each;
// f returns true to stop.
template <typename F>
void ScanTopLevel(std::string_view s, F&& f) {
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\'' || c == '"') {
      for (++i; i < s.size(); ++i) {
        if (s[i] == c) {
          if (i + 1 < s.size() && s[i + 1] == c) {
            ++i;
            continue;
          }
          break;
        }
      }
      continue;
    }
    if (c == '(')
      ++depth;
    else if (c == ')')
      --depth;
    else if (depth == 0 && f(i))
      return;
  }
}

// Offset of the keyword `kw` (case-insensitive, whole word) at the top level of s, or npos.
size_t FindKeyword(std::string_view s, std::string_view kw) {
  size_t found = std::string_view::npos;
  ScanTopLevel(s, [&](size_t i) {
    if (i + kw.size() > s.size()) return false;
    if (i > 0 && IsWordChar(s[i - 1])) return false;
    if (i + kw.size() < s.size() && IsWordChar(s[i + kw.size()])) return false;
    if (!EqualsIgnoreCase(s.substr(i, kw.size()), kw)) return false;
    found = i;
    return true;
  });
  return found;
}

std::vector<std::string> SplitTopLevel(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t begin = 0;
  ScanTopLevel(s, [&](size_t i) {
    if (s[i] == sep) {
      out.push_back(Trim(s.substr(begin, i - begin)));
      begin = i + 1;
    }
    return false;
  });
  out.push_back(Trim(s.substr(begin)));
  return out;
}

std::string Unquote(std::string s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
  return s;
}

// SQLite's AVG is a floating-point average; fld follows Feldera, whose AVG keeps the argument's
// type (integer averages truncate). The corpus is SQLite's dialect, so its queries ask for
// SQLite's meaning explicitly: every AVG(x) becomes AVG(CAST(x AS DOUBLE)).
void FloatAverages(sql::Query* q);

void FloatAverages(sql::Expr* e) {
  if (!e) return;
  for (auto& a : e->args) FloatAverages(a.get());
  FloatAverages(e->filter.get());
  if (e->subquery) FloatAverages(e->subquery.get());
  if (e->kind == sql::ExprKind::kFunction && e->name == "AVG" && e->args.size() == 1) {
    auto cast = std::make_unique<sql::Expr>();
    cast->kind = sql::ExprKind::kCast;
    cast->pos = e->args[0]->pos;
    cast->cast_type = SqlType::Of(TypeId::kDouble);
    cast->args.push_back(std::move(e->args[0]));
    e->args[0] = std::move(cast);
  }
}

void FloatAverages(sql::TableRef* t) {
  if (!t) return;
  if (t->subquery) FloatAverages(t->subquery.get());
  FloatAverages(t->left.get());
  FloatAverages(t->right.get());
  FloatAverages(t->on.get());
}

void FloatAverages(sql::Query* q) {
  if (!q) return;
  FloatAverages(q->left.get());
  FloatAverages(q->right.get());
  for (auto& o : q->order_by) FloatAverages(o.expr.get());
  if (!q->select) return;
  sql::Select& s = *q->select;
  for (auto& item : s.items) FloatAverages(item.expr.get());
  for (auto& f : s.from) FloatAverages(f.get());
  FloatAverages(s.where.get());
  for (auto& g : s.group_by) FloatAverages(g.get());
  FloatAverages(s.having.get());
}

}  // namespace

Database::Entry* Database::Find(std::string_view name) {
  for (auto& e : entries_)
    if (EqualsIgnoreCase(e->name, name)) return e.get();
  return nullptr;
}

void Database::AddEntry(std::unique_ptr<Entry> e) {
  if (Find(e->name)) PlanError(fmt::format("a table or view named '{}' already exists", e->name));
  entries_.push_back(std::move(e));
}

std::unique_ptr<Circuit> Database::Build(std::vector<int>* table_rel) {
  return At(Stage::kPlan, [&] {
    auto c = std::make_unique<Circuit>(nullptr);
    table_rel->clear();
    for (const auto& e : entries_) {
      plan::Planner p(c.get(), e->sql, e->src);
      if (e->is_table)
        table_rel->push_back(p.AddTable(e->stmt));
      else
        p.AddView(e->stmt);
    }
    return c;
  });
}

void Database::Feed(Circuit* c, const std::vector<int>& table_rel) {
  // steps[k][t]: what table t receives in step k.
  std::vector<std::vector<Batch>> steps(3);
  size_t t = 0;
  for (const auto& e : entries_) {
    if (!e->is_table) continue;
    const Batch& all = e->rows;
    const size_t n = all.size();
    const size_t b1 = n / 3, b2 = 2 * n / 3;
    Batch p0 = Slice(all, 0, b1, 1), p1 = Slice(all, b1, b2, 1), p2 = Slice(all, b2, n, 1);
    if (n > 0 && !e->keyed) {
      // Garbage: copies of existing rows inserted in step 2 and deleted in step 3.
      std::vector<uint32_t> g{0};
      if (n >= 2) g.push_back(static_cast<uint32_t>(n / 2));
      p1 = Cat(p1, Pick(all, g, +1));
      p2 = Cat(p2, Pick(all, g, -1));
    } else if (e->keyed) {
      // Upsert an existing row by itself: no change. It goes first so that a later row of the
      // same step with the same key still wins.
      if (b1 > 0)
        p1 = Cat(Pick(all, {static_cast<uint32_t>(b1 - 1)}, 1), p1);
      else if (b2 > 0)
        p2 = Cat(Pick(all, {static_cast<uint32_t>(b2 - 1)}, 1), p2);
    }
    steps[0].push_back(std::move(p0));
    steps[1].push_back(std::move(p1));
    steps[2].push_back(std::move(p2));
    ++t;
  }
  for (auto& step : steps) {
    for (size_t i = 0; i < step.size(); ++i)
      if (!step[i].empty()) c->Push(table_rel[i], std::move(step[i]));
    c->Step();
  }
}

Batch Database::Evaluate(std::unique_ptr<sql::Query> q, const std::string& sql, const sql::SourceInfo& src,
                         Schema* schema) {
  std::vector<int> table_rel;
  std::unique_ptr<Circuit> c = Build(&table_rel);
  sql::Statement st;
  st.kind = sql::Statement::Kind::kCreateView;
  st.create_view = std::make_unique<sql::CreateView>();
  st.create_view->name = "slt_q";
  st.create_view->materialized = true;
  FloatAverages(q.get());
  st.create_view->query = std::move(q);
  st.create_view->query_begin = 0;
  st.create_view->query_end = sql.size();
  int rel = At(Stage::kPlan, [&] {
    plan::Planner p(c.get(), sql, src);
    return p.AddView(st);
  });
  *schema = c->relations()[rel].schema;
  At(Stage::kRun, [&] { Feed(c.get(), table_rel); });
  Batch b = At(Stage::kRun, [&] { return c->Contents(rel); });
  for (size_t r = 0; r < b.size(); ++r) {
    if (b.weights[r] > 0) continue;
    std::string row;
    for (size_t k = 0; k < b.width(); ++k) {
      if (k) row += ", ";
      row += FormatValue(b.Get(k, r), schema->fields[k].type);
    }
    throw StageError(Stage::kInternal,
                     fmt::format("the final result holds row ({}) with weight {}", row, b.weights[r]));
  }
  return b;
}

Batch Database::EvaluateText(const std::string& sql, const sql::SourceInfo& src, Schema* schema) {
  std::unique_ptr<sql::Query> q = At(Stage::kParse, [&] { return sql::ParseQuery(sql, src); });
  return Evaluate(std::move(q), sql, src, schema);
}

QueryResult Database::Query(const std::string& sql, const sql::SourceInfo& src) {
  std::unique_ptr<sql::Query> q = At(Stage::kParse, [&] { return sql::ParseQuery(sql, src); });
  // ORDER BY / LIMIT / OFFSET apply to the view's final contents; sort keys the select list does
  // not output become extra trailing columns, dropped after sorting.
  const size_t extra = plan::AppendOrderByColumns(q.get());
  sql::Query order;
  order.order_by = std::move(q->order_by);
  order.limit = q->limit;
  order.offset = q->offset;
  q->order_by.clear();
  q->limit.reset();
  q->offset.reset();
  QueryResult res;
  Batch b = Evaluate(std::move(q), sql, src, &res.schema);
  if (!order.order_by.empty() || order.limit || order.offset) {
    res.rows = At(Stage::kPlan,
                  [&] { return plan::OrderAndLimit(b, res.schema, order, sql, src, plan::NullOrder::kSmallest); });
    if (extra > 0) {
      res.schema.fields.resize(res.schema.size() - extra);
      for (auto& row : res.rows) row.resize(row.size() - extra);
    }
    return res;
  }
  for (size_t r = 0; r < b.size(); ++r) {
    std::vector<Value> row;
    for (size_t k = 0; k < b.width(); ++k) row.push_back(b.Get(k, r));
    for (int64_t w = 0; w < b.weights[r]; ++w) res.rows.push_back(row);
  }
  return res;
}

void Database::Execute(const std::string& sql, const sql::SourceInfo& src) {
  last_insert_upserted_ = false;
  std::string head = Trim(sql).substr(0, 6);
  if (EqualsIgnoreCase(head, "UPDATE")) return Update(sql, src);
  std::vector<sql::Statement> prog = At(Stage::kParse, [&] { return sql::ParseProgram(sql, src); });
  if (prog.size() != 1) throw StageError(Stage::kParse, fmt::format("expected one statement, found {}", prog.size()));
  sql::Statement& st = prog[0];
  using Kind = sql::Statement::Kind;
  switch (st.kind) {
    case Kind::kCreateTable: {
      auto e = std::make_unique<Entry>();
      e->is_table = true;
      e->name = st.create_table->name;
      e->sql = sql;
      e->src = src;
      e->stmt = std::move(st);
      At(Stage::kPlan, [&] {
        Circuit tmp;
        plan::Planner p(&tmp, e->sql, e->src);
        int r = p.AddTable(e->stmt);
        e->schema = tmp.relations()[r].schema;
        e->keyed = !tmp.relations()[r].primary_key.empty();
        e->key_cols = tmp.relations()[r].primary_key;
      });
      e->rows = EmptyBatch(e->schema.PhysTypes());
      AddEntry(std::move(e));
      return;
    }
    case Kind::kCreateView: {
      auto e = std::make_unique<Entry>();
      e->is_table = false;
      e->name = st.create_view->name;
      FloatAverages(st.create_view->query.get());
      e->sql = sql;
      e->src = src;
      e->stmt = std::move(st);
      AddEntry(std::move(e));
      try {
        std::vector<int> rel;
        Build(&rel);
      } catch (...) {
        entries_.pop_back();
        throw;
      }
      return;
    }
    case Kind::kCreateFunction:
      throw StageError(Stage::kParse, "CREATE FUNCTION is not supported yet by the sqllogictest runner");
    case Kind::kCreateType:
    case Kind::kCreateIndex:
    case Kind::kSet:
    case Kind::kLateness:
      return;
    case Kind::kDeclareRecursiveView:
      PlanError("DECLARE RECURSIVE VIEW is not supported yet by the sqllogictest runner");
    case Kind::kInsert: {
      sql::Insert& ins = *st.insert;
      Entry* t = Find(ins.table);
      if (!t || !t->is_table) PlanError(fmt::format("INSERT into '{}', which is not a table", ins.table));
      Batch rows;
      if (ins.query) {
        rows = InsertSelect(t, ins, sql, src);
      } else {
        rows = At(Stage::kPlan, [&] { return plan::RowsFromInsert(ins, t->schema, sql, src); });
      }
      if (t->keyed) {
        // The table's contents keep one row per key: a new row replaces the old (upsert).
        std::vector<uint32_t> keep;
        std::unordered_set<std::string> seen;
        std::vector<uint32_t> fresh;
        for (size_t r = rows.size(); r-- > 0;) {
          std::string k;
          EncodeRow(&k, rows, r, t->key_cols);
          if (seen.insert(k).second) fresh.push_back(static_cast<uint32_t>(r));
        }
        std::reverse(fresh.begin(), fresh.end());
        for (size_t r = 0; r < t->rows.size(); ++r) {
          std::string k;
          EncodeRow(&k, t->rows, r, t->key_cols);
          if (!seen.count(k)) keep.push_back(static_cast<uint32_t>(r));
        }
        last_insert_upserted_ = fresh.size() < rows.size() || keep.size() < t->rows.size();
        t->rows = Cat(Pick(t->rows, keep, 1), Pick(rows, fresh, 1));
      } else {
        t->rows = Cat(t->rows, rows);
      }
      return;
    }
    case Kind::kDelete: {
      Entry* t = Find(st.del->table);
      if (!t || !t->is_table) PlanError(fmt::format("DELETE from '{}', which is not a table", st.del->table));
      // The rows to delete: SELECT * FROM t WHERE <cond>, through the engine.
      auto q = std::make_unique<sql::Query>();
      q->select = std::make_unique<sql::Select>();
      sql::SelectItem star;
      star.expr = std::make_unique<sql::Expr>();
      star.expr->kind = sql::ExprKind::kStar;
      q->select->items.push_back(std::move(star));
      auto ref = std::make_unique<sql::TableRef>();
      ref->kind = sql::TableRef::Kind::kTable;
      ref->name = t->name;
      q->select->from.push_back(std::move(ref));
      q->select->where = std::move(st.del->where);
      Schema schema;
      Batch gone = Evaluate(std::move(q), sql, src, &schema);
      RemoveRows(t, gone);
      return;
    }
    case Kind::kQuery: {
      Schema schema;
      Evaluate(std::move(st.query), sql, src, &schema);
      return;
    }
    case Kind::kDropTable:
    case Kind::kDropView: {
      bool table = st.kind == Kind::kDropTable;
      for (size_t i = 0; i < entries_.size(); ++i) {
        if (entries_[i]->is_table == table && EqualsIgnoreCase(entries_[i]->name, st.drop_name)) {
          entries_.erase(entries_.begin() + static_cast<long>(i));
          return;
        }
      }
      if (st.if_exists) return;
      PlanError(fmt::format("no {} named '{}'", table ? "table" : "view", st.drop_name));
    }
  }
  PlanError("unsupported statement");
}

Batch Database::InsertSelect(Entry* t, sql::Insert& ins, const std::string& sql, const sql::SourceInfo& src) {
  std::vector<int> target;
  if (ins.columns.empty()) {
    for (size_t i = 0; i < t->schema.size(); ++i) target.push_back(static_cast<int>(i));
  } else {
    for (const auto& c : ins.columns) {
      int i = t->schema.IndexOf(c);
      if (i < 0) PlanError(fmt::format("INSERT names unknown column '{}' of {}", c, t->name));
      target.push_back(i);
    }
  }
  Schema qs;
  Batch res = Evaluate(std::move(ins.query), sql, src, &qs);
  if (qs.size() != target.size())
    PlanError(fmt::format("INSERT has {} columns but its SELECT returns {}", target.size(), qs.size()));
  // Each value converts to its column's type as CAST would (an assignment).
  return At(Stage::kRun, [&] {
    BatchBuilder out(t->schema.PhysTypes());
    for (size_t r = 0; r < res.size(); ++r) {
      std::vector<Value> row(t->schema.size());
      for (size_t k = 0; k < target.size(); ++k) {
        const Field& f = t->schema.fields[target[k]];
        Value v = CastValue(res.Get(k, r), qs.fields[k].type, f.type);
        if (v.IsNull() && !f.type.nullable) Fail(ErrorKind::kRuntime, "NULL in NOT NULL column '{}'", f.name);
        row[target[k]] = std::move(v);
      }
      for (int64_t w = 0; w < res.weights[r]; ++w) out.AppendRow(row, 1);
    }
    return out.Finish();
  });
}

void Database::RemoveRows(Entry* t, const Batch& gone) {
  std::unordered_set<std::string> drop;
  for (size_t r = 0; r < gone.size(); ++r) drop.insert(RowEncoding(gone, r));
  std::vector<uint32_t> keep;
  for (size_t r = 0; r < t->rows.size(); ++r)
    if (!drop.count(RowEncoding(t->rows, r))) keep.push_back(static_cast<uint32_t>(r));
  t->rows = Pick(t->rows, keep, 1);
}

void Database::Update(const std::string& sql, const sql::SourceInfo& src) {
  // UPDATE <table> SET <col> = <expr> [, ...] [WHERE <cond>]
  const std::string text = Trim(sql);
  std::string_view s(text);
  size_t set = FindKeyword(s, "SET");
  if (set == std::string_view::npos || set < 6) throw StageError(Stage::kParse, "UPDATE without SET");
  std::string name = Unquote(Trim(s.substr(6, set - 6)));
  std::string_view rest = s.substr(set + 3);
  size_t where = FindKeyword(rest, "WHERE");
  std::string assigns(rest.substr(0, where));
  std::string cond = where == std::string_view::npos ? "" : Trim(rest.substr(where + 5));
  Entry* t = Find(name);
  if (!t || !t->is_table) PlanError(fmt::format("UPDATE of '{}', which is not a table", name));
  std::vector<std::string> value(t->schema.size());
  for (const std::string& a : SplitTopLevel(assigns, ',')) {
    size_t eq = a.find('=');
    if (eq == std::string::npos) throw StageError(Stage::kParse, fmt::format("bad assignment '{}' in UPDATE", a));
    std::string col = Unquote(Trim(std::string_view(a).substr(0, eq)));
    int i = t->schema.IndexOf(col);
    if (i < 0) PlanError(fmt::format("UPDATE names unknown column '{}' of {}", col, t->name));
    value[i] = Trim(std::string_view(a).substr(eq + 1));  // the last assignment of a column wins
  }
  std::string filter = cond.empty() ? "" : " WHERE " + cond;
  std::string old_sql = "SELECT * FROM " + t->name + filter;
  std::string new_sql = "SELECT ";
  for (size_t i = 0; i < t->schema.size(); ++i) {
    const Field& f = t->schema.fields[i];
    if (i) new_sql += ", ";
    if (value[i].empty())
      new_sql += f.name;
    else
      new_sql += fmt::format("CAST(({}) AS {})", value[i], f.type.WithNullable(true).ToString());
  }
  new_sql += " FROM " + t->name + filter;
  Schema schema;
  Batch old_rows = EvaluateText(old_sql, src, &schema);
  Batch new_rows = EvaluateText(new_sql, src, &schema);
  for (size_t i = 0; i < schema.size(); ++i) {
    const Field& f = t->schema.fields[i];
    if (f.type.nullable) continue;
    for (size_t r = 0; r < new_rows.size(); ++r)
      if (new_rows.cols[i]->IsNull(r)) PlanError(fmt::format("UPDATE sets NOT NULL column '{}' to NULL", f.name));
  }
  RemoveRows(t, old_rows);
  t->rows = Cat(t->rows, Expand(new_rows));
}

}  // namespace fld::slt
