import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VERSION } from '../../../src/core/util/version.ts';

describe('VERSION', () => {
  it("is package.json's version, so `forkcache --version` and the MCP server name the release that is installed", () => {
    const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(VERSION).toBe(manifest.version);
  });
});
