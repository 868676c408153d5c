import { z } from "zod";
import { defineQuery } from "./query";

/**
 * Which of the given request ids usage_events holds (every request of an account is there until the
 * account is deleted). The accounts and the time range only narrow the primary-key scan.
 */
export const storedRequestIds = defineQuery({
  name: "stored_request_ids",
  params: z.object({
    accounts: z.array(z.string()).min(1),
    ids: z.array(z.string()).min(1),
    from: z.date(),
    to: z.date(),
  }),
  row: z.object({ id: z.string() }),
  sql: () => `
    SELECT DISTINCT id FROM usage_events
    WHERE has({accounts:Array(String)}, account_id)
      AND timestamp BETWEEN {from:DateTime64(3)} AND {to:DateTime64(3)}
      AND has({ids:Array(String)}, id)`,
  bind: (params) => params,
});
