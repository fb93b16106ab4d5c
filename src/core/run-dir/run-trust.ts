import { existsSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ForkcacheError } from '../util/errors.ts';
import { FORKS_DIR } from './files.ts';
import { readFanOutDir } from './manifest.ts';
import { readJsonl } from './jsonl.ts';
import { chainSeed, type LineVerdict, signLine, splitSigned, verifyLines } from './run-mac.ts';
import { STATE_DIR_ENV } from '../util/state-dir.ts';
import { loadRunKey, type RunKey } from './run-key.ts';
import { checkRunFiles, type FileVerdict, signRunFiles } from './run-signature.ts';

/*
 * What `resume` checks before it trusts a run directory: the manifest and snapshot match
 * their signature, and every transcript's records their chain, all under this machine's run
 * key. A fork can write the run directory when it lies in its workspace and bash is not
 * sandboxed; it rewrote its manifest to allow bash unsandboxed on `/` (issue 24, route 2).
 */

export interface TrustOptions {
  /**
   * Trust a directory that carries no signature (a run of an older forkcache) or one signed by
   * another key (copied from another machine), as it is now: it is signed with this machine's
   * key, then resumed. Never a directory changed since this key signed it.
   */
  readonly trustUnsigned?: boolean | undefined;
}

type Problem = { kind: 'unsigned' | 'tampered' | 'other-key'; where: string; keyId?: string | undefined };

function transcriptsOf(dir: string): string[] {
  const forks = join(dir, FORKS_DIR);
  if (!existsSync(forks)) return [];
  return readdirSync(forks)
    .filter((n) => n.endsWith('.jsonl'))
    .sort()
    .map((n) => join(forks, n));
}

/** A transcript's verdict, with its lines as read (complete lines only: a torn last one is dropped). */
function checkTranscript(key: RunKey, path: string): Problem | undefined {
  const verdict: LineVerdict = verifyLines(key, path, readJsonl(path, 'transcript'));
  if (verdict === undefined) return undefined;
  const where = `${FORKS_DIR}/${basename(path)}:${verdict.line}`;
  // a line without this key's MAC among lines with it was stripped or inserted: changed
  if (verdict.kind !== 'tampered' && verdict.signed) return { kind: 'tampered', where };
  return { kind: verdict.kind, where, keyId: verdict.keyId };
}

function problemOf(verdict: FileVerdict): Problem | undefined {
  return verdict === undefined ? undefined : { ...verdict, keyId: 'keyId' in verdict ? verdict.keyId : undefined };
}

/** Sign a run directory as it is now: its files, and every transcript record again (in order). */
function resign(dir: string, key: RunKey): void {
  signRunFiles(dir, basename(dir), key);
  for (const path of transcriptsOf(dir)) {
    let chain = chainSeed(key, path);
    const lines = readJsonl(path, 'transcript').map(({ raw }) => {
      const signed = signLine(key, chain, splitSigned(raw)?.body ?? raw);
      chain = signed.mac;
      return signed.line;
    });
    const temp = `${path}.resign-${process.pid}`;
    writeFileSync(temp, lines.map((l) => `${l}\n`).join(''));
    renameSync(temp, path);
  }
}

function refusal(dir: string, problem: Problem, key: RunKey): ForkcacheError {
  const at = `${dir}: ${problem.where}`;
  const data = { path: dir, where: problem.where };
  switch (problem.kind) {
    case 'unsigned':
      return new ForkcacheError(
        'RUN_DIR_UNSIGNED',
        `${at} carries no signature: the run was written by a forkcache without signed run directories, or its signatures were removed. resume continues only what this machine's forkcache signed; if you trust this directory as it is, resume it with --trust-unsigned (it is then signed)`,
        { data },
      );
    case 'other-key':
      return new ForkcacheError(
        'RUN_DIR_OTHER_KEY',
        `${at} was signed with another key (key ${problem.keyId ?? '?'}; this machine's is ${key.id}): the directory was copied from another machine or user, or ${STATE_DIR_ENV} points elsewhere than when it ran. If you trust it as it is, resume it with --trust-unsigned (it is then signed with this machine's key)`,
        { data: { ...data, keyId: problem.keyId } },
      );
    case 'tampered':
      return new ForkcacheError(
        'RUN_DIR_TAMPERED',
        `${at} does not match its signature: it was changed after forkcache wrote it (by a fork's command, or another program with access to the run directory). resume will not continue it: start the run again, or restore the directory from a copy`,
        { data },
      );
  }
}

/**
 * Refuse a run directory this machine's forkcache did not sign as it is (RUN_DIR_UNSIGNED,
 * RUN_DIR_OTHER_KEY, RUN_DIR_TAMPERED, each naming the file and line); with `trustUnsigned`, an
 * unsigned or foreign one is signed instead. Returns what was adopted that way (for a note).
 */
export function trustFanOutDir(dir: string, options: TrustOptions = {}, key: RunKey = loadRunKey()): string[] {
  // not a run directory at all (no manifest, a malformed one): that error says more than "unsigned"
  readFanOutDir(dir);
  const problems: Problem[] = [];
  const files = problemOf(checkRunFiles(dir, basename(dir), key));
  if (files) problems.push(files);
  for (const path of transcriptsOf(dir)) {
    const problem = checkTranscript(key, path);
    if (problem) problems.push(problem);
  }
  if (problems.length === 0) return [];
  const tampered = problems.find((p) => p.kind === 'tampered');
  if (tampered) throw refusal(dir, tampered, key);
  if (!options.trustUnsigned) throw refusal(dir, problems[0] as Problem, key);
  resign(dir, key);
  return problems.map((p) => `${p.where}: ${p.kind === 'unsigned' ? 'unsigned' : `signed by key ${p.keyId ?? '?'}`}`);
}

/** The error for a transcript read during a run whose records do not verify (run-mac.ts). */
export function transcriptRefusal(path: string, verdict: NonNullable<LineVerdict>, key: RunKey): ForkcacheError {
  const kind = verdict.kind !== 'tampered' && verdict.signed ? 'tampered' : verdict.kind;
  const dir = join(path, '..', '..');
  return refusal(dir, { kind, where: `${FORKS_DIR}/${basename(path)}:${verdict.line}`, keyId: verdict.keyId }, key);
}
