// Ids of what becomes a database row on every request (its activity record, its ledger entries):
// time-ordered UUIDs (version 7: 48 bits of milliseconds, then 74 random bits). Random (v4) keys
// land all over their primary-key index, so that each batch of settles dirtied a page of it per
// request, which the SQLite writer then wrote to its WAL whole; time-ordered ones land together at
// its end. Still unguessable, they do tell when they were made, as a session's timing does anyway.

/** A new time-ordered UUID (`Bun.randomUUIDv7`), with `prefix` and an underscore before it when given. */
export const recordId = (prefix?: string): string => (prefix ? `${prefix}_${Bun.randomUUIDv7()}` : Bun.randomUUIDv7());
