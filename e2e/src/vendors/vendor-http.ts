import type { ServerResponse } from "node:http";
import type { SeenRequest } from "../upstream";

/** Writes a JSON answer, in the content type the vendor labels it with. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  contentType = "application/json; charset=UTF-8",
) {
  res.writeHead(status, { "content-type": contentType });
  res.end(JSON.stringify(body));
}

/** The token of the request's `Authorization: Bearer` header, if it has one. */
export function bearerToken(request: SeenRequest): string | undefined {
  const header = request.headers.authorization ?? "";
  return header.toLowerCase().startsWith("bearer ") ? header.slice(7) : undefined;
}

/** Until the response takes more, or its client left. */
export const drained = (res: ServerResponse) =>
  new Promise<void>((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
