import { describe, expect, it } from "vitest";
import { groupByTag, readOperations, resolvePointer, searchOperations, viewSchema } from "./openapi";

const DATE_TIME = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(?:\\.\\d+)?(?:Z|[+-]\\d{2}:\\d{2})$".repeat(3);

/** The shape the api-gateway generates: no tags or summaries, the error body as a component. */
const DOCUMENT = {
  openapi: "3.1.0",
  info: { title: "agentnet API", version: "1" },
  components: {
    schemas: {
      Error: {
        type: "object",
        required: ["message", "code"],
        properties: {
          message: { type: "string" },
          code: { type: "integer", description: "the HTTP status" },
        },
      },
      Node: {
        type: "object",
        properties: {
          name: { type: "string" },
          children: { type: "array", items: { $ref: "#/components/schemas/Node" } },
        },
      },
    },
  },
  paths: {
    "/api/agent-network/access-logs": {
      get: {
        operationId: "telemetry.access_logs",
        "x-access": "member",
        parameters: [
          {
            name: "start_date",
            in: "query",
            required: false,
            schema: { type: "string", format: "date-time", pattern: DATE_TIME },
          },
          {
            name: "page_size",
            in: "query",
            required: false,
            schema: { default: 50, type: "integer", minimum: 1, maximum: 100 },
          },
          {
            name: "model",
            in: "query",
            schema: { anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] },
          },
          { name: "sort_by", in: "query", schema: { type: "string", enum: ["timestamp", "model"] } },
        ],
        responses: {
          "200": {
            description: "OK",
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  properties: {
                    data: {
                      type: "array",
                      items: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
                    },
                    page: { type: "integer", minimum: 1, maximum: 9007199254740991 },
                  },
                },
              },
            },
          },
          default: {
            description: "An error",
            content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
          },
        },
      },
    },
    "/api/agent-network/budget-rules/{ruleId}": {
      put: {
        operationId: "budget_rules.update",
        parameters: [{ name: "ruleId", in: "path", required: true, schema: { type: "string" } }],
        requestBody: {
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["name"],
                properties: {
                  name: { type: "string", minLength: 1, maxLength: 200 },
                  labels: { type: "object", additionalProperties: { type: "string" } },
                },
              },
            },
          },
        },
        responses: { "200": { description: "OK" } },
      },
    },
    "/api/agent-network/budget-rules": {
      get: {
        operationId: "budget_rules.list",
        tags: ["Budget rules"],
        summary: "List budget rules",
        responses: {},
      },
    },
  },
};

describe("resolvePointer", () => {
  it("follows a JSON pointer, with ~1 for a slash, and answers undefined for a dangling one", () => {
    expect(resolvePointer(DOCUMENT, "#/components/schemas/Error")).toBe(DOCUMENT.components.schemas.Error);
    expect(resolvePointer(DOCUMENT, "#/paths/~1api~1agent-network~1budget-rules/get/operationId")).toBe(
      "budget_rules.list",
    );
    expect(resolvePointer(DOCUMENT, "#/components/schemas/Missing")).toBeUndefined();
    expect(resolvePointer(DOCUMENT, "https://example.com/schema")).toBeUndefined();
  });
});

describe("viewSchema", () => {
  it("resolves $ref and names the component", () => {
    const view = viewSchema(DOCUMENT, { $ref: "#/components/schemas/Error" });
    expect(view.ref).toBe("Error");
    expect(view.properties.map((p) => [p.name, p.required, p.schema.type])).toEqual([
      ["message", true, "string"],
      ["code", true, "integer"],
    ]);
    expect(view.properties[1]?.schema.description).toBe("the HTTP status");
  });

  it("names a recursive reference instead of expanding it forever", () => {
    const view = viewSchema(DOCUMENT, { $ref: "#/components/schemas/Node" });
    const children = view.properties.find((p) => p.name === "children")?.schema;
    expect(children?.type).toBe("array of Node");
    expect(children?.notes).toEqual(["recursive: as above"]);
  });

  it("says constraints in words and leaves out zod's safe-integer bounds and unreadable patterns", () => {
    expect(viewSchema(DOCUMENT, { type: "integer", minimum: 1, maximum: 100, default: 50 }).notes).toEqual([
      "1 to 100",
      "default 50",
    ]);
    expect(viewSchema(DOCUMENT, { type: "integer", minimum: 0, maximum: 9007199254740991 }).notes).toEqual([
      "at least 0",
    ]);
    expect(viewSchema(DOCUMENT, { type: "string", format: "date-time", pattern: DATE_TIME }).notes).toEqual([
      "date-time",
    ]);
  });

  it("writes plain alternatives as one type, enums as values, maps by their value type", () => {
    expect(
      viewSchema(DOCUMENT, { anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] })
        .type,
    ).toBe("string | array of string");
    expect(viewSchema(DOCUMENT, { type: "string", enum: ["a", "b"] }).values).toEqual(['"a"', '"b"']);
    expect(viewSchema(DOCUMENT, { const: "api" })).toMatchObject({ type: "string", values: ['"api"'] });
    expect(viewSchema(DOCUMENT, { type: "object", additionalProperties: { type: "string" } }).type).toBe(
      "map of string to string",
    );
  });

  it("keeps object alternatives apart", () => {
    const view = viewSchema(DOCUMENT, {
      oneOf: [{ type: "object", properties: { a: { type: "string" } } }, { type: "string" }],
    });
    expect(view.type).toBe("one of");
    expect(view.variants.map((v) => v.type)).toEqual(["object", "string"]);
  });
});

describe("readOperations", () => {
  const operations = readOperations(DOCUMENT);

  it("lists every operation with its parameters, body and responses", () => {
    expect(operations.map((o) => o.key)).toEqual([
      "get /api/agent-network/access-logs",
      "put /api/agent-network/budget-rules/{ruleId}",
      "get /api/agent-network/budget-rules",
    ]);
    const logs = operations[0];
    expect(logs?.access).toBe("member");
    expect(logs?.parameters.map((p) => `${p.in} ${p.name} ${p.schema.type}`)).toEqual([
      "query start_date string",
      "query page_size integer",
      "query model string | array of string",
      "query sort_by string",
    ]);
    expect(logs?.responses.map((r) => [r.status, r.schema?.ref ?? r.schema?.type])).toEqual([
      ["200", "object"],
      ["default", "Error"],
    ]);
    const update = operations[1];
    expect(update?.requestBody?.properties.map((p) => p.name)).toEqual(["name", "labels"]);
    expect(update?.parameters[0]).toMatchObject({ name: "ruleId", in: "path", required: true });
  });

  it("groups by tag, or by the operation id's area when the document declares none", () => {
    expect(groupByTag(operations).map((g) => [g.tag, g.operations.length])).toEqual([
      ["Telemetry", 1],
      ["Budget rules", 2],
    ]);
    expect(operations[2]?.summary).toBe("List budget rules");
  });

  it("finds operations by every word of a search, parameters included", () => {
    expect(searchOperations(operations, "budget put").map((o) => o.operationId)).toEqual([
      "budget_rules.update",
    ]);
    expect(searchOperations(operations, "PAGE_SIZE").map((o) => o.operationId)).toEqual([
      "telemetry.access_logs",
    ]);
    expect(searchOperations(operations, "  ")).toHaveLength(3);
  });

  it("reads a malformed document as no operations", () => {
    expect(readOperations(null)).toEqual([]);
    expect(readOperations({ paths: { "/x": { get: "nope" } } })).toEqual([]);
  });
});
