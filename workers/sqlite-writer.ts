import { Database } from "bun:sqlite";
import { parentPort, workerData } from "node:worker_threads";
import { nowTx, type RunNow, runsNow, type SqlTx } from "../src/db/sql.ts";
import { processBatch } from "../src/ledger/batch-process.ts";
import { batchFromWire, type WireBatch } from "../src/ledger/batch-wire.ts";
import type { ProcedureRequest, SqlAnswer, SqlPost, SqlRequest } from "./sqlite-protocol.ts";

// The server's SQLite statements, off its event loop: the server sends each transaction's
// statements here (BEGIN IMMEDIATE … COMMIT, pipelined) and reads here what it reads on its hot
// paths, or has a whole transaction run here (a procedure: the ledger's batches). One write
// connection, whose transaction the server drives one at a time, and one read connection, which
// sees only what is committed.

const { path } = workerData as { path: string };
const PRAGMAS = "PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON; PRAGMA wal_autocheckpoint = 0;";

function connect(): { db: Database; run: RunNow } {
  const db = new Database(path);
  db.exec(PRAGMAS);
  return { db, run: runsNow(db) };
}

const write = connect();
const read = connect();

const failure = (id: number, err: unknown, at: number): SqlAnswer => {
  const e = err as { message?: string; code?: string; name?: string };
  return { id, error: { message: String(e.message ?? err), code: e.code, name: e.name }, at };
};

function answer(msg: SqlRequest): SqlAnswer {
  const conn = msg.read ? read : write;
  const rows: unknown[][] = [];
  try {
    for (const op of msg.ops) rows.push(conn.run(op.text, op.params));
    return { id: msg.id, rows };
  } catch (err) {
    return failure(msg.id, err, rows.length);
  }
}

/**
 * The transactions this worker runs whole (`SqlRunner.inWorker`): code that would otherwise run on
 * the server's event loop between its statements. Each takes the write transaction and arguments
 * JSON carries as they are, and answers plain data.
 */
const PROCEDURES: Record<string, (tx: SqlTx, args: never) => Promise<unknown>> = {
  /** The ledger's batch of holds, settles and recoveries. */
  ledgerBatch: (tx: SqlTx, wire: WireBatch) => {
    const { jobs, context } = batchFromWire(wire);
    return processBatch(tx, jobs, context);
  },
};

// Statements run as they are asked for: a procedure's awaits settle at once, within this message.
const tx = nowTx(write.run);

async function procedure(msg: ProcedureRequest): Promise<SqlAnswer> {
  try {
    const fn = PROCEDURES[msg.procedure];
    if (!fn) throw new Error(`no procedure ${msg.procedure}`);
    write.run("BEGIN IMMEDIATE");
    const result = await fn(tx, msg.args as never);
    write.run("COMMIT");
    return { id: msg.id, result };
  } catch (err) {
    try {
      if (write.db.inTransaction) write.db.exec("ROLLBACK");
    } catch {} // the failure answered is the first one
    return failure(msg.id, err, 0);
  }
}

async function answerAll(requests: (SqlRequest | ProcedureRequest)[]): Promise<SqlAnswer[]> {
  const answers: SqlAnswer[] = [];
  for (const r of requests) answers.push("procedure" in r ? await procedure(r) : answer(r));
  return answers;
}

/** Answers a post, whatever happens: a request left unanswered would be waited for forever. */
async function respond(requests: (SqlRequest | ProcedureRequest)[]): Promise<void> {
  let answers: SqlAnswer[];
  try {
    answers = await answerAll(requests);
  } catch (err) {
    answers = requests.map((r) => failure(r.id, err, 0));
  }
  try {
    parentPort!.postMessage(answers);
  } catch (err) {
    parentPort!.postMessage(requests.map((r) => failure(r.id, err, 0))); // an answer that could not be cloned
  }
}

// Posts are answered one after another, in order, each whole before the next begins.
let answering = Promise.resolve();
parentPort!.on("message", (msg: SqlPost | "stop") => {
  if (msg === "stop") {
    answering = answering.then(() => {
      write.db.close();
      read.db.close();
      process.exit(0);
    });
    return;
  }
  const requests: (SqlRequest | ProcedureRequest)[] = typeof msg === "string" ? JSON.parse(msg) : msg;
  answering = answering.then(() => respond(requests));
});
