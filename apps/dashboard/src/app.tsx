import { useCallback, useEffect, useState } from "react";
import { UNAUTHORIZED_EVENT } from "./api/client";
import { asApiError } from "./hooks";
import { SignIn } from "./pages/sign-in";
import { clearToken, loadSession, readToken, type Session, SessionContext, storeToken } from "./session";
import { Shell } from "./shell";

type Loaded = Omit<Session, "refreshAccount" | "signOut">;

/** Signed out: the sign-in form. Signed in: the shell with the pages the caller's role may see. */
export function App() {
  const [session, setSession] = useState<Loaded | undefined>();
  const [restoring, setRestoring] = useState(() => readToken() !== "");
  const [error, setError] = useState<string | undefined>();

  const signIn = useCallback(async (token: string) => {
    setError(undefined);
    try {
      const loaded = await loadSession(token);
      storeToken(token);
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
    if (stored) void signIn(stored).finally(() => setRestoring(false));
  }, [signIn]);

  const signOut = useCallback(() => {
    clearToken();
    setSession(undefined);
    window.location.hash = "#/";
  }, []);

  // A token revoked or expired while signed in: back to sign-in, saying why.
  useEffect(() => {
    if (!session) return;
    const onUnauthorized = () => {
      signOut();
      setError("Your token is no longer accepted (revoked or expired). Sign in with a valid one.");
    };
    window.addEventListener(UNAUTHORIZED_EVENT, onUnauthorized);
    return () => window.removeEventListener(UNAUTHORIZED_EVENT, onUnauthorized);
  }, [session, signOut]);

  const refreshAccount = useCallback(async () => {
    if (session) setSession(await loadSession(session.token));
  }, [session]);

  if (!session) return <SignIn onSubmit={signIn} error={error} restoring={restoring} />;
  return (
    <SessionContext.Provider value={{ ...session, signOut, refreshAccount }}>
      <Shell />
    </SessionContext.Provider>
  );
}
