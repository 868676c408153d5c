import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

/** A person at the test's identity provider: their email and the groups the provider says they are in. */
export interface IdpUser {
  email: string;
  name: string;
  groups: string[];
  /** Whether the provider says it verified the email (true unless set). */
  emailVerified?: boolean;
}

export interface TestIdentityProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** People by login id; tests change their groups between sign-ins. */
  users: Map<string, IdpUser>;
  stop(): Promise<void>;
}

/**
 * A real OpenID provider (`oidc-provider`) on loopback with one confidential client whose only
 * redirect URI is `redirectUri`: the authorization code flow with PKCE, `email`, `name` and a
 * `groups` claim in the ID token, and the library's development login and consent pages, which
 * `signInThrough` fills in as a person would.
 */
export async function startTestIdentityProvider(redirectUri: string): Promise<TestIdentityProvider> {
  const users = new Map<string, IdpUser>();
  const http: Server = createServer();
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const clientId = "agentnet-dashboard";
  const clientSecret = "client-secret-for-tests-0123456789";
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      },
    ],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name", "groups"] },
    // The ID token carries the claims (the gateway reads it, not the userinfo endpoint).
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: true } },
    // A refresh token with every code, as Keycloak issues (bound to the person's grant here).
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    cookies: { keys: ["test-cookie-key-0123456789abcdef"] },
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      Grant: 3_600,
      IdToken: 600,
      Interaction: 600,
      RefreshToken: 3_600,
      Session: 3_600,
    },
    findAccount: (_ctx, id) => {
      const user = users.get(id);
      if (!user) return undefined;
      return {
        accountId: id,
        claims: () => ({
          sub: id,
          email: user.email,
          email_verified: user.emailVerified ?? true,
          name: user.name,
          groups: user.groups,
        }),
      };
    },
  });
  http.on("request", provider.callback());
  return {
    issuer,
    clientId,
    clientSecret,
    users,
    stop: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/** Cookies per host, as a browser keeps them (enough for these flows: no paths, no expiry). */
export class CookieJar {
  private readonly byHost = new Map<string, Map<string, string>>();

  header(url: URL): string {
    return [...(this.byHost.get(url.host) ?? new Map()).entries()]
      .map(([name, value]) => `${name}=${value}`)
      .join("; ");
  }

  take(url: URL, response: Response): void {
    const jar = this.byHost.get(url.host) ?? new Map<string, string>();
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/max-age=0/i.test(line) || value === "") jar.delete(name);
      else jar.set(name, value);
    }
    this.byHost.set(url.host, jar);
  }

  get(host: string, name: string): string | undefined {
    return this.byHost.get(host)?.get(name);
  }

  set(host: string, name: string, value: string): void {
    const jar = this.byHost.get(host) ?? new Map<string, string>();
    jar.set(name, value);
    this.byHost.set(host, jar);
  }
}

/**
 * A browser's visit from `startUrl` on, redirects followed by hand with `jar`'s cookies, the
 * provider's login page answered as `login` and its consent page accepted. Resolves with the last
 * answer's URL and location (where the gateway sent the browser in the end), and every URL visited.
 */
export async function signInThrough(
  startUrl: string,
  jar: CookieJar,
  login: string,
): Promise<{ location: string; visited: string[] }> {
  const visited: string[] = [];
  let url = new URL(startUrl);
  let method = "GET";
  let body: string | undefined;
  for (let hop = 0; hop < 20; hop++) {
    visited.push(url.href);
    const response = await fetch(url, {
      method,
      redirect: "manual",
      headers: {
        cookie: jar.header(url),
        accept: "text/html,application/json;q=0.9,*/*;q=0.8",
        ...(body ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
      ...(body ? { body } : {}),
    });
    jar.take(url, response);
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      const next = new URL(location, url);
      // Back at the dashboard: the sign-in is over, one way or the other.
      if (next.hash.startsWith("#/")) return { location: next.href, visited };
      url = next;
      method = "GET";
      body = undefined;
      continue;
    }
    const page = await response.text();
    if (url.pathname.startsWith("/interaction/")) {
      method = "POST";
      body = page.includes('name="login"')
        ? new URLSearchParams({ prompt: "login", login, password: "any" }).toString()
        : new URLSearchParams({ prompt: "consent" }).toString();
      continue;
    }
    throw new Error(`the sign-in stopped at ${url.href} with ${response.status}: ${page.slice(0, 300)}`);
  }
  throw new Error(`the sign-in did not end within 20 hops: ${visited.join(" → ")}`);
}
