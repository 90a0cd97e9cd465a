// mk_duckdb.js FILE.sql > FILE.test: like mk_pg.py ('S: <sql>' statements, 'Q <types> [mode]:
// <sql>' queries), but the expected answers come from DuckDB (Node.js with @duckdb/node-api on
// NODE_PATH, e.g. NODE_PATH=/opt/fld-node/node_modules). A query may end with ' --duckdb: <sql>':
// DuckDB answers that form of it, the .test keeps the first.
'use strict';
const fs = require('fs');
const { DuckDBInstance } = require('@duckdb/node-api');

function fmtValue(v, t) {
  if (v === null || v === undefined) return 'NULL';
  if (t === 'I') {
    if (typeof v === 'boolean') return v ? '1' : '0';
    if (typeof v === 'bigint') return v.toString();
    return String(Math.trunc(Number(v)));
  }
  if (t === 'R') return Number(v).toFixed(3);
  const s = String(v);
  return s === '' ? '(empty)' : s;
}

async function main() {
  const inst = await DuckDBInstance.create(':memory:');
  const conn = await inst.connect();
  const out = [];
  for (const raw of fs.readFileSync(process.argv[2], 'utf8').split('\n')) {
    const line = raw.replace(/\s+$/, '');
    if (!line.trim() || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    const head = line.slice(0, colon);
    let sql = line.slice(colon + 1).trim();
    if (head === 'S') {
      await conn.run(sql);
      out.push(`statement ok\n${sql}\n`);
      continue;
    }
    if (head === 'E') {
      out.push(`statement error\n${sql}\n`);
      continue;
    }
    let duck = sql;
    const alt = sql.indexOf(' --duckdb: ');
    if (alt >= 0) {
      duck = sql.slice(alt + ' --duckdb: '.length).trim();
      sql = sql.slice(0, alt).trim();
    }
    const parts = head.split(/\s+/);
    const types = parts[1];
    const mode = parts[2] || 'rowsort';
    const rows = (await conn.runAndReadAll(duck)).getRows().map((r) => r.map((v, i) => fmtValue(v, types[i])));
    if (mode === 'rowsort') rows.sort((a, b) => (a.join('\x1f') < b.join('\x1f') ? -1 : a.join('\x1f') > b.join('\x1f') ? 1 : 0));
    out.push(`query ${types} ${mode}\n${sql}\n----\n${rows.flat().map((v) => v + '\n').join('')}`);
  }
  console.log(out.join('\n'));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
