#include "core/plan/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

#include "core/circuit/fixed_point.h"
#include "core/common/error.h"
#include "core/expr/time.h"
#include "core/operators/aggregate.h"
#include "core/operators/asof_join.h"
#include "core/operators/bag_set_op.h"
#include "core/operators/constant.h"
#include "core/operators/distinct.h"
#include "core/operators/emit_final.h"
#include "core/operators/hop.h"
#include "core/operators/integrate.h"
#include "core/operators/join.h"
#include "core/operators/lateness.h"
#include "core/operators/map.h"
#include "core/operators/session.h"
#include "core/operators/source.h"
#include "core/operators/temporal_filter.h"
#include "core/operators/topk.h"
#include "core/operators/union_all.h"
#include "core/operators/unnest.h"
#include "core/operators/upsert.h"
#include "core/operators/watermark.h"
#include "core/plan/join_pushdown.h"
#include "core/plan/waterlines.h"

namespace fld::plan {

using sql::Expr;
using sql::ExprKind;
using sql::Pos;

namespace {

// A subquery's columns joined onto the query that reads it are read by position only: hidden,
// so that `x IN (SELECT x FROM u)` leaves `x` naming the query's own column.
void HideFrom(Scope* scope, size_t first) {
  for (size_t i = first; i < scope->cols.size(); ++i) scope->cols[i].hidden = true;
}

void SplitAnd(const Expr* e, std::vector<const Expr*>* out) {
  if (!e) return;
  if (e->kind == ExprKind::kBinary && e->op == sql::Op::kAnd) {
    SplitAnd(e->args[0].get(), out);
    SplitAnd(e->args[1].get(), out);
  } else {
    out->push_back(e);
  }
}

void CollectRefs(const Expr& e, std::vector<const Expr*>* out) {
  if (e.kind == ExprKind::kColumnRef) out->push_back(&e);
  for (const auto& a : e.args)
    if (a) CollectRefs(*a, out);
}

std::string OutputName(const sql::SelectItem& item, size_t index) {
  if (!item.alias.empty()) return item.alias;
  if (item.expr->kind == ExprKind::kColumnRef) return item.expr->name;
  return fmt::format("EXPR${}", index);
}

bool IsTrueLiteral(const BoundExpr& e) {
  return e.op == ExprOp::kLiteral && !e.literal.IsNull() && e.literal.i == 1 && e.type.id == TypeId::kBoolean;
}

BoundExprPtr Call1(ExprOp op, SqlType type, BoundExprPtr a) {
  std::vector<BoundExprPtr> args;
  args.push_back(std::move(a));
  return MakeCall(op, type, std::move(args));
}

BoundExprPtr Call2(ExprOp op, SqlType type, BoundExprPtr a, BoundExprPtr b) {
  std::vector<BoundExprPtr> args;
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  return MakeCall(op, type, std::move(args));
}

SqlType BoolType(bool nullable) {
  return SqlType::Of(TypeId::kBoolean, nullable);
}

BoundExprPtr BoolLiteral(bool v) {
  return MakeLiteral(Value::Int(v ? 1 : 0), BoolType(false));
}

}  // namespace

Planner::Planner(Circuit* circuit, std::string_view sql, sql::SourceInfo src)
    : circuit_(circuit), ctx_{sql, std::move(src)}, binder_(ctx_) {
  binder_.AllowNow();
}

std::vector<PhysType> Planner::Types(const Scope& s) const {
  std::vector<PhysType> t;
  for (const auto& c : s.cols) t.push_back(c.type.phys());
  return t;
}

int Planner::Materialize(int node, const std::vector<PhysType>& types) {
  return circuit_->AddNode(std::make_unique<IntegrateOp>(types), {node}, types);
}

void Planner::AddUnavailable(std::string name, std::string hint) {
  unavailable_.emplace_back(std::move(name), std::move(hint));
}

int Planner::AddStoredTable(const std::string& name, const Schema& schema) {
  Relation r;
  r.kind = Relation::Kind::kTable;
  r.name = name;
  r.schema = schema;
  auto types = schema.PhysTypes();
  r.input_node = r.node = circuit_->AddNode(std::make_unique<SourceOp>(types), {}, types);
  return circuit_->AddRelation(std::move(r));
}

int Planner::AddTable(const sql::Statement& stmt) {
  const sql::CreateTable& ct = *stmt.create_table;
  if (circuit_->FindRelation(ct.name) >= 0)
    ctx_.Error(stmt.pos, fmt::format("a table or view named '{}' already exists", ct.name));
  Relation r;
  r.kind = Relation::Kind::kTable;
  r.name = ct.name;
  r.pos = stmt.pos;
  r.properties = ct.properties;
  for (const auto& c : ct.columns) {
    if (r.schema.IndexOf(c.name) >= 0) ctx_.Error(c.pos, fmt::format("column '{}' is declared twice", c.name));
    Field f{c.name, c.type, std::nullopt};
    if (c.default_value) {
      Scope none;
      BoundExprPtr d = binder_.Bind(*c.default_value, none);
      if (!d->IsConstant()) ctx_.Error(c.default_value->pos, "a DEFAULT must be a constant");
      d = binder_.Coerce(std::move(d), c.type.WithNullable(true), c.default_value->pos);
      try {
        f.default_value = EvaluateConstant(*d);
      } catch (const fld::Error& e) {
        ctx_.Error(c.default_value->pos, e.what());
      }
      if (f.default_value->IsNull() && !c.type.nullable)
        ctx_.Error(c.default_value->pos, fmt::format("DEFAULT NULL for NOT NULL column '{}'", c.name));
    }
    r.schema.fields.push_back(std::move(f));
  }
  for (const auto& k : ct.primary_key) {
    int i = r.schema.IndexOf(k);
    if (i < 0) ctx_.Error(stmt.pos, fmt::format("PRIMARY KEY names unknown column '{}'", k));
    r.schema.fields[i].type.nullable = false;
    r.primary_key.push_back(i);
  }
  bool materialized = !r.primary_key.empty();
  for (const auto& p : ct.properties) {
    if (p.key == "materialized") {
      if (p.value != "true" && p.value != "false") ctx_.Error(p.value_pos, "'materialized' must be 'true' or 'false'");
      materialized = materialized || p.value == "true";
    } else if (p.key == "skip_unused_columns") {
      // Feldera's: lets its Delta/Iceberg/Snowflake connectors skip reading the columns no view
      // uses. fld's formats parse every declared column and an unused column changes no view, so
      // it is validated and has no effect.
      if (p.value != "true" && p.value != "false")
        ctx_.Error(p.value_pos, "'skip_unused_columns' must be 'true' or 'false'");
    } else if (p.key == "append_only") {
      // Only inserts reach the table (Circuit::Push refuses deletions; so do the JSON connectors,
      // naming the record): aggregates over it keep only what inserts can change (MIN/MAX keep
      // the extreme instead of every value).
      if (p.value != "true" && p.value != "false") ctx_.Error(p.value_pos, "'append_only' must be 'true' or 'false'");
      r.append_only = p.value == "true";
    } else if (p.key != "connectors") {
      ctx_.Error(p.pos, fmt::format("unknown table property '{}' (known: connectors, materialized, append_only, "
                                    "skip_unused_columns)",
                                    p.key));
    }
  }
  auto types = r.schema.PhysTypes();
  r.input_node = circuit_->AddNode(std::make_unique<SourceOp>(types), {}, types);
  if (r.append_only) circuit_->MarkInsertsOnly(r.input_node);
  r.node = r.input_node;
  // WATERMARK holds rows back before LATENESS judges them (as they are released).
  int watermark = -1;
  for (size_t i = 0; i < ct.columns.size(); ++i) {
    const sql::ColumnDef& c = ct.columns[i];
    if (c.watermark.empty()) continue;
    if (watermark >= 0) ctx_.Error(c.watermark_pos, "a table with more than one WATERMARK column is not supported");
    watermark = static_cast<int>(i);
    Value delay = BindDelay(r.schema.fields[i], c.watermark, c.watermark_pos, "WATERMARK");
    r.node = circuit_->AddNode(std::make_unique<WatermarkOp>(types, watermark, delay), {r.node}, types);
  }
  std::vector<LatenessSpec> lateness;
  for (size_t i = 0; i < ct.columns.size(); ++i)
    if (!ct.columns[i].lateness.empty())
      lateness.push_back({static_cast<int>(i), ct.columns[i].lateness, ct.columns[i].lateness_pos});
  if (!lateness.empty()) r.node = AddLateness(r.node, r.schema, lateness);
  if (!r.primary_key.empty())
    r.node = circuit_->AddNode(std::make_unique<UpsertOp>(types, r.primary_key, circuit_->pool()), {r.node}, types);
  r.materialized = materialized;
  if (materialized) r.integrate_node = Materialize(r.node, types);
  return circuit_->AddRelation(std::move(r));
}

void Planner::DeclareFunction(const sql::Statement& stmt) {
  auto external = binder_.DeclareFunction(*stmt.create_function);
  functions_.emplace_back(&stmt, external);
  if (external) circuit_->AddExternalFunction(std::move(external));
}

int Planner::AddView(const sql::Statement& stmt) {
  const sql::CreateView& cv = *stmt.create_view;
  if (circuit_->FindRelation(cv.name) >= 0)
    ctx_.Error(stmt.pos, fmt::format("a table or view named '{}' already exists", cv.name));
  if (!recursive_.declared.empty()) {
    std::set<std::string> refs;
    CollectRelationNames(*cv.query, &refs);
    bool joins = recursive_.names.contains(ToUpper(cv.name));
    for (const auto& r : refs) joins = joins || recursive_.names.contains(r);
    if (joins) {
      for (const auto* v : recursive_.views)
        if (EqualsIgnoreCase(v->create_view->name, cv.name))
          ctx_.Error(stmt.pos, fmt::format("a table or view named '{}' already exists", cv.name));
      recursive_.views.push_back(&stmt);
      recursive_.names.insert(ToUpper(cv.name));
      bool complete = true;
      for (const auto* d : recursive_.declared) {
        bool defined = false;
        for (const auto* v : recursive_.views)
          defined = defined || EqualsIgnoreCase(v->create_view->name, d->create_table->name);
        complete = complete && defined;
      }
      if (complete) BuildRecursiveGroup();
      return -1;
    }
  }
  for (const auto& p : cv.properties)
    if (p.key != "connectors" && p.key != "emit_final")
      ctx_.Error(p.pos, fmt::format("unknown view property '{}' (known: connectors, emit_final)", p.key));
  Relation r;
  r.kind = Relation::Kind::kView;
  r.name = cv.name;
  r.pos = stmt.pos;
  r.properties = cv.properties;
  r.materialized = cv.materialized;
  r.local = cv.local;
  r.query_text = std::string(ctx_.sql.substr(cv.query_begin, cv.query_end - cv.query_begin));
  r.node = PlanViewQuery(*cv.query, &r.schema);
  for (const auto& f : r.schema.fields)
    if (f.type.IsInterval())
      ctx_.Error(stmt.pos, fmt::format("view '{}' column '{}' is an {}: Feldera cannot output INTERVAL values; CAST "
                                       "it to a number (its last field's unit) or a string",
                                       cv.name, f.name, f.type.WithNullable(true).ToString()));
  if (!cv.column_names.empty()) {
    if (cv.column_names.size() != r.schema.size())
      ctx_.Error(stmt.pos, fmt::format("view '{}' names {} columns but its query has {}", cv.name,
                                       cv.column_names.size(), r.schema.size()));
    for (size_t i = 0; i < cv.column_names.size(); ++i) r.schema.fields[i].name = cv.column_names[i];
  }
  std::vector<LatenessSpec> lateness;
  for (const sql::Statement* st : view_lateness_) {
    if (!EqualsIgnoreCase(st->lateness_view, cv.name)) continue;
    int c = r.schema.IndexOf(st->lateness_column);
    if (c < 0) ctx_.Error(st->pos, fmt::format("view '{}' has no column '{}'", cv.name, st->lateness_column));
    lateness.push_back({c, st->lateness_text, st->lateness_pos});
  }
  if (!lateness.empty()) r.node = AddLateness(r.node, r.schema, lateness);
  for (const auto& p : cv.properties) {
    if (p.key != "emit_final") continue;
    int c = r.schema.IndexOf(p.value);
    if (c < 0) ctx_.Error(p.pos, fmt::format("emit_final: view '{}' has no column '{}'", cv.name, p.value));
    WaterlineRef w = plan::NodeWaterlines(*circuit_, r.node)[c];
    if (!w.valid())
      ctx_.Error(p.pos, fmt::format("emit_final: column '{}' of view '{}' has no waterline (it needs a LATENESS on the "
                                    "column it is computed from, through filters, monotone projections and GROUP BY "
                                    "keys; see LATENESS)",
                                    p.value, cv.name));
    r.node = circuit_->AddNode(std::make_unique<EmitFinalOp>(r.schema.PhysTypes(), c, r.schema.fields[c].name, w),
                               {r.node}, r.schema.PhysTypes());
  }
  if (r.materialized) r.integrate_node = Materialize(r.node, r.schema.PhysTypes());
  return circuit_->AddRelation(std::move(r));
}

Value Planner::BindDelay(const Field& f, const std::string& text, Pos pos, std::string_view what) {
  std::unique_ptr<sql::Query> q;
  try {
    q = sql::ParseQuery("SELECT " + text);
  } catch (const fld::Error&) {
  }
  if (!q || !q->select || q->select->items.size() != 1 || !q->select->from.empty())
    ctx_.Error(pos, fmt::format("{} needs a constant expression, not '{}'", what, text));
  Scope none;
  BoundExprPtr e;
  try {
    e = binder_.Bind(*q->select->items[0].expr, none);
  } catch (const fld::Error&) {
    ctx_.Error(pos, fmt::format("{} needs a constant expression, not '{}'", what, text));
  }
  if (!e->IsConstant()) ctx_.Error(pos, fmt::format("{} needs a constant expression", what));
  Value v;
  if (f.type.IsTemporal()) {
    // A DATE, TIME or TIMESTAMP column's delay is a day-time INTERVAL (microseconds, the unit of
    // TIME and TIMESTAMP values; whole days for a DATE, whose values are days).
    if (e->type.id != TypeId::kIntervalDayTime)
      ctx_.Error(pos, fmt::format("the {} of the {} column '{}' must be a day-time INTERVAL (e.g. INTERVAL '1' HOUR)",
                                  what, f.type.ToString(), f.name));
    try {
      v = EvaluateConstant(*e);
    } catch (const fld::Error& err) {
      ctx_.Error(pos, err.what());
    }
    if (!v.IsNull() && f.type.id == TypeId::kDate) {
      constexpr int64_t kDay = 86'400'000'000;
      if (v.i % kDay != 0)
        ctx_.Error(pos, fmt::format("the {} of the DATE column '{}' must be whole days", what, f.name));
      v.i /= kDay;
    }
  } else {
    if (!f.type.IsNumeric())
      ctx_.Error(pos,
                 fmt::format("{} needs a numeric or date/time column; '{}' is {}", what, f.name, f.type.ToString()));
    if (!e->type.IsNumeric())
      ctx_.Error(pos, fmt::format("the {} of the {} column '{}' must be a number", what, f.type.ToString(), f.name));
    try {
      v = EvaluateConstant(*binder_.Coerce(std::move(e), f.type.WithNullable(true), pos));
    } catch (const fld::Error& err) {
      ctx_.Error(pos, err.what());
    }
  }
  if (v.IsNull() || (v.kind == Value::Kind::kInt && v.i < 0) || (v.kind == Value::Kind::kDouble && !(v.d >= 0)))
    ctx_.Error(pos, fmt::format("{} must not be negative or NULL", what));
  return v;
}

int Planner::AddLateness(int node, const Schema& schema, const std::vector<LatenessSpec>& specs) {
  std::vector<LatenessOp::Annotated> cols;
  for (const auto& sp : specs) {
    const Field& f = schema.fields[sp.column];
    for (const auto& c : cols)
      if (c.index == sp.column) ctx_.Error(sp.pos, fmt::format("column '{}' has LATENESS twice", f.name));
    cols.push_back({sp.column, f.name, f.type, BindDelay(f, sp.text, sp.pos, "LATENESS")});
  }
  auto types = schema.PhysTypes();
  return circuit_->AddNode(std::make_unique<LatenessOp>(types, std::move(cols)), {node}, types);
}

namespace {

void NamesIn(const sql::Expr& e, std::set<std::string>* out);

void NamesIn(const sql::TableRef& t, std::set<std::string>* out) {
  if (t.kind == sql::TableRef::Kind::kTable) out->insert(ToUpper(t.name));
  if (t.subquery) CollectRelationNames(*t.subquery, out);
  if (t.left) NamesIn(*t.left, out);
  if (t.right) NamesIn(*t.right, out);
  if (t.on) NamesIn(*t.on, out);
}

void NamesIn(const sql::Expr& e, std::set<std::string>* out) {
  if (e.subquery) CollectRelationNames(*e.subquery, out);
  for (const auto& a : e.args)
    if (a) NamesIn(*a, out);
  if (e.filter) NamesIn(*e.filter, out);
}

}  // namespace

// Every relation name a query reads (upper case; WITH names included, which is harmless).
void CollectRelationNames(const sql::Query& q, std::set<std::string>* out) {
  for (const auto& cte : q.with) CollectRelationNames(*cte.query, out);
  if (q.left) CollectRelationNames(*q.left, out);
  if (q.right) CollectRelationNames(*q.right, out);
  if (!q.select) return;
  const sql::Select& s = *q.select;
  for (const auto& item : s.items) NamesIn(*item.expr, out);
  for (const auto& f : s.from) NamesIn(*f, out);
  for (const auto* e : {s.where.get(), s.having.get()})
    if (e) NamesIn(*e, out);
  for (const auto& g : s.group_by) NamesIn(*g, out);
}

void Planner::DeclareRecursiveView(const sql::Statement& stmt) {
  const std::string& name = stmt.create_table->name;
  if (circuit_->FindRelation(name) >= 0 || recursive_.names.contains(ToUpper(name)))
    ctx_.Error(stmt.pos, fmt::format("a table or view named '{}' already exists", name));
  for (const auto& c : stmt.create_table->columns)
    if (c.primary_key || c.default_value || !c.lateness.empty())
      ctx_.Error(c.pos, "a recursive view's columns take a name, a type and NOT NULL only");
  recursive_.declared.push_back(&stmt);
  recursive_.names.insert(ToUpper(name));
}

void Planner::Finish() {
  for (const auto* d : recursive_.declared) {
    bool defined = false;
    for (const auto* v : recursive_.views)
      defined = defined || EqualsIgnoreCase(v->create_view->name, d->create_table->name);
    if (!defined)
      ctx_.Error(d->pos, fmt::format("recursive view '{}' is declared but never defined", d->create_table->name));
  }
}

// What one nested copy of a recursive group is built from (shared by every copy, kept as long as
// the fixed point node lives): the program text, re-parsed, and which of its statements to plan.
struct RecursiveInstance {
  std::string sql;
  sql::SourceInfo src;
  std::vector<sql::Statement> program;
  std::vector<std::pair<std::string, Schema>> inputs;  // outer relations read, in input order
  std::vector<size_t> declared, views;                 // indices into program; views in order
  // The functions declared before the group (index into program; the external function object,
  // shared with the outer circuit, or null for a SQL-bodied one).
  std::vector<std::pair<size_t, std::shared_ptr<ExternalFunction>>> functions;
  ThreadPool* pool = nullptr;
  // Whether the views read NOW(): the outer clock is then the last input (a one-column relation,
  // the time as a TIMESTAMP), and NOW() in the copies reads it.
  bool clock = false;
  static constexpr std::string_view kClockInput = "$clock";

  static Schema DeclaredSchema(const sql::Statement& d) {
    Schema s;
    for (const auto& c : d.create_table->columns) s.fields.push_back({c.name, c.type});
    return s;
  }

