/** Past this many categories an axis is aggregated: 318 labels on 960 px overlap into ink. */
export const MAX_CATEGORIES = 40;

/** Consecutive groups of at most `ceil(n / max)` items, so there are at most `max` groups. */
export function bins<T>(items: readonly T[], max = MAX_CATEGORIES): T[][] {
  const size = Math.max(1, Math.ceil(items.length / max));
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** A group's label: its one member's, or `first–last`. */
export function binLabel(labels: readonly string[]): string {
  return labels.length <= 1 ? (labels[0] ?? '') : `${labels[0]}–${labels.at(-1)}`;
}
