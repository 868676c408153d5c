import { ApiKeys } from "../components/api-keys";
import { roleLabel, useSession } from "../session";

/** The signed-in user's own API keys, whatever their role: list, create with an expiry, revoke. */
export function KeysPage() {
  const { me } = useSession();
  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">My API keys</h1>
      <p className="lede">
        Keys for the gateway proxy (your SDK or coding agent) and for this API. Each acts as you, with your
        role ({roleLabel(me.role)}), until it expires or you revoke it.
      </p>
      <ApiKeys userId={me.id} self label="Your API keys" />
    </section>
  );
}
