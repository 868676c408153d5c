import type { Account, Group, PersonalAccessToken, User } from "@agentnet/contracts";
import type { AccountDoc, GroupDoc, TokenDoc, UserDoc } from "./models";

const iso = (date: Date) => date.toISOString();

export const toAccount = (doc: AccountDoc): Account => ({
  id: doc._id,
  settings: doc.settings,
  domain: doc.domain,
  domain_category: doc.domain_category,
  created_at: iso(doc.created_at),
  created_by: doc.created_by,
  onboarding: doc.onboarding,
});

export const toUser = (doc: UserDoc, currentUserId: string): User => ({
  id: doc._id,
  email: doc.email,
  name: doc.name,
  role: doc.role,
  status: doc.is_blocked ? "blocked" : "active",
  auto_groups: doc.auto_groups,
  is_current: doc._id === currentUserId,
  is_service_user: doc.is_service_user,
  is_blocked: doc.is_blocked,
  ...(doc.last_login ? { last_login: iso(doc.last_login) } : {}),
  issued: "api",
  created_at: iso(doc.created_at),
  updated_at: iso(doc.updated_at),
});

export const toGroup = (doc: GroupDoc, usersCount: number): Group => ({
  id: doc._id,
  name: doc.name,
  users_count: usersCount,
  issued: "api",
  created_at: iso(doc.created_at),
  updated_at: iso(doc.updated_at),
});

export const toToken = (doc: TokenDoc): PersonalAccessToken => ({
  id: doc._id,
  name: doc.name,
  expiration_date: iso(doc.expires_at),
  created_by: doc.created_by,
  created_at: iso(doc.created_at),
  ...(doc.last_used ? { last_used: iso(doc.last_used) } : {}),
});
