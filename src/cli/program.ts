import { Command } from 'commander';
import { VERSION } from '../core/util/version.ts';

type Register = (program: Command) => void;

/**
 * Each sub-command lives in its own file and registers itself. In the order `--help` lists
 * them; loaded on demand: a command imports only its own modules (the SDK, the engine, the
 * emulator, the charts are over a second to load on a busy 2-core machine, and `status` or
 * `plan` need none of them).
 */
const COMMANDS: Record<string, () => Promise<Register>> = {
  demo: () => import('./commands/demo.ts').then((m) => m.registerDemoCommand),
  economics: () => import('./commands/economics.ts').then((m) => m.registerEconomicsCommand),
  emulator: () => import('./commands/emulator.ts').then((m) => m.registerEmulatorCommand),
  'inspect-transcript': () =>
    import('./commands/inspect-transcript.ts').then((m) => m.registerInspectTranscriptCommand),
  models: () => import('./commands/models.ts').then((m) => m.registerModelsCommand),
  plan: () => import('./commands/plan.ts').then((m) => m.registerPlanCommand),
  'check-file': () => import('./commands/check-file.ts').then((m) => m.registerCheckFileCommand),
  proxy: () => import('./commands/proxy.ts').then((m) => m.registerProxyCommand),
  mcp: () => import('./commands/mcp.ts').then((m) => m.registerMcpCommand),
  report: () => import('./commands/report.ts').then((m) => m.registerReportCommand),
  run: () => import('./commands/run.ts').then((m) => m.registerRunCommand),
  resume: () => import('./commands/resume.ts').then((m) => m.registerResumeCommand),
  worker: () => import('./commands/worker.ts').then((m) => m.registerWorkerCommand),
  // review a run, apply its forks' branches, remove what it made (docs/review.md)
  status: () => import('./commands/status.ts').then((m) => m.registerStatusCommand),
  diff: () => import('./commands/diff.ts').then((m) => m.registerDiffCommand),
  merge: () => import('./commands/merge.ts').then((m) => m.registerMergeCommand),
  clean: () => import('./commands/clean.ts').then((m) => m.registerCleanCommand),
  push: () => import('./commands/push.ts').then((m) => m.registerPushCommand),
};

/**
 * Build the command tree for `args` (the arguments after the program name): only the command
 * they name, or every command when they name none of them (`--help`, `help run`, a typo, which
 * commander then answers with the list and its suggestion).
 */
export async function createProgram(args: readonly string[] = process.argv.slice(2)): Promise<Command> {
  const program = new Command('forkcache')
    .description('Run LLM fork subagents in parallel on one byte-identical, prompt-cached prefix.')
    .version(VERSION, '-v, --version')
    .showHelpAfterError()
    // commander's usage errors (and --help) are thrown, not exited: `main` (cli-main.ts) turns
    // them into exit code 2 (0), so the command also runs in-process.
    .exitOverride();
  const named = args[0] !== undefined && Object.hasOwn(COMMANDS, args[0]) ? [args[0]] : Object.keys(COMMANDS);
  const registers = await Promise.all(named.map((name) => COMMANDS[name]!()));
  for (const register of registers) register(program);
  return program;
}
