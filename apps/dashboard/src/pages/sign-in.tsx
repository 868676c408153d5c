import { type FormEvent, useState } from "react";
import { Field, Progress } from "../components/ui";

export function SignIn(props: {
  onSubmit: (token: string) => Promise<void>;
  error?: string | undefined;
  restoring: boolean;
}) {
  const [token, setToken] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    await props.onSubmit(token.trim());
    setBusy(false);
  };
  return (
    <main className="signin">
      <form className="card signin-card" onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">agentnet</h1>
        <p>Sign in with an API token. It stays in this browser tab only and is cleared when you sign out.</p>
        {props.restoring ? <Progress label="Restoring your session…" /> : null}
        <Field
          label="API token"
          error={props.error}
          hint={
            <>
              Create one with <code>agentnet bootstrap</code> or ask an admin for a personal access token.
            </>
          }
        >
          {(control) => (
            <input
              {...control}
              type="password"
              autoComplete="off"
              placeholder="agn_…"
              value={token}
              onChange={(e) => setToken(e.target.value)}
              required
            />
          )}
        </Field>
        <button type="submit" disabled={busy || token.trim() === ""}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