  // Builds one copy; fills the layout and the exposed views' schemas.
  std::unique_ptr<Circuit> Build(FixedPointOp::Layout* layout, std::vector<Schema>* exposed) const {
    auto c = std::make_unique<Circuit>(pool);
    Planner p(c.get(), sql, src);
    *layout = {};
    exposed->clear();
    for (const auto& [i, external] : functions) p.binder_.DeclareFunction(*program[i].create_function, external);
    for (const auto& [name, schema] : inputs) layout->inputs.push_back(p.AddStoredTable(name, schema));
    if (clock) {
      Schema now;
      now.fields.push_back({"now", SqlType::Of(TypeId::kTimestamp, false)});
      const int r = p.AddStoredTable(std::string(kClockInput), now);
      layout->inputs.push_back(r);
      p.clock_input_ = c->relations()[r].node;
    }
    for (size_t d : declared) {
      layout->feedback_in.push_back(p.AddStoredTable(program[d].create_table->name, DeclaredSchema(program[d])));
      layout->names.push_back(program[d].create_table->name);
    }
    layout->feedback_out.resize(declared.size());
    for (size_t vi : views) {
      const sql::Statement& st = program[vi];
      const sql::CreateView& cv = *st.create_view;
      Schema schema;
      Planner::Plan plan;
      plan.node = p.PlanViewQuery(*cv.query, &schema);
      if (!cv.column_names.empty()) {
        if (cv.column_names.size() != schema.size())
          p.ctx_.Error(st.pos, fmt::format("view '{}' names {} columns but its query has {}", cv.name,
                                           cv.column_names.size(), schema.size()));
        for (size_t i = 0; i < schema.size(); ++i) schema.fields[i].name = cv.column_names[i];
      }
      for (const auto& f : schema.fields) plan.scope.cols.push_back({"", f.name, f.type, false});
      int decl = -1;
      for (size_t d = 0; d < declared.size(); ++d)
        if (EqualsIgnoreCase(program[declared[d]].create_table->name, cv.name)) decl = static_cast<int>(d);
      if (decl >= 0) {
        // The declared names and types (the query's types cast to them).
        const Schema want = DeclaredSchema(program[declared[decl]]);
        if (want.size() != schema.size())
          p.ctx_.Error(st.pos, fmt::format("recursive view '{}' is declared with {} columns but its query has {}",
                                           cv.name, want.size(), schema.size()));
        std::vector<SqlType> types;
        for (size_t i = 0; i < want.size(); ++i) {
          const Field& w = want.fields[i];
          const Field& g = schema.fields[i];
          if (!EqualsIgnoreCase(w.name, g.name))
            p.ctx_.Error(st.pos, fmt::format("column {} of recursive view '{}' is declared as '{}' but its query "
                                             "names it '{}'",
                                             i + 1, cv.name, w.name, g.name));
          if (!w.type.nullable && g.type.nullable)
            p.ctx_.Error(st.pos, fmt::format("column '{}' of recursive view '{}' is declared NOT NULL but its query "
                                             "can give NULL",
                                             w.name, cv.name));
          types.push_back(w.type);
        }
        plan = p.Cast(std::move(plan), types, st.pos);
        schema = want;
      }
      // Every view of a recursive group is a set (Feldera's rule), or the iteration would not
      // end.
      plan.node = c->AddNode(std::make_unique<DistinctOp>(), {plan.node}, schema.PhysTypes());
      if (decl >= 0) {
        layout->feedback_out[decl] = plan.node;
      } else {
        // A view of the group that is not declared: later views of this copy read it.
        Relation r;
        r.kind = Relation::Kind::kView;
        r.name = cv.name;
        r.schema = schema;
        r.node = plan.node;
        c->AddRelation(std::move(r));
      }
      layout->outputs.push_back(plan.node);
      exposed->push_back(schema);
    }
    return c;
  }
};

void Planner::BuildRecursiveGroup() {
  RecursiveGroup group = std::move(recursive_);
  recursive_ = {};
  // The views the declared ones read, transitively, are the group's fixed point; the others
  // only read it.
  std::map<std::string, std::set<std::string>> refs;  // upper-case view name -> group names it reads
  for (const auto* v : group.views) {
    std::set<std::string> all;
    CollectRelationNames(*v->create_view->query, &all);
    for (const auto& n : all)
      if (group.names.contains(n)) refs[ToUpper(v->create_view->name)].insert(n);
  }
  std::set<std::string> in_cycle;
  std::vector<std::string> todo;
  for (const auto* d : group.declared) todo.push_back(ToUpper(d->create_table->name));
  while (!todo.empty()) {
    std::string n = todo.back();
    todo.pop_back();
    if (!in_cycle.insert(n).second) continue;
    for (const auto& m : refs[n]) todo.push_back(m);
  }
  auto rec = std::make_shared<RecursiveInstance>();
  rec->sql = std::string(ctx_.sql);
  rec->src = ctx_.src;
  rec->program = sql::ParseProgram(rec->sql, rec->src);
  rec->pool = circuit_->pool();
  auto index_of = [&](const sql::Statement* st) {
    for (size_t i = 0; i < rec->program.size(); ++i)
      if (rec->program[i].begin == st->begin) return i;
    ctx_.Error(st->pos, "internal error: statement not found");
  };
  for (const auto* d : group.declared) rec->declared.push_back(index_of(d));
  for (const auto& [st, external] : functions_) rec->functions.emplace_back(index_of(st), external);
  std::vector<const sql::Statement*> members, others;
  std::set<std::string> read;
  for (const auto* v : group.views) {
    if (!in_cycle.contains(ToUpper(v->create_view->name))) {
      others.push_back(v);
      continue;
    }
    members.push_back(v);
    rec->views.push_back(index_of(v));
    CollectRelationNames(*v->create_view->query, &read);
  }
  std::vector<int> input_nodes;
  for (const auto& n : read) {
    if (in_cycle.contains(n)) continue;
    int r = circuit_->FindRelation(n);
    if (r < 0) continue;  // a WITH name (or unknown: planning the copy reports it)
    const Relation& rel = circuit_->relations()[r];
    rec->inputs.emplace_back(rel.name, rel.schema);
    input_nodes.push_back(rel.node);
  }
  FixedPointOp::Layout layout;
  std::vector<Schema> exposed;
  if (rec->Build(&layout, &exposed)->UsesNow()) {  // reports the group's errors now
    rec->clock = true;
    rec->Build(&layout, &exposed);
    input_nodes.push_back(ClockNode());
  }
  auto op = std::make_unique<FixedPointOp>(
      [rec] {
        FixedPointOp::Layout l;
        std::vector<Schema> e;
        return rec->Build(&l, &e);
      },
      layout, kMaxRecursionIterations);
  const FixedPointOp* fp = op.get();
  int node = circuit_->AddNode(std::move(op), input_nodes, {});
  for (size_t k = 0; k < members.size(); ++k) {
    const sql::Statement& st = *members[k];
    const sql::CreateView& cv = *st.create_view;
    for (const auto& p : cv.properties)
      if (p.key != "connectors")
        ctx_.Error(p.pos, fmt::format("unknown view property '{}' (known: connectors)", p.key));
    Relation r;
    r.kind = Relation::Kind::kView;
    r.name = cv.name;
    r.pos = st.pos;
    r.properties = cv.properties;
    r.materialized = cv.materialized;
    r.local = cv.local;
    r.query_text = std::string(ctx_.sql.substr(cv.query_begin, cv.query_end - cv.query_begin));
    r.schema = exposed[k];
    auto types = r.schema.PhysTypes();
    r.node = circuit_->AddNode(std::make_unique<FixedPointOutputOp>(fp, k), {node}, types);
    if (r.materialized) r.integrate_node = Materialize(r.node, types);
    circuit_->AddRelation(std::move(r));
  }
  for (const auto* v : others) AddView(*v);
}

int Planner::PlanViewQuery(const sql::Query& q, Schema* schema) {
  if (!q.limit && !q.offset) return PlanQuery(q, schema);
  // The standard's resolution of ORDER BY names: output names first, then the FROM columns
  // (qualified or not) and expressions over them, which become trailing select items. The
  // rewrite is of the query's syntax only and adds nothing when repeated (recursive views are
  // planned more than once).
  AppendOrderByColumns(const_cast<sql::Query*>(&q));
  int node = PlanQuery(q, schema);
  return TopK(node, schema, q);
}

// ORDER BY ... LIMIT / OFFSET of a view: the order keys are bound over the view's output columns
// (names, positions or expressions over them, and the sort columns PlanViewQuery appended); keys
// that are not plain columns become extra columns; both are dropped after the top-K operator.
// Without LIMIT, a view's ORDER BY means nothing (its contents are a set) and is ignored, as in
// Feldera.
int Planner::TopK(int node, Schema* out_schema, const sql::Query& q, size_t lead) {
  if (q.limit && *q.limit < 0) ctx_.Error(q.pos, "LIMIT must not be negative");
  if (q.offset && *q.offset < 0) ctx_.Error(q.pos, "OFFSET must not be negative");
  const Schema& schema = *out_schema;
  Scope scope;
  for (size_t i = 0; i < schema.size(); ++i)
    scope.cols.push_back({"", schema.fields[i].name, schema.fields[i].type, i < lead});
  std::vector<BoundExprPtr> proj;
  for (size_t i = 0; i < schema.size(); ++i) proj.push_back(MakeColumn(static_cast<int>(i), schema.fields[i].type));
  std::vector<SortKey> keys;
  for (const auto& o : q.order_by) {
    const Expr& e = *o.expr;
    SortKey k;
    k.desc = o.desc;
    // NULL is the smallest value unless NULLS FIRST / LAST says otherwise (Feldera's rule).
    k.nulls_first = o.nulls_first.value_or(!o.desc);
    if (e.kind == ExprKind::kLiteral && e.lit_kind == sql::LiteralKind::kInteger) {
      int64_t pos = e.text.size() > 18 ? 0 : std::stoll(e.text);
      const int64_t visible = static_cast<int64_t>(schema.size() - lead);
      if (pos < 1 || pos > visible)
        ctx_.Error(e.pos, fmt::format("ORDER BY position {} is not in the select list (1..{})", e.text, visible));
      k.column = static_cast<int>(lead + pos - 1);
    } else {
      if (ContainsAggregate(e))
        ctx_.Error(e.pos,
                   "ORDER BY ... LIMIT in a view sorts by the view's columns only (aggregates: not supported yet)");
      BoundExprPtr b = binder_.Bind(e, scope);
      if (b->op == ExprOp::kColumn) {
        k.column = b->column_index;
      } else {
        k.column = static_cast<int>(proj.size());
        proj.push_back(std::move(b));
      }
    }
    keys.push_back(k);
  }
  std::vector<PhysType> types;
  for (const auto& e : proj) types.push_back(e->type.phys());
  size_t width = schema.size();
  while (width > 0 && schema.fields[width - 1].name.starts_with(kOrderColumnPrefix)) --width;
  if (proj.size() > schema.size()) node = AddMap(nullptr, std::move(proj), node, types);
  std::vector<int> partition;
  for (size_t i = 0; i < lead; ++i) partition.push_back(static_cast<int>(i));
  node = circuit_->AddNode(
      std::make_unique<TopKOp>(types, std::move(keys), q.limit.value_or(INT64_MAX), q.offset.value_or(0),
                               std::move(partition), RankKind::kNone, circuit_->pool()),
      {node}, types);
  if (types.size() > width) {
    std::vector<BoundExprPtr> keep;
    for (size_t i = 0; i < width; ++i) keep.push_back(MakeColumn(static_cast<int>(i), schema.fields[i].type));
    types.resize(width);
    node = AddMap(nullptr, std::move(keep), node, types);
  }
  out_schema->fields.resize(width);
  return node;
}

int Planner::PlanQuery(const sql::Query& q, Schema* schema) {
  struct Depth {
    Planner* p;
    explicit Depth(Planner* pl) : p(pl) { ++p->query_depth_; }
    ~Depth() {
      if (--p->query_depth_ == 0) {
        p->ref_plans_.clear();
        p->cte_plans_.clear();
      }
    }
  } depth(this);
  const Plan* domain = domain_;  // a query in FROM or WITH sees no enclosing block's columns
  domain_ = nullptr;
  Plan p = PlanQueryBlock(q);
  domain_ = domain;
  bool hidden = false;
  for (const auto& c : p.scope.cols) hidden = hidden || c.hidden;
  if (hidden) {
    std::vector<BoundExprPtr> proj;
    Scope s;
    for (size_t i = 0; i < p.scope.cols.size(); ++i) {
      if (p.scope.cols[i].hidden) continue;
      proj.push_back(MakeColumn(static_cast<int>(i), p.scope.cols[i].type));
      s.cols.push_back(p.scope.cols[i]);
    }
    p.node = AddMap(nullptr, std::move(proj), p.node, Types(s));
    p.scope = std::move(s);
  }
  schema->fields.clear();
  for (const auto& c : p.scope.cols) schema->fields.push_back({c.name, c.type});
  return p.node;
}

size_t Planner::PushCtes(const sql::Query& q) {
  for (const auto& cte : q.with) {
    auto it = cte_plans_.find(&cte);
    if (it == cte_plans_.end()) {
      Schema schema;
      Plan p;
      p.node = PlanViewQuery(*cte.query, &schema);  // with its ORDER BY ... LIMIT, if any
      if (!cte.column_names.empty() && cte.column_names.size() != schema.size())
        ctx_.Error(cte.pos, fmt::format("WITH query '{}' names {} columns but its query has {}", cte.name,
                                        cte.column_names.size(), schema.size()));
      for (size_t i = 0; i < schema.size(); ++i)
        p.scope.cols.push_back(
            {cte.name, cte.column_names.empty() ? schema.fields[i].name : cte.column_names[i], schema.fields[i].type});
      it = cte_plans_.emplace(&cte, std::move(p)).first;
    }
    ctes_.emplace_back(cte.name, &it->second);
  }
  return q.with.size();
}

Planner::Plan Planner::PlanQueryBlock(const sql::Query& q) {
  size_t pushed = PushCtes(q);
  struct Pop {
    std::vector<std::pair<std::string, const Plan*>>* ctes;
    size_t n;
    ~Pop() { ctes->resize(ctes->size() - n); }
  } pop{&ctes_, pushed};
  if (q.select) return PlanSelect(*q.select);
  // A correlated set operation: each side is planned over the domain (its columns lead both
  // sides' rows), so the operation over whole rows is the operation per domain value.
  const Plan* domain = domain_;
  Plan l = PlanQueryBlock(*q.left);
  domain_ = domain;
  Plan r = PlanQueryBlock(*q.right);
  if (l.scope.cols.size() != r.scope.cols.size())
    ctx_.Error(q.right->pos, fmt::format("the two sides of a set operation have {} and {} columns", l.scope.cols.size(),
                                         r.scope.cols.size()));
  std::vector<SqlType> types;
  for (size_t i = 0; i < l.scope.cols.size(); ++i) {
    SqlType t = binder_.CommonType(l.scope.cols[i].type, r.scope.cols[i].type, q.pos);
    if (t.id == TypeId::kNull) t = SqlType::Of(TypeId::kInteger);
    types.push_back(t.WithNullable(l.scope.cols[i].type.nullable || r.scope.cols[i].type.nullable));
  }
  l = Cast(std::move(l), types, q.pos);
  r = Cast(std::move(r), types, q.pos);
  Plan out;
  out.scope = l.scope;
  for (auto& c : out.scope.cols) c.qualifier.clear();
  if (q.set_op != sql::SetOp::kUnion && q.set_all) {
    // Multiplicities min(l, r) / max(l - r, 0): one operator keeping both sides' counts.
    auto kind = q.set_op == sql::SetOp::kExcept ? BagSetOp::Kind::kExceptAll : BagSetOp::Kind::kIntersectAll;
    out.node = circuit_->AddNode(std::make_unique<BagSetOp>(kind), {l.node, r.node}, Types(out.scope));
    return out;
  }
  if (q.set_op != sql::SetOp::kUnion) return ExceptOrIntersect(std::move(l), std::move(r), q.set_op, q.pos);
  out.node = circuit_->AddNode(std::make_unique<UnionAllOp>(), {l.node, r.node}, Types(out.scope));
  if (!q.set_all) out.node = circuit_->AddNode(std::make_unique<DistinctOp>(), {out.node}, Types(out.scope));
  return out;
}

// EXCEPT / INTERSECT (set semantics; both sides already have the same column types). Rows match
// when every column is equal or both are NULL, so each column becomes two NULL-free join keys:
// (col IS NULL, COALESCE(col, <zero>)).
//   INTERSECT: DISTINCT(l) joined with DISTINCT(r) on all columns, keeping l's columns;
//   EXCEPT:    DISTINCT(l) LEFT JOIN (r, marker TRUE) on all columns, keeping the rows whose
//              marker is NULL (no match), i.e. an anti-join.
Planner::Plan Planner::ExceptOrIntersect(Plan l, Plan r, sql::SetOp op, Pos pos) {
  const bool except = op == sql::SetOp::kExcept;
  const size_t n = l.scope.cols.size();
  l.node = circuit_->AddNode(std::make_unique<DistinctOp>(), {l.node}, Types(l.scope));
  if (!except) r.node = circuit_->AddNode(std::make_unique<DistinctOp>(), {r.node}, Types(r.scope));
  int marker = -1;
  if (except) {
    std::vector<BoundExprPtr> proj;
    for (size_t i = 0; i < n; ++i) proj.push_back(MakeColumn(static_cast<int>(i), r.scope.cols[i].type));
    proj.push_back(MakeLiteral(Value::Int(1), SqlType::Of(TypeId::kBoolean, false)));
    marker = static_cast<int>(n);
    r.scope.cols.push_back({"", "", SqlType::Of(TypeId::kBoolean, false), true});
    r.node = AddMap(nullptr, std::move(proj), r.node, Types(r.scope));
  }
  auto is_null = [](int i, const SqlType& t) {
    std::vector<BoundExprPtr> args;
    args.push_back(MakeColumn(i, t));
    return MakeCall(ExprOp::kIsNull, SqlType::Of(TypeId::kBoolean, false), std::move(args));
  };
  auto or_zero = [](int i, const SqlType& t) {
    Value zero = t.phys() == PhysType::kF64   ? Value::Double(0)
                 : t.phys() == PhysType::kStr ? Value::String("")
                                              : Value::Int(0);
    std::vector<BoundExprPtr> args;
    args.push_back(MakeColumn(i, t));
    args.push_back(MakeLiteral(std::move(zero), t.WithNullable(false)));
    return MakeCall(ExprOp::kCoalesce, t.WithNullable(false), std::move(args));
  };
  std::vector<std::pair<BoundExprPtr, BoundExprPtr>> keys;
  for (size_t i = 0; i < n; ++i) {
    const int c = static_cast<int>(i);
    const SqlType& lt = l.scope.cols[i].type;
    const SqlType& rt = r.scope.cols[i].type;
    if (!lt.nullable && !rt.nullable) {
      keys.emplace_back(MakeColumn(c, lt), MakeColumn(c, rt));
    } else {
      keys.emplace_back(is_null(c, lt), is_null(c, rt));
      keys.emplace_back(or_zero(c, lt), or_zero(c, rt));
    }
  }
  Scope left_scope = l.scope;
  size_t left_width = 0;
  Plan j =
      Join(std::move(l), std::move(r), std::move(keys), /*pad_left=*/except, /*pad_right=*/false, pos, &left_width);
  if (except) {
    const int m = static_cast<int>(left_width) + marker;
    std::vector<BoundExprPtr> args;
    args.push_back(MakeColumn(m, j.scope.cols[m].type));
    j = Filter(std::move(j), MakeCall(ExprOp::kIsNull, SqlType::Of(TypeId::kBoolean, false), std::move(args)));
  }
  Plan out;
  std::vector<BoundExprPtr> proj;
  for (size_t i = 0; i < n; ++i) {
    ScopeColumn c = left_scope.cols[i];
    c.qualifier.clear();
    proj.push_back(MakeColumn(static_cast<int>(i), c.type));
    out.scope.cols.push_back(std::move(c));
  }
  out.node = AddMap(nullptr, std::move(proj), j.node, Types(out.scope));
  return out;
}

Planner::Plan Planner::Cast(Plan p, const std::vector<SqlType>& types, Pos pos) {
  bool same = true;
  for (size_t i = 0; i < types.size(); ++i) same = same && p.scope.cols[i].type.SameAs(types[i]);
  if (same) {
    for (size_t i = 0; i < types.size(); ++i) p.scope.cols[i].type = types[i];
    return p;
  }
  std::vector<BoundExprPtr> proj;
  for (size_t i = 0; i < types.size(); ++i) {
    proj.push_back(binder_.Coerce(MakeColumn(static_cast<int>(i), p.scope.cols[i].type), types[i], pos));
    p.scope.cols[i].type = types[i];
  }
  p.node = AddMap(nullptr, std::move(proj), p.node, Types(p.scope));
  return p;
}

Planner::Plan Planner::Filter(Plan p, BoundExprPtr pred) {
  if (IsTrueLiteral(*pred)) return p;
  if (!ContainsNow(*pred)) {
    p.node = AddMap(std::move(pred), std::vector<BoundExprPtr>{}, p.node, Types(p.scope));
    return p;
  }
  // Conditions reading NOW(): the monotone comparisons (`ts >= NOW() - INTERVAL 1 HOUR`) become
  // temporal filters, after a filter of the conditions not reading NOW(); the others (OR-ed,
  // `ts = NOW()`, `k > EXTRACT(HOUR FROM NOW())` ...) are one filter over the remaining rows
  // joined with the clock (AddMap).
  std::vector<BoundExprPtr> conj, general;
  std::vector<TemporalBound> temporal;
  std::function<void(BoundExprPtr)> split = [&](BoundExprPtr c) {
    if (c->op == ExprOp::kAnd) {
      for (auto& a : c->args) split(std::move(a));
    } else if (!ContainsNow(*c)) {
      conj.push_back(std::move(c));
    } else if (std::optional<TemporalBound> b = MatchTemporalBound(*c)) {
      temporal.push_back(std::move(*b));
    } else {
      general.push_back(std::move(c));
    }
  };
  split(std::move(pred));
  for (auto& c : conj) p = Filter(std::move(p), std::move(c));
  for (auto& b : temporal)
    p.node = circuit_->AddNode(std::make_unique<TemporalFilterOp>(Types(p.scope), std::move(b)), {p.node, ClockNode()},
                               Types(p.scope));
  if (general.empty()) return p;
  BoundExprPtr g = std::move(general[0]);
  for (size_t i = 1; i < general.size(); ++i) {
    std::vector<BoundExprPtr> args;
    const bool nullable = g->type.nullable || general[i]->type.nullable;
    args.push_back(std::move(g));
    args.push_back(std::move(general[i]));
    g = MakeCall(ExprOp::kAnd, SqlType::Of(TypeId::kBoolean, nullable), std::move(args));
  }
  std::vector<BoundExprPtr> keep;  // the rows' columns, not the clock's
  for (size_t i = 0; i < p.scope.cols.size(); ++i)
    keep.push_back(MakeColumn(static_cast<int>(i), p.scope.cols[i].type));
  p.node = AddMap(std::move(g), std::move(keep), p.node, Types(p.scope));
  return p;
}

int Planner::JoinClock(int input) {
  auto it = clock_joins_.find(input);
  if (it != clock_joins_.end()) return it->second;
  std::vector<PhysType> types = circuit_->node_types(input);
  const std::vector<PhysType> clock_types = {PhysType::kI64};
  auto join = std::make_unique<JoinOp>(types, clock_types, std::vector<int>{}, std::vector<int>{}, false, false);
  types.push_back(PhysType::kI64);
  int node = circuit_->AddNode(std::move(join), {input, ClockNode()}, types);
  clock_joins_[input] = node;
  return node;
}

int Planner::AddMap(BoundExprPtr pred, std::vector<BoundExprPtr> proj, int input, std::vector<PhysType> types) {
  bool now = pred && ContainsNow(*pred);
  for (const auto& e : proj) now = now || ContainsNow(*e);
  if (now) {
    if (proj.empty()) Fail(ErrorKind::kUsage, "internal error: a map reading NOW() needs its projection");
    const int col = static_cast<int>(circuit_->node_types(input).size());
    input = JoinClock(input);
    if (pred) pred = ReplaceNow(*pred, col);
    for (auto& e : proj) e = ReplaceNow(*e, col);
  }
  return circuit_->AddNode(std::make_unique<MapOp>(std::move(pred), std::move(proj), circuit_->pool()), {input},
                           std::move(types));
}

void Planner::KeyColumns(std::vector<std::pair<BoundExprPtr, BoundExprPtr>>& keys, Plan& left, Plan& right, Pos pos,
                         std::vector<int>* lk, std::vector<int>* rk) {
  std::vector<BoundExprPtr> lextra, rextra;
  auto place = [&](BoundExprPtr& e, const Plan& side, std::vector<BoundExprPtr>& extra, std::vector<int>* idx) {
    if (e->op == ExprOp::kColumn) {
      idx->push_back(e->column_index);
    } else {
      idx->push_back(static_cast<int>(side.scope.cols.size() + extra.size()));
      extra.push_back(std::move(e));
    }
  };
  for (auto& [a, b] : keys) {
    SqlType t = binder_.CommonType(a->type, b->type, pos);
    if (t.id == TypeId::kNull) t = SqlType::Of(TypeId::kInteger);
    a = binder_.Coerce(std::move(a), t.WithNullable(a->type.nullable), pos);
    b = binder_.Coerce(std::move(b), t.WithNullable(b->type.nullable), pos);
    place(a, left, lextra, lk);
    place(b, right, rextra, rk);
  }
  auto extend = [&](Plan& side, std::vector<BoundExprPtr>& extra) {
    if (extra.empty()) return;
    std::vector<BoundExprPtr> proj;
    for (size_t i = 0; i < side.scope.cols.size(); ++i)
      proj.push_back(MakeColumn(static_cast<int>(i), side.scope.cols[i].type));
    for (auto& e : extra) {
      side.scope.cols.push_back({"", "", e->type, true});
      proj.push_back(std::move(e));
    }
    side = Project(side, std::move(proj), side.scope.cols);
  };
  extend(left, lextra);
  extend(right, rextra);
}

Planner::Plan Planner::Join(Plan left, Plan right, std::vector<std::pair<BoundExprPtr, BoundExprPtr>> keys,
                            bool pad_left, bool pad_right, Pos pos, size_t* left_width) {
  std::vector<int> lk, rk;
  KeyColumns(keys, left, right, pos, &lk, &rk);
  Plan out;
  out.scope = left.scope;
  if (left_width) *left_width = left.scope.cols.size();
  for (auto c : right.scope.cols) out.scope.cols.push_back(c);
  if (pad_right)
    for (size_t i = 0; i < left.scope.cols.size(); ++i) out.scope.cols[i].type.nullable = true;
  if (pad_left)
    for (size_t i = left.scope.cols.size(); i < out.scope.cols.size(); ++i) out.scope.cols[i].type.nullable = true;
  out.node = circuit_->AddNode(
      std::make_unique<JoinOp>(Types(left.scope), Types(right.scope), lk, rk, pad_left, pad_right, circuit_->pool()),
      {left.node, right.node}, Types(out.scope));
  return out;
}

Planner::Plan Planner::AsofJoin(Plan left, Plan right, const sql::TableRef& t) {
  // Which side an expression reads: 1 left, 2 right, 3 both, 0 neither.
  auto side_of = [&](const Expr& e) {
    std::vector<const Expr*> refs;
    CollectRefs(e, &refs);
    int mask = 0;
    for (const Expr* r : refs) {
      int li = binder_.TryResolve(left.scope, r->qualifier, r->name, r->pos);
      int ri = binder_.TryResolve(right.scope, r->qualifier, r->name, r->pos);
      if (li >= 0 && ri >= 0)
        ctx_.Error(r->pos, fmt::format("column '{}' is ambiguous; qualify it with a table name", r->name));
      if (li < 0 && ri < 0) {
        Scope both = left.scope;
        for (auto col : right.scope.cols) both.cols.push_back(col);
        binder_.Resolve(both, r->qualifier, r->name, r->pos);
      }
      mask |= li >= 0 ? 1 : 2;
    }
    return mask;
  };
  const Expr& m = *t.match_condition;
  const bool cmp = m.kind == ExprKind::kBinary &&
                   (m.op == sql::Op::kGe || m.op == sql::Op::kGt || m.op == sql::Op::kLe || m.op == sql::Op::kLt);
  if (!cmp || side_of(*m.args[0]) + side_of(*m.args[1]) != 3 || side_of(*m.args[0]) == 3)
    ctx_.Error(m.pos,
               "an ASOF JOIN's MATCH_CONDITION compares a left expression with a right one (left.ts >= right.ts)");
  const bool left_first = side_of(*m.args[0]) == 1;
  const Expr& lm = *m.args[left_first ? 0 : 1];
  const Expr& rm = *m.args[left_first ? 1 : 0];
  sql::Op op = m.op;
  if (!left_first)
    op = op == sql::Op::kLe   ? sql::Op::kGe
         : op == sql::Op::kLt ? sql::Op::kGt
         : op == sql::Op::kGe ? sql::Op::kLe
                              : sql::Op::kLt;
  if (op != sql::Op::kGe && op != sql::Op::kGt)
    ctx_.Error(m.pos,
               "an ASOF JOIN matching a later right row (left.ts <= right.ts) is not supported; Feldera's form is "
               "left.ts >= right.ts");
  std::vector<std::pair<BoundExprPtr, BoundExprPtr>> pairs;  // the keys, then the match columns
  std::vector<const Expr*> conj;
  SplitAnd(t.on.get(), &conj);
  for (const Expr* c : conj) {
    if (ContainsSubquery(*c)) ctx_.Error(c->pos, "subqueries in a join's ON condition are not supported yet");
    bool ok = c->kind == ExprKind::kBinary && c->op == sql::Op::kEq;
    int ma = ok ? side_of(*c->args[0]) : 0, mb = ok ? side_of(*c->args[1]) : 0;
    if (!ok || !((ma == 1 && mb == 2) || (ma == 2 && mb == 1)))
      ctx_.Error(c->pos, "an ASOF JOIN's ON condition must be equalities between the two sides (l.k = r.k AND ...)");
    const Expr* le = ma == 1 ? c->args[0].get() : c->args[1].get();
    const Expr* re = ma == 1 ? c->args[1].get() : c->args[0].get();
    pairs.emplace_back(binder_.Bind(*le, left.scope), binder_.Bind(*re, right.scope));
  }
  pairs.emplace_back(binder_.Bind(lm, left.scope), binder_.Bind(rm, right.scope));
  {
    const auto& [a, b] = pairs.back();
    const SqlType ty = binder_.CommonType(a->type, b->type, m.pos);
    if (ty.id == TypeId::kRow || ty.id == TypeId::kArray || ty.id == TypeId::kBoolean)
      ctx_.Error(m.pos, "an ASOF JOIN's MATCH_CONDITION needs numbers, strings or times");
  }
  std::vector<int> lk, rk;
  KeyColumns(pairs, left, right, m.pos, &lk, &rk);
  const int lts = lk.back(), rts = rk.back();
  lk.pop_back();
  rk.pop_back();
  // Both match columns are encoded with one type (nullability aside).
  right.scope.cols[rts].type = left.scope.cols[lts].type.WithNullable(right.scope.cols[rts].type.nullable);
  std::vector<SqlType> ltypes, rtypes;
  for (const auto& c : left.scope.cols) ltypes.push_back(c.type);
  for (const auto& c : right.scope.cols) rtypes.push_back(c.type);
  const bool pad_left = t.join_type == sql::JoinType::kLeft;
  auto op_ptr = std::make_unique<AsofJoinOp>(ltypes, rtypes, lk, rk, lts, rts, op == sql::Op::kGt, pad_left);
  Plan out;
  out.scope = left.scope;
  for (auto c : right.scope.cols) {
    if (pad_left) c.type.nullable = true;
    out.scope.cols.push_back(c);
  }
  out.node = circuit_->AddNode(std::move(op_ptr), {left.node, right.node}, Types(out.scope));
  return out;
}

Planner::Plan Planner::OneRow() {
  if (constant_node_ < 0) {
    Batch one;
    one.weights.push_back(1);
    constant_node_ = circuit_->AddNode(std::make_unique<ConstantOp>(std::move(one)), {}, {});
  }
  Plan p;
  p.node = constant_node_;
  return p;
}

Planner::Plan Planner::Unnest(Plan left, const sql::TableRef& t, bool outer, const sql::Expr* on) {
  std::vector<BoundExprPtr> args;
  std::vector<ScopeColumn> cols;
  for (const auto& u : t.unnest) {
    BoundExprPtr a = binder_.Bind(*u, left.scope);
    if (a->type.id == TypeId::kNull)
      a = binder_.Coerce(std::move(a), SqlType::Array(SqlType::Of(TypeId::kInteger)), t.pos);
    if (a->type.id != TypeId::kArray && a->type.id != TypeId::kMap)
      ctx_.Error(u->pos, fmt::format("UNNEST needs an ARRAY or a MAP, not {}", a->type.WithNullable(true).ToString()));
    // Columns without a name in the query are EXPR$n (n counts the UNNEST's columns), as Calcite;
    // a single array of scalars is named by the alias, as PostgreSQL.
    auto unnamed = [&] { return fmt::format("EXPR${}", cols.size()); };
    const SqlType& et = (*a->type.fields)[0];
    if (a->type.id == TypeId::kMap) {
      cols.push_back({t.alias, unnamed(), et.WithNullable(true), false});
      cols.push_back({t.alias, unnamed(), (*a->type.fields)[1].WithNullable(true), false});
    } else if (et.id == TypeId::kRow) {
      for (size_t i = 0; i < et.fields->size(); ++i)
        cols.push_back({t.alias, et.FieldName(i), (*et.fields)[i].WithNullable(true), false});
    } else {
      cols.push_back(
          {t.alias, t.alias.empty() || t.unnest.size() > 1 ? unnamed() : t.alias, et.WithNullable(true), false});
    }
    args.push_back(std::move(a));
  }
  if (t.with_ordinality) cols.push_back({t.alias, "ORDINALITY", SqlType::Of(TypeId::kBigInt, outer), false});
  if (!t.column_names.empty()) {
    if (t.column_names.size() != cols.size())
      ctx_.Error(t.pos, fmt::format("UNNEST produces {} column{} but {} names are given", cols.size(),
                                    cols.size() == 1 ? "" : "s", t.column_names.size()));
    for (size_t i = 0; i < cols.size(); ++i) cols[i].name = t.column_names[i];
  }
  Plan out;
  out.scope = left.scope;
  for (auto& c : cols) out.scope.cols.push_back(std::move(c));
  BoundExprPtr cond;
  if (on) {
    if (ContainsSubquery(*on)) ctx_.Error(on->pos, "subqueries in a join's ON condition are not supported yet");
    cond = binder_.BindPredicate(*on, out.scope);
    if (IsTrueLiteral(*cond)) cond = nullptr;
  }
  // NOW() in the arguments or the condition reads the clock's column, joined after the input's
  // (AddMap does the same for maps); the operator does not copy it to its output.
  bool now = cond && ContainsNow(*cond);
  for (const auto& a : args) now = now || ContainsNow(*a);
  const size_t keep = left.scope.cols.size();
  int input = left.node;
  if (now) {
    input = JoinClock(input);
    for (auto& a : args) a = ReplaceNow(*a, static_cast<int>(keep));
    if (cond) cond = ReplaceNow(*cond, static_cast<int>(out.scope.cols.size()));
  }
  out.node = circuit_->AddNode(
      std::make_unique<UnnestOp>(std::move(args), t.with_ordinality, keep, std::move(cond), outer, Types(out.scope)),
      {input}, Types(out.scope));
  return out;
}

Planner::Plan Planner::PlanTableRef(const sql::TableRef& t) {
  // A FROM item reads nothing of its query, so one plan serves every look at it (the subquery
  // analysis plans FROM items before the subquery itself is planned).
  if (auto it = ref_plans_.find(&t); it != ref_plans_.end()) return it->second;
  Plan p = PlanTableRefUncached(t);
  ref_plans_.emplace(&t, p);
  return p;
}

Planner::Plan Planner::PlanTableRefUncached(const sql::TableRef& t) {
  switch (t.kind) {
    case sql::TableRef::Kind::kTable: {
      for (size_t i = ctes_.size(); i-- > 0;) {
        if (!EqualsIgnoreCase(ctes_[i].first, t.name)) continue;
        Plan p = *ctes_[i].second;
        for (auto& c : p.scope.cols) c.qualifier = t.alias.empty() ? ctes_[i].first : t.alias;
        return p;
      }
      for (const auto& [name, hint] : unavailable_)
        if (EqualsIgnoreCase(name, t.name)) ctx_.Error(t.pos, hint);
      int r = circuit_->FindRelation(t.name);
      if (r < 0) ctx_.Error(t.pos, fmt::format("unknown table or view '{}'", t.name));
      const Relation& rel = circuit_->relations()[r];
      Plan p;
      p.node = rel.node;
      std::string q = t.alias.empty() ? rel.name : t.alias;
      for (const auto& f : rel.schema.fields) p.scope.cols.push_back({q, f.name, f.type, false});
      return p;
    }
    case sql::TableRef::Kind::kSubquery: {
      if (!enclosing_.empty()) {
        std::vector<const Scope*> chain = enclosing_;
        std::vector<std::set<int>> used(chain.size());
        FreeRefs(*t.subquery, &chain, &used);
        for (const auto& u : used)
          if (!u.empty())
            ctx_.Error(t.pos,
                       "a subquery in FROM that reads the columns of an enclosing query (LATERAL) is not "
                       "supported yet");
      }
      Schema s;
      Plan p;
      p.node = PlanViewQuery(*t.subquery, &s);  // with its ORDER BY ... LIMIT, if any
      for (const auto& f : s.fields) p.scope.cols.push_back({t.alias, f.name, f.type, false});
      return p;
    }
    case sql::TableRef::Kind::kJoin:
      return PlanJoinRef(t);
    case sql::TableRef::Kind::kWindow:
      return PlanWindowRef(t);
    case sql::TableRef::Kind::kUnnest:  // alone, or first in FROM: over one row
      return Unnest(OneRow(), t);
  }
  ctx_.Error(t.pos, "unsupported FROM item");
}

// TABLE(TUMBLE(...)) / TABLE(HOP(...)) / TABLE(SESSION(...)): the input's columns, then
// window_start and window_end.
Planner::Plan Planner::PlanWindowRef(const sql::TableRef& t) {
  Plan in = PlanTableRef(*t.left);
  const int ts = binder_.Resolve(in.scope, "", t.using_cols[0], t.pos);
  const SqlType ts_type = in.scope.cols[ts].type;
  if (ts_type.id != TypeId::kTimestamp)
    ctx_.Error(t.pos, fmt::format("{}'s DESCRIPTOR column '{}' must be a TIMESTAMP, not {}", t.name, t.using_cols[0],
                                  ts_type.WithNullable(true).ToString()));
  // The interval arguments: constants, in microseconds, or all in months (calendar-aligned
  // windows; not for SESSION).
  std::vector<int64_t> v;
  bool months = false;
  for (size_t i = 0; i < t.window_args.size(); ++i) {
    const auto& a = t.window_args[i];
    BoundExprPtr b = binder_.Bind(*a, Scope{});
    const bool m = b->type.id == TypeId::kIntervalYearMonth;
    if (i == 0) months = m;
    if (m && t.name == "SESSION") ctx_.Error(a->pos, "SESSION needs a day-time INTERVAL gap, not months or years");
    if (!b->type.IsInterval() || !b->IsConstant())
      ctx_.Error(a->pos, fmt::format("{} needs a constant INTERVAL here", t.name));
    if (m != months)
      ctx_.Error(a->pos, fmt::format("{}'s intervals must be all in months/years or all in days or less", t.name));
    Value x = EvaluateConstant(*b);
    if (x.IsNull()) ctx_.Error(a->pos, fmt::format("{} needs a non-NULL INTERVAL here", t.name));
    v.push_back(x.i);
  }
  const bool hop = t.name == "HOP", session = t.name == "SESSION";
  const int64_t slide = hop ? v[0] : 0, size = hop ? v[1] : v[0];
  const int64_t offset = v.size() > (hop ? 2u : 1u) ? v.back() : 0;
  if (size <= 0 || (hop && slide <= 0))
    ctx_.Error(t.window_args[0]->pos, fmt::format("{}'s sizes must be positive", t.name));
  if (hop && size / slide > 100000)
    ctx_.Error(t.window_args[0]->pos, "HOP puts each row in more than 100000 windows; use a larger slide");
  Plan out;
  std::string q = t.alias.empty() ? (t.left->kind == sql::TableRef::Kind::kTable ? t.left->name : "") : t.alias;
  for (const auto& c : in.scope.cols) {
    ScopeColumn col = c;
    if (!c.hidden) col.qualifier = q;
    out.scope.cols.push_back(col);
  }
  SqlType wt = SqlType::Of(TypeId::kTimestamp, ts_type.nullable);
  out.scope.cols.push_back({q, "window_start", wt, false});
  out.scope.cols.push_back({q, "window_end", wt, false});
  if (session) {
    std::vector<int> keys;
    for (const auto& k : t.window_keys) keys.push_back(binder_.Resolve(in.scope, "", k, t.pos));
    std::vector<PhysType> phys;
    for (const auto& c : in.scope.cols) phys.push_back(c.type.phys());
    out.node = circuit_->AddNode(std::make_unique<SessionOp>(std::move(phys), ts, std::move(keys), size), {in.node},
                                 Types(out.scope));
  }
  if (hop || session) {
    if (hop)
      out.node =
          circuit_->AddNode(std::make_unique<HopOp>(ts, slide, size, offset, months), {in.node}, Types(out.scope));
    for (size_t i = out.scope.cols.size() - 2; i < out.scope.cols.size(); ++i) out.scope.cols[i].type.nullable = false;
    return out;
  }
  // TUMBLE: a map adding the bounds of the one window holding each row.
  std::vector<BoundExprPtr> proj;
  for (size_t i = 0; i < in.scope.cols.size(); ++i)
    proj.push_back(MakeColumn(static_cast<int>(i), in.scope.cols[i].type));
  const SqlType dt = months ? SqlType::Interval(IntervalField::kMonth, IntervalField::kMonth, false)
                            : SqlType::Interval(IntervalField::kSecond, IntervalField::kSecond, false);
  std::vector<BoundExprPtr> args;
  args.push_back(MakeColumn(ts, ts_type));
  args.push_back(MakeLiteral(Value::Int(size), dt));
  args.push_back(MakeLiteral(Value::Int(offset), dt));
  BoundExprPtr start =
      MakeTimeCall(TimeFn::kWindowStart, months ? TimeUnit::kMonth : TimeUnit::kMicrosecond, wt, std::move(args));
  std::vector<BoundExprPtr> add;
  add.push_back(start->Clone());
  add.push_back(MakeLiteral(Value::Int(size), dt));
  proj.push_back(std::move(start));
  proj.push_back(months ? MakeTimeCall(TimeFn::kAddMonths, TimeUnit::kMonth, wt, std::move(add))
                        : MakeCall(ExprOp::kAdd, wt, std::move(add)));
  out.node = AddMap(nullptr, std::move(proj), in.node, Types(out.scope));
  return out;
}

bool Planner::OuterOnReadsEnclosing(const sql::TableRef& t) {
  if (t.kind != sql::TableRef::Kind::kJoin ||
      (t.join_type != sql::JoinType::kLeft && t.join_type != sql::JoinType::kRight &&
       t.join_type != sql::JoinType::kFull) ||
      t.natural || !t.using_cols.empty() || t.match_condition || !t.on ||
      t.right->kind == sql::TableRef::Kind::kUnnest || IsLateral(*t.right))
    return false;
  std::vector<const Expr*> refs;
  CollectRefs(*t.on, &refs);
  bool outer = false;
  std::set<const Expr*> subqueries;
  SubqueryNodes(*t.on, &subqueries);
  for (const Expr* q : subqueries) outer = outer || ReadsEnclosingQuery(*q->subquery);
  for (const Expr* r : refs) {
    if (!ReadsEnclosing(*r)) continue;
    outer = outer || (binder_.TryResolve(PlanTableRef(*t.left).scope, r->qualifier, r->name, r->pos) < 0 &&
                      binder_.TryResolve(PlanTableRef(*t.right).scope, r->qualifier, r->name, r->pos) < 0);
  }
  return outer;
}

Planner::Plan Planner::RightFullOverDomain(const Plan& domain, const sql::TableRef& t) {
  const bool full = t.join_type == sql::JoinType::kFull;
  const size_t k = domain.scope.cols.size();
  Plan l = Join(domain, PlanTableRef(*t.left), {}, false, false, t.pos);
  {
    std::vector<BoundExprPtr> proj;
    std::vector<ScopeColumn> cols = l.scope.cols;
    for (size_t i = 0; i < cols.size(); ++i) proj.push_back(MakeColumn(static_cast<int>(i), cols[i].type));
    proj.push_back(BoolLiteral(true));  // marks the rows that have a left side
    cols.push_back({"", "", BoolType(false), true});
    l = Project(l, std::move(proj), std::move(cols));
  }
  const size_t marker = l.scope.cols.size() - 1;
  Plan r = Join(domain, PlanTableRef(*t.right), {}, false, false, t.pos);
  for (size_t i = 0; i < k; ++i) r.scope.cols[i].hidden = true;  // the ON condition reads the left's
  const size_t r_width = r.scope.cols.size();
  std::vector<int> dc;
  for (size_t i = 0; i < k; ++i) dc.push_back(static_cast<int>(i));
  // The domain keys become hidden columns of each side first, so the join adds none and the
  // right side's columns end its output.
  std::vector<std::pair<BoundExprPtr, BoundExprPtr>> keys;
  {
    auto pairs = NullSafeKeys(l.scope, dc, r.scope, dc);
    std::vector<BoundExprPtr> lk, rk;
    for (auto& [a, b] : pairs) {
      lk.push_back(std::move(a));
      rk.push_back(std::move(b));
    }
    auto extend = [&](Plan& side, std::vector<BoundExprPtr> exprs) {
      std::vector<BoundExprPtr> proj, refs;
      std::vector<ScopeColumn> cols = side.scope.cols;
      for (size_t i = 0; i < cols.size(); ++i) proj.push_back(MakeColumn(static_cast<int>(i), cols[i].type));
      for (auto& e : exprs) {
        refs.push_back(MakeColumn(static_cast<int>(cols.size()), e->type));
        cols.push_back({"", "", e->type, true});
        proj.push_back(std::move(e));
      }
      side = Project(side, std::move(proj), std::move(cols));
      return refs;
    };
    auto lr = extend(l, std::move(lk));
    auto rr = extend(r, std::move(rk));
    for (size_t i = 0; i < lr.size(); ++i) keys.emplace_back(std::move(lr[i]), std::move(rr[i]));
  }
  const size_t nr = r.scope.cols.size();
  Plan j = PlanJoinRef(t, &l, &r, std::move(keys));
  const size_t rs = j.scope.cols.size() - nr;  // the right side's first column
  std::vector<BoundExprPtr> proj;
  std::vector<ScopeColumn> cols;
  for (size_t i = 0; i < k; ++i) {
    const int ri = static_cast<int>(rs + i);
    BoundExprPtr d = MakeColumn(ri, j.scope.cols[ri].type);
    if (full) {
      std::vector<BoundExprPtr> args;
      args.push_back(Call1(ExprOp::kIsNotNull, BoolType(false), MakeColumn(static_cast<int>(marker), BoolType(true))));
      args.push_back(MakeColumn(static_cast<int>(i), j.scope.cols[i].type));
      args.push_back(std::move(d));
      d = MakeCall(ExprOp::kCase, domain.scope.cols[i].type.WithNullable(true), std::move(args));
      d->has_else = true;
    }
    d->type.nullable = domain.scope.cols[i].type.nullable;
    proj.push_back(std::move(d));
    cols.push_back(domain.scope.cols[i]);
  }
  for (size_t i = k; i < marker; ++i) {
    proj.push_back(MakeColumn(static_cast<int>(i), j.scope.cols[i].type));
    cols.push_back(j.scope.cols[i]);
  }
  for (size_t i = rs + k; i < rs + r_width; ++i) {
    proj.push_back(MakeColumn(static_cast<int>(i), j.scope.cols[i].type));
    cols.push_back(j.scope.cols[i]);
  }
  return Project(j, std::move(proj), std::move(cols));
}

Planner::Plan Planner::PlanJoinRef(const sql::TableRef& t, const Plan* left_plan, const Plan* right_plan,
                                   std::vector<std::pair<BoundExprPtr, BoundExprPtr>> extra_keys) {
  // An UNNEST that reads no column (of t or an enclosing query) is a constant relation: any join
  // takes it as its right side. One that reads t's columns is a flat-map of t.
  bool reads = false;
  if (t.right->kind == sql::TableRef::Kind::kUnnest) {
    std::vector<const Expr*> refs;
    for (const auto& u : t.right->unnest) CollectRefs(*u, &refs);
    reads = !refs.empty();
  }
  const bool plain = t.join_type == sql::JoinType::kCross || t.join_type == sql::JoinType::kInner ||
                     t.join_type == sql::JoinType::kLeft;
  if (t.right->kind == sql::TableRef::Kind::kUnnest &&
      (reads || (plain && !t.natural && t.using_cols.empty() && !t.match_condition))) {
    // t [CROSS | INNER | LEFT] JOIN UNNEST(t.a): a flat-map of the left side.
    if (t.join_type != sql::JoinType::kCross && t.join_type != sql::JoinType::kInner &&
        t.join_type != sql::JoinType::kLeft)
      ctx_.Error(t.pos, "RIGHT and FULL joins with an UNNEST of the left side's columns are not supported yet");
    if (t.natural || !t.using_cols.empty())
      ctx_.Error(t.pos, "NATURAL or USING joins with an UNNEST of the left side's columns are not supported yet");
    if (t.match_condition)
      ctx_.Error(t.asof_pos, "ASOF joins with an UNNEST of the left side's columns are not supported yet");
    if (t.join_type == sql::JoinType::kLeft) return Unnest(PlanTableRef(*t.left), *t.right, true, t.on.get());
    Plan p = Unnest(PlanTableRef(*t.left), *t.right);
    if (t.on) {
      if (ContainsSubquery(*t.on)) ctx_.Error(t.on->pos, "subqueries in a join's ON condition are not supported yet");
      p = Filter(std::move(p), binder_.BindPredicate(*t.on, p.scope));
    }
    return p;
  }
  // A LATERAL subquery that reads no column of its left side (nor of an enclosing query) is an
  // ordinary one: it joins any way.
  bool lateral = IsLateral(*t.right);
  if (lateral) {
    std::vector<const Scope*> chain = enclosing_;
    Plan l = PlanTableRef(*t.left);
    chain.push_back(&l.scope);
    std::vector<std::set<int>> used(chain.size());
    FreeRefs(*t.right->subquery, &chain, &used);
    lateral = false;
    for (const auto& u : used) lateral = lateral || !u.empty();
  }
  if (lateral) {
    if (t.join_type != sql::JoinType::kCross && t.join_type != sql::JoinType::kInner &&
        t.join_type != sql::JoinType::kLeft)
      ctx_.Error(t.pos,
                 "a LATERAL subquery that reads the columns of the left side joins only with CROSS, INNER or LEFT "
                 "JOIN (as in PostgreSQL: the left side's rows are not all there for a RIGHT or FULL JOIN)");
    if (t.match_condition) ctx_.Error(t.asof_pos, "ASOF joins with a LATERAL subquery are not supported yet");
    if (t.natural || !t.using_cols.empty()) return LateralUsing(t, left_plan);
    return LateralJoin(left_plan ? *left_plan : PlanTableRef(*t.left), *t.right, t.join_type == sql::JoinType::kLeft,
                       t.on.get(), t.pos);
  }
  Plan left = left_plan ? *left_plan : PlanTableRef(*t.left);
  Plan right = right_plan ? *right_plan : PlanTableRef(*t.right);
  if (t.match_condition) return AsofJoin(std::move(left), std::move(right), t);
  if (t.join_type == sql::JoinType::kCross) return Join(std::move(left), std::move(right), {}, false, false, t.pos);
  const bool pad_left = t.join_type == sql::JoinType::kLeft || t.join_type == sql::JoinType::kFull;
  const bool pad_right = t.join_type == sql::JoinType::kRight || t.join_type == sql::JoinType::kFull;

  std::vector<std::pair<BoundExprPtr, BoundExprPtr>> keys = std::move(extra_keys);
  std::vector<std::string> using_cols = t.using_cols;
  if (t.natural) {
    for (const auto& lc : left.scope.cols)
      if (lc.InStar("") && binder_.TryResolve(right.scope, "", lc.name, t.pos) >= 0) using_cols.push_back(lc.name);
  }
  std::vector<std::pair<int, int>> using_idx;  // (left index, right index)
  for (const auto& name : using_cols) {
    int li = binder_.Resolve(left.scope, "", name, t.pos);
    int ri = binder_.Resolve(right.scope, "", name, t.pos);
    for (const auto& [pl, pr] : using_idx)
      if (pl == li) ctx_.Error(t.pos, fmt::format("column '{}' appears twice in USING", name));
    keys.emplace_back(MakeColumn(li, left.scope.cols[li].type), MakeColumn(ri, right.scope.cols[ri].type));
    using_idx.emplace_back(li, ri);
  }
  std::vector<const Expr*> conj;
  SplitAnd(t.on.get(), &conj);
  std::vector<BoundExprPtr> after;
  std::vector<const Expr*> after_subq;  // conjuncts with subqueries: planned over the matches
  std::vector<const Expr*> residual;
  for (const Expr* c : conj) {
    if (ContainsSubquery(*c)) {
      (pad_left || pad_right ? residual : after_subq).push_back(c);
      continue;
    }
    std::vector<const Expr*> refs;
    CollectRefs(*c, &refs);
    auto side_of = [&](const Expr* e) {
      std::vector<const Expr*> rs;
      CollectRefs(*e, &rs);
      int mask = 0;
      for (const Expr* r : rs) {
        int li = binder_.TryResolve(left.scope, r->qualifier, r->name, r->pos);
        int ri = binder_.TryResolve(right.scope, r->qualifier, r->name, r->pos);
        if (li >= 0 && ri >= 0)
          ctx_.Error(r->pos, fmt::format("column '{}' is ambiguous; qualify it with a table name", r->name));
        if (li < 0 && ri < 0) {
          if (ReadsEnclosing(*r))
            ctx_.Error(r->pos,
                       "a join's ON condition that reads the columns of an enclosing query is not "
                       "supported yet");
          Scope both = left.scope;
          for (auto col : right.scope.cols) both.cols.push_back(col);
          binder_.Resolve(both, r->qualifier, r->name, r->pos);
        }
        mask |= li >= 0 ? 1 : 2;
      }
      return mask;
    };
    int mask = side_of(c);
    if (c->kind == ExprKind::kBinary && c->op == sql::Op::kEq) {
      int ma = side_of(c->args[0].get()), mb = side_of(c->args[1].get());
      if ((ma == 1 && mb == 2) || (ma == 2 && mb == 1)) {
        const Expr* le = ma == 1 ? c->args[0].get() : c->args[1].get();
        const Expr* re = ma == 1 ? c->args[1].get() : c->args[0].get();
        keys.emplace_back(binder_.Bind(*le, left.scope), binder_.Bind(*re, right.scope));
        continue;
      }
    }
    if (mask == 2 && !pad_right) {
      right = Filter(std::move(right), binder_.BindPredicate(*c, right.scope));
    } else if (mask == 1 && !pad_left) {
      left = Filter(std::move(left), binder_.BindPredicate(*c, left.scope));
    } else if (!pad_left && !pad_right) {
      Scope both = left.scope;
      for (auto col : right.scope.cols) both.cols.push_back(col);
      after.push_back(binder_.BindPredicate(*c, both));
    } else {
      residual.push_back(c);  // checked on each match of the outer join
    }
  }
  std::vector<SqlType> left_types, right_types;
  for (const auto& [li, ri] : using_idx) {
    left_types.push_back(left.scope.cols[li].type);
    right_types.push_back(right.scope.cols[ri].type);
  }
  size_t left_width = 0;  // Join may append hidden key columns to the left side
  Plan out;
  if (residual.empty()) {
    out = Join(std::move(left), std::move(right), std::move(keys), pad_left, pad_right, t.pos, &left_width);
  } else {
    left_width = left.scope.cols.size();
    out = GeneralOuterJoin(std::move(left), std::move(right), std::move(keys), residual, pad_left, pad_right, t.pos);
  }
  for (auto& pred : after) out = Filter(std::move(out), std::move(pred));
  for (const Expr* c : after_subq) out = FilterWithSubqueries(std::move(out), *c);
  if (using_idx.empty()) return out;
  return MergeUsing(std::move(out), using_idx, left_types, right_types, left_width, pad_left, pad_right, t.pos);
}

// t = left [LEFT] JOIN LATERAL (q) s USING (c, ...) or NATURAL: the LATERAL join ON left.c = s.c
// AND ..., then the merged columns as for tables.
Planner::Plan Planner::LateralUsing(const sql::TableRef& t, const Plan* left_plan) {
  Plan left = left_plan ? *left_plan : PlanTableRef(*t.left);
  const std::string& alias = t.right->alias;
  if (alias.empty()) ctx_.Error(t.right->pos, "a LATERAL subquery joined with USING or NATURAL needs an alias");
  std::vector<std::string> names = t.using_cols;
  if (t.natural) {
    std::vector<const Scope*> chain = enclosing_;
    chain.push_back(&left.scope);
    std::vector<std::set<int>> used(chain.size());
    Scope right;
    for (auto& c : SyntacticColumns(*t.right->subquery, alias, &chain, &used)) right.cols.push_back(std::move(c));
    for (const auto& lc : left.scope.cols)
      if (lc.InStar("") && binder_.TryResolve(right, "", lc.name, t.pos) >= 0) names.push_back(lc.name);
  }
  auto node = [&](ExprKind kind) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->pos = t.pos;
    return e;
  };
  auto ref = [&](const std::string& qualifier, const std::string& name) {
    auto e = node(ExprKind::kColumnRef);
    e->qualifier = qualifier;
    e->name = name;
    return e;
  };
  std::vector<int> lidx;
  sql::ExprPtr on;
  for (const auto& name : names) {
    const int li = binder_.Resolve(left.scope, "", name, t.pos);
    if (std::find(lidx.begin(), lidx.end(), li) != lidx.end())
      ctx_.Error(t.pos, fmt::format("column '{}' appears twice in USING", name));
    lidx.push_back(li);
    const ScopeColumn& lc = left.scope.cols[li];
    if (lc.qualifier.empty())
      ctx_.Error(t.pos, fmt::format("USING or NATURAL with a LATERAL subquery over a merged USING column ('{}') of "
                                    "its left side is not supported yet",
                                    name));
    auto eq = node(ExprKind::kBinary);
    eq->op = sql::Op::kEq;
    eq->args.push_back(ref(lc.qualifier, lc.name));
    eq->args.push_back(ref(alias, name));
    if (on) {
      auto both = node(ExprKind::kBinary);
      both->op = sql::Op::kAnd;
      both->args.push_back(std::move(on));
      both->args.push_back(std::move(eq));
      on = std::move(both);
    } else {
      on = std::move(eq);
    }
  }
  const bool pad_left = t.join_type == sql::JoinType::kLeft;
  const size_t nl = left.scope.cols.size();
  std::vector<SqlType> left_types;
  for (int li : lidx) left_types.push_back(left.scope.cols[li].type);
  Plan out = LateralJoin(std::move(left), *t.right, pad_left, on.get(), t.pos);
  Scope right;
  for (size_t i = nl; i < out.scope.cols.size(); ++i) right.cols.push_back(out.scope.cols[i]);
  std::vector<std::pair<int, int>> using_idx;
  std::vector<SqlType> right_types;
  for (size_t n = 0; n < names.size(); ++n) {
    const int ri = binder_.Resolve(right, "", names[n], t.pos);
    using_idx.emplace_back(lidx[n], ri);
    right_types.push_back(right.cols[ri].type);
  }
  if (using_idx.empty()) return out;
  return MergeUsing(std::move(out), using_idx, left_types, right_types, nl, pad_left, false, t.pos);
}

