import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import type { CapturedTurn } from './exchange/assistant-capture.ts';
import { ForkcacheError } from '../../core/util/errors.ts';
import { MCP_FORK_TOOL, QWEN_DEFERRED } from '../../core/wire/mcp-tools.ts';

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
  /**
   * Who made the call (`callerOf`): a digest of the credentials it was sent with and the session
   * it names. A call claimed by its arguments is bound to one caller, never matched across two.
   */
  caller: string;
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

/** The session a request names: Claude Code's header, and `metadata.user_id` (which holds its session id). */
const SESSION_HEADER = 'x-claude-code-session-id';

function userIdOf(body: Buffer): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    const metadata = isObject(parsed) ? parsed['metadata'] : undefined;
    const userId = isObject(metadata) ? metadata['user_id'] : undefined;
    return typeof userId === 'string' ? userId : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The identity of the session that sent a request: its credentials (the key the children would
 * be billed to), Claude Code's session header and the body's `metadata.user_id`. Two sessions
 * differ in at least one of these unless they are one client's with no session of their own.
 */
export function callerOf(headers: IncomingHttpHeaders, body: Buffer): string {
  const one = (name: string): string => {
    const value = headers[name];
    return Array.isArray(value) ? value.join(',') : (value ?? '');
  };
  const parts = [one('x-api-key'), one('authorization'), one(SESSION_HEADER), userIdOf(body) ?? ''];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32);
}

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

interface Pending {
  captured: CapturedForkCall;
  /** The order in which the exchange that captured it began (`watch`). */
  began: number;
}

/**
 * The fork calls seen and not yet claimed by the tool that runs them. A call is claimed once:
 * - by its `tool_use` id when the client passes it (Claude Code's `_meta["claudecode/toolUseId"]`),
 *   and then only by it: an id not seen yet is waited for, never guessed from the arguments;
 * - else by its arguments, among the calls whose exchange began before the tool call arrived
 *   (the client had the whole answer before it called, so its call is one of those), once every
 *   such exchange has been read to the end. All of those calls must come from one caller
 *   (`callerOf`): equal arguments from two sessions are refused as ambiguous, never guessed, so
 *   one session's children never fork another's conversation or carry its key. Of one caller's
 *   calls the newest is taken: an older one with equal arguments was never run (its session moved
 *   on without calling the tool).
 */
export class ForkCallRegistry {
  /** Tool names whose calls are captured: Claude Code and Qwen Code name an MCP tool `mcp__<server>__<tool>`. */
  readonly toolName: RegExp;
  readonly #pending: Pending[] = [];
  /** Exchanges that may still offer a call, by the order in which they began. */
  readonly #reading = new Set<number>();
  #began = 0;
  readonly #events = new EventEmitter<{ offered: []; settled: [] }>();

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

  /**
   * An exchange whose answer may hold a fork call begins: its calls are offered through the
   * returned `offer`, and `settle` says it has been read to the end (call it once, always).
   */
  watch(): { offer(call: CapturedForkCall): void; settle(): void } {
    const began = ++this.#began;
    this.#reading.add(began);
    return {
      offer: (call) => this.#offer(call, began),
      settle: () => {
        if (this.#reading.delete(began)) this.#events.emit('settled');
      },
    };
  }

  /** A call of an exchange not watched (it began now). */
  offer(call: CapturedForkCall): void {
    this.#offer(call, ++this.#began);
  }

  #offer(call: CapturedForkCall, began: number): void {
    this.#pending.push({ captured: call, began });
    if (this.#pending.length > PENDING_LIMIT) this.#pending.shift();
    this.#events.emit('offered');
  }

  get pending(): number {
    return this.#pending.length;
  }

  #takeAt(at: number): CapturedForkCall {
    return this.#pending.splice(at, 1)[0]!.captured;
  }

  /** The call of this id, if it has been seen. */
  #byId(toolUseId: string): CapturedForkCall | undefined {
    const at = this.#pending.findIndex((p) => p.captured.call.id === toolUseId);
    return at < 0 ? undefined : this.#takeAt(at);
  }

  /** The one caller's newest call of these arguments among those begun before `arrived`; else why not. */
  #byArguments(input: Record<string, unknown>, arrived: number): CapturedForkCall {
    const key = canonical(input);
    const matches = this.#pending.filter((p) => p.began <= arrived && canonical(p.captured.call.input) === key);
    if (matches.length === 0)
      throw new ForkcacheError(
        'MCP_CALL_UNSEEN',
        'forkcache: this call was not seen going through forkcache proxy, so there is no request to fork from. ' +
          "Point the client's ANTHROPIC_BASE_URL at the proxy that serves this MCP endpoint.",
      );
    const callers = new Set(matches.map((p) => p.captured.caller));
    if (callers.size > 1)
      throw new ForkcacheError(
        'MCP_CALL_AMBIGUOUS',
        `forkcache: ${callers.size} sessions made a fork call with these same arguments and this call names no ` +
          'tool_use id, so which conversation it forks from cannot be told: refused, nothing ran. Call again with ' +
          'arguments of your own (a directive that names this task), or from a client that passes the tool_use id ' +
          '(_meta["claudecode/toolUseId"]).',
        { data: { sessions: callers.size } },
      );
    const newest = matches.reduce((a, b) => (b.began > a.began ? b : a));
    return this.#takeAt(this.#pending.indexOf(newest));
  }

  /**
   * The call these arguments belong to. By id, it waits for the call (the tool call can reach the
   * MCP endpoint before the proxy has read the answer that made it) until `signal` aborts; by
   * arguments, it waits for the exchanges that began before it to be read, then decides.
   */
  claim(input: Record<string, unknown>, toolUseId: string | undefined, signal: AbortSignal): Promise<CapturedForkCall> {
    const arrived = this.#began;
    const unread = new Set([...this.#reading].filter((began) => began <= arrived));
    const attempt = (): CapturedForkCall | undefined => {
      if (toolUseId !== undefined) return this.#byId(toolUseId);
      for (const began of unread) if (!this.#reading.has(began)) unread.delete(began);
      return unread.size > 0 ? undefined : this.#byArguments(input, arrived);
    };
    return new Promise((resolve, reject) => {
      const retry = (): void => {
        try {
          const call = attempt();
          if (!call) return;
          done();
          resolve(call);
        } catch (err) {
          done();
          reject(err as Error);
        }
      };
      const onAbort = (): void => {
        done();
        reject(
          toolUseId === undefined
            ? new ForkcacheError(
                'MCP_CALL_UNSEEN',
                'forkcache: answers the proxy was still reading when this call arrived did not end in time, so which ' +
                  'session made this call cannot be told yet: refused, nothing ran. Call the tool again.',
              )
            : new ForkcacheError(
                'MCP_CALL_UNSEEN',
                `forkcache: the call ${JSON.stringify(toolUseId)} was not seen going through forkcache proxy, so there is ` +
                  "no request to fork from. Point the client's ANTHROPIC_BASE_URL at the proxy that serves this MCP endpoint.",
              ),
        );
      };
      const done = (): void => {
        this.#events.off('offered', retry);
        this.#events.off('settled', retry);
        signal.removeEventListener('abort', onAbort);
      };
      if (signal.aborted) return onAbort();
      this.#events.on('offered', retry);
      this.#events.on('settled', retry);
      signal.addEventListener('abort', onAbort, { once: true });
      retry();
    });
  }
}
