import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { AppError } from "@agentnet/contracts";
import { currentToken, login } from "./commands/agent-login";
import { bootstrap } from "./commands/bootstrap";
import { composeEnv } from "./commands/compose-env";
import { quickstart, quickstartSnippets } from "./commands/quickstart";
import { reseal } from "./commands/reseal";
import { callResource, RESOURCES, type ResourceName, table } from "./commands/resources";
import { stackStatus } from "./commands/status";
import { up } from "./commands/up";
import { parseEnv } from "./env";

interface Command {
  /** One line per form, as `agentnet help` lists them. */
  usage: string;
  summary: string;
  run: (args: string[]) => Promise<number>;
}

const print = (line: string) => process.stdout.write(`${line}\n`);

const COMMANDS: Record<string, Command> = {
  up: {
    usage: "up [--cluster]",
    summary:
      "start the whole local stack (backends it cannot reach, every service); --cluster: three NATS nodes and replicas of every service; Ctrl-C stops it in order, a second Ctrl-C at once",
    run: async (args) => {
      const { values } = parseArgs({ args, options: { cluster: { type: "boolean", default: false } } });
      return up(parseEnv(process.env), print, values.cluster ? "cluster" : "single");
    },
  },
  bootstrap: {
    usage: "bootstrap --email <e> [--name <n>] [--json]",
    summary: "create an account, its owner and an API token for the owner",
    run: async (args) => {
      const { values } = parseArgs({
        args,
        options: {
          email: { type: "string" },
          name: { type: "string" },
          json: { type: "boolean", default: false },
        },
      });
      if (!values.email) throw new UsageError("bootstrap", "--email is required");
      const created = await bootstrap(parseEnv(process.env), values.email, values.name);
      if (values.json) print(JSON.stringify(created));
      else {
        print(`account  ${created.account_id}`);
        print(`owner    ${created.user_id} (${values.email})`);
        print(`token    ${created.token}`);
        print("keep the token: it is shown once.");
        print("  API (dashboard, /api):   Authorization: Token <token>");
        print("  gateway proxy (SDKs):    Authorization: Bearer <token>  or  x-api-key: <token>");
      }
      return 0;
    },
  },
  quickstart: {
    usage:
      "quickstart [--upstream-url <url> --api-key <key> [--provider <catalog id>]] [--token <owner token>] [--email <e>] [--json]",
    summary:
      "with the stack running: an account (or --token's), settings, provider(s), a policy for All and a member token, then ready-to-paste configuration; without --upstream-url the providers point at the stack's demo upstream",
    run: async (args) => {
      const { values } = parseArgs({
        args,
        options: {
          "upstream-url": { type: "string" },
          "api-key": { type: "string" },
          provider: { type: "string" },
          token: { type: "string" },
          email: { type: "string" },
          json: { type: "boolean", default: false },
        },
      });
      if (values["upstream-url"] && !values["api-key"]) {
        throw new UsageError(
          "quickstart",
          "--upstream-url needs --api-key (the vendor key agentnet stores sealed)",
        );
      }
      const result = await quickstart(parseEnv(process.env), {
        token: values.token,
        email: values.email,
        upstreamUrl: values["upstream-url"],
        apiKey: values["api-key"],
        provider: values.provider,
      });
      if (values.json) {
        print(JSON.stringify(result));
        return 0;
      }
      print(
        `account         ${result.account_id}${result.owner_token ? ` (owner token, shown once: ${result.owner_token})` : ""}`,
      );
      print(`policy          quickstart: the All group may use ${result.provider_ids.length} provider(s)`);
      print(`member          ${result.member_email}, token valid 30 days (shown once):`);
      print(`token           ${result.member_token}`);
      print("");
      for (const line of quickstartSnippets(result, !values["upstream-url"])) print(line);
      return 0;
    },
  },
  login: {
    usage: "login [--api <url>]",
    summary:
      "sign a coding agent in: confirm the code it shows in the dashboard; keeps a refresh credential for `agentnet token`",
    run: async (args) => {
      const { values } = parseArgs({ args, options: { api: { type: "string" } } });
      const env = parseEnv(process.env);
      const apiUrl = (values.api ?? `http://${env.AGN_API_HOST}:${env.AGN_API_PORT}`).replace(/\/+$/, "");
      await login(process.env, apiUrl, print);
      return 0;
    },
  },
  token: {
    usage: "token",
    summary:
      "print a proxy token that lives 15 minutes, renewed from `agentnet login`'s credential when needed (Claude Code's apiKeyHelper)",
    run: async (args) => {
      parseArgs({ args, options: {} });
      print(await currentToken(process.env));
      return 0;
    },
  },
  status: {
    usage: "status [--json]",
    summary: "what of the local stack runs, where, and whether it is healthy (exit 1 if a part is not)",
    run: async (args) => {
      const { values } = parseArgs({ args, options: { json: { type: "boolean", default: false } } });
      const status = await stackStatus(parseEnv(process.env));
      if (values.json) print(JSON.stringify(status));
      else {
        for (const line of table(
          status.parts.map((part) => ({ ...part, healthy: part.healthy ? "yes" : "NO" })),
          ["part", "address", "healthy", "detail"],
        )) {
          print(line);
        }
      }
      return status.parts.every((part) => part.healthy) ? 0 : 1;
    },
  },
  ...resourceCommands(),
  "compose-env": {
    usage: "compose-env",
    summary: "write <data>/compose.env: passwords and URLs for infra/docker-compose.yml",
    run: async (args) => {
      parseArgs({ args, options: {} });
      const file = composeEnv(parseEnv(process.env));
      print(`wrote ${file} (mode 0600). Start the backends and the stack with:`);
      print(`  docker compose --env-file ${file} -f infra/docker-compose.yml up -d`);
      print(`  set -a; . ${file}; set +a; pnpm start`);
      return 0;
    },
  },
  reseal: {
    usage: "reseal",
    summary:
      "re-seal every provider credential with the newest sealing key (rotation: AGN_SEALING_KEY=<new>,<old> on control-plane and proxy, reseal, then drop <old>)",
    run: async (args) => {
      parseArgs({ args, options: {} });
      const result = await reseal(parseEnv(process.env));
      print(
        `re-sealed ${result.resealed} provider credentials with key ${result.current_key}; ${result.already_current} already used it`,
      );
      if (result.unopened === 0) return 0;
      print(
        `${result.unopened} credentials were sealed with a key not in AGN_SEALING_KEY and were left as they are`,
      );
      return 1;
    },
  },
};

