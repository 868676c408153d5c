import type { ServerResponse } from "node:http";
import { FakeUpstream, type SeenRequest } from "../upstream";

/** The path prefix of Azure OpenAI's v1 API (`https://{resource}.openai.azure.com/openai/v1/...`). */
export const AZURE_V1 = "/openai/v1";

/**
 * A local Azure OpenAI resource on its v1 API: `POST /openai/v1/chat/completions`, `/responses`
 * and `/embeddings`, answered as `FakeUpstream` answers the OpenAI wire (a chat stream reports its
 * usage only when `stream_options.include_usage` asks for it, as Azure does). It takes only its
 * resource key in the `api-key` header and refuses anything else with Azure's 401 (`refused`
 * counts them); every request is recorded in `seen`, refused ones too.
 */
export class FakeAzure extends FakeUpstream {
  /** Requests refused for their credential. */
  refused = 0;

  constructor(public apiKey: string) {
    super();
    this.reply = "Hello from Azure";
  }

  protected override respond(res: ServerResponse, path: string, body: Record<string, unknown>) {
    // FakeUpstream recorded this request just before calling here, in the same turn.
    const request = this.last as SeenRequest;
    if (!path.startsWith(`${AZURE_V1}/`)) return this.error(res, 404, "404", "Resource not found");
    if (request.headers["api-key"] !== this.apiKey) {
      this.refused++;
      return this.error(
        res,
        401,
        "401",
        "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.",
      );
    }
    return super.respond(res, path, body);
  }

  /** Azure's error body: `{"error":{"code","message"}}`, the code a string. */
  private error(res: ServerResponse, status: number, code: string, message: string) {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { code, message } }));
  }
}
