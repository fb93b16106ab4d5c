import { readFileSync } from 'node:fs';

/** A fresh, mutable copy of a JSON fixture under test/fixtures/. */
export function fixture<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as T;
}

export const decode = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
