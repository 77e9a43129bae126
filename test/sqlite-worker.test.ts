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
