import { randomBytes, randomInt } from "node:crypto";
import {
  type AgentCredential,
  type AgentTokens,
  AppError,
  ControlPlane,
  notFound,
  REFRESH_PREFIX,
  TOKEN_PREFIX,
  unauthenticated,
} from "@agentnet/contracts";
import { hashToken, newId } from "@agentnet/service-kit";
import { handleChange } from "../audit/changes";
import { requireLongLivedCredential } from "../domain/access";
import { generateToken } from "../domain/tokens";
import type { AgentCredentialDoc } from "../store/agent-credential-models";
import { isDuplicateKey } from "../store/models";
import { type HandlerContext, handle, revokeCallers } from "./context";

/** How long a device code waits for its member, and how often its agent may ask. */
const DEVICE_CODE_SECONDS = 600;
const POLL_INTERVAL_SECONDS = 5;
/** An agent credential unused this long stops working; each use moves it on. */
const CREDENTIAL_IDLE_DAYS = 30;
/** Earlier refresh hashes kept per credential, to know a copied one when it comes back. */
const KEPT_PREVIOUS_HASHES = 20;
/** Letters a person reads off a terminal without confusing them (no vowels: no words; RFC 8628 §6.1). */
const USER_CODE_LETTERS = "BCDFGHJKLMNPQRSTVWXZ";

/** An OAuth-style refusal (RFC 8628 §3.5, RFC 6749 §5.2): the api-gateway answers `error` with this code. */
const oauthError = (code: string, message: string) => new AppError(400, code, message);

