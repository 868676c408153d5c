import { type ReactNode, useEffect, useRef, useState } from "react";
import { AccessLogsPage } from "./pages/access-logs";
import { AccountPage } from "./pages/account";
import { AgentConfigPage } from "./pages/agent-config";
import { ApiReferencePage } from "./pages/api-reference";
import { AuditPage } from "./pages/audit";
import { AlertsPage } from "./pages/config/alerts";
import { BudgetRulesPage } from "./pages/config/budget-rules";
import { GuardrailsPage } from "./pages/config/guardrails";
import { McpServersPage } from "./pages/config/mcp-servers";
import { PoliciesPage } from "./pages/config/policies";
import { ProvidersPage } from "./pages/config/providers";
import { SettingsPage } from "./pages/config/settings";
import { ConsumptionPage } from "./pages/consumption";
import { DevicePage } from "./pages/device";
import { KeysPage } from "./pages/keys";
import { OverviewPage } from "./pages/overview";
import { SessionPage, SessionsPage } from "./pages/sessions";
import { TeamPage } from "./pages/team";
import { Link, type Location, useLocation } from "./router";
import { roleLabel, type Session, useSession } from "./session";

interface Page {
  path: string;
  label: string;
  section: "Usage" | "Configuration" | "Account";
  visible: (s: Session) => boolean;
  render: (location: Location) => ReactNode;
}

const agentNetwork = (s: Session) => s.agentNetworkVisible;
const configReader = (s: Session) => s.agentNetworkVisible && s.accountWide;

/** Every page, in menu order, with who sees it. */
const PAGES: Page[] = [
  {
    path: "/",
    label: "Overview",
    section: "Usage",
    visible: agentNetwork,
    render: (l) => <OverviewPage location={l} />,
  },
  {
    path: "/logs",
    label: "Access logs",
    section: "Usage",
    visible: agentNetwork,
    render: (l) => <AccessLogsPage location={l} />,
  },
  {
    path: "/sessions",
    label: "Sessions",
    section: "Usage",
    visible: agentNetwork,
    render: (l) => <SessionsPage location={l} />,
  },
  {
    path: "/consumption",
    label: "Consumption",
    section: "Usage",
    visible: agentNetwork,
    render: () => <ConsumptionPage />,
  },
  {
    path: "/agent",
    label: "Agent config",
    section: "Usage",
    visible: agentNetwork,
    render: () => <AgentConfigPage />,
  },
  {
    path: "/config/settings",
    label: "Gateway settings",
    section: "Configuration",
    visible: configReader,
    render: () => <SettingsPage />,
  },
  {
    path: "/config/providers",
    label: "Providers",
    section: "Configuration",
    visible: configReader,
    render: () => <ProvidersPage />,
  },
  {
    path: "/config/mcp-servers",
    label: "MCP servers",
    section: "Configuration",
    visible: configReader,
    render: () => <McpServersPage />,
  },
  {
    path: "/config/policies",
    label: "Policies",
    section: "Configuration",
    visible: configReader,
    render: () => <PoliciesPage />,
  },
  {
    path: "/config/guardrails",
    label: "Guardrails",
    section: "Configuration",
    visible: configReader,
    render: () => <GuardrailsPage />,
  },
  {
    path: "/config/budget-rules",
    label: "Budget rules",
    section: "Configuration",
    visible: configReader,
    render: () => <BudgetRulesPage />,
  },
  {
    path: "/config/alerts",
    label: "Alerts",
    section: "Configuration",
    visible: configReader,
    render: () => <AlertsPage />,
  },
  {
    path: "/team",
    label: "Team",
    section: "Account",
    visible: (s) => s.accountWide && !s.agentNetworkOnly,
    render: () => <TeamPage />,
  },
  {
    path: "/account",
    label: "Account settings",
    section: "Account",
    visible: (s) => s.accountWide,
    render: () => <AccountPage />,
  },
  {
    path: "/audit",
    label: "Audit trail",
    section: "Account",
    // Not an agent-network page: every change made through the API, the team's included.
    visible: (s) => s.accountWide,
    render: (l) => <AuditPage location={l} />,
  },
  {
    path: "/keys",
    label: "My API keys",
    section: "Account",
    visible: () => true,
    render: () => <KeysPage />,
  },
  {
    path: "/api-reference",
    label: "API reference",
    section: "Account",
    visible: () => true,
    render: () => <ApiReferencePage />,
  },
];

