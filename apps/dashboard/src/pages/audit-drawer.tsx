import type { AuditEntry } from "@agentnet/contracts";
import type { ReactNode } from "react";
import { Drawer } from "../components/drawer";
import { Badge } from "../components/ui";
import { changedFields, jsonLines, outcomeOf, targetTypeLabel } from "../domain/audit";
import { formatDateTime } from "../domain/format";
import { roleLabel } from "../session";

/**
 * One audit entry: what was changed from what to what (before and after side by side, the fields
 * that changed highlighted), who made the change with which key and from where, and the entry's
 * place in the chain.
 */
export function AuditEntryDrawer(props: {
  entry: AuditEntry;
  onClose: () => void;
  /** Filters the list to every entry about this target. */
  onShowTarget: (type: string, id: string) => void;
}) {
  const e = props.entry;
  const outcome = outcomeOf(e.outcome);
  const targetId = e.target.id;
  const actor: [string, ReactNode][] = [
    ["Email", e.actor.email || "—"],
    ["User id", e.actor.user_id || "—"],
    ["Role", e.actor.role ? roleLabel(e.actor.role) : "—"],
    ["API key id", e.actor.token_id || "—"],
    ["Address", e.actor.address || "—"],
    ["User agent", e.actor.user_agent || "—"],
  ];
  const entry: [string, ReactNode][] = [
    ["Seq", String(e.seq)],
    ["Time", formatDateTime(e.at)],
    ["Action", <code key="action">{e.action}</code>],
    ["Target", `${targetTypeLabel(e.target.type)} (${e.target.type})`],
    ["Target id", targetId || "—"],
    ["Outcome", outcome.label],
    ["Status", e.status === undefined ? "—" : String(e.status)],
    ["Error code", e.error_code || "—"],
    ["Entry id", e.id],
    [
      "Previous hash",
      <code key="prev" className="hash">
        {e.prev_hash}
      </code>,
    ],
    [
      "Hash",
      <code key="hash" className="hash">
        {e.hash}
      </code>,
    ],
  ];
  return (
    <Drawer title={`Audit entry ${e.seq}`} onClose={props.onClose} wide>
      <div className="drawer-actions">
        <p>
          <Badge tone={outcome.tone}>{outcome.label}</Badge> <code>{e.action}</code>
          {e.status !== undefined ? ` answered ${e.status}` : ""}
          {e.error_code ? ` (${e.error_code})` : ""}
        </p>
        {targetId ? (
          <button type="button" className="ghost" onClick={() => props.onShowTarget(e.target.type, targetId)}>
            Every entry for this {targetTypeLabel(e.target.type).toLowerCase()}
          </button>
        ) : null}
      </div>
      <h3>Change</h3>
      <BeforeAfter before={e.before} after={e.after} />
      <h3>Actor</h3>
      <Fields rows={actor} />
      <h3>Entry</h3>
      <Fields rows={entry} />
    </Drawer>
  );
}

function Fields(props: { rows: [string, ReactNode][] }) {
  return (
    <dl className="fields">
      {props.rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

/** The target as stored before and after, the top-level fields that differ said in words and marked. */
function BeforeAfter(props: { before: unknown; after: unknown }) {
  const changed = changedFields(props.before, props.after);
  const hasBefore = props.before !== undefined;
  const hasAfter = props.after !== undefined;
  let summary: string;
  if (!hasBefore && !hasAfter) summary = "Nothing was stored before or after: the attempt changed nothing.";
  else if (!hasBefore) summary = "Created: it did not exist before.";
  else if (!hasAfter) summary = "Deleted: it does not exist after.";
  else if (changed.length === 0) summary = "No field changed.";
  else summary = `Changed: ${changed.join(", ")}.`;
  return (
    <>
      <p>{summary}</p>
      {hasBefore || hasAfter ? (
        <div className="audit-diff">
          <JsonDocument label="Before" value={props.before} changed={changed} />
          <JsonDocument label="After" value={props.after} changed={changed} />
        </div>
      ) : null}
    </>
  );
}

function JsonDocument(props: { label: string; value: unknown; changed: string[] }) {
  return (
    <figure className="code">
      <figcaption>{props.label}</figcaption>
      <pre>
        {props.value === undefined ? (
          <span className="json-absent">(did not exist)</span>
        ) : (
          jsonLines(props.value, props.changed).map((line, i) =>
            line.changed ? (
              // biome-ignore lint/suspicious/noArrayIndexKey: lines of one rendering, in order.
              <mark key={i} className="json-changed">
                {line.text}
              </mark>
            ) : (
              // biome-ignore lint/suspicious/noArrayIndexKey: lines of one rendering, in order.
              <span key={i} className="json-line">
                {line.text}
              </span>
            ),
          )
        )}
      </pre>
    </figure>
  );
}
