import { fetchData } from '../lib/http';

export interface Report {
  id: string;
  name: string;
  updatedAt: string;
}

/** All reports, newest first. */
export async function listReports(): Promise<Report[]> {
  const items = await fetchData<Report[]>('/reports');
  return [...items].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
}

/** One of the reports by id, or undefined. */
export async function getReport(id: string): Promise<Report | undefined> {
  try {
    return await fetchData<Report>(`/reports/${encodeURIComponent(id)}`, { retries: 0 });
  } catch {
    return undefined;
  }
}
