// What the graph benchmark needs to know of Model Explorer's local server: how its start page is told which
// model to open, and how its convert request reports a failure.
import path from 'node:path';

/**
 * The address of Model Explorer's start page with one model to open, as its command line builds it
 * (`?data=` + the URL-encoded JSON `{"models":[{"url":<absolute path>}]}`).
 */
export function modelExplorerUrl(origin: string, file: string): string {
  return `${origin.replace(/\/+$/, '')}/?data=${encodeURIComponent(JSON.stringify({ models: [{ url: path.resolve(file) }] }))}`;
}

/**
 * The adapter's error from the body of a convert reply (`{"error": "<Type>: <message>"}`), undefined for a
 * converted graph. A reply of a megabyte or more is a graph: it is not parsed again here.
 */
export function conversionError(body: Uint8Array): string | undefined {
  if (body.length >= 2 ** 20) return undefined;
  let reply: unknown;
  try {
    reply = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    return `the convert reply is not JSON (${body.length} bytes)`;
  }
  const error = (reply as { error?: unknown } | null)?.error;
  return typeof error === 'string' ? error : undefined;
}
