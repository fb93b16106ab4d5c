import { ForkEngine } from '../../core/engine/engine.ts';
import { forkToolsFor } from '../../core/engine/fork-tools.ts';
import type { FanOut, FanOutResult, ForkResult } from '../../core/agent/fork-handle.ts';
import { type FanOutProgress, progressOf } from '../../core/agent/fan-out-progress.ts';
import type { CapturedForkCall } from '../proxy/fork-calls.ts';
import { forkParent } from './fork-parent.ts';
import type { ForkInput } from './fork-input.ts';
import { quoteChildText } from '../../core/wire/fork-text.ts';
import { ForkcacheError } from '../../core/util/errors.ts';
import { FILE_TOOL_NAMES } from '../../core/wire/tool-names.ts';
import { standardSchemaOfJson } from '../../core/engine/fan-out/output.ts';

/** An MCP caller's JSON Schema as a Standard Schema (zod's own reading of it: a hand-written validator is not needed). */
export function outputSchemaOf(jsonSchema: Record<string, unknown>) {
  return standardSchemaOfJson(jsonSchema, 'outputSchema');
}

/** Where the children run: through the proxy (so its report holds the whole tree), in this workspace. */
export interface ForkRunSettings {
  /** The proxy's own base URL: children's requests go through it like the client's. */
  proxyUrl: string;
  workspace: string;
  /** The runs directory (transcripts, summary; needed for `isolation: worktree`). */
  runsDir?: string | undefined;
  /** Worker threads of each fan-out's pool (default the engine's). */
  maxThreads?: number | undefined;
  /** API requests in flight at once per fan-out (default the engine's). */
  concurrency?: number | undefined;
  /**
   * Children may run the client's shell tool (Claude Code's `Bash`, Qwen Code's
   * `run_shell_command`), always in bubblewrap (`sandbox: 'bwrap'`: no network, the workspace
   * only, forkcache's key and environment out of reach); a call may still turn it off
   * (`bash: false`). Default false: the tool is refused, as every tool forkcache does not allow.
   */
  allowBash?: boolean | undefined;
}

/** Whether a call's children get the shell: the server must allow it, and the call may decline it. */
export function bashAllowed(input: Pick<ForkInput, 'bash'>, settings: Pick<ForkRunSettings, 'allowBash'>): boolean {
  if (input.bash === true && settings.allowBash !== true)
    throw new ForkcacheError(
      'PERMISSION_DENIED',
      'bash: this server does not let children run Bash (start it with forkcache proxy --mcp --mcp-allow-bash)',
      { data: { field: 'bash' } },
    );
  return settings.allowBash === true && input.bash !== false;
}

/** A fan-out's results, and whose tools its children ran (the client's, told by its tool array). */
export interface ForkCallResult extends FanOutResult {
  toolSet: string;
}

/** Told as each child starts, calls a tool, finishes a turn and ends (the AI SDK fork tool's preliminary results say the same). */
type ForkProgress = (progress: FanOutProgress) => void;

