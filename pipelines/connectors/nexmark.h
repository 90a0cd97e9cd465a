// The nexmark input connector (Feldera's): the Nexmark benchmark's auction event stream, as
// three tables fed by three linked connectors, one per table:
//   {"transport": {"name": "nexmark", "config": {"table": "person"|"auction"|"bid",
//                                                "options": {...}}}, "format": {"name": "csv"}}
// `options` (on at most one of the three; it applies to all) takes Feldera's keys:
//   events (default 100,000,000), threads (generator threads, default 4),
//   batch_size_per_thread (events one generator task makes, default 1,000),
//   max_step_size_per_thread (default 10,000; see Steps).
// A pipeline using nexmark needs exactly one connector per table (ConnectorGroup::Complete says
// which is missing or doubled). `format` may be absent or csv (Feldera passes the generated rows
// through its CSV parser; fld fills the columns directly). `max_batch_size` is accepted and, as in
// Feldera, ignored: the three tables must step together.
//
// Promises:
// - The event model is the standard one (Apache Beam / Flink Nexmark, as Feldera's generator
//   has it): event n has event time n * 10 ms after 1970-01-01 00:00:00; n mod 50 = 0 is a new
//   person, 1..3 a new auction, the other 46 a bid (proportions 1:3:46). Person ids are
//   1000 + n / 50, auction ids count the auctions from 1000; sellers and bidders are mostly
//   "hot" people (every 100th id), otherwise one of the last 1,000 people (or up to 10 ahead);
//   bids go to a hot auction half of the time, otherwise to one of the last 100 auctions;
//   auctions expire 1 ms .. 33.32 s after they open; prices are ceil(100 * 10^(6u)) cents-like
//   units (100 .. 100,000,000), categories 10..14, states AZ CA ID OR WA WY, ten cities, names
//   from Beam's lists, 99% of bids on the four hot channels (Google, Facebook, Baidu, Apple)
//   with their fixed URLs, 1% on channel-N (N < 10,000) whose URL has 90% of the time
//   `&channel_id=` and N's bits reversed; `extra` pads each event to Beam's average sizes
//   (person 200, auction 500, bid 100 bytes) +-20%.
// - Determinism: event n is a pure function of n (each of its fields draws from its own random
//   sub-stream of n), so the rows, their order, and the steps are the same for any `threads`,
//   any batch size and across a kill -9 and resume: Position() is {"event": next event id} and
//   Seek regenerates from there. The values are fld's own draws: the same distributions as
//   Feldera's generator, not the same random numbers.
// - Steps: one Read takes the next 4 x max_step_size_per_thread events (40,000 by default:
//   Feldera's step at its default of 4 threads; fixed here whatever `threads` is, so the steps do
//   not depend on it) and returns this table's rows among them. The controller reads each input
//   once per poll, so the three tables advance over the same event range in the same step.
//   A Read given fewer max_records than the range holds takes fewer events.
// - Columns are matched by name (case and underscores ignored: emailAddress = email_address);
//   a table may omit fields (they are not generated) but every column must be one of its
//   table's fields with a fitting type (integers, TIMESTAMP, CHAR/VARCHAR).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>

#include "pipelines/connectors/connector.h"

namespace fld {

// Builds the connector for one table (nullptr with ctx.validate_only, after checking it).
std::unique_ptr<InputConnector> MakeNexmarkInput(const nlohmann::json& transport_config, const nlohmann::json* format,
                                                 const Schema& schema, const ConnectorContext& ctx);

// Event n's table: 0 person, 1 auction, 2 bid. (For tests.)
int NexmarkEventKind(uint64_t event);
// How many of events [0, end) are of `kind`. (For tests.)
uint64_t NexmarkCountBefore(int kind, uint64_t end);

}  // namespace fld
