import { Database } from "bun:sqlite";
import { afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import { SqliteWorker, workerRunner } from "../src/db/sqlite-worker.ts";
import { WriteTurns } from "../src/db/write-turns.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

// The SQLite worker that runs the hot-path SQL off the event loop: statements in order, a failure
// named at its statement, transactions that commit or roll back whole, and no request left waiting
// once the worker is gone. (Rejections are awaited with `.catch` before they are checked: Bun's
// `expect(promise).rejects` waits in a way that does not take a worker's messages.)

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: Error) => err,
  );

const workers: SqliteWorker[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) await w.stop();
});

function fresh(): { path: string; worker: SqliteWorker } {
  const path = join(tempDir("sqlite-worker-"), "db.sqlite");
  const db = new Database(path, { create: true });
  db.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
  db.close();
  const worker = new SqliteWorker(path);
  workers.push(worker);
  return { path, worker };
}

test("parameters JSON would change cross as they are: bytes, a bigint, a non-finite number, beside text and numbers in the same turn", async () => {
  const { worker } = fresh();
  const bytes = new Uint8Array([0, 1, 254, 255]);
  const [text, blob, big, inf, back] = await Promise.all([
    worker.send([{ text: "SELECT ? AS v, ? AS n, ? AS b, ? AS z", params: ['é\u2028"', 1.5, true, null] }]),
    worker.send([{ text: "SELECT ? AS v, typeof(?) AS t", params: [bytes, bytes] }]),
    worker.send([{ text: "SELECT ? + 1 AS v", params: [9007199254740993n] }]),
    worker.send([{ text: "SELECT ? AS v", params: [Number.POSITIVE_INFINITY] }]),
    worker.send([{ text: "SELECT typeof(?) AS t", params: [1.5] }]),
  ]);
  expect(text).toEqual([[{ v: 'é\u2028"', n: 1.5, b: 1, z: null }]]);
  expect(blob).toEqual([[{ v: bytes, t: "blob" }]]);
  expect(big).toEqual([[{ v: 9007199254740994 }]]);
  expect(inf).toEqual([[{ v: Number.POSITIVE_INFINITY }]]);
  expect(back).toEqual([[{ t: "real" }]]);
});

test("statements of one turn go together and answer in order; a failure stops its request at that statement", async () => {
  const { worker } = fresh();
  const [a, b] = await Promise.all([worker.send([{ text: "INSERT INTO t (v) VALUES (?) RETURNING id", params: ["x"] }]), worker.send([{ text: "SELECT v FROM t", params: [] }])]);
  expect(a).toEqual([[{ id: 1 }]]);
  expect(b).toEqual([[{ v: "x" }]]);
  const failed = worker.send([
    { text: "INSERT INTO t (v) VALUES (?)", params: ["y"] },
    { text: "INSERT INTO t (v) VALUES (?)", params: [null] },
    { text: "INSERT INTO t (v) VALUES (?)", params: ["z"] },
  ]);
  expect(await failure(failed)).toMatchObject({ name: "SQLiteError", message: expect.stringContaining("NOT NULL") });
  expect(await worker.send([{ text: "SELECT v FROM t ORDER BY id", params: [] }], true)).toEqual([[{ v: "x" }, { v: "y" }]]);
});

test("a transaction commits whole, or rolls back whole when its body throws; reads see only what is committed", async () => {
  const { worker } = fresh();
  const sql = workerRunner(worker, new WriteTurns());
  await sql.transaction(async (tx) => {
    await tx.query("INSERT INTO t (v) VALUES (?)", ["kept"]);
    tx.later("INSERT INTO t (v) VALUES (?)", ["kept too"]);
  });
  const thrown = await failure(
    sql.transaction(async (tx) => {
      await tx.query("INSERT INTO t (v) VALUES (?)", ["dropped"]);
      expect(await sql.query("SELECT count(*) AS n FROM t")).toEqual([{ n: 2 }]); // the other connection: committed rows only
      throw new Error("changed my mind");
    }),
  );
  expect(thrown?.message).toBe("changed my mind");
  expect(await sql.query<{ v: string }>("SELECT v FROM t ORDER BY id")).toEqual([{ v: "kept" }, { v: "kept too" }]);
});

test("once the worker is gone, requests fail at once instead of waiting forever", async () => {
  const { worker } = fresh();
  await (worker as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
  await Bun.sleep(20);
  expect((await failure(worker.send([{ text: "SELECT 1", params: [] }])))?.message).toBe("the SQLite worker stopped");
});

test("requests made before stop are answered; after it they fail", async () => {
  const { worker } = fresh();
  workers.pop();
  const before = worker.send([{ text: "SELECT 1 AS one", params: [] }]);
  const stopped = worker.stop();
  expect(await before).toEqual([[{ one: 1 }]]);
  await stopped;
  expect((await failure(worker.send([{ text: "SELECT 1", params: [] }])))?.message).toBe("the database is closed");
});

test("a procedure runs whole in the worker's write transaction: one the worker does not know fails, and the worker answers the requests after it", async () => {
  const { worker } = fresh();
  const unknown = await failure(worker.procedure("no_such_procedure", {}));
  expect(unknown?.message).toBe("no procedure no_such_procedure");
  const [[row]] = (await worker.send([{ text: "SELECT 1 AS one", params: [] }], true)) as [[{ one: number }]];
  expect(row).toEqual({ one: 1 });
});
