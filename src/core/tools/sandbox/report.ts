import { probeBubblewrap } from './bwrap-probe.ts';
import { DEFAULT_TOOL_LIMITS, type ToolLimits } from '../limits.ts';
import { plainContainment, resolveSandbox } from './sandbox.ts';
import type { SandboxChoice, SandboxKind } from './types.ts';
import { applyLimits } from './limits.ts';
import { workspaceDiskSupport } from '../git/workspace-disk.ts';

/**
 * Where bash really runs, and which protections hold: what `run` and `resume` print, and what
 * the summary carries (`sandbox`). Worked out on this machine exactly as the forks' executors
 * work it out (the same probe), from the settings the run really uses (the plan's, or the
 * manifest's on resume), so the line never says one thing while the forks do another.
 */
export interface SandboxReport {
  readonly choice: SandboxChoice;
  readonly kind: SandboxKind;
  /** Commands may reach the network: the plan allowed it (`network: true`), or nothing cuts it (`none`). */
  readonly network: boolean;
  /** Protections that hold. */
  readonly applied: readonly string[];
  /** Protections asked for that could not be applied here, each with why. */
  readonly missing: readonly string[];
  /** Why bash is not sandboxed (`kind: 'none'`). */
  readonly reason?: string | undefined;
}

interface SandboxSettings {
  readonly network?: boolean | undefined;
  readonly limits?: Partial<ToolLimits> | undefined;
  /** `worktree`: each fork has a worktree of its own, on a disk of its own where one can be made. */
  readonly isolation?: 'none' | 'worktree' | undefined;
}

const MIB = 'MiB';
const PLAIN_ESCAPE = 'killing what a command leaves running after `setsid` in a subshell or a double fork';

export function describeSandbox(choice: SandboxChoice, settings: SandboxSettings = {}): SandboxReport {
  const network = settings.network ?? false;
  const kind = resolveSandbox(choice); // throws for `bwrap` where it cannot run, as the executor does
  const found = probeBubblewrap();
  if (kind === 'none' || !('file' in found)) {
    const reason = choice === 'none' ? 'sandbox: "none" was chosen' : 'missing' in found ? found.missing : 'unknown';
    const contained = plainContainment();
    return {
      choice,
      kind: 'none',
      network: true,
      applied:
        'applied' in contained
          ? [`every process a command starts is killed when its call ends (${contained.applied})`]
          : [],
      missing: 'missing' in contained ? [`${PLAIN_ESCAPE} (${contained.missing})`] : [],
      reason,
    };
  }
  const limits = { ...DEFAULT_TOOL_LIMITS, ...settings.limits };
  const applied = [
    "own PID namespace and /proc (forkcache's process and environment invisible; the host kernel's symbols, keys, timers, boot line and disks masked)",
    'no capabilities',
    'read-only system directories and a minimal /etc (no /root, /home, /etc/shadow)',
    'the workspace the only writable host path; run directory, state directory and .git out of reach',
  ];
  const missing: string[] = [];
  const why = (feature: keyof typeof found.why): string => found.why[feature] ?? 'not supported';
  if (found.userns) applied.push('user namespace');
  else missing.push(`user namespace (${why('userns')})`);
  if (found.userns && !found.disableUserns) missing.push(`no nested user namespaces (${why('disableUserns')})`);
  if (network) applied.push('network allowed by the plan (network: true)');
  else if (found.net) applied.push('no network');
  else missing.push(`network isolation (${why('net')})`);
  if (found.size) applied.push(`/tmp ${limits.bashTmpMb} ${MIB}`);
  else missing.push(`a size cap on /tmp (${why('size')})`);
  const applies = applyLimits(limits, found.userns, true);
  if (settings.isolation === 'worktree') {
    const disk = workspaceDiskSupport();
    if ('ok' in disk)
      applied.push(`each worktree ${limits.maxWorkspaceMb} ${MIB} beyond its checkout (a disk of its own)`);
    else missing.push(`a total disk bound per worktree (${disk.missing}; each file is still capped)`);
  }
  return {
    choice,
    kind,
    network: network || !found.net,
    applied: [...applied, ...applies.applied],
    missing: [...missing, ...applies.missing],
  };
}

/** The line a run prints before it starts, when its forks may use bash. */
export function sandboxLine(report: SandboxReport): string {
  if (report.kind === 'none')
    return `note: bash is NOT sandboxed (${report.reason ?? 'no sandbox'}): commands run with your rights, can read and change your files (the run directory included) and this process's environment, and reach the network; their output is redacted of the API key.${report.missing.length === 0 ? '' : ` NOT applied here: ${report.missing.join('; ')}: such processes may outlive the call and forkcache.`}${report.choice === 'none' ? '' : ' Install bubblewrap (Debian: apt-get install bubblewrap) to sandbox them.'}`;
  const head = `bash sandbox: bubblewrap: ${report.applied.join('; ')}`;
  return report.missing.length === 0 ? head : `${head}\nnote: NOT applied here: ${report.missing.join('; ')}`;
}
