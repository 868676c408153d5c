import type { ServerResponse } from "node:http";
import { FakeUpstream, type SeenRequest } from "../upstream";
import { sendJson } from "./vendor-http";

/** The path prefix of Azure OpenAI's v1 API (`https://{resource}.openai.azure.com/openai/v1/...`). */
export const AZURE_V1 = "/openai/v1";

/** What Azure's content filter says of a prompt it let through. */
const FILTERED_SAFE = {
  hate: { filtered: false, severity: "safe" },
  self_harm: { filtered: false, severity: "safe" },
  sexual: { filtered: false, severity: "safe" },
  violence: { filtered: false, severity: "safe" },
};

/**
 * The chunk Azure opens a chat stream with, before the model's first: no choices, no id or model,
 * only the content filter's verdict on the prompt.
 */
const PROMPT_FILTER_CHUNK = {
  choices: [],
  created: 0,
  id: "",
  model: "",
  object: "",
  prompt_filter_results: [{ prompt_index: 0, content_filter_results: FILTERED_SAFE }],
};

/**
 * A local Azure OpenAI resource on its v1 API: `POST /openai/v1/chat/completions`, `/responses`
 * and `/embeddings`, answered as `FakeUpstream` answers the OpenAI wire (a chat stream reports its
 * usage only when `stream_options.include_usage` asks for it, as Azure does), a chat stream
 * opened, as Azure's are, by a chunk of content-filter results without choices. It takes only its
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
    if (path.endsWith("/chat/completions") && body.stream === true) openWithPromptFilter(res);
    return super.respond(res, path, body);
  }

  /** Azure's error body: `{"error":{"code","message"}}`, the code a string. */
  private error(res: ServerResponse, status: number, code: string, message: string) {
    sendJson(res, status, { error: { code, message } }, "application/json");
  }
}

/** Makes the stream's first write the prompt-filter chunk, then whatever FakeUpstream writes. */
function openWithPromptFilter(res: ServerResponse) {
  const write = res.write.bind(res) as (chunk: string) => boolean;
  let opened = false;
  res.write = ((chunk: string) => {
    if (!opened) {
      opened = true;
      write(`data: ${JSON.stringify(PROMPT_FILTER_CHUNK)}\n\n`);
    }
    return write(chunk);
  }) as ServerResponse["write"];
}
