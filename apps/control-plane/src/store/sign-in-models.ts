import type { SealedSecret } from "@agentnet/contracts";
import { type Connection, type Model, Schema } from "mongoose";
import type { AgentCredentialModels } from "./agent-credential-models";

/** The account's OpenID Connect provider: one per account, its client secret sealed. */
export interface IdentityProviderDoc {
  /** The account's id. */
  _id: string;
  account_id: string;
  issuer: string;
  client_id: string;
  sealed_client_secret: SealedSecret;
  allowed_email_domains: string[];
  groups_claim: string;
  group_mapping: { claim_value: string; group_id: string }[];
  default_role: "admin" | "auditor" | "user";
  enabled: boolean;
  updated_at: Date;
}

/** A sign-in on its way to the provider and back: what checks the answer (PKCE verifier, nonce). */
export interface SignInAttemptDoc {
  /** sha256 of the state: the state itself travels only with the browser. */
  _id: string;
  account_id: string;
  code_verifier: string;
  nonce: string;
  redirect_uri: string;
  expires_at: Date;
}

/** A browser's session after a sign-in; its token is in an HttpOnly cookie, stored here by hash. */
export interface SessionDoc {
  _id: string;
  account_id: string;
  user_id: string;
  hash: string;
  created_at: Date;
  expires_at: Date;
  address?: string;
  user_agent?: string;
}

/**
 * What the identity provider granted at a user's latest sign-in that lets the control-plane ask it
 * again whether it still vouches for them: its refresh token, sealed.
 */
export interface IdentityGrantDoc {
  /** The user's id: the latest sign-in's grant replaces earlier ones. */
  _id: string;
  account_id: string;
  user_id: string;
  /** The provider that granted it: a grant is never sent to another. */
  issuer: string;
  client_id: string;
  sealed_refresh_token: SealedSecret;
  /** When the provider was last asked about the user (the sign-in, or a refresh), by whoever claimed it. */
  checked_at: Date;
  /** The provider's refusal was taken: the user's access is being ended (a later sweep finishes it). */
  ending?: boolean;
}

const providerSchema = new Schema<IdentityProviderDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    issuer: { type: String, required: true },
    client_id: { type: String, required: true },
    sealed_client_secret: { type: Schema.Types.Mixed, required: true },
    allowed_email_domains: { type: [String], default: [] },
    groups_claim: { type: String, required: true },
    group_mapping: { type: [{ _id: false, claim_value: String, group_id: String }], default: [] },
    default_role: { type: String, required: true },
    enabled: { type: Boolean, required: true },
  },
  { timestamps: { createdAt: false, updatedAt: "updated_at" }, versionKey: false },
);
providerSchema.index({ allowed_email_domains: 1 });

const attemptSchema = new Schema<SignInAttemptDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    code_verifier: { type: String, required: true },
    nonce: { type: String, required: true },
    redirect_uri: { type: String, required: true },
    expires_at: { type: Date, required: true },
  },
  { versionKey: false },
);

const sessionSchema = new Schema<SessionDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    user_id: { type: String, required: true },
    hash: { type: String, required: true },
    created_at: { type: Date, required: true },
    expires_at: { type: Date, required: true },
    address: String,
    user_agent: String,
  },
  { versionKey: false },
);
sessionSchema.index({ hash: 1 }, { unique: true });
sessionSchema.index({ account_id: 1, user_id: 1 });

const grantSchema = new Schema<IdentityGrantDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    user_id: { type: String, required: true },
    issuer: { type: String, required: true },
    client_id: { type: String, required: true },
    sealed_refresh_token: { type: Schema.Types.Mixed, required: true },
    checked_at: { type: Date, required: true },
    ending: Boolean,
  },
  { versionKey: false },
);
grantSchema.index({ checked_at: 1 });
grantSchema.index({ account_id: 1 });

export interface SignInModels {
  IdentityProvider: Model<IdentityProviderDoc>;
  SignInAttempt: Model<SignInAttemptDoc>;
  Session: Model<SessionDoc>;
  IdentityGrant: Model<IdentityGrantDoc>;
}

/**
 * Drops what a user's sign-ins gave them: browser sessions, agent credentials and the proxy tokens
 * those minted, and the provider's grant (a user deleted, or a sign-in the provider no longer vouches for). Their caches are
 * the caller's to revoke.
 */
export async function forgetSignIns(
  models: Pick<SignInModels, "Session" | "IdentityGrant"> &
    Pick<AgentCredentialModels, "AgentCredential" | "AgentAccessToken">,
  user: { account_id: string; user_id: string },
): Promise<void> {
  await Promise.all([
    models.Session.deleteMany(user),
    models.IdentityGrant.deleteMany(user),
    models.AgentCredential.deleteMany(user),
    models.AgentAccessToken.deleteMany(user),
  ]);
}

export async function createSignInModels(connection: Connection): Promise<SignInModels> {
  const models: SignInModels = {
    IdentityProvider: connection.model("IdentityProvider", providerSchema, "identity_providers"),
    SignInAttempt: connection.model("SignInAttempt", attemptSchema, "sign_in_attempts"),
    Session: connection.model("Session", sessionSchema, "sessions"),
    IdentityGrant: connection.model("IdentityGrant", grantSchema, "identity_grants"),
  };
  await Promise.all(Object.values(models).map((model: Model<unknown>) => model.createIndexes()));
  return models;
}
