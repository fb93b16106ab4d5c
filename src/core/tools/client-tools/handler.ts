/**
 * The key of a tool's handler on its declaration (`ClientTool`). Only the gate
 * (src/core/tools/executor.ts) and the modules that declare tools import it: code holding a tool
 * set can read its names, capabilities and schemas, but cannot call a handler without passing
 * the gate (deny list, policy, bounds, redaction). `npm run check:layers` enforces who imports it.
 */
export const RUN: unique symbol = Symbol('forkcache.tool.run');
