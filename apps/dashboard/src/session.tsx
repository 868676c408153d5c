import type { Account, Role, User } from "@agentnet/contracts";
import { createContext, useContext } from "react";
import type { Credentials } from "./api/client";
import { type Api, createApi } from "./api/endpoints";

const STORAGE_KEY = "agentnet.token";

export const readToken = (): string => sessionStorage.getItem(STORAGE_KEY) ?? "";
export const storeToken = (token: string) => sessionStorage.setItem(STORAGE_KEY, token);
export const clearToken = () => sessionStorage.removeItem(STORAGE_KEY);

/**
 * The page a sign-in with the identity provider started from (the device page with its code): the
 * provider's redirect lands on `/#/`, so the page is kept here across it and opened after.
 */
const RETURN_KEY = "agentnet.return";
export const storeReturnHash = (hash: string) => sessionStorage.setItem(RETURN_KEY, hash);
export function takeReturnHash(): string | undefined {
  const hash = sessionStorage.getItem(RETURN_KEY) ?? undefined;
  sessionStorage.removeItem(RETURN_KEY);
  return hash;
}

/** Who is signed in and what the UI lets them see. */
export interface Session {
  /** The API token signed in with; undefined for a sign-in with the identity provider (a cookie). */
  token: string | undefined;
  credentials: Credentials;
  api: Api;
  me: User;
  users: User[];
  account: Account;
  /** owner, admin, auditor: every caller's logs and the configuration (read). */
  accountWide: boolean;
  /** owner, admin: may change configuration. */
  canWrite: boolean;
  /** Dashboard flags of the account. */
  agentNetworkVisible: boolean;
  agentNetworkOnly: boolean;
  refreshAccount: () => Promise<void>;
  signOut: () => void;
}

export const roleLabel = (role: Role): string => role.charAt(0).toUpperCase() + role.slice(1);

/** Signs in: the credentials are good when /api/users answers, and the caller is the row marked is_current. */
export async function loadSession(credentials: Credentials) {
  const api = createApi(credentials);
  const [users, accounts] = await Promise.all([api.users(), api.accounts()]);
  const me = users.find((u) => u.is_current);
  const account = accounts[0];
  if (!me || !account) throw new Error("The API did not say who you are; try another token.");
  const accountWide = me.role !== "user";
  return {
    token: "token" in credentials ? credentials.token : undefined,
    credentials,
    api,
    me,
    users,
    account,
    accountWide,
    canWrite: me.role === "owner" || me.role === "admin",
    agentNetworkVisible: account.settings.dashboard_features?.agent_network !== false,
    agentNetworkOnly: account.settings.agent_network_only === true,
  };
}

export const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside a signed-in dashboard");
  return session;
}

/** A user's display name for ids in tables: name, else email, else the id. */
export function userLabel(users: readonly User[], id: string): string {
  const user = users.find((u) => u.id === id);
  return user ? user.name || user.email : id;
}
