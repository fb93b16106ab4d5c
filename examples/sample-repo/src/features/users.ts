import { fetchData } from '../lib/http';

export interface User {
  id: string;
  name: string;
  updatedAt: string;
}

/** All users, newest first. */
export async function listUsers(): Promise<User[]> {
  const items = await fetchData<User[]>('/users');
  return [...items].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
}

/** One of the users by id, or undefined. */
export async function getUser(id: string): Promise<User | undefined> {
  try {
    return await fetchData<User>(`/users/${encodeURIComponent(id)}`, { retries: 0 });
  } catch {
    return undefined;
  }
}
