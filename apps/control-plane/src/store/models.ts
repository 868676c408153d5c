import type { AccountOnboarding, AccountSettings, Role } from "@agentnet/contracts";
import { type Connection, type Model, Schema } from "mongoose";

const timestamps = { createdAt: "created_at", updatedAt: "updated_at" } as const;

export interface AccountDoc {
  _id: string;
  domain: string;
  domain_category: string;
  created_by: string;
  settings: AccountSettings;
  onboarding: AccountOnboarding;
  /** The implicit group every user of the account belongs to. */
  all_group_id: string;
  created_at: Date;
  updated_at: Date;
}

export interface UserDoc {
  _id: string;
  account_id: string;
  email: string;
  name: string;
  role: Role;
  auto_groups: string[];
  is_service_user: boolean;
  is_blocked: boolean;
  last_login?: Date;
  /** Who the identity provider says this user is, from their first sign-in there on (docs/API.md). */
  oidc_identity?: { issuer: string; subject: string };
  created_at: Date;
  updated_at: Date;
}

export interface GroupDoc {
  _id: string;
  account_id: string;
  name: string;
  created_at: Date;
  updated_at: Date;
}

export interface TokenDoc {
  _id: string;
  account_id: string;
  user_id: string;
  name: string;
  /** sha256 of the whole token; the token itself is never stored. */
  hash: string;
  expires_at: Date;
  created_by: string;
  last_used?: Date;
  created_at: Date;
  updated_at: Date;
}

const accountSchema = new Schema<AccountDoc>(
  {
    _id: String,
    domain: String,
    domain_category: String,
    created_by: String,
    settings: { type: Schema.Types.Mixed, required: true },
    onboarding: { type: Schema.Types.Mixed, required: true },
    all_group_id: { type: String, required: true },
  },
  { timestamps, minimize: false },
);

const userSchema = new Schema<UserDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    email: { type: String, required: true },
    name: String,
    role: { type: String, required: true },
    auto_groups: { type: [String], default: [] },
    is_service_user: { type: Boolean, default: false },
    is_blocked: { type: Boolean, default: false },
    last_login: Date,
    oidc_identity: { type: { _id: false, issuer: String, subject: String }, required: false },
  },
  { timestamps },
);
userSchema.index({ account_id: 1, email: 1 }, { unique: true });

const groupSchema = new Schema<GroupDoc>(
  { _id: String, account_id: { type: String, required: true }, name: { type: String, required: true } },
  { timestamps },
);
groupSchema.index({ account_id: 1, name: 1 }, { unique: true });

const tokenSchema = new Schema<TokenDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    user_id: { type: String, required: true },
    name: String,
    hash: { type: String, required: true },
    expires_at: { type: Date, required: true },
    created_by: String,
    last_used: Date,
  },
  { timestamps },
);
tokenSchema.index({ hash: 1 }, { unique: true });
tokenSchema.index({ account_id: 1, user_id: 1 });

export interface Models {
  Account: Model<AccountDoc>;
  User: Model<UserDoc>;
  Group: Model<GroupDoc>;
  Token: Model<TokenDoc>;
}

export async function createModels(connection: Connection): Promise<Models> {
  const models: Models = {
    Account: connection.model("Account", accountSchema, "accounts"),
    User: connection.model("User", userSchema, "users"),
    Group: connection.model("Group", groupSchema, "groups"),
    Token: connection.model("Token", tokenSchema, "api_tokens"),
  };
  await Promise.all(Object.values(models).map((model: Model<unknown>) => model.createIndexes()));
  return models;
}

/**
 * A unique index refused the write. MongoDB says so with code 11000; FerretDB (SQLite) does for
 * inserts, but its findAndModify reports the SQLite constraint with another code, by message only.
 */
export const isDuplicateKey = (error: unknown): boolean =>
  typeof error === "object" &&
  error !== null &&
  (("code" in error && (error as { code: unknown }).code === 11000) ||
    /E11000|UNIQUE constraint failed/.test(String((error as { message?: unknown }).message)));
