import { Option, type Command } from 'commander';
import { z } from 'zod';
import { calendarDate } from '../core/models/dates.ts';
import { HEADER_NAME } from '../core/wire/credentials.ts';
import { providerIdSchema } from '../core/wire/providers.ts';
import { PROVIDER_IDS } from '../providers/registry.ts';
import { latencyNameSchema } from '../integrations/emulator/latency.ts';
import { intFlagIn, parseFlags, usdFlag } from './flags.ts';

/**
 * The flags more than one command takes, each declared once: its spelling, its one
 * description, its value's parser. A command names the ones it takes (`addFlags`, `flagSchema`)
 * and declares only the flags it alone takes. Rules the table keeps:
 *   - one meaning per name: where one name meant two things, one of them was renamed and the
 *     old spelling kept as a hidden alias (`aliases`) on the command that had it;
 *   - one unit rule: a duration is in milliseconds and its name ends in `-ms` (`<ms>`);
 *   - a flag of `run` says which plan field it overrides (`planField`) or why it has none
 *     (`justification`): a run is its plan, and a flag beside it must earn its place.
 */
export interface FlagDef {
  /** commander's spelling: `--json`, `--report [file]`, `--model <id>` */
  readonly spec: string;
  readonly description: string;
  /** the value's parser, from what commander hands over (a string, `true`, an array when repeatable) */
  readonly schema: z.ZodType;
  /** the flag may be given several times; its values are collected in order */
  readonly repeatable?: boolean;
  /** the plan field this flag overrides, where it has one */
  readonly planField?: string;
  /** why the flag has no plan field */
  readonly justification?: string;
}

/** `--api`: where the forks' requests go (`anthropic` is the historical name of `real`). */
export const API_CHOICES = ['auto', 'anthropic', 'real', 'emulator'] as const;

const file = z.string().min(1, 'expected a file name');
const ms = (min: number, max = 2_147_483_647) => intFlagIn(min, max);

