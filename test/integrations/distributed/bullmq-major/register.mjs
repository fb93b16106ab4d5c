// `node --import ./register.mjs …`: the process loads `bullmq` as the package named in
// FORKCACHE_TEST_BULLMQ (an npm alias of another major, e.g. `bullmq6`), so one installed tree
// tests forkcache's distributed backend on each bullmq major it supports.
import { register } from 'node:module';

register('./resolve.mjs', import.meta.url, { data: { as: process.env.FORKCACHE_TEST_BULLMQ ?? 'bullmq' } });
