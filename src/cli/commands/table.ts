import type { Command } from 'commander';

/** A command adds itself to the program: its arguments, its flags, its action. */
type Register = (program: Command) => void;

/**
 * One row per command of `forkcache`, in the order `--help` lists them: its name and how to
 * load it. Its arguments and flags are declared in its file (a shared flag by its key in
 * flag-table.ts, an own flag there alone). Loaded on demand: a command imports only its own modules (the SDK, the engine, the
 * emulator, the charts are over a second to load on a busy 2-core machine, and `status` or
 * `plan` need none of them). test/cli/command-table.test.ts holds the rows to what `--help` shows.
 */
interface CommandRow {
  readonly name: string;
  readonly register: () => Promise<Register>;
}

export const COMMANDS: readonly CommandRow[] = [
  {
    name: 'demo',
    register: () => import('./demo.ts').then((m) => m.registerDemoCommand),
  },
  {
    name: 'economics',
    register: () => import('./economics.ts').then((m) => m.registerEconomicsCommand),
  },
  {
    name: 'emulator',
    register: () => import('./emulator.ts').then((m) => m.registerEmulatorCommand),
  },
  {
    name: 'inspect-transcript',
    register: () => import('./inspect-transcript.ts').then((m) => m.registerInspectTranscriptCommand),
  },
  {
    name: 'models',
    register: () => import('./models.ts').then((m) => m.registerModelsCommand),
  },
  {
    name: 'plan',
    register: () => import('./plan.ts').then((m) => m.registerPlanCommand),
  },
  {
    name: 'check-file',
    register: () => import('./check-file.ts').then((m) => m.registerCheckFileCommand),
  },
  {
    name: 'proxy',
    register: () => import('./proxy.ts').then((m) => m.registerProxyCommand),
  },
  { name: 'mcp', register: () => import('./mcp.ts').then((m) => m.registerMcpCommand) },
  {
    name: 'report',
    register: () => import('./report.ts').then((m) => m.registerReportCommand),
  },
  {
    name: 'run',
    register: () => import('./run.ts').then((m) => m.registerRunCommand),
  },
  {
    name: 'resume',
    register: () => import('./resume.ts').then((m) => m.registerResumeCommand),
  },
  {
    name: 'worker',
    register: () => import('./worker.ts').then((m) => m.registerWorkerCommand),
  },
  // review a run, apply its forks' branches, remove what it made (docs/review.md)
  {
    name: 'status',
    register: () => import('./status.ts').then((m) => m.registerStatusCommand),
  },
  { name: 'diff', register: () => import('./diff.ts').then((m) => m.registerDiffCommand) },
  {
    name: 'merge',
    register: () => import('./merge.ts').then((m) => m.registerMergeCommand),
  },
  {
    name: 'clean',
    register: () => import('./clean.ts').then((m) => m.registerCleanCommand),
  },
  {
    name: 'push',
    register: () => import('./push.ts').then((m) => m.registerPushCommand),
  },
];
