import type { AccessLogEntry } from "@agentnet/contracts";
import { Drawer } from "../components/drawer";
import { Badge } from "../components/ui";
import { decisionText } from "../domain/deny-reasons";
import { formatDateTime, formatDuration, formatTokens, formatUsd } from "../domain/format";
import { userLabel, useSession } from "../session";

/** Every field of one access-log entry, and the captured prompt and completion when present. */
export function LogDrawer(props: { entry: AccessLogEntry; onClose: () => void }) {
  const { users } = useSession();
  const e = props.entry;
  const rows: [string, string][] = [
    ["Log id", e.id],
    ["Time", formatDateTime(e.timestamp)],
    ["Decision", decisionText(e.decision, e.deny_reason)],
    ["Deny reason code", e.deny_reason || "—"],
    ["Status", String(e.status_code)],
    ["Duration", formatDuration(e.duration_ms)],
    ["User", `${userLabel(users, e.user_id)} (${e.user_id})`],
    ["Groups", e.group_ids.join(", ") || "—"],
    ["Session", e.session_id || "— (its own session)"],
    ["Method", e.method || "—"],
    ["Host", e.host || "—"],
    ["Path", e.path || "—"],
    ["Source IP", e.source_ip || "—"],
    ["Provider", e.provider || "—"],
    ["Resolved provider id", e.resolved_provider_id || "—"],
    ["Model", e.model || "—"],
    ["Policy", e.selected_policy_id || "—"],
    ["Service", e.service_id],
    ["Streaming", e.stream ? "yes" : "no"],
    ["Input tokens", formatTokens(e.input_tokens)],
    ["Output tokens", formatTokens(e.output_tokens)],
    ["Cached input tokens", formatTokens(e.cached_input_tokens)],
    ["Cache creation tokens", formatTokens(e.cache_creation_tokens)],
    ["Total tokens", formatTokens(e.total_tokens)],
    ["Input cost", formatUsd(e.input_cost_usd)],
    ["Cached input cost", formatUsd(e.cached_input_cost_usd)],
    ["Cache creation cost", formatUsd(e.cache_creation_cost_usd)],
    ["Cache cost", formatUsd(e.cache_cost_usd)],
    ["Output cost", formatUsd(e.output_cost_usd)],
    ["Cost", formatUsd(e.cost_usd)],
  ];
  return (
    <Drawer title={`Request ${e.id}`} onClose={props.onClose}>
      <p>
        <Badge tone={e.decision === "deny" ? "bad" : "ok"}>{e.decision || "—"}</Badge>{" "}
        {decisionText(e.decision, e.deny_reason)}
      </p>
      <dl className="fields">
        {rows.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      <h3>Prompt</h3>
      {e.request_prompt !== undefined ? (
        <pre className="capture">{e.request_prompt}</pre>
      ) : (
        <p className="hint">Not captured (prompt collection is off for this request).</p>
      )}
      <h3>Completion</h3>
      {e.response_completion !== undefined ? (
        <pre className="capture">{e.response_completion}</pre>
      ) : (
        <p className="hint">Not captured.</p>
      )}
    </Drawer>
  );
}
