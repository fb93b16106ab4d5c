import { readFileSync } from 'node:fs';

/** A fresh, mutable copy of a JSON fixture under test/fixtures/. */
export function fixture<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as T;
}

export const decode = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

/**
 * Put `process.env` back as `saved` (a copy taken before) in place: unit files share their
 * worker's process (vitest.config.ts), and an object assigned to `process.env` would stay
 * for the files after, with none of the environment's string conversion.
 */
export function restoreEnv(saved: Readonly<Record<string, string | undefined>>): void {
  for (const key of Object.keys(process.env)) if (!Object.hasOwn(saved, key)) delete process.env[key];
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
}