Planner::Plan Planner::MergeUsing(Plan out, const std::vector<std::pair<int, int>>& using_idx,
                                  const std::vector<SqlType>& left_types, const std::vector<SqlType>& right_types,
                                  size_t left_width, bool pad_left, bool pad_right, Pos pos) {
  // USING / NATURAL: the merged columns come first, then the left's other columns, then the
  // right's. A merged column is the left's value (inner, LEFT JOIN), the right's (RIGHT JOIN) or
  // the one that is not NULL (FULL JOIN). `t.a` still names each side's own column.
  Plan merged;
  std::vector<BoundExprPtr> proj;
  for (size_t k = 0; k < using_idx.size(); ++k) {
    const int li = using_idx[k].first, ri = static_cast<int>(left_width) + using_idx[k].second;
    SqlType common = binder_.CommonType(left_types[k], right_types[k], pos);
    if (common.id == TypeId::kNull) common = SqlType::Of(TypeId::kInteger);
    auto side = [&](int i) {
      const SqlType& ty = out.scope.cols[i].type;
      return binder_.Coerce(MakeColumn(i, ty), common.WithNullable(ty.nullable), pos);
    };
    BoundExprPtr e;
    if (pad_left && pad_right) {
      std::vector<BoundExprPtr> args;
      args.push_back(side(li));
      args.push_back(side(ri));
      bool nullable = out.scope.cols[li].type.nullable && out.scope.cols[ri].type.nullable;
      e = MakeCall(ExprOp::kCoalesce, common.WithNullable(nullable), std::move(args));
    } else {
      e = side(pad_right ? ri : li);
    }
    merged.scope.cols.push_back({"", out.scope.cols[li].name, e->type, false});
    proj.push_back(std::move(e));
  }
  for (size_t i = 0; i < out.scope.cols.size(); ++i) {
    ScopeColumn c = out.scope.cols[i];
    for (const auto& [li, ri] : using_idx)
      if (static_cast<int>(i) == li || i == left_width + ri) c.qualified_only = true;
    proj.push_back(MakeColumn(static_cast<int>(i), c.type));
    merged.scope.cols.push_back(std::move(c));
  }
  merged.node = AddMap(nullptr, std::move(proj), out.node, Types(merged.scope));
  return merged;
}

