import type { SqlTx } from "../src/db/sql.ts";
import { processBatch } from "../src/ledger/batch-process.ts";
import { batchFromWire, type WireBatch } from "../src/ledger/batch-wire.ts";

// The transactions the SQLite worker runs whole (SqlRunner.inWorker): code that would otherwise
// run on the server's event loop between its statements. Each takes a transaction and arguments
// that JSON carries as they are (the server's post goes across as one string), and answers plain
// data (cloned back).

export const PROCEDURES: Record<string, (tx: SqlTx, args: never) => Promise<unknown>> = {
  /** The ledger's batch of holds, settles and recoveries. */
  ledgerBatch: (tx: SqlTx, wire: WireBatch) => {
    const { jobs, context } = batchFromWire(wire);
    return processBatch(tx, jobs, context);
  },
};
