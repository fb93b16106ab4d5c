// Issue 43's done-when run: one fan-out of 20 forks through the emulator's scripted model, 7 of
// them attacking the tool gate (a denied host tool, a host tool in denyTools, an edit that grows
// without bound, nested braces in glob and in grep's glob, a 3 MB read, a busy loop in bash),
// 13 benign. Prints the fork statuses, whether a denied handler ran, and the peak RSS.
// `npx tsx scripts/hostile-fan-out.mts`
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ForkEngine } from '../src/engine/engine.ts';
import { startEmulator } from '../src/emulator/start.ts';
import { findForkDirective } from '../src/emulator/scripts/conversation.ts';
import { formatReport } from '../src/emulator/scripts/directive.ts';
import type { ScriptedModel } from '../src/emulator/scripts/types.ts';
import { captureSnapshot } from '../src/fork/snapshot.ts';
import { TOOL_DECLARATIONS } from '../src/tools/declarations.ts';

const deep = (n: number, inner: string): string => `${'{'.repeat(n)}${inner}${'}'.repeat(n)}`;
const ATTACKS: Record<string, { name: string; input: Record<string, unknown> }> = {
  'attack host-deny': { name: 'post_comment', input: { body: 'spam' } },
  'attack host-denylist': { name: 'delete_ticket', input: { id: 'T-1' } },
  'attack edit-growth': {
    name: 'edit_file',
    input: { path: 'grow.txt', old_string: 'e', new_string: 'e'.repeat(4000), replace_all: true },
  },
  'attack glob-braces': { name: 'glob', input: { pattern: deep(40, 'a') } },
  'attack grep-braces': { name: 'grep', input: { pattern: 'a', glob: deep(30, 'a') } },
  'attack big-read': { name: 'read_file', input: { path: 'big.txt' } },
  'attack busy-loop': { name: 'bash', input: { command: 'while :; do :; done' } },
};

const attacker: ScriptedModel = {
  name: 'attacker',
  respond({ request }) {
    const fork = findForkDirective(request.messages);
    const attack = fork && fork.message === request.messages.length - 1 ? ATTACKS[fork.directive] : undefined;
    if (attack) return { content: [{ type: 'tool_use', ...attack }], stop_reason: 'tool_use' };
    const text = formatReport({
      scope: fork?.directive ?? '?',
      result: 'done',
      keyFiles: [],
      filesChanged: [],
      issues: [],
    });
    return { content: [{ type: 'text', text }], stop_reason: 'end_turn' };
  },
};

const ws = mkdtempSync(join(tmpdir(), 'hostile-'));
writeFileSync(join(ws, 'grow.txt'), 'e'.repeat(1000));
writeFileSync(join(ws, 'big.txt'), `${'x'.repeat(99)}\n`.repeat(30_000));
const hostCalls: string[] = [];
const emulator = await startEmulator({ latency: 'off', scripts: [attacker], script: 'attacker' });
const hostTool = (name: string) => ({ name, description: name, input_schema: { type: 'object', properties: {} } });
const parent = captureSnapshot({
  model: 'claude-sonnet-4-6',
  max_tokens: 4096,
  system: [{ type: 'text', text: 'You are a careful engineer. '.repeat(400) }],
  tools: [...TOOL_DECLARATIONS, hostTool('post_comment'), hostTool('delete_ticket')],
  messages: [{ role: 'user', content: 'Work through the list.' }],
});
const engine = await ForkEngine.create({
  baseURL: emulator.url,
  apiKey: 'test',
  workspace: ws,
  runDir: mkdtempSync(join(tmpdir(), 'hostile-runs-')),
  allow: ['read_file', 'list_dir', 'grep', 'glob', 'edit_file', 'write_file', 'bash'],
  toolLimits: { bashTimeoutMs: 2_000 },
  permissions: { tools: { post_comment: 'deny' } },
  denyTools: ['delete_ticket'],
  hostTools: {
    post_comment: { execute: () => (hostCalls.push('post_comment'), 'comment posted') },
    delete_ticket: { execute: () => (hostCalls.push('delete_ticket'), 'deleted') },
  },
});
const directives = [...Object.keys(ATTACKS), ...Array.from({ length: 13 }, (_, i) => `benign ${i + 1}`)];
try {
  const fan = engine.fanOut(parent, directives);
  const codes = new Map<string, string>();
  for await (const e of fan) if (e.type === 'tool-call') codes.set(e.forkId, `${e.name}: ${e.code ?? 'ok'}`);
  const { forks, summary } = await fan.settled();
  for (const f of forks) console.log(`${f.status.padEnd(10)} ${f.directive.padEnd(22)} ${codes.get(f.forkId) ?? ''}`);
  const benign = forks.filter((f) => f.directive.startsWith('benign'));
  console.log(`summary: ${forks.length} forks, ${summary.requests} requests`);
  console.log(`benign completed: ${benign.filter((f) => f.status === 'completed').length}/${benign.length}`);
  console.log(`denied handlers called: ${hostCalls.length}`);
  console.log(`peak RSS: ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
} finally {
  await engine.close();
  await emulator.close();
}
