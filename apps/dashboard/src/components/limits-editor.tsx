import type { Limits } from "@agentnet/contracts";
import { useState } from "react";
import { formatUsd, WINDOW_PRESETS, windowInWords } from "../domain/format";
import { MIN_WINDOW_SECONDS, parseNumberField } from "../domain/limits";
import { Check, Field } from "./ui";

const shown = (n: number) => (Number.isNaN(n) ? "" : String(n));

/** A limits object's tool-call limit, or one switched off when it has none. */
const toolCallLimitOf = (limits: Limits): NonNullable<Limits["tool_call_limit"]> =>
  limits.tool_call_limit ?? { enabled: false, group_cap: 0, user_cap: 0, window_seconds: 3600 };

/**
 * Token, USD and MCP tool-call caps per window. `error(path)` gives the message for a path such as
 * "limits.token_limit.window_seconds", from the pre-submit check or the API; `problem` is one about
 * the caps as a whole (a budget rule that caps nothing). Controls are named by their path.
 */
export function LimitsEditor(props: {
  value: Limits;
  onChange: (limits: Limits) => void;
  error: (path: string) => string | undefined;
  problem?: string | undefined;
  disabled?: boolean;
}) {
  const { token_limit: t, budget_limit: b } = props.value;
  const setT = (patch: Partial<Limits["token_limit"]>) =>
    props.onChange({ ...props.value, token_limit: { ...t, ...patch } });
  const setB = (patch: Partial<Limits["budget_limit"]>) =>
    props.onChange({ ...props.value, budget_limit: { ...b, ...patch } });
  const c = toolCallLimitOf(props.value);
  const setC = (patch: Partial<typeof c>) =>
    props.onChange({ ...props.value, tool_call_limit: { ...c, ...patch } });
  const num = (
    label: string,
    path: string,
    value: number,
    onChange: (n: number) => void,
    hint: string,
    step = "1",
  ) => (
    <Field label={label} hint={hint} name={`limits.${path}`} error={props.error(`limits.${path}`)}>
      {(c) => (
        <input
          {...c}
          type="number"
          min={0}
          step={step}
          value={shown(value)}
          disabled={props.disabled}
          onChange={(e) => onChange(parseNumberField(e.target.value))}
        />
      )}
    </Field>
  );
  return (
    <div className="limits grid-2">
      {props.problem ? <p className="field-error limits-problem">{props.problem}</p> : null}
      <fieldset>
        <legend>Token limit</legend>
        <Check
          label="Enforce a token cap"
          name="limits.token_limit.enabled"
          checked={t.enabled}
          disabled={props.disabled}
          onChange={(enabled) => setT({ enabled })}
        />
        {num(
          "Tokens per user",
          "token_limit.user_cap",
          t.user_cap,
          (user_cap) => setT({ user_cap }),
          "0 means uncapped",
        )}
        {num(
          "Tokens per group",
          "token_limit.group_cap",
          t.group_cap,
          (group_cap) => setT({ group_cap }),
          "each source group gets its own bucket; 0 means uncapped",
        )}
        <WindowField
          name="limits.token_limit.window_seconds"
          seconds={t.window_seconds}
          onChange={(window_seconds) => setT({ window_seconds })}
          error={props.error("limits.token_limit.window_seconds")}
          disabled={props.disabled}
        />
      </fieldset>
      <fieldset>
        <legend>Spending limit (USD)</legend>
        <Check
          label="Enforce a spending cap"
          name="limits.budget_limit.enabled"
          checked={b.enabled}
          disabled={props.disabled}
          onChange={(enabled) => setB({ enabled })}
        />
        {num(
          "USD per user",
          "budget_limit.user_cap_usd",
          b.user_cap_usd,
          (user_cap_usd) => setB({ user_cap_usd }),
          "0 means uncapped",
          "0.01",
        )}
        {num(
          "USD per group",
          "budget_limit.group_cap_usd",
          b.group_cap_usd,
          (group_cap_usd) => setB({ group_cap_usd }),
          "0 means uncapped",
          "0.01",
        )}
        <WindowField
          name="limits.budget_limit.window_seconds"
          seconds={b.window_seconds}
          onChange={(window_seconds) => setB({ window_seconds })}
          error={props.error("limits.budget_limit.window_seconds")}
          disabled={props.disabled}
        />
      </fieldset>
      <fieldset>
        <legend>MCP tool-call limit</legend>
        <Check
          label="Enforce a tool-call cap"
          name="limits.tool_call_limit.enabled"
          checked={c.enabled}
          disabled={props.disabled}
          onChange={(enabled) => setC({ enabled })}
        />
        {num(
          "Tool calls per user",
          "tool_call_limit.user_cap",
          c.user_cap,
          (user_cap) => setC({ user_cap }),
          "calls the MCP servers answered; 0 means uncapped",
        )}
        {num(
          "Tool calls per group",
          "tool_call_limit.group_cap",
          c.group_cap,
          (group_cap) => setC({ group_cap }),
          "each source group gets its own bucket; 0 means uncapped",
        )}
        <WindowField
          name="limits.tool_call_limit.window_seconds"
          seconds={c.window_seconds}
          onChange={(window_seconds) => setC({ window_seconds })}
          error={props.error("limits.tool_call_limit.window_seconds")}
          disabled={props.disabled}
        />
      </fieldset>
    </div>
  );
}

