import type { Endpoint } from "@agentnet/contracts";
import { z } from "zod";
import { type RouteSpec, replyOf } from "./route";

type JsonSchema = Record<string, unknown>;

/** JSON Schema (2020-12, what OpenAPI 3.1 uses) of a contract schema, as sent or as answered. */
const schemaOf = (schema: z.ZodType, io: "input" | "output"): JsonSchema => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  return rest;
};

const shapeOf = (schema: z.ZodType): Record<string, z.ZodType> =>
  schema instanceof z.ZodObject ? (schema.shape as Record<string, z.ZodType>) : {};

/** The operation's group: the path's first resource (`/agent-network/budget-rules/:id` → "Budget rules"). */
const tagOf = (path: string) => {
  const resource = path.replace(/^\/agent-network\//, "/").split("/")[1] ?? "";
  const words = resource.replaceAll("-", " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/**
 * A query parameter as a caller writes it. Where the contract normalises what it is given first
 * (`sort_order` takes `asc` or `DESC`), the input side says nothing: the canonical values do.
 */
const parameterSchema = (schema: z.ZodType): JsonSchema => {
  const input = schemaOf(schema, "input");
  return Object.keys(input).length > 0 ? input : schemaOf(schema, "output");
};

/** `users.list` from `agn.ctl.users.list`: the operation's name is its bus endpoint's. */
const operationId = (endpoint: Endpoint) => endpoint.subject.replace(/^agn\.(ctl\.)?/, "");

/**
 * An operation the api-gateway serves itself rather than through a bus endpoint (sign-in and the
 * device flow): its route names its contracts here, beside its handler.
 */
export interface DescribedOperation {
  method: "get" | "post";
  path: string;
  operationId: string;
  summary: string;
  /** What it takes: nothing (it is how a credential is got), a token or the session cookie. */
  credential: "none" | "session" | "token or session";
  query?: z.ZodObject;
  body?: z.ZodType;
  /** The JSON answer; absent for a browser's redirect. */
  reply?: z.ZodType;
  /** The redirect a browser's navigation is answered with. */
  redirect?: 302 | 303;
  /** Refusals in OAuth's shape (`error`, `error_description`) beside the API's. */
  oauthErrors?: boolean;
}

const OAUTH_ERROR: JsonSchema = {
  type: "object",
  required: ["error", "error_description", "message", "code"],
  properties: {
    error: {
      type: "string",
      description: "OAuth's code: authorization_pending, slow_down, invalid_grant, ...",
    },
    error_description: { type: "string" },
    message: { type: "string" },
    code: { type: "integer", description: "the HTTP status" },
  },
};

const describedOperation = (operation: DescribedOperation) => ({
  operationId: operation.operationId,
  tags: ["Auth"],
  summary: operation.summary,
  "x-access": operation.credential,
  security:
    operation.credential === "none"
      ? []
      : operation.credential === "session"
        ? [{ session: [] }]
        : [{ token: [] }, { session: [] }],
  parameters: Object.entries(shapeOf(operation.query ?? z.object({}))).map(([name, schema]) => ({
    name,
    in: "query",
    required: !schema.safeParse(undefined).success,
    schema: parameterSchema(schema),
  })),
  ...(operation.body
    ? {
        requestBody: {
          required: true,
          content: { "application/json": { schema: schemaOf(operation.body, "input") } },
        },
      }
    : {}),
  responses: {
    ...(operation.reply
      ? {
          "200": {
            description: "OK",
            content: { "application/json": { schema: schemaOf(operation.reply, "output") } },
          },
        }
      : {}),
    ...(operation.redirect
      ? { [String(operation.redirect)]: { description: "A redirect for the browser" } }
      : {}),
    default: {
      description: "An error",
      content: {
        "application/json": {
          schema: operation.oauthErrors ? OAUTH_ERROR : { $ref: "#/components/schemas/Error" },
        },
      },
    },
  },
});

/**
 * The API's OpenAPI 3.1 document, built from the routes as mounted: paths and methods from the
 * route table, request bodies, query parameters and replies from the same zod contracts the
 * gateway validates with (the operations it serves itself name theirs beside their handlers).
 * Nothing in it is written by hand, so it cannot drift from the API.
 */
export function openApiDocument(
  routes: readonly RouteSpec<Endpoint>[],
  described: readonly DescribedOperation[],
  version: string,
) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of described) {
    const path = `/api${operation.path}`;
    paths[path] ??= {};
    paths[path][operation.method] = describedOperation(operation);
  }
  for (const route of routes) {
    const request = shapeOf(route.endpoint.request);
    const pathParameters = [...route.path.matchAll(/:(\w+)/g)].map((match) => ({
      name: match[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const queryParameters = Object.entries(shapeOf(request.query ?? z.object({}))).map(([name, schema]) => ({
      name,
      in: "query",
      required: !schema.safeParse(undefined).success,
      schema: parameterSchema(schema),
    }));
    const path = `/api${route.path.replace(/:(\w+)/g, "{$1}")}`;
    paths[path] ??= {};
    paths[path][route.method] = {
      operationId: operationId(route.endpoint),
      tags: [tagOf(route.path)],
      summary: route.summary,
      "x-access": route.access,
      parameters: [...pathParameters, ...queryParameters],
      ...(request.body
        ? {
            requestBody: {
              required: true,
              content: { "application/json": { schema: schemaOf(request.body, "input") } },
            },
          }
        : {}),
      responses: {
        [String(route.status ?? 200)]: {
          description: "OK",
          content: { "application/json": { schema: schemaOf(replyOf(route.endpoint), "output") } },
        },
        "401": {
          description: "No valid token (missing, unknown, expired or revoked)",
          content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
        },
        default: {
          description: "An error: 400 invalid input, 403, 404, 409, 412, 422, 503, 504",
          content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
        },
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "agentnet API",
      version,
      description: "Accounts, users, groups, tokens and the agent network (docs/API.md).",
    },
    security: [{ token: [] }],
    components: {
      securitySchemes: {
        token: { type: "apiKey", in: "header", name: "Authorization", description: "`Token <api token>`" },
        session: {
          type: "apiKey",
          in: "cookie",
          name: "agn_session",
          description: "A sign-in's session cookie; changes also send its CSRF token in `x-csrf-token`",
        },
      },
      schemas: {
        Error: {
          type: "object",
          required: ["message", "code"],
          properties: {
            message: { type: "string" },
            code: { type: "integer", description: "the HTTP status" },
            reason: { type: "string", description: "machine code, e.g. settings.endpoint_taken" },
            details: {
              type: "array",
              items: {
                type: "object",
                properties: { path: { type: "string" }, message: { type: "string" } },
              },
            },
            error_id: { type: "string" },
          },
        },
      },
    },
    paths,
  };
}
