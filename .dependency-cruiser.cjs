// The layering check (`npm run check:layers`, run by .ci/run): who may import whom inside
// src/ and workers/. The picture (docs/architecture.md, CONTRIBUTING.md "Directions"):
//
//   cli  ──▶ anything          integrations ──▶ core, providers (and the sibling edges below)
//   providers ──▶ core         core ──▶ core only          workers/ ──▶ core, providers
//
// Type-only imports count like any other (tsPreCompilationDeps): a type is a dependency too.
// Inside core the folders may use each other, but never in a circle (no-folder-cycles).

// The base every room may use: core's utilities (errors, validation, clock, the JSON reader…)
// and core/wire/ (the request bytes both the client side and the emulator agree on). They
// import nothing but each other.
const BASE = '^src/core/(util|wire)/';
const ENTRIES = '^src/(index|testing|ai-sdk)[.]ts$';

// The engine loads the distributed backend on first use (option `distributed`).
const CORE_USES_INTEGRATIONS = ['^src/core/engine/engine[.]ts$', '^src/core/engine/options[.]ts$'];
const PROVIDERS_USE_INTEGRATIONS = [];
// An integration uses core and the providers; another integration only along these edges.
const INTEGRATION_USES = {
  'ai-sdk': [],
  distributed: [],
  economics: [],
  emulator: [],
  mcp: ['proxy'],
  proxy: ['emulator', 'report'],
  report: ['economics'],
};

module.exports = {
  forbidden: [
    {
      name: 'core-imports-core',
      comment:
        'src/core/ is what every use needs: it imports no provider, integration or CLI (the distributed backend above excepted). A provider reaches core as its adapter (src/core/engine/provider.ts), handed in by the entries and the fork worker',
      severity: 'error',
      from: { path: '^src/core/', pathNot: CORE_USES_INTEGRATIONS },
      to: { path: '^src/', pathNot: '^src/core/' },
    },
    {
      name: 'core-exceptions-go-no-further',
      comment: 'A core file named above may reach the distributed backend, nothing else outside core',
      severity: 'error',
      from: { path: CORE_USES_INTEGRATIONS },
      to: { path: '^src/', pathNot: ['^src/core/', '^src/integrations/distributed/'] },
    },
    {
      name: 'providers-import-core',
      comment:
        "A provider speaks its wire with what core gives it (prefix, fork, ledger, rate limits) and other providers' shared plumbing",
      severity: 'error',
      from: { path: '^src/providers/', pathNot: PROVIDERS_USE_INTEGRATIONS },
      to: { path: '^src/', pathNot: '^src/(core|providers)/' },
    },
    ...Object.entries(INTEGRATION_USES).map(([name, uses]) => ({
      name: `integration-${name}-imports-core-providers${uses.length ? '-' + uses.join('-') : ''}`,
      comment: `src/integrations/${name}/ may import core, providers${uses.length ? ' and src/integrations/' + uses.join('/, src/integrations/') + '/' : ''}`,
      severity: 'error',
      from: { path: `^src/integrations/${name}/` },
      to: { path: '^src/', pathNot: [`^src/(core|providers|integrations/(${[name, ...uses].join('|')}))/`] },
    })),
    {
      name: 'nothing-imports-cli',
      comment: 'src/cli/ is the top: it may import everything, nothing imports it',
      severity: 'error',
      from: { pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'base-imports-base',
      comment: "core's utilities and core/wire/ import nothing of forkcache but each other",
      severity: 'error',
      from: { path: BASE },
      to: { path: '^src/', pathNot: BASE },
    },
    {
      name: 'nothing-imports-the-entries',
      comment:
        'src/index.ts, src/testing.ts and src/ai-sdk.ts are for users; code inside src/ imports the module itself',
      severity: 'error',
      from: { path: '^src/', pathNot: ENTRIES },
      to: { path: ENTRIES },
    },
    {
      name: 'tool-handlers-only-through-the-gate',
      comment:
        "A tool's handler is keyed by RUN (src/core/tools/client-tools/handler.ts): only the gate (src/core/tools/executor.ts) and the modules that declare tools import it, so no other code can run a tool past the deny list, the policy and the bounds",
      severity: 'error',
      from: {
        pathNot: [
          '^src/core/tools/executor[.]ts$',
          '^src/core/tools/client-tools/handler[.]ts$',
          '^src/core/tools/client-tools/types[.]ts$',
          '^src/core/tools/client-tools/common[.]ts$',
          '^src/core/tools/client-tools/forkcache[.]ts$',
        ],
      },
      to: { path: '^src/core/tools/client-tools/handler[.]ts$' },
    },
    {
      name: 'workers-thin',
      comment:
        "workers/ holds the thin Piscina entry: it attaches the frozen prefix and hands over to core (and a provider's types); nothing else",
      severity: 'error',
      from: { path: '^workers/' },
      to: { path: '^src/', pathNot: '^src/(core|providers)/' },
    },
    {
      name: 'nothing-imports-workers',
      comment: 'A worker entry is started by Piscina from its file (src/core/pool/worker-file.ts), never imported',
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
