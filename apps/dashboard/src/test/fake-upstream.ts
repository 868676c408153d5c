import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A local OpenAI-style vendor: chat completions answer with fixed usage so numbers are known. */
export class FakeOpenAI {
  usage = { prompt_tokens: 120, completion_tokens: 30 };
  requests = 0;
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer(async (req, res) => {
      for await (const _chunk of req) {
        // drain the body
      }
      this.requests += 1;
      const { prompt_tokens, completion_tokens } = this.usage;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: `chatcmpl-${this.requests}`,
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: "gpt-4o-mini",
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: "Hello from the fake upstream" },
              finish_reason: "stop",
            },
          ],
          usage: { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens },
        }),
      );
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
