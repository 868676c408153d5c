import { type MouseEvent, type ReactNode, useEffect, useState } from "react";

/** Where the dashboard is: the hash holds the page path and its query (`#/logs?model=x`). */
export interface Location {
  path: string;
  params: URLSearchParams;
}

export function parseHash(hash: string): Location {
  const text = hash.replace(/^#/, "") || "/";
  const mark = text.indexOf("?");
  const path = mark === -1 ? text : text.slice(0, mark);
  return {
    path: path.startsWith("/") ? path : `/${path}`,
    params: new URLSearchParams(mark === -1 ? "" : text.slice(mark + 1)),
  };
}

export const hrefOf = (path: string, params?: URLSearchParams): string => {
  const query = params?.toString() ?? "";
  return `#${path}${query ? `?${query}` : ""}`;
};

/** Changes the page; `replace` keeps the history entry (filter edits should not pile up). */
export function navigate(path: string, params?: URLSearchParams, replace = false): void {
  const href = hrefOf(path, params);
  if (replace) {
    history.replaceState(null, "", href);
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  } else {
    window.location.hash = href.slice(1);
  }
}

export function useLocation(): Location {
  const [hash, setHash] = useState(window.location.hash);
  useEffect(() => {
    const update = () => setHash(window.location.hash);
    window.addEventListener("hashchange", update);
    return () => window.removeEventListener("hashchange", update);
  }, []);
  return parseHash(hash);
}

export function Link(props: { to: string; children: ReactNode; className?: string; current?: boolean }) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    const [path = "/", query = ""] = props.to.split("?");
    navigate(path, new URLSearchParams(query));
  };
  return (
    <a
      href={`#${props.to}`}
      onClick={onClick}
      className={props.className}
      aria-current={props.current ? "page" : undefined}
    >
      {props.children}
    </a>
  );
}
