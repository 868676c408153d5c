import type { AccountOnboarding, AccountSettings, AccountSettingsUpdate } from "@agentnet/contracts";

/** NetBird's defaults for a new account; `ipv6_enabled_groups` starts with the All group. */
export function defaultAccountSettings(allGroupId: string): AccountSettings {
  return {
    peer_login_expiration_enabled: true,
    peer_login_expiration: 86_400,
    peer_inactivity_expiration_enabled: false,
    peer_inactivity_expiration: 600,
    regular_users_view_blocked: true,
    groups_propagation_enabled: true,
    jwt_groups_enabled: false,
    jwt_groups_claim_name: "",
    jwt_allow_groups: [],
    routing_peer_dns_resolution_enabled: true,
    dns_domain: "",
    peer_expose_enabled: false,
    peer_expose_groups: [],
    extra: {
      peer_approval_enabled: false,
      user_approval_required: false,
      network_traffic_logs_enabled: false,
      network_traffic_logs_groups: [],
      network_traffic_packet_counter_enabled: false,
    },
    lazy_connection_enabled: false,
    auto_update_version: "disabled",
    auto_update_always: false,
    metrics_push_enabled: false,
    agent_network_only: false,
    dashboard_features: {},
    embedded_idp_enabled: false,
    local_auth_disabled: false,
    local_mfa_enabled: false,
    ipv6_enabled_groups: [allGroupId],
  };
}

export const DEFAULT_ONBOARDING: AccountOnboarding = {
  signup_form_pending: false,
  onboarding_flow_pending: true,
};

/**
 * A PUT replaces the writable settings; the two read-only ones keep their stored values whatever
 * the body said, and optional members the body left out keep theirs too.
 */
export function applySettingsUpdate(
  current: AccountSettings,
  update: AccountSettingsUpdate,
): AccountSettings {
  return {
    ...current,
    ...update,
    embedded_idp_enabled: current.embedded_idp_enabled,
    local_auth_disabled: current.local_auth_disabled,
  };
}

/** The account's domain is its founder's email domain, as NetBird derives it. */
export const domainOf = (email: string): string => email.slice(email.lastIndexOf("@") + 1).toLowerCase();

/** The implicit group every user belongs to. */
export const ALL_GROUP_NAME = "All";
