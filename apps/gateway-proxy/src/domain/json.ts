/** A parsed JSON request body: the proxy only ever edits objects. */
export type JsonObject = { [key: string]: unknown };

export const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);