/** The page at `location`; else why there is none (the agent network turned off, or nothing there). */
function route(location: Location, pages: Page[], agentNetworkOff: boolean): ReactNode {
  // Any member, and not in the menu: the URL `agentnet login` prints opens it.
  if (location.path === "/device") return <DevicePage location={location} />;
  const sessionMatch = /^\/sessions\/(.+)$/.exec(location.path);
  if (sessionMatch?.[1] && pages.some((p) => p.path === "/sessions"))
    return <SessionPage sessionId={decodeURIComponent(sessionMatch[1])} />;
  const page = pages.find((p) => p.path === location.path);
  if (page) return page.render(location);
  const first = pages[0];
  if (agentNetworkOff) {
    return (
      <section>
        <h1>Agent network turned off</h1>
        <p>
          The agent network section is turned off for this account. Ask an owner to turn it on.{" "}
          {first ? <Link to={first.path}>Go to {first.label}</Link> : null}
        </p>
      </section>
    );
  }
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        Nothing lives at <code>{location.path}</code> for your role.{" "}
        {first ? <Link to={first.path}>Go to {first.label}</Link> : null}
      </p>
    </section>
  );
}

/**
 * The side nav behind a menu button on narrow screens (the button and the collapse are CSS's
 * doing): it opens and closes with the button, closes on Escape, giving focus back to the button,
 * and closes once a link took the reader to another page.
 */
function useNarrowMenu(path: string) {
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a page change is what closes the menu.
  useEffect(() => setOpen(false), [path]);
  useEffect(() => {
    if (!open) return;
    const closeOnEscape = (event: KeyboardEvent) => {
      if (event.key !== "Escape") return;
      setOpen(false);
      button.current?.focus();
    };
    document.addEventListener("keydown", closeOnEscape);
    return () => document.removeEventListener("keydown", closeOnEscape);
  }, [open]);
  return { open, button, toggle: () => setOpen((was) => !was) };
}

export function Shell() {
  const session = useSession();
  const location = useLocation();
  const { refreshAccount } = session;
  // Users and account flags change while the dashboard is open: re-read them on each page change.
  // biome-ignore lint/correctness/useExhaustiveDependencies: only a page change should re-read.
  useEffect(() => {
    void refreshAccount().catch(() => undefined);
  }, [location.path]);
  const menu = useNarrowMenu(location.path);
  const pages = PAGES.filter((p) => p.visible(session));
  const sections = ["Usage", "Configuration", "Account"] as const;
  const active = (path: string) =>
    path === "/" ? location.path === "/" : location.path === path || location.path.startsWith(`${path}/`);
  return (
    <div className="layout">
      <button type="button" className="skip" onClick={() => document.getElementById("main")?.focus()}>
        Skip to content
      </button>
      <header className="topbar">
        <span className="brand">agentnet</span>
        <button
          type="button"
          ref={menu.button}
          className="menu-button"
          aria-expanded={menu.open}
          aria-controls="main-nav"
          onClick={menu.toggle}
        >
          Menu
        </button>
      </header>
      <nav id="main-nav" className={`sidebar${menu.open ? " open" : ""}`} aria-label="Main">
        <div className="brand">agentnet</div>
        {sections.map((section) => {
          const items = pages.filter((p) => p.section === section);
          if (items.length === 0) return null;
          return (
            <div key={section} className="nav-section">
              <h2>{section}</h2>
              <ul>
                {items.map((p) => (
                  <li key={p.path}>
                    <Link to={p.path} current={active(p.path)} className="nav-link">
                      {p.label}
                    </Link>
                  </li>
                ))}
              </ul>
            </div>
          );
        })}
        <div className="whoami">
          <span className="whoami-name">{session.me.name || session.me.email}</span>
          <span className="whoami-role">{roleLabel(session.me.role)}</span>
          <button type="button" className="ghost" onClick={session.signOut}>
            Sign out
          </button>
        </div>
      </nav>
      <main id="main" tabIndex={-1} className="content">
        {route(location, pages, !session.agentNetworkVisible)}
      </main>
    </div>
  );
}
