import type { Principal, Scope } from '../auth/scopes.js';
import { errors } from './errors.js';
import type { RouteDef } from './route.js';

/**
 * Who may call a route, once the caller is known: the rule both transports apply (the HTTP
 * pipeline after authenticating a key or session, the phone's local transport for its owner).
 */

/** A check that throws insufficient_scope unless the principal holds the scope. */
export function requireScopeOf(principal: Principal | null): (scope: Scope) => void {
  return (scope: Scope) => {
    if (!principal?.scopes.has(scope)) throw errors.insufficientScope(scope);
  };
}

/** Throws insufficient_scope unless the principal holds every scope the route's access names. */
export function checkRouteScopes(route: RouteDef, principal: Principal): void {
  const requireScope = requireScopeOf(principal);
  if (Array.isArray(route.access)) route.access.forEach(requireScope);
  else if (route.access !== 'authenticated' && route.access !== 'public') requireScope(route.access);
}
