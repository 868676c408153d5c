import type { AgentConfigMcpServer } from "@agentnet/contracts";
import { type FormEvent, useState } from "react";
import { Badge, CopyBlock, EmptyState, FormError, LoadState } from "../components/ui";
import { agentLoginSnippets, agentSnippets, maskToken, mcpSnippets, type Snippet } from "../domain/snippets";
import { useLoad, useSubmit } from "../hooks";
import { Link } from "../router";
import { useSession } from "../session";

const TOKEN_PLACEHOLDER = "<your agentnet token>";

/** How to point an SDK at the gateway: endpoint, reachable providers and copyable snippets. */
export function AgentConfigPage() {
  const session = useSession();
  const { api } = session;
  // Signed in with the identity provider, the dashboard holds no token to put in the snippets.
  const token = session.token ?? TOKEN_PLACEHOLDER;
  const ownToken = session.token !== undefined;
  const config = useLoad(() => api.agentConfig(), []);
  const data = config.data;
  const firstModel = data?.providers.flatMap((p) => p.models)[0];
  const [revealed, setRevealed] = useState(false);
  const [tab, setTab] = useState<Snippet["id"]>("curl");
  const snippets = agentSnippets(data?.endpoint ?? "", token, firstModel, window.location.hostname);
  // Shown masked until revealed; the copy button always copies the working snippet.
  const shown = (code: string) => (revealed || !ownToken ? code : code.replaceAll(token, maskToken(token)));
  const current = snippets.snippets.find((snippet) => snippet.id === tab) ?? snippets.snippets[0];
  return (
    <section aria-labelledby="agent-title">
      <h1 id="agent-title">Agent config</h1>
      <p className="lede">
        Point an SDK or a coding agent at the gateway, with your own API token as the key: each vendor's
        client works unchanged on its own paths (OpenAI, Anthropic, Gemini, Vertex, Azure).
      </p>
      <LoadState loading={config.loading} error={config.error} what="the agent config" />
      {data && !data.configured ? (
        <EmptyState title="The agent network is not set up yet">
          An owner or admin creates the gateway settings and a provider under Configuration first.
        </EmptyState>
      ) : null}
      {data?.configured ? (
        <>
          <dl className="fields card">
            <div>
              <dt>Endpoint</dt>
              <dd>
                <code>{data.endpoint}</code>
              </dd>
            </div>
            <div>
              <dt>OpenAI base URL</dt>
              <dd>
                <code>{snippets.openaiBaseUrl}</code>
              </dd>
            </div>
            <div>
              <dt>Anthropic base URL</dt>
              <dd>
                <code>{snippets.anthropicBaseUrl}</code>
              </dd>
            </div>
            <div>
              <dt>Gemini, Vertex and Azure endpoint</dt>
              <dd>
                <code>{snippets.origin}</code>
              </dd>
            </div>
            <div>
              <dt>API key</dt>
              {ownToken ? (
                <dd>
                  your agentnet token (the one you signed in with):{" "}
                  <code>{revealed ? token : maskToken(token)}</code>{" "}
                  <button type="button" className="ghost" onClick={() => setRevealed(!revealed)}>
                    {revealed ? "Hide" : "Reveal"}
                  </button>
                </dd>
              ) : (
                <dd>
                  an agentnet token of yours: one from <Link to="/keys">My API keys</Link>, or{" "}
                  <code>agentnet token</code> (below). The snippets say <code>{TOKEN_PLACEHOLDER}</code>.
                </dd>
              )}
            </div>
          </dl>
          {snippets.local && data.endpoint ? (
            <p className="note">
              These point at <code>127.0.0.1:8090</code>, the proxy of the stack on this machine. In a
              deployment, clients use the endpoint <code>{data.endpoint}</code>, whose DNS name must lead to
              the gateway proxy.
            </p>
          ) : null}
          <h2>Providers you can reach</h2>
          {data.providers.length === 0 ? (
            <EmptyState title="No provider is open to you">
              No policy covers your groups yet. Ask an admin to add you to a policy.
            </EmptyState>
          ) : (
            <table className="table">
              <thead>
                <tr>
                  <th scope="col">Provider</th>
                  <th scope="col">API</th>
                  <th scope="col">Models</th>
                </tr>
              </thead>
              <tbody>
                {data.providers.map((p) => (
                  <tr key={p.name}>
                    <td>{p.name}</td>
                    <td>{p.api_flavor}</td>
                    <td>
                      {p.all_models_allowed
                        ? `all models${p.models.length ? ` (e.g. ${p.models.slice(0, 4).join(", ")})` : ""}`
                        : p.models.join(", ")}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <h2>Connect a client</h2>
          <div role="tablist" aria-label="Client" className="tabs">
            {snippets.snippets.map((snippet) => (
              <button
                key={snippet.id}
                type="button"
                role="tab"
                id={`tab-${snippet.id}`}
                aria-selected={snippet.id === current?.id}
                aria-controls="snippet-panel"
                className={snippet.id === current?.id ? "tab active" : "tab"}
                onClick={() => setTab(snippet.id)}
              >
                {snippet.label}
              </button>
            ))}
          </div>
          {current ? (
            <div role="tabpanel" id="snippet-panel" aria-labelledby={`tab-${current.id}`}>
              <CopyBlock label={current.label} code={current.code} display={shown(current.code)} />
            </div>
          ) : null}
          <h2>MCP servers you can reach</h2>
          {data.mcp_servers.length === 0 ? (
            <EmptyState title="No MCP server is open to you">
              An admin grants MCP servers to your groups in a policy.
            </EmptyState>
          ) : (
            <>
              <p className="note">
                <code>{snippets.origin}/mcp</code> joins them all, each tool named{" "}
                <code>{"{server}__{tool}"}</code>; each is also served on its own URL. Use your agentnet token
                as the bearer token.
              </p>
              <table className="table">
                <thead>
                  <tr>
                    <th scope="col">Server</th>
                    <th scope="col">Description</th>
                    <th scope="col">URL</th>
                    <th scope="col">Your credential</th>
                  </tr>
                </thead>
                <tbody>
                  {data.mcp_servers.map((server) => (
                    <tr key={server.name}>
                      <td>{server.name}</td>
                      <td>{server.description || "—"}</td>
                      <td>
                        <code>{`${snippets.origin}${server.path}`}</code>
                      </td>
                      <td>
                        <OwnCredential server={server} onChange={config.reload} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {mcpSnippets(snippets.origin, token).map((snippet) => (
                <CopyBlock
                  key={snippet.id}
                  label={snippet.label}
                  code={snippet.code}
                  display={shown(snippet.code)}
                />
              ))}
            </>
          )}
        </>
      ) : null}
      <ShortLivedTokens />
    </section>
  );
}

/** `agentnet login` and `agentnet token`: agents keep a refresh credential, not a long-lived token. */
function ShortLivedTokens() {
  return (
    <>
      <h2>Short-lived tokens for your agents</h2>
      <p className="note">
        Instead of your API token in a file, sign each machine in once: <code>agentnet login</code> prints a
        code you confirm on the <Link to="/device">agent sign-in page</Link>, and <code>agentnet token</code>{" "}
        then prints a token that lives 15 minutes, renewed as needed. Revoke a machine there too.
      </p>
      {agentLoginSnippets(window.location.origin).map((snippet) => (
        <CopyBlock key={snippet.id} label={snippet.label} code={snippet.code} />
      ))}
    </>
  );
}

/**
 * The caller's own value of a per-user server's credential header: write-only, so the cell shows
 * only whether it is set, with a field to set it anew and a button to remove it.
 */
function OwnCredential(props: { server: AgentConfigMcpServer; onChange: () => void }) {
  const { api } = useSession();
  const submit = useSubmit();
  const [value, setValue] = useState("");
  const { server } = props;
  const own = server.own_credential;
  if (!own || server.id === undefined) return <span className="hint">not needed</span>;
  const id = server.id;
  const save = (event: FormEvent) => {
    event.preventDefault();
    void submit.run(async () => {
      await api.setMyMcpCredential(id, value);
      setValue("");
      props.onChange();
    });
  };
  return (
    <form onSubmit={save} aria-label={`Your credential for ${server.name}`} className="inline-form">
      <Badge tone={own.set ? "ok" : "bad"}>{own.set ? "set" : "not set: calls are refused"}</Badge>
      <input
        type="password"
        autoComplete="new-password"
        aria-label={`${own.header_name} for ${server.name}`}
        placeholder={own.header_name}
        value={value}
        onChange={(event) => setValue(event.target.value)}
      />
      <button type="submit" disabled={submit.busy || value === ""}>
        {own.set ? "Replace" : "Set"}
      </button>
      {own.set ? (
        <button
          type="button"
          className="secondary"
          disabled={submit.busy}
          onClick={() =>
            void submit.run(async () => {
              await api.removeMyMcpCredential(id);
              props.onChange();
            })
          }
        >
          Remove
        </button>
      ) : null}
      <FormError error={submit.error} />
    </form>
  );
}
