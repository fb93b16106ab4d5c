// The layering check (`npm run check:layers`, run by .ci/run): who may import whom inside
// src/ and workers/. CONTRIBUTING.md ("Directions") explains the layers; this file is what enforces them.
// Type-only imports count like any other (tsPreCompilationDeps): a type is a dependency too.

// Modules every layer may use: the root utilities (errors, validation, clock, JSON reading…)
// and src/wire/ (constants of the request bytes both the client side and the emulator share).
// They import nothing but each other.
const BASE = '^src/(wire/|[^/]+[.]ts$)';
const ENTRIES = '^src/(index|testing|ai-sdk)[.]ts$';

/** `folder` may import only itself, the base and the listed folders under src/. */
function only(folder, allowed) {
  const to = [folder, ...allowed].join('|');
  return {
    name: `${folder}-imports-only`,
    comment: `src/${folder}/ may import ${allowed.length ? allowed.map((f) => `src/${f}/`).join(', ') : 'nothing of forkcache'} (and the base: root utilities, src/wire/)`,
    severity: 'error',
    from: { path: `^src/${folder}/` },
    to: { path: '^src/', pathNot: [`^src/(${to})/`, BASE] },
  };
}

module.exports = {
  forbidden: [
    {
      name: 'tool-handlers-only-through-the-gate',
      comment:
        "A tool's handler is keyed by RUN (src/tools/client-tools/handler.ts): only the gate (src/tools/executor.ts) and the modules that declare tools import it, so no other code can run a tool past the deny list, the policy and the bounds",
      severity: 'error',
      from: {
        pathNot: '^src/tools/(executor[.]ts|client-tools/(handler|types|common|forkcache)[.]ts)$',
      },
      to: { path: '^src/tools/client-tools/handler[.]ts$' },
    },
    {
      name: 'base-imports-base',
      comment: 'The root utilities and src/wire/ import nothing of forkcache but each other',
      severity: 'error',
      from: { path: BASE, pathNot: ENTRIES },
      to: { path: '^src/', pathNot: BASE },
    },
    {
      name: 'nothing-imports-cli',
      comment: 'src/cli/ is the top: it may import everything, nothing imports it',
      severity: 'error',
      from: { pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'nothing-imports-the-entries',
      comment: 'src/index.ts and src/testing.ts are for users; code inside src/ imports the module itself',
      severity: 'error',
      from: { path: '^src/', pathNot: ENTRIES },
      to: { path: ENTRIES },
    },
    only('models', []),
    only('rate-limits', []),
    only('fork', []),
    only('tools', []),
    only('ledger', ['models']),
    // What a fan-out would cost before it runs: the economics model, its sweeps and the run estimator.
    only('economics', ['ledger', 'models']),
    only('prefix', ['fork']),
    // A provider lays out the frozen head (prefix) and the fork's suffix in its wire format and
    // maps its usage to the ledger's; the loop drives it.
    only('provider', ['rate-limits', 'prefix', 'fork', 'ledger']),
    only('gate', ['rate-limits', 'loop']),
    only('loop', ['provider', 'tools', 'fork', 'prefix', 'ledger', 'rate-limits']),
    only('run-dir', ['ledger', 'fork', 'prefix', 'tools', 'loop']),
    only('pool', ['loop', 'prefix', 'provider', 'tools', 'fork', 'rate-limits', 'run-dir']),
    only('agent', ['fork', 'ledger', 'loop', 'prefix', 'tools']),
    only('distributed', ['pool', 'run-dir', 'loop', 'prefix', 'provider', 'gate', 'rate-limits', 'tools', 'fork']),
    only('engine', [
      'agent',
      'pool',
      'distributed',
      'gate',
      'run-dir',
      'prefix',
      'fork',
      'ledger',
      'models',
      'provider',
      'loop',
      'tools',
      'rate-limits',
    ]),
    // forkcache/ai-sdk drives an engine from an AI SDK app (its own entry, src/ai-sdk.ts)
    only('ai-sdk', ['engine', 'agent', 'fork', 'ledger', 'tools']),
    // The emulator stands in for the API: it knows the wire, never forkcache's client side.
    only('emulator', ['models', 'ledger', 'rate-limits']),
    only('proxy', ['emulator', 'gate', 'ledger', 'models', 'report']),
    only('report', ['run-dir', 'ledger', 'economics', 'models', 'fork']),
    // The MCP server: its fork tool claims a call the proxy captured and fans out on the engine.
    only('mcp', ['engine', 'proxy', 'fork', 'agent']),
    {
      name: 'workers-thin',
      comment:
        'workers/ holds the thin Piscina entry: it attaches the frozen prefix and hands over to src/pool (and the types it passes on); nothing else',
      severity: 'error',
      from: { path: '^workers/' },
      to: { path: '^src/', pathNot: ['^src/(pool|prefix|loop)/', BASE] },
    },
    {
      name: 'nothing-imports-workers',
      comment: 'A worker entry is started by Piscina from its file (src/pool/worker-file.ts), never imported',
      severity: 'error',
      from: { path: '^(src|workers)/' },
      to: { path: '^workers/' },
    },
    {
      name: 'no-folder-cycles',
      comment: 'Two folders that import each other are one layer in disguise',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-circular',
      comment: 'Modules that import each other (types included) cannot be read or tested apart',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-orphans',
      comment: 'A module nothing imports is dead code (the entries and the CLI excepted; workers/ is started by file)',
      severity: 'error',
      from: { orphan: true, path: '^src/', pathNot: [ENTRIES, '^src/cli/main[.]ts$'] },
      to: {},
    },
    {
      name: 'src-not-to-tests',
      comment: 'The package never imports its tests, benchmarks or scripts',
      severity: 'error',
      from: { path: '^(src|workers)/' },
      to: { path: '^(test|bench|scripts)/' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that does not resolve (a moved file, a typo in a .ts specifier)',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'not-to-dev-dep',
      comment: 'src/ and workers/ ship: they may not import a devDependency (optional peers are loaded on first use)',
      severity: 'error',
      from: { path: '^(src|workers)/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only', 'npm-peer'] },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // `./x.ts` specifiers (allowImportingTsExtensions) resolve as written.
    // conditionNames: packages whose subpaths resolve only through their `exports` map (@modelcontextprotocol/sdk)
    enhancedResolveOptions: {
      extensions: ['.ts', '.js', '.json'],
      exportsFields: ['exports'],
      conditionNames: ['import', 'node', 'default'],
    },
    doNotFollow: { path: 'node_modules' },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
