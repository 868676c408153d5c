import type { NatsConnection } from "@agentnet/bus";
import {
  ControlPlane,
  CreateTokenBody,
  CreateUserBody,
  type Endpoint,
  GroupBody,
  UpdateAccountBody,
  UpdateUserBody,
} from "@agentnet/contracts";
import { Router } from "express";
import { mount, param, type RouteSpec } from "../http/route";

/** Accounts, users, groups and tokens, following NetBird's REST conventions. */
export function identityRoutes(nc: NatsConnection, timeoutMs: number): Router {
  const router = Router();
  const add = <E extends Endpoint>(spec: RouteSpec<E>) => mount(router, nc, timeoutMs, spec);

  add({
    method: "get",
    path: "/accounts",
    summary: "List the caller's account (always one)",
    access: "member",
    endpoint: ControlPlane.accountsList,
    toRequest: (_req, caller) => ({ caller }),
  });
  add({
    method: "put",
    path: "/accounts/:accountId",
    summary: "Update the account's settings",
    access: "writer",
    endpoint: ControlPlane.accountsUpdate,
    toRequest: (req, caller) => ({
      caller,
      account_id: param(req, "accountId"),
      body: UpdateAccountBody.parse(req.body ?? {}),
    }),
  });
  add({
    method: "delete",
    path: "/accounts/:accountId",
    summary: "Delete the account and all its resources (owners only)",
    access: "owner",
    endpoint: ControlPlane.accountsDelete,
    toRequest: (req, caller) => ({ caller, account_id: param(req, "accountId") }),
  });

  add({
    method: "get",
    path: "/users",
    summary: "List users (a regular user sees only themself)",
    access: "member",
    endpoint: ControlPlane.usersList,
    toRequest: (_req, caller) => ({ caller }),
  });
  add({
    method: "post",
    path: "/users",
    summary: "Invite a user",
    access: "writer",
    endpoint: ControlPlane.usersCreate,
    toRequest: (req, caller) => ({ caller, body: CreateUserBody.parse(req.body ?? {}) }),
  });
  add({
    method: "get",
    path: "/users/:userId",
    summary: "Get a user",
    access: "member",
    endpoint: ControlPlane.usersGet,
    toRequest: (req, caller) => ({ caller, user_id: param(req, "userId") }),
  });
  add({
    method: "put",
    path: "/users/:userId",
    summary: "Change a user's role, groups or blocked state",
    access: "writer",
    endpoint: ControlPlane.usersUpdate,
    toRequest: (req, caller) => ({
      caller,
      user_id: param(req, "userId"),
      body: UpdateUserBody.parse(req.body ?? {}),
    }),
  });
  add({
    method: "delete",
    path: "/users/:userId",
    summary: "Delete a user and revoke their tokens",
    access: "writer",
    endpoint: ControlPlane.usersDelete,
    toRequest: (req, caller) => ({ caller, user_id: param(req, "userId") }),
  });

  add({
    method: "get",
    path: "/users/:userId/tokens",
    summary: "List a user's API tokens",
    access: "member",
    endpoint: ControlPlane.tokensList,
    toRequest: (req, caller) => ({ caller, user_id: param(req, "userId") }),
  });
  add({
    method: "post",
    path: "/users/:userId/tokens",
    summary: "Create an API token (the plain token is returned once)",
    access: "member",
    endpoint: ControlPlane.tokensCreate,
    toRequest: (req, caller) => ({
      caller,
      user_id: param(req, "userId"),
      body: CreateTokenBody.parse(req.body ?? {}),
    }),
  });
  add({
    method: "delete",
    path: "/users/:userId/tokens/:tokenId",
    summary: "Revoke an API token",
    access: "member",
    endpoint: ControlPlane.tokensDelete,
    toRequest: (req, caller) => ({ caller, user_id: param(req, "userId"), token_id: param(req, "tokenId") }),
  });

  add({
    method: "get",
    path: "/groups",
    summary: "List groups",
    access: "reader",
    endpoint: ControlPlane.groupsList,
    toRequest: (_req, caller) => ({ caller }),
  });
  add({
    method: "post",
    path: "/groups",
    summary: "Create a group",
    access: "writer",
    endpoint: ControlPlane.groupsCreate,
    toRequest: (req, caller) => ({ caller, body: GroupBody.parse(req.body ?? {}) }),
  });
  add({
    method: "get",
    path: "/groups/:groupId",
    summary: "Get a group",
    access: "reader",
    endpoint: ControlPlane.groupsGet,
    toRequest: (req, caller) => ({ caller, group_id: param(req, "groupId") }),
  });
  add({
    method: "put",
    path: "/groups/:groupId",
    summary: "Rename a group",
    access: "writer",
    endpoint: ControlPlane.groupsUpdate,
    toRequest: (req, caller) => ({
      caller,
      group_id: param(req, "groupId"),
      body: GroupBody.parse(req.body ?? {}),
    }),
  });
  add({
    method: "delete",
    path: "/groups/:groupId",
    summary: "Delete a group (refused while a policy or budget rule uses it)",
    access: "writer",
    endpoint: ControlPlane.groupsDelete,
    toRequest: (req, caller) => ({ caller, group_id: param(req, "groupId") }),
  });
  return router;
}
