// The DuckDB side of the nexmark oracle test (run by oracle.py with NODE_PATH pointing at the
// @duckdb/node-api installation). Reads a manifest (JSON, argv[2]):
//   {"tables": [{"name", "csv", "columns": [[name, duckdb_type], ...]}],
//    "queries": [{"name", "sql", "csv"|null, "key"?: [column index, ...]}], "out": path}
// loads every table from fld's CSV output (the columns then the weight, which must be 1), runs each
// query's DuckDB translation and, when fld produced the view (csv), compares the two multisets of
// rows: fld's rows summed by weight against DuckDB's rows counted. fld's values are read with the
// types of DuckDB's result columns, so "1.50" and "1.5" or two spellings of a timestamp compare
// equal. With "key", only those columns are compared (for queries whose other columns depend on
// how ties are broken). Writes {"name": {"expected", "got", "missing", "extra", "samples", "error"}} to out.
'use strict';
const fs = require('fs');
const { DuckDBInstance } = require('@duckdb/node-api');

function quote(s) {
  return "'" + String(s).replace(/'/g, "''") + "'";
}

function csvColumns(cols) {
  return '{' + cols.map(([n, t]) => `${quote(n)}: ${quote(t)}`).join(', ') + '}';
}

function readCsv(path, cols) {
  return `read_csv(${quote(path)}, header = false, auto_detect = false, allow_quoted_nulls = false, ` +
         `quote = '"', escape = '"', delim = ',', columns = ${csvColumns(cols)})`;
}

async function main() {
  const manifest = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  const all = async (sql) => (await conn.runAndReadAll(sql)).getRows();
  await conn.run("SET TimeZone = 'UTC'");
  for (const t of manifest.tables) {
    const cols = t.columns.concat([['__weight', 'BIGINT']]);
    await conn.run(`CREATE TABLE ${t.name} AS SELECT * EXCLUDE (__weight) FROM ${readCsv(t.csv, cols)}`);
    const bad = await all(`SELECT count(*) FROM ${readCsv(t.csv, cols)} WHERE __weight <> 1`);
    if (Number(bad[0][0]) !== 0) throw new Error(`${t.csv}: rows with a weight other than 1`);
  }
  const results = {};
  for (const q of manifest.queries) {
    const r = { expected: null, got: null, missing: null, extra: null, samples: [], error: null };
    results[q.name] = r;
    try {
      const desc = await all(`DESCRIBE ${q.sql}`);
      const cols = desc.map((row, i) => [`c${i}`, String(row[1])]);
      const names = cols.map(([n]) => n).join(', ');
      await conn.run(`CREATE OR REPLACE TABLE expected AS SELECT * FROM (${q.sql}) AS t(${names})`);
      r.expected = Number((await all('SELECT count(*) FROM expected'))[0][0]);
      if (!q.csv) continue;
      await conn.run(`CREATE OR REPLACE TABLE got AS SELECT * FROM ${readCsv(q.csv, cols.concat([['__w', 'BIGINT']]))}`);
      r.got = Number((await all('SELECT coalesce(sum(__w), 0) FROM got'))[0][0]);
      const cmp = q.key ? q.key.map((i) => cols[i][0]).join(', ') : names;
      const e = `SELECT ${cmp}, count(*) AS __n FROM expected GROUP BY ALL`;
      const g = `SELECT ${cmp}, sum(__w) AS __n FROM got GROUP BY ALL HAVING sum(__w) <> 0`;
      r.missing = Number((await all(`SELECT count(*) FROM (${e} EXCEPT ${g})`))[0][0]);
      r.extra = Number((await all(`SELECT count(*) FROM (${g} EXCEPT ${e})`))[0][0]);
      const show = async (sql, tag) => {
        for (const row of await all(`${sql} LIMIT 3`)) r.samples.push(tag + ' ' + row.map(String).join(' | '));
      };
      if (r.missing) await show(`${e} EXCEPT ${g}`, 'duckdb has (row | count):');
      if (r.extra) await show(`${g} EXCEPT ${e}`, 'fld has (row | weight):');
    } catch (err) {
      r.error = String(err.message || err).split('\n')[0];
    }
  }
  fs.writeFileSync(manifest.out, JSON.stringify(results, null, 1));
}

main().catch((err) => {
  console.error(`duckdb_compare: ${err.message || err}`);
  process.exit(1);
});
