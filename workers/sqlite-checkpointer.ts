import { Database } from "bun:sqlite";
import { parentPort, workerData } from "node:worker_threads";

// Checkpoints the SQLite WAL into the database file off the server's event loop: a checkpoint is
// where SQLite fsyncs, and on the main thread that stalled every session for milliseconds. PASSIVE
// never waits for the writers or readers of the main connection.

const { path, everyMs } = workerData as { path: string; everyMs: number };
const db = new Database(path);
db.exec("PRAGMA busy_timeout = 5000");
const checkpoint = () => {
  try {
    db.exec("PRAGMA wal_checkpoint(PASSIVE)");
  } catch {
    // busy or locked: the next round catches up
  }
};
const timer = setInterval(checkpoint, everyMs);
parentPort!.on("message", (msg: "stop") => {
  if (msg !== "stop") return;
  clearInterval(timer);
  checkpoint();
  db.close();
  process.exit(0);
});
