import { fetchData } from '../lib/http';

export interface Order {
  id: string;
  name: string;
  updatedAt: string;
}

/** All orders, newest first. */
export async function listOrders(): Promise<Order[]> {
  const items = await fetchData<Order[]>('/orders');
  return [...items].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
}

/** One of the orders by id, or undefined. */
export async function getOrder(id: string): Promise<Order | undefined> {
  try {
    return await fetchData<Order>(`/orders/${encodeURIComponent(id)}`, { retries: 0 });
  } catch {
    return undefined;
  }
}