Planner::Plan Planner::PlanFrom(const std::vector<std::unique_ptr<sql::TableRef>>& from,
                                const std::vector<const Expr*>& conj, const Plan* domain,
                                std::vector<const Expr*>* subq_conj) {
  std::vector<Plan> items;
  std::vector<Pos> item_pos;
  bool domain_first = domain != nullptr;
  if (domain) {
    items.push_back(*domain);
    item_pos.push_back(from.empty() ? Pos{} : from[0]->pos);
  }
  std::vector<const Expr*> rest = conj;  // the conjuncts no joined prefix took
  // In a correlated subquery, an inner join whose ON condition reads the enclosing query's
  // columns is planned as its items with the ON conjuncts in WHERE (the same rows).
  std::vector<const sql::TableRef*> refs;
  for (const auto& t : from) {
    std::vector<const sql::TableRef*> flat;
    std::vector<const Expr*> ons;
    FlattenInner(*t, &flat, &ons);
    bool outer = false;
    for (const Expr* c : ons) {
      std::vector<const Expr*> rs;
      CollectRefs(*c, &rs);
      for (const Expr* r : rs) outer = outer || (domain && ReadsEnclosing(*r));
      // (A subquery may read the enclosing query's columns: planned like WHERE's.)
      outer = outer || (domain && ContainsSubquery(*c));
    }
    if (!outer) {
      refs.push_back(t.get());
      continue;
    }
    refs.insert(refs.end(), flat.begin(), flat.end());
    for (const Expr* c : ons) (ContainsSubquery(*c) ? *subq_conj : rest).push_back(c);
  }
  for (size_t ti = 0; ti < refs.size(); ++ti) {
    const sql::TableRef* t = refs[ti];
    if (t->kind == sql::TableRef::Kind::kUnnest && !items.empty() && !(domain_first && items.size() == 1)) {
      // `FROM t, UNNEST(t.a)`: a flat-map of the FROM item before it.
      items.back() = Unnest(std::move(items.back()), *t);
      continue;
    }
    // A subquery that reads the enclosing query's columns is joined like a LATERAL one (seeing
    // only those of the items before it).
    const bool correlated_ref =
        !IsLateral(*t) && t->kind == sql::TableRef::Kind::kSubquery && domain && ReadsEnclosingQuery(*t->subquery);
    // A LEFT JOIN whose ON condition reads the enclosing query's columns: its left side joined
    // with the items before it (the domain among them) first, so the condition sees them.
    // So is a JOIN LATERAL (INNER, CROSS or LEFT) whose subquery reads the enclosing query.
    const bool lateral_outer = domain && t->kind == sql::TableRef::Kind::kJoin && IsLateral(*t->right) &&
                               t->join_type != sql::JoinType::kRight && t->join_type != sql::JoinType::kFull &&
                               ReadsEnclosingQuery(*t->right->subquery);
    const bool outer_on = domain && (OuterOnReadsEnclosing(*t) || lateral_outer);
    if (outer_on && (t->join_type == sql::JoinType::kRight || t->join_type == sql::JoinType::kFull)) {
      // A RIGHT or FULL JOIN: each side is joined with the domain (the ON condition reads the
      // left's copy of it), and the result takes the domain's place.
      if (!domain_first || items.size() != 1)
        ctx_.Error(t->pos,
                   "a RIGHT or FULL JOIN whose ON condition reads the columns of an enclosing query after other "
                   "FROM items is not supported yet");
      items[0] = RightFullOverDomain(items[0], *t);
      domain_first = false;
      continue;
    }
    if (outer_on) {
      items.push_back(PlanTableRef(*t->left));
      item_pos.push_back(t->left->pos);
    }
    if ((IsLateral(*t) || correlated_ref || outer_on) && !items.empty()) {
      // `FROM a, b, LATERAL (q)`: the items before q are joined first (with the conjuncts that
      // read only them, and no column of a later item has the name of), then q over them.
      Plan left;
      if (items.size() == 1) {
        left = std::move(items[0]);
      } else {
        Scope later;
        std::vector<const Scope*> chain = enclosing_;
        std::vector<std::set<int>> used(chain.size());
        for (size_t j = ti; j < refs.size(); ++j) {
          if (j == ti && outer_on && IsLateral(*t->right)) {
            for (auto& c : SyntacticColumns(*t->right->subquery, t->right->alias, &chain, &used))
              later.cols.push_back(std::move(c));
          } else if (j == ti && outer_on) {
            for (auto& c : PlanTableRef(*t->right).scope.cols) later.cols.push_back(std::move(c));
          } else if (refs[j]->kind == sql::TableRef::Kind::kSubquery) {
            for (auto& c : SyntacticColumns(*refs[j]->subquery, refs[j]->alias, &chain, &used))
              later.cols.push_back(std::move(c));
          } else if (refs[j]->kind != sql::TableRef::Kind::kUnnest) {
            for (auto& c : PlanTableRef(*refs[j]).scope.cols) later.cols.push_back(std::move(c));
          }
        }
        std::vector<const Expr*> mine, others;
        for (const Expr* c : rest) {
          std::vector<const Expr*> rs;
          CollectRefs(*c, &rs);
          bool ok = true;
          for (const Expr* r : rs) {
            bool found = false;
            for (const auto& it : items)
              found = found || binder_.TryResolve(it.scope, r->qualifier, r->name, r->pos) >= 0;
            ok = ok && found && binder_.TryResolve(later, r->qualifier, r->name, r->pos) < 0;
          }
          (ok ? mine : others).push_back(c);
        }
        left = JoinItems(std::move(items), std::move(item_pos), mine, domain_first);
        rest = std::move(others);
      }
      Pos at = item_pos.empty() ? t->pos : item_pos[0];
      items.clear();
      item_pos.clear();
      items.push_back(outer_on ? PlanJoinRef(*t, &left) : LateralJoin(std::move(left), *t, false, nullptr, t->pos));
      item_pos.push_back(at);
      domain_first = false;
      continue;
    }
    items.push_back(PlanTableRef(*t));
    item_pos.push_back(t->pos);
  }
  return JoinItems(std::move(items), std::move(item_pos), rest, domain_first);
}

