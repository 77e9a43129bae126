/** What one holder (a tenant, or a key) has in flight now, as the counters see them (shared across the fleet with Redis, else this instance's). */
export interface LiveUse {
  sessions: number;
  requests_last_minute: number;
}

/** The counters' side that `GET /account/limits` and `limits show` read. */
export interface LiveUsage {
  tenant(tenantId: string): Promise<LiveUse>;
  key(keyId: string): Promise<LiveUse>;
}
