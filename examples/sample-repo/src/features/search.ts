import { fetchData } from '../lib/http';

export interface SearchResult {
  id: string;
  name: string;
  updatedAt: string;
}

/** All search, newest first. */
export async function listSearchResults(): Promise<SearchResult[]> {
  const items = await fetchData<SearchResult[]>('/search');
  return [...items].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
}

/** One of the search by id, or undefined. */
export async function getSearchResult(id: string): Promise<SearchResult | undefined> {
  try {
    return await fetchData<SearchResult>(`/search/${encodeURIComponent(id)}`, { retries: 0 });
  } catch {
    return undefined;
  }
}