Planner::Plan Planner::JoinItems(std::vector<Plan> items, std::vector<Pos> item_pos,
                                 const std::vector<const Expr*>& conj, bool domain_first) {
  const bool domain = domain_first;
  if (items.size() == 1) {
    for (const Expr* c : conj) items[0] = Filter(std::move(items[0]), binder_.BindPredicate(*c, items[0].scope));
    return std::move(items[0]);
  }
  // Which FROM items each expression reads.
  auto owners = [&](const Expr& e) {
    std::vector<const Expr*> refs;
    CollectRefs(e, &refs);
    std::set<int> out;
    for (const Expr* r : refs) {
      int owner = -1;
      for (size_t i = domain ? 1 : 0; i < items.size(); ++i) {
        if (binder_.TryResolve(items[i].scope, r->qualifier, r->name, r->pos) < 0) continue;
        if (owner >= 0)
          ctx_.Error(r->pos, fmt::format("column '{}' is ambiguous; qualify it with a table name", r->name));
        owner = static_cast<int>(i);
      }
      // The enclosing block's columns (a correlated subquery's domain) only when no FROM item
      // of the subquery has the name.
      if (owner < 0 && domain && binder_.TryResolve(items[0].scope, r->qualifier, r->name, r->pos) >= 0) owner = 0;
      if (owner < 0) {
        Scope all;
        for (const auto& it : items)
          for (auto col : it.scope.cols) all.cols.push_back(col);
        binder_.Resolve(all, r->qualifier, r->name, r->pos);
      }
      out.insert(owner);
    }
    return out;
  };
  struct Conjunct {
    const Expr* e;
    std::set<int> items;
    int a = -1, b = -1;  // equi-join: the items of the two sides
    bool used = false;
  };
  std::vector<Conjunct> cs;
  for (const Expr* c : conj) {
    Conjunct k{c, owners(*c)};
    if (k.items.size() == 1) {
      int i = *k.items.begin();
      items[i] = Filter(std::move(items[i]), binder_.BindPredicate(*c, items[i].scope));
      continue;
    }
    if (c->kind == ExprKind::kBinary && c->op == sql::Op::kEq) {
      auto oa = owners(*c->args[0]), ob = owners(*c->args[1]);
      if (oa.size() == 1 && ob.size() == 1 && *oa.begin() != *ob.begin()) {
        k.a = *oa.begin();
        k.b = *ob.begin();
      }
    }
    cs.push_back(k);
  }
  // Join order: grow one connected component of the equi-join graph at a time, each next item
  // one that an equality links to what is joined already; cross products only between whole
  // components. (Crossing in an item that an equality with a later item would filter can make
  // the intermediate result orders of magnitude larger than the answer.)
  struct Part {
    Plan plan;
    std::vector<int> owner;  // per column: its FROM item (-1: a hidden join key column)
    std::vector<bool> in;    // the FROM items it holds
  };
  std::vector<bool> taken(items.size(), false);
  auto item_part = [&](int i) {
    Part p;
    p.plan = std::move(items[i]);
    p.owner.assign(p.plan.scope.cols.size(), i);
    p.in.assign(items.size(), false);
    p.in[i] = true;
    taken[i] = true;
    return p;
  };
  auto combine = [&](Part l, Part r, std::vector<std::pair<BoundExprPtr, BoundExprPtr>> keys, Pos pos) {
    std::vector<int> owner = l.owner;
    std::vector<bool> in = l.in;
    for (size_t i = 0; i < in.size(); ++i) in[i] = in[i] || r.in[i];
    size_t left_width = 0;
    Part out;
    out.plan = Join(std::move(l.plan), std::move(r.plan), std::move(keys), false, false, pos, &left_width);
    owner.resize(left_width, -1);
    owner.insert(owner.end(), r.owner.begin(), r.owner.end());
    owner.resize(out.plan.scope.cols.size(), -1);
    out.owner = std::move(owner);
    out.in = std::move(in);
    // Conjuncts over items that are all joined now filter the result.
    for (auto& k : cs) {
      if (k.used) continue;
      bool all = true;
      for (int i : k.items) all = all && out.in[i];
      if (!all) continue;
      out.plan = Filter(std::move(out.plan), binder_.BindPredicate(*k.e, out.plan.scope));
      k.used = true;
    }
    return out;
  };
  auto grow = [&](int start) {
    Part p = item_part(start);
    for (;;) {
      int next = -1;
      for (const auto& k : cs) {
        if (k.used || k.a < 0) continue;
        if (p.in[k.a] && !taken[k.b])
          next = k.b;
        else if (p.in[k.b] && !taken[k.a])
          next = k.a;
        if (next >= 0) break;
      }
      if (next < 0) return p;
      std::vector<std::pair<BoundExprPtr, BoundExprPtr>> keys;
      for (auto& k : cs) {
        if (k.used || k.a < 0) continue;
        const Expr* mine = nullptr;
        const Expr* theirs = nullptr;
        if (k.a == next && p.in[k.b])
          mine = k.e->args[0].get(), theirs = k.e->args[1].get();
        else if (k.b == next && p.in[k.a])
          mine = k.e->args[1].get(), theirs = k.e->args[0].get();
        if (!mine) continue;
        keys.emplace_back(binder_.Bind(*theirs, p.plan.scope), binder_.Bind(*mine, items[next].scope));
        k.used = true;
      }
      p = combine(std::move(p), item_part(next), std::move(keys), item_pos[next]);
    }
  };
  Part cur = grow(0);
  for (size_t i = 1; i < items.size(); ++i)
    if (!taken[i]) cur = combine(std::move(cur), grow(static_cast<int>(i)), {}, item_pos[i]);
  for (auto& k : cs)
    if (!k.used) cur.plan = Filter(std::move(cur.plan), binder_.BindPredicate(*k.e, cur.plan.scope));
  // The columns come in FROM order (what `*` lists) whatever the join order; the hidden join
  // keys are not needed any more.
  bool in_order = true;
  int last_owner = -1;
  for (int o : cur.owner) {
    if (o < 0) continue;
    in_order = in_order && o >= last_owner;
    last_owner = o;
  }
  if (in_order) return std::move(cur.plan);
  Plan out;
  std::vector<BoundExprPtr> proj;
  for (size_t item = 0; item < items.size(); ++item)
    for (size_t c = 0; c < cur.owner.size(); ++c) {
      if (cur.owner[c] != static_cast<int>(item)) continue;
      proj.push_back(MakeColumn(static_cast<int>(c), cur.plan.scope.cols[c].type));
      out.scope.cols.push_back(cur.plan.scope.cols[c]);
    }
  out.node = AddMap(nullptr, std::move(proj), cur.plan.node, Types(out.scope));
  return out;
}

Planner::Plan Planner::Project(const Plan& p, std::vector<BoundExprPtr> proj, std::vector<ScopeColumn> cols) {
  Plan out;
  out.scope.cols = std::move(cols);
  out.node = AddMap(nullptr, std::move(proj), p.node, Types(out.scope));
  return out;
}

Planner::Plan Planner::Distinct(Plan p) {
  p.node = circuit_->AddNode(std::make_unique<DistinctOp>(), {p.node}, Types(p.scope));
  return p;
}

std::vector<std::pair<BoundExprPtr, BoundExprPtr>> Planner::NullSafeKeys(const Scope& l, const std::vector<int>& lc,
                                                                         const Scope& r,
                                                                         const std::vector<int>& rc) const {
  std::vector<std::pair<BoundExprPtr, BoundExprPtr>> keys;
  auto or_zero = [](int i, const SqlType& t) {
    Value zero = t.phys() == PhysType::kF64   ? Value::Double(0)
                 : t.phys() == PhysType::kStr ? Value::String("")
                                              : Value::Int(0);
    return Call2(ExprOp::kCoalesce, t.WithNullable(false), MakeColumn(i, t),
                 MakeLiteral(std::move(zero), t.WithNullable(false)));
  };
  for (size_t i = 0; i < lc.size(); ++i) {
    const SqlType& lt = l.cols[lc[i]].type;
    const SqlType& rt = r.cols[rc[i]].type;
    if (!lt.nullable && !rt.nullable) {
      keys.emplace_back(MakeColumn(lc[i], lt), MakeColumn(rc[i], rt));
      continue;
    }
    keys.emplace_back(Call1(ExprOp::kIsNull, BoolType(false), MakeColumn(lc[i], lt)),
                      Call1(ExprOp::kIsNull, BoolType(false), MakeColumn(rc[i], rt)));
    keys.emplace_back(or_zero(lc[i], lt), or_zero(rc[i], rt));
  }
  return keys;
}

void Planner::FreeRefs(const sql::Query& q, std::vector<const Scope*>* chain, std::vector<std::set<int>>* used) {
  size_t pushed = PushCtes(q);
  struct Pop {
    std::vector<std::pair<std::string, const Plan*>>* ctes;
    size_t n;
    ~Pop() { ctes->resize(ctes->size() - n); }
  } pop{&ctes_, pushed};
  if (!q.select) {
    FreeRefs(*q.left, chain, used);
    FreeRefs(*q.right, chain, used);
    return;
  }
  const sql::Select& s = *q.select;
  Scope local = LocalScope(s, chain, used);
  auto walk = [&](const Expr* e) {
    if (e) FreeRefsExpr(*e, local, chain, used);
  };
  walk(s.where.get());
  for (const auto& item : s.items)
    if (item.expr->kind != ExprKind::kStar) walk(item.expr.get());
  for (const auto& g : s.group_by) walk(g.get());
  walk(s.having.get());
}

void Planner::FreeRefsExpr(const Expr& e, const Scope& local, std::vector<const Scope*>* chain,
                           std::vector<std::set<int>>* used) {
  if (e.kind == ExprKind::kColumnRef) {
    if (binder_.TryResolve(local, e.qualifier, e.name, e.pos) >= 0) return;
    for (size_t i = chain->size(); i-- > 0;) {
      int c = binder_.TryResolve(*(*chain)[i], e.qualifier, e.name, e.pos);
      if (c >= 0) {
        (*used)[i].insert(c);
        return;
      }
    }
    return;  // unknown (or a select item's alias): planning the subquery reports it
  }
  if (e.subquery) {
    chain->push_back(&local);
    used->emplace_back();
    FreeRefs(*e.subquery, chain, used);
    chain->pop_back();
    used->pop_back();
  }
  for (const auto& a : e.args)
    if (a) FreeRefsExpr(*a, local, chain, used);
  if (e.filter) FreeRefsExpr(*e.filter, local, chain, used);
  if (e.over) {
    for (const auto& p : e.over->partition_by) FreeRefsExpr(*p, local, chain, used);
    for (const auto& o : e.over->order_by) FreeRefsExpr(*o.expr, local, chain, used);
  }
}

Planner::Plan Planner::LimitPerDomain(Plan p, const sql::Query& q, size_t lead) {
  Schema schema;
  for (const auto& c : p.scope.cols) schema.fields.push_back({c.name, c.type});
  p.node = TopK(p.node, &schema, q, lead);
  p.scope.cols.resize(schema.size());
  return p;
}

Planner::Plan Planner::PlanOverDomain(const sql::Query& q, const Plan& outer, const std::vector<int>& corr) {
  std::vector<BoundExprPtr> proj;
  std::vector<ScopeColumn> cols;
  for (int c : corr) {
    proj.push_back(MakeColumn(c, outer.scope.cols[c].type));
    ScopeColumn col = outer.scope.cols[c];
    col.correlated = true;
    col.hidden = false;
    cols.push_back(std::move(col));
  }
  Plan domain = Distinct(Project(outer, std::move(proj), std::move(cols)));
  // PlanSelect takes domain_ on entry; it is reset however planning ends.
  struct DomainGuard {
    const Plan** slot;
    ~DomainGuard() { *slot = nullptr; }
  } guard{&domain_};
  domain_ = &domain;
  Plan body = PlanQueryBlock(q);
  domain_ = nullptr;
  if (q.limit || q.offset) body = LimitPerDomain(std::move(body), q, corr.size());
  return body;
}

bool Planner::IsLateral(const sql::TableRef& t) const {
  return t.kind == sql::TableRef::Kind::kSubquery && t.lateral;
}

std::vector<ScopeColumn> Planner::SyntacticColumns(const sql::Query& q, const std::string& alias,
                                                   std::vector<const Scope*>* chain, std::vector<std::set<int>>* used) {
  const sql::Query* b = &q;
  while (!b->select) b = b->left.get();
  std::vector<ScopeColumn> out;
  const sql::Select& s = *b->select;
  for (size_t i = 0; i < s.items.size(); ++i) {
    const auto& item = s.items[i];
    if (item.expr->kind != ExprKind::kStar) {
      out.push_back({alias, OutputName(item, i), SqlType::Of(TypeId::kNull), false});
      continue;
    }
    Scope local = LocalScope(s, chain, used);
    for (const auto& c : local.cols)
      if (c.InStar(item.expr->qualifier)) out.push_back({alias, c.name, c.type, false});
  }
  return out;
}

bool Planner::IsInnerTree(const sql::TableRef& t) const {
  return t.kind == sql::TableRef::Kind::kJoin &&
         (t.join_type == sql::JoinType::kInner || t.join_type == sql::JoinType::kCross) && !t.natural &&
         t.using_cols.empty() && !t.match_condition && t.right->kind != sql::TableRef::Kind::kUnnest &&
         !IsLateral(*t.right);
}

void Planner::FlattenInner(const sql::TableRef& t, std::vector<const sql::TableRef*>* items,
                           std::vector<const Expr*>* ons) const {
  if (!IsInnerTree(t)) {
    items->push_back(&t);
    return;
  }
  FlattenInner(*t.left, items, ons);
  FlattenInner(*t.right, items, ons);
  SplitAnd(t.on.get(), ons);
}

bool Planner::ReadsEnclosingQuery(const sql::Query& q) {
  if (enclosing_.empty()) return false;
  std::vector<const Scope*> chain = enclosing_;
  std::vector<std::set<int>> used(chain.size());
  FreeRefs(q, &chain, &used);
  for (const auto& u : used)
    if (!u.empty()) return true;
  return false;
}

Scope Planner::LocalScope(const sql::Select& s, std::vector<const Scope*>* chain, std::vector<std::set<int>>* used) {
  Scope local;
  // A join counts as its items (the same names), its ON condition as one more expression of
  // the block: it may read an enclosing query's columns (PlanFrom plans inner joins and LEFT
  // JOINs so).
  std::vector<const sql::TableRef*> items;
  std::vector<const Expr*> ons;
  std::function<void(const sql::TableRef&)> flatten = [&](const sql::TableRef& t) {
    // (A LATERAL subquery joined ON a condition counts as one more item, reading those before.)
    if (t.kind != sql::TableRef::Kind::kJoin || t.natural || !t.using_cols.empty() ||
        t.right->kind == sql::TableRef::Kind::kUnnest) {
      items.push_back(&t);
      return;
    }
    flatten(*t.left);
    flatten(*t.right);
    SplitAnd(t.on.get(), &ons);
    SplitAnd(t.match_condition.get(), &ons);
  };
  for (const auto& t : s.from) flatten(*t);
  for (const sql::TableRef* t : items) {
    if (t->kind == sql::TableRef::Kind::kUnnest && t != items.front()) continue;  // reads the item before it
    if (t->kind == sql::TableRef::Kind::kSubquery) {
      // A LATERAL item may read the items before it: they are one more enclosing level while it
      // is walked; another sees none of them, but may read an enclosing query's columns.
      Scope none;
      chain->push_back(IsLateral(*t) ? &local : &none);
      std::vector<std::set<int>> found(used->size() + 1);
      FreeRefs(*t->subquery, chain, &found);
      chain->pop_back();
      bool outer = false;
      for (size_t i = 0; i < used->size(); ++i) {
        outer = outer || !found[i].empty();
        (*used)[i].insert(found[i].begin(), found[i].end());
      }
      if (IsLateral(*t) || outer) {
        for (auto& c : SyntacticColumns(*t->subquery, t->alias, chain, used)) local.cols.push_back(std::move(c));
        continue;
      }
    }
    Plan p = PlanTableRef(*t);
    for (auto& c : p.scope.cols) local.cols.push_back(std::move(c));
  }
  for (const Expr* on : ons) FreeRefsExpr(*on, local, chain, used);
  return local;
}

// LATERAL (q): q is planned once over its domain D = DISTINCT of the columns of `left` it reads
// (as a correlated subquery is: D is its first FROM item and leads its output; aggregates group
// by D; ORDER BY ... LIMIT takes the top rows per D value), and joined back to `left` on D's
// columns (NULL-safe), so that each left row meets the rows q gives for its values.
Planner::Plan Planner::LateralJoin(Plan left, const sql::TableRef& t, bool pad_left, const Expr* on, Pos pos) {
  const sql::Query& q = *t.subquery;
  const bool limited = q.limit || q.offset;
  if (limited) AppendOrderByColumns(const_cast<sql::Query*>(&q));
  // Without LATERAL only the enclosing query's columns (the correlated ones) are visible.
  Scope visible = left.scope;
  if (!t.lateral)
    for (auto& c : visible.cols) c.hidden = c.hidden || !c.correlated;
  std::vector<const Scope*> chain = enclosing_;
  chain.push_back(&visible);
  std::vector<std::set<int>> used(chain.size());
  FreeRefs(q, &chain, &used);
  for (size_t i = 0; i + 1 < used.size(); ++i)
    if (!used[i].empty())
      ctx_.Error(t.pos,
                 "a subquery in FROM that reads the columns of an enclosing query (LATERAL) is not supported yet");
  const std::vector<int> corr(used.back().begin(), used.back().end());
  const size_t k = corr.size();
  std::vector<const Expr*> on_conj;
  SplitAnd(on, &on_conj);
  Plan body;
  if (k == 0) {
    body = PlanTableRef(t);
  } else {
    struct Enclosing {
      std::vector<const Scope*>* v;
      ~Enclosing() { v->pop_back(); }
    } enclosing{&enclosing_};
    enclosing_.push_back(&left.scope);
    body = PlanOverDomain(q, left, corr);
    // The domain's columns, then q's output (what the alias names).
    std::vector<BoundExprPtr> keep;
    std::vector<ScopeColumn> kept;
    for (size_t i = 0; i < body.scope.cols.size(); ++i) {
      if (i >= k && body.scope.cols[i].hidden) continue;
      keep.push_back(MakeColumn(static_cast<int>(i), body.scope.cols[i].type));
      ScopeColumn c = body.scope.cols[i];
      if (i >= k) c.qualifier = t.alias;
      kept.push_back(std::move(c));
    }
    body = Project(body, std::move(keep), std::move(kept));
  }
  std::vector<int> dom;
  for (size_t i = 0; i < k; ++i) dom.push_back(static_cast<int>(i));
  const size_t nl = left.scope.cols.size(), nb = body.scope.cols.size();
  auto keys = NullSafeKeys(left.scope, corr, body.scope, dom);
  bool on_true = true;
  for (const Expr* c : on_conj)
    on_true = on_true && c->kind == ExprKind::kLiteral && c->lit_kind == sql::LiteralKind::kBoolean &&
              EqualsIgnoreCase(c->text, "TRUE");
  size_t lw = nl;
  Plan j;
  if (pad_left && !on_true) {
    j = GeneralOuterJoin(std::move(left), std::move(body), std::move(keys), on_conj, true, false, pos);
  } else {
    j = Join(std::move(left), std::move(body), std::move(keys), pad_left, false, pos, &lw);
    if (!on_true)
      for (const Expr* c : on_conj) j = FilterWithSubqueries(std::move(j), *c);
  }
  // The left's columns, then q's (not the domain's, nor hidden join keys).
  std::vector<BoundExprPtr> proj;
  std::vector<ScopeColumn> cols;
  for (size_t i = 0; i < nl; ++i) {
    proj.push_back(MakeColumn(static_cast<int>(i), j.scope.cols[i].type));
    cols.push_back(j.scope.cols[i]);
  }
  for (size_t i = lw + k; i < lw + nb; ++i) {
    proj.push_back(MakeColumn(static_cast<int>(i), j.scope.cols[i].type));
    cols.push_back(j.scope.cols[i]);
  }
  return Project(j, std::move(proj), std::move(cols));
}

