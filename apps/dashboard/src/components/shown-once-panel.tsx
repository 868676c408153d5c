import { useEffect, useId, useRef, useState } from "react";

/**
 * A secret shown this once (a new API key, a webhook's signing secret): the API keeps only its hash
 * or a sealed copy, so once the panel is closed nobody can read it again. Focus moves to the secret,
 * which selects it, so it can be copied at once.
 */
export function ShownOncePanel(props: {
  title: string;
  /** Why to copy it now, and what whoever holds it can do. */
  note: string;
  /** The secret's label ("API key"); the buttons name it by `noun` ("key"). */
  label: string;
  noun: string;
  value: string;
  onClose: () => void;
}) {
  const id = useId();
  const field = useRef<HTMLInputElement>(null);
  const [copy, setCopy] = useState<"idle" | "copied" | "refused">("idle");
  useEffect(() => field.current?.focus(), []);
  const onCopy = async () => {
    try {
      await navigator.clipboard.writeText(props.value);
      setCopy("copied");
    } catch {
      field.current?.select();
      setCopy("refused");
    }
  };
  return (
    <section className="card token-panel" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{props.title}</h2>
      <p id={`${id}-note`}>{props.note}</p>
      <label htmlFor={`${id}-value`}>{props.label}</label>
      <div className="token-row">
        <input
          ref={field}
          id={`${id}-value`}
          className="token-value"
          readOnly
          value={props.value}
          aria-describedby={`${id}-note`}
          spellCheck={false}
          onFocus={(event) => event.target.select()}
        />
        <button type="button" onClick={onCopy}>
          Copy {props.noun}
        </button>
      </div>
      <p className="hint" role="status">
        {copy === "copied" ? "Copied to the clipboard." : null}
        {copy === "refused"
          ? `The browser refused the clipboard: the ${props.noun} is selected, copy it with Ctrl+C.`
          : null}
      </p>
      <div className="actions">
        <button type="button" className="ghost" onClick={props.onClose}>
          Done, hide the {props.noun}
        </button>
      </div>
    </section>
  );
}
