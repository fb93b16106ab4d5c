import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';

/** A recorded Claude Code session fixture (scripts/session-to-fixture.ts): its transcript and the wire requests. */
export function sessionFixture(dir: string) {
  const session = join(dir, 'session.jsonl');
  const wire = (n: string) =>
    JSON.parse(readFileSync(join(dir, 'wire', n), 'utf8')) as {
      body: Record<string, unknown>;
      cache: { markers: { path: string; tokens: number }[] };
    };
  const lines = readFileSync(session, 'utf8')
    .trim()
    .split('\n')
    .map((l, i) => ({ line: i + 1, value: JSON.parse(l) as unknown }));
  return { session, wire, lines };
}

/** The request's bytes from the start up to the end of its last marked block. */
export function upToLastMarker(request: Record<string, unknown>): string {
  const text = JSON.stringify({ tools: request['tools'], system: request['system'], messages: request['messages'] });
  const marker = '"cache_control":{"type":"ephemeral"}}';
  return text.slice(0, text.lastIndexOf(marker) + marker.length);
}

/**
 * Serve the session's wire requests again, as Claude Code sent them, to an emulator: its cache
 * then holds the session's prefix, as the API's did for the live session. Returns the last
 * response's text (its usage is what this emulator cached of the scrubbed prefix).
 */
export async function replayWire(url: string, bodies: Record<string, unknown>[]): Promise<string> {
  let text = '';
  for (const body of bodies) {
    const res = await fetch(`${url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    text = await res.text();
  }
  return text;
}