void Planner::PlanSubqueries(const Expr& e, Plan* p, AggContext* agg) {
  if (agg && agg->input_subqueries.contains(&e)) return;  // planned over the aggregate's input
  if (e.kind == ExprKind::kSubquery || e.kind == ExprKind::kExists || e.kind == ExprKind::kInQuery) {
    if (e.kind == ExprKind::kInQuery) PlanSubqueries(*e.args[0], p, agg);
    PlanSubquery(e, p, agg);
    return;
  }
  for (const auto& a : e.args)
    if (a) PlanSubqueries(*a, p, agg);
  if (e.filter) PlanSubqueries(*e.filter, p, agg);
}

Planner::Plan Planner::FilterWithSubqueries(Plan p, const Expr& c) {
  if (!ContainsSubquery(c)) return Filter(std::move(p), binder_.BindPredicate(c, p.scope));
  const size_t n = p.scope.cols.size();
  PlanSubqueries(c, &p);
  p = Filter(std::move(p), binder_.BindPredicate(c, p.scope));
  std::vector<BoundExprPtr> proj;
  std::vector<ScopeColumn> cols;
  for (size_t i = 0; i < n; ++i) {
    proj.push_back(MakeColumn(static_cast<int>(i), p.scope.cols[i].type));
    cols.push_back(p.scope.cols[i]);
  }
  return Project(p, std::move(proj), std::move(cols));
}

bool Planner::ReadsEnclosing(const Expr& ref) const {
  for (const Scope* s : enclosing_)
    if (binder_.TryResolve(*s, ref.qualifier, ref.name, ref.pos) >= 0) return true;
  return false;
}

void Planner::PlanSubquery(const Expr& e, Plan* p, AggContext* agg) {
  const sql::Query& q = *e.subquery;
  const bool limited = q.limit || q.offset;
  const bool array = e.kind == ExprKind::kSubquery && e.name == "ARRAY";
  // ORDER BY expressions the select list does not output become trailing columns (dropped
  // after the top-K; ARRAY(subquery) orders its elements by them); a syntax rewrite that adds
  // nothing when repeated.
  if (limited || array) AppendOrderByColumns(const_cast<sql::Query*>(&q));
  struct Enclosing {
    std::vector<const Scope*>* v;
    ~Enclosing() { v->pop_back(); }
  } enclosing{&enclosing_};
  enclosing_.push_back(&p->scope);
  // The columns of the enclosing block the subquery reads: its correlation.
  std::vector<const Scope*> chain{&p->scope};
  std::vector<std::set<int>> used(1);
  FreeRefs(q, &chain, &used);
  const std::vector<int> corr(used[0].begin(), used[0].end());
  const size_t k = corr.size();

  // The subquery's plan: [domain columns (k), its select list].
  Plan body;
  if (k == 0) {
    Schema schema;
    body.node = PlanViewQuery(q, &schema);
    for (const auto& f : schema.fields) body.scope.cols.push_back({"", f.name, f.type, false});
  } else {
    body = PlanOverDomain(q, *p, corr);
  }
  const size_t m = body.scope.cols.size() - k;
  std::vector<int> dom;
  for (size_t i = 0; i < k; ++i) dom.push_back(static_cast<int>(i));

  // Joins `right` (its first k columns the domain's) back to *p: a cross join with a relation of
  // exactly one row when uncorrelated, else a LEFT JOIN on the domain columns. Returns the index
  // of right's first column in *p.
  auto join_back = [&](const Plan& right) {
    size_t lw = 0;
    *p = Join(*p, right, NullSafeKeys(p->scope, corr, right.scope, dom), k > 0, false, e.pos, &lw);
    HideFrom(&p->scope, lw);
    return lw;
  };
  // Appends e as a hidden column of *p; the subquery expression reads it.
  auto result = [&](BoundExprPtr v) {
    std::vector<BoundExprPtr> proj;
    std::vector<ScopeColumn> cols = p->scope.cols;
    for (size_t i = 0; i < cols.size(); ++i) proj.push_back(MakeColumn(static_cast<int>(i), cols[i].type));
    SqlType t = v->type;
    proj.push_back(std::move(v));
    cols.push_back({"", "", t, true});
    *p = Project(*p, std::move(proj), std::move(cols));
    binder_.SetSubqueryColumn(&e, static_cast<int>(p->scope.cols.size() - 1), t);
  };
  // An aggregate of body grouped by the domain columns (global when uncorrelated: one row).
  auto aggregate = [&](std::vector<AggSpec> specs) {
    Plan a;
    for (size_t i = 0; i < k; ++i) a.scope.cols.push_back(body.scope.cols[i]);
    for (const auto& s : specs) a.scope.cols.push_back({"", "", s.result_type, true});
    a.node = circuit_->AddNode(
        std::make_unique<AggregateOp>(Types(body.scope), static_cast<int>(k), std::move(specs), circuit_->pool()),
        {body.node}, Types(a.scope));
    return a;
  };
  // The values of `a` (its first k columns the domain's) that the enclosing block reads,
  // computed from a's columns by `exprs`, through DISTINCT: a change of a count that leaves them
  // as they were changes nothing downstream.
  auto settle = [&](const Plan& a, std::vector<BoundExprPtr> exprs) {
    std::vector<BoundExprPtr> proj;
    std::vector<ScopeColumn> cols;
    for (size_t i = 0; i < k; ++i) {
      proj.push_back(MakeColumn(static_cast<int>(i), a.scope.cols[i].type));
      cols.push_back(a.scope.cols[i]);
    }
    for (auto& x : exprs) {
      cols.push_back({"", "", x->type, true});
      proj.push_back(std::move(x));
    }
    return Distinct(Project(a, std::move(proj), std::move(cols)));
  };
  AggSpec count_star;
  count_star.kind = AggKind::kCountStar;
  count_star.result_type = SqlType::Of(TypeId::kBigInt, false);

  if (array) {
    // The array of the subquery's rows; empty (not NULL) where it has none.
    const size_t at = join_back(ArrayOfRows(body, q, k, limited, e.pos));
    const SqlType t = SqlType::Array(body.scope.cols[k].type, false);
    BoundExprPtr v = MakeColumn(static_cast<int>(at + k), t.WithNullable(k > 0));
    if (k > 0)
      v = Call2(ExprOp::kCoalesce, t, std::move(v),
                MakeLiteral(Value::String(EncodeArrayValue({}, (*t.fields)[0])), t));
    result(std::move(v));
    return;
  }

  if (e.kind == ExprKind::kExists) {
    BoundExprPtr exists;
    if (k == 0) {
      std::vector<BoundExprPtr> any;
      any.push_back(Call2(ExprOp::kGt, BoolType(false), MakeColumn(0, count_star.result_type),
                          MakeLiteral(Value::Int(0), count_star.result_type)));
      size_t at = join_back(settle(aggregate({count_star}), std::move(any)));
      exists = MakeColumn(static_cast<int>(at), BoolType(false));
    } else {
      std::vector<BoundExprPtr> proj;
      std::vector<ScopeColumn> cols;
      for (size_t i = 0; i < k; ++i) {
        proj.push_back(MakeColumn(static_cast<int>(i), body.scope.cols[i].type));
        cols.push_back(body.scope.cols[i]);
      }
      proj.push_back(BoolLiteral(true));
      cols.push_back({"", "", BoolType(false), true});
      size_t at = join_back(Distinct(Project(body, std::move(proj), std::move(cols))));
      exists = Call1(ExprOp::kIsNotNull, BoolType(false), MakeColumn(static_cast<int>(at + k), BoolType(true)));
    }
    if (e.negated) exists = Call1(ExprOp::kNot, BoolType(false), std::move(exists));
    result(std::move(exists));
    return;
  }

  if (e.kind == ExprKind::kInQuery && e.args[0]->kind == ExprKind::kFunction && e.args[0]->name == "ROW") {
    RowIn(e, p, agg, body, corr);
    return;
  }
  if (m != 1)
    ctx_.Error(e.pos, fmt::format("{} must return one column, not {}",
                                  e.kind == ExprKind::kSubquery ? "a scalar subquery" : "the subquery of IN", m));
  const SqlType vtype = body.scope.cols[k].type;

  if (e.kind == ExprKind::kSubquery) {
    // A global aggregate (no GROUP BY, no HAVING) returns exactly one row per domain value;
    // anything else is counted, and more than one row is a run-time error.
    bool one_row = q.select && q.select->group_by.empty() && !q.select->having && !limited;
    bool any_agg = false;
    if (one_row)
      for (const auto& item : q.select->items)
        any_agg = any_agg || (item.expr->kind != ExprKind::kStar && ContainsAggregate(*item.expr));
    one_row = one_row && any_agg;
    if (one_row) {
      size_t at = join_back(body);
      result(MakeColumn(static_cast<int>(at + k), vtype.WithNullable(vtype.nullable || k > 0)));
      return;
    }
    AggSpec min;
    min.kind = AggKind::kMin;
    min.arg = static_cast<int>(k);
    min.arg_type = vtype;
    min.result_type = vtype.WithNullable(true);
    std::vector<BoundExprPtr> value;
    value.push_back(Call2(ExprOp::kScalarSubquery, vtype.WithNullable(true),
                          MakeColumn(static_cast<int>(k), count_star.result_type),
                          MakeColumn(static_cast<int>(k + 1), vtype.WithNullable(true))));
    size_t at = join_back(settle(aggregate({count_star, min}), std::move(value)));
    result(MakeColumn(static_cast<int>(at + k), vtype.WithNullable(true)));
    return;
  }

  // x [NOT] IN (subquery): TRUE when a row equals x; else NULL when x is NULL or a row is NULL
  // (and there is a row); else FALSE.
  // Over an aggregate's output the group keys and aggregates come first, as BindAggregate reads
  // them.
  BoundExprPtr x = agg ? binder_.BindAggregate(*e.args[0], agg) : binder_.Bind(*e.args[0], p->scope);
  // As in comparisons: a string or binary literal next to numbers is the number it spells, or
  // equals none (a NULL key: no row matches, yet x is not NULL).
  BoundExprPtr number;
  bool matches_none = false;
  if (binder_.ConstantVersusNumber(*x, vtype, &number)) {
    matches_none = !number;
    x = matches_none ? MakeLiteral(Value::Null(), vtype.WithNullable(true)) : std::move(number);
  }
  // A NULL or a string literal takes the subquery column's type.
  if ((x->type.id == TypeId::kNull && !matches_none) ||
      (x->op == ExprOp::kLiteral && x->type.IsString() && !vtype.IsString())) {
    const SqlType to = vtype.WithNullable(x->type.nullable || x->type.id == TypeId::kNull);
    x = binder_.Coerce(std::move(x), to, e.args[0]->pos);
  }
  const bool x_nullable = x->type.nullable && !matches_none;
  BoundExprPtr x_again = matches_none ? BoolLiteral(true) : x->Clone();
  Plan values = body;
  if (vtype.nullable)
    values =
        Filter(std::move(values), Call1(ExprOp::kIsNotNull, BoolType(false), MakeColumn(static_cast<int>(k), vtype)));
  {
    std::vector<BoundExprPtr> proj;
    std::vector<ScopeColumn> cols;
    for (size_t i = 0; i <= k; ++i) {
      proj.push_back(MakeColumn(static_cast<int>(i), values.scope.cols[i].type));
      cols.push_back(values.scope.cols[i]);
    }
    proj.push_back(BoolLiteral(true));
    cols.push_back({"", "", BoolType(false), true});
    values = Distinct(Project(values, std::move(proj), std::move(cols)));
  }
  auto keys = NullSafeKeys(p->scope, corr, values.scope, dom);
  keys.emplace_back(std::move(x), MakeColumn(static_cast<int>(k), values.scope.cols[k].type));
  size_t lw = 0;
  *p = Join(*p, values, std::move(keys), true, false, e.pos, &lw);
  HideFrom(&p->scope, lw);
  BoundExprPtr matched =
      Call1(ExprOp::kIsNotNull, BoolType(false), MakeColumn(static_cast<int>(lw + k + 1), BoolType(true)));
  BoundExprPtr in;
  if (!x_nullable && !vtype.nullable) {
    in = std::move(matched);
  } else {
    AggSpec count_v;
    count_v.kind = AggKind::kCount;
    count_v.arg = static_cast<int>(k);
    count_v.arg_type = vtype;
    count_v.result_type = SqlType::Of(TypeId::kBigInt, false);
    // Per domain value: no row at all (empty), a NULL among the rows (has_null).
    const SqlType cnt_type = SqlType::Of(TypeId::kBigInt, false);
    std::vector<BoundExprPtr> flags;
    flags.push_back(Call2(ExprOp::kEq, BoolType(false), MakeColumn(static_cast<int>(k), cnt_type),
                          MakeLiteral(Value::Int(0), cnt_type)));
    flags.push_back(Call2(ExprOp::kLt, BoolType(false), MakeColumn(static_cast<int>(k + 1), cnt_type),
                          MakeColumn(static_cast<int>(k), cnt_type)));
    size_t at = join_back(settle(aggregate({count_star, count_v}), std::move(flags)));
    BoundExprPtr empty = Call2(ExprOp::kCoalesce, BoolType(false),
                               MakeColumn(static_cast<int>(at + k), BoolType(k > 0)), BoolLiteral(true));
    BoundExprPtr unknown =
        Call2(ExprOp::kOr, BoolType(true), Call1(ExprOp::kIsNull, BoolType(false), std::move(x_again)),
              MakeColumn(static_cast<int>(at + k + 1), BoolType(k > 0)));
    std::vector<BoundExprPtr> args;
    args.push_back(std::move(matched));
    args.push_back(BoolLiteral(true));
    args.push_back(std::move(empty));
    args.push_back(BoolLiteral(false));
    args.push_back(std::move(unknown));
    args.push_back(MakeLiteral(Value::Null(), BoolType(true)));
    args.push_back(BoolLiteral(false));
    in = MakeCall(ExprOp::kCase, BoolType(true), std::move(args));
    in->has_else = true;
  }
  if (e.negated) {
    SqlType t = in->type;
    in = Call1(ExprOp::kNot, t, std::move(in));
  }
  result(std::move(in));
}

// (x1, ..., xn) [NOT] IN (subquery of n columns), by PostgreSQL's row comparison: a row r equals
// x when every xi = ri; it is unknown when no pair differs (both non-NULL and unequal) but some
// xi or ri is NULL. IN is TRUE when some row equals x; else NULL when some row is unknown; else
// FALSE. The equal rows are found by an equi-join on every column (the rows without NULLs);
// the unknown ones by one equi-join per way of being unknown: for X the positions where x is
// NULL and R others where r is, a join on the remaining positions with the rows NULL at R
// (what x holds at X does not matter), read where x is NULL at X. Each is a join on the domain
// and values, so a change costs in proportion to the rows it touches.
void Planner::RowIn(const Expr& e, Plan* p, AggContext* agg, const Plan& body, const std::vector<int>& corr) {
  const Expr& row = *e.args[0];
  const size_t k = corr.size(), n = row.args.size();
  const size_t m = body.scope.cols.size() - k;
  if (m != n)
    ctx_.Error(e.pos,
               fmt::format("the subquery of a row IN must return {} columns (as many as the row has), not {}", n, m));
  std::vector<BoundExprPtr> xs;
  std::vector<int> x_null, r_null;  // the positions where x, resp. a row, may be NULL
  for (size_t i = 0; i < n; ++i) {
    const Expr& a = *row.args[i];
    BoundExprPtr b = agg ? binder_.BindAggregate(a, agg) : binder_.Bind(a, p->scope);
    const SqlType& vt = body.scope.cols[k + i].type;
    if (b->type.id == TypeId::kNull) b = binder_.Coerce(std::move(b), vt.WithNullable(true), a.pos);
    binder_.CommonType(b->type, vt, a.pos);  // comparable
    if (b->type.nullable) x_null.push_back(static_cast<int>(i));
    if (vt.nullable) r_null.push_back(static_cast<int>(i));
    xs.push_back(std::move(b));
  }
  std::vector<int> dom;
  for (size_t i = 0; i < k; ++i) dom.push_back(static_cast<int>(i));
  // DISTINCT(domain, the columns `keyed`, TRUE) of the rows NULL at `nulls` and not at `keyed`,
  // LEFT JOINed to *p on the domain and x's values at `keyed`: the index of the TRUE column.
  auto probe = [&](const std::vector<int>& keyed, const std::vector<int>& nulls) {
    Plan rows = body;
    auto test = [&](int i, ExprOp op) {
      const int c = static_cast<int>(k) + i;
      if (op == ExprOp::kIsNotNull && !rows.scope.cols[c].type.nullable) return;
      rows = Filter(std::move(rows), Call1(op, BoolType(false), MakeColumn(c, rows.scope.cols[c].type)));
    };
    for (int i : keyed) test(i, ExprOp::kIsNotNull);
    for (int i : nulls) test(i, ExprOp::kIsNull);
    std::vector<BoundExprPtr> proj;
    std::vector<ScopeColumn> cols;
    for (size_t i = 0; i < k; ++i) {
      proj.push_back(MakeColumn(static_cast<int>(i), rows.scope.cols[i].type));
      cols.push_back(rows.scope.cols[i]);
    }
    for (int i : keyed) {
      const int c = static_cast<int>(k) + i;
      proj.push_back(MakeColumn(c, rows.scope.cols[c].type.WithNullable(false)));
      cols.push_back({"", "", proj.back()->type, true});
    }
    proj.push_back(BoolLiteral(true));
    cols.push_back({"", "", BoolType(false), true});
    Plan values = Distinct(Project(rows, std::move(proj), std::move(cols)));
    auto keys = NullSafeKeys(p->scope, corr, values.scope, dom);
    for (size_t j = 0; j < keyed.size(); ++j)
      keys.emplace_back(xs[keyed[j]]->Clone(), MakeColumn(static_cast<int>(k + j), values.scope.cols[k + j].type));
    size_t lw = 0;
    *p = Join(*p, values, std::move(keys), true, false, e.pos, &lw);
    HideFrom(&p->scope, lw);
    return static_cast<int>(lw + k + keyed.size());
  };
  std::vector<int> all;
  for (size_t i = 0; i < n; ++i) all.push_back(static_cast<int>(i));
  BoundExprPtr in = Call1(ExprOp::kIsNotNull, BoolType(false), MakeColumn(probe(all, {}), BoolType(true)));
  // Each X (a subset of x_null) with each R (a subset of r_null, disjoint from X), not both empty.
  const size_t ways_x = size_t{1} << x_null.size(), ways_r = size_t{1} << r_null.size();
  if (ways_x * ways_r > 64)
    ctx_.Error(e.pos, "a row IN (SELECT ...) with more than 6 columns that may be NULL is not supported yet");
  BoundExprPtr unknown;
  for (size_t xm = 0; xm < ways_x; ++xm)
    for (size_t rm = 0; rm < ways_r; ++rm) {
      if (xm == 0 && rm == 0) continue;
      std::vector<bool> wild(n, false);
      std::vector<int> xset, rset, keyed;
      for (size_t j = 0; j < x_null.size(); ++j)
        if (xm >> j & 1) xset.push_back(x_null[j]), wild[x_null[j]] = true;
      bool overlap = false;
      for (size_t j = 0; j < r_null.size(); ++j)
        if (rm >> j & 1) {
          overlap = overlap || wild[r_null[j]];
          rset.push_back(r_null[j]);
        }
      if (overlap) continue;
      for (int i : rset) wild[i] = true;
      for (size_t i = 0; i < n; ++i)
        if (!wild[i]) keyed.push_back(static_cast<int>(i));
      BoundExprPtr flag = Call1(ExprOp::kIsNotNull, BoolType(false), MakeColumn(probe(keyed, rset), BoolType(true)));
      for (int i : xset)
        flag = Call2(ExprOp::kAnd, BoolType(false), std::move(flag),
                     Call1(ExprOp::kIsNull, BoolType(false), xs[i]->Clone()));
      unknown = unknown ? Call2(ExprOp::kOr, BoolType(false), std::move(unknown), std::move(flag)) : std::move(flag);
    }
  if (unknown) {
    std::vector<BoundExprPtr> args;
    args.push_back(std::move(in));
    args.push_back(BoolLiteral(true));
    args.push_back(std::move(unknown));
    args.push_back(MakeLiteral(Value::Null(), BoolType(true)));
    args.push_back(BoolLiteral(false));
    in = MakeCall(ExprOp::kCase, BoolType(true), std::move(args));
    in->has_else = true;
  }
  if (e.negated) {
    SqlType t = in->type;
    in = Call1(ExprOp::kNot, t, std::move(in));
  }
  // As PlanSubquery's result: a hidden column of *p that the expression reads.
  std::vector<BoundExprPtr> proj;
  std::vector<ScopeColumn> cols = p->scope.cols;
  for (size_t i = 0; i < cols.size(); ++i) proj.push_back(MakeColumn(static_cast<int>(i), cols[i].type));
  SqlType t = in->type;
  proj.push_back(std::move(in));
  cols.push_back({"", "", t, true});
  *p = Project(*p, std::move(proj), std::move(cols));
  binder_.SetSubqueryColumn(&e, static_cast<int>(p->scope.cols.size() - 1), t);
}

