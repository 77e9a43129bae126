import { SignIn } from "./sign-in.tsx";
import type { Session } from "./session.ts";

/**
 * What a user of this deployment needs to start: a key (signing in here), where the API is (this
 * page's own origin), and its reference. Running a server of one's own is the README's business.
 */
export function Landing({ session, onSignedIn }: { session?: Session; onSignedIn: (session: Session) => void }) {
  const base = location.origin;
  const socketBase = base.replace(/^http/, "ws");
  return (
    <>
      <section class="hero">
        <h1>voxroute</h1>
        <p>One API for text-to-speech and speech-to-text, routed to embedded engines that run offline and to cloud providers.</p>
      </section>
      <div class="grid">
        {session ? (
          <section class="card">
            <h2>Signed in as {session.email}</h2>
            <p>
              Go to your <a href="/dashboard">dashboard</a> or the <a href="/playground">playground</a>.
            </p>
          </section>
        ) : (
          <SignIn onSignedIn={onSignedIn} />
        )}
        <section class="card" aria-labelledby="start-title">
          <h2 id="start-title">Use the API</h2>
          <ol>
            <li>Sign in with your e-mail address: a code comes by mail. Your dashboard then makes API keys for your code, and shows what they spend.</li>
            <li>
              Send requests to <code data-testid="api-base">{base}</code> (WebSockets at <code>{socketBase}</code>) with the header <code>Authorization: Bearer &lt;your key&gt;</code>.
            </li>
            <li>
              Every endpoint is in the <a href="/docs">API reference</a>; hear the voices first in the <a href="/playground">playground</a>.
            </li>
          </ol>
          <p>What this server offers (no key needed):</p>
          <pre>
            <code>curl {base}/v1/providers</code>
          </pre>
        </section>
      </div>
    </>
  );
}
