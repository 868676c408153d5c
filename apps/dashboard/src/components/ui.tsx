import {
  Fragment,
  isValidElement,
  type ReactElement,
  type ReactNode,
  type RefObject,
  useEffect,
  useId,
  useRef,
  useState,
} from "react";
import type { ApiError } from "../api/client";
import { isoToLocalInput, localInputToIso } from "../domain/filters";

export interface ControlProps {
  id: string;
  /** The field's path in the request body, when the form clears errors as fields change. */
  name: string | undefined;
  "aria-invalid": boolean | undefined;
  "aria-describedby": string | undefined;
}

/** A labelled control with its hint and the error that concerns it (from the form or the API). */
export function Field(props: {
  label: string;
  name?: string | undefined;
  error?: string | undefined;
  hint?: ReactNode;
  children: (control: ControlProps) => ReactNode;
}) {
  const id = useId();
  const describedBy = [props.hint ? `${id}-hint` : "", props.error ? `${id}-error` : ""]
    .filter(Boolean)
    .join(" ");
  return (
    <div className={`field${props.error ? " field-invalid" : ""}`}>
      <label htmlFor={id}>{props.label}</label>
      {props.children({
        id,
        name: props.name,
        "aria-invalid": props.error ? true : undefined,
        "aria-describedby": describedBy || undefined,
      })}
      {props.hint ? (
        <p className="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      ) : null}
      {props.error ? (
        <p className="field-error" id={`${id}-error`}>
          {props.error}
        </p>
      ) : null}
    </div>
  );
}

/** A filter's time, typed in the browser's local time and kept as an ISO instant ("" when empty). */
export function DateTimeField(props: {
  label: string;
  hint?: ReactNode;
  iso: string;
  onChange: (iso: string) => void;
}) {
  return (
    <Field label={props.label} hint={props.hint}>
      {(c) => (
        <input
          {...c}
          type="datetime-local"
          value={isoToLocalInput(props.iso)}
          onChange={(e) => props.onChange(localInputToIso(e.target.value))}
        />
      )}
    </Field>
  );
}

/** A checkbox with its label on the right, and below it the error that concerns it. */
export function Check(props: {
  label: string;
  name?: string | undefined;
  error?: string | undefined;
  checked: boolean;
  onChange: (checked: boolean) => void;
  disabled?: boolean;
  hint?: string;
}) {
  const id = useId();
  return (
    <>
      <div className={`check${props.error ? " field-invalid" : ""}`}>
        <input
          id={id}
          type="checkbox"
          name={props.name}
          checked={props.checked}
          disabled={props.disabled}
          aria-invalid={props.error ? true : undefined}
          aria-describedby={props.error ? `${id}-error` : undefined}
          onChange={(e) => props.onChange(e.target.checked)}
        />
        <label htmlFor={id}>{props.label}</label>
        {props.hint ? <span className="hint"> — {props.hint}</span> : null}
      </div>
      {props.error ? (
        <p className="field-error" id={`${id}-error`}>
          {props.error}
        </p>
      ) : null}
    </>
  );
}

/** A group of checkboxes picking ids (groups, providers, guardrails); says what to do when empty. */
export function MultiCheck(props: {
  legend: string;
  name?: string | undefined;
  options: { id: string; label: string }[];
  selected: readonly string[];
  onChange: (ids: string[]) => void;
  empty: string;
  error?: string | undefined;
  disabled?: boolean;
}) {
  const errorId = useId();
  const toggle = (id: string, on: boolean) =>
    props.onChange(on ? [...props.selected, id] : props.selected.filter((s) => s !== id));
  return (
    <fieldset
      className={`multi${props.error ? " field-invalid" : ""}`}
      aria-describedby={props.error ? errorId : undefined}
    >
      <legend>{props.legend}</legend>
      {props.options.length === 0 ? <p className="hint">{props.empty}</p> : null}
      {props.options.map((option) => (
        <Check
          key={option.id}
          label={option.label}
          name={props.name}
          checked={props.selected.includes(option.id)}
          onChange={(on) => toggle(option.id, on)}
          disabled={props.disabled}
        />
      ))}
      {props.error ? (
        <p className="field-error" id={errorId}>
          {props.error}
        </p>
      ) : null}
    </fieldset>
  );
}

/**
 * The API's message for a form (the field-level ones sit next to their fields), or, while the
 * form's own checks flag fields (`invalid`, keyed by field), a pointer to them.
 */
export function FormError(props: {
  error: ApiError | undefined;
  invalid?: Record<string, unknown>;
  /** What the flagged things are called on this form. */
  invalidNoun?: string;
}) {
  const flagged = props.invalid !== undefined && Object.keys(props.invalid).length > 0;
  if (!props.error && !flagged) return null;
  return (
    <div className="alert" role="alert">
      {props.error ? (
        // The API's message says what went wrong in words; its status code helps nobody reading it.
        <span data-status={props.error.status || undefined}>{capitalized(props.error.message)}</span>
      ) : (
        `Fix the highlighted ${props.invalidNoun ?? "fields"}.`
      )}
    </div>
  );
}

const capitalized = (text: string) => (text ? `${text.charAt(0).toUpperCase()}${text.slice(1)}` : text);

/**
 * A column's header: its name, a numeric column's name (right-aligned like its cells), or a header
 * cell of its own (a sortable one). null for a column the table leaves out this time.
 */
export type ColumnHeader = string | { label: string; numeric: true } | ReactElement | null;

/**
 * A table that may be wider than the page (on a phone): it scrolls sideways inside its own box, a
 * region named as the table it holds, which a keyboard can focus to scroll it. `children` are the
 * body's rows; with `actions`, each row ends in a cell of buttons (see RowActions), a column whose
 * header only screen readers read.
 */
export function ScrollableTable(props: {
  label: string;
  columns: readonly ColumnHeader[];
  actions?: boolean;
  className?: string;
  caption?: ReactNode;
  foot?: ReactNode;
  children: ReactNode;
}) {
  const wrap = useRef<HTMLElement>(null);
  const table = useRef<HTMLTableElement>(null);
  const scrolls = useOverflows(wrap, table);
  return (
    // A keyboard scrolls a table only through a focused scroller (its cells take no focus): a Tab
    // stop only when there is something to scroll, so a table that fits adds none.
    <section ref={wrap} className="table-wrap" aria-label={props.label} tabIndex={scrolls ? 0 : undefined}>
      <table
        ref={table}
        className={props.className ? `table ${props.className}` : "table"}
        aria-label={props.label}
      >
        {props.caption ? <caption>{props.caption}</caption> : null}
        <thead>
          <tr>
            {props.columns.map((column, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a column keeps its place (one left out is a null in it).
              <Fragment key={i}>{headerCell(column)}</Fragment>
            ))}
            {props.actions ? (
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
        {props.foot ? <tfoot>{props.foot}</tfoot> : null}
      </table>
    </section>
  );
}

/** Whether `scroller` is narrower than its `content`, kept current as either changes size. */
function useOverflows(scroller: RefObject<HTMLElement | null>, content: RefObject<HTMLElement | null>) {
  const [overflows, setOverflows] = useState(false);
  useEffect(() => {
    const outer = scroller.current;
    const inner = content.current;
    if (!outer || !inner) return;
    const measure = () => setOverflows(outer.scrollWidth > outer.clientWidth);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(outer);
    observer.observe(inner);
    return () => observer.disconnect();
  }, [scroller, content]);
  return overflows;
}

function headerCell(column: ColumnHeader) {
  if (column === null || isValidElement(column)) return column;
  if (typeof column === "string") return <th scope="col">{column}</th>;
  return (
    <th scope="col" className="num">
      {column.label}
    </th>
  );
}

/**
 * The last cell of a table row: Edit and Delete, each only when its handler is given (when the
 * signed-in user may), named after the row so a screen reader tells one row's buttons from the next.
 * `children` (the row's other buttons, or a hint why there are none) sit between the two.
 */
export function RowActions(props: {
  name: string;
  onEdit?: (() => void) | undefined;
  onDelete?: (() => void) | undefined;
  /** What deleting is called for this kind of row, e.g. "Revoke" for an API key. */
  deleteVerb?: string;
  /** While an earlier deletion is still under way. */
  deleteDisabled?: boolean;
  children?: ReactNode;
}) {
  const deleteVerb = props.deleteVerb ?? "Delete";
  return (
    <td className="row-actions">
      {props.onEdit ? (
        <button type="button" className="ghost" aria-label={`Edit ${props.name}`} onClick={props.onEdit}>
          Edit
        </button>
      ) : null}
      {props.children}
      {props.onDelete ? (
        <button
          type="button"
          className="ghost danger"
          aria-label={`${deleteVerb} ${props.name}`}
          disabled={props.deleteDisabled}
          onClick={props.onDelete}
        >
          {deleteVerb}
        </button>
      ) : null}
    </td>
  );
}

/** A list with nothing in it: what it would hold and what to do next. */
export function EmptyState(props: { title: string; children: ReactNode }) {
  return (
    <div className="empty" role="status">
      <h3>{props.title}</h3>
      <div>{props.children}</div>
    </div>
  );
}

/** An operation under way (loading, verifying with a vendor, discovering models). */
export function Progress(props: { label: string }) {
  return (
    <p className="progress" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {props.label}
    </p>
  );
}

/** A settings form's save under way, and that the last one went through. */
export function SaveStatus(props: { busy: boolean; saved: boolean }) {
  return (
    <>
      {props.busy ? <Progress label="Saving…" /> : null}
      {props.saved ? (
        <p role="status" className="ok">
          Saved.
        </p>
      ) : null}
    </>
  );
}

/** Loading, then the error or the content. */
export function LoadState(props: { loading: boolean; error: ApiError | undefined; what: string }) {
  if (props.error) return <FormError error={props.error} />;
  if (props.loading) return <Progress label={`Loading ${props.what}…`} />;
  return null;
}

export function Meter(props: { label: string; share: number; text: string }) {
  const pct = Math.round(props.share * 100);
  const tone = pct >= 100 ? "full" : pct >= 80 ? "high" : "ok";
  return (
    <div className="meter">
      <div className="meter-head">
        <span>{props.label}</span>
        <span>{props.text}</span>
      </div>
      <div
        className={`bar bar-${tone}`}
        role="progressbar"
        aria-label={props.label}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={pct}
      >
        <span style={{ width: `${pct}%` }} />
      </div>
    </div>
  );
}

/**
 * A button copying `text` to the clipboard that says "Copied" for a moment after. `what` names what
 * it copies: shown, or for screen readers only when the button sits next to its name. It is text
 * rather than an aria-label, so the accessible name always holds what the button shows.
 */
export function CopyButton(props: { text: string; what: string; showWhat?: boolean }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.text);
    } catch {
      const area = document.createElement("textarea");
      area.value = props.text;
      document.body.append(area);
      area.select();
      document.execCommand("copy");
      area.remove();
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return (
    <button type="button" className="ghost" onClick={copy}>
      {copied ? "Copied" : "Copy"}
      {props.showWhat ? ` ${props.what}` : <span className="sr-only"> {props.what}</span>}
    </button>
  );
}

/** A code block with a copy button; `display` is what is shown when it differs (a masked token). */
export function CopyBlock(props: { label: string; code: string; display?: string }) {
  return (
    <figure className="code">
      <figcaption>
        <span>{props.label}</span>
        <CopyButton text={props.code} what={props.label} />
      </figcaption>
      <pre>
        <code>{props.display ?? props.code}</code>
      </pre>
    </figure>
  );
}

export function Badge(props: { tone: "ok" | "bad" | "muted" | "info"; children: ReactNode }) {
  return <span className={`badge badge-${props.tone}`}>{props.children}</span>;
}

/** The foot of a create/edit form: progress while saving, the submit button and Cancel. */
export function FormActions(props: { busy: boolean; noun: string; editing: boolean; onCancel: () => void }) {
  return (
    <>
      {props.busy ? <Progress label="Saving…" /> : null}
      <div className="actions">
        <button type="submit" disabled={props.busy}>
          {props.editing ? `Save ${props.noun}` : `Create ${props.noun}`}
        </button>
        <button type="button" className="ghost" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </>
  );
}
