#!/usr/bin/env node
// Runs the compiled CLI when `npm run build` has produced dist/, else the TypeScript sources
// through tsx (a development install has it).
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/src/cli/main.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/main.ts', import.meta.url).href);
}
