import type { NatsConnection } from "@agentnet/bus";
import {
  BudgetRuleBody,
  ControlPlane,
  CreateMcpServerBody,
  CreateProviderBody,
  CreateSettingsBody,
  DiscoverModelsBody,
  type Endpoint,
  GuardrailBody,
  McpUserCredentialBody,
  PolicyBody,
  UpdateMcpServerBody,
  UpdateProviderBody,
  UpdateSettingsBody,
} from "@agentnet/contracts";
import { type Request, Router } from "express";
import type { z } from "zod";
import { mount, param, type RouteSpec } from "../http/route";

const body = <T extends z.ZodType>(schema: T, req: Request): z.output<T> => schema.parse(req.body ?? {});

/**
 * Spec endpoints 5–31: settings, budget rules, catalog, providers, policies, guardrails, agent-config;
 * and MCP servers (not in the spec; docs/API.md "MCP servers").
 */
export function agentNetworkRoutes(nc: NatsConnection, timeoutMs: number): Router {
  const router = Router();
  const add = <E extends Endpoint>(spec: RouteSpec<E>) => mount(router, nc, timeoutMs, spec);
  const base = "/agent-network";

  add({
    method: "get",
    path: `${base}/agent-config`,
    summary: "How to point an SDK or coding agent at the gateway",
    access: "member",
    endpoint: ControlPlane.agentConfig,
    toRequest: (_r, caller) => ({ caller }),
  });

  add({
    method: "get",
    path: `${base}/settings`,
    summary: "Get the gateway settings (defaults when none exist)",
    access: "reader",
    endpoint: ControlPlane.settingsGet,
    toRequest: (_r, caller) => ({ caller }),
  });
  add({
    method: "post",
    path: `${base}/settings`,
    summary: "Create the gateway settings (allocates the endpoint)",
    access: "writer",
    endpoint: ControlPlane.settingsCreate,
    toRequest: (req, caller) => ({ caller, body: body(CreateSettingsBody, req) }),
  });
  add({
    method: "put",
    path: `${base}/settings`,
    summary: "Replace the gateway settings' mutable fields",
    access: "writer",
    endpoint: ControlPlane.settingsUpdate,
    toRequest: (req, caller) => ({ caller, body: body(UpdateSettingsBody, req) }),
  });
  add({
    method: "delete",
    path: `${base}/settings`,
    summary: "Delete the gateway settings (refused while a provider exists)",
    access: "writer",
    endpoint: ControlPlane.settingsDelete,
    toRequest: (_r, caller) => ({ caller }),
  });

  // The five routes of a collection have the same shape; the control-plane validates each payload
  // against its contract, and the tests exercise every one.
  const crud = (
    collection: string,
    noun: { one: string; many: string },
    idParam: string,
    idField: string,
    endpoints: Record<"list" | "get" | "create" | "update" | "delete", Endpoint>,
    schemas: { create: z.ZodType; update: z.ZodType },
  ) => {
    const id = (req: Request) => ({ [idField]: param(req, idParam) });
    const path = `${base}/${collection}`;
    const item = `${path}/:${idParam}`;
    add({
      method: "get",
      path,
      summary: `List ${noun.many}`,
      access: "reader",
      endpoint: endpoints.list,
      toRequest: (_r, caller) => ({ caller }),
    });
    add({
      method: "post",
      path,
      summary: `Create a ${noun.one}`,
      access: "writer",
      endpoint: endpoints.create,
      toRequest: (req, caller) => ({ caller, body: body(schemas.create, req) }),
    });
    add({
      method: "get",
      path: item,
      summary: `Get a ${noun.one}`,
      access: "reader",
      endpoint: endpoints.get,
      toRequest: (req, caller) => ({ caller, ...id(req) }),
    });
    add({
      method: "put",
      path: item,
      summary: `Replace a ${noun.one}`,
      access: "writer",
      endpoint: endpoints.update,
      toRequest: (req, caller) => ({ caller, ...id(req), body: body(schemas.update, req) }),
    });
    add({
      method: "delete",
      path: item,
      summary: `Delete a ${noun.one}`,
      access: "writer",
      endpoint: endpoints.delete,
      toRequest: (req, caller) => ({ caller, ...id(req) }),
    });
  };

  crud(
    "budget-rules",
    { one: "budget rule", many: "budget rules" },
    "ruleId",
    "rule_id",
    {
      list: ControlPlane.budgetRulesList,
      get: ControlPlane.budgetRulesGet,
      create: ControlPlane.budgetRulesCreate,
      update: ControlPlane.budgetRulesUpdate,
      delete: ControlPlane.budgetRulesDelete,
    },
    { create: BudgetRuleBody, update: BudgetRuleBody },
  );
  crud(
    "providers",
    { one: "provider", many: "providers" },
    "providerId",
    "provider_id",
    {
      list: ControlPlane.providersList,
      get: ControlPlane.providersGet,
      create: ControlPlane.providersCreate,
      update: ControlPlane.providersUpdate,
      delete: ControlPlane.providersDelete,
    },
    { create: CreateProviderBody, update: UpdateProviderBody },
  );
  crud(
    "policies",
    { one: "policy", many: "policies" },
    "policyId",
    "policy_id",
    {
      list: ControlPlane.policiesList,
      get: ControlPlane.policiesGet,
      create: ControlPlane.policiesCreate,
      update: ControlPlane.policiesUpdate,
      delete: ControlPlane.policiesDelete,
    },
    { create: PolicyBody, update: PolicyBody },
  );
  crud(
    "guardrails",
    { one: "guardrail", many: "guardrails" },
    "guardrailId",
    "guardrail_id",
    {
      list: ControlPlane.guardrailsList,
      get: ControlPlane.guardrailsGet,
      create: ControlPlane.guardrailsCreate,
      update: ControlPlane.guardrailsUpdate,
      delete: ControlPlane.guardrailsDelete,
    },
    { create: GuardrailBody, update: GuardrailBody },
  );
  crud(
    "mcp-servers",
    { one: "MCP server", many: "MCP servers" },
    "serverId",
    "server_id",
    {
      list: ControlPlane.mcpServersList,
      get: ControlPlane.mcpServersGet,
      create: ControlPlane.mcpServersCreate,
      update: ControlPlane.mcpServersUpdate,
      delete: ControlPlane.mcpServersDelete,
    },
    { create: CreateMcpServerBody, update: UpdateMcpServerBody },
  );
  // Any member, for themselves: the caller's own value of a per-user server's credential header.
  const myCredential = `${base}/mcp-servers/:serverId/my-credential`;
  const serverOf = (req: Request) => ({ server_id: param(req, "serverId") });
  add({
    method: "get",
    path: myCredential,
    summary: "Whether your own credential for a per-user MCP server is set",
    access: "member",
    endpoint: ControlPlane.mcpMyCredentialGet,
    toRequest: (req, caller) => ({ caller, ...serverOf(req) }),
  });
  add({
    method: "put",
    path: myCredential,
    summary: "Set your own credential for a per-user MCP server",
    access: "member",
    endpoint: ControlPlane.mcpMyCredentialPut,
    toRequest: (req, caller) => ({ caller, ...serverOf(req), body: body(McpUserCredentialBody, req) }),
  });
  add({
    method: "delete",
    path: myCredential,
    summary: "Remove your own credential for a per-user MCP server",
    access: "member",
    endpoint: ControlPlane.mcpMyCredentialDelete,
    toRequest: (req, caller) => ({ caller, ...serverOf(req) }),
  });

  add({
    method: "get",
    path: `${base}/catalog/providers`,
    summary: "List the catalog of provider types",
    access: "reader",
    endpoint: ControlPlane.catalogList,
    toRequest: (_r, caller) => ({ caller }),
  });
  add({
    method: "post",
    path: `${base}/catalog/providers/models`,
    summary: "Discover the models a provider's credentials can use",
    access: "writer",
    endpoint: ControlPlane.catalogDiscover,
    toRequest: (req, caller) => ({ caller, body: body(DiscoverModelsBody, req) }),
  });
  return router;
}
