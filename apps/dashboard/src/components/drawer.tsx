import { type ReactNode, useEffect, useRef } from "react";

/** A side panel over the page: focus moves into it, Escape or the close button closes it. */
export function Drawer(props: { title: string; onClose: () => void; children: ReactNode }) {
  const panel = useRef<HTMLDivElement>(null);
  const { onClose } = props;
  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    panel.current?.focus();
    const onKey = (event: KeyboardEvent) => {
      if (event.key === "Escape") onClose();
    };
    window.addEventListener("keydown", onKey);
    return () => {
      window.removeEventListener("keydown", onKey);
      opener?.focus();
    };
  }, [onClose]);
  return (
    <div className="drawer-backdrop">
      <button type="button" className="drawer-scrim" aria-label="Close details" onClick={onClose} />
      <div
        className="drawer"
        role="dialog"
        aria-modal="true"
        aria-label={props.title}
        tabIndex={-1}
        ref={panel}
      >
        <header className="drawer-head">
          <h2>{props.title}</h2>
          <button type="button" className="ghost" onClick={onClose}>
            Close
          </button>
        </header>
        <div className="drawer-body">{props.children}</div>
      </div>
    </div>
  );
}
