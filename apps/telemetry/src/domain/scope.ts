import { type Caller, hasAccountWideGrant, type UsageFilters } from "@agentnet/contracts";

/**
 * Spec: a caller without the account-wide grant is not denied the log, session and usage reads;
 * they are scoped to their own requests, and any user_id or group_id filter they send is
 * overridden (user_id becomes theirs, group_id is dropped: their own requests in any group).
 */
export function scopeToCaller<Q extends UsageFilters>(caller: Caller, query: Q): Q {
  if (hasAccountWideGrant(caller.role)) return query;
  return { ...query, user_id: caller.user_id, group_id: undefined };
}
