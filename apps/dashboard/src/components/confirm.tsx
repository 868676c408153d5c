import type { Policy } from "@agentnet/contracts";
import { trapTab, useModalDialog } from "./focus-trap";

/** The policies `uses` picks, named for a ConfirmDelete. */
export const policiesUsing = (policies: Policy[], uses: (policy: Policy) => boolean): string[] =>
  policies.filter(uses).map((policy) => `policy “${policy.name}”`);

/**
 * Asks before a delete, naming what it would delete and what uses it. While something uses it the
 * API refuses the delete, so the dialog says what to change first instead of offering it. A native
 * modal dialog: focus stays inside, Escape cancels, the page behind is inert.
 */
export function ConfirmDelete(props: {
  /** "provider", "policy", … */
  noun: string;
  name: string;
  /** What refers to it, e.g. `policy "everyone"`; empty when nothing does. */
  usedBy: string[];
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const dialog = useModalDialog();
  const blocked = props.usedBy.length > 0;
  const titleId = "confirm-delete-title";
  return (
    <dialog
      ref={dialog}
      className="confirm"
      onKeyDown={trapTab}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        props.onCancel();
      }}
    >
      <h2 id={titleId}>
        {blocked
          ? `The ${props.noun} “${props.name}” is in use`
          : `Delete the ${props.noun} “${props.name}”?`}
      </h2>
      {blocked ? (
        <>
          <p>Remove it from these first; they would stop working without it:</p>
          <ul>
            {props.usedBy.map((user) => (
              <li key={user}>{user}</li>
            ))}
          </ul>
        </>
      ) : (
        <p>This cannot be undone.</p>
      )}
      <div className="actions">
        <button type="button" className={blocked ? undefined : "ghost"} onClick={props.onCancel}>
          {blocked ? "OK" : "Cancel"}
        </button>
        {blocked ? null : (
          <button type="button" className="danger" onClick={props.onConfirm} disabled={props.busy}>
            {props.busy ? "Deleting…" : `Delete ${props.noun}`}
          </button>
        )}
      </div>
    </dialog>
  );
}
