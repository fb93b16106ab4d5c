import path from 'node:path';
import { probeProgram } from '../../util/exec-file.ts';
import { findExecutable } from '../find-executable.ts';
import { systemViewArgs } from './view.ts';

/**
 * The optional parts of the bubblewrap sandbox, each probed on this machine: a kernel or a
 * container may refuse one (user namespaces are often disabled; bwrap before 0.8 has no
 * `--size` nor `--disable-userns`) and the sandbox then runs without it, saying which.
 */
export interface BwrapFeatures {
  /** The bwrap binary. */
  readonly file: string;
  /** `--unshare-user`: a user namespace (no capability left in the host's namespace, bounding set empty). */
  readonly userns: boolean;
  /** `--disable-userns`: commands cannot create user namespaces of their own. */
  readonly disableUserns: boolean;
  /** `--unshare-net`: an empty network namespace (only a loopback of its own). */
  readonly net: boolean;
  /** `--size` before `--tmpfs`: /tmp capped. */
  readonly size: boolean;
  /** Why each missing feature is missing (bwrap's first error line). */
  readonly why: Readonly<Partial<Record<OptionalFeature, string>>>;
}

export type OptionalFeature = 'userns' | 'disableUserns' | 'net' | 'size';

/** The namespaces and privileges of every sandbox, with the optional parts `features` allows. */
export function hardeningArgs(features: Omit<BwrapFeatures, 'file' | 'why'>, network: boolean): string[] {
  return [
    '--unshare-pid', // a fresh /proc: no /proc/$PPID/environ of ours, setsid cannot leave it
    '--unshare-ipc',
    '--unshare-uts',
    ...(features.userns ? ['--unshare-user'] : []),
    ...(features.userns && features.disableUserns ? ['--disable-userns'] : []),
    ...(features.net && !network ? ['--unshare-net'] : []),
    // run as root, bwrap kept every capability: `mount -o remount,rw /` worked (issue 24, route 3)
    '--cap-drop',
    'ALL',
    '--die-with-parent', // the whole namespace dies with us, kill -9 included
    '--new-session',
  ];
}

function onPath(name: string, envPath: string | undefined): string | undefined {
  return findExecutable(name, (envPath ?? '/usr/bin:/bin').split(path.delimiter));
}

function tries(file: string, features: Omit<BwrapFeatures, 'file' | 'why'>): string | undefined {
  const args = [
    ...hardeningArgs(features, false),
    ...systemViewArgs(),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    ...(features.size ? ['--size', '1048576'] : []),
    '--tmpfs',
    '/tmp',
    '--remount-ro',
    '/',
    '--clearenv',
    'true',
  ];
  return probeProgram(file, args, { PATH: '/usr/bin:/bin' });
}

let probed: BwrapFeatures | { missing: string } | undefined;

/**
 * bubblewrap on this machine: its features, or why it cannot run (not installed, not Linux,
 * namespaces refused). Probed once per thread by running `true` in the sandbox: with every
 * feature first, then without the ones that fail, in the order below.
 */
export function probeBubblewrap(): BwrapFeatures | { missing: string } {
  if (probed !== undefined) return probed;
  const file = process.platform === 'linux' ? onPath('bwrap', process.env['PATH']) : undefined;
  if (file === undefined) {
    probed = { missing: process.platform === 'linux' ? 'bubblewrap is not installed' : 'bubblewrap needs Linux' };
    return probed;
  }
  const features = { userns: true, disableUserns: true, net: true, size: true };
  const why: Partial<Record<OptionalFeature, string>> = {};
  const dropped: OptionalFeature[] = [];
  let error = tries(file, features);
  for (const drop of ['disableUserns', 'size', 'userns', 'net'] as const) {
    if (error === undefined) break;
    features[drop] = false;
    if (drop === 'userns') features.disableUserns = false;
    why[drop] = error;
    dropped.push(drop);
    error = tries(file, features);
  }
  // a feature dropped on the way may not have been the one that failed: take back what works
  for (const feature of error === undefined ? dropped.reverse() : []) {
    const again = { ...features, [feature]: true, ...(feature === 'disableUserns' ? { userns: features.userns } : {}) };
    if (feature === 'disableUserns' && !again.userns) continue;
    if (tries(file, again) === undefined) {
      features[feature] = true;
      delete why[feature];
    }
  }
  if (!features.userns) {
    features.disableUserns = false;
    why.disableUserns ??= 'needs a user namespace';
  }
  probed =
    error === undefined
      ? { file, ...features, why }
      : { missing: `bubblewrap cannot create its namespaces here (${error})` };
  return probed;
}

/** The bwrap binary, if it is installed and works here (see `probeBubblewrap`). */
export function findBubblewrap(): string | undefined {
  const found = probeBubblewrap();
  return 'file' in found ? found.file : undefined;
}