/** One fan-out from a captured fork call: an engine of its own (isolation and maxUsd are engine options). */
export async function runForkCall(
  captured: CapturedForkCall,
  input: ForkInput,
  settings: ForkRunSettings,
  signal?: AbortSignal,
  onProgress?: ForkProgress,
): Promise<ForkCallResult> {
  const parent = forkParent(captured);
  const outputSchema = input.outputSchema === undefined ? undefined : outputSchemaOf(input.outputSchema);
  const bash = bashAllowed(input, settings);
  // The engine's own choice (auto, from the tool array): Claude Code's, Qwen Code's or forkcache's.
  const { toolSet } = forkToolsFor(parent, { toolSet: 'auto', denyTools: [] });
  const { 'x-api-key': apiKey, 'anthropic-version': _version, ...headers } = captured.headers;
  const engine = await ForkEngine.create({
    baseURL: settings.proxyUrl,
    // A client that authenticates with a bearer token has no key: the header goes as it came.
    apiKey: apiKey ?? 'no-key',
    headers,
    workspace: settings.workspace,
    ...(settings.runsDir === undefined ? {} : { runsDir: settings.runsDir }),
    ...(settings.maxThreads === undefined ? {} : { pool: { maxThreads: settings.maxThreads } }),
    ...(settings.concurrency === undefined ? {} : { concurrency: settings.concurrency }),
    ...(input.isolation === undefined ? {} : { isolation: input.isolation }),
    ...(input.maxUsd === undefined ? {} : { maxUsd: input.maxUsd }),
    // the shell only in bubblewrap: never `auto`, which runs commands unconfined where bwrap does not work
    ...(bash ? { allow: [...FILE_TOOL_NAMES, 'bash'], sandbox: 'bwrap' as const } : {}),
  });
  try {
    const fan = engine.fanOut(parent, input.directives, {
      foreground: true,
      parentId: `proxy#${captured.seq}`,
      meta: { mcp: { tool: captured.call.name, toolUseId: captured.call.id, exchange: captured.seq } },
      ...(input.check === undefined ? {} : { check: { command: input.check } }),
      ...(outputSchema === undefined ? {} : { outputSchema }),
      ...(signal === undefined ? {} : { signal }),
    });
    if (onProgress) void reportProgress(fan, onProgress);
    return { ...(await fan.settled()), toolSet };
  } finally {
    await engine.close();
  }
}

/**
 * A client waiting on the tool may give up on a call that says nothing for a while (Qwen Code:
 * 5 minutes by default, however long its children take): every child's turn is a sign of life.
 */
async function reportProgress(fan: FanOut, onProgress: ForkProgress) {
  for await (const progress of progressOf(fan)) onProgress(progress);
}

/** One child's section: forkcache's heading, then the child's words quoted (`quoteChildText`), never able to start a section. */
function forkText(fork: ForkResult): string {
  const head = `## fork ${fork.index + 1} (${fork.status}): ${fork.directive.split('\n')[0]}`;
  const report = fork.finalText.trim();
  // the value the output schema accepted, as JSON on one line of forkcache's own
  const output = 'output' in fork ? `\noutput: ${JSON.stringify(fork.output)}` : '';
  if (report) return `${head}${output}\n${quoteChildText(report)}`;
  if (!fork.error) return `${head}\n(no report)`;
  // forkcache's message on its first line; what follows may quote a check's output, which a child writes
  const [first, ...rest] = fork.error.message.split('\n');
  return [`${head}\nerror: ${first}`, ...(rest.length > 0 ? [quoteChildText(rest.join('\n'))] : [])].join('\n');
}

/** The tool result: one line of figures, then every child's report in directive order. */
export function formatFanOut(result: ForkCallResult): string {
  const done = result.forks.filter((f) => f.status === 'completed').length;
  const s = result.summary;
  const cost = s.cost_usd.actual;
  const u = s.usage;
  // Each figure beside the total it is a part of, as the ledger defines them (docs/architecture.md):
  // the shared-prefix reads the efficiency counts (efficiency × most readable), then every request's.
  const sharedReads = Math.round(s.cache.cache_efficiency * s.cache.max_fanout_reads);
  const allInput = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
  const lines = [
    `forkcache: ${result.forks.length} fork(s), ${done} completed; tool set ${result.toolSet}; fan-out ${result.fanOutId}; ` +
      `the ${s.cache.fanout_requests} fan-out request(s) read ${sharedReads} of at most ${s.cache.max_fanout_reads} shared-prefix tokens from the cache ` +
      `(efficiency ${s.cache.cache_efficiency.toFixed(3)}); all ${s.requests} request(s) read ${u.cache_read_input_tokens} of ${allInput} input tokens from it` +
      (cost === null ? '' : `; cost $${cost.toFixed(4)}`),
    '',
    ...result.forks.map(forkText),
  ];
  return lines.join('\n\n').replace(/\n{3,}/g, '\n\n');
}