Planner::Plan Planner::GeneralOuterJoin(Plan left, Plan right, std::vector<std::pair<BoundExprPtr, BoundExprPtr>> keys,
                                        const std::vector<const Expr*>& residual, bool pad_left, bool pad_right,
                                        Pos pos) {
  const size_t nl = left.scope.cols.size(), nr = right.scope.cols.size();
  size_t lw = 0;
  Plan inner = Join(left, right, std::move(keys), false, false, pos, &lw);
  // (Subqueries of the condition are planned over the matches: their columns come last.)
  for (const Expr* c : residual) {
    if (ContainsSubquery(*c)) PlanSubqueries(*c, &inner);
    inner = Filter(std::move(inner), binder_.BindPredicate(*c, inner.scope));
  }
  std::vector<ScopeColumn> cols;
  std::vector<BoundExprPtr> proj;
  for (size_t i = 0; i < nl; ++i) {
    proj.push_back(MakeColumn(static_cast<int>(i), inner.scope.cols[i].type));
    cols.push_back(left.scope.cols[i]);
    cols.back().type.nullable = cols.back().type.nullable || pad_right;
  }
  for (size_t i = 0; i < nr; ++i) {
    proj.push_back(MakeColumn(static_cast<int>(lw + i), inner.scope.cols[lw + i].type));
    cols.push_back(right.scope.cols[i]);
    cols.back().type.nullable = cols.back().type.nullable || pad_left;
  }
  Plan out = Project(inner, std::move(proj), cols);
  // The rows of `side` no match keeps: side LEFT JOIN DISTINCT(its matched rows) on every column
  // (NULL-safe), where nothing joined; padded with NULLs for the other side.
  auto unmatched = [&](const Plan& side, size_t first, bool is_left) {
    const size_t n = side.scope.cols.size();
    std::vector<BoundExprPtr> mp;
    std::vector<ScopeColumn> mc;
    std::vector<int> idx;
    for (size_t i = 0; i < n; ++i) {
      mp.push_back(MakeColumn(static_cast<int>(first + i), inner.scope.cols[first + i].type));
      mc.push_back(side.scope.cols[i]);
      idx.push_back(static_cast<int>(i));
    }
    mp.push_back(BoolLiteral(true));
    mc.push_back({"", "", BoolType(false), true});
    Plan matched = Distinct(Project(inner, std::move(mp), std::move(mc)));
    size_t w = 0;
    Plan j = Join(side, matched, NullSafeKeys(side.scope, idx, matched.scope, idx), true, false, pos, &w);
    j = Filter(std::move(j),
               Call1(ExprOp::kIsNull, BoolType(false), MakeColumn(static_cast<int>(w + n), BoolType(true))));
    std::vector<BoundExprPtr> pp;
    for (size_t i = 0; i < nl + nr; ++i) {
      bool mine = is_left ? i < nl : i >= nl;
      if (mine)
        pp.push_back(MakeColumn(static_cast<int>(is_left ? i : i - nl), j.scope.cols[is_left ? i : i - nl].type));
      else
        pp.push_back(MakeLiteral(Value::Null(), cols[i].type.WithNullable(true)));
    }
    return Project(j, std::move(pp), cols).node;
  };
  std::vector<int> parts{out.node};
  if (pad_left) parts.push_back(unmatched(left, 0, true));
  if (pad_right) parts.push_back(unmatched(right, lw, false));
  out.node = circuit_->AddNode(std::make_unique<UnionAllOp>(), parts, Types(out.scope));
  return out;
}

// One aggregate per grouping set over the same pre-aggregation map (group keys, then the
// aggregates' arguments), each projected to the common layout (every group key, NULL where the
// set lacks it; then the aggregates, a GROUPING(...) slot being the set's constant mask) and
// unioned. Each piece is an ordinary incremental aggregate, and an empty set is a global
// aggregate, so it has its row even over no input, as in PostgreSQL. `set_pre_nodes` (GROUP BY
// HOP/SESSION) gives each set its own pre-aggregation map.
int Planner::GroupingSets(int pre_node, const std::vector<PhysType>& pre_types, const std::vector<AggSpec>& specs,
                          const AggContext& agg, const std::vector<std::vector<int>>& sets,
                          const std::vector<PhysType>& out_types, const std::vector<int>* set_pre_nodes) {
  const size_t num_keys = agg.group_exprs.size();
  std::vector<int> parts;
  for (const auto& set : sets) {
    const int set_pre = set_pre_nodes ? (*set_pre_nodes)[&set - sets.data()] : pre_node;
    // Input of this set's aggregate: its keys, then every argument column of the pre map.
    std::vector<BoundExprPtr> in;
    std::vector<PhysType> in_types;
    for (int g : set) {
      in.push_back(MakeColumn(g, agg.group_exprs[g]->type));
      in_types.push_back(pre_types[g]);
    }
    for (size_t c = num_keys; c < pre_types.size(); ++c) {
      in.push_back(MakeColumn(static_cast<int>(c), SqlType::Of(TypeId::kNull)));
      in.back()->type = SqlType::Of(pre_types[c] == PhysType::kF64   ? TypeId::kDouble
                                    : pre_types[c] == PhysType::kStr ? TypeId::kVarchar
                                                                     : TypeId::kBigInt);
      in_types.push_back(pre_types[c]);
    }
    const int shift = static_cast<int>(set.size()) - static_cast<int>(num_keys);
    std::vector<AggSpec> real;
    std::vector<PhysType> agg_types;
    for (int g : set) agg_types.push_back(pre_types[g]);
    for (size_t a = 0; a < specs.size(); ++a) {
      if (agg.grouping_calls.contains(a)) continue;
      AggSpec sp = specs[a];
      for (int* idx : {&sp.arg, &sp.key, &sp.filter})
        if (*idx >= 0) *idx += shift;
      real.push_back(sp);
      agg_types.push_back(sp.result_type.phys());
    }
    int node = AddMap(nullptr, std::move(in), set_pre, in_types);
    node =
        circuit_->AddNode(std::make_unique<AggregateOp>(in_types, static_cast<int>(set.size()), real, circuit_->pool()),
                          {node}, agg_types);
    std::vector<BoundExprPtr> out;
    for (size_t g = 0; g < num_keys; ++g) {
      auto it = std::find(set.begin(), set.end(), static_cast<int>(g));
      const SqlType& t = agg.group_exprs[g]->type;
      out.push_back(it == set.end() ? MakeLiteral(Value::Null(), t.WithNullable(true))
                                    : MakeColumn(static_cast<int>(it - set.begin()), t));
    }
    size_t next = set.size();
    for (size_t a = 0; a < specs.size(); ++a) {
      auto call = agg.grouping_calls.find(a);
      if (call == agg.grouping_calls.end()) {
        out.push_back(MakeColumn(static_cast<int>(next++), specs[a].result_type));
        continue;
      }
      int64_t mask = 0;
      if (call->second == std::vector<int>{AggContext::kGroupId}) {
        auto same = [](std::vector<int> x, std::vector<int> y) {
          std::sort(x.begin(), x.end());
          std::sort(y.begin(), y.end());
          return x == y;
        };
        for (const auto* earlier = sets.data(); earlier != &set; ++earlier) mask += same(*earlier, set);
        out.push_back(MakeLiteral(Value::Int(mask), specs[a].result_type));
        continue;
      }
      for (int g : call->second) mask = mask << 1 | (std::find(set.begin(), set.end(), g) == set.end() ? 1 : 0);
      out.push_back(MakeLiteral(Value::Int(mask), specs[a].result_type));
    }
    parts.push_back(AddMap(nullptr, std::move(out), node, out_types));
  }
  if (parts.size() == 1) return parts[0];
  return circuit_->AddNode(std::make_unique<UnionAllOp>(), parts, out_types);
}

// A grouping set that is empty but for a correlated subquery's domain keys has its row for every
// domain value, also one that no input row has (as the empty set of an uncorrelated query has
// its row over no input): for those values, the aggregates of no rows are added.
int Planner::EmptySetsOverDomain(const Plan& agg_plan, const Plan& domain, const Plan& from,
                                 const std::vector<PhysType>& pre_types, const std::vector<AggSpec>& specs,
                                 const AggContext& agg, const std::vector<std::vector<int>>& sets) {
  const size_t k = domain.scope.cols.size();
  std::vector<size_t> empties;
  for (size_t i = 0; i < sets.size(); ++i)
    if (sets[i].size() == k) empties.push_back(i);
  if (empties.empty()) return agg_plan.node;
  // The domain values no input row has.
  std::vector<BoundExprPtr> proj;
  std::vector<ScopeColumn> cols;
  std::vector<int> dc;
  for (size_t i = 0; i < k; ++i) {
    proj.push_back(MakeColumn(static_cast<int>(i), from.scope.cols[i].type));
    cols.push_back(from.scope.cols[i]);
    dc.push_back(static_cast<int>(i));
  }
  proj.push_back(BoolLiteral(true));
  cols.push_back({"", "", BoolType(false), true});
  Plan seen = Distinct(Project(from, std::move(proj), std::move(cols)));
  size_t lw = 0;
  Plan j = Join(domain, seen, NullSafeKeys(domain.scope, dc, seen.scope, dc), true, false, Pos{}, &lw);
  j = Filter(std::move(j),
             Call1(ExprOp::kIsNull, BoolType(false), MakeColumn(static_cast<int>(lw + k), BoolType(true))));
  // The aggregates of no rows, as the aggregate operator computes them.
  std::vector<AggSpec> real;
  std::vector<size_t> real_of(specs.size(), 0);
  for (size_t a = 0; a < specs.size(); ++a) {
    if (agg.grouping_calls.contains(a)) continue;
    real_of[a] = real.size();
    real.push_back(specs[a]);
  }
  Batch none;
  for (PhysType pt : pre_types) none.cols.push_back(std::make_shared<Column>(pt));
  const Batch* none_in[] = {&none};
  Batch empty = AggregateOp(pre_types, 0, real).Step(none_in);
  const size_t num_keys = agg.group_exprs.size();
  std::vector<int> parts{agg_plan.node};
  for (size_t n = 0; n < empties.size(); ++n) {
    std::vector<BoundExprPtr> out;
    for (size_t g = 0; g < num_keys; ++g)
      out.push_back(g < k ? MakeColumn(static_cast<int>(g), j.scope.cols[g].type)
                          : MakeLiteral(Value::Null(), agg.group_exprs[g]->type.WithNullable(true)));
    for (size_t a = 0; a < specs.size(); ++a) {
      const SqlType& t = agg_plan.scope.cols[num_keys + a].type;
      auto call = agg.grouping_calls.find(a);
      if (call == agg.grouping_calls.end()) {
        out.push_back(MakeLiteral(empty.size() == 1 ? empty.Get(real_of[a], 0) : Value::Null(), t));
        continue;
      }
      int64_t mask = 0;
      if (call->second == std::vector<int>{AggContext::kGroupId}) {
        mask = static_cast<int64_t>(n);  // the empty sets before this one
      } else {
        for (int g : call->second) mask = mask << 1 | (g >= static_cast<int>(k) ? 1 : 0);
      }
      out.push_back(MakeLiteral(Value::Int(mask), t));
    }
    parts.push_back(AddMap(nullptr, std::move(out), j.node, Types(agg_plan.scope)));
  }
  return circuit_->AddNode(std::make_unique<UnionAllOp>(), parts, Types(agg_plan.scope));
}

// Calls f on the PARTITION BY and ORDER BY expressions of a window (and of the named window it
// refers to, and so on).
static void ForEachWindowSpecExpr(const sql::WindowSpec& w, const sql::Select& s,
                                  const std::function<void(const Expr&)>& f, size_t depth = 0) {
  for (const auto& p : w.partition_by) f(*p);
  for (const auto& o : w.order_by) f(*o.expr);
  if (w.ref.empty() || depth > s.windows.size()) return;  // (a cycle of names fails when planned)
  for (const auto& [name, named] : s.windows)
    if (EqualsIgnoreCase(name, w.ref)) return ForEachWindowSpecExpr(*named, s, f, depth + 1);
}

// Whether a window of a call in e partitions or orders by an aggregate (RANK() OVER (ORDER BY
// SUM(x)) makes the block an aggregate one).
static bool WindowSpecsAggregate(const Expr& e, const sql::Select& s) {
  bool found = false;
  if (e.kind == ExprKind::kFunction && e.over)
    ForEachWindowSpecExpr(*e.over, s, [&](const Expr& x) { found = found || ContainsAggregate(x); });
  for (const auto& a : e.args)
    if (a) found = found || WindowSpecsAggregate(*a, s);
  return found;
}

