import type { ReactNode } from "react";
import { trapTab, useModalDialog } from "./focus-trap";

/**
 * A side panel over the page, on a native modal dialog: focus moves into it and stays there
 * (Tab cycles inside, the page behind is inert), Escape or the close button closes it, and focus
 * returns to what opened it. `wide` for what needs the room (two documents side by side).
 */
export function Drawer(props: { title: string; onClose: () => void; wide?: boolean; children: ReactNode }) {
  const dialog = useModalDialog();
  return (
    <dialog
      ref={dialog}
      className={props.wide ? "drawer drawer-wide" : "drawer"}
      onKeyDown={trapTab}
      aria-label={props.title}
      onCancel={(event) => {
        event.preventDefault();
        props.onClose();
      }}
    >
      <div className="drawer-panel">
        <header className="drawer-head">
          <h2>{props.title}</h2>
          <button type="button" className="ghost" onClick={props.onClose}>
            Close
          </button>
        </header>
        <div className="drawer-body">{props.children}</div>
      </div>
    </dialog>
  );
}
