/** The part of `oidc-provider` (which ships no types) the tests use: a provider and its request handler. */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  interface Account {
    accountId: string;
    claims(): Record<string, unknown> | Promise<Record<string, unknown>>;
  }

  export default class Provider {
    constructor(
      issuer: string,
      configuration: Record<string, unknown> & {
        findAccount?: (ctx: unknown, id: string) => Account | undefined | Promise<Account | undefined>;
        issueRefreshToken?: (
          ctx: unknown,
          client: { grantTypeAllowed(grant: string): boolean },
        ) => boolean | Promise<boolean>;
      },
    );
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
