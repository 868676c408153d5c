import { describe, expect, it } from "vitest";
import { agentNetworkOnlyError, UpdateAccountBody } from "./account";
import { Caller, hasAccountWideGrant, Role } from "./common";
import { AppError, detailsFromZod, ErrorEnvelope } from "./errors";
import { GroupBody } from "./groups";
import { CreateTokenBody, PersonalAccessTokenGenerated } from "./tokens";
import { CreateUserBody, UpdateUserBody } from "./users";

const makeSettings = (overrides: Record<string, unknown> = {}) => ({
  peer_login_expiration_enabled: true,
  peer_login_expiration: 86_400,
  peer_inactivity_expiration_enabled: false,
  peer_inactivity_expiration: 600,
  regular_users_view_blocked: true,
  peer_expose_enabled: false,
  peer_expose_groups: [],
  ...overrides,
});

const issuePaths = (result: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) =>
  result.error?.issues.map((issue) => issue.path.join(".")) ?? [];

describe("account update body", () => {
  it("accepts the required members alone", () => {
    expect(UpdateAccountBody.safeParse({ settings: makeSettings() }).success).toBe(true);
  });

  it.each([
    "peer_login_expiration_enabled",
    "peer_login_expiration",
    "peer_inactivity_expiration_enabled",
    "peer_inactivity_expiration",
    "regular_users_view_blocked",
    "peer_expose_enabled",
    "peer_expose_groups",
  ])("requires %s", (member) => {
    const settings: Record<string, unknown> = makeSettings();
    delete settings[member];
    expect(issuePaths(UpdateAccountBody.safeParse({ settings }))).toEqual([`settings.${member}`]);
  });

  it("validates network ranges as CIDR", () => {
    expect(
      UpdateAccountBody.safeParse({ settings: makeSettings({ network_range: "100.64.0.0/10" }) }).success,
    ).toBe(true);
    expect(
      UpdateAccountBody.safeParse({ settings: makeSettings({ network_range_v6: "fd00:1234::/64" }) }).success,
    ).toBe(true);
    expect(
      issuePaths(UpdateAccountBody.safeParse({ settings: makeSettings({ network_range: "100.64.0.0/33" }) })),
    ).toEqual(["settings.network_range"]);
    expect(
      issuePaths(UpdateAccountBody.safeParse({ settings: makeSettings({ network_range_v6: "10.0.0.0/8" }) })),
    ).toEqual(["settings.network_range_v6"]);
  });

  it("requires every member of extra when extra is sent", () => {
    const extra = {
      peer_approval_enabled: false,
      user_approval_required: false,
      network_traffic_logs_enabled: false,
      network_traffic_logs_groups: [],
      network_traffic_packet_counter_enabled: false,
    };
    expect(UpdateAccountBody.safeParse({ settings: makeSettings({ extra }) }).success).toBe(true);
    const { user_approval_required: _dropped, ...partial } = extra;
    expect(issuePaths(UpdateAccountBody.safeParse({ settings: makeSettings({ extra: partial }) }))).toEqual([
      "settings.extra.user_approval_required",
    ]);
  });

  it("strips the read-only embedded_idp_enabled and local_auth_disabled", () => {
    const parsed = UpdateAccountBody.parse({
      settings: makeSettings({ embedded_idp_enabled: true, local_auth_disabled: true }),
    });
    expect(parsed.settings).not.toHaveProperty("embedded_idp_enabled");
    expect(parsed.settings).not.toHaveProperty("local_auth_disabled");
  });

  it("keeps onboarding optional but complete when sent", () => {
    expect(
      UpdateAccountBody.safeParse({ settings: makeSettings(), onboarding: { signup_form_pending: true } })
        .success,
    ).toBe(false);
    expect(
      UpdateAccountBody.safeParse({
        settings: makeSettings(),
        onboarding: { signup_form_pending: true, onboarding_flow_pending: false },
      }).success,
    ).toBe(true);
  });

  it("agent_network_only needs dashboard_features.agent_network in the same request", () => {
    const parse = (extra: Record<string, unknown>) =>
      UpdateAccountBody.parse({ settings: makeSettings(extra) }).settings;
    expect(agentNetworkOnlyError(parse({ agent_network_only: true }))).toMatch(/dashboard_features/);
    expect(
      agentNetworkOnlyError(
        parse({ agent_network_only: true, dashboard_features: { agent_network: false } }),
      ),
    ).not.toBeNull();
    expect(
      agentNetworkOnlyError(parse({ agent_network_only: true, dashboard_features: { agent_network: true } })),
    ).toBeNull();
    expect(agentNetworkOnlyError(parse({ agent_network_only: false }))).toBeNull();
  });
});

