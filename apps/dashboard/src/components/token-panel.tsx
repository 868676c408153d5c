import { useEffect, useId, useRef, useState } from "react";

/**
 * A new API key's secret, shown this once: the API keeps only its hash, so once the panel is closed
 * nobody can read the key again. Focus moves to the key, selected, so it can be copied at once.
 */
export function NewTokenPanel(props: { name: string; plainToken: string; onClose: () => void }) {
  const id = useId();
  const field = useRef<HTMLInputElement>(null);
  const [copy, setCopy] = useState<"idle" | "copied" | "refused">("idle");
  useEffect(() => {
    field.current?.focus();
    field.current?.select();
  }, []);
  const onCopy = async () => {
    try {
      await navigator.clipboard.writeText(props.plainToken);
      setCopy("copied");
    } catch {
      field.current?.select();
      setCopy("refused");
    }
  };
  return (
    <section className="card token-panel" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>New API key “{props.name}”</h2>
      <p id={`${id}-note`}>
        Copy it now: it will not be shown again. Anyone holding it acts as its user, so keep it out of shared
        files and chats.
      </p>
      <label htmlFor={`${id}-key`}>API key</label>
      <div className="token-row">
        <input
          ref={field}
          id={`${id}-key`}
          className="token-value"
          readOnly
          value={props.plainToken}
          aria-describedby={`${id}-note`}
          spellCheck={false}
        />
        <button type="button" onClick={onCopy}>
          Copy key
        </button>
      </div>
      <p className="hint" role="status">
        {copy === "copied" ? "Copied to the clipboard." : null}
        {copy === "refused"
          ? "The browser refused the clipboard: the key is selected, copy it with Ctrl+C."
          : null}
      </p>
      <div className="actions">
        <button type="button" className="ghost" onClick={props.onClose}>
          Done, hide the key
        </button>
      </div>
    </section>
  );
}
