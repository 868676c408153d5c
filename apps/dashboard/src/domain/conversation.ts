/**
 * A captured prompt as a conversation. The proxy captures a request's prompt fields as it got
 * them, joined by line breaks in this order: messages, input, system, instructions, prompt; a
 * field that is not text is its JSON, on one line. So OpenAI chat is one line (the messages),
 * Anthropic messages is the messages' line then the system prompt, and Responses is its input
 * then its instructions. A capture cut at the size cap, or any shape not known here, stays raw.
 */

export type ConversationPart =
  | { kind: "text"; text: string }
  | { kind: "tool_call"; name: string; input: string }
  | { kind: "tool_result"; text: string }
  /** Content not shown as text (an image, a file, hidden reasoning): named only. */
  | { kind: "omitted"; what: string }
  /** A content block of a type not known here, as its JSON. */
  | { kind: "json"; text: string };

export interface ConversationTurn {
  role: string;
  parts: ConversationPart[];
}

export type ParsedPrompt = { kind: "turns"; turns: ConversationTurn[] } | { kind: "raw"; text: string };

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const compactJson = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value));

const OMITTED: Record<string, string> = {
  image: "image",
  image_url: "image",
  input_image: "image",
  file: "file",
  input_file: "file",
  document: "document",
  input_audio: "audio",
  thinking: "reasoning",
  redacted_thinking: "reasoning",
};

/** The text of a tool result's content (a string, or text blocks). */
const resultText = (content: unknown): string =>
  Array.isArray(content)
    ? content
        .map((block) => (isObject(block) ? (str(block.text) ?? compactJson(block)) : String(block)))
        .join("\n")
    : compactJson(content ?? "");

/** One content block of OpenAI chat, Anthropic messages or Responses. */
function blockPart(block: unknown): ConversationPart {
  if (typeof block === "string") return { kind: "text", text: block };
  if (!isObject(block)) return { kind: "json", text: compactJson(block) };
  const type = str(block.type) ?? "";
  const text = str(block.text);
  if (text !== undefined && (type === "text" || type === "input_text" || type === "output_text")) {
    return { kind: "text", text };
  }
  if (type === "tool_use")
    return { kind: "tool_call", name: str(block.name) ?? "tool", input: compactJson(block.input ?? {}) };
  if (type === "tool_result") return { kind: "tool_result", text: resultText(block.content) };
  const omitted = OMITTED[type];
  return omitted ? { kind: "omitted", what: omitted } : { kind: "json", text: compactJson(block) };
}

const contentParts = (content: unknown): ConversationPart[] => {
  if (content === undefined || content === null || content === "") return [];
  return Array.isArray(content) ? content.map(blockPart) : [blockPart(content)];
};

/** OpenAI chat's `tool_calls` of an assistant message. */
const toolCallParts = (calls: unknown): ConversationPart[] =>
  Array.isArray(calls)
    ? calls.map((call): ConversationPart => {
        const fn = isObject(call) ? call.function : undefined;
        return isObject(fn)
          ? { kind: "tool_call", name: str(fn.name) ?? "tool", input: compactJson(fn.arguments ?? "") }
          : { kind: "json", text: compactJson(call) };
      })
    : [];

/** One message or Responses input item; undefined when it is neither. */
function turnOf(message: unknown): ConversationTurn | undefined {
  if (!isObject(message)) return undefined;
  const role = str(message.role);
  if (role === "tool") return { role, parts: [{ kind: "tool_result", text: resultText(message.content) }] };
  if (role) return { role, parts: [...contentParts(message.content), ...toolCallParts(message.tool_calls)] };
  if (message.type === "function_call") {
    const input = compactJson(message.arguments ?? "");
    return { role: "assistant", parts: [{ kind: "tool_call", name: str(message.name) ?? "tool", input }] };
  }
  if (message.type === "function_call_output") {
    return { role: "tool", parts: [{ kind: "tool_result", text: resultText(message.output) }] };
  }
  return undefined;
}

/** A system prompt (Anthropic's text or blocks, Responses' instructions) as the first turn. */
function systemTurn(system: unknown): ConversationTurn[] {
  const parts = contentParts(system);
  return parts.length > 0 ? [{ role: "system", parts }] : [];
}

/** Turns from a list of messages and the system prompt sent with them; undefined for other shapes. */
function turnsOf(messages: unknown, system: unknown): ConversationTurn[] | undefined {
  if (!Array.isArray(messages) || messages.length === 0) return undefined;
  const turns = messages.map(turnOf);
  if (!turns.every((turn): turn is ConversationTurn => turn !== undefined)) return undefined;
  return [...systemTurn(system), ...turns];
}

/** The captured fields after the messages' line: the system prompt, as text or JSON blocks. */
const systemAfter = (text: string): unknown => {
  const blocks = parseJson(text);
  return Array.isArray(blocks) ? blocks : text;
};

export function parsePrompt(prompt: string): ParsedPrompt {
  const whole = parseJson(prompt);
  const newline = prompt.indexOf("\n");
  let turns: ConversationTurn[] | undefined;
  // A whole request body (`{messages, system}`) reads as a conversation too.
  if (isObject(whole)) turns = turnsOf(whole.messages, whole.system);
  else if (whole !== undefined) turns = turnsOf(whole, undefined);
  else if (newline > 0)
    turns = turnsOf(parseJson(prompt.slice(0, newline)), systemAfter(prompt.slice(newline + 1)));
  return turns ? { kind: "turns", turns } : { kind: "raw", text: prompt };
}

function partText(part: ConversationPart): string {
  switch (part.kind) {
    case "text":
    case "tool_result":
    case "json":
      return part.text;
    case "tool_call":
      return `${part.name}(${part.input})`;
    case "omitted":
      return `[${part.what}]`;
  }
}

/** What a turn's copy button copies: its text, tool calls as `name(input)`. */
export const turnText = (turn: ConversationTurn): string => turn.parts.map(partText).join("\n\n");
