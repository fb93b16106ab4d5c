import { fetchData } from '../lib/http';

export interface Product {
  id: string;
  name: string;
  updatedAt: string;
}

/** All products, newest first. */
export async function listProducts(): Promise<Product[]> {
  const items = await fetchData<Product[]>('/products');
  return [...items].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
}

/** One of the products by id, or undefined. */
export async function getProduct(id: string): Promise<Product | undefined> {
  try {
    return await fetchData<Product>(`/products/${encodeURIComponent(id)}`, { retries: 0 });
  } catch {
    return undefined;
  }
}
