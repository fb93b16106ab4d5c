import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import type { CapturedTurn } from './assistant-capture.ts';
import { ForkcacheError } from '../errors.ts';
import { MCP_FORK_TOOL, QWEN_DEFERRED } from '../wire/mcp-tools.ts';

/**
 * A fork tool call the proxy saw a model make: the request that produced it, as forwarded (its
 * bytes are what the upstream cached), and the assistant turn that holds the call. The proxy is
 * upstream of the model's answer, so the call is known here before the client runs the tool;
 * the request that will carry its result has not been sent yet.
 */
export interface CapturedForkCall {
  /** The exchange's number in the proxy's ledger. */
  seq: number;
  /** The request body exactly as it went upstream. */
  body: Buffer;
  /** The headers the children need to be sent as the client was (its key stays in memory only). */
  headers: Readonly<Record<string, string>>;
  turn: CapturedTurn;
  call: { id: string; name: string; input: Record<string, unknown> };
  session: string | undefined;
}

/** Headers a child request carries over from the client's (credentials, API version and betas). */
const CARRIED = ['x-api-key', 'authorization', 'anthropic-version', 'anthropic-beta'];

export function carriedHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of CARRIED) {
    const value = headers[name];
    if (typeof value === 'string') out[name] = value;
  }
  return out;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Key order differs between the model's JSON and what an MCP client sends back: compare canonically. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** How many unclaimed calls are kept (each holds a request body); the oldest go first. */
const PENDING_LIMIT = 32;

/**
 * The fork calls seen and not yet claimed by the tool that runs them. A call is claimed once:
 * by its `tool_use` id when the client passes it, else by its input (the directives and plan
 * fields), oldest first.
 */
export class ForkCallRegistry {
  /** Tool names whose calls are captured: Claude Code and Qwen Code name an MCP tool `mcp__<server>__<tool>`. */
  readonly toolName: RegExp;
  readonly #pending: CapturedForkCall[] = [];
  readonly #events = new EventEmitter<{ offered: [] }>();

  constructor(toolName: RegExp = MCP_FORK_TOOL) {
    this.toolName = toolName;
    this.#events.setMaxListeners(0);
  }

  /**
   * Whether a request's raw body may declare the fork tool (cheap: no parse). Claude Code
   * declares it (`"mcp__forkcache__fork"`); Qwen Code only names it inside a text block, where
   * the quote after it is escaped.
   */
  mayDeclare(raw: Buffer): boolean {
    return raw.includes('__fork"') || raw.includes('__fork\\"');
  }

  /**
   * The fork call a `tool_use` block of the model's answer makes, if it makes one: a direct call
   * of the tool (Claude Code, the Agent SDK), or Qwen Code's `tool_call` naming it, whose
   * `arguments` are what the MCP server will be called with.
   */
  callOf(block: Readonly<Record<string, unknown>>): CapturedForkCall['call'] | undefined {
    if (block['type'] !== 'tool_use') return undefined;
    const id = String(block['id']);
    const name = String(block['name']);
    const input = block['input'];
    if (this.toolName.test(name)) return { id, name, input: isObject(input) ? input : {} };
    // Qwen Code's bridge to its deferred tools: the call names the tool it runs
    if (name !== QWEN_DEFERRED.call || !isObject(input)) return undefined;
    const target = input['name'];
    const args = input['arguments'];
    if (typeof target !== 'string' || !this.toolName.test(target) || !isObject(args)) return undefined;
    return { id, name: target, input: args };
  }

  offer(call: CapturedForkCall): void {
    this.#pending.push(call);
    if (this.#pending.length > PENDING_LIMIT) this.#pending.shift();
    this.#events.emit('offered');
  }

  get pending(): number {
    return this.#pending.length;
  }

  #take(input: Record<string, unknown>, toolUseId: string | undefined): CapturedForkCall | undefined {
    // The id when the client passes one (Claude Code: `_meta["claudecode/toolUseId"]`), else the input.
    let at = toolUseId === undefined ? -1 : this.#pending.findIndex((c) => c.call.id === toolUseId);
    if (at < 0) {
      const key = canonical(input);
      at = this.#pending.findIndex((c) => canonical(c.call.input) === key);
    }
    return at < 0 ? undefined : this.#pending.splice(at, 1)[0];
  }

  /**
   * The call these arguments belong to; waits for it (the tool call can reach the MCP endpoint
   * before the proxy has finished reading the answer that made it) until `signal` aborts.
   */
  claim(input: Record<string, unknown>, toolUseId: string | undefined, signal: AbortSignal): Promise<CapturedForkCall> {
    const found = this.#take(input, toolUseId);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const onOffer = (): void => {
        const call = this.#take(input, toolUseId);
        if (!call) return;
        done();
        resolve(call);
      };
      const onAbort = (): void => {
        done();
        reject(
          signal.reason instanceof Error ? signal.reason : new ForkcacheError('FORK_CANCELLED', String(signal.reason)),
        );
      };
      const done = (): void => {
        this.#events.off('offered', onOffer);
        signal.removeEventListener('abort', onAbort);
      };
      if (signal.aborted) return onAbort();
      this.#events.on('offered', onOffer);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
