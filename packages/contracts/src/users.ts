import { z } from "zod";
import { Email, Id, IdList, ResourceName, Role, Timestamp } from "./common";

/** NetBird's user resource, trimmed to what an LLM gateway's users need. Group membership is `auto_groups`. */
export const User = z.object({
  id: Id,
  email: z.string(),
  name: z.string(),
  role: Role,
  status: z.enum(["active", "blocked"]),
  auto_groups: z.array(Id),
  is_current: z.boolean(),
  is_service_user: z.boolean(),
  is_blocked: z.boolean(),
  last_login: Timestamp.optional(),
  issued: z.literal("api"),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type User = z.infer<typeof User>;

export const CreateUserBody = z.object({
  email: Email.transform((email) => email.toLowerCase()),
  name: ResourceName.optional(),
  role: Role.default("user"),
  auto_groups: IdList.default([]),
  is_service_user: z.boolean().default(false),
});
export type CreateUserBody = z.infer<typeof CreateUserBody>;

export const UpdateUserBody = z.object({
  role: Role,
  auto_groups: IdList,
  is_blocked: z.boolean().default(false),
  name: ResourceName.optional(),
});
export type UpdateUserBody = z.infer<typeof UpdateUserBody>;
