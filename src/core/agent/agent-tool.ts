import type Anthropic from '@anthropic-ai/sdk';
import { type Clock, systemClock } from '../util/clock.ts';
import { FORK_PLACEHOLDER_RESULT, SPAWN_TOOL_NAME } from '../wire/fork-text.ts';
import { decideSpawn, FORK_RECURSION_MESSAGE, isForkChild } from '../fork/guard.ts';
import { captureSnapshot, type ParentSnapshot } from '../fork/snapshot.ts';
import type { UsageLedger } from '../ledger/ledger.ts';
import { TOOL_DECLARATIONS } from '../tools/declarations.ts';
import type { AgentType } from './agent-type.ts';
import type { FanOut, ForkHandle, ForkResult } from './fork-handle.ts';
import { formatTaskNotification } from './notification.ts';

/** What a fresh (non-fork) agent's call returns at once. */
export const AGENT_PLACEHOLDER_RESULT = 'Agent started — processing in background';
export const DEFAULT_AUTO_BACKGROUND_MS = 120_000;

export interface AgentToolOptions {
  /** Model of forks spawned before any parent request exists (first turn). */
  model?: string;
  /** Explicit agent types (`subagent_type`): fresh agents with their own prompt and tools. */
  agentTypes?: AgentType[];
  /** Coordinator mode never forks: calls without a type run the `general-purpose` type. */
  coordinatorMode?: boolean;
  parentId?: string;
  /** The parent's ledger: the tree's totals then include every fork and fresh agent. */
  ledger?: UsageLedger;
  /** Wait for each fork's result in the tool call (default false: background, notify later). */
  foreground?: boolean;
  /** A foreground fork moves to the background after this long (default 120 s, injected clock). */
  autoBackgroundMs?: number;
  /** Kept in each fan-out's manifest (see `FanOutOptions.meta`). */
  meta?: Record<string, unknown>;
  /** Called with each fan-out as it starts (progress displays). */
  onFanOut?: (fan: FanOut) => void;
  clock?: Clock;
}

/** One assistant turn of the parent that contains spawn calls. */
export interface SpawnTurn {
  /** The parent's request that produced `message`, as sent. Undefined: no parent snapshot yet. */
  request?: { messages: readonly Anthropic.MessageParam[]; [key: string]: unknown } | undefined;
  message: { content: readonly (Anthropic.ContentBlock | Anthropic.ContentBlockParam)[] };
  /** The caller's query source: a fork child is refused (recursion guard). */
  querySource?: string | undefined;
}

export interface SpawnCallResult {
  content: string;
  isError: boolean;
}

type Call = { id: string; directive: string; type: string | undefined };

/** What the tool passes on to each fan-out it starts. */
interface SpawnOptions {
  parentId?: string;
  ledger?: UsageLedger;
  meta?: Record<string, unknown>;
  model?: string;
  foreground?: boolean;
}

/**
 * What the tool needs of the engine. `ForkEngine` satisfies it and creates the tool with
 * `engine.agentTool()`: the engine imports the agent tool, so the tool names no engine type.
 */
interface ForkSpawner {
  fanOut(parent: ParentSnapshot | undefined, directives: readonly string[], options: SpawnOptions): FanOut;
  runAgents(
    type: AgentType,
    directives: readonly string[],
    options: Omit<SpawnOptions, 'model' | 'foreground'>,
  ): FanOut;
}

/**
 * The spawn tool for an agent's loop. Without `subagent_type` a call forks: it returns the
 * constant placeholder at once (the same bytes every child saw) and the fork's result arrives
 * later as one `<task-notification>`, exactly once. With a type it runs a fresh agent of that
 * type. Inside a fork child it refuses.
 */
export class AgentTool {
  readonly definition: Anthropic.Tool = TOOL_DECLARATIONS.find((t) => t.name === SPAWN_TOOL_NAME)!;
  readonly fanOuts: FanOut[] = [];
  readonly #engine: ForkSpawner;
  readonly #options: AgentToolOptions & { clock: Clock };
  readonly #ready: string[] = [];
  readonly #delivered = new Set<string>();
  readonly #outstanding = new Set<Promise<unknown>>();

  constructor(engine: ForkSpawner, options: AgentToolOptions) {
    this.#engine = engine;
    this.#options = { clock: systemClock, ...options };
  }

  /** Spawned forks and agents whose result is not yet delivered or notified. */
  get pending(): number {
    return this.#outstanding.size;
  }

