/**
 * A readable view of the API's OpenAPI 3.1 document: operations grouped by tag, each with its
 * parameters, request body and responses, schemas flattened into what a reader needs (a type in
 * words, its constraints, its properties) with every `$ref` resolved. The document is read as
 * untrusted JSON: whatever is missing or malformed is left out, never thrown on.
 */

type Json = Record<string, unknown>;

export interface SchemaView {
  /** "string", "integer", "array of string", "string | array of string", "object". */
  type: string;
  /** Constraints in words: "date-time", "default 50", "1 to 100", "at most 200 characters". */
  notes: string[];
  description?: string;
  /** Allowed values, for enums and constants. */
  values?: string[];
  /** The component a `$ref` pointed at, e.g. "Error". */
  ref?: string;
  properties: PropertyView[];
  /** The element of an array of objects, or the value of a map. */
  element?: SchemaView;
  /** Alternatives (anyOf / oneOf) that are more than a plain type. */
  variants: SchemaView[];
}

export interface PropertyView {
  name: string;
  required: boolean;
  schema: SchemaView;
}

export interface ParameterView {
  name: string;
  in: string;
  required: boolean;
  description?: string;
  schema: SchemaView;
}

export interface ResponseView {
  status: string;
  description: string;
  schema?: SchemaView;
}

export interface OperationView {
  /** "get /api/users/{userId}": unique in a document. */
  key: string;
  method: string;
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description: string;
  /** Who may call it (the gateway's `x-access`: member, reader, writer, …). */
  access: string;
  parameters: ParameterView[];
  requestBody?: SchemaView;
  responses: ResponseView[];
}

export interface TagGroup {
  tag: string;
  operations: OperationView[];
}

const METHODS = ["get", "post", "put", "patch", "delete", "head", "options"] as const;

const isJson = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const text = (value: unknown): string => (typeof value === "string" ? value : "");
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

const percentDecoded = (step: string): string => {
  try {
    return decodeURIComponent(step);
  } catch {
    return step;
  }
};

/** What a JSON pointer (`#/components/schemas/Error`) points at in the document, if anything. */
export function resolvePointer(document: unknown, ref: string): unknown {
  if (!ref.startsWith("#")) return undefined;
  const steps = ref
    .slice(1)
    .split("/")
    .filter((step) => step !== "")
    .map((step) => percentDecoded(step).replace(/~1/g, "/").replace(/~0/g, "~"));
  let node: unknown = document;
  for (const step of steps) {
    if (!isJson(node) && !Array.isArray(node)) return undefined;
    node = (node as Json)[step];
  }
  return node;
}

// Zod writes these bounds for a plain integer; they say nothing to a reader.
const SAFE_INTEGER_BOUND = Number.MAX_SAFE_INTEGER;
// Patterns longer than this (the RFC 3339 one) are noise next to their format.
const READABLE_PATTERN = 80;

const counted = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

function notesOf(schema: Json): string[] {
  const notes: string[] = [];
  if (typeof schema.format === "string") notes.push(schema.format);
  const min =
    typeof schema.minimum === "number" && schema.minimum > -SAFE_INTEGER_BOUND ? schema.minimum : undefined;
  const max =
    typeof schema.maximum === "number" && schema.maximum < SAFE_INTEGER_BOUND ? schema.maximum : undefined;
  if (min !== undefined && max !== undefined) notes.push(`${min} to ${max}`);
  else if (min !== undefined) notes.push(`at least ${min}`);
  else if (max !== undefined) notes.push(`at most ${max}`);
  if (typeof schema.exclusiveMinimum === "number") notes.push(`more than ${schema.exclusiveMinimum}`);
  if (typeof schema.exclusiveMaximum === "number") notes.push(`less than ${schema.exclusiveMaximum}`);
  if (typeof schema.minLength === "number" && schema.minLength > 0)
    notes.push(`at least ${counted(schema.minLength, "character")}`);
  if (typeof schema.maxLength === "number") notes.push(`at most ${counted(schema.maxLength, "character")}`);
  if (typeof schema.minItems === "number" && schema.minItems > 0)
    notes.push(`at least ${counted(schema.minItems, "item")}`);
  if (typeof schema.maxItems === "number") notes.push(`at most ${counted(schema.maxItems, "item")}`);
  if (typeof schema.pattern === "string" && schema.pattern.length <= READABLE_PATTERN)
    notes.push(`matches ${schema.pattern}`);
  if ("default" in schema) notes.push(`default ${JSON.stringify(schema.default)}`);
  return notes;
}

