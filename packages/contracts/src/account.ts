import { z } from "zod";
import { Email, Id, ResourceName, Timestamp } from "./common";
import { MAX_ID_LIST, MAX_SETTING_TEXT_LENGTH } from "./sizes";

/** A CIDR block such as `100.64.0.0/10` or `fd00:1234::/64`. */
const cidr = (family: 4 | 6) =>
  z
    .string()
    .refine((value) => isCidr(value, family), { message: `must be an IPv${family} range in CIDR format` });

function isCidr(value: string, family: 4 | 6): boolean {
  const [address, prefix, ...rest] = value.split("/");
  if (address === undefined || prefix === undefined || rest.length > 0 || !/^\d{1,3}$/.test(prefix))
    return false;
  const bits = Number(prefix);
  if (family === 4) return z.ipv4().safeParse(address).success && bits <= 32;
  return z.ipv6().safeParse(address).success && bits <= 128;
}

export const AccountExtraSettings = z.object({
  peer_approval_enabled: z.boolean(),
  user_approval_required: z.boolean(),
  network_traffic_logs_enabled: z.boolean(),
  network_traffic_logs_groups: z.array(z.string()),
  network_traffic_packet_counter_enabled: z.boolean(),
});
export type AccountExtraSettings = z.infer<typeof AccountExtraSettings>;

export const DashboardFeatures = z.object({ agent_network: z.boolean().optional() });
export type DashboardFeatures = z.infer<typeof DashboardFeatures>;

// What a PUT may write; the reply reads stored settings unbounded, so older ones still read.
const SettingText = z
  .string()
  .max(MAX_SETTING_TEXT_LENGTH, `must be at most ${MAX_SETTING_TEXT_LENGTH} characters`);
const SettingList = z.array(SettingText).max(MAX_ID_LIST, `at most ${MAX_ID_LIST} entries`);

const settingsShape = {
  peer_login_expiration_enabled: z.boolean(),
  peer_login_expiration: z.number().int().min(0),
  peer_inactivity_expiration_enabled: z.boolean(),
  peer_inactivity_expiration: z.number().int().min(0),
  regular_users_view_blocked: z.boolean(),
  groups_propagation_enabled: z.boolean().optional(),
  jwt_groups_enabled: z.boolean().optional(),
  jwt_groups_claim_name: z.string().optional(),
  jwt_allow_groups: z.array(z.string()).optional(),
  routing_peer_dns_resolution_enabled: z.boolean().optional(),
  dns_domain: z.string().optional(),
  network_range: cidr(4).optional(),
  network_range_v6: cidr(6).optional(),
  peer_expose_enabled: z.boolean(),
  peer_expose_groups: z.array(z.string()),
  extra: AccountExtraSettings.optional(),
  lazy_connection_enabled: z.boolean().optional(),
  auto_update_version: z.string().optional(),
  auto_update_always: z.boolean().optional(),
  metrics_push_enabled: z.boolean().optional(),
  agent_network_only: z.boolean().optional(),
  dashboard_features: DashboardFeatures.optional(),
  local_mfa_enabled: z.boolean().optional(),
  ipv6_enabled_groups: z.array(z.string()).optional(),
};

/** What an account returns: the writable settings plus the two the identity provider decides. */
export const AccountSettings = z.object({
  ...settingsShape,
  embedded_idp_enabled: z.boolean().optional(),
  local_auth_disabled: z.boolean().optional(),
});
export type AccountSettings = z.infer<typeof AccountSettings>;

/**
 * Settings as a PUT carries them. The agent_network_only rule is not here: a body breaking it is
 * well-formed but refused (422), see `agentNetworkOnlyError`. `embedded_idp_enabled` and `local_auth_disabled` are read-only:
 * they are accepted and ignored (stripped), so a client can send back what it read.
 */
export const AccountSettingsUpdate = z.object({
  ...settingsShape,
  jwt_groups_claim_name: SettingText.optional(),
  jwt_allow_groups: SettingList.optional(),
  dns_domain: SettingText.optional(),
  peer_expose_groups: SettingList,
  extra: AccountExtraSettings.extend({ network_traffic_logs_groups: SettingList }).optional(),
  auto_update_version: SettingText.optional(),
  ipv6_enabled_groups: SettingList.optional(),
});
export type AccountSettingsUpdate = z.infer<typeof AccountSettingsUpdate>;

export const AccountOnboarding = z.object({
  signup_form_pending: z.boolean(),
  onboarding_flow_pending: z.boolean(),
});
export type AccountOnboarding = z.infer<typeof AccountOnboarding>;

export const Account = z.object({
  id: Id,
  settings: AccountSettings,
  domain: z.string(),
  /** Free text in the spec; we use NetBird's values: `private` for invited teams, `public` for shared domains. */
  domain_category: z.string(),
  created_at: Timestamp,
  created_by: Id,
  onboarding: AccountOnboarding,
});
export type Account = z.infer<typeof Account>;

export const UpdateAccountBody = z.object({
  settings: AccountSettingsUpdate,
  onboarding: AccountOnboarding.optional(),
});
export type UpdateAccountBody = z.infer<typeof UpdateAccountBody>;

/** `agentnet bootstrap`: a new account with its first owner and that owner's first token. */
export const BootstrapAccountBody = z.object({
  email: Email,
  name: ResourceName.optional(),
});
export type BootstrapAccountBody = z.infer<typeof BootstrapAccountBody>;

export const BootstrapAccountReply = z.object({ account_id: Id, user_id: Id, token: z.string() });
export type BootstrapAccountReply = z.infer<typeof BootstrapAccountReply>;

/** `agent_network_only: true` needs `dashboard_features.agent_network: true` in the same request. */
export const agentNetworkOnlyError = (settings: AccountSettingsUpdate): string | null =>
  settings.agent_network_only === true && settings.dashboard_features?.agent_network !== true
    ? "agent_network_only requires dashboard_features.agent_network to be true in the same request"
    : null;
