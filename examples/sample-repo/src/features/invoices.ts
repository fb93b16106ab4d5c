import { fetchData } from '../lib/http';

export interface Invoice {
  id: string;
  name: string;
  updatedAt: string;
}

/** All invoices, newest first. */
export async function listInvoices(): Promise<Invoice[]> {
  const items = await fetchData<Invoice[]>('/invoices');
  return [...items].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
}

/** One of the invoices by id, or undefined. */
export async function getInvoice(id: string): Promise<Invoice | undefined> {
  try {
    return await fetchData<Invoice>(`/invoices/${encodeURIComponent(id)}`, { retries: 0 });
  } catch {
    return undefined;
  }
}
