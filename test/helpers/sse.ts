/**
 * Test helper: a server-sent-events client over fetch (issue 26's change stream): events as they arrive,
 * comment lines (heartbeats), the answer's status, and whether the server ended the stream.
 */

/** One event: its `id:` as a number and its `data:` parsed as JSON. */
export interface SseEvent {
  id: number;
  data: any;
}

/** An open stream. */
export interface SseStream {
  events: SseEvent[];
  comments: string[];
  /** The answer's status (0 until the headers arrived or when the connection failed). */
  status(): number;
  /** Whether the stream has ended (closed by either side, or failed to connect). */
  ended(): boolean;
  close(): Promise<void>;
}

/** Open `url` as an event stream with `headers` (e.g. Authorization, Last-Event-ID). */
export function openSse(url: string, headers: Record<string, string>): SseStream {
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const ac = new AbortController();
  let status = 0;
  let ended = false;
  const done = (async () => {
    try {
      const r = await fetch(url, { headers: { Accept: "text/event-stream", ...headers }, signal: ac.signal });
      status = r.status;
      if (!r.body) return;
      const dec = new TextDecoder();
      let buf = "";
      for await (const chunk of r.body) {
        buf += dec.decode(chunk as Uint8Array, { stream: true });
        let i = buf.indexOf("\n\n");
        while (i >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          let id: number | undefined;
          let data: string | undefined;
          for (const line of block.split("\n")) {
            if (line.startsWith("id: ")) id = Number(line.slice(4));
            else if (line.startsWith("data: ")) data = line.slice(6);
            else if (line.startsWith(":")) comments.push(line);
          }
          if (id !== undefined && data !== undefined) events.push({ id, data: JSON.parse(data) });
          i = buf.indexOf("\n\n");
        }
      }
    } catch {
      // aborted, or the server went away
    } finally {
      ended = true;
    }
  })();
  return {
    events,
    comments,
    status: () => status,
    ended: () => ended,
    async close() {
      ac.abort();
      await done;
    },
  };
}
