import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { readJsonFile } from '../util/json-file.ts';
import { SIGNATURE_FILE, SIGNED_FILES } from './files.ts';
import { fileMac } from './run-mac.ts';
import type { RunKey } from './run-key.ts';

/** `signature.json`: which key signed the fan-out's files, and their MACs (run-mac.ts). */
const signatureSchema = z.strictObject({
  v: z.literal(1),
  key: z.string().regex(/^[0-9a-f]{8}$/),
  files: z.record(z.string(), z.string().regex(/^[0-9a-f]{32}$/)),
});

/** Sign the fan-out's manifest and snapshot as they are on disk now. */
export function signRunFiles(dir: string, fanOutId: string, key: RunKey): void {
  const files: Record<string, string> = {};
  for (const name of SIGNED_FILES) files[name] = fileMac(key, fanOutId, name, readFileSync(join(dir, name)));
  writeFileSync(join(dir, SIGNATURE_FILE), `${JSON.stringify({ v: 1, key: key.id, files }, null, 2)}\n`);
}

/** Why the fan-out's signed files do not verify, or undefined when they do. */
export type FileVerdict =
  undefined | { kind: 'unsigned' | 'tampered'; where: string } | { kind: 'other-key'; where: string; keyId: string };

export function checkRunFiles(dir: string, fanOutId: string, key: RunKey): FileVerdict {
  const path = join(dir, SIGNATURE_FILE);
  if (!existsSync(path)) return { kind: 'unsigned', where: SIGNATURE_FILE };
  let parsed: z.output<typeof signatureSchema>;
  try {
    // any failure to read it is a verdict here, not an error of its own
    parsed = signatureSchema.parse(readJsonFile(path, 'run signature'));
  } catch {
    return { kind: 'tampered', where: `${SIGNATURE_FILE} (not a signature file)` };
  }
  if (parsed.key !== key.id) return { kind: 'other-key', where: SIGNATURE_FILE, keyId: parsed.key };
  for (const name of SIGNED_FILES) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(dir, name));
    } catch {
      return { kind: 'tampered', where: `${name} (missing)` };
    }
    if (parsed.files[name] !== fileMac(key, fanOutId, name, bytes)) return { kind: 'tampered', where: name };
  }
  return undefined;
}
