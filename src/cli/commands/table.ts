import type { Command } from 'commander';
import type { FlagKey } from '../flag-table.ts';

/** A command adds itself to the program: its arguments, its flags, its action. */
type Register = (program: Command) => void;

/**
 * One row per command of `forkcache`, in the order `--help` lists them: its name, the shared
 * flags it takes (flag-table.ts, by key; its own flags are declared in its file), and how to
 * load it. Loaded on demand: a command imports only its own modules (the SDK, the engine, the
 * emulator, the charts are over a second to load on a busy 2-core machine, and `status` or
 * `plan` need none of them). test/cli/command-table.test.ts holds the rows to what `--help` shows.
 */
interface CommandRow {
  readonly name: string;
  readonly sharedFlags: readonly FlagKey[];
  readonly register: () => Promise<Register>;
}

export const COMMANDS: readonly CommandRow[] = [
  {
    name: 'demo',
    sharedFlags: ['latency', 'seed', 'model', 'provider', 'modelTable', 'json', 'report', 'parentFromClaudeTranscript'],
    register: () => import('./demo.ts').then((m) => m.registerDemoCommand),
  },
  {
    name: 'economics',
    sharedFlags: ['model', 'assume', 'date', 'modelTable', 'json'],
    register: () => import('./economics.ts').then((m) => m.registerEconomicsCommand),
  },
  {
    name: 'emulator',
    sharedFlags: [
      'provider',
      'host',
      'port',
      'latency',
      'seed',
      'logDir',
      'modelTable',
      'maskHeader',
      'maxConnections',
      'headersTimeoutMs',
      'requestTimeoutMs',
    ],
    register: () => import('./emulator.ts').then((m) => m.registerEmulatorCommand),
  },
  {
    name: 'inspect-transcript',
    sharedFlags: ['model', 'json'],
    register: () => import('./inspect-transcript.ts').then((m) => m.registerInspectTranscriptCommand),
  },
  {
    name: 'models',
    sharedFlags: ['modelTable', 'date', 'json'],
    register: () => import('./models.ts').then((m) => m.registerModelsCommand),
  },
  {
    name: 'plan',
    sharedFlags: ['integrationCheck', 'model', 'out'],
    register: () => import('./plan.ts').then((m) => m.registerPlanCommand),
  },
  {
    name: 'check-file',
    sharedFlags: [],
    register: () => import('./check-file.ts').then((m) => m.registerCheckFileCommand),
  },
  {
    name: 'proxy',
    sharedFlags: [
      'host',
      'port',
      'logDir',
      'report',
      'json',
      'modelTable',
      'maskHeader',
      'maxConnections',
      'headersTimeoutMs',
      'requestTimeoutMs',
    ],
    register: () => import('./proxy.ts').then((m) => m.registerProxyCommand),
  },
  { name: 'mcp', sharedFlags: [], register: () => import('./mcp.ts').then((m) => m.registerMcpCommand) },
  {
    name: 'report',
    sharedFlags: ['out', 'modelTable', 'json'],
    register: () => import('./report.ts').then((m) => m.registerReportCommand),
  },
  {
    name: 'run',
    sharedFlags: [
      'api',
      'provider',
      'model',
      'json',
      'parentFromClaudeTranscript',
      'report',
      'redis',
      'redisTimeoutMs',
      'modelTable',
      'dryRun',
      'maxUsd',
      'assume',
      'integrationCheck',
      'allowAsks',
    ],
    register: () => import('./run.ts').then((m) => m.registerRunCommand),
  },
  {
    name: 'resume',
    sharedFlags: [
      'api',
      'provider',
      'json',
      'modelTable',
      'redis',
      'redisTimeoutMs',
      'maxUsd',
      'integrationCheck',
      'allowAsks',
      'report',
    ],
    register: () => import('./resume.ts').then((m) => m.registerResumeCommand),
  },
  {
    name: 'worker',
    sharedFlags: ['redis', 'redisTimeoutMs'],
    register: () => import('./worker.ts').then((m) => m.registerWorkerCommand),
  },
  // review a run, apply its forks' branches, remove what it made (docs/review.md)
  {
    name: 'status',
    sharedFlags: ['json', 'repo', 'modelTable'],
    register: () => import('./status.ts').then((m) => m.registerStatusCommand),
  },
  { name: 'diff', sharedFlags: ['repo'], register: () => import('./diff.ts').then((m) => m.registerDiffCommand) },
  {
    name: 'merge',
    sharedFlags: ['dryRun', 'json', 'repo', 'integrationCheck'],
    register: () => import('./merge.ts').then((m) => m.registerMergeCommand),
  },
  {
    name: 'clean',
    sharedFlags: ['dryRun', 'json', 'repo'],
    register: () => import('./clean.ts').then((m) => m.registerCleanCommand),
  },
  {
    name: 'push',
    sharedFlags: ['json', 'repo'],
    register: () => import('./push.ts').then((m) => m.registerPushCommand),
  },
];
