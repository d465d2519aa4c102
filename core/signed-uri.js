// The URI an HMAC signature covers, for every signer of the project: the harness (TypeScript)
// and the k6 scripts (k6 v0.48 and later). Decision: plain JavaScript with no imports and only
// syntax k6 v0.48 parses (no object spread, `?.`, `??`, and no regular-expression `s` flag, which
// its runtime refuses), so k6 imports this very file by relative path.

/**
 * product-facts §2.2: the signed URI is the raw request path after `index.php/`, no leading slash,
 * with ?query as sent: `api/v6/passwords.json`. A URL without `index.php/` in its path signs its
 * path without the leading slash. A #fragment is never sent, so it is never signed.
 * @param {string} url absolute (`https://host/index.php/api/v6/…`) or a path
 * @returns {string}
 */
export function signedUri(url) {
  let rest = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  const q = rest.indexOf('?');
  const at = rest.slice(0, q >= 0 ? q : undefined).indexOf('index.php/');
  return at >= 0 ? rest.slice(at + 'index.php/'.length) : rest.replace(/^\//, '');
}
