import { probeBubblewrap } from '../../../core/tools/sandbox/bwrap-probe.ts';
import { describeSandbox, type SandboxReport, sandboxLine } from '../../../core/tools/sandbox/report.ts';
import { FILE_TOOL_NAMES } from '../../../core/wire/tool-names.ts';
import type { HostFacts, HostPolicyOptions, HostSettings } from './policy.ts';

/** A host's own sandbox: probed on it at start, said in its start lines, reported per fork. */
interface HostSandbox {
  facts: HostFacts;
  /** What the host says at start about where jobs' commands run. */
  line: string;
  /** Where one fork's bash and check run here (undefined: the fork may run no command). */
  sandboxFor(settings: HostSettings): SandboxReport | undefined;
}

/**
 * Probe this host's bubblewrap once. Without a working one, a host whose floor asks for a
 * sandbox (`auto`, the default, or `bwrap`) runs no command a job names: `auto` on a
 * submitter's own machine means "sandbox if you can", but on a host it would hand its key and
 * files to whoever can get a job signed. Only `--sandbox none`, said explicitly, runs them
 * unsandboxed.
 */
export function probeHostSandbox(options: HostPolicyOptions): HostSandbox {
  const floor = options.sandbox ?? 'auto';
  const allowsBash = (options.allow ?? FILE_TOOL_NAMES).includes('bash');
  // a host that allows no bash runs no command a job names: nothing to probe
  const found = allowsBash ? probeBubblewrap() : undefined;
  const missing = found && 'missing' in found ? found.missing : undefined;
  const facts: HostFacts = floor !== 'none' && missing !== undefined ? { sandboxMissing: missing } : {};
  let line: string;
  if (!allowsBash) line = 'bash: not allowed on this host: jobs that run bash or a check are refused';
  else if (facts.sandboxMissing !== undefined)
    line = `bash is NOT sandboxed on this host (${missing}): jobs that run bash or a check are refused; install bubblewrap (Debian: apt-get install bubblewrap), or start with --sandbox none to run them with this host's rights`;
  else if (missing !== undefined)
    line = `bash is NOT sandboxed on this host (--sandbox none; ${missing}): jobs' bash and checks run with this host's rights: they can read its files and its environment (its API key) and reach the network`;
  else {
    const own = sandboxLine(describeSandbox('bwrap', { network: options.network === true }));
    line =
      floor === 'none'
        ? `${own}\nnote: --sandbox none: a job that asks for no sandbox runs bash with this host's rights (its API key readable)`
        : own;
  }
  return {
    facts,
    line,
    sandboxFor(settings) {
      if (!settings.tools.allow.includes('bash') && settings.loop.check === undefined) return undefined;
      const { sandbox, flags, limits } = settings.tools;
      try {
        return describeSandbox(sandbox, { network: flags.network, limits });
      } catch (err) {
        // `bwrap` asked for and missing here: the fork's executor refuses its commands
        return { choice: sandbox, kind: 'none', network: false, applied: [], missing: [], reason: String(err) };
      }
    },
  };
}
