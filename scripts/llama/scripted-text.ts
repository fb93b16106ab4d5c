// A pass-through stand-in in front of the real llama-server for the tests and the engine
// benchmark: every request goes to the server unchanged (it computes every prompt token and
// generates every token it would), and only the text the client sees in a streamed chat answer
// is replaced by a script, so forks of a random-weight model make tool calls and end with a
// report (their checks run). Usage, timings and every other endpoint pass through as they are.
import { Agent, createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the script makes a fork say on one turn. */
export type ScriptedTurn = { text: string } | { tool: { name: string; input: Record<string, unknown> } };

export interface ScriptOptions {
  /** Turns with a tool call before the report (default 1), or per directive. */
  toolTurns?: number | ((directive: string) => number);
  /** The tool call of a fork's turn (default: `bash` `true`). */
  tool?: (directive: string, turn: number) => { name: string; input: Record<string, unknown> };
}

const DIRECTIVE = 'Directive: ';

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((p) => (typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : ''))
      .join('');
  return '';
}

/**
 * The scripted turn of a chat request: a fork's turns are counted from its directive (the last
 * message that carries one); the first `toolTurns` make a tool call, the rest the report.
 */
export function scriptedTurn(
  body: { messages?: { role: string; content?: unknown }[] },
  options: ScriptOptions = {},
): ScriptedTurn {
  const messages = body.messages ?? [];
  let at = -1;
  for (let i = messages.length - 1; i >= 0 && at < 0; i--) if (textOf(messages[i]!.content).includes(DIRECTIVE)) at = i;
  const text = at < 0 ? '' : textOf(messages[at]!.content);
  const directive = text
    .slice(text.lastIndexOf(DIRECTIVE) + DIRECTIVE.length)
    .split('\n')[0]!
    .trim();
  const done = messages.slice(at + 1).filter((m) => m.role === 'assistant').length;
  const toolTurns = typeof options.toolTurns === 'function' ? options.toolTurns(directive) : (options.toolTurns ?? 1);
  if (done < toolTurns)
    return { tool: options.tool?.(directive, done + 1) ?? { name: 'bash', input: { command: 'true' } } };
  return {
    text: `Scope: ${directive}\nResult: done\nKey files: none\nFiles changed: none\nIssues: none`,
  };
}

let calls = 0;

/** The upstream SSE stream with its text deltas emptied and the scripted turn before the finish. */
function rewriteEvent(data: string, turn: ScriptedTurn): string[] {
  if (data.trim() === '[DONE]') return [data];
  let chunk: Record<string, any>;
  try {
    chunk = JSON.parse(data) as Record<string, any>;
  } catch {
    return [data];
  }
  const choice = chunk['choices']?.[0];
  if (!choice) return [data];
  const delta = choice.delta ?? {};
  delete delta.content;
  delete delta.reasoning_content;
  delete delta.tool_calls;
  choice.delta = delta;
  if (!choice.finish_reason) return [JSON.stringify(chunk)];
  const said =
    'text' in turn
      ? { content: turn.text }
      : {
          tool_calls: [
            {
              index: 0,
              id: `call_${++calls}`,
              type: 'function',
              function: { name: turn.tool.name, arguments: JSON.stringify(turn.tool.input) },
            },
          ],
        };
  const scripted = { ...chunk, choices: [{ index: 0, delta: said, finish_reason: null }] };
  delete (scripted as Record<string, unknown>)['usage'];
  delete (scripted as Record<string, unknown>)['timings'];
  choice.finish_reason = 'text' in turn ? 'stop' : 'tool_calls';
  return [JSON.stringify(scripted), JSON.stringify(chunk)];
}

export interface ScriptedTextServer {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  /** `url` + `/v1` */
  readonly baseURL: string;
  /** Streamed chat answers rewritten so far. */
  readonly rewritten: () => number;
  stop(): Promise<void>;
}

/** Start the stand-in on 127.0.0.1 in front of `upstream` (the server's `http://127.0.0.1:PORT`). */
export async function startScriptedText(upstream: string, options: ScriptOptions = {}): Promise<ScriptedTextServer> {
  const target = new URL(upstream);
  let rewritten = 0;
  // a fresh connection to the server for each request: Node's global agent keeps them alive,
  // and llama-server closes an idle one after its keep-alive timeout (5 s), so a request sent
  // on one as it closes fails (ECONNRESET, `reusedSocket`) and the client sees its connection
  // dropped: a fork's turn fails and is retried, its slot's state unknown (recomputed). How
  // often depends on timing (seen beside CPU hogs); on a new connection it cannot happen
  const agent = new Agent({ keepAlive: false });
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let turn: ScriptedTurn | undefined;
      if (req.method === 'POST' && req.url?.endsWith('/chat/completions')) {
        try {
          const parsed = JSON.parse(body.toString('utf8')) as { stream?: boolean; messages?: { role: string }[] };
          if (parsed.stream) turn = scriptedTurn(parsed, options);
        } catch {
          // not JSON: the server answers it as it would
        }
      }
      const headers = { ...req.headers, host: target.host, 'content-length': String(body.length) };
      const up = httpRequest(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers, agent },
        (answer) => {
          const out = { ...answer.headers };
          delete out['content-length'];
          res.writeHead(answer.statusCode ?? 502, out);
          if (!turn || answer.statusCode !== 200) return void answer.pipe(res);
          rewritten += 1;
          let buffered = '';
          answer.setEncoding('utf8');
          answer.on('data', (text: string) => {
            buffered += text;
            let end: number;
            while ((end = buffered.indexOf('\n\n')) >= 0) {
              const event = buffered.slice(0, end);
              buffered = buffered.slice(end + 2);
              const data = event.startsWith('data: ') ? event.slice(6) : undefined;
              if (data === undefined) res.write(`${event}\n\n`);
              else for (const line of rewriteEvent(data, turn)) res.write(`data: ${line}\n\n`);
            }
          });
          answer.on('end', () => {
            if (buffered) res.write(buffered);
            res.end();
          });
        },
      );
      up.on('error', () => res.destroy());
      // a client that goes away (a cancelled fork) cancels the server's task too
      res.on('close', () => {
        if (!res.writableFinished) up.destroy();
      });
      up.end(body);
    });
  });
  // clients keep connections alive between turns: a short timeout races their reuse
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    baseURL: `${url}/v1`,
    rewritten: () => rewritten,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