const isPlain = (view: SchemaView) =>
  view.properties.length === 0 && view.variants.length === 0 && !view.element;

/**
 * A schema as a reader sees it. `seen` holds the `$ref`s on the way down: a reference back to one
 * of them is named, not expanded again (recursive schemas would never end).
 */
export function viewSchema(document: unknown, schema: unknown, seen: readonly string[] = []): SchemaView {
  const view: SchemaView = { type: "any", notes: [], properties: [], variants: [] };
  if (!isJson(schema)) return view;
  const ref = text(schema.$ref);
  if (ref) {
    const name = ref.split("/").pop() ?? ref;
    if (seen.includes(ref)) return { ...view, type: name, ref: name, notes: ["recursive: as above"] };
    const target = resolvePointer(document, ref);
    if (target === undefined) return { ...view, type: name, ref: name, notes: ["not found in the document"] };
    return { ...viewSchema(document, target, [...seen, ref]), ref: name };
  }
  const description = text(schema.description);
  if (description) view.description = description;
  view.notes = notesOf(schema);

  if ("const" in schema)
    return { ...view, type: typeof schema.const, values: [JSON.stringify(schema.const)] };
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.map((value) => JSON.stringify(value));
    return { ...view, type: typeof schema.enum[0] === "number" ? "number" : "string", values };
  }

  const alternatives = [...list(schema.anyOf), ...list(schema.oneOf)].map((s) =>
    viewSchema(document, s, seen),
  );
  if (alternatives.length > 0) {
    if (alternatives.every(isPlain)) return { ...view, type: alternatives.map((a) => a.type).join(" | ") };
    return { ...view, type: "one of", variants: alternatives };
  }

  const parts = list(schema.allOf).map((s) => viewSchema(document, s, seen));
  if (parts.length > 0) {
    return {
      ...view,
      type: parts.find((p) => p.type !== "any")?.type ?? "object",
      properties: parts.flatMap((p) => p.properties),
      notes: [...view.notes, ...parts.flatMap((p) => p.notes)],
    };
  }

  const type = Array.isArray(schema.type) ? schema.type.map(text).join(" | ") : text(schema.type);
  if (type === "array") {
    const element = viewSchema(document, schema.items, seen);
    if (isPlain(element) && !element.values)
      return {
        ...view,
        type: `array of ${element.ref ?? element.type}`,
        notes: [...view.notes, ...element.notes],
      };
    return { ...view, type: `array of ${element.ref ?? element.type}`, element };
  }
  if (type === "object" || isJson(schema.properties)) {
    const required = new Set(list(schema.required).map(text));
    const properties = Object.entries(isJson(schema.properties) ? schema.properties : {}).map(
      ([name, property]) => ({
        name,
        required: required.has(name),
        schema: viewSchema(document, property, seen),
      }),
    );
    const additional = isJson(schema.additionalProperties)
      ? viewSchema(document, schema.additionalProperties, seen)
      : undefined;
    if (additional && properties.length === 0) {
      return {
        ...view,
        type: `map of string to ${additional.ref ?? additional.type}`,
        element: isPlain(additional) ? undefined : additional,
      };
    }
    return { ...view, type: "object", properties };
  }
  return { ...view, type: type || "any" };
}

