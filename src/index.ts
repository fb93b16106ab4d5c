// The public API of forkcache. Named exports only; types with `export type`.
export { ForkcacheError, ERROR_CODES, hasCode, toWireError, fromWireError } from './errors.ts';
export type { ErrorCode, WireError } from './errors.ts';
export { DEFAULT_MODEL_TABLE, MODEL_TABLE_DATE, findModel, requireModel, loadModelTable, mergeModelTable } from './ledger/models.ts';
export type { ModelInfo, ModelTable } from './ledger/models.ts';
export { VERSION } from './version.ts';
