import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestPki {
  /** The CA certificate a verifier is told to trust. */
  caPem: string;
  /** A server certificate for `*.vendor.test`, signed by that CA. */
  certPem: string;
  keyPem: string;
}

/** Space-separated arguments without spaces inside them. */
const words = (text: string) => text.split(" ");

const openssl = (dir: string, args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });

/**
 * A throwaway CA and a server certificate for the given DNS names, made with the openssl CLI so
 * local vendor servers speak real, verifiable TLS. P-256 keys keep it fast.
 */
export function makeTestPki(dnsNames: readonly string[]): TestPki {
  const dir = mkdtempSync(join(tmpdir(), "agn-verifier-pki-"));
  try {
    const ec = words("-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes");
    openssl(dir, [
      ...words("req -x509 -days 2 -keyout ca.key -out ca.pem"),
      ...ec,
      ...["-subj", "/CN=agentnet verifier test CA"],
      ...["-addext", "basicConstraints=critical,CA:TRUE"],
      ...["-addext", "keyUsage=critical,keyCertSign,cRLSign"],
    ]);
    openssl(dir, [...words("req -keyout server.key -out server.csr -subj /CN=vendor.test"), ...ec]);
    writeFileSync(
      join(dir, "server.ext"),
      [
        `subjectAltName=${dnsNames.map((name) => `DNS:${name}`).join(",")}`,
        "basicConstraints=CA:FALSE",
        "keyUsage=critical,digitalSignature",
        "extendedKeyUsage=serverAuth",
      ].join("\n"),
    );
    openssl(
      dir,
      words(
        "x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile server.ext",
      ),
    );
    return {
      caPem: readFileSync(join(dir, "ca.pem"), "utf8"),
      certPem: readFileSync(join(dir, "server.pem"), "utf8"),
      keyPem: readFileSync(join(dir, "server.key"), "utf8"),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
