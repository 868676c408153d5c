import { type ConversationPart, type ConversationTurn, parsePrompt, turnText } from "../domain/conversation";
import { CopyButton } from "./ui";

const ROLE_NAMES: Record<string, string> = {
  system: "System",
  developer: "Developer",
  user: "User",
  assistant: "Assistant",
  tool: "Tool",
};

const roleName = (role: string) => ROLE_NAMES[role] ?? role;

function Part(props: { part: ConversationPart }) {
  const { part } = props;
  switch (part.kind) {
    case "text":
      return <p className="turn-text">{part.text}</p>;
    case "tool_call":
      return (
        <p className="turn-tool">
          <span className="badge badge-info">Tool call</span> <code>{part.name}</code>{" "}
          <code className="turn-args">{part.input}</code>
        </p>
      );
    case "tool_result":
      return (
        <div className="turn-tool">
          <span className="badge badge-muted">Tool result</span>
          <p className="turn-text">{part.text}</p>
        </div>
      );
    case "omitted":
      return <p className="hint">[{part.what} not shown]</p>;
    case "json":
      return <code className="turn-args">{part.text}</code>;
  }
}

function Turn(props: { turn: ConversationTurn; label: string }) {
  return (
    <li className={`turn turn-${props.turn.role}`}>
      <div className="turn-head">
        <strong>{props.label}</strong>
        <CopyButton text={turnText(props.turn)} what={`${props.label.toLowerCase()} message`} />
      </div>
      {props.turn.parts.map((part, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a message's parts have no identity and never reorder.
        <Part key={i} part={part} />
      ))}
    </li>
  );
}

/**
 * The captured prompt's messages and the completion as one conversation, each message with a
 * copy button; a prompt in a shape not known here is shown raw, as captured.
 */
export function Conversation(props: { prompt: string | undefined; completion: string | undefined }) {
  if (props.prompt === undefined && props.completion === undefined) {
    return (
      <p className="hint">
        Not captured: prompts are kept only with prompt collection on in the gateway settings and a guardrail
        of the authorising policy asking for capture.
      </p>
    );
  }
  const parsed = props.prompt === undefined ? undefined : parsePrompt(props.prompt);
  const turns = parsed?.kind === "turns" ? parsed.turns : [];
  return (
    <>
      {parsed?.kind === "raw" ? (
        <figure className="capture-raw">
          <figcaption>
            <span>Prompt, as captured</span>
            <CopyButton text={parsed.text} what="prompt" />
          </figcaption>
          <pre className="capture">{parsed.text}</pre>
        </figure>
      ) : null}
      <ol className="conversation" aria-label="Conversation">
        {turns.map((turn, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a conversation's messages never reorder.
          <Turn key={i} turn={turn} label={`${roleName(turn.role)} ${i + 1}`} />
        ))}
        {props.completion !== undefined ? (
          <Turn
            turn={{ role: "assistant", parts: [{ kind: "text", text: props.completion }] }}
            label="Completion"
          />
        ) : null}
      </ol>
    </>
  );
}