const newUserCode = (): string => {
  let code = "";
  for (let index = 0; index < 8; index++) code += USER_CODE_LETTERS[randomInt(USER_CODE_LETTERS.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
};

/** What a member typed: any case, with or without the dash or spaces. */
const normalisedUserCode = (typed: string): string => {
  const letters = typed.toUpperCase().replace(/[^A-Z]/g, "");
  return `${letters.slice(0, 4)}-${letters.slice(4)}`;
};

const refreshToken = (): string => `${REFRESH_PREFIX}${generateToken().slice(TOKEN_PREFIX.length)}`;

const shown = (doc: AgentCredentialDoc): AgentCredential => ({
  id: doc._id,
  user_id: doc.user_id,
  ...(doc.client_name ? { client_name: doc.client_name } : {}),
  created_at: doc.created_at.toISOString(),
  ...(doc.last_used ? { last_used: doc.last_used.toISOString() } : {}),
  expires_at: doc.expires_at.toISOString(),
});

/**
 * Agent credentials (docs/API.md "Agent credentials"): device codes an agent asks for and a member
 * approves; refresh credentials, each usable once and replaced at each use (one used twice was
 * copied: the credential is revoked); proxy tokens that live `agentTokenTtlMs`.
 */
export function registerAgentCredentialHandlers(ctx: HandlerContext) {
  const { models } = ctx;
  const daysFromNow = (days: number) => new Date(Date.now() + days * 86_400_000);

  /** A new proxy token and refresh token for `credential`, the refresh token replacing `used`. */
  const mint = async (credential: AgentCredentialDoc, used: string | undefined): Promise<AgentTokens> => {
    const refresh = refreshToken();
    const now = new Date();
    if (used === undefined) {
      await models.AgentCredential.create({ ...credential, refresh_hash: hashToken(refresh) });
    } else {
      const rotated = await models.AgentCredential.updateOne(
        { _id: credential._id, refresh_hash: used },
        {
          $set: {
            refresh_hash: hashToken(refresh),
            previous_hashes: [...credential.previous_hashes, used].slice(-KEPT_PREVIOUS_HASHES),
            last_used: now,
            expires_at: daysFromNow(CREDENTIAL_IDLE_DAYS),
          },
        },
      );
      // Another refresh with the same token got there first: the token was used twice.
      if (rotated.modifiedCount !== 1) throw await revokeCopied(credential);
    }
    const access = generateToken();
    await models.AgentAccessToken.deleteMany({ credential_id: credential._id, expires_at: { $lte: now } });
    await models.AgentAccessToken.create({
      _id: newId(),
      account_id: credential.account_id,
      user_id: credential.user_id,
      credential_id: credential._id,
      hash: hashToken(access),
      expires_at: new Date(now.getTime() + ctx.agentTokenTtlMs),
    });
    return {
      access_token: access,
      token_type: "Bearer",
      expires_in: Math.round(ctx.agentTokenTtlMs / 1000),
      refresh_token: refresh,
    };
  };

  /** The entry of a change to `credential` that no member's request made (an agent's poll, a copied token). */
  const recordUnasked = (credential: AgentCredentialDoc, action: string) =>
    ctx.audit.record({
      account_id: credential.account_id,
      actor: { user_id: credential.user_id },
      action,
      target: { type: "agent_credential", id: credential._id },
      outcome: "succeeded",
    });

  /** Revokes a credential whose refresh token came back after it was replaced: someone holds a copy. */
  const revokeCopied = async (credential: AgentCredentialDoc): Promise<AppError> => {
    await revoke(credential);
    // A security event the member did not cause: the trail says who the credential was and why it went.
    await recordUnasked(credential, "agent_credentials.revoke_copied");
    ctx.logger.warn(
      { account_id: credential.account_id, user_id: credential.user_id, credential: credential._id },
      "an agent credential's refresh token was used twice: credential revoked",
    );
    return unauthenticated(
      "this refresh token was already used; the credential is revoked: run agentnet login",
    );
  };

  const revoke = async (credential: Pick<AgentCredentialDoc, "_id" | "account_id" | "user_id">) => {
    await models.AgentCredential.deleteOne({ _id: credential._id });
    await models.AgentAccessToken.deleteMany({ credential_id: credential._id });
    await revokeCallers(ctx, credential.account_id, { userIds: [credential.user_id] });
  };

  /** The credential's member, when they may still use it (not blocked, not removed). */
  const usable = async (credential: AgentCredentialDoc): Promise<boolean> => {
    const user = await models.User.findOne({
      _id: credential.user_id,
      account_id: credential.account_id,
    }).lean();
    return user !== null && !user.is_blocked;
  };

  handle(ctx, ControlPlane.deviceCodeStart, async ({ body, verification_uri, origin }) => {
    const deviceCode = randomBytes(32).toString("base64url");
    for (let attempt = 1; ; attempt++) {
      const userCode = newUserCode();
      try {
        await models.DeviceAuthorization.create({
          _id: hashToken(deviceCode),
          user_code: userCode,
          ...(body.client_name ? { client_name: body.client_name } : {}),
          ...origin,
          requested_at: new Date(),
          status: "pending",
          expires_at: new Date(Date.now() + DEVICE_CODE_SECONDS * 1000),
        });
        return {
          device_code: deviceCode,
          user_code: userCode,
          verification_uri,
          verification_uri_complete: `${verification_uri}?user_code=${userCode}`,
          expires_in: DEVICE_CODE_SECONDS,
          interval: POLL_INTERVAL_SECONDS,
        };
      } catch (error) {
        if (!isDuplicateKey(error) || attempt >= 5) throw error;
      }
    }
  });

  handle(ctx, ControlPlane.deviceCodePoll, async ({ device_code }) => {
    const id = hashToken(device_code);
    const device = await models.DeviceAuthorization.findById(id).lean();
    if (!device) throw oauthError("invalid_grant", "unknown device code");
    const now = new Date();
    if (device.expires_at <= now) {
      await models.DeviceAuthorization.deleteOne({ _id: id });
      throw oauthError("expired_token", "the device code expired before it was approved: start again");
    }
    if (device.status === "denied") {
      await models.DeviceAuthorization.deleteOne({ _id: id });
      throw oauthError("access_denied", "the member refused this device code");
    }
    if (device.status === "pending") {
      await models.DeviceAuthorization.updateOne({ _id: id }, { $set: { last_poll_at: now } });
      if (
        device.last_poll_at &&
        now.getTime() - device.last_poll_at.getTime() < POLL_INTERVAL_SECONDS * 1000
      ) {
        throw oauthError("slow_down", `poll at most every ${POLL_INTERVAL_SECONDS} s`);
      }
      throw oauthError("authorization_pending", "not approved yet");
    }
    // Approved: the code is spent by whoever takes it first.
    const taken = await models.DeviceAuthorization.findOneAndDelete({ _id: id, status: "approved" }).lean();
    if (!taken?.account_id || !taken.user_id) throw oauthError("invalid_grant", "unknown device code");
    const credential: AgentCredentialDoc = {
      _id: newId(),
      account_id: taken.account_id,
      user_id: taken.user_id,
      ...(taken.client_name ? { client_name: taken.client_name } : {}),
      refresh_hash: "",
      previous_hashes: [],
      created_at: now,
      last_used: now,
      expires_at: daysFromNow(CREDENTIAL_IDLE_DAYS),
    };
    if (!(await usable(credential)))
      throw oauthError("access_denied", "the member who approved it may not sign in");
    const tokens = await mint(credential, undefined);
    await recordUnasked(credential, "agent_credentials.create");
    return tokens;
  });

  handle(ctx, ControlPlane.agentTokenRefresh, async ({ refresh_token }) => {
    const hash = hashToken(refresh_token);
    const credential = await models.AgentCredential.findOne({ refresh_hash: hash }).lean();
    if (!credential) {
      const copied = await models.AgentCredential.findOne({ previous_hashes: hash }).lean();
      if (copied) throw await revokeCopied(copied);
      throw unauthenticated("unknown or revoked refresh token: run agentnet login");
    }
    if (credential.expires_at <= new Date() || !(await usable(credential))) {
      await revoke(credential);
      throw unauthenticated("this agent credential no longer works: run agentnet login");
    }
    return mint(credential, hash);
  });

  handle(ctx, ControlPlane.deviceCodePreview, async ({ caller, query }) => {
    // As for approving: a proxy token (an agent) has no business with other agents' codes.
    requireLongLivedCredential(caller);
    const device = await models.DeviceAuthorization.findOne({
      user_code: normalisedUserCode(query.user_code),
      status: "pending",
      expires_at: { $gt: new Date() },
    }).lean();
    if (!device) throw notFound("pending device code");
    return {
      user_code: device.user_code,
      ...(device.client_name ? { client_name: device.client_name } : {}),
      ...(device.address ? { address: device.address } : {}),
      ...(device.user_agent ? { user_agent: device.user_agent } : {}),
      requested_at: (
        device.requested_at ?? new Date(device.expires_at.getTime() - DEVICE_CODE_SECONDS * 1000)
      ).toISOString(),
      expires_at: device.expires_at.toISOString(),
    };
  });

  handleChange(ctx, ControlPlane.deviceCodeApprove, {}, async ({ caller, body }) => {
    requireLongLivedCredential(caller);
    const userCode = normalisedUserCode(body.user_code);
    const device = await models.DeviceAuthorization.findOneAndUpdate(
      { user_code: userCode, status: "pending", expires_at: { $gt: new Date() } },
      {
        $set: {
          status: body.approve ? "approved" : "denied",
          account_id: caller.account_id,
          user_id: caller.user_id,
        },
      },
      { new: true },
    ).lean();
    if (!device) throw notFound("pending device code");
    return {
      ...(device.client_name ? { client_name: device.client_name } : {}),
      approved: body.approve,
    };
  });

  handle(ctx, ControlPlane.agentCredentialsList, async ({ caller }) => {
    const docs = await models.AgentCredential.find({ account_id: caller.account_id, user_id: caller.user_id })
      .sort({ created_at: 1, _id: 1 })
      .lean();
    return docs.map(shown);
  });

  handleChange(
    ctx,
    ControlPlane.agentCredentialsDelete,
    { id: (r) => r.credential_id },
    async ({ caller, credential_id }) => {
      const credential = await models.AgentCredential.findOne({
        _id: credential_id,
        account_id: caller.account_id,
        user_id: caller.user_id,
      }).lean();
      if (!credential) throw notFound("agent credential");
      await revoke(credential);
      return {};
    },
  );
}
