import postgres from "postgres";

// Tests that need PostgreSQL get a fresh database of their own. In CI (REQUIRE_POSTGRES=1) a
// missing server is a failure; elsewhere those tests skip with a printed reason.

const ADMIN_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

async function reachable(): Promise<boolean> {
  const sql = postgres(ADMIN_URL, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

export const postgresAvailable = await reachable();
if (!postgresAvailable) {
  if (process.env.REQUIRE_POSTGRES === "1") throw new Error(`PostgreSQL is required (REQUIRE_POSTGRES=1) but ${ADMIN_URL} is not reachable`);
  console.warn(`skipping PostgreSQL tests: ${ADMIN_URL} is not reachable (set TEST_POSTGRES_URL)`);
}

/** Creates an empty database and returns its URL and a function that drops it. */
export async function freshPostgres(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `voxroute_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end({ timeout: 1 });
    },
  };
}