export const FLAGS = {
  json: {
    spec: '--json',
    description:
      'print JSON on stdout instead of text: one object (one per fan-out or repository where the command goes over several); progress goes to stderr as plain lines',
    schema: z.boolean().default(false),
    justification: 'how the result is printed, not what the run does',
  },
  api: {
    spec: '--api <target>',
    description:
      "where the requests go: auto (the provider's real API when its key is set, else the emulator) | real (alias anthropic) | emulator",
    schema: z.enum(API_CHOICES, { error: `expected ${API_CHOICES.join(', ')}` }).default('auto'),
    justification:
      "where this machine sends the requests (a key in its environment), not what the plan asks; the plan's emulator block says how the emulator answers",
  },
  provider: {
    spec: '--provider <name>',
    description: `the provider whose API is spoken: ${PROVIDER_IDS.join(' | ')} (run: over the plan's provider; resume: must be the run's; demo and emulator: the API the emulator stands in for)`,
    schema: providerIdSchema.optional(),
    planField: 'provider',
  },
  model: {
    spec: '--model <id>',
    description:
      "the model (an id of the model catalogue, `forkcache models`): run, over the plan's and the parent's; plan, the parent's; inspect-transcript, over the session's",
    schema: z.string().min(1).optional(),
    planField: 'model',
  },
  modelTable: {
    spec: '--model-table <file>',
    description:
      "model catalogue JSON merged over the built-in one (models forkcache does not know, their prices and cache minimums; run: over the plan's modelTable)",
    schema: z.string().min(1).optional(),
    planField: 'modelTable',
  },
  report: {
    spec: '--report [file]',
    description: 'write the HTML report when done (default: report.html in the run directory)',
    schema: z.union([z.boolean(), file]).optional(),
    justification: 'an output written after the run, not part of what the forks do',
  },
  redis: {
    spec: '--redis <url>',
    description:
      'the Redis (BullMQ) that `forkcache worker` hosts take forks from: run and resume put their forks there (FORKCACHE_JOB_SECRET must be set)',
    schema: z
      .string()
      .regex(/^rediss?:\/\//, 'expected a redis:// URL')
      .optional(),
    justification:
      "which machines run the forks: this deployment's, not the plan's (the same plan runs here or on hosts)",
  },
  redisTimeoutMs: {
    spec: '--redis-timeout-ms <ms>',
    description:
      "with --redis: Redis silent this long stops the forks waiting on it (run, resume: the run ends, resume continues it; worker: this host's forks); default 30000",
    schema: ms(100).optional(),
    justification: 'a property of the Redis this machine reaches (see --redis)',
  },
  maxUsd: {
    spec: '--max-usd <usd>',
    description:
      "stop admitting turns once the run could cost more than this, counting every pass (run: over the plan's maxUsd; resume: default the cap the run was started with)",
    schema: usdFlag.optional(),
    planField: 'maxUsd',
  },
  integrationCheck: {
    spec: '--integration-check <command>',
    description:
      "after the forks end, merge them in an integration worktree and run this there (the plan's integrationCheck, which this overrides; needs isolation worktree; merge: only the forks it passes with are merged)",
    schema: z.string().trim().min(1, 'expected a shell command').optional(),
    planField: 'integrationCheck',
  },
  allowAsks: {
    spec: '--allow-asks',
    description: "answer yes to the plan's `ask` permissions (otherwise: a y/N prompt on a terminal, no elsewhere)",
    schema: z.boolean().default(false),
    justification:
      "the answer of the person at this terminal to the plan's `ask` permissions: the plan asks (permissions), this answers",
  },
  dryRun: {
    spec: '--dry-run',
    description:
      'say what the command would do and change nothing (run: estimate the whole run with its assumptions, sending only token counts, writing no run directory; clean: list what would be removed; merge: list every conflict)',
    schema: z.boolean().default(false),
    justification: 'a question about the plan, not a setting of it',
  },
  assume: {
    spec: '--assume <name=value>',
    description:
      'with run --dry-run or economics --whole-run: change a turn assumption (toolCallOutput, editOutput, editResult, reportOutput, verifyRead, turnOverhead)',
    schema: z.array(z.string()).default([]),
    repeatable: true,
    justification: "an estimate's guess about turns not yet taken, not a setting of the run",
  },
  parentFromClaudeTranscript: {
    spec: '--parent-from-claude-transcript <file>',
    description:
      'rebuild the parent from a Claude Code session transcript (.jsonl): run, the plan then has no "parent"; demo, instead of the scripted parent agent',
    schema: z.string().min(1, 'expected a .jsonl file').optional(),
    planField: 'parent',
  },
  repo: {
    spec: '--repo <name>',
    description: 'a plan over several repositories: only this one',
    schema: z.string().min(1).optional(),
  },
  date: {
    spec: '--date <YYYY-MM-DD>',
    description: 'prices and statuses in force on this date (default today)',
    schema: calendarDate.optional(),
  },
  out: {
    spec: '--out <file>',
    description:
      'the file to write (report: default report.html in the run directory, for --bench the results file with .html; plan: default stdout, the workspace then relative to the file)',
    schema: file.optional(),
  },
  host: {
    spec: '--host <host>',
    description: 'interface to bind',
    schema: z.string().min(1).default('127.0.0.1'),
  },
  port: {
    spec: '--port <n>',
    description: 'TCP port; 0 picks a free one',
    schema: intFlagIn(0, 65_535).default(0),
  },
  latency: {
    spec: '--latency <profile>',
    description: 'emulated latency: off | fast | realistic',
    schema: latencyNameSchema.default('fast'),
  },
  seed: {
    spec: '--seed <n>',
    description: "the emulator's seed: its fault draws (default 0) and ids (default random, unique across restarts)",
    schema: intFlagIn(-2_147_483_648, 2_147_483_647).optional(),
  },
  logDir: {
    spec: '--log-dir <dir>',
    description:
      'write every exchange (request, headers with keys masked, response) under DIR: the emulator one JSON file each, with its cache plan; the proxy appended to DIR/exchanges.jsonl',
    schema: z.string().min(1, 'expected a directory').optional(),
  },
  maskHeader: {
    spec: '--mask-header <name>',
    description:
      'mask this header too wherever exchanges are written (repeatable; x-api-key, authorization, api-key, cookie, … always are)',
    schema: z.array(z.string().regex(HEADER_NAME, 'expected a header name')).default([]),
    repeatable: true,
  },
  maxConnections: {
    spec: '--max-connections <n>',
    description: 'open client connections at once (default 1024)',
    schema: intFlagIn(1, 1_000_000).optional(),
  },
  headersTimeoutMs: {
    spec: '--headers-timeout-ms <ms>',
    description: 'a client must send its headers within this (default 60000)',
    schema: ms(1).optional(),
  },
  requestTimeoutMs: {
    spec: '--request-timeout-ms <ms>',
    description: 'a client must send its whole request within this (default 300000)',
    schema: ms(1).optional(),
  },
} as const satisfies Record<string, FlagDef>;

export type FlagKey = keyof typeof FLAGS;

/**
 * Old spellings kept working, hidden from `--help`: a flag renamed so that one name means one
 * thing (or so that every duration is `-ms`). Key: the command; value: old spelling → the option
 * key it now sets.
 */
export type FlagAliases = Readonly<Record<string, string>>;

/** A shared flag as a commander option (`defaultValue`: a per-command default commander shows). */
function optionOf(def: FlagDef, defaultValue?: string): Option {
  const option = new Option(def.spec, def.description);
  if (def.repeatable) option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
  if (defaultValue !== undefined) option.default(defaultValue);
  return option;
}

/** Add the shared flags `keys` to `command`, in that order (`defaults`: values commander shows in help). */
export function addFlags(
  command: Command,
  keys: readonly FlagKey[],
  defaults: Partial<Record<FlagKey, string>> = {},
): Command {
  for (const key of keys) command.addOption(optionOf(FLAGS[key], defaults[key]));
  return command;
}

/** Hidden options for old spellings (`--old-name <value>` → `newKey`); `parseCommandFlags` folds them in. */
export function addAliases(command: Command, aliases: FlagAliases): Command {
  for (const spelling of Object.keys(aliases)) command.addOption(new Option(spelling).hideHelp());
  return command;
}

type Picked<K extends FlagKey> = { [P in K]: (typeof FLAGS)[P]['schema'] };

/** The parsers of the shared flags `keys`, as one object schema a command may `.extend` with its own. */
export function flagSchema<K extends FlagKey>(keys: readonly K[]): z.ZodObject<Picked<K>> {
  return z.object(Object.fromEntries(keys.map((k) => [k, FLAGS[k].schema])) as Picked<K>);
}

/**
 * `parseFlags` with a command's hidden aliases folded into the keys they stand for: an old
 * spelling given counts (the new one may hold only its default), and errors name the new one.
 */
export function parseCommandFlags<S extends z.ZodType>(
  schema: S,
  raw: Record<string, unknown>,
  aliases: FlagAliases = {},
): z.output<S> {
  const folded: Record<string, unknown> = { ...raw };
  for (const [spelling, key] of Object.entries(aliases)) {
    const oldKey = spelling
      .replace(/^--/, '')
      .split(/\s/)[0]!
      .replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    if (folded[oldKey] !== undefined) folded[key] = folded[oldKey];
    delete folded[oldKey];
  }
  return parseFlags(schema, folded);
}

/**
 * The argument of every command that takes a run directory, one spelling (`<run-dir>`); a
 * command whose meaning of it is narrower says so in its own description.
 */
export const RUN_DIR_ARGUMENT = {
  name: '<run-dir>',
  description: 'a run directory, or a runs directory holding several',
} as const;

/** The shared flag `key` as a commander option (`defaultValue`: a per-command default, shown in help). */
export function flag(key: FlagKey, defaultValue?: string): Option {
  return optionOf(FLAGS[key], defaultValue);
}
