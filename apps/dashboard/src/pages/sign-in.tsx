import { type FormEvent, useState } from "react";
import { Field, Progress } from "../components/ui";
import { parseHash } from "../router";
import { storeReturnHash } from "../session";

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
      <div className="signin-stack">
        <form className="card signin-card" onSubmit={submit} aria-labelledby="signin-title">
          <h1 id="signin-title">agentnet</h1>
          <p>
            Sign in with an API token. It stays in this browser tab only and is cleared when you sign out.
          </p>
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
        <IdentityProviderSignIn />
      </div>
    </main>
  );
}

/**
 * Sign-in with the account's OpenID Connect provider: the API finds the account by the email's
 * domain and sends the browser there; it comes back signed in (a session cookie) or to
 * `#/sign-in?sign_in_error=` saying why not. The page it was opened on is kept to return to.
 */
function IdentityProviderSignIn() {
  const location = parseHash(window.location.hash);
  const refused = location.path === "/sign-in" ? location.params.get("sign_in_error") : null;
  const [email, setEmail] = useState("");
  const [leaving, setLeaving] = useState(false);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (location.path !== "/" && location.path !== "/sign-in") storeReturnHash(window.location.hash);
    setLeaving(true);
    window.location.assign(`/api/auth/oidc/start?${new URLSearchParams({ email: email.trim() })}`);
  };
  return (
    <form className="card signin-card" onSubmit={submit} aria-labelledby="idp-title">
      <h2 id="idp-title">Sign in with your company's identity provider</h2>
      <Field
        label="Work email"
        error={refused ? `The sign-in did not happen: ${refused}` : undefined}
        hint="Your account is found by its domain."
      >
        {(control) => (
          <input
            {...control}
            type="email"
            autoComplete="email"
            placeholder="you@example.com"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            required
          />
        )}
      </Field>
      <button type="submit" disabled={leaving || email.trim() === ""}>
        {leaving ? "Going to your identity provider…" : "Continue to your identity provider"}
      </button>
    </form>
  );
}
