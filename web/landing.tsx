import readme from "../README.md" with { type: "text" };
import { SignIn } from "./sign-in.tsx";
import type { Session } from "./session.ts";

/** The README's first two commands (install and start; run the tests), as the README has them. */
const [startCommand, testCommand] = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1].trim());

export function Landing({ session, onSignedIn }: { session?: Session; onSignedIn: (session: Session) => void }) {
  return (
    <>
      <section class="hero">
        <h1>voxroute</h1>
        <p>One API for text-to-speech and speech-to-text, routed to embedded engines that run offline and to cloud providers.</p>
      </section>
      <section class="card" aria-labelledby="run-title">
        <h2 id="run-title">Run it yourself</h2>
        <p>Install and start the server:</p>
        <pre>
          <code>{startCommand}</code>
        </pre>
        <p>Run the tests:</p>
        <pre>
          <code>{testCommand}</code>
        </pre>
      </section>
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
    </>
  );
}