/** `agentnet <resource> list|create|delete`, one command per API collection (RESOURCES). */
function resourceCommands(): Record<string, Command> {
  return Object.fromEntries(
    (Object.keys(RESOURCES) as ResourceName[]).map((resource) => {
      const user = resource === "tokens" ? " --user <user id>" : "";
      const command: Command = {
        usage: `${resource} list|create|delete${user} [--body <json>] [<id>] [--token <t>] [--json]`,
        summary: `list, create (--body: the JSON the API takes) or delete ${resource}; the token from --token or AGN_TOKEN`,
        run: async (args) => {
          const { values, positionals } = parseArgs({
            args,
            allowPositionals: true,
            options: {
              token: { type: "string" },
              user: { type: "string" },
              body: { type: "string" },
              json: { type: "boolean", default: false },
            },
          });
          const [action, id] = positionals;
          if (action !== "list" && action !== "create" && action !== "delete") {
            throw new UsageError(resource, `say list, create or delete (got ${action ?? "nothing"})`);
          }
          if (action === "delete" && !id) throw new UsageError(resource, "delete needs the id");
          const env = parseEnv(process.env);
          const token = values.token ?? env.AGN_TOKEN;
          if (!token) throw new UsageError(resource, "an API token is needed: --token <t> or AGN_TOKEN");
          const answer = await callResource(env, {
            resource,
            action,
            token,
            user: values.user,
            body: values.body,
            id,
          });
          if (values.json || action === "create") print(JSON.stringify(answer, null, values.json ? 0 : 2));
          else if (action === "list") {
            for (const line of table(answer as Record<string, unknown>[], RESOURCES[resource].columns))
              print(line);
          } else print(`deleted ${id}`);
          return 0;
        },
      };
      return [resource, command];
    }),
  );
}

/** A mistake in how the CLI was called: said on stderr with the command's usage, exit code 2. */
class UsageError extends Error {
  constructor(
    readonly command: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

const usageOf = (command: Command) => `usage: agentnet ${command.usage}\n\n  ${command.summary}\n`;

const USAGE_COLUMN = 46;

/** One command in the overview: its summary beside a short usage, on the next line under a long one. */
const overviewLine = (usage: string, summary: string) =>
  usage.length < USAGE_COLUMN
    ? `  ${usage.padEnd(USAGE_COLUMN)}${summary}`
    : `  ${usage}\n  ${" ".repeat(USAGE_COLUMN)}${summary}`;

const overview = () =>
  [
    "usage: agentnet <command> [options]      (agentnet <command> --help for its options)",
    "",
    ...Object.values(COMMANDS).map((command) => overviewLine(command.usage, command.summary)),
    "",
    overviewLine("--version", "print the version"),
    "",
  ].join("\n");

const version = () =>
  (JSON.parse(readFileSync(join(import.meta.dirname, "..", "package.json"), "utf8")) as { version: string })
    .version;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    const topic = name === "help" && rest[0] ? COMMANDS[rest[0]] : undefined;
    process.stdout.write(topic ? usageOf(topic) : overview());
    return 0;
  }
  if (name === "--version" || name === "-v") {
    print(`agentnet ${version()}`);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) throw new UsageError(undefined, `unknown command '${name}'`);
  if (rest.includes("--help") || rest.includes("-h")) {
    process.stdout.write(usageOf(command));
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    // parseArgs refuses unknown options and missing values with a TypeError carrying a code.
    if (error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS")) {
      throw new UsageError(name, error.message);
    }
    throw error;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      const command = error.command ? COMMANDS[error.command] : undefined;
      process.stderr.write(`agentnet: ${error.message}\n\n${command ? usageOf(command) : overview()}`);
      process.exit(2);
    }
    const message =
      error instanceof AppError
        ? `${error.message} (${error.status})`
        : error instanceof Error
          ? error.message
          : String(error);
    process.stderr.write(`agentnet: ${message}\n`);
    process.exit(1);
  },
);