describe("roles", () => {
  it("knows the four roles and which hold the account-wide grant", () => {
    expect(Role.options).toEqual(["owner", "admin", "auditor", "user"]);
    expect(Role.safeParse("superuser").success).toBe(false);
    expect(Role.options.filter(hasAccountWideGrant)).toEqual(["owner", "admin", "auditor"]);
  });

  it("a caller names account, user, role and groups", () => {
    expect(
      Caller.safeParse({ account_id: "a", user_id: "u", role: "user", group_ids: [], email: "", name: "" })
        .success,
    ).toBe(true);
    expect(
      issuePaths(Caller.safeParse({ account_id: "a", user_id: "u", role: "user", email: "", name: "" })),
    ).toEqual(["group_ids"]);
  });
});

describe("users", () => {
  it("creates with a valid email, lower-cased, role user by default", () => {
    expect(CreateUserBody.parse({ email: "Ada@Example.COM" })).toMatchObject({
      email: "ada@example.com",
      role: "user",
      auto_groups: [],
    });
    expect(issuePaths(CreateUserBody.safeParse({ email: "nope" }))).toEqual(["email"]);
    expect(issuePaths(CreateUserBody.safeParse({ email: "a@b.co", role: "king" }))).toEqual(["role"]);
  });

  it("updates with role and auto_groups required", () => {
    expect(UpdateUserBody.safeParse({ role: "admin", auto_groups: [] }).success).toBe(true);
    expect(issuePaths(UpdateUserBody.safeParse({ role: "admin" }))).toEqual(["auto_groups"]);
  });
});

describe("groups and tokens", () => {
  it("a group needs a non-blank name", () => {
    expect(GroupBody.safeParse({ name: "eng" }).success).toBe(true);
    expect(issuePaths(GroupBody.safeParse({ name: "  " }))).toEqual(["name"]);
  });

  it("a token expires in 1 to 365 days", () => {
    expect(CreateTokenBody.safeParse({ name: "ci", expires_in: 365 }).success).toBe(true);
    expect(issuePaths(CreateTokenBody.safeParse({ name: "ci", expires_in: 0 }))).toEqual(["expires_in"]);
    expect(issuePaths(CreateTokenBody.safeParse({ name: "ci", expires_in: 366 }))).toEqual(["expires_in"]);
  });

  it("a generated token carries the agn_ prefix", () => {
    const token = {
      id: "t",
      name: "n",
      expiration_date: "2027-01-01T00:00:00Z",
      created_by: "u",
      created_at: "2026-01-01T00:00:00Z",
    };
    expect(
      PersonalAccessTokenGenerated.safeParse({ plain_token: "agn_x", personal_access_token: token }).success,
    ).toBe(true);
    expect(
      issuePaths(PersonalAccessTokenGenerated.safeParse({ plain_token: "x", personal_access_token: token })),
    ).toEqual(["plain_token"]);
  });
});

describe("error envelope", () => {
  it("round-trips an AppError through the envelope", () => {
    const error = new AppError(422, "settings.endpoint_taken", "taken", [
      { path: "endpoint", message: "held" },
    ]);
    const envelope = ErrorEnvelope.parse(JSON.parse(JSON.stringify(error.toEnvelope())));
    expect(AppError.fromEnvelope(envelope)).toMatchObject({
      status: 422,
      code: "settings.endpoint_taken",
      details: [{ path: "endpoint" }],
    });
  });

  it("refuses a status outside 4xx/5xx", () => {
    expect(ErrorEnvelope.safeParse({ status: 200, code: "x", message: "m" }).success).toBe(false);
  });

  it("turns zod issues into field details", () => {
    const result = GroupBody.safeParse({});
    expect(result.error && detailsFromZod(result.error)).toEqual([
      { path: "name", message: expect.any(String) },
    ]);
  });
});
