import { z } from "zod";
import { Id, ResourceName, Timestamp } from "./common";

/** A group of users. Members are users whose `auto_groups` hold the group id. */
export const Group = z.object({
  id: Id,
  name: z.string(),
  users_count: z.number().int().min(0),
  issued: z.literal("api"),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Group = z.infer<typeof Group>;

export const GroupBody = z.object({ name: ResourceName });
export type GroupBody = z.infer<typeof GroupBody>;
