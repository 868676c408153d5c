import { useCallback, useEffect, useState } from "react";
import { type Credentials, UNAUTHORIZED_EVENT } from "./api/client";
import { readBrowserSession, signOutBrowserSession } from "./api/endpoints";
import { asApiError } from "./hooks";
import { SignIn } from "./pages/sign-in";
import { navigate, parseHash } from "./router";
import {
  clearToken,
  loadSession,
  readToken,
  type Session,
  SessionContext,
  storeToken,
  takeReturnHash,
} from "./session";
import { Shell } from "./shell";

type Loaded = Omit<Session, "refreshAccount" | "signOut">;

/**
 * Signed out: the sign-in form. Signed in: the shell with the pages the caller's role may see. A
 * token kept in this tab signs in on start; else the session cookie of a sign-in with the identity
 * provider, when the browser holds one.
 */
export function App() {
  const [session, setSession] = useState<Loaded | undefined>();
  const [restoring, setRestoring] = useState(true);
  const [error, setError] = useState<string | undefined>();

  const signIn = useCallback(async (credentials: Credentials) => {
    setError(undefined);
    try {
      const loaded = await loadSession(credentials);
      if ("token" in credentials) storeToken(credentials.token);
      // The sign-in page's own URL (an identity provider's refusal) is no page to land on.
      if (parseHash(window.location.hash).path === "/sign-in") navigate("/", undefined, true);
      setSession(loaded);
    } catch (caught) {
      const apiError = asApiError(caught);
      setError(
        apiError.status === 401
          ? "That token was not accepted (unknown, expired or revoked)."
          : apiError.message,
      );
      clearToken();
    }
  }, []);

  useEffect(() => {
    const stored = readToken();
    const restore = async () => {
      if (stored) return signIn({ token: stored });
      const csrfToken = await readBrowserSession();
      if (!csrfToken) return;
      await signIn({ csrfToken });
      const back = takeReturnHash();
      if (back) window.location.hash = back;
    };
    void restore().finally(() => setRestoring(false));
  }, [signIn]);

  const endSession = useCallback(() => {
    clearToken();
    setSession(undefined);
    window.location.hash = "#/";
  }, []);

  const credentials = session?.credentials;
  const signOut = useCallback(() => {
    if (credentials && "csrfToken" in credentials) {
      // Ends the session at the API (which clears its cookie); signed out here whatever it answers.
      void signOutBrowserSession(credentials.csrfToken)
        .catch(() => undefined)
        .finally(endSession);
    } else endSession();
  }, [credentials, endSession]);

  // Credentials revoked or expired while signed in: back to sign-in, saying why.
  useEffect(() => {
    if (!session) return;
    const cookie = session.token === undefined;
    const onUnauthorized = () => {
      endSession();
      setError(
        cookie
          ? "Your session ended (expired, signed out elsewhere or blocked). Sign in again."
          : "Your token is no longer accepted (revoked or expired). Sign in with a valid one.",
      );
    };
    window.addEventListener(UNAUTHORIZED_EVENT, onUnauthorized);
    return () => window.removeEventListener(UNAUTHORIZED_EVENT, onUnauthorized);
  }, [session, endSession]);

  const refreshAccount = useCallback(async () => {
    if (session) setSession(await loadSession(session.credentials));
  }, [session]);

  if (!session) return <SignIn onSubmit={(token) => signIn({ token })} error={error} restoring={restoring} />;
  return (
    <SessionContext.Provider value={{ ...session, signOut, refreshAccount }}>
      <Shell />
    </SessionContext.Provider>
  );
}
