import { fetchData } from '../lib/http';

export interface Setting {
  id: string;
  name: string;
  updatedAt: string;
}

/** All settings, newest first. */
export async function listSettings(): Promise<Setting[]> {
  const items = await fetchData<Setting[]>('/settings');
  return [...items].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
}

/** One of the settings by id, or undefined. */
export async function getSetting(id: string): Promise<Setting | undefined> {
  try {
    return await fetchData<Setting>(`/settings/${encodeURIComponent(id)}`, { retries: 0 });
  } catch {
    return undefined;
  }
}