const CUSTOM = "custom";

/** A cap's window: a named length (minute to 30 days), or any number of seconds. */
function WindowField(props: {
  name: string;
  seconds: number;
  onChange: (seconds: number) => void;
  error: string | undefined;
  disabled?: boolean;
}) {
  const named = WINDOW_PRESETS.some((preset) => preset.seconds === props.seconds);
  const [custom, setCustom] = useState(!named);
  return (
    <>
      <Field label="Window" name={props.name} error={custom ? undefined : props.error}>
        {(c) => (
          <select
            {...c}
            value={custom ? CUSTOM : String(props.seconds)}
            disabled={props.disabled}
            onChange={(e) => {
              const isCustom = e.target.value === CUSTOM;
              setCustom(isCustom);
              if (!isCustom) props.onChange(Number(e.target.value));
            }}
          >
            {WINDOW_PRESETS.map((preset) => (
              <option key={preset.seconds} value={preset.seconds}>
                {preset.label}
              </option>
            ))}
            <option value={CUSTOM}>Custom…</option>
          </select>
        )}
      </Field>
      {custom ? (
        <Field
          label="Window (seconds)"
          hint={`at least ${MIN_WINDOW_SECONDS} when enforced`}
          name={props.name}
          error={props.error}
        >
          {(c) => (
            <input
              {...c}
              type="number"
              min={0}
              step="1"
              value={shown(props.seconds)}
              disabled={props.disabled}
              onChange={(e) => props.onChange(parseNumberField(e.target.value))}
            />
          )}
        </Field>
      ) : null}
    </>
  );
}

const usdCap = (cap: number) => (cap ? formatUsd(cap) : "$∞");

/** One line about a limits object for lists. */
export function limitsSummary(limits: Limits | undefined): string {
  if (!limits) return "no caps";
  const parts: string[] = [];
  const t = limits.token_limit;
  if (t.enabled)
    parts.push(
      `tokens ${t.user_cap || "∞"}/user, ${t.group_cap || "∞"}/group per ${windowInWords(t.window_seconds)}`,
    );
  const b = limits.budget_limit;
  if (b.enabled)
    parts.push(
      `${usdCap(b.user_cap_usd)}/user, ${usdCap(b.group_cap_usd)}/group per ${windowInWords(b.window_seconds)}`,
    );
  const c = limits.tool_call_limit;
  if (c?.enabled)
    parts.push(
      `tool calls ${c.user_cap || "∞"}/user, ${c.group_cap || "∞"}/group per ${windowInWords(c.window_seconds)}`,
    );
  return parts.length ? parts.join("; ") : "caps off";
}
