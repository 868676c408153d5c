import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { generateSealingKey, parseSealingKeys } from "@agentnet/sealing";

/**
 * The local stack's sealing key: AGN_SEALING_KEY when set, else one generated once and kept in
 * `<data>/sealing.key` (mode 0600), so credentials stored by one `up` open in the next.
 */
export function localSealingKey(fromEnv: string | undefined, file: string): string {
  if (fromEnv) return parseSealingKeys(fromEnv) && fromEnv;
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${generateSealingKey()}\n`, { mode: 0o600 });
  }
  const key = readFileSync(file, "utf8").trim();
  parseSealingKeys(key);
  return key;
}
