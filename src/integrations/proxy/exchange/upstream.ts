/** Where requests go, worked out once from the upstream URL (not per request). */
export interface UpstreamTarget {
  protocol: 'http:' | 'https:';
  /** Without IPv6 brackets, as `http.request` wants it. */
  hostname: string;
  port: string;
  /** The `Host` header: the URL's host, port included when not the default. */
  host: string;
  /** The upstream's base path without a trailing slash ('' for none). */
  basePath: string;
}

export function upstreamTarget(upstream: URL): UpstreamTarget {
  return {
    protocol: upstream.protocol === 'https:' ? 'https:' : 'http:',
    hostname: upstream.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: upstream.port,
    host: upstream.host,
    basePath: upstream.pathname.replace(/\/+$/, ''),
  };
}

/** The upstream path of a request: the upstream's base path, then the client's path and query. */
export function targetPath(target: UpstreamTarget, path: string): string {
  return `${target.basePath}${path.startsWith('/') ? path : `/${path}`}`;
}
