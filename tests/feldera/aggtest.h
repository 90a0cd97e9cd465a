// The Feldera aggregate/order-by test corpus (runtime_aggtest_extracted.jsonl) run through fld.
//
// The corpus is JSON lines, one object per table or view, extracted from Feldera's Python tests:
//   {"kind": "table", "class", "file", "sql": "CREATE TABLE ...", "data": [{col: value}, ...]}
//   {"kind": "view",  "class", "file", "sql": "CREATE MATERIALIZED VIEW ...",
//    "data": [{col: value}, ...]  or  "data_unparsed": "<a Python literal of that list>"}
// Expected values are JSON (decimals as {"decimal": "12.50"}, rows as objects, arrays as
// arrays); `data_unparsed` holds Python literals with None/True/False, t('12:00:00'),
// ts('2020-01-01T12:00:00') and bytes.fromhex('0a0b').
//
// Each view is one case: a fresh circuit holds every table of the corpus (tables whose CREATE
// fails are left out and their error reported for views reading them) and the view; every
// table's rows go through fld's JSON parser and into the circuit in three steps, like the
// sqllogictest runner does: the first half, then the second half plus a copy of one or two
// existing rows, then those copies deleted again (weight -1). The view's final contents are
// compared with the expected rows as multisets (a view's contents have no order, even with
// ORDER BY ... LIMIT), each value compared in the view column's type: numbers numerically
// (REAL/DOUBLE to 6 significant digits), decimals exactly, dates and times as text.
// Views whose expected rows are empty (`"data": []`) are skipped: in this corpus they are the
// order-by checks whose expectations the extraction did not capture.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace fld::feldera {

struct CaseResult {
  std::string name;  // the test's class
  bool skipped = false;
  bool passed = false;
  std::string reason;  // why it failed or was skipped (first line: the grouping key)
};

// Runs every view of the corpus file. Throws fld::Error when the file cannot be read.
std::vector<CaseResult> RunCorpus(const std::string& path, const std::string& filter);

// Converts a Python literal (None, True, False, 'strings', t('..'), ts('..'), bytes.fromhex('..'),
// lists, dicts, numbers) to JSON text. Times become strings, timestamps strings with a space
// instead of the 'T', bytes {"bytes": "<hex>"}. Throws fld::Error on text it does not know.
std::string PythonLiteralToJson(const std::string& text);

}  // namespace fld::feldera
