import type { IdentityJsonMetadata } from "@agentnet/catalog";
import type { Caller, GatewayProvider } from "@agentnet/contracts";
import { isJsonObject, type JsonObject } from "./json";

/** How a person shows up upstream in headers: email, else name, else the user id. */
export const displayIdentity = (caller: Caller): string => caller.email || caller.name || caller.user_id;

/**
 * Identity headers the provider asked for: the caller's display identity, and their group ids
 * comma-separated (ids, not names: the snapshot carries no group names, and ids never change).
 * None when the provider has identity metadata disabled (`metadata_disabled`), which covers the
 * user and the authorising groups however they would travel, headers included.
 */
export function identityHeaders(provider: GatewayProvider, caller: Caller): Record<string, string> {
  const headers: Record<string, string> = {};
  if (provider.metadata_disabled) return headers;
  if (provider.identity_header_user_id) {
    headers[provider.identity_header_user_id.toLowerCase()] = displayIdentity(caller);
  }
  if (provider.identity_header_groups) {
    headers[provider.identity_header_groups.toLowerCase()] = caller.group_ids.join(",");
  }
  return headers;
}

/**
 * Sets `a.b.c` in an object, creating (or replacing non-object) intermediate objects. Objects on
 * the path are copied, not changed: the caller's members stay as sent (`editedJsonBytes`).
 */
function setPath(target: JsonObject, path: string, value: unknown): void {
  // Most vendors' member is top-level (OpenAI's `user`): no path to split.
  if (!path.includes(".")) {
    target[path] = value;
    return;
  }
  const keys = path.split(".");
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    const copy: JsonObject = isJsonObject(next) ? { ...next } : {};
    node[key] = copy;
    node = copy;
  }
  const last = keys[keys.length - 1];
  if (last) node[last] = value;
}

/**
 * The vendor's own end-user metadata (OpenAI's body `user`, Anthropic's `metadata.user_id`,
 * Cloudflare's `cf-aig-metadata` header). It carries the opaque user id, not the email: vendors
 * ask for an identifier without personal data there. Returns a header to add, if the catalog
 * names one; otherwise edits the body in place. The caller's own value is replaced.
 */
export function injectMetadata(
  body: JsonObject,
  metadata: IdentityJsonMetadata | undefined,
  caller: Caller,
): Record<string, string> {
  if (!metadata || metadata.user_key === "") return {};
  const groups = caller.group_ids.join(",");
  if (metadata.header !== "") {
    const value: JsonObject = { [metadata.user_key]: caller.user_id };
    if (metadata.groups_key !== "") value[metadata.groups_key] = groups;
    return { [metadata.header.toLowerCase()]: JSON.stringify(value) };
  }
  setPath(body, metadata.user_key, caller.user_id);
  if (metadata.groups_key !== "") setPath(body, metadata.groups_key, groups);
  return {};
}