  /** Handle every spawn call of one assistant turn; one result per call id. */
  async handle(turn: SpawnTurn): Promise<Map<string, SpawnCallResult>> {
    const uses = turn.message.content.filter(
      (b): b is Anthropic.ToolUseBlock => b.type === 'tool_use' && b.name === SPAWN_TOOL_NAME,
    );
    const results = new Map<string, SpawnCallResult>();
    if (isForkChild({ querySource: turn.querySource, messages: turn.request?.messages ?? [] })) {
      for (const use of uses) results.set(use.id, { content: FORK_RECURSION_MESSAGE, isError: true });
      return results;
    }
    const calls: Call[] = [];
    for (const use of uses) {
      const input = (use.input ?? {}) as { directive?: unknown; subagent_type?: unknown };
      if (typeof input.directive !== 'string' || input.directive.trim() === '') {
        results.set(use.id, { content: 'agent.directive: expected a non-empty string', isError: true });
        continue;
      }
      const type =
        typeof input.subagent_type === 'string' && input.subagent_type !== '' ? input.subagent_type : undefined;
      calls.push({ id: use.id, directive: input.directive, type });
    }
    const waits: Promise<void>[] = [];
    const started: FanOut[] = [];
    for (const [type, group] of this.#groups(calls, results)) {
      let fan: FanOut;
      try {
        fan = this.#start(type, group, turn);
      } catch (err) {
        // bad input of the model's own making (a directive with the fork tag, …): its error result
        for (const call of group) results.set(call.id, { content: (err as Error).message, isError: true });
        continue;
      }
      started.push(fan);
      this.fanOuts.push(fan);
      this.#options.onFanOut?.(fan);
      group.forEach((call, i) => waits.push(this.#deliver(call, fan.forks[i]!, type === undefined, results)));
    }
    await Promise.all(waits);
    // The parent's next request repeats the children's prefix up to the placeholders: sent
    // after the prefix is warm, it reads it instead of writing it a second time.
    await Promise.all(started.map((fan) => fan.warm()));
    return results;
  }

  /** How many notifications wait to be taken. */
  get notificationsReady(): number {
    return this.#ready.length;
  }

  /** Notifications of forks finished since the last call, each delivered exactly once. */
  takeNotifications(): string[] {
    return this.#ready.splice(0);
  }

  /** Resolves when every spawned fork and agent has finished (its notification is then ready). */
  async idle(): Promise<void> {
    while (this.#outstanding.size > 0) await Promise.all([...this.#outstanding]);
  }

  /** Forks (type undefined) and fresh agents per type; unknown types answer with an error. */
  #groups(calls: Call[], results: Map<string, SpawnCallResult>): Map<string | undefined, Call[]> {
    const groups = new Map<string | undefined, Call[]>();
    for (const call of calls) {
      const decision = decideSpawn({
        subagentType: call.type,
        coordinatorMode: this.#options.coordinatorMode ?? false,
      });
      const key = decision.kind === 'fork' ? undefined : decision.agentType;
      if (key !== undefined && !this.#options.agentTypes?.some((t) => t.name === key)) {
        const known = (this.#options.agentTypes ?? []).map((t) => t.name).join(', ') || 'none';
        results.set(call.id, {
          content: `agent.subagent_type: unknown agent type "${key}" (known: ${known})`,
          isError: true,
        });
        continue;
      }
      groups.set(key, [...(groups.get(key) ?? []), call]);
    }
    return groups;
  }

  #start(type: string | undefined, calls: Call[], turn: SpawnTurn): FanOut {
    const common = {
      ...(this.#options.parentId ? { parentId: this.#options.parentId } : {}),
      ...(this.#options.ledger ? { ledger: this.#options.ledger } : {}),
      ...(this.#options.meta ? { meta: this.#options.meta } : {}),
    };
    const directives = calls.map((c) => c.directive);
    if (type !== undefined)
      return this.#engine.runAgents(
        this.#options.agentTypes!.find((t) => t.name === type)!,
        directives,
        common,
      );
    // The child's shared part is the parent's request as sent plus the spawning message.
    const snapshot = turn.request
      ? captureSnapshot({
          ...turn.request,
          messages: [...turn.request.messages, { role: 'assistant', content: turn.message.content }],
        })
      : undefined;
    return this.#engine.fanOut(snapshot, directives, {
      ...common,
      ...(this.#options.model ? { model: this.#options.model } : {}),
      foreground: this.#options.foreground ?? false,
    });
  }

  /** The call's result now (foreground, finished in time) or the placeholder and a notification later. */
  async #deliver(call: Call, handle: ForkHandle, fork: boolean, results: Map<string, SpawnCallResult>): Promise<void> {
    let decide!: (inline: boolean) => void;
    const decided = new Promise<boolean>((resolve) => (decide = resolve));
    const done = handle.result.then(async (result) => {
      const inline = await decided; // a result returned in the tool call is never notified too
      if (inline || this.#delivered.has(result.forkId)) return;
      this.#delivered.add(result.forkId);
      this.#ready.push(formatTaskNotification(result));
    });
    this.#outstanding.add(done);
    void done.finally(() => this.#outstanding.delete(done));
    if (handle.mode === 'foreground') {
      const timer = new AbortController();
      const autoBackground = this.#options.clock
        .sleep(this.#options.autoBackgroundMs ?? DEFAULT_AUTO_BACKGROUND_MS, timer.signal)
        .then(
          () => 'timeout' as const,
          () => 'stopped' as const,
        );
      const first = await Promise.race([
        handle.result,
        handle.backgrounded.then(() => 'moved' as const),
        autoBackground,
      ]);
      timer.abort();
      if (typeof first === 'object') {
        decide(true);
        results.set(call.id, { content: resultText(first), isError: first.status !== 'completed' });
        return;
      }
      handle.background();
    }
    decide(false);
    results.set(call.id, { content: fork ? FORK_PLACEHOLDER_RESULT : AGENT_PLACEHOLDER_RESULT, isError: false });
  }
}

function resultText(result: ForkResult): string {
  if (result.status === 'completed') return result.finalText;
  // a fork that answered without doing its directive: why, then what it said
  const why = `${result.status}: ${result.error?.message ?? 'no result'}`;
  return result.finalText.trim() === '' ? why : `${why}\n\n${result.finalText}`;
}
