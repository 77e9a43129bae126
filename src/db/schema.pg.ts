import { boolean, index, pgTable, text, timestamp } from "drizzle-orm/pg-core";

// PostgreSQL shape of the database (for fleets). Keep in step with schema.sqlite.ts.

export const tenants = pgTable("tenants", {
  id: text("id").primaryKey(),
  name: text("name").notNull().unique(),
  disabled: boolean("disabled").notNull().default(false),
  createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
});

export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull().references(() => tenants.id),
    /** The first characters of the key, enough to recognise it in a listing. */
    prefix: text("prefix").notNull(),
    /** SHA-256 of the whole key, hex; the key itself is never stored. */
    hash: text("hash").notNull().unique(),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
    revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [index("api_keys_tenant_idx").on(t.tenantId)],
);
