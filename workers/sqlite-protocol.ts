// The messages between the server and its SQLite writer worker (workers/sqlite-writer.ts).

/** One statement: `?` placeholders, dates already as epoch milliseconds. */
export interface SqlOp {
  text: string;
  params: unknown[];
}

/**
 * Statements run in order, on the write connection (inside the transaction it may hold) or, with
 * `read`, on a connection of their own that sees only what is committed. `id` matches the answer.
 */
export interface SqlRequest {
  id: number;
  ops: SqlOp[];
  read?: boolean;
}

/** A procedure of the worker's (`PROCEDURES` in sqlite-writer.ts), run whole in one write transaction of the worker's; `args` are plain JSON. */
export interface ProcedureRequest {
  id: number;
  /** A name in `PROCEDURES`. */
  procedure: string;
  args: unknown;
}

/**
 * What the server posts: the requests made in one turn of its event loop, run in order; as their
 * JSON when every parameter is a string, a finite number, a boolean or null (a string crosses to
 * the worker for a fraction of what cloning the arrays costs the event loop).
 */
export type SqlPost = (SqlRequest | ProcedureRequest)[] | string;

/** What the worker posts back: the answers to one post, in order. */
export type SqlAnswers = SqlAnswer[];

export type SqlAnswer =
  /** Each statement's rows ([] for statements that return none). */
  | { id: number; rows: unknown[][] }
  /** A procedure's answer. */
  | { id: number; result: unknown }
  /** The statement at `at` failed; those after it did not run. */
  | { id: number; error: { message: string; code?: string; name?: string }; at: number };
