import { MAX_ACCOUNT_CONFIG_BYTES, unprocessable } from "@agentnet/contracts";

const bytesOf = (document: object | undefined): number =>
  document === undefined ? 0 : Buffer.byteLength(JSON.stringify(document));

const megabytes = (bytes: number) => `${(bytes / 1_048_576).toFixed(2)} MiB`;

/**
 * The account snapshot's size after a write that turns `before` into `after` (stored documents;
 * undefined on the side of a create or a delete), or 422 `account.config_too_large` past
 * MAX_ACCOUNT_CONFIG_BYTES. A stored document carries a few fields the snapshot does not (its
 * account id), so the estimate errs high by tens of bytes per document. A write that shrinks the
 * configuration always passes, so an account already past the bound can be brought back under it.
 */
export function configSizeAfter(currentBytes: number, before: object | undefined, after: object | undefined) {
  const growth = bytesOf(after) - bytesOf(before);
  const projected = currentBytes + growth;
  if (growth > 0 && projected > MAX_ACCOUNT_CONFIG_BYTES) {
    throw unprocessable(
      "account.config_too_large",
      `this write would make the account's gateway configuration ${megabytes(projected)}; an account's configuration (settings, providers with their model rows, policies, guardrails, budget rules) may take at most ${megabytes(MAX_ACCOUNT_CONFIG_BYTES)} (MAX_ACCOUNT_CONFIG_BYTES): remove model rows or other entries first`,
    );
  }
  return projected;
}
