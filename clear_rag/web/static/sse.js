// Server-sent events over a POST. EventSource can only GET, and a question with its config belongs in
// a request body, so this reads the response stream itself and parses it as the SSE spec says:
// lines end in LF, CR or CRLF; "event:" names the event, "data:" lines join with "\n"; a line
// starting with ":" is a comment (the server's "ping" heartbeats); a blank line dispatches.

/** Feed text in any chunking; calls onEvent(kind, data) for every complete event. */
export class EventParser {
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.buffer = "";
    this.kind = "";
    this.data = [];
  }

  push(text) {
    this.buffer += text;
    let start = 0;
    for (;;) {
      const match = /\r\n|\r|\n/g;
      match.lastIndex = start;
      const found = match.exec(this.buffer);
      if (!found) break;
      // A CR as the very last character may be the first half of a CRLF split across two reads.
      if (found[0] === "\r" && found.index === this.buffer.length - 1) break;
      this.line(this.buffer.slice(start, found.index));
      start = found.index + found[0].length;
    }
    this.buffer = this.buffer.slice(start);
  }

  line(line) {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.kind = value;
    else if (field === "data") this.data.push(value);
    return undefined;
  }

  dispatch() {
    const kind = this.kind || "message";
    const raw = this.data.join("\n");
    this.kind = "";
    this.data = [];
    if (raw === "") return;
    let data;
    try {
      data = JSON.parse(raw);
    } catch {
      data = { message: `the server sent an event "${kind}" that is not JSON` };
      this.onEvent("error", data);
      return;
    }
    this.onEvent(kind, data);
  }
}

/**
 * POST `body` as JSON to `url` and call onEvent(kind, data) for each event of the stream.
 * A refused request (4xx/5xx with {"error": ...}) and a stream that ends without "done" or
 * "error" both become an "error" event, so the caller has one way to learn that a question failed.
 */
export async function postEvents(url, body, onEvent, { signal } = {}) {
  let ended = false;
  const deliver = (kind, data) => {
    if (kind === "done" || kind === "error") ended = true;
    onEvent(kind, data);
  };
  let response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(body),
      signal,
    });
  } catch (error) {
    if (signal && signal.aborted) return;
    deliver("error", { message: `could not reach the clear-rag server (${error.message}); is \`clear-rag serve\` running?` });
    return;
  }
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      const payload = await response.json();
      if (payload && typeof payload.error === "string") message = payload.error;
    } catch {
      // not JSON: keep the status line
    }
    deliver("error", { message });
    return;
  }
  const parser = new EventParser(deliver);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.push(value);
    }
    parser.push("\n\n"); // a last event the server did not terminate with a blank line
  } catch (error) {
    if (signal && signal.aborted) return;
    deliver("error", { message: `the connection broke mid-answer (${error.message})` });
    return;
  }
  if (!ended) deliver("error", { message: "the server closed the stream before the answer finished" });
}
