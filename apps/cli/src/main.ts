import { parseArgs } from "node:util";
import { AppError } from "@agentnet/contracts";
import { bootstrap } from "./commands/bootstrap";
import { composeEnv } from "./commands/compose-env";
import { reseal } from "./commands/reseal";
import { up } from "./commands/up";
import { parseEnv } from "./env";

const USAGE = `usage: agentnet <command>

  up                                  start the whole local stack (backends it cannot reach, every service)
  bootstrap --email <e> [--name <n>] [--json]
                                      create an account, its owner and an API token for the owner
  compose-env                         write <data>/compose.env: passwords and URLs for infra/docker-compose.yml
  reseal                              re-seal every provider credential with the newest sealing key
                                      (rotation: AGN_SEALING_KEY=<new>,<old> on control-plane and proxy,
                                      reseal, then drop <old>)
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const env = parseEnv(process.env);
  const print = (line: string) => process.stdout.write(`${line}\n`);
  switch (command) {
    case "up":
      return up(env, print);
    case "bootstrap": {
      const { values } = parseArgs({
        args: rest,
        options: {
          email: { type: "string" },
          name: { type: "string" },
          json: { type: "boolean", default: false },
        },
      });
      if (!values.email) {
        process.stderr.write(`--email is required\n\n${USAGE}`);
        return 2;
      }
      const created = await bootstrap(env, values.email, values.name);
      if (values.json) print(JSON.stringify(created));
      else {
        print(`account  ${created.account_id}`);
        print(`owner    ${created.user_id} (${values.email})`);
        print(`token    ${created.token}`);
        print("keep the token: it is shown once. Use it as 'Authorization: Token <token>'.");
      }
      return 0;
    }
    case "compose-env": {
      const file = composeEnv(env);
      print(`wrote ${file} (mode 0600). Start the backends and the stack with:`);
      print(`  docker compose --env-file ${file} -f infra/docker-compose.yml up -d`);
      print(`  set -a; . ${file}; set +a; pnpm start`);
      return 0;
    }
    case "reseal": {
      const result = await reseal(env);
      print(
        `re-sealed ${result.resealed} provider credentials with key ${result.current_key}; ${result.already_current} already used it`,
      );
      if (result.unopened > 0) {
        print(
          `${result.unopened} credentials were sealed with a key not in AGN_SEALING_KEY and were left as they are`,
        );
        return 1;
      }
      return 0;
    }
    default:
      process.stderr.write(USAGE);
      return command === undefined || command === "help" || command === "--help" ? 0 : 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
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
