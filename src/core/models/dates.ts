import { z } from 'zod';

/**
 * A calendar date `YYYY-MM-DD` (UTC), the form every date of the catalogue and of the CLI's
 * `--date` is written in. The pattern alone accepts `2026-13-45` and `2026-02-31`; only a round
 * trip through `Date` tells a real day from those.
 */
function isCalendarDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const at = Date.parse(`${text}T00:00:00Z`);
  return !Number.isNaN(at) && new Date(at).toISOString().slice(0, 10) === text;
}

/** Zod schema of a calendar date, with the message a user sees for each way it can be wrong. */
export const calendarDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date YYYY-MM-DD')
  .refine(isCalendarDate, 'not a calendar date');

/** Midnight UTC of a calendar date, epoch ms. */
export function dayStart(date: string): number {
  return Date.parse(`${date}T00:00:00Z`);
}
