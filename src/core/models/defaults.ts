/**
 * The model forkcache uses when none is given (economics, demo, examples, the fallback
 * snapshot): the documentation's recommended model on the catalogue's date. It must be a
 * `current` row of catalogue.json (a test checks).
 */
export const DEFAULT_MODEL = 'claude-opus-5-5';
