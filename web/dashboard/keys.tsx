import { useState } from "preact/hooks";
import { api, describeFailure } from "../api.ts";
import { when } from "../format.ts";
import type { Session } from "../session.ts";
import { useApi } from "../use-api.ts";
import type { LimitsReport } from "../../src/limits/types.ts";
import { AccountLimits, limitsText, NewKeyFields, type NewKeyLimits, newKeyBody, useText } from "./key-limits.tsx";

interface Key {
  id: string;
  prefix: string;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** `/account/keys`: listed by prefix with their limits and use, created (the key shown once, here, with its own limits if given), revoked after a confirmation. */
export function Keys({ session }: { session: Session }) {
  const { data, error, reload: reloadKeys } = useApi<{ items: Key[] }>("/account/keys", session.key);
  const limits = useApi<LimitsReport>("/account/limits", session.key);
  const reload = () => {
    reloadKeys();
    limits.reload();
  };
  const [newLimits, setNewLimits] = useState<NewKeyLimits>({});
  const [created, setCreated] = useState<string>();
  const [confirming, setConfirming] = useState<string>();
  const [failure, setFailure] = useState("");
  const act = async (action: () => Promise<void>) => {
    setFailure("");
    try {
      await action();
    } catch (err) {
      setFailure(describeFailure(err));
    }
    reload();
  };
  const create = () =>
    act(async () => {
      setCreated((await api<{ api_key: string }>("/account/keys", { method: "POST", key: session.key, body: newKeyBody(newLimits) })).api_key);
      setNewLimits({});
    });
  const use = (k: Key) => limits.data?.keys.find((l) => l.id === k.id);
  const revoke = (k: Key) =>
    act(async () => {
      await api(`/account/keys/${encodeURIComponent(k.id)}`, { method: "DELETE", key: session.key });
      setConfirming(undefined);
    });

  return (
    <>
      <AccountLimits report={limits.data} />
      <NewKeyFields values={newLimits} onInput={setNewLimits} />
      <button type="button" onClick={create}>
        Create a key
      </button>
      {created && (
        <div class="notice" role="status">
          <p>
            <strong>Your new key.</strong> Copy it now: it is not shown again.
          </p>
          <div class="row">
            <input aria-label="New API key" readOnly value={created} data-testid="new-key" onFocus={(e) => e.currentTarget.select()} />
            <button type="button" class="secondary" onClick={() => navigator.clipboard?.writeText(created)}>
              Copy
            </button>
            <button type="button" class="secondary" onClick={() => setCreated(undefined)}>
              Done
            </button>
          </div>
        </div>
      )}
      <p class="error" role="alert">
        {error || limits.error || failure}
      </p>
      <div class="scroll">
        <table class="fit" data-testid="keys">
          <caption class="sr-only">API keys, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Limits</th>
              <th scope="col">Used</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {data?.items.map((k) => (
              <tr>
                <td data-label="Key">
                  <code>{k.prefix}…</code>
                  {k.prefix === session.prefix && <span class="muted"> (this tab)</span>}
                </td>
                <td data-label="Created">{when(k.created_at)}</td>
                <td data-label="Last used">{when(k.last_used_at)}</td>
                <td data-label="Limits">{use(k) ? limitsText(use(k)!.limits) : "—"}</td>
                <td data-label="Used">{use(k) ? useText(use(k)!) : "—"}</td>
                <td data-label="State">
                  {k.revoked_at ? (
                    `revoked ${when(k.revoked_at)}`
                  ) : k.prefix === session.prefix ? (
                    "active: signing out revokes it"
                  ) : confirming === k.id ? (
                    <span class="row">
                      <button type="button" class="danger" onClick={() => revoke(k)}>
                        Revoke {k.prefix}…
                      </button>
                      <button type="button" class="secondary" onClick={() => setConfirming(undefined)}>
                        Keep
                      </button>
                    </span>
                  ) : (
                    <button type="button" class="secondary" aria-label={`Revoke ${k.prefix}…`} onClick={() => setConfirming(k.id)}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