/** "budget_rules.list" → "Budget rules"; operations without a tag are grouped by their id's first part. */
const tagOf = (operation: Json, operationId: string): string => {
  const declared = text(list(operation.tags)[0]);
  if (declared) return declared;
  const area = operationId.split(".")[0]?.replace(/_/g, " ") ?? "";
  return area ? `${area.charAt(0).toUpperCase()}${area.slice(1)}` : "Other";
};

function viewParameter(document: unknown, raw: unknown): ParameterView | undefined {
  const parameter = isJson(raw) && typeof raw.$ref === "string" ? resolvePointer(document, raw.$ref) : raw;
  if (!isJson(parameter) || !text(parameter.name)) return undefined;
  const view: ParameterView = {
    name: text(parameter.name),
    in: text(parameter.in),
    required: parameter.required === true,
    schema: viewSchema(document, parameter.schema),
  };
  const description = text(parameter.description) || view.schema.description;
  if (description) view.description = description;
  return view;
}

const jsonSchemaOf = (content: unknown): unknown => {
  if (!isJson(content)) return undefined;
  const media = content["application/json"] ?? Object.values(content)[0];
  return isJson(media) ? media.schema : undefined;
};

/** Every operation of the document, in its order. */
export function readOperations(document: unknown): OperationView[] {
  const paths = isJson(document) && isJson(document.paths) ? document.paths : {};
  const operations: OperationView[] = [];
  for (const [path, item] of Object.entries(paths)) {
    if (!isJson(item)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!isJson(operation)) continue;
      const operationId = text(operation.operationId);
      const parameters = [...list(item.parameters), ...list(operation.parameters)]
        .map((p) => viewParameter(document, p))
        .filter((p): p is ParameterView => p !== undefined);
      const body = isJson(operation.requestBody) ? jsonSchemaOf(operation.requestBody.content) : undefined;
      const responses = Object.entries(isJson(operation.responses) ? operation.responses : {}).map(
        ([status, raw]): ResponseView => {
          const response =
            isJson(raw) && typeof raw.$ref === "string" ? resolvePointer(document, raw.$ref) : raw;
          const schema = isJson(response) ? jsonSchemaOf(response.content) : undefined;
          return {
            status,
            description: isJson(response) ? text(response.description) : "",
            ...(schema !== undefined ? { schema: viewSchema(document, schema) } : {}),
          };
        },
      );
      operations.push({
        key: `${method} ${path}`,
        method,
        path,
        operationId,
        tag: tagOf(operation, operationId),
        summary: text(operation.summary),
        description: text(operation.description),
        access: text(operation["x-access"]),
        parameters,
        ...(body !== undefined ? { requestBody: viewSchema(document, body) } : {}),
        responses,
      });
    }
  }
  return operations;
}

/** Operations by tag, tags in the order they first appear. */
export function groupByTag(operations: readonly OperationView[]): TagGroup[] {
  const groups = new Map<string, OperationView[]>();
  for (const operation of operations)
    groups.set(operation.tag, [...(groups.get(operation.tag) ?? []), operation]);
  return [...groups].map(([tag, members]) => ({ tag, operations: members }));
}

/** Operations whose method, path, id, tag, summary or a parameter's name holds every word of the search. */
export function searchOperations(operations: readonly OperationView[], search: string): OperationView[] {
  const words = search.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [...operations];
  return operations.filter((operation) => {
    const haystack = [
      operation.method,
      operation.path,
      operation.operationId,
      operation.tag,
      operation.summary,
      operation.description,
      ...operation.parameters.map((p) => p.name),
    ]
      .join(" ")
      .toLowerCase();
    return words.every((word) => haystack.includes(word));
  });
}

/** The document's title and version, for the page's lede. */
export function documentInfo(document: unknown): { title: string; version: string; openapi: string } {
  const info = isJson(document) && isJson(document.info) ? document.info : {};
  return {
    title: text(info.title),
    version: text(info.version),
    openapi: isJson(document) ? text(document.openapi) : "",
  };
}
