import { Database, type Statement } from "bun:sqlite";
import { parentPort, workerData } from "node:worker_threads";
import type { SqlAnswer, SqlAnswers, SqlOp, SqlPost, SqlRequest } from "./sqlite-protocol.ts";

// The server's SQLite statements, off its event loop: the server sends each transaction's
// statements here (BEGIN IMMEDIATE … COMMIT, pipelined) and reads here what it reads on its hot
// paths. One write connection, whose transaction the server drives one at a time, and one read
// connection, which sees only what is committed.

const { path } = workerData as { path: string };
const PRAGMAS = "PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON; PRAGMA wal_autocheckpoint = 0;";

function connect(): { db: Database; statements: Map<string, Statement> } {
  const db = new Database(path);
  db.exec(PRAGMAS);
  return { db, statements: new Map() };
}

const write = connect();
const read = connect();

function run(conn: ReturnType<typeof connect>, op: SqlOp): unknown[] {
  let stmt = conn.statements.get(op.text);
  if (!stmt) conn.statements.set(op.text, (stmt = conn.db.prepare(op.text)));
  return stmt.all(...(op.params as never[]));
}

function answer(msg: SqlRequest): SqlAnswer {
  const conn = msg.read ? read : write;
  const rows: unknown[][] = [];
  try {
    for (const op of msg.ops) rows.push(run(conn, op));
    return { id: msg.id, rows };
  } catch (err) {
    const e = err as { message?: string; code?: string; name?: string };
    return { id: msg.id, error: { message: String(e.message ?? err), code: e.code, name: e.name }, at: rows.length };
  }
}

parentPort!.on("message", (msg: SqlPost | "stop") => {
  if (msg === "stop") {
    write.db.close();
    read.db.close();
    process.exit(0);
  }
  const requests: SqlRequest[] = typeof msg === "string" ? JSON.parse(msg) : msg;
  parentPort!.postMessage(requests.map(answer) satisfies SqlAnswers);
});
