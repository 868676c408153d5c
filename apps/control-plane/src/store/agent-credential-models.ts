import { type Connection, type Model, Schema } from "mongoose";

/** A device authorization (RFC 8628) on its way: asked by an agent, approved by a member, or not. */
export interface DeviceAuthorizationDoc {
  /** sha256 of the device code: the code itself is the agent's alone. */
  _id: string;
  user_code: string;
  client_name?: string;
  /** Where and when the agent asked, shown to the member before they confirm. */
  address?: string;
  user_agent?: string;
  requested_at?: Date;
  status: "pending" | "approved" | "denied";
  /** Who approved it, once approved. */
  account_id?: string;
  user_id?: string;
  expires_at: Date;
  last_poll_at?: Date;
}

/** A member's agent credential: the refresh credential an agent holds, by its hash. */
export interface AgentCredentialDoc {
  _id: string;
  account_id: string;
  user_id: string;
  client_name?: string;
  refresh_hash: string;
  /** Hashes this credential's refresh token had before: one used again means it was copied. */
  previous_hashes: string[];
  created_at: Date;
  last_used?: Date;
  expires_at: Date;
}

/** A proxy token an agent credential minted: answered like an API token until it expires. */
export interface AgentAccessTokenDoc {
  _id: string;
  account_id: string;
  user_id: string;
  credential_id: string;
  hash: string;
  expires_at: Date;
}

const deviceSchema = new Schema<DeviceAuthorizationDoc>(
  {
    _id: String,
    user_code: { type: String, required: true },
    client_name: String,
    address: String,
    user_agent: String,
    requested_at: Date,
    status: { type: String, required: true },
    account_id: String,
    user_id: String,
    expires_at: { type: Date, required: true },
    last_poll_at: Date,
  },
  { versionKey: false },
);
deviceSchema.index({ user_code: 1 }, { unique: true });

const credentialSchema = new Schema<AgentCredentialDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    user_id: { type: String, required: true },
    client_name: String,
    refresh_hash: { type: String, required: true },
    previous_hashes: { type: [String], default: [] },
    created_at: { type: Date, required: true },
    last_used: Date,
    expires_at: { type: Date, required: true },
  },
  { versionKey: false },
);
credentialSchema.index({ refresh_hash: 1 }, { unique: true });
credentialSchema.index({ previous_hashes: 1 });
credentialSchema.index({ account_id: 1, user_id: 1 });

const accessTokenSchema = new Schema<AgentAccessTokenDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    user_id: { type: String, required: true },
    credential_id: { type: String, required: true },
    hash: { type: String, required: true },
    expires_at: { type: Date, required: true },
  },
  { versionKey: false },
);
accessTokenSchema.index({ hash: 1 }, { unique: true });
accessTokenSchema.index({ credential_id: 1 });

export interface AgentCredentialModels {
  DeviceAuthorization: Model<DeviceAuthorizationDoc>;
  AgentCredential: Model<AgentCredentialDoc>;
  AgentAccessToken: Model<AgentAccessTokenDoc>;
}

export async function createAgentCredentialModels(connection: Connection): Promise<AgentCredentialModels> {
  const models: AgentCredentialModels = {
    DeviceAuthorization: connection.model("DeviceAuthorization", deviceSchema, "device_authorizations"),
    AgentCredential: connection.model("AgentCredential", credentialSchema, "agent_credentials"),
    AgentAccessToken: connection.model("AgentAccessToken", accessTokenSchema, "agent_access_tokens"),
  };
  await Promise.all(Object.values(models).map((model: Model<unknown>) => model.createIndexes()));
  return models;
}
