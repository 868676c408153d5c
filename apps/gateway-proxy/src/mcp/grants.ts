import { isJsonObject, type JsonObject } from "../domain/json";

/** The tool a `tools/call` names, or undefined when its params name none. */
export function calledTool(params: Readonly<Record<string, unknown>> | undefined): string | undefined {
  const name = params?.name;
  return typeof name === "string" && name !== "" ? name : undefined;
}

/**
 * A `tools/list` result with only the granted tools: what the caller may not call is not shown,
 * so an agent never plans with a tool the gateway would refuse. Anything else in the result
 * (`nextCursor`, `_meta`) stays as the server sent it.
 */
export function grantedToolList(result: JsonObject, granted: (tool: string) => boolean): JsonObject {
  const tools = result.tools;
  if (!Array.isArray(tools)) return result;
  return {
    ...result,
    tools: tools.filter((tool) => isJsonObject(tool) && typeof tool.name === "string" && granted(tool.name)),
  };
}