Planner::Plan Planner::PlanSelect(const sql::Select& s) {
  // A correlated subquery's block: its domain joins the FROM as the first item; the domain's
  // columns lead the output (hidden) and are the first GROUP BY keys.
  const Plan* domain = domain_;
  domain_ = nullptr;
  const size_t k = domain ? domain->scope.cols.size() : 0;

  std::vector<const Expr*> conj, conj_subq;
  {
    std::vector<const Expr*> all;
    SplitAnd(s.where.get(), &all);
    for (const Expr* c : all) (ContainsSubquery(*c) ? conj_subq : conj).push_back(c);
  }
  NoteRankLimit(s, conj);
  Plan from;
  if (s.from.empty()) {
    if (domain) {
      from = *domain;
    } else {
      from = OneRow();
    }
    for (const Expr* c : conj) from = Filter(std::move(from), binder_.BindPredicate(*c, from.scope));
  } else {
    from = PlanFrom(s.from, conj, domain, &conj_subq);
  }
  for (const Expr* c : conj_subq) {
    PlanSubqueries(*c, &from);
    from = Filter(std::move(from), binder_.BindPredicate(*c, from.scope));
  }

  bool has_agg = !s.group_by.empty() || s.having;
  for (const auto& item : s.items)
    has_agg = has_agg || (item.expr->kind != ExprKind::kStar && ContainsAggregate(*item.expr));
  if (s.where && ContainsAggregate(*s.where)) ctx_.Error(s.where->pos, "aggregate functions are not allowed in WHERE");
  bool has_subq = s.having && ContainsSubquery(*s.having);
  for (const auto& item : s.items) has_subq = has_subq || ContainsSubquery(*item.expr);

  // Window calls: over the FROM rows, or (in an aggregate block) over the aggregate's output.
  bool has_window = false;
  for (const auto& item : s.items) {
    if (item.expr->kind == ExprKind::kStar || !ContainsWindow(*item.expr)) continue;
    has_window = true;
    has_agg = has_agg || WindowSpecsAggregate(*item.expr, s);
  }
  // In a correlated subquery the domain's columns (leading `from` and the aggregate's output)
  // partition every window.
  struct WindowLead {
    size_t* v;
    ~WindowLead() { *v = 0; }
  } window_lead{&window_lead_};
  if (has_window && !has_agg) {
    window_lead_ = k;
    from = PlanWindows(s, std::move(from));
    window_lead_ = 0;
  }

  Plan out;
  std::vector<BoundExprPtr> proj;
  for (size_t i = 0; i < k; ++i) {
    proj.push_back(MakeColumn(static_cast<int>(i), from.scope.cols[i].type));
    out.scope.cols.push_back({"", "", from.scope.cols[i].type, true});
  }
  BoundExprPtr having;
  if (!has_agg) {
    for (const auto& item : s.items)
      if (ContainsSubquery(*item.expr)) PlanSubqueries(*item.expr, &from);
    for (size_t i = 0; i < s.items.size(); ++i) {
      const auto& item = s.items[i];
      if (item.expr->kind == ExprKind::kStar) {
        bool any = false;
        for (size_t c = 0; c < from.scope.cols.size(); ++c) {
          const ScopeColumn& col = from.scope.cols[c];
          if (!col.InStar(item.expr->qualifier)) continue;
          proj.push_back(MakeColumn(static_cast<int>(c), col.type));
          out.scope.cols.push_back({"", col.name, col.type, false});
          any = true;
        }
        if (!any && !item.expr->qualifier.empty())
          ctx_.Error(item.pos, fmt::format("unknown table '{}' in {}.*", item.expr->qualifier, item.expr->qualifier));
        continue;
      }
      BoundExprPtr e = binder_.Bind(*item.expr, from.scope);
      if (e->type.id == TypeId::kNull) e = binder_.Coerce(std::move(e), SqlType::Of(TypeId::kInteger), item.pos);
      out.scope.cols.push_back({"", OutputName(item, i), e->type, false});
      proj.push_back(std::move(e));
    }
    // A projection that returns the input unchanged is skipped.
    bool identity = proj.size() == from.scope.cols.size();
    for (size_t i = 0; identity && i < proj.size(); ++i)
      identity = proj[i]->op == ExprOp::kColumn && proj[i]->column_index == static_cast<int>(i);
    if (identity)
      out.node = from.node;
    else
      out.node = AddMap(nullptr, std::move(proj), from.node, Types(out.scope));
  } else {
    AggContext agg;
    agg.input = &from.scope;
    for (size_t i = 0; i < k; ++i) agg.group_exprs.push_back(MakeColumn(static_cast<int>(i), from.scope.cols[i].type));
    from = PlanGroupWindow(s, std::move(from), domain != nullptr, &agg);
    std::vector<int> group_index;  // per s.group_by item: its index in agg.group_exprs
    for (const auto& g : s.group_by) {
      // As in PostgreSQL (and SQLite, MySQL): GROUP BY <n> is the n-th select item, and a bare
      // name that is no input column may be a select item's alias.
      const Expr* ge = g.get();
      if (ge->kind == ExprKind::kLiteral && ge->lit_kind == sql::LiteralKind::kInteger) {
        int64_t n = ge->text.size() > 18 ? 0 : std::stoll(ge->text);
        if (n < 1 || n > static_cast<int64_t>(s.items.size()))
          ctx_.Error(ge->pos,
                     fmt::format("GROUP BY position {} is not in the select list (1..{})", ge->text, s.items.size()));
        ge = s.items[n - 1].expr.get();
        if (ge->kind == ExprKind::kStar) ctx_.Error(g->pos, "GROUP BY position refers to '*'");
      } else if (ge->kind == ExprKind::kColumnRef && ge->qualifier.empty() &&
                 binder_.TryResolve(from.scope, "", ge->name, ge->pos) < 0) {
        const Expr* found = nullptr;
        for (const auto& item : s.items) {
          if (item.alias.empty() || !EqualsIgnoreCase(item.alias, ge->name)) continue;
          if (found) ctx_.Error(ge->pos, fmt::format("GROUP BY name '{}' is ambiguous", ge->name));
          found = item.expr.get();
        }
        if (found) ge = found;
      }
      if (ContainsAggregate(*ge)) ctx_.Error(g->pos, "aggregate functions are not allowed in GROUP BY");
      if (ContainsSubquery(*ge) && !agg.input_subqueries.contains(ge)) {
        // Computed per input row, like the key's other parts.
        PlanSubqueries(*ge, &from);
        SubqueryNodes(*ge, &agg.input_subqueries);
      }
      // The group window (grouping sets may repeat it; PlanGroupWindow checked the copies agree).
      const bool window =
          agg.window_call && ge->kind == ExprKind::kFunction && !ge->over && ge->name == agg.window_call->name;
      BoundExprPtr b =
          window ? MakeColumn(agg.window_start, from.scope.cols[agg.window_start].type) : binder_.Bind(*ge, from.scope);
      int at = -1;
      for (size_t n = k; n < agg.group_exprs.size() && at < 0 && !s.grouping_sets.empty(); ++n)
        if (b->Equals(*agg.group_exprs[n])) at = static_cast<int>(n);
      if (at < 0) {
        at = static_cast<int>(agg.group_exprs.size());
        agg.group_exprs.push_back(std::move(b));
      }
      group_index.push_back(at);
    }
    // GROUP BY HOP/SESSION: the window's end is a key too (one value per start for HOP, per start
    // and keys for SESSION), for HOP_END / SESSION_END.
    if (agg.window_call) agg.group_exprs.push_back(MakeColumn(agg.window_end, from.scope.cols[agg.window_end].type));
    // GROUPING SETS / ROLLUP / CUBE: each set as indices into group_exprs (no index twice); a key
    // missing from some set is NULL in that set's rows.
    std::vector<std::vector<int>> sets;
    if (!s.grouping_sets.empty()) {
      for (const auto& set : s.grouping_sets) {
        // In a correlated subquery the domain's keys are in every set.
        std::vector<int> keys;
        for (size_t i = 0; i < k; ++i) keys.push_back(static_cast<int>(i));
        for (int i : set)
          if (std::find(keys.begin(), keys.end(), group_index[i]) == keys.end()) keys.push_back(group_index[i]);
        // GROUP BY HOP/SESSION: a set with the window's start has its end too.
        bool start = false;
        for (int g : keys)
          start = start || (agg.window_call && agg.group_exprs[g]->op == ExprOp::kColumn &&
                            agg.group_exprs[g]->column_index == agg.window_start);
        if (start) keys.push_back(static_cast<int>(agg.group_exprs.size()) - 1);  // the end, pushed last
        sets.push_back(std::move(keys));
      }
      for (size_t g = 0; g < agg.group_exprs.size(); ++g)
        for (const auto& set : sets)
          if (std::find(set.begin(), set.end(), static_cast<int>(g)) == set.end())
            agg.group_exprs[g]->type.nullable = true;
    }
    // Subqueries in aggregate arguments (and FILTER conditions) are computed per input row.
    std::function<void(const Expr&)> plan_args = [&](const Expr& e) {
      if (e.kind == ExprKind::kFunction && IsAggregateName(e.name) && !e.over) {
        std::vector<const Expr*> parts;
        for (const auto& a : e.args)
          if (a) parts.push_back(a.get());
        if (e.filter) parts.push_back(e.filter.get());
        for (const Expr* a : parts) {
          if (!ContainsSubquery(*a)) continue;
          std::set<const Expr*> nodes;
          SubqueryNodes(*a, &nodes);
          bool done = true;
          for (const Expr* n : nodes) done = done && agg.input_subqueries.contains(n);
          if (done) continue;
          PlanSubqueries(*a, &from);
          agg.input_subqueries.insert(nodes.begin(), nodes.end());
        }
        return;
      }
      if (e.kind == ExprKind::kSubquery || e.kind == ExprKind::kExists) return;
      for (const auto& a : e.args)
        if (a) plan_args(*a);
    };
    for (const auto& item : s.items)
      if (item.expr->kind != ExprKind::kStar) plan_args(*item.expr);
    if (s.having) plan_args(*s.having);
    // A correlated global aggregate (no GROUP BY of its own) keeps one row per domain value even
    // where no row matches: a marker COUNT(*) tells the matched values after a LEFT JOIN.
    const bool global_over_domain = domain && s.group_by.empty() && s.grouping_sets.empty();
    Plan agg_plan;
    auto build = [&] {
      int marker = -1;
      if (global_over_domain) {
        AggSpec m;
        m.kind = AggKind::kCountStar;
        m.result_type = SqlType::Of(TypeId::kBigInt, false);
        agg.aggs.push_back(m);
        agg.args.push_back(nullptr);
        agg.keys.push_back(nullptr);
        agg.filters.push_back(nullptr);
        marker = static_cast<int>(agg.group_exprs.size() + agg.aggs.size() - 1);
      }
      // map: group keys, then aggregate arguments (cloned: binding may still look them up)
      std::vector<BoundExprPtr> pre;
      std::vector<PhysType> pre_types;
      for (const auto& g : agg.group_exprs) {
        pre_types.push_back(g->type.phys());
        pre.push_back(g->Clone());
      }
      std::vector<AggSpec> specs = agg.aggs;
      auto add_pre = [&](const BoundExprPtr& e, int* index) {
        if (!e) return;
        *index = static_cast<int>(pre.size());
        pre_types.push_back(e->type.phys());
        pre.push_back(e->Clone());
      };
      // ARRAY_AGG lists its values in the order of ROW(every aggregate argument of the block), the
      // order Feldera's arrays come out in.
      for (size_t a = 0; a < agg.aggs.size(); ++a) {
        if (agg.aggs[a].kind != AggKind::kArrayAgg || agg.aggs[a].distinct) continue;
        std::vector<BoundExprPtr> fields;
        std::vector<SqlType> types;
        for (const auto& arg : agg.args) {
          if (!arg) continue;
          types.push_back(arg->type);
          fields.push_back(arg->Clone());
        }
        agg.keys[a] = MakeCall(ExprOp::kRow, SqlType::Row(std::move(types), false), std::move(fields));
        specs[a].key_type = agg.aggs[a].key_type = agg.keys[a]->type;
      }
      for (size_t a = 0; a < agg.aggs.size(); ++a) {
        add_pre(agg.args[a], &specs[a].arg);
        add_pre(agg.keys[a], &specs[a].key);
        add_pre(agg.filters[a], &specs[a].filter);
      }
      // GROUP BY HOP/SESSION with grouping sets: each set's own input (see AggContext).
      std::vector<int> set_pre_nodes;
      if (agg.window_input && !s.grouping_sets.empty()) {
        if (from.node != agg.window_node)
          ctx_.Error(s.pos,
                     fmt::format("GROUP BY {} with GROUPING SETS here is not supported yet", agg.window_call->name));
        for (const auto& items : s.grouping_sets) {
          std::vector<BoundExprPtr> copy;
          for (const auto& e : pre) copy.push_back(e->Clone());
          set_pre_nodes.push_back(AddMap(nullptr, std::move(copy), agg.window_input(items), pre_types));
        }
      }
      int pre_node = AddMap(nullptr, std::move(pre), from.node, pre_types);
      for (const auto& g : agg.group_exprs) {
        ScopeColumn c{"", "", g->type, false};
        if (g->op == ExprOp::kColumn) {
          c.qualifier = from.scope.cols[g->column_index].qualifier;
          c.name = from.scope.cols[g->column_index].name;
          c.correlated = from.scope.cols[g->column_index].correlated;
        }
        agg_plan.scope.cols.push_back(c);
      }
      for (const auto& a : agg.aggs) agg_plan.scope.cols.push_back({"", "", a.result_type, false});
      if (!sets.empty() || !agg.grouping_calls.empty()) {
        if (sets.empty()) {
          sets.emplace_back();
          for (size_t g = 0; g < agg.group_exprs.size(); ++g) sets.back().push_back(static_cast<int>(g));
        }
        agg_plan.node = GroupingSets(pre_node, pre_types, specs, agg, sets, Types(agg_plan.scope),
                                     set_pre_nodes.empty() ? nullptr : &set_pre_nodes);
        if (domain) agg_plan.node = EmptySetsOverDomain(agg_plan, *domain, from, pre_types, specs, agg, sets);
        return;
      }
      agg_plan.node = circuit_->AddNode(
          std::make_unique<AggregateOp>(pre_types, static_cast<int>(agg.group_exprs.size()), specs, circuit_->pool()),
          {pre_node}, Types(agg_plan.scope));
      if (!global_over_domain) return;
      // domain LEFT JOIN aggregate on the domain columns; unmatched values take the aggregates
      // of no rows.
      std::vector<int> dc;
      for (size_t i = 0; i < k; ++i) dc.push_back(static_cast<int>(i));
      size_t left_width = 0;
      Plan j =
          Join(*domain, agg_plan, NullSafeKeys(domain->scope, dc, agg_plan.scope, dc), true, false, s.pos, &left_width);
      std::vector<BoundExprPtr> fix;
      std::vector<ScopeColumn> cols;
      for (size_t i = 0; i < k; ++i) {
        fix.push_back(MakeColumn(static_cast<int>(i), domain->scope.cols[i].type));
        cols.push_back(agg_plan.scope.cols[i]);
      }
      const int mcol = static_cast<int>(left_width) + marker;
      // The aggregates of no rows, as the aggregate operator computes them (COUNT 0, SUM NULL,
      // ARRAY_AGG the empty array, ...).
      Batch none;
      for (PhysType pt : pre_types) none.cols.push_back(std::make_shared<Column>(pt));
      const Batch* none_in[] = {&none};
      Batch empty = AggregateOp(pre_types, 0, specs).Step(none_in);
      for (size_t a = 0; a < agg.aggs.size(); ++a) {
        const int c = static_cast<int>(left_width + k + a);
        SqlType t = agg.aggs[a].result_type;
        Value zero = empty.size() == 1 ? empty.Get(a, 0) : Value::Null();
        std::vector<BoundExprPtr> isnull;
        isnull.push_back(MakeColumn(mcol, j.scope.cols[mcol].type));
        std::vector<BoundExprPtr> args;
        args.push_back(MakeCall(ExprOp::kIsNull, SqlType::Of(TypeId::kBoolean, false), std::move(isnull)));
        args.push_back(MakeLiteral(zero, t.WithNullable(zero.IsNull() || t.nullable)));
        args.push_back(MakeColumn(c, j.scope.cols[c].type));
        BoundExprPtr v = MakeCall(ExprOp::kCase, t.WithNullable(true), std::move(args));
        v->has_else = true;
        if (!t.nullable && !zero.IsNull()) v->type.nullable = false;
        fix.push_back(std::move(v));
        cols.push_back(agg_plan.scope.cols[k + a]);
      }
      agg_plan = Project(j, std::move(fix), std::move(cols));
    };
    bool having_done = false;
    auto BindHaving = [&](const Expr& h, AggContext* a) {
      BoundExprPtr b = binder_.BindAggregate(h, a);
      if (b->type.id != TypeId::kBoolean && b->type.id != TypeId::kNull)
        ctx_.Error(h.pos, "HAVING needs a BOOLEAN condition");
      if (b->type.id == TypeId::kNull) b = MakeLiteral(Value::Null(), SqlType::Of(TypeId::kBoolean));
      return b;
    };
    if (has_subq || has_window) {
      // The subqueries and window calls are planned over the aggregate's output, so every
      // aggregate call of the select list, the windows and HAVING is registered first.
      std::function<void(const Expr&)> reg = [&](const Expr& e) {
        if (e.kind == ExprKind::kFunction && IsAggregateName(e.name) && !e.over) {
          binder_.BindAggregate(e, &agg);
          return;
        }
        if (e.kind == ExprKind::kInQuery) {
          reg(*e.args[0]);
          return;
        }
        for (const auto& a : e.args)
          if (a) reg(*a);
        if (e.kind == ExprKind::kFunction && e.over) ForEachWindowSpecExpr(*e.over, s, reg);
      };
      for (const auto& item : s.items)
        if (item.expr->kind != ExprKind::kStar) reg(*item.expr);
      if (s.having) reg(*s.having);
      build();
      for (const auto& item : s.items)
        if (ContainsSubquery(*item.expr)) PlanSubqueries(*item.expr, &agg_plan, &agg);
      if (s.having) PlanSubqueries(*s.having, &agg_plan, &agg);
      if (has_window) {
        // HAVING filters the groups before the window functions see them.
        if (s.having) {
          agg_plan = Filter(std::move(agg_plan), BindHaving(*s.having, &agg));
          having_done = true;
        }
        window_lead_ = k;
        agg_plan = PlanWindows(s, std::move(agg_plan), &agg);
        window_lead_ = 0;
      }
    }
    const size_t num_aggs = agg.aggs.size();
    for (size_t i = 0; i < s.items.size(); ++i) {
      const auto& item = s.items[i];
      if (item.expr->kind == ExprKind::kStar) {
        // `*` expands to the FROM columns; in an aggregate block each must be a GROUP BY key
        // (SELECT * FROM t GROUP BY <every column of t> is valid SQL).
        bool any = false;
        for (size_t c = 0; c < from.scope.cols.size(); ++c) {
          const ScopeColumn& col = from.scope.cols[c];
          if (!col.InStar(item.expr->qualifier)) continue;
          any = true;
          BoundExprPtr ref = MakeColumn(static_cast<int>(c), col.type);
          int g = -1;
          for (size_t n = 0; n < agg.group_exprs.size() && g < 0; ++n)
            if (ref->Equals(*agg.group_exprs[n])) g = static_cast<int>(n);
          if (g < 0) {
            std::string full = col.qualifier.empty() ? col.name : col.qualifier + "." + col.name;
            ctx_.Error(item.pos, fmt::format("'*' includes column '{}', which must appear in GROUP BY or be used in "
                                             "an aggregate function",
                                             full));
          }
          proj.push_back(MakeColumn(g, agg.group_exprs[g]->type));
          out.scope.cols.push_back({"", col.name, agg.group_exprs[g]->type, false});
        }
        if (!any && !item.expr->qualifier.empty())
          ctx_.Error(item.pos, fmt::format("unknown table '{}' in {}.*", item.expr->qualifier, item.expr->qualifier));
        continue;
      }
      BoundExprPtr e = binder_.BindAggregate(*item.expr, &agg);
      if (e->type.id == TypeId::kNull) e = binder_.Coerce(std::move(e), SqlType::Of(TypeId::kInteger), item.pos);
      out.scope.cols.push_back({"", OutputName(item, i), e->type, false});
      proj.push_back(std::move(e));
    }
    if (s.having && !having_done) having = BindHaving(*s.having, &agg);
    if (has_subq || has_window) {
      if (agg.aggs.size() != num_aggs) ctx_.Error(s.pos, "internal error: an aggregate call was not registered");
    } else {
      build();
    }
    if (having && ContainsNow(*having)) {
      // Its temporal conditions become temporal filters (see Filter).
      agg_plan = Filter(std::move(agg_plan), std::move(having));
      having = nullptr;
    }
    bool identity = !having && proj.size() == agg_plan.scope.cols.size();
    for (size_t i = 0; identity && i < proj.size(); ++i)
      identity = proj[i]->op == ExprOp::kColumn && proj[i]->column_index == static_cast<int>(i);
    if (identity)
      out.node = agg_plan.node;
    else
      out.node = AddMap(std::move(having), std::move(proj), agg_plan.node, Types(out.scope));
  }
  if (s.distinct) out.node = circuit_->AddNode(std::make_unique<DistinctOp>(), {out.node}, Types(out.scope));
  return out;
}

std::unique_ptr<Circuit> CompileProgram(const std::vector<sql::Statement>& program, std::string_view sql,
                                        const sql::SourceInfo& src, ThreadPool* pool) {
  auto circuit = std::make_unique<Circuit>(pool);
  Planner planner(circuit.get(), sql, src);
  SqlContext ctx{sql, src};
  std::vector<const sql::Statement*> lateness;
  for (const auto& st : program)
    if (st.kind == sql::Statement::Kind::kLateness) lateness.push_back(&st);
  planner.SetViewLateness(lateness);
  for (const auto& st : program) {
    switch (st.kind) {
      case sql::Statement::Kind::kCreateTable:
        planner.AddTable(st);
        break;
      case sql::Statement::Kind::kCreateView:
        planner.AddView(st);
        break;
      case sql::Statement::Kind::kDeclareRecursiveView:
        planner.DeclareRecursiveView(st);
        break;
      case sql::Statement::Kind::kCreateFunction:
        planner.DeclareFunction(st);
        break;
      case sql::Statement::Kind::kCreateIndex:
      case sql::Statement::Kind::kSet:
      case sql::Statement::Kind::kLateness:
      case sql::Statement::Kind::kCreateType:
        break;
      default:
        ctx.Error(st.pos, "a pipeline's program holds only CREATE TABLE and CREATE [MATERIALIZED] VIEW statements");
    }
  }
  planner.Finish();
  for (const sql::Statement* st : lateness) {
    int r = circuit->FindRelation(st->lateness_view);
    if (r < 0 || circuit->relations()[r].kind != Relation::Kind::kView)
      ctx.Error(st->pos, fmt::format("LATENESS names '{}', which is not a view of this program", st->lateness_view));
  }
  AttachWaterlines(circuit.get());
  PushIntoJoins(circuit.get());
  return circuit;
}

Batch RowsFromInsert(const sql::Insert& ins, const Schema& schema, std::string_view sql, const sql::SourceInfo& src) {
  SqlContext ctx{sql, src};
  Binder binder(ctx);
  std::vector<int> target;
  if (ins.columns.empty()) {
    for (size_t i = 0; i < schema.size(); ++i) target.push_back(static_cast<int>(i));
  } else {
    for (const auto& c : ins.columns) {
      int i = schema.IndexOf(c);
      if (i < 0) Fail(ErrorKind::kUsage, "INSERT names unknown column '{}' of {}", c, ins.table);
      target.push_back(i);
    }
  }
  if (ins.query) Fail(ErrorKind::kUsage, "INSERT ... SELECT is not supported");
  BatchBuilder b(schema.PhysTypes());
  Scope empty;
  for (const auto& row : ins.rows) {
    if (row.size() != target.size())
      ctx.Error(row.empty() ? sql::Pos{} : row[0]->pos,
                fmt::format("INSERT has {} values but {} columns", row.size(), target.size()));
    std::vector<Value> vals(schema.size());
    for (size_t k = 0; k < row.size(); ++k) {
      const Field& f = schema.fields[target[k]];
      BoundExprPtr e = binder.Coerce(binder.Bind(*row[k], empty), f.type.WithNullable(true), row[k]->pos);
      Value v = EvaluateConstant(*e);
      if (v.IsNull() && !f.type.nullable) ctx.Error(row[k]->pos, fmt::format("NULL in NOT NULL column '{}'", f.name));
      vals[target[k]] = std::move(v);
    }
    b.AppendRow(vals, 1);
  }
  return b.Finish();
}

size_t AppendOrderByColumns(sql::Query* q) {
  if (!q->select || q->select->distinct || q->order_by.empty()) return 0;
  sql::Select& s = *q->select;
  bool star = false;
  std::vector<std::string> names;  // output names known without planning
  for (size_t i = 0; i < s.items.size(); ++i) {
    const auto& item = s.items[i];
    if (item.expr->kind == ExprKind::kStar)
      star = true;
    else
      names.push_back(OutputName(item, i));
  }
  auto is_output = [&](const Expr& r) {
    if (!r.qualifier.empty()) return false;
    for (const auto& n : names)
      if (EqualsIgnoreCase(n, r.name)) return true;
    return star;  // `*` outputs every (unhidden) FROM column
  };
  size_t added = 0;
  for (auto& o : q->order_by) {
    const Expr& e = *o.expr;
    if (e.kind == ExprKind::kLiteral) continue;  // a position (or a constant)
    bool keep = !ContainsAggregate(e) && !ContainsSubquery(e);
    if (keep) {
      std::vector<const Expr*> refs;
      CollectRefs(e, &refs);
      for (const Expr* r : refs) keep = keep && is_output(*r);
    }
    if (keep) continue;
    std::string name = fmt::format("{}{}", kOrderColumnPrefix, ++added);
    auto ref = std::make_unique<Expr>();
    ref->kind = ExprKind::kColumnRef;
    ref->pos = e.pos;
    ref->name = name;
    sql::SelectItem item;
    item.pos = e.pos;
    item.alias = name;
    item.expr = std::move(o.expr);
    s.items.push_back(std::move(item));
    o.expr = std::move(ref);
  }
  return added;
}

std::vector<std::vector<Value>> OrderAndLimit(const Batch& result, const Schema& schema, const sql::Query& q,
                                              std::string_view sql, const sql::SourceInfo& src) {
  return OrderAndLimit(result, schema, q, sql, src, NullOrder::kLargest);
}

std::vector<std::vector<Value>> OrderAndLimit(const Batch& result, const Schema& schema, const sql::Query& q,
                                              std::string_view sql, const sql::SourceInfo& src, NullOrder nulls) {
  SqlContext ctx{sql, src};
  Binder binder(ctx);
  Scope scope;
  for (const auto& f : schema.fields) scope.cols.push_back({"", f.name, f.type, false});
  std::vector<ColumnPtr> keys;
  for (const auto& o : q.order_by) {
    const Expr& e = *o.expr;
    if (e.kind == ExprKind::kLiteral && e.lit_kind == sql::LiteralKind::kInteger) {
      int64_t k = std::stoll(e.text);
      if (k < 1 || k > static_cast<int64_t>(schema.size()))
        ctx.Error(e.pos, fmt::format("ORDER BY position {} is not in the select list (1..{})", k, schema.size()));
      keys.push_back(result.cols[k - 1]);
      continue;
    }
    BoundExprPtr b = binder.Bind(e, scope);
    keys.push_back(Evaluate(*b, result));
  }
  std::vector<uint32_t> order;
  for (size_t r = 0; r < result.size(); ++r)
    for (int64_t w = 0; w < result.weights[r]; ++w) order.push_back(static_cast<uint32_t>(r));
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    for (size_t k = 0; k < keys.size(); ++k) {
      const auto& o = q.order_by[k];
      bool an = keys[k]->IsNull(a), bn = keys[k]->IsNull(b);
      // By default NULL sorts as the largest (or, with kSmallest, the smallest) value.
      bool nulls_first = o.nulls_first.value_or(nulls == NullOrder::kLargest ? o.desc : !o.desc);
      if (an || bn) {
        if (an && bn) continue;
        return an ? nulls_first : !nulls_first;
      }
      auto c = keys[k]->Get(a) <=> keys[k]->Get(b);
      if (c == 0) continue;
      return o.desc ? c > 0 : c < 0;
    }
    return false;
  });
  size_t begin = static_cast<size_t>(std::max<int64_t>(0, q.offset.value_or(0)));
  size_t end = order.size();
  if (q.limit) end = std::min(end, begin + static_cast<size_t>(std::max<int64_t>(0, *q.limit)));
  std::vector<std::vector<Value>> rows;
  for (size_t i = begin; i < end; ++i) {
    std::vector<Value> row;
    for (size_t c = 0; c < result.width(); ++c) row.push_back(result.cols[c]->Get(order[i]));
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace fld::plan
