import { useState } from "preact/hooks";
import { api, describeFailure } from "./api.ts";
import type { Session } from "./session.ts";

interface Verified {
  api_key: string;
  key_prefix: string;
}

/** Sign-in by e-mail code (`/account/agent-signup`, then `/verify`): the key it returns stays in this tab. */
export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [email, setEmail] = useState("");
  const [code, setCode] = useState("");
  const [sent, setSent] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");

  const run = async (step: () => Promise<void>) => {
    setBusy(true);
    setError("");
    try {
      await step();
    } catch (err) {
      setError(describeFailure(err));
    } finally {
      setBusy(false);
    }
  };
  const sendCode = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await api("/account/agent-signup", { body: { email } });
      setSent(true);
    });
  };
  const verify = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const v = await api<Verified>("/account/agent-signup/verify", { body: { email, code: code.trim() } });
      onSignedIn({ key: v.api_key, prefix: v.key_prefix, email });
    });
  };

  return (
    <section class="card sign-in" aria-labelledby="sign-in-title">
      <h2 id="sign-in-title">Sign in</h2>
      {!sent ? (
        <form onSubmit={sendCode}>
          <label for="sign-in-email">E-mail address</label>
          <input id="sign-in-email" type="email" autocomplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          <button type="submit" disabled={busy}>
            Send me a code
          </button>
        </form>
      ) : (
        <form onSubmit={verify}>
          <p>
            A six-digit code is on its way to <strong>{email}</strong>: enter it here.
          </p>
          <label for="sign-in-code">Code</label>
          <input id="sign-in-code" inputMode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxLength={6} required value={code} onInput={(e) => setCode(e.currentTarget.value)} />
          <button type="submit" disabled={busy}>
            Sign in
          </button>
          <button type="button" class="secondary" onClick={() => setSent(false)}>
            Use another address
          </button>
        </form>
      )}
      <p class="error" role="alert">
        {error}
      </p>
    </section>
  );
}
